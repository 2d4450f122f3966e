"""Adjoints and tangents of order statistics: ``np.partition``, ``np.percentile`` and
``np.quantile``.

Each result element is an element of the operand (``partition``) or a mix of two
neighbours in sorted order (``percentile``): the derivative goes back to the position the
element came from, found by a stable argsort. Equal values may be matched in any order;
each order gives a valid adjoint, as for ``np.sort``.
"""
import math

import numpy as np
from numba import types

from .vjp_core import by_type
from .helper_jit import helper_jit


# ---------------------------------------------------------------------- partition
@helper_jit(error_model="numpy")
def _matched(y, a):
    """Rows of ``a`` and ``y`` (along the last axis, ``y`` a permutation of ``a`` in each
    row), and for each row the position in ``a`` of each element of ``y``."""
    n = a.shape[a.ndim - 1]
    rows = a.size // n if n else 0
    src = np.ascontiguousarray(a).reshape((rows, n))
    got = np.ascontiguousarray(y).reshape((rows, n))
    where = np.empty((rows, n), np.intp)
    for r in range(rows):
        pa = np.argsort(src[r], kind="mergesort")
        py = np.argsort(got[r], kind="mergesort")
        for k in range(n):
            where[r, py[k]] = pa[k]
    return where


@helper_jit(error_model="numpy")
def partition_vjp(g, y, a):
    """``y``, ``a`` partitioned at ``kth`` by NumPy: each element of ``g`` back to where
    its value was."""
    out = np.zeros(a.shape)
    if a.size == 0:
        return out
    where = _matched(y, a)
    rows, n = where.shape
    flat = out.reshape((rows, n))
    gs = np.ascontiguousarray(g).reshape((rows, n))
    for r in range(rows):
        for k in range(n):
            flat[r, where[r, k]] += gs[r, k]
    return out


@helper_jit(error_model="numpy")
def partition_jvp(y, a, d):
    out = np.zeros(y.shape)
    if a.size == 0:
        return out
    where = _matched(y, a)
    rows, n = where.shape
    flat = out.reshape((rows, n))
    ds = np.ascontiguousarray(d).reshape((rows, n))
    for r in range(rows):
        for k in range(n):
            flat[r, k] = ds[r, where[r, k]]
    return out


# ---------------------------------------------------------------------- percentile
@helper_jit(error_model="numpy")
def _point(n, p):
    """Numba's np.percentile of ``n`` sorted values at ``p`` percent: ``(lo, hi, m)``,
    the value being ``s[lo] (1 - m) + s[hi] m``; and ``(a, b)``, the positions whose
    difference times ``(n - 1) / 100`` is the slope in ``p`` (one-sided at 0 and 100)."""
    if n == 1:
        return 0, 0, 0.0, 0, 0
    if p == 100:
        return n - 1, n - 1, 0.0, n - 2, n - 1
    if p == 0:
        return 0, 0, 0.0, 0, 1
    rank = 1 + (n - 1) * (p / 100.0)
    f = math.floor(rank)
    lo = int(f) - 1
    return lo, lo + 1, rank - f, lo, lo + 1


@helper_jit(error_model="numpy")
def _sorted(a):
    flat = np.ascontiguousarray(a).reshape(a.size)
    return flat, np.argsort(flat, kind="mergesort")


def _many(q):
    """Is ``q`` an array of percentages (else one float)?"""
    return isinstance(q, types.Array)


@by_type
def percentile_vjp_a(g, a, q, scale):
    """``y = np.percentile(a, q)`` (``scale`` 100) or ``np.quantile(a, q)`` (``scale``
    1), of all of ``a``: each ``g`` to the two neighbours its value mixes."""
    many = _many(q)

    def impl(g, a, q, scale):
        out = np.zeros(a.shape)
        flat = out.reshape(out.size)
        _, perm = _sorted(a)
        qs = np.asarray(q).ravel() if many else np.array([q])
        gs = np.ascontiguousarray(g).ravel() if many else np.array([g])
        for i in range(qs.size):
            lo, hi, m, _, _ = _point(a.size, qs[i] * (100.0 / scale))
            flat[perm[lo]] += gs[i] * (1.0 - m)
            flat[perm[hi]] += gs[i] * m
        return out
    return impl


@by_type
def percentile_vjp_q(g, a, q, scale):
    """The same, in the percentages: ``g`` times the slope between the two neighbours."""
    many = _many(q)

    def impl(g, a, q, scale):
        flat, perm = _sorted(a)
        qs = np.asarray(q).ravel() if many else np.array([q])
        gs = np.ascontiguousarray(g).ravel() if many else np.array([g])
        out = np.zeros(qs.size)
        for i in range(qs.size):
            _, _, _, lo, hi = _point(a.size, qs[i] * (100.0 / scale))
            out[i] = gs[i] * (flat[perm[hi]] - flat[perm[lo]]) * (a.size - 1) / scale
        return out.reshape(np.shape(q)) if many else out[0]
    return impl


@by_type
def percentile_jvp_a(a, q, d, scale):
    """The tangent of ``np.percentile(a, q)`` along ``d``, a tangent of ``a``."""
    many = _many(q)

    def impl(a, q, d, scale):
        _, perm = _sorted(a)
        ds = np.ascontiguousarray(d).reshape(a.size)
        qs = np.asarray(q).ravel() if many else np.array([q])
        out = np.zeros(qs.size)
        for i in range(qs.size):
            lo, hi, m, _, _ = _point(a.size, qs[i] * (100.0 / scale))
            out[i] = ds[perm[lo]] * (1.0 - m) + ds[perm[hi]] * m
        return out.reshape(np.shape(q)) if many else out[0]
    return impl


@by_type
def percentile_jvp_q(a, q, d, scale):
    """The tangent along ``d``, a tangent of ``q``."""
    many = _many(q)

    def impl(a, q, d, scale):
        flat, perm = _sorted(a)
        qs = np.asarray(q).ravel() if many else np.array([q])
        ds = np.asarray(d).ravel() if many else np.array([d])
        out = np.zeros(qs.size)
        for i in range(qs.size):
            _, _, _, lo, hi = _point(a.size, qs[i] * (100.0 / scale))
            out[i] = ds[i] * (flat[perm[hi]] - flat[perm[lo]]) * (a.size - 1) / scale
        return out.reshape(np.shape(q)) if many else out[0]
    return impl
