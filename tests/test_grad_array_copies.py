"""Copies of computed arrays (``z = y.copy()``, ``np.copy(y)``) carry the adjoint back into
the operands of the array copied, checked against central finite differences."""
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
