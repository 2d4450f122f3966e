"""implicit_root: the derivative of a root solve taken at the root, -(df/dp) / (df/dx),
against finite differences, analytic values and the unrolled (default) gradient; and
stop_gradient."""
import math

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

from funcval_helpers import (bisect, check_tree, fd_tree, golden_max, kepler, kepler_prime,
                             newton, newton_while)

newton_implicit = nad.implicit_root(newton)
bisect_implicit = nad.implicit_root(bisect, func="f")


def _kepler_derivatives(e, M):
    E = newton(kepler, M, kepler_prime, args=(e, M))
    d = 1.0 - e * math.cos(E)
    return E, math.sin(E) / d, 1.0 / d


@nad.grad_jit
def anomaly_unrolled(e, M):
    return newton(kepler, M, kepler_prime, args=(e, M))


@nad.grad_jit
def anomaly_implicit(e, M):
    return newton_implicit(kepler, M, kepler_prime, args=(e, M))


def test_newton_implicit_equals_unrolled_and_the_analytic_derivative():
    E, dE_de, dE_dM = _kepler_derivatives(0.3, 1.2)
    value, grad = anomaly_implicit.value_and_grad(0.3, 1.2)
    assert value == anomaly_unrolled(0.3, 1.2) == E       # the primal, exactly
    np.testing.assert_allclose(grad, (dE_de, dE_dM), rtol=1e-12)
    np.testing.assert_allclose(grad, anomaly_unrolled.grad(0.3, 1.2), rtol=1e-9)


def test_implicit_backward_keeps_no_history_of_the_iterations():
    src = anomaly_implicit.inspect_adjoint(0.3, 1.2)
    assert "adstack(" not in src and "push(" not in src
    assert "adstack(" in anomaly_unrolled.inspect_adjoint(0.3, 1.2)


@nad.grad_jit
def anomaly_bisect(e, M):
    return bisect(kepler, 0.0, 10.0, args=(e, M)) ** 2


@nad.grad_jit
def anomaly_bisect_implicit(e, M):
    return bisect_implicit(kepler, 0.0, 10.0, args=(e, M)) ** 2


def test_bisection_unrolled_is_zero_implicit_is_right():
    # Bisection's iterates depend on (e, M) only through comparisons: unrolled, the
    # derivative of the midpoint it returns is zero. At the root it is not.
    E, dE_de, dE_dM = _kepler_derivatives(0.3, 1.2)
    assert anomaly_bisect.grad(0.3, 1.2) == (0.0, 0.0)
    got = check_tree(anomaly_bisect_implicit, 0.3, 1.2, rtol=1e-6)
    np.testing.assert_allclose(got, (2 * E * dE_de, 2 * E * dE_dM), rtol=1e-10)


@nad.grad_jit
def orbit_implicit(M, e):
    total = 0.0
    for i in range(M.shape[0]):
        E = bisect_implicit(kepler, 0.0, 10.0, args=(e, M[i]))
        total += math.cos(E) - e
    return total


def test_implicit_solve_inside_a_loop():
    check_tree(orbit_implicit, np.array([0.3, 1.1, 2.5]), 0.4, rtol=1e-6)


@nad.implicit_root(func="g", args="params")
@numba.njit
def secant(g, x0, x1, params, tol=1e-14):
    f0 = g(x0, params[0], params[1])
    f1 = g(x1, params[0], params[1])
    while abs(x1 - x0) > tol and f1 != f0:
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        x0, f0 = x1, f1
        x1 = x2
        f1 = g(x1, params[0], params[1])
    return x1


@numba.njit
def polynomial(x, c, shift):
    s = 0.0
    for k in range(c.shape[0]):
        s += c[k] * x ** k
    return s - shift


@nad.grad_jit
def poly_root(c, shift):
    return secant(polynomial, 1.0, 1.5, (c, shift))


def test_decorator_form_with_an_array_among_the_arguments():
    # x^3 + x - shift = 0: dx/dc_k = -x^k / p'(x), dx/dshift = 1 / p'(x).
    c = np.array([0.0, 1.0, 0.0, 1.0])
    got = check_tree(poly_root, c, 3.0, rtol=1e-6)
    x = poly_root(c, 3.0)
    slope = 1.0 + 3.0 * x * x
    np.testing.assert_allclose(got[0], -x ** np.arange(4) / slope, rtol=1e-10)
    assert got[1] == pytest.approx(1.0 / slope, rel=1e-12)


def test_marked_solver_still_runs_as_numba_and_python_code():
    assert newton_implicit(kepler, 1.2, kepler_prime, (0.3, 1.2)) == \
        newton(kepler, 1.2, kepler_prime, (0.3, 1.2))
    assert newton_implicit.py_func is newton.py_func


@nad.grad_jit
def initial_guess(x0, e, M):
    return newton_implicit(kepler, x0, kepler_prime, args=(e, M))


def test_the_root_does_not_depend_on_the_initial_guess():
    got = initial_guess.grad(1.0, 0.3, 1.2)
    assert got[0] == 0.0
    np.testing.assert_allclose(got[1:], _kepler_derivatives(0.3, 1.2)[1:], rtol=1e-12)


@nad.grad_jit
def with_stop_gradient(x, y):
    return x * nad.stop_gradient(x * y) + y


def test_stop_gradient():
    assert with_stop_gradient.grad(2.0, 3.0) == (6.0, 1.0)
    assert numba.njit(lambda x: nad.stop_gradient(x) * 2.0)(1.5) == 3.0


# ---------------------------------------------------------------------- refusals
golden_implicit = nad.implicit_root(golden_max)


@numba.njit
def bump(x, a):
    return -(x - a) ** 2


def _returns_a_tuple(a):
    return golden_implicit(bump, 0.0, 3.0, args=(a,))[1]


@numba.njit
def with_spacing(x, a):
    return x - a * (x + np.spacing(x))


def _residual_without_rule(a):
    return bisect_implicit(with_spacing, 0.1, 1.0, args=(a,))


def _function_chosen_at_run_time(e, M):
    f = kepler if e > 0.0 else with_spacing
    return bisect_implicit(f, 0.0, 10.0, args=(e, M))


@pytest.mark.parametrize("fn, args, what", [
    (_returns_a_tuple, (1.0,), "implicit_root(golden_max) returns UniTuple"),
    (_residual_without_rule, (0.5,), "the call to spacing has no derivative rule"),
    (_function_chosen_at_run_time, (0.3, 1.2), "must be a Numba function known before"),
], ids=["solver returns a tuple", "residual not differentiable", "function chosen at run time"])
def test_refusals_name_the_function_and_line(fn, args, what):
    with pytest.raises(NonDifferentiableError) as exc:
        nad.grad_jit(fn).grad(*args)
    msg = str(exc.value)
    assert what in msg
    assert msg.startswith("cannot differentiate")
    assert "test_grad_implicit.py\", line" in msg


def test_marking_checks_the_solver_signature():
    with pytest.raises(ValueError, match="names no parameter"):
        nad.implicit_root(newton, func="g")
    with pytest.raises(ValueError, match="names no parameter"):
        nad.implicit_root(newton, args="params")

    def variadic(f, x0, *args):
        return x0
    with pytest.raises(ValueError, match="plain parameters"):
        nad.implicit_root(variadic)


def test_unrolled_while_newton_agrees_with_implicit():
    def anomaly(e, M):
        return newton_while(kepler, M, kepler_prime, args=(e, M))
    f = nad.grad_jit(anomaly)
    np.testing.assert_allclose(f.grad(0.3, 1.2), anomaly_implicit.grad(0.3, 1.2), rtol=1e-9)
    np.testing.assert_allclose(fd_tree(f, (0.3, 1.2)), f.grad(0.3, 1.2), rtol=1e-6)
