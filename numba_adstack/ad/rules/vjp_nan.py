"""Adjoints and tangents of the NaN-skipping reductions and scans (``np.nansum``,
``np.nanmean``, ``np.nanvar``, ``np.nanstd``, ``np.nanprod``, ``np.nanmedian``,
``np.nanpercentile``, ``np.nanquantile``, ``np.nancumsum``, ``np.nancumprod``) and of
``np.ptp``.

Each is its plain twin over the elements that are not NaN: a NaN element gets no
gradient, and an all-NaN operand (whose result NumPy defines as 0, 1 or NaN) gets none
anywhere, as JAX's ``where``-masked reductions give. Results are new C-contiguous arrays
of the operand's shape.
"""
import numpy as np

from .vjp_core import public
from .vjp_order import (percentile_jvp_a, percentile_jvp_q, percentile_vjp_a,
                        percentile_vjp_q)
from .vjp_reduce import cumprod_jvp, cumprod_vjp, extreme_vjp, prod_vjp
from .vjp_shape import median_vjp


@public
def _flat(a):
    return np.ascontiguousarray(a).reshape(a.size)


@public
def _kept(a):
    """The flat positions of the elements of ``a`` that are not NaN."""
    x = _flat(a)
    keep = np.empty(x.size, np.intp)
    n = 0
    for i in range(x.size):
        if not np.isnan(x[i]):
            keep[n] = i
            n += 1
    return keep[:n]


@public
def _scatter(part, keep, a):
    """``part`` (one value per kept element) back at the kept positions of ``a``'s shape."""
    out = np.zeros(a.size)
    for j in range(keep.size):
        out[keep[j]] = part[j]
    return out.reshape(a.shape)


@public
def _ones_at_nan(a):
    """``a`` flat, its NaNs made 1.0 (the neutral element of a product)."""
    x = _flat(a).astype(np.float64)
    for i in range(x.size):
        if np.isnan(x[i]):
            x[i] = 1.0
    return x


@public
def _zero_at_nan(v, a):
    """``v`` (flat, of ``a``'s size) with zeros where ``a`` is NaN, shaped like ``a``."""
    x = _flat(a)
    out = np.ascontiguousarray(v).reshape(x.size).astype(np.float64)
    for i in range(x.size):
        if np.isnan(x[i]):
            out[i] = 0.0
    return out.reshape(a.shape)


@public
def nansum_vjp(g, a):
    return _zero_at_nan(np.full(a.size, g), a)


@public
def nanmean_vjp(g, a):
    n = _kept(a).size
    if n == 0:
        return np.zeros(a.shape)
    return _zero_at_nan(np.full(a.size, g / n), a)


@public
def nanvar_vjp(g, a, ddof):
    keep = _kept(a)
    n = keep.size
    if n <= ddof:
        return np.zeros(a.shape)
    x = _flat(a)[keep]
    return _scatter((2.0 * g / (n - ddof)) * (x - np.mean(x)), keep, a)


@public
def nanstd_vjp(g, y, a, ddof):
    # (at no spread, y == 0: a zero adjoint contributes zero)
    return nanvar_vjp(0.5 * g / y if g != 0.0 else 0.0, a, ddof)


@public
def nanextreme_vjp(g, y, a):
    """``np.nanmax``/``np.nanmin``: ``g`` split among the elements equal to the result
    (a NaN equals nothing; an all-NaN result, NaN, gives none)."""
    return extreme_vjp(g, y, a)


@public
def nanprod_vjp(g, y, a):
    return _zero_at_nan(prod_vjp(g, y, _ones_at_nan(a)), a)


@public
def nanmedian_vjp(g, a):
    keep = _kept(a)
    if keep.size == 0:
        return np.zeros(a.shape)
    return _scatter(median_vjp(g, _flat(a)[keep]), keep, a)


@public
def nanpercentile_vjp_a(g, a, q, scale):
    keep = _kept(a)
    if keep.size == 0:
        return np.zeros(a.shape)
    return _scatter(percentile_vjp_a(g, _flat(a)[keep], q, scale), keep, a)


@public
def _kept_or_one(a):
    # An all-NaN operand: one element, whose percentile has no slope in q, stands in.
    keep = _kept(a)
    if keep.size == 0:
        return np.zeros(1)
    return _flat(a)[keep].astype(np.float64)


@public
def nanpercentile_vjp_q(g, a, q, scale):
    x = _kept_or_one(a)
    return percentile_vjp_q(g * (_kept(a).size > 0), x, q, scale)


@public
def nanpercentile_jvp_a(a, q, d, scale):
    keep = _kept(a)
    if keep.size == 0:
        return percentile_jvp_a(np.zeros(1), q, np.zeros(1), scale)
    return percentile_jvp_a(_flat(a)[keep], q, _flat(d)[keep], scale)


@public
def nanpercentile_jvp_q(a, q, d, scale):
    return percentile_jvp_q(_kept_or_one(a), q, d, scale)


@public
def nancumsum_vjp(g, a):
    """``np.nancumsum(a)`` (flat): element ``i`` gets the sum of ``g`` from ``i`` on."""
    gs = _flat(g)
    out = np.empty(gs.size)
    acc = 0.0
    for i in range(gs.size - 1, -1, -1):
        acc += gs[i]
        out[i] = acc
    return _zero_at_nan(out, a)


@public
def nancumsum_jvp(a, d):
    return np.cumsum(_zero_at_nan(_flat(d), a))


@public
def nancumprod_vjp(g, a):
    return _zero_at_nan(cumprod_vjp(_flat(g), _ones_at_nan(a)), a)


@public
def nancumprod_jvp(a, d):
    return cumprod_jvp(_ones_at_nan(a), _flat(_zero_at_nan(_flat(d), a)))


@public
def ptp_vjp(g, a):
    """``np.ptp(a)``, of all of ``a``: ``g`` split among the largest elements, ``-g``
    among the smallest (none when all are equal)."""
    hi = np.max(a)
    lo = np.min(a)
    if hi == lo:
        return np.zeros(a.shape)
    return extreme_vjp(g, hi, a) - extreme_vjp(g, lo, a)
