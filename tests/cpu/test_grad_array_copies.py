"""Copies of computed arrays (``z = y.copy()``, ``np.copy(y)``), views updated in place and
arrays rebound in time loops carry the adjoint back into their operands, checked against
central finite differences or analytic values."""
import numpy as np

import numba_adstack as nad

from conftest import check_fd

RNG = np.random.default_rng(2020)


@nad.grad_jit
def copy_of_product(x):
    y = x * 2.0
    z = y.copy()
    return np.sum(z)


@nad.grad_jit
def copy_then_rebind(x):
    y = np.sin(x)
    z = y.copy()
    y = 0.6 * z + 0.1 * np.sum(z)
    return np.sum(y * y)


@nad.grad_jit
def np_copy_in_a_loop(x, n):
    y = np.cos(x)
    for _ in range(n):
        z = np.copy(y)
        y = 0.5 * z + 0.1 * np.sin(z)
    return np.sum(y * y)


def test_copy_of_a_computed_array_has_the_analytic_gradient():
    x = np.linspace(0.1, 0.9, 5)
    np.testing.assert_allclose(copy_of_product.grad(x)[0], np.full(5, 2.0), rtol=1e-14)


def test_copy_then_rebind():
    check_fd(copy_then_rebind, RNG.uniform(-1, 1, 6))


def test_np_copy_in_a_loop():
    check_fd(np_copy_in_a_loop, RNG.uniform(-1, 1, 4), 3)


@nad.grad_jit
def view_scaled_then_added(x):
    w = x * 1.0
    u = w[1:4]
    u *= 0.8
    u += 0.1 * x[0:3]
    return np.sum(w)


def test_view_updated_twice_in_place_keeps_both_updates():
    # d/dx of sum(w): 1 outside the view, 0.8 inside it, plus 0.1 from x[0:3].
    got = view_scaled_then_added.grad(np.linspace(0.1, 0.9, 5))[0]
    np.testing.assert_allclose(got, [1.1, 0.9, 0.9, 0.8, 1.0], rtol=1e-14)


@nad.grad_jit
def time_stepper_matmul(x, A, n):
    y = x.copy()
    for _ in range(n):
        y = np.sin(A @ y)
    return np.sum(y * y)


@nad.grad_jit
def time_stepper_dot(x, A, n):
    y = x.copy()
    for _ in range(n):
        y = np.sin(np.dot(A, y))
    return np.sum(y * y)


def test_time_stepper_rebinding_a_ufunc_of_a_matrix_product():
    x, A = RNG.uniform(-1, 1, 4), RNG.uniform(-1, 1, (4, 4))
    check_fd(time_stepper_matmul, x, A, 3)
    check_fd(time_stepper_dot, x, A, 3)
