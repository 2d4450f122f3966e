"""Adjoints of functions that repeat or lay out elements: ``np.kron``, ``np.repeat``,
``np.linspace`` (of its endpoints) and ``np.append`` along an axis. (``np.rot90``,
``np.moveaxis`` and ``np.cross`` need none: their rules apply them to ``g``.)
"""
import numpy as np
from numba import njit, types

from .vjp_core import by_type, is_none
from .vjp_shape import append_vjp_arr, append_vjp_values
from .helper_jit import helper_jit


@helper_jit(error_model="numpy")
def _kron_parts(g, a, b):
    """``a``, ``b`` as 2-d (NumPy's kron takes a 1-d operand as one row) and ``g`` as
    ``(m, p, n, q)``: ``y[i p + k, j q + l] = a[i, j] b[k, l]``."""
    a2 = np.atleast_2d(np.ascontiguousarray(a))
    b2 = np.atleast_2d(np.ascontiguousarray(b))
    m, n = a2.shape
    p, q = b2.shape
    return np.ascontiguousarray(g).reshape((m, p, n, q)), a2, b2


@by_type
def kron_vjp_a(g, a, b):
    """``y = np.kron(a, b)``; of a number and an array it is ``a * b``."""
    if not isinstance(a, types.Array) or not isinstance(b, types.Array):
        return lambda g, a, b: _scaled_vjp(g, b, a)
    return lambda g, a, b: _kron_vjp_a(g, a, b)


@by_type
def kron_vjp_b(g, a, b):
    if not isinstance(a, types.Array) or not isinstance(b, types.Array):
        return lambda g, a, b: _scaled_vjp(g, a, b)
    return lambda g, a, b: _kron_vjp_b(g, a, b)


@by_type
def _scaled_vjp(g, other, x):
    """The adjoint of ``x`` in ``y = x * other`` (one of them a number)."""
    if isinstance(x, types.Array):
        return lambda g, other, x: np.ascontiguousarray(g * other).reshape(x.shape)
    return lambda g, other, x: np.sum(g * other)


@helper_jit(error_model="numpy")
def _kron_vjp_a(g, a, b):
    g4, a2, b2 = _kron_parts(g, a, b)
    m, p, n, q = g4.shape
    out = np.zeros((m, n))
    for i in range(m):
        for k in range(p):
            for j in range(n):
                for l in range(q):
                    out[i, j] += g4[i, k, j, l] * b2[k, l]
    return out.reshape(a.shape)


@helper_jit(error_model="numpy")
def _kron_vjp_b(g, a, b):
    g4, a2, b2 = _kron_parts(g, a, b)
    m, p, n, q = g4.shape
    out = np.zeros((p, q))
    for i in range(m):
        for k in range(p):
            for j in range(n):
                for l in range(q):
                    out[k, l] += g4[i, k, j, l] * a2[i, j]
    return out.reshape(b.shape)


@by_type
def repeat_vjp(g, a, repeats):
    """``y = np.repeat(a, repeats)`` (flattened; ``repeats`` an integer or one per
    element): each element gets the sum of its copies' adjoints."""
    if not isinstance(a, types.Array):
        return lambda g, a, repeats: np.sum(g)
    if isinstance(repeats, types.Integer):
        return lambda g, a, repeats: (np.zeros(a.shape) if repeats == 0 else
                                      np.ascontiguousarray(g).reshape(
                                          (a.size, repeats)).sum(axis=1).reshape(a.shape))

    def by_counts(g, a, repeats):
        flat = np.zeros(a.size)
        counts = np.ascontiguousarray(repeats).ravel()
        k = 0
        for i in range(a.size):
            c = counts[i] if counts.size > 1 else counts[0]
            for _ in range(c):
                flat[i] += g[k]
                k += 1
        return flat.reshape(a.shape)
    return by_counts


@helper_jit(error_model="numpy")
def linspace_weights(num, of_start):
    """The weight of ``start`` (``of_start``) or ``stop`` in each point of
    ``np.linspace(start, stop, num)``: ``1 - t`` or ``t``, ``t = i / (num - 1)``."""
    out = np.empty(num)
    for i in range(num):
        t = i / (num - 1) if num > 1 else 0.0
        out[i] = 1.0 - t if of_start else t
    return out


def _along(of_values):
    def along(g, arr, values, axis):
        ax = axis if axis >= 0 else axis + g.ndim
        moved = np.moveaxis(g, ax, 0)
        n = arr.shape[ax]
        part = moved[n:] if of_values else moved[:n]
        return np.ascontiguousarray(np.moveaxis(part, 0, ax))
    return njit(along)


_ALONG = {False: _along(False), True: _along(True)}


@by_type
def append_axis_vjp_arr(g, arr, values, axis):
    """``y = np.append(arr, values, axis)``: ``arr``'s part of ``g`` (the first
    ``arr.shape[axis]`` along ``axis``); flattened with no axis (``append_vjp_arr``)."""
    if is_none(axis):
        return lambda g, arr, values, axis: append_vjp_arr(g, arr, values)
    along = _ALONG[False]
    return lambda g, arr, values, axis: along(g, arr, values, axis)


@by_type
def append_axis_vjp_values(g, arr, values, axis):
    """``y = np.append(arr, values, axis)``: ``values``' part of ``g``."""
    if is_none(axis):
        return lambda g, arr, values, axis: append_vjp_values(g, arr, values)
    along = _ALONG[True]
    return lambda g, arr, values, axis: along(g, arr, values, axis)
