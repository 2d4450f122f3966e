"""Builtins and small functions as ordinary Numba code writes them: pow, max/min of several
operands or of a tuple or list written at the call, sum/max/min of an array, type(a)(b),
math.ldexp, math.frexp, nextafter, round(x, n), x.item(), sum(x, start); each against central
finite differences."""
import math

import numpy as np
import pytest

import numba_adstack as nad

from conftest import check_fd


@nad.grad_jit
def scalar_builtins(a, b):
    return (pow(a, b) + pow(a, 2) + max(a, b, a * b) + min(a, b, a + b)
            + max((a, b, 0.5)) * min([a, b, 2.0]) + type(a)(b) * a
            + math.ldexp(a, 3) * b + math.nextafter(a, b) + np.nextafter(b, 2.0)
            + round(a, 1) + np.round(a * b, 2) + np.round(a) * b + np.around(b) * a
            + math.frexp(a * b)[0] * b + math.frexp(a)[1] * a)


@nad.grad_jit
def array_builtins(x, a):
    return sum(x) * a + max(x) * a * a + min(x) + x[1:2].item() * a


@nad.grad_jit
def sums_with_start(x, a, M):
    # sum(x, start) and sum(x, start=...) as Numba's test_builtins spells them; sum of a
    # matrix is a row, its start an array of the row's shape.
    return sum(x, a) * sum(x, start=a * a) + np.sum(np.sin(sum(M, x[:3])))


def test_scalar_builtins():
    check_fd(scalar_builtins, 1.3, 0.7)
    check_fd(scalar_builtins, 0.7, 1.3)      # the other operand is the largest


def test_array_builtins():
    check_fd(array_builtins, np.array([0.3, 1.7, 1.1, 0.2]), 1.3)


def test_sum_with_a_start_reverse_and_forward():
    x, M = np.array([0.3, 1.7, 1.1, 0.2]), np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    g = check_fd(sums_with_start, x, 1.3, M)
    tangents = (np.array([0.5, -1.0, 0.25, 2.0]), 0.7, np.ones((2, 3)))
    _, t = sums_with_start.jvp((x, 1.3, M), tangents)
    assert t == pytest.approx(sum(np.sum(a * b) for a, b in zip(g, tangents)), rel=1e-12)


@nad.grad_jit
def quotient_and_remainder(a, b):
    q, r = divmod(a, b)
    return q * a + r * r * b


@pytest.mark.parametrize("a, b", [(7.3, 2.1), (-7.3, 2.1), (7.3, -2.1)])
def test_divmod_is_floor_division_and_remainder(a, b):
    # d/da = q + 2 r b, d/db = 2 r (-q) b + r^2 (q constant between its jumps)
    q, r = divmod(a, b)
    g = check_fd(quotient_and_remainder, a, b)
    assert g == pytest.approx((q + 2 * r * b, -2 * r * q * b + r * r), rel=1e-12)
