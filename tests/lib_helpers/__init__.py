"""A small library of Numba functions, imported by the library tests as a module
(``import lib_helpers as lh; lh.energy(...)``), with a submodule (``lib_helpers.geometry``),
its overloads and its ``*args`` functions, as published Numba libraries write them."""
import math
from collections import namedtuple

import numba
import numpy as np
from numba.core import types
from numba.extending import overload, overload_method

from . import geometry  # noqa: F401  (read as lib_helpers.geometry.f)


@numba.njit
def energy(x, k):
    s = 0.0
    for i in range(x.shape[0]):
        s += k * x[i] * x[i] + math.sin(x[i])
    return s


# An API written as numba-stats writes its own: a Python stub that Numba implements by
# the argument types (``@overload``), and a method of arrays (``@overload_method``).
def softplus(x):
    """log(1 + exp(x)), of a float or element-wise of an array."""
    return np.log1p(np.exp(x))


@overload(softplus)
def _softplus_impl(x):
    if isinstance(x, types.Float):
        def scalar(x):
            return math.log1p(math.exp(x))
        return scalar
    if isinstance(x, types.Array):
        def elementwise(x):
            out = np.empty_like(x)
            for i in range(x.shape[0]):
                out[i] = math.log1p(math.exp(x[i]))
            return out
        return elementwise
    return None


@overload_method(types.Array, "weighted_norm2")
def _weighted_norm2_impl(a, w):
    def impl(a, w):
        s = 0.0
        for i in range(a.shape[0]):
            s += w * a[i] * a[i]
        return s
    return impl


# ``*args`` functions, as the interpolation package declares ``interp(*args)``.
@numba.njit
def head_sum(*xs):
    return xs[0] * 2.0 + xs[1] * xs[2]


@numba.njit
def affine(a, b=2.0, *more):
    return a * b + len(more)


# A Newton solver returning its result as QuantEcon's ``newton`` does: a named tuple,
# from two ``return`` statements; and one returning a plain tuple.
results = namedtuple("results", "root function_calls iterations converged")


@numba.njit
def newton(func, x0, fprime, args=(), tol=1e-13, maxiter=50):
    p0 = x0
    for k in range(maxiter):
        p = p0 - func(p0, *args) / fprime(p0, *args)
        if abs(p - p0) < tol:
            return results(p, k + 1, k + 1, True)
        p0 = p
    return results(p0, maxiter, maxiter, False)


@numba.njit
def newton_pair(func, x0, fprime, args=(), tol=1e-13, maxiter=50):
    p0 = x0
    for k in range(maxiter):
        p = p0 - func(p0, *args) / fprime(p0, *args)
        if abs(p - p0) < tol:
            return p, k + 1
        p0 = p
    return p0, maxiter


@numba.njit
def kepler(E, e, M):
    return E - e * math.sin(E) - M


@numba.njit
def kepler_prime(E, e, M):
    return 1.0 - e * math.cos(E)


@numba.vectorize
def logistic(x, k):
    return 1.0 / (1.0 + math.exp(-k * x))


@numba.vectorize(["float64(float64, float64)", "float32(float32, float32)"])
def softsign_scaled(x, k):
    # Built with explicit signatures: a NumPy ufunc over compiled kernels.
    return k * x / (1.0 + abs(x))
