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


# ---------------------------------------------------------------- rules checked
@nad.custom_vjp
@numba.njit
def ssq(v):
    return np.sum(v * v)


@ssq.defvjp
@numba.njit
def ssq_vjp(v, g):
    return (2.0 * g * v[:2],)           # a mistake: shape (2,) for an argument of shape (n,)


@nad.custom_vjp
@numba.njit
def bare(v):
    return v * v


@bare.defvjp
@numba.njit
def bare_vjp(v, g):
    return 2.0 * g * v                  # not a tuple


@nad.custom_vjp
@numba.njit
def mul(a, b):
    return a * b


@mul.defvjp
@numba.njit
def mul_vjp(a, b, g):
    return (g * b,)                     # one cotangent for two arguments


@nad.custom_vjp
@numba.njit
def frozen_scale(x, w):
    return w * x


@frozen_scale.defvjp
@numba.njit
def frozen_scale_vjp(x, w, g):
    return (g * w, None)                # None: no derivative in w (zero)


@nad.custom_vjp
@numba.njit
def summed(x):
    return np.sum(x)


@summed.defvjp
@numba.njit
def summed_vjp(x, g):
    return (np.ones(x.shape[0], dtype=np.int64),)    # an int array for a float array


def test_a_cotangent_of_the_wrong_shape_is_a_value_error_naming_both_shapes():
    @nad.grad_jit
    def loss(x):
        return ssq(x) * 3.0
    with pytest.raises(ValueError, match=r"ssq_vjp of ssq .*returned a cotangent of shape "
                                         r"\(2,\) for the argument 'v', of shape \(3,\)"):
        loss.grad(X)


def test_a_pullback_returning_no_tuple_is_refused_naming_it():
    @nad.grad_jit
    def loss(x):
        return bare(x) * 3.0
    with pytest.raises(nad.NonDifferentiableError,
                       match=r"(?s)loss'.*bare_vjp of bare .*returns float64, not a tuple"
                             r".*bare\(v\).*line \d+.*bare\(x\) \* 3.0"):
        loss.grad(2.0)


def test_a_pullback_returning_too_few_cotangents_is_refused_naming_it():
    @nad.grad_jit
    def loss(x, y):
        return mul(x, y) * 3.0
    with pytest.raises(nad.NonDifferentiableError,
                       match=r"mul_vjp of mul .*returns 1 cotangent .* for the 2 arguments "
                             r"of mul\(a, b\)"):
        loss.grad(2.0, 3.0)


def test_a_cotangent_of_the_wrong_kind_is_refused_naming_the_argument():
    @nad.grad_jit
    def loss(x):
        return summed(x) * 2.0
    with pytest.raises(nad.NonDifferentiableError,
                       match=r"summed_vjp of summed .*returns array\(int64.* as the cotangent "
                             r"of the argument 'x' \(array\(float64"):
        loss.grad(X)


def test_none_is_a_zero_cotangent():
    @nad.grad_jit
    def loss(x, w):
        return np.sum(frozen_scale(x, w) ** 2)
    gx, gw = loss.grad(X, 1.5)
    np.testing.assert_allclose(gx, 2.0 * 1.5 * X * 1.5, rtol=1e-14)     # the given rule
    assert gw == 0.0
    gx, gw = nad.grad_jit(lambda a, w: frozen_scale(a, w) * 2.0).grad(0.7, 1.5)
    assert (gx, gw) == (pytest.approx(3.0, rel=1e-14), 0.0)


def test_forward_mode_meets_the_same_checks():
    @nad.grad_jit
    def loss(x):
        return bare(x) * 3.0
    with pytest.raises(TypeError, match=r"bare_vjp of bare .*returns float64, not a tuple"):
        loss.jvp((2.0,), (1.0,))


@nad.custom_vjp
@numba.njit
def doubled(x):
    return 2.0 * x


@doubled.defvjp
@numba.njit
def doubled_vjp(x, g):
    return (2.0 * g,)


@doubled.defjvp
@numba.njit
def doubled_jvp(x, dx):
    return 2.0 * dx[1:]                 # a mistake: one element short


def test_a_tangent_of_the_wrong_shape_is_a_value_error():
    @nad.grad_jit
    def loss(x):
        return np.sum(doubled(x))
    np.testing.assert_allclose(loss.grad(X)[0], 2.0 * np.ones(3))
    with pytest.raises(ValueError, match=r"doubled_jvp of doubled .*returned a tangent of "
                                         r"shape \(2,\) for the result, of shape \(3,\)"):
        loss.jvp((X,), (np.ones(3),))


def test_the_gradient_cache_keys_the_rules_and_finds_their_checked_calls_again():
    from numba_adstack.ad.dispatch import cache_key
    deps = cache_key.Dependencies(softplus_loss.py_func)
    walked = {p[2] for p in deps.parts if p[0] == "function"}
    assert {"softplus", "softplus_vjp"} <= walked        # an edited pullback is a new key
    for name, helper in softplus.ad_rule_helpers.items():
        loc = cache_key.locate(helper, deps)
        assert loc is not None and cache_key.resolve(loc, deps) is helper, name
