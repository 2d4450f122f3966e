"""Tuple arguments get tuple gradients (floats, arrays, nested tuples; None for what is not
differentiated); helpers returning tuples of arrays; NumPy arithmetic ufuncs on scalars.
Against finite differences (funcval_helpers.fd_tree) or analytic values."""
import math

import numba
import numpy as np
import pytest

import numba_adstack as nad

from funcval_helpers import check_tree


@nad.grad_jit
def spring_energy(x, params):
    k, rest = params
    e = 0.0
    for i in range(x.shape[0] - 1):
        d = x[i + 1] - x[i] - rest
        e += 0.5 * k * d * d
    return e


X = np.array([0.0, 1.1, 1.9, 3.2])


def test_unituple_of_floats_gets_a_tuple_gradient():
    got = check_tree(spring_energy, X, (2.0, 1.0))
    assert isinstance(got[1], tuple) and len(got[1]) == 2
    d = np.diff(X) - 1.0
    assert got[1] == pytest.approx((0.5 * np.sum(d * d), -2.0 * np.sum(d)))


@nad.grad_jit
def mixed(x, t):
    a, (b, n) = t
    s = 0.0
    for i in range(n):
        s += a[i] * b[i] ** 2 + x
    b[0] = 5.0                       # written: f.grad works on a copy
    return s + b[0] * a[0]


def test_heterogeneous_nested_tuple_with_arrays_and_an_integer():
    t = (np.arange(3.0), (np.ones(3), 2))
    got = check_tree(mixed, 1.5, t)
    assert got[1][1][1] is None                            # the integer
    np.testing.assert_array_equal(t[1][0], np.ones(3))     # the caller's array
    assert mixed.value_and_grad(1.5, t)[0] == mixed(1.5, (np.arange(3.0), (np.ones(3), 2)))


def test_wrt_a_tuple_argument_and_outside_it():
    t = (np.arange(3.0), (np.ones(3), 2))
    only_x = nad.grad_jit(mixed.py_func, wrt="x").grad(1.5, t)
    assert only_x == (2.0, None)
    only_t = nad.grad_jit(mixed.py_func, wrt="t").grad(1.5, t)
    assert only_t[0] is None
    np.testing.assert_allclose(only_t[1][0], mixed.grad(1.5, t)[1][0])


@nad.grad_jit
def empty_and_single(x, nothing, one):
    return x * one[0] + len(nothing)


def test_empty_and_one_element_tuples():
    assert empty_and_single.grad(2.0, (), (3.0,)) == (3.0, (), (2.0,))


@nad.grad_jit
def float32_items(x, t):
    return x * t[0] + t[1]


def test_float32_items_keep_their_type():
    got = float32_items.grad(2.0, (np.float32(1.5), 0.5))
    assert got[0] == 1.5 and got[1] == (2.0, 1.0)


# ---------------------------------------------------------------------- helpers returning tuples
@numba.njit
def split_even_odd(x):
    n = x.shape[0] // 2
    a = np.empty(n)
    b = np.empty(n)
    for i in range(n):
        a[i] = x[2 * i]
        b[i] = x[2 * i + 1]
    return a, b


@nad.grad_jit
def even_odd_product(x):
    a, b = split_even_odd(x)
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i] ** 2
    return s


@numba.njit
def halves(x):
    return x[:3], x[3:]


@nad.grad_jit
def halves_product(x):
    a, b = halves(x)
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i] ** 2
    return s


@numba.njit
def mean_and_spread(x):
    m = 0.0
    for v in x:
        m += v
    m /= x.shape[0]
    s = 0.0
    for v in x:
        s += (v - m) ** 2
    return m, math.sqrt(s / x.shape[0])


@nad.grad_jit
def standardised_last(x):
    m, sd = mean_and_spread(x)
    return (x[x.shape[0] - 1] - m) / sd


@pytest.mark.parametrize("f", [even_odd_product, halves_product, standardised_last],
                         ids=["fresh arrays", "views", "floats"])
def test_helpers_returning_tuples(f):
    check_tree(f, np.arange(1.0, 7.0) ** 1.3, rtol=1e-6)


# ---------------------------------------------------------------------- scalar ufuncs
def u_multiply(a, b):
    return np.multiply(a, 3.0) + np.multiply(b, a)


def u_add(a, b):
    return np.add(a, b) * a


def u_subtract(a, b):
    return np.subtract(a, b) * b


def u_divide(a, b):
    return np.divide(a, b) + np.true_divide(1.0, b)


def u_negative(a, b):
    return np.negative(a) * b + np.positive(b)


def u_square(a, b):
    return np.square(a) + np.square(a * b)


def u_reciprocal(a, b):
    return np.reciprocal(a) + b * np.reciprocal(b)


def u_float_power(a, b):
    return np.float_power(a, b)


@pytest.mark.parametrize("fn", [u_multiply, u_add, u_subtract, u_divide, u_negative,
                                u_square, u_reciprocal, u_float_power],
                         ids=lambda fn: fn.__name__[2:])
def test_arithmetic_ufuncs_on_scalars(fn):
    check_tree(nad.grad_jit(fn), 1.3, 0.7, rtol=1e-6)


@nad.grad_jit
def ufuncs_in_a_loop(x, k):
    e = 0.0
    for i in range(x.shape[0]):
        a = np.multiply(x[i], 3.0)
        b = np.add(a, k)
        e += np.square(b) + np.power(np.sqrt(np.abs(a) + 1.0), 3.0)
    return e


def test_ufuncs_on_array_elements_in_a_loop():
    check_tree(ufuncs_in_a_loop, np.array([0.3, -1.2, 0.8]), 0.4)
