"""The singular vectors of ``np.linalg.svd``, ``eigvalsh``, ``eig`` and ``eigvals`` of
matrices with real eigenvalues, ``np.partition``, ``np.percentile``/``np.quantile``,
2-d integer index arrays and reductions of one float, through ``grad_jit``, against
central finite differences of the pure-Python function, in reverse and forward mode;
and the refusals left. Several primitives share one compiled function."""
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

from conftest import check_fd, fd_grad, full_sweep

RNG = np.random.default_rng(2311)


def rand(*shape):
    return RNG.uniform(-1.0, 1.0, shape)


def fd_jvp(f, args, tangents):
    grads = fd_grad(f.py_func, args)
    return sum(float(np.sum(g * t)) for g, t in zip(grads, tangents)
               if g is not None and t is not None)


def check_jvp(f, args, rel=1e-6):
    tangents = tuple(rand(*x.shape) if isinstance(x, np.ndarray) and x.dtype.kind == "f"
                     else 0.5 if isinstance(x, float) else None for x in args)
    _, t = f.jvp(args, tangents)
    assert t == pytest.approx(fd_jvp(f, args, tangents), rel=rel)


# ------------------------------------------------------------------ spectral functions
@nad.grad_jit
def spectra(a, b, c):
    """U and Vh of thin svds (by index and unpacked, a keyword and a positional
    full_matrices) and of the full svd of a square matrix; eigvalsh; the items of eig
    read as real; eigvals of a matrix that is not symmetric. Signs of singular vectors
    and eigenvectors are arbitrary: the loss reads their squares."""
    u, s, vh = np.linalg.svd(b, full_matrices=False)
    u2 = np.linalg.svd(b, False)[0]
    uc, sc, vc = np.linalg.svd(c)
    w = np.linalg.eigvalsh(a)
    we, ve = np.linalg.eig(a)
    wn = np.linalg.eigvals(c @ c.T + np.diag(np.arange(3.0)) * 5.0 + np.triu(c))
    k = np.array([1.0, -2.0, 0.5])
    return (np.sum(u * u * b[:, :3]) + np.sum(vh * vh * vh * vh) + np.sum(s) + np.sum(u2 ** 4)
            + np.sum(uc * uc * c) + np.sum(vc ** 4) * sc[0]
            + np.sum(w * k) + np.sum(np.sort(we.real) * k) + np.sum(ve.real ** 4 * a)
            + np.sum(np.sort(wn) * k))


def _spd(n):
    m = rand(n, n)
    a = m @ m.T + n * np.eye(n)
    return a + np.diag(np.arange(n) * 1.5)        # well-separated eigenvalues


@pytest.mark.parametrize("b_shape", [(4, 3), pytest.param((3, 5), marks=full_sweep)])
def test_spectral_functions_reverse_and_forward(b_shape):
    a = _spd(3)
    a[0, 2] += 0.2          # eigvalsh reads the lower triangle; eig all of a
    args = (a, rand(*b_shape), rand(3, 3))
    check_fd(spectra, *args, rtol=1e-5)
    check_jvp(spectra, args, rel=1e-5)


@nad.grad_jit
def full_left_vectors(b):
    return np.sum(np.linalg.svd(b)[0] ** 4)


@nad.grad_jit
def full_right_vectors(b):
    return np.sum(np.linalg.svd(b, full_matrices=True)[2] ** 4)


def test_full_svd_vectors_of_non_square_matrices():
    # The vectors past min(m, n) have no derivative: refused when they are there...
    for f, shape in ((full_left_vectors, (4, 3)), (full_right_vectors, (3, 4))):
        with pytest.raises(ValueError, match=r"np\.linalg\.svd.*full_matrices=False"):
            f.grad(rand(*shape))
    # ... and differentiated when the factor is square anyway.
    check_fd(full_left_vectors, rand(3, 4), rtol=1e-5)
    check_fd(full_right_vectors, rand(4, 3), rtol=1e-5)


@nad.grad_jit
def histogram_edges(a):
    return np.sum(np.histogram(a)[1].real ** 2)


def test_item_without_rule_read_through_an_attribute_is_refused():
    # .real of an item without a rule must be refused, not taken as a constant.
    with pytest.raises(NonDifferentiableError,
                       match=r"item 1 of the tuple returned by .*np\.histogram"):
        histogram_edges.grad(rand(3, 3))


# ------------------------------------------------------------------ order statistics
@nad.grad_jit
def order_statistics(x, m, q, qs):
    """np.partition (1-d, 2-d along the last axis), np.percentile and np.quantile of a
    float and of an array of percentages, varied themselves; np.std, sum, mean, max, min
    and prod of a float (Numba compiles no np.var of one); prod, median, var and std of arrays,
    whose tangents are their rules' (not the rules of one float)."""
    p = np.partition(x, 2)
    pm = np.partition(m, 1)
    lo = np.percentile(x * 2.0, q) + np.quantile(m, q / 100.0) * np.percentile(m, 0.0)
    hi = np.percentile(x, qs) + np.quantile(x, qs / 100.0 + 0.01) + np.percentile(x, 100.0)
    one = x[0] * 1.5
    spread = np.prod(x * 0.5 + 1.0) + np.median(m) + np.var(x) * np.std(m)
    # (np.append after a tuple of 3 constants: the float is element 3, not 1)
    spread += np.sum(np.append((1.0, 2.0, 3.0), x[1] * 3.0) * np.arange(4.0))
    return (np.sum(p[:3] ** 3) + p[4] + np.sum(pm[:, :2] * pm[:, :2]) + lo
            + np.sum(hi * hi) + np.std(one) + np.sum(one) * np.mean(one) + spread
            + np.max(one) * np.min(one) + np.prod(one))


def test_order_statistics_reverse_and_forward():
    x = np.array([0.3, -1.7, 0.9, 2.5, -0.45, 0.1, 1.3])
    args = (x, rand(3, 5), 37.0, np.array([12.0, 55.0, 81.0]))
    check_fd(order_statistics, *args)
    check_jvp(order_statistics, args)


# ------------------------------------------------------------------ index arrays
@nad.grad_jit
def gathers_2d(x, m, idx, flat):
    """x[idx] with a 2-d array of integers (repeated and negative ones), of a vector and
    of a matrix (rows gathered); slices of gathered arrays (copies, whose adjoints are
    their own), with a 2-d and a 1-d index array."""
    r = x[idx]
    rows = m[idx]
    f = x[flat]
    return (np.sum(r * r * r) + np.sum(np.sin(rows) * r[:, :, None])
            + np.sum(f * f) + np.sum(np.sin(f[1:])))


def test_gather_by_2d_index_array_reverse_and_forward():
    idx = np.array([[4, 1, -1], [4, 0, 2]])
    args = (rand(6), rand(5, 3), idx, idx.ravel())
    check_fd(gathers_2d, *args)
    check_jvp(gathers_2d, args)


@nad.grad_jit
def nan_reduction(x):
    return np.nanmax(x * 2.0) + np.nanmean(x)


@nad.grad_jit
def append_of_floats(x, a, b):
    return np.sum(np.append(x, [a, b * 2.0]) * np.arange(5.0))


def test_nan_reductions_and_floats_in_lists():
    # The NaN-skipping reductions of arrays have array rules, in both modes.
    x = rand(4)
    check_fd(nan_reduction, x)
    check_jvp(nan_reduction, (x,))
    # Floats in a list given to a primitive get no contribution: refused, not zero.
    with pytest.raises(NonDifferentiableError, match=r"np\.append.*np\.array\(\[a, b\]\)"):
        append_of_floats.grad(rand(3), 0.5, 0.7)


@nad.grad_jit
def append_after_a_list(a, b):
    return np.sum(np.append(a, b * 2.0) * np.array([0.3, -0.5, 0.7, 1.1]))


@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaPendingDeprecationWarning")
def test_append_after_a_list_argument():
    # The float is element 3 (the list's length), in both modes; the list gets None.
    grads = append_after_a_list.grad([1.0, 2.0, 3.0], 0.5)
    assert grads[0] is None and grads[1] == pytest.approx(2.2, rel=1e-12)
    _, t = append_after_a_list.jvp(([1.0, 2.0, 3.0], 0.5), (None, 0.5))
    assert t == pytest.approx(1.1, rel=1e-12)
