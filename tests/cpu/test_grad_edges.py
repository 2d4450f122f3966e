"""What a new user meets first: argument checks, lambdas, 0-d arrays, powers at 0, NaN
and ties in max/min, divisions by zero in the backward, integer arguments, frozen
globals. Each gradient is checked against finite differences or its analytic value."""
import math
import warnings

import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack.errors import NonDifferentiableError
from conftest import check_fd

nan, inf = math.nan, math.inf


# ----------------------------------------------------------------------------- wrt=
def _product(x, y):
    return x * y * y


@pytest.mark.parametrize("wrt", [(5,), (1.7,), 1.7, ("z",), (0, -3), (True,), "xy"])
def test_bad_wrt_is_refused_when_decorating(wrt):
    with pytest.raises(ValueError, match=r"is not an argument of _product\(x, y\)"):
        nad.grad_jit(_product, wrt=wrt)


def test_wrt_counts_negative_indices_as_python():
    f = nad.grad_jit(_product, wrt=(-1,))
    assert f.grad(2.0, 3.0) == (None, pytest.approx(2 * 2.0 * 3.0))
    g = nad.grad_jit(_product, wrt="x")
    assert g.grad(2.0, 3.0) == (pytest.approx(9.0), None)


def test_misspelled_option_names_ours_and_numbas():
    with pytest.raises(TypeError, match=r"'wrtt'.*ad_stack_size.*wrt.*fastmath"):
        nad.grad_jit(wrtt=(0,))


def test_unknown_keyword_of_grad_is_named():
    f = nad.grad_jit(_product)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'z'.*\(x, y\)"):
        f.grad(2.0, z=3.0)


def test_grad_of_an_array_result_points_to_vjp():
    f = nad.grad_jit(lambda x: x * 2.0)
    with pytest.raises(NonDifferentiableError, match=r"f\.vjp.*f\.vjp_call"):
        f.grad(np.ones(3))


# ----------------------------------------------------------------------------- names
def test_lambdas_and_odd_names_differentiate():
    f = nad.grad_jit(lambda x: x * math.sin(x))
    assert f.grad(0.7)[0] == pytest.approx(math.sin(0.7) + 0.7 * math.cos(0.7))
    value, pullback = nad.grad_jit(lambda x: x * 3.0).vjp(np.ones(2))
    np.testing.assert_allclose(pullback(np.array([1.0, 2.0]))[0], [3.0, 6.0])
    assert f.jvp((0.7,), (1.0,))[1] == pytest.approx(math.sin(0.7) + 0.7 * math.cos(0.7))

    def g(x):
        return x * x * x
    for name in ("partial(g, 2)", "größe", "1st", "class"):
        g.__name__ = g.__qualname__ = name
        assert nad.grad_jit(g).grad(2.0)[0] == pytest.approx(12.0)


# ----------------------------------------------------------------------------- powers
@pytest.fixture(scope="module")
def powers():
    return [nad.grad_jit(lambda x, y: x ** y), nad.grad_jit(lambda x, y: np.power(x, y)),
            nad.grad_jit(lambda x, y: math.pow(x, y))]


@nad.grad_jit
def power_sum(a, b):
    return np.sum(np.power(a, b))


@pytest.mark.parametrize("x, y, want", [
    (0.0, 2.5, (0.0, 0.0)),           # d/dy: 0 ** y * log(0) is 0 for y > 0 (as JAX)
    (0.0, 1.0, (1.0, 0.0)),
    (0.0, 0.0, (0.0, 0.0)),           # x ** 0 == 1: d/dx is 0, not 0 * 0 ** -1
    (2.0, 0.0, (0.0, math.log(2.0))),
    (1.5, 2.5, (2.5 * 1.5 ** 1.5, 1.5 ** 2.5 * math.log(1.5))),
])
def test_power_derivatives_at_zero_follow_jax(powers, x, y, want):
    for f in powers:
        assert f.grad(x, y) == pytest.approx(want, rel=1e-12)
        assert f.jvp((x, y), (1.0, 1.0))[1] == pytest.approx(sum(want), rel=1e-12)
    got = power_sum.grad(np.array([x, 1.3]), np.array([y, 0.7]))
    np.testing.assert_allclose([got[0][0], got[1][0]], want, rtol=1e-12)
    check_fd(power_sum, np.array([1.1, 1.3]), np.array([2.5, 0.7]))


# ----------------------------------------------------------------------------- 0-d arrays
@pytest.mark.parametrize("body", [
    lambda x: np.sin(x), lambda x: np.cos(x) + np.abs(x), lambda x: np.sqrt(x) * np.exp(x),
    lambda x: np.sum(x * x), lambda x: np.mean(np.tanh(x)), lambda x: max(np.sin(x), 0.1),
    lambda x: np.cos(x) ** 2.0 + np.power(x, 3.0),
])
def test_scalar_rules_take_0d_arrays(body):
    f = nad.grad_jit(body)
    x = np.array(0.4)
    g = check_fd(f, x)
    assert f.jvp((x,), (np.array(1.0),))[1] == pytest.approx(float(g[0]), rel=1e-6)


@nad.grad_jit
def zero_d_recurrence(x, n):
    v = 0.3
    for _ in range(n):
        v = np.sin(v * x) + np.cos(x)
    return v


def test_0d_array_in_a_loop():
    check_fd(zero_d_recurrence, np.array(0.4), 4)


# ----------------------------------------------------------------------------- reductions
@pytest.mark.parametrize("axis", [(1, 2), (0, 2), (0, -1)])
def test_sum_over_a_tuple_of_axes(axis):
    w = np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4)
    x = np.cos(w)
    f = nad.grad_jit(lambda x, w: np.sum(np.sin(np.sum(x * w, axis=axis))))
    check_fd(f, x, w)


@nad.grad_jit
def summed_in_loop(x, n):
    s = 0.0
    for _ in range(n):
        s += np.sum(np.sum(x * x, axis=(1, 2)) * np.arange(2.0))
    return s


def test_sum_over_a_tuple_of_axes_accumulated_in_a_loop():
    check_fd(summed_in_loop, np.linspace(0.1, 2.4, 24).reshape(2, 3, 4), 3)


# ----------------------------------------------------------------------------- loops
@nad.grad_jit
def fixed_point(x, maxit):
    v = x
    for its in range(maxit):
        v = 0.5 * v + 1.0
        if abs(v - 2.0) < 1e-3:
            break
    if its == maxit - 1:
        raise ValueError("no convergence")
    return v


def test_loop_variable_read_after_the_loop():
    # Ten halvings of the distance to 2 reach 1e-3: d v / d x = 0.5 ** 10.
    assert fixed_point.value_and_grad(1.0, 50) == (pytest.approx(2.0 - 0.5 ** 10),
                                                   (pytest.approx(0.5 ** 10), None))
    with pytest.raises(ValueError, match="no convergence"):
        fixed_point.grad(1.0, 3)


# ----------------------------------------------------------------------------- max, min
_CHOOSERS = {
    "max": lambda a, b: max(a, b) * 1.0, "min": lambda a, b: min(a, b) * 1.0,
    "maximum": lambda a, b: np.maximum(a, b) * 1.0,
    "minimum": lambda a, b: np.minimum(a, b) * 1.0,
    "fmax": lambda a, b: np.fmax(a, b) * 1.0, "fmin": lambda a, b: np.fmin(a, b) * 1.0,
}
_UFUNCS = {"maximum": np.maximum, "minimum": np.minimum, "fmax": np.fmax, "fmin": np.fmin}


@pytest.fixture(scope="module")
def choosers():
    return {k: nad.grad_jit(f) for k, f in _CHOOSERS.items()}


def _summed(ufunc):
    return nad.grad_jit(lambda u, v: np.sum(ufunc(u, v)))


@pytest.fixture(scope="module")
def summed_choosers():
    return {k: _summed(u) for k, u in _UFUNCS.items()}


@pytest.mark.parametrize("a, b", [(1.0, nan), (nan, 1.0), (1.0, 1.0), (1.0, 2.0), (2.0, 1.0)])
def test_max_min_adjoint_follows_the_branch_taken(choosers, summed_choosers, a, b):
    for name, f in choosers.items():
        y = f(a, b)
        first = y == a or (math.isnan(y) and math.isnan(a))
        want = (1.0, 0.0) if first else (0.0, 1.0)
        assert f.grad(a, b) == want, name
        assert (f.jvp((a, b), (1.0, 0.0))[1], f.jvp((a, b), (0.0, 1.0))[1]) == want, name
        if name in summed_choosers:
            ga, gb = summed_choosers[name].grad(np.array([a]), np.array([b]))
            assert (ga[0], gb[0]) == want, name


# ----------------------------------------------------------------------------- division by 0
def test_infinite_derivatives_are_inf_not_zero_division():
    f = nad.grad_jit(lambda x: math.sqrt(x))
    assert f.grad(0.0) == (inf,)                 # as NumPy and JAX: 0.5 / sqrt(0)
    assert f.jvp((0.0,), (1.0,)) == (0.0, inf)
    g = nad.grad_jit(lambda x: np.sum(np.sqrt(x)))
    np.testing.assert_array_equal(g.grad(np.array([0.0, 4.0]))[0], [inf, 0.25])
    m = nad.grad_jit(lambda x: np.mean(x))
    value, (grad,) = m.value_and_grad(np.zeros(0))
    assert math.isnan(value) and grad.shape == (0,)
    q = nad.grad_jit(lambda x, y: x / y)
    assert q.value_and_grad(1.0, 0.0) == (inf, (inf, -inf))


# ----------------------------------------------------------------------------- integers
def test_integer_argument_in_float_arithmetic_warns_once_per_signature():
    f = nad.grad_jit(_product)
    with pytest.warns(nad.IntegerArgumentWarning, match=r"'y'.*pass a float"):
        assert f.grad(3.0, 2) == (4.0, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f.grad(3.0, 5) == (25.0, None)      # the same signature: once
        assert f.grad(3.0, 2.0) == (4.0, 12.0)
        # An integer used as a count or a bound, or left out by wrt=, is no mistake.
        assert fixed_point.grad(1.0, 50)[1] is None
        assert nad.grad_jit(_product, wrt="x").grad(3.0, 2) == (4.0, None)


# ----------------------------------------------------------------------------- hessian, jacobian
def test_hessian_and_jacobian_take_argnums():
    f = nad.grad_jit(lambda x, y: x * x * y * y * y)
    assert nad.hessian(f, argnums=1)(2.0, 3.0) == pytest.approx(4.0 * 6.0 * 3.0)
    assert nad.hessian(f, argnum=0)(2.0, 3.0) == pytest.approx(2.0 * 27.0)
    assert nad.hessian(f, argnums=-1)(2.0, 3.0) == pytest.approx(4.0 * 6.0 * 3.0)
    for make in (lambda: nad.jacobian(f, argnums=5), lambda: nad.hessian(f, argnums=5),
                 lambda: nad.jacobian(f, argnums=(0, 2.0))):
        with pytest.raises(ValueError, match=r"not an argument index of <lambda>\(x, y\)"):
            make()


# ----------------------------------------------------------------------------- globals
TABLE = np.array([1.0, 2.0, 3.0])


@nad.grad_jit
def weighted(x):
    return np.sum(TABLE * x * x)


@nad.grad_jit
def weighted_grad_first(x):
    return np.sum(TABLE * x * x)


def test_a_global_array_is_frozen_once_for_the_function_and_its_gradient():
    x = np.array([0.5, 1.0, 2.0])
    want = weighted(x)
    saved = TABLE.copy()
    try:
        TABLE[:] = 10.0
        value, (grad,) = weighted.value_and_grad(x)
        assert value == want == weighted(x)
        np.testing.assert_allclose(grad, 2.0 * saved * x)
        # The gradient first: both see the array of that moment.
        value, (grad,) = weighted_grad_first.value_and_grad(x)
        TABLE[:] = 20.0
        assert value == weighted_grad_first(x) == np.sum(10.0 * x * x)
        np.testing.assert_allclose(grad, 20.0 * x)
    finally:
        TABLE[:] = saved
