"""Functions of the corpus of public Numba code (benchmarks/corpus, docs/corpus.md) whose
gradient was once wrong or crashed, as their authors wrote them (tests/lib_helpers/
corpus_functions.py), against central finite differences of the pure-Python function."""
import numpy as np
import pytest

import numba_adstack as nad

from conftest import check_fd
from lib_helpers.corpus_functions import (blackscholes_loss, cosine_grad_loss, legendre_loss,
                                          midas_loss, midas_recursion, reductions_of_0d,
                                          rolling_loss, rotation_loss)


def test_rotation_matrix():
    check_fd(rotation_loss, 0.3)
    check_fd(rotation_loss, -1.2)


def test_reductions_of_a_0d_array():
    f = nad.grad_jit(reductions_of_0d)
    for v in (0.7, 1.3):
        check_fd(f, np.array(v))


def test_rolling_mean_of_an_integer_started_sum():
    a = np.linspace(0.1, 1.0, 9)
    a[4] = np.nan
    check_fd(rolling_loss, a, np.linspace(-1.0, 1.0, 9))


def test_gauss_legendre_nodes_of_quantecon():
    # The integral of sin over [a, b]: the gradient is (-sin(a), sin(b)) up to the rule's
    # error, and exactly that of the finite differences.
    g = check_fd(legendre_loss, -0.4, 1.3)
    assert np.allclose(g, (-np.sin(-0.4), np.sin(1.3)), atol=1e-6)


def test_distance_and_gradient_returned_by_a_helper():
    # The gradient array is float32, as UMAP makes it: differences at a step that float32
    # rounding does not swamp.
    x, y = np.linspace(0.2, 1.0, 5), np.linspace(1.0, -0.3, 5)
    check_fd(cosine_grad_loss, x, y, np.linspace(-1.0, 1.0, 5), eps=1e-3, rtol=2e-3,
             atol=1e-5)


def test_register_jitable_functions_are_differentiated_through():
    # Numba's test_blackscholes: cnd and cnd_array are register_jitable functions.
    rng = np.random.default_rng(3)
    S, X = rng.uniform(5.0, 30.0, 4), rng.uniform(1.0, 100.0, 4)
    T = rng.uniform(0.25, 10.0, 4)
    check_fd(blackscholes_loss, S, X, T, 0.02, 0.3, rtol=1e-5)


def test_parameters_unpacked_from_an_array():
    # arch's midas_recursion: `omega, alpha, gamma = parameters`.
    rng = np.random.default_rng(5)
    resids = rng.standard_normal(10)
    w = rng.uniform(0.5, 1.0, 5)
    bounds = np.column_stack((np.full(10, 1e-4), np.full(10, 1e4)))
    check_fd(midas_loss, np.array([0.1, 0.8, 0.1]), w / w.sum(), resids, 1.0, bounds,
             rtol=1e-5)
    # Unpacking into a wrong number of names raises in the gradient as in Numba.
    with pytest.raises(ValueError):
        midas_loss.grad(np.array([0.1, 0.8]), w / w.sum(), resids, 1.0, bounds)
    with pytest.raises(ValueError):
        midas_recursion(np.array([0.1, 0.8]), w, resids, np.zeros(10), 10, 1.0, bounds)
