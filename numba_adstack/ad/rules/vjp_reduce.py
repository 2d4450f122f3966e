"""Adjoints of reductions and scans: product, extreme values, cumulative sums, norms.

Each helper returns the contribution to the reduced operand's adjoint, a new C-contiguous
array of its shape. ``g`` is the adjoint of the result (a float for a full reduction),
``y`` the result. Sums, means and variances need no helper: their rules in
``array_rules.py`` are array expressions over ``unreduce``.
"""
import numpy as np
from numba import njit, types
from numba.core.errors import TypingError

from .vjp_core import by_type, is_none, is_scalar, norm_axis


@njit
def prod_vjp(g, a):
    """``np.prod(a)``: each element gets ``g`` times the product of all the others,
    computed from prefix and suffix products (exact when elements are zero)."""
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


@njit
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


@njit
def _reverse_cumsum_rows(m):
    """In place, each row of the C-contiguous 2-d ``m`` becomes its suffix sums."""
    rows, n = m.shape
    for r in range(rows):
        acc = 0.0
        for i in range(n - 1, -1, -1):
            acc += m[r, i]
            m[r, i] = acc


@by_type
def cumsum_vjp(g, a, axis=None):
    """``np.cumsum(a, axis)``: the suffix sums of ``g`` along ``axis``; with no axis,
    ``g`` is the flat cumulative sum's adjoint and the suffix sums run over it in C order
    before taking ``a``'s shape."""
    if is_none(axis):
        def flat(g, a, axis=None):
            out = np.ascontiguousarray(g).reshape(1, g.size).copy()
            _reverse_cumsum_rows(out)
            return out.reshape(a.shape)
        return flat

    def along(g, a, axis=None):
        ax = norm_axis(axis, g.ndim)
        # A copy with ``axis`` last (C order), suffix-summed in place, then swapped back.
        last = np.swapaxes(g, ax, g.ndim - 1).copy()
        rows = last.reshape(last.size // g.shape[ax], g.shape[ax])
        _reverse_cumsum_rows(rows)
        return np.ascontiguousarray(np.swapaxes(last, ax, g.ndim - 1))
    return along


@njit
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


@njit
def _matrix_norm_vjp(g, y, x, p):
    """Matrix norms: ``p`` 1 / -1 (largest / smallest absolute column sum), inf / -inf
    (rows), 2 / -2 (largest / smallest singular value). Ties split the gradient equally."""
    a = np.ascontiguousarray(x)
    out = np.zeros(a.shape)
    if p == 2.0 or p == -2.0:
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        k = 0 if p == 2.0 else s.size - 1
        return g * np.outer(u[:, k], vt[k, :])
    cols = p == 1.0 or p == -1.0
    sums = np.abs(a).sum(axis=0) if cols else np.abs(a).sum(axis=1)
    count = 0
    for j in range(sums.size):
        if sums[j] == y:
            count += 1
    for j in range(sums.size):
        if sums[j] == y:
            if cols:
                out[:, j] = np.sign(a[:, j]) * (g / count)
            else:
                out[j, :] = np.sign(a[j, :]) * (g / count)
    return out


@by_type
def norm_vjp(g, y, x, ord=None):
    """``np.linalg.norm(x, ord)`` (``y``): with ``ord=None`` the 2-norm of a vector or the
    Frobenius norm of a matrix, ``g * x / y`` (0 at ``x = 0``); a vector with a numeric
    ``ord`` ``p`` (finite, ``np.inf``, ``-np.inf``; 0 counts non-zeros: no gradient); a
    matrix with ``ord`` 1, -1, 2, -2, ``np.inf``, ``-np.inf``."""
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
    return lambda g, y, x, ord=None: _matrix_norm_vjp(g, y, x, float(ord))
