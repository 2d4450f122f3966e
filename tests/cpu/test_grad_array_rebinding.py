"""Arrays rebound in loops to fresh values (``y = 0.5 * y``, ``y = np.where(...)``) and
written before or after: no second name exists, so they differentiate. Checked against
central finite differences at a trip count of 3 and of 0."""
import numpy as np
import pytest

import numba_adstack as nad

from conftest import check_fd

X = np.linspace(-0.5, 0.9, 5)


@nad.grad_jit
def element_loop_then_rebinding_loop(x, n):
    y = x.copy()
    for k in range(n):
        y[k] += 0.3 * y[k + 1] ** 2
    for _ in range(n):
        y = 0.5 * y + np.sin(y)
    return np.sum(y * y)


@nad.grad_jit
def rebinding_loop_then_store(x, n):
    y = x * 1.0
    for _ in range(n):
        y = 0.5 * y
    y[0] = 0.0
    return np.sum(y * y)


@nad.grad_jit
def rebinding_loop_then_nonlinear_store(x, n):
    y = np.sin(x)
    for _ in range(n):
        y = np.cos(y) * y
    y[1] = y[0] * y[2]
    return np.sum(y * y)


@nad.grad_jit
def store_then_rebinding_in_a_loop(x, n):
    y = x * 1.0
    for _ in range(n):
        y[0] = y[1] * y[2]
        y = np.sin(y)
    return np.sum(y * y)


@nad.grad_jit
def copy_store_rebinding_in_a_loop(x, n):
    y = x.copy()
    for _ in range(n):
        z = 0.5 * y
        y[0] = np.sum(y * y)
        y = z + np.sin(y)
    return np.sum(y * y)


@nad.grad_jit
def where_in_a_loop(x, n):
    y = x * 1.0
    for _ in range(n):
        y = np.where(y > 0.1, y, 0.5 * y)
    return np.sum(y * y)


@nad.grad_jit
def where_of_a_product_in_a_loop(x, A, n):
    y = x.copy()
    for _ in range(n):
        z = A @ y
        y = np.where(z > 0.0, np.sin(z), 0.3 * z) + 0.1 * y
    return np.sum(y * y)


CASES = [element_loop_then_rebinding_loop, rebinding_loop_then_store,
         rebinding_loop_then_nonlinear_store, store_then_rebinding_in_a_loop,
         copy_store_rebinding_in_a_loop, where_in_a_loop]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [3, 0])
def test_fresh_arrays_rebound_in_loops(f, n):
    check_fd(f, X.copy(), n)


def test_where_keeps_its_mask_per_iteration():
    rng = np.random.default_rng(7)
    A = rng.uniform(-1.0, 1.0, (5, 5))
    check_fd(where_of_a_product_in_a_loop, X.copy(), A, 4)


@nad.grad_jit
def strided_value_kept_in_a_loop(A, v, n):
    q = v * 1.0
    for _ in range(n):
        z = 0.5 * (A.T * q).T          # a strided (not C-contiguous) result
        q = 0.3 * (np.sin(z) @ A.T[:, 0]) + 0.5 * q
    return np.sum(q * q)


def test_strided_value_kept_in_a_loop():
    rng = np.random.default_rng(11)
    check_fd(strided_value_kept_in_a_loop, rng.uniform(-1, 1, (3, 4)),
             rng.uniform(-1, 1, 3), 3)


@nad.grad_jit
def overwritten_each_iteration(v, n):
    q = v * 1.0
    for _ in range(n):
        q = np.exp(0.3 * np.tanh(0.5 * v))     # the last iteration's value only counts
    return np.sum(q * v)


def test_value_overwritten_each_iteration_of_a_loop():
    for n in (3, 1, 0):
        check_fd(overwritten_each_iteration, X.copy(), n)
