"""grad_jit on the CPU: every math.* and np.* function of floats, operator and builtin,
through a loop with a run-time trip count, against central finite differences; functions
with zero derivatives (floor, ceil, floor division).
"""
import math

import numpy as np
import pytest

import numba_adstack as nad

from conftest import check_fd


# ---------------------------------------------------------------------------------------
# Math functions through a dynamic loop
# ---------------------------------------------------------------------------------------
_NS = {"math": math, "np": np, "nad": nad}


def _through_loop(expr):
    """grad_jit of s = 0.5 * s + EXPR over a dynamic loop; EXPR sees a = x[i], b = w[i]."""
    src = ("def f(x, w, n):\n"
           "    s = 0.0\n"
           "    for i in range(n):\n"
           "        a = x[i]\n"
           "        b = w[i]\n"
           "        s = 0.5 * s + (%s)\n"
           "    return s\n" % expr)
    ns = dict(_NS)
    exec(src, ns)
    return nad.grad_jit(ns["f"])


# Each group is one compiled function summing its expressions (compiles dominate run time);
# every function of issue 3 appears, math.* and np.* twins alike.
MATH_GROUPS = [
    "math.sin(a) + math.cos(b) * a + math.tan(a) * b",
    "math.asin(a) * b + math.acos(b) * a + math.atan(a * b)",
    "math.atan2(a, b) + math.hypot(a, b) * a",
    "math.sinh(a) * b + math.cosh(b) * a + math.tanh(a * b)",
    "math.exp(a) * b + math.expm1(b) * a + math.exp2(a * b)",
    "math.asinh(a) * b + math.acosh(b + 1.5) * a + math.atanh(a * b)",
    "math.erf(a) * b + math.erfc(b) * a + math.radians(a) * b + math.degrees(b) * 0.01",
    "math.log(a) * b + math.log1p(b) * a + math.log10(a + b) + math.log2(b) * b",
    "math.sqrt(a) * b + math.pow(a, b) + math.fabs(a - 0.5) * b",
    "math.copysign(a, b - 0.5) + math.copysign(b, 0.5 - a) * a",
    "np.sin(a) + np.cos(b) * a + np.tan(a) * b",
    "np.arcsin(a) * b + np.arccos(b) * a + np.arctan(a * b)",
    "np.arctan2(a, b) + np.hypot(a, b) * a",
    "np.sinh(a) * b + np.cosh(b) * a + np.tanh(a * b)",
    "np.exp(a) * b + np.expm1(b) * a + np.exp2(a * b)",
    "np.arcsinh(a) * b + np.arccosh(b + 1.5) * a + np.arctanh(a * b)",
    "np.radians(a) * b + np.degrees(b) * 0.01 + np.deg2rad(b) * a + np.rad2deg(a) * 0.01",
    "np.log(a) * b + np.log1p(b) * a + np.log10(a + b) + np.log2(b) * b",
    "np.sqrt(a) * b + np.power(a, b) + np.fabs(a - 0.5) * b",
    "np.copysign(a, b - 0.5) + np.abs(a - 0.5) * b + np.absolute(b - 0.5)",
    "np.minimum(a, b) * a + np.maximum(a, b) * b",
    "min(a, b) * a + max(a, b) * b + abs(a - 0.5) * b + abs(0.5 - b)",
    "a ** b + a ** 2 + b ** 2.5 * a + (a * b) ** 3",
    "-a * b + a / b - b / (a + 1.0) + float(a) * b",
    "a % 0.3 + (a + 1.0) % b * a + a // 0.3 + (a * 7.0) // b * b",
]
_FUNCS = {}


def _get(expr):
    if expr not in _FUNCS:
        _FUNCS[expr] = _through_loop(expr)
    return _FUNCS[expr]


# Inputs inside every function's domain, away from kinks (a == b, a == 0.5, a % 0.3 == 0).
XM = np.array([0.13, 0.27, 0.42, 0.66, 0.71, 0.88])
WM = np.array([0.57, 0.19, 0.83, 0.36, 0.94, 0.48])


@pytest.mark.parametrize("expr", MATH_GROUPS)
def test_math_functions_through_dynamic_loop(expr):
    check_fd(_get(expr), XM.copy(), WM.copy(), 6, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("expr", ["math.floor(3.0 * a) * b", "math.ceil(3.0 * a) * b",
                                  "np.floor(3.0 * a) * b", "np.ceil(3.0 * a) * b",
                                  "(7.0 * a) // b", "int(a * 10.0) * b"])
def test_floor_ceil_floordiv_zero_gradient(expr):
    f = _get(expr)
    gx, gw, _ = f.grad(XM.copy(), WM.copy(), 6)
    np.testing.assert_array_equal(gx, np.zeros(6))
    if "//" in expr:
        np.testing.assert_array_equal(gw, np.zeros(6))
    elif "int(" in expr:
        want = np.floor(10.0 * XM) * 0.5 ** (5 - np.arange(6))
        np.testing.assert_allclose(gw, want, rtol=1e-14)
    else:
        # d/db of floor(3a)*b is floor(3a), weighted by 0.5 ** (n-1-i).
        fl = np.floor(3.0 * XM) if "floor" in expr else np.ceil(3.0 * XM)
        np.testing.assert_allclose(gw, fl * 0.5 ** (5 - np.arange(6)), rtol=1e-14)
