"""Derivatives given by the user (numba_adstack.custom_vjp): used by grad from Python and
from jitted callers, by forward mode (a function of numbers: its pullback is its tangent;
of arrays: defjvp), and by the disk cache. Against finite differences where the given
derivative is the true one, and against the given rule where it is not."""
import numba
import numpy as np
import pytest

import numba_adstack as nad
from lib_helpers.custom_rules import scaled_norm2, softplus, straight_through_round

from conftest import check_fd


@nad.grad_jit
def softplus_loss(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s += softplus(x[i] * w) * x[i]
    return s


@nad.grad_jit
def rounded_loss(x, s):
    return np.sum(straight_through_round(x, s) ** 2)


@nad.grad_jit
def norm_loss(x, w):
    return scaled_norm2(np.sin(x), w) + w


X = np.array([0.3, -0.7, 1.1])


def test_the_pullback_is_the_derivative_and_matches_finite_differences():
    check_fd(softplus_loss, X, 1.3)
    check_fd(norm_loss, X, 0.8)


def test_the_given_derivative_is_used_where_it_is_not_the_true_one():
    gx, gs = rounded_loss.grad(X, 4.0)
    np.testing.assert_allclose(gx, 2.0 * np.round(X * 4.0) / 4.0)  # identity through round
    assert gs == 0.0


def test_forward_mode_through_a_function_of_numbers_and_of_arrays():
    gx, gw = softplus_loss.grad(X, 1.3)
    _, t = softplus_loss.jvp((X, 1.3), (np.ones(3), 0.5))
    assert t == pytest.approx(np.sum(gx) + 0.5 * gw, rel=1e-12)
    gx, gw = norm_loss.grad(X, 0.8)
    _, t = norm_loss.jvp((X, 0.8), (np.ones(3), 0.5))
    assert t == pytest.approx(np.sum(gx) + 0.5 * gw, rel=1e-12)


def test_from_a_jitted_caller():
    @numba.njit
    def caller(x):
        return softplus_loss.grad(x, 1.3)
    got = caller(X)
    want = softplus_loss.grad(X, 1.3)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-14)
    assert got[1] == pytest.approx(want[1], rel=1e-14)


def test_a_function_without_a_rule_points_to_custom_vjp():
    def f(x):
        return np.spacing(x[0]) * x[1]
    with pytest.raises(nad.NonDifferentiableError, match="numba_adstack.custom_vjp"):
        nad.grad_jit(f).grad(X)
