"""grad_jit on the CPU, the dispatcher: gradients of each kind of argument (float scalars,
and None for integers, integer arrays and booleans), the primal equal to njit's,
``value_and_grad``, one backward per argument types compiled once, ``grad_jit`` of an njit
dispatcher, calls from njit code, ``inspect_adjoint``.

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
from cpu_programs import (X0S, V0S, branch_carried, decay, newton_sqrt, sinrec,
                          sinrec_analytic, spring_copy)

RNG = np.random.default_rng(1234)
X8 = RNG.uniform(0.1, 0.9, 8)


# ---------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------
@nad.grad_jit
def scalar_args(x, a, b, n):
    v = a
    for i in range(n):
        v = math.sin(v) * b + x[i] * a
    return v * b


def test_float_scalar_arguments():
    g = check_fd(scalar_args, X8.copy(), 0.4, 1.3, 7)
    assert isinstance(g[1], float) and isinstance(g[2], float) and g[3] is None


@nad.grad_jit
def scalar_only(a, b):
    v = a
    for _ in range(5):
        v = v * b + a
    return v


@nad.grad_jit
def int_and_bool_args(x, idx, flag, n):
    s = 0.0
    for k in range(n):
        s = s * 0.8 + x[idx[k]] * x[idx[k]]
    if flag:
        s = 2.0 * s
    return s


def test_int_array_and_bool_arguments_get_none():
    idx = np.array([3, 0, 3, 5, 1], dtype=np.int64)
    for flag in (True, False):
        g = check_fd(int_and_bool_args, X8.copy(), idx, flag, 5)
        assert g[1] is None and g[2] is None and g[3] is None


def test_scalar_only_arguments():
    check_fd(scalar_only, 0.3, 0.9)


# ---------------------------------------------------------------------------------------
# Dispatcher behaviour
# ---------------------------------------------------------------------------------------
PRIMAL_CASES = [
    (sinrec, lambda: (RNG.uniform(-1, 1, 20), 9)),
    (branch_carried, lambda: (np.array([0.21, 0.37]), 12)),
    (spring_copy, lambda: (X0S.copy(), V0S.copy(), 3.0, 50)),
    (newton_sqrt, lambda: (np.array([0.5, 2.0, 9.0]),)),
]


@pytest.mark.parametrize("f,make", PRIMAL_CASES,
                         ids=[f.py_func.__name__ for f, _ in PRIMAL_CASES])
def test_primal_equals_njit_and_value_and_grad(f, make):
    args = make()
    ref = numba.njit(f.py_func)(*args)
    assert f(*args) == ref
    val, g = f.value_and_grad(*args)
    assert val == ref
    g2 = f.grad(*args)
    for a, b in zip(g, g2):
        if a is None:
            assert b is None
        else:
            np.testing.assert_array_equal(a, b)


def test_second_call_compiles_nothing():
    x = np.array([2.0, 0.5])
    decay.grad(x, 3)
    n_back = len(decay._backwards)
    back = decay._backward((x, 3))
    sigs = list(decay.signatures)
    g1 = decay.grad(x, 5)
    decay.grad(np.array([1.0, 1.0]), 7)
    decay.value_and_grad(x, 9)
    assert len(decay._backwards) == n_back
    assert decay._backward((x, 3)) is back
    assert len(back.njit_fn.signatures) == 1
    assert list(decay.signatures) == sigs
    np.testing.assert_allclose(g1[0], [0.9 ** 5, 1 - 0.9 ** 5], rtol=1e-12)


def test_new_argument_types_get_their_own_backward():
    f = nad.grad_jit(decay.py_func)
    f.grad(np.array([2.0, 0.5]), 3)
    f.grad(np.array([2.0, 0.5], dtype=np.float32), 3)
    assert len(f._backwards) == 2
    g32 = f.grad(np.array([2.0, 0.5], dtype=np.float32), 4)[0]
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, [0.9 ** 4, 1 - 0.9 ** 4], rtol=1e-5)


def _plain_decay(x, n):
    v = x[0]
    for _ in range(n):
        v = v * 0.9 + 0.1 * x[1]
    return v


def test_grad_jit_of_existing_njit_dispatcher():
    d = numba.njit(fastmath=False)(_plain_decay)
    f = nad.grad_jit(d)
    assert isinstance(f, nad.GradDispatcher)
    assert f.py_func is _plain_decay
    x = np.array([2.0, 0.5])
    assert f(x, 6) == d(x, 6)
    np.testing.assert_allclose(f.grad(x, 6)[0], [0.9 ** 6, 1 - 0.9 ** 6], rtol=1e-12)


@nad.grad_jit
def _callee(x, n):
    v = x[0]
    for _ in range(n):
        v = math.sin(v) * 1.01
    return v


@numba.njit
def _caller(x, n):
    return 2.0 * _callee(x, n) + 1.0


def test_njit_function_calls_grad_jit_function():
    x = np.array([0.4])
    assert _caller(x, 7) == 2.0 * _callee(x, 7) + 1.0
    assert len(_caller.nopython_signatures) == 1
    # The callee still differentiates after being called from njit code.
    np.testing.assert_allclose(_callee.grad(x, 7)[0], sinrec_analytic(x, 7), rtol=1e-12)


def test_inspect_adjoint_shows_stack_pushes():
    src = sinrec.inspect_adjoint(X8.copy(), 4)
    assert isinstance(src, str)
    assert "push(" in src and "pop(" in src
    compile(src, "<adjoint>", "exec")
