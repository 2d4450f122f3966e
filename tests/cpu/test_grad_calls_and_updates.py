"""grad_jit on the CPU: calls to plain njit helpers, in-place updates of state arrays (a
mass-spring simulation), augmented assignments, and exceptions raised by the function.

Every gradient is compared with central finite differences of the pure-Python function
(``f.py_func``) or with analytic values. Compiled functions are defined once at module level
and shared between tests: compilation dominates the run time.
"""
import math

import numba
import numpy as np
import pytest

import numba_adstack as nad

from conftest import check_fd
from cpu_programs import X0S, V0S, spring_copy

RNG = np.random.default_rng(1234)
X8 = RNG.uniform(0.1, 0.9, 8)


# ---------------------------------------------------------------------------------------
# Calls to plain njit helpers
# ---------------------------------------------------------------------------------------
@numba.njit
def _helper(a, b):
    return math.sin(a) * b + a * a


@numba.njit
def _loop_helper(x, n, c):
    t = 0.0
    for i in range(n):
        t = t * c + math.cos(x[i])
    return t


@nad.grad_jit
def calls_helper(x, n):
    s = 0.0
    for i in range(n):
        s += _helper(x[i], x[(i + 1) % n])
    return s


@nad.grad_jit
def calls_loop_helper(x, c, n):
    s = 0.0
    for k in range(2):
        s += _loop_helper(x, n, c) * x[k]
    return s


def test_call_plain_njit_helper():
    check_fd(calls_helper, X8.copy(), 8)


def test_call_njit_helper_with_loop():
    check_fd(calls_loop_helper, X8.copy(), 0.7, 6)


# ---------------------------------------------------------------------------------------
# Mass-spring simulation with in-place state updates
# ---------------------------------------------------------------------------------------
@nad.grad_jit
def spring_inplace(x, v, k, steps):
    n = x.shape[0]
    dt = 0.01
    for t in range(steps):
        for i in range(n):
            left = x[i - 1] if i > 0 else 0.0
            right = x[i + 1] if i < n - 1 else 0.0
            a = -k * (2.0 * x[i] - left - right) - 0.1 * v[i]
            v[i] += dt * a
        for i in range(n):
            x[i] += dt * v[i]
    e = 0.0
    for i in range(n):
        e += (i + 1.0) * x[i] + 0.5 * v[i] * v[i]
    return e


@pytest.mark.parametrize("f", [spring_copy, spring_inplace], ids=["copy", "inplace"])
def test_mass_spring_simulation(f):
    x, v = X0S.copy(), V0S.copy()
    steps = 300
    g = check_fd(f, x, v, 3.0, steps, rtol=1e-5, atol=1e-7)
    # f.grad left the caller's arrays as they were (checked by check_fd); so did value_and_grad.
    val, g2 = f.value_and_grad(x, v, 3.0, steps)
    np.testing.assert_array_equal(x, X0S)
    np.testing.assert_array_equal(v, V0S)
    assert val == f.py_func(X0S.copy(), V0S.copy(), 3.0, steps)
    assert isinstance(g[2], float) and g[3] is None
    for a, b in zip(g[:3], g2[:3]):
        np.testing.assert_array_equal(a, b)


def test_mass_spring_inplace_primal_updates_arguments():
    x, v = X0S.copy(), V0S.copy()
    spring_inplace(x, v, 3.0, 10)
    xr, vr = X0S.copy(), V0S.copy()
    spring_inplace.py_func(xr, vr, 3.0, 10)
    np.testing.assert_array_equal(x, xr)
    np.testing.assert_array_equal(v, vr)
    assert not np.array_equal(x, X0S)


def _spring_short(x, v, k, steps):
    n = x.shape[0]
    for t in range(steps):
        for i in range(n):
            v[i] += 0.01 * (-k * x[i])
        for i in range(n):
            x[i] += 0.01 * v[i]
    return x[0] + 2.0 * x[1]


spring_frame = nad.grad_jit(_spring_short)
spring_heap = nad.grad_jit(storage="heap")(_spring_short)


def test_mass_spring_longer_than_ad_stack_size():
    # The history of values read inside nested run-time loops goes on growable heap
    # stacks by itself, so a simulation longer than ad_stack_size needs no option.
    x, v = np.array([0.9, 1.1]), np.array([0.1, 0.2])
    steps = 1100  # more than the default ad_stack_size of 1024
    check_fd(spring_frame, x, v, 2.0, steps, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(x, [0.9, 1.1])
    check_fd(spring_heap, x, v, 2.0, steps, rtol=1e-5, atol=1e-7)
    check_fd(spring_frame, x, v, 2.0, 50)


@nad.grad_jit
def augmented(x, n):
    s = 1.0
    y = np.ones(3)
    for i in range(n):
        s *= x[i]
        s /= 1.0 + x[i]
        s -= 0.01 * x[i]
        s **= 1.1
        s += -x[i] + 2.0 * x[i]
        y[i % 3] *= x[i]
        y[(i + 1) % 3] += 0.1 * y[i % 3]
    return s + y[0] + 2.0 * y[1] + 3.0 * y[2]


def test_augmented_assignment_scalars_and_arrays():
    check_fd(augmented, np.array([0.9, 1.5, 1.2, 0.7]), 4)


@nad.grad_jit
def raises_on_negative(x, n):
    s = 0.0
    for i in range(n):
        if x[i] < 0.0:
            raise ValueError("negative input")
        s += x[i] * x[i]
    return s


def test_exception_in_function_propagates_from_grad():
    check_fd(raises_on_negative, np.array([0.9, 1.1]), 2)
    with pytest.raises(ValueError, match="negative input"):
        raises_on_negative.grad(np.array([0.9, -1.1]), 2)
    # Nothing is left behind: the next call is right.
    np.testing.assert_allclose(raises_on_negative.grad(np.array([0.5, 0.25]), 2)[0],
                               [1.0, 0.5], rtol=1e-14)
