"""Adjoints of reductions and scans: product, extreme values, cumulative sums and
products, norms.

Each helper returns the contribution to the reduced operand's adjoint, a new C-contiguous
array of its shape. ``g`` is the adjoint of the result (a float for a full reduction),
``y`` the result. Sums, means and variances need no helper: their rules in
``array_rules.py`` are array expressions over ``unreduce``.
"""
import numpy as np
from numba import types
from numba.core.errors import TypingError

from .vjp_core import (by_type, internal, is_none, is_scalar, norm_axis, public,
                       split_at)


@public
def prod_vjp(g, y, a):
    """``y = np.prod(a)``: each element gets ``g`` times the product of all the others:
    ``g * y / a`` when ``y`` is a finite non-zero, else from prefix and suffix products
    (exact when elements are zero, and when ``y`` under- or overflows)."""
    if y != 0.0 and np.isfinite(y):
        return np.ascontiguousarray(g * y / a).reshape(a.shape)     # (0-d: 0-d)
    x = a.ravel()
    n = x.size
    out = np.empty(n)
    left = 1.0
    for i in range(n):
        out[i] = left
        left *= x[i]
    right = g
    for i in range(n - 1, -1, -1):
        out[i] *= right
        right *= x[i]
    return out.reshape(a.shape)


@public
def extreme_vjp(g, y, a):
    """``np.max(a)`` or ``np.min(a)`` (``y``): ``g`` split equally among the elements
    equal to ``y`` (JAX's convention for ties). A NaN ``y`` matches no element: all get 0."""
    x = a.ravel()
    count = 0
    for i in range(x.size):
        if x[i] == y:
            count += 1
    out = np.zeros(x.size)
    if count > 0:
        share = g / count
        for i in range(x.size):
            if x[i] == y:
                out[i] = share
    return out.reshape(a.shape)


@internal
def _suffix_sums(g, outer, n, inner):
    """The suffix sums of ``g`` (C order, seen as ``(outer, n, inner)``) along its middle
    axis, as a new array of that 3-d shape."""
    src = np.ascontiguousarray(g).reshape((outer, n, inner))
    out = np.empty((outer, n, inner), src.dtype)
    if inner == 1:
        for p in range(outer):
            acc = 0.0
            for k in range(n - 1, -1, -1):
                acc += src[p, k, 0]
                out[p, k, 0] = acc
        return out
    # Whole rows at a time: the innermost loop runs along memory and vectorises.
    for p in range(outer):
        out[p, n - 1, :] = src[p, n - 1, :]
        for k in range(n - 2, -1, -1):
            for q in range(inner):
                out[p, k, q] = out[p, k + 1, q] + src[p, k, q]
    return out


@by_type
def cumsum_vjp(g, a, axis=None):
    """``np.cumsum(a, axis)``: the suffix sums of ``g`` along ``axis``; with no axis,
    ``g`` is the flat cumulative sum's adjoint and the suffix sums run over it in C order
    before taking ``a``'s shape."""
    if is_none(axis):
        return lambda g, a, axis=None: _suffix_sums(g, 1, g.size, 1).reshape(a.shape)

    def along(g, a, axis=None):
        outer, n, inner = split_at(g.shape, norm_axis(axis, g.ndim))
        return _suffix_sums(g, outer, n, inner).reshape(g.shape)
    return along


@public
def cumprod_vjp(g, a):
    """``y = np.cumprod(a)`` (flat): element ``j`` gets ``y[j-1] r[j]`` with
    ``r[j] = g[j] + a[j+1] r[j+1]`` the suffix sums of ``g`` weighted by the products
    after ``j``: no division, so exact where elements are zero."""
    x = a.ravel()
    gf = np.ascontiguousarray(g).ravel()
    n = x.size
    out = np.empty(n)
    if n == 0:
        return out.reshape(a.shape)
    r = gf[n - 1]
    out[n - 1] = r
    for j in range(n - 2, -1, -1):
        r = gf[j] + x[j + 1] * r
        out[j] = r
    left = 1.0
    for j in range(n):
        out[j] *= left
        left *= x[j]
    return out.reshape(a.shape)


@public
def cumprod_jvp(a, da):
    """Forward mode of ``y = np.cumprod(a)``: ``dy[i] = dy[i-1] a[i] + y[i-1] da[i]``
    (flat, as ``y``)."""
    x = a.ravel()
    d = np.ascontiguousarray(da).ravel()
    out = np.empty(x.size)
    left = 1.0
    t = 0.0
    for i in range(x.size):
        t = t * x[i] + left * d[i]
        out[i] = t
        left *= x[i]
    return out


@internal
def _vector_norm_vjp(g, y, x, p):
    """``g * d|x|_p / dx``: ``sign(x) |x|^(p-1) / y^(p-1)``; for ``p = +-inf`` the
    gradient is split among the elements of largest (smallest) magnitude."""
    v = x.ravel()
    out = np.zeros(v.size)
    if np.isinf(p):
        count = 0
        for i in range(v.size):
            if abs(v[i]) == y:
                count += 1
        for i in range(v.size):
            if abs(v[i]) == y:
                out[i] = np.sign(v[i]) * g / count
    elif p == 0.0:
        pass                                   # a count of non-zeros: no gradient
    elif p == 1.0:
        for i in range(v.size):
            out[i] = np.sign(v[i]) * g
    elif p == 2.0:
        s = g / y if y != 0.0 else 0.0
        for i in range(v.size):
            out[i] = v[i] * s
    else:
        s = g / y ** (p - 1.0) if y != 0.0 else 0.0
        for i in range(v.size):
            out[i] = np.sign(v[i]) * np.abs(v[i]) ** (p - 1.0) * s
    return out.reshape(x.shape)


@internal
def _spectral_norm_vjp(g, x, p):
    """``p`` 2 / -2: the largest / smallest singular value, ``g u v^T`` for its singular
    vectors."""
    u, s, vt = np.linalg.svd(np.ascontiguousarray(x), full_matrices=False)
    k = 0 if p > 0.0 else s.size - 1
    return g * np.outer(u[:, k], vt[k, :])


@internal
def _sum_norm_vjp(g, x, p):
    """``p`` 1 / -1: the largest / smallest absolute column sum; inf / -inf: row sum.
    Ties split the gradient equally (found among the sums computed here, so that a
    different summation order in NumPy cannot hide them)."""
    by_col = p == 1.0 or p == -1.0
    rows, cols = x.shape
    sums = np.zeros(cols if by_col else rows)
    for i in range(rows):
        for j in range(cols):
            sums[j if by_col else i] += abs(x[i, j])
    best = sums.max() if p > 0.0 else sums.min()
    share = g / np.sum(sums == best)
    out = np.zeros(x.shape)
    for i in range(rows):
        for j in range(cols):
            if sums[j if by_col else i] == best:
                out[i, j] = np.sign(x[i, j]) * share
    return out


@internal
def _matrix_norm_vjp(g, y, x, p):
    if p == 2.0 or p == -2.0:
        return _spectral_norm_vjp(g, x, p)
    return _sum_norm_vjp(g, x, p)


@by_type(prefer_literal=True)
def norm_vjp(g, y, x, ord=None):
    """``np.linalg.norm(x, ord)`` (``y``): with ``ord=None`` the 2-norm of a vector or the
    Frobenius norm of a matrix, ``g * x / y`` (0 at ``x = 0``); a vector with a numeric
    ``ord`` ``p`` (finite, ``np.inf``, ``-np.inf``; 0 counts non-zeros: no gradient); a
    matrix with ``ord`` 1, -1, 2, -2, ``np.inf``, ``-np.inf`` (ties between columns or rows
    split the gradient equally). A constant integer ``ord`` compiles only its case (no
    SVD for 1 and -1)."""
    if not isinstance(x, types.Array) or x.ndim not in (1, 2):
        raise TypingError("norm_vjp: a %s operand" % x)
    if is_none(ord):
        def two(g, y, x, ord=None):
            s = g / y if y != 0.0 else 0.0
            return np.ascontiguousarray(x * s)
        return two
    if not is_scalar(ord):
        raise TypingError("norm_vjp: ord of type %s" % ord)
    if x.ndim == 1:
        return lambda g, y, x, ord=None: _vector_norm_vjp(g, y, x, float(ord))
    value = getattr(ord, "literal_value", None)
    if value in (2, -2):
        return lambda g, y, x, ord=None: _spectral_norm_vjp(g, x, float(ord))
    if value is not None:
        return lambda g, y, x, ord=None: _sum_norm_vjp(g, x, float(ord))
    return lambda g, y, x, ord=None: _matrix_norm_vjp(g, y, x, float(ord))


@by_type
def average_vjp_a(g, a, weights=None):
    """``y = np.average(a, weights=weights)`` (of all of ``a``): ``a``'s adjoint, ``g``
    times each element's share of the weights (``1 / a.size`` without weights)."""
    if is_none(weights):
        return lambda g, a, weights=None: np.full(a.shape, g / a.size)
    return lambda g, a, weights=None: np.ascontiguousarray(g * weights / np.sum(weights))


@by_type
def average_vjp_weights(g, y, a, weights):
    """``y = np.average(a, weights=weights)``: the weights' adjoint,
    ``g (a - y) / sum(weights)``."""
    return lambda g, y, a, weights: np.ascontiguousarray(g * (a - y) / np.sum(weights))
