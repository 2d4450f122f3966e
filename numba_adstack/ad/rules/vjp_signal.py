"""Adjoints and tangents of NumPy's sequence and statistics functions: ``np.trapezoid``,
``np.convolve``, ``np.correlate``, ``np.cov``, ``np.corrcoef``, ``np.ediff1d``,
``np.vander``, float ``np.arange`` (``np.polynomial.polynomial``'s: ``vjp_poly``).

Each helper returns one operand's contribution, shaped like that operand (a float for a
float operand), following Numba's implementation of the primitive where it differs from
NumPy's documentation.
"""
import numpy as np
from numba import types

from .vjp_core import by_type, is_none, public


def _is_array(ty):
    return isinstance(ty, types.Array)


# ----------------------------------------------------------------------- trapezoid
@by_type
def _rows_of(g, rows):
    """The result's adjoint as one value per row of ``y`` (a float for a 1-d ``y``)."""
    if _is_array(g):
        return lambda g, rows: np.ascontiguousarray(g).reshape(rows).astype(np.float64)
    return lambda g, rows: np.full(rows, g, np.float64)


@by_type
def _widths(y, x, dx):
    """The interval widths of ``np.trapezoid(y, x, dx)``: ``(r, n - 1)``, ``r`` 1 when
    every row of ``y`` shares them, else one row per row of ``y``."""
    if is_none(x):
        return lambda y, x, dx: np.full((1, y.shape[-1] - 1), dx, np.float64)

    def impl(y, x, dx):
        n = x.shape[-1]
        xs = np.ascontiguousarray(x).reshape((x.size // n, n)) if n else np.zeros((1, 0))
        return (xs[:, 1:] - xs[:, :-1]).astype(np.float64)
    return impl


@public
def _y_rows(y):
    n = y.shape[-1]
    return np.ascontiguousarray(y).reshape((y.size // n if n else 0, n)).astype(np.float64)


@public
def trapezoid_vjp_y(g, y, x, dx):
    ys = _y_rows(y)
    rows, n = ys.shape
    gs = _rows_of(g, rows)
    w = _widths(y, x, dx)
    out = np.zeros((rows, n))
    for r in range(rows):
        wr = w[r % w.shape[0]]
        for k in range(n - 1):
            out[r, k] += 0.5 * gs[r] * wr[k]
            out[r, k + 1] += 0.5 * gs[r] * wr[k]
    return out.reshape(y.shape)


@public
def _width_adjoint(g, y):
    """The adjoint of each interval width: ``g`` times the mean of its two ends."""
    ys = _y_rows(y)
    rows, n = ys.shape
    gs = _rows_of(g, rows)
    out = np.empty((rows, max(n - 1, 0)))
    for r in range(rows):
        for k in range(n - 1):
            out[r, k] = 0.5 * gs[r] * (ys[r, k] + ys[r, k + 1])
    return out


@by_type
def trapezoid_vjp_x(g, y, x, dx):
    if is_none(x):
        return lambda g, y, x, dx: 0.0

    def impl(g, y, x, dx):
        wb = _width_adjoint(g, y)
        rows, m = wb.shape
        n = x.shape[-1]
        xr = x.size // n if n else 0
        out = np.zeros((xr, n))
        for r in range(rows):
            for k in range(m):
                out[r % xr, k + 1] += wb[r, k]
                out[r % xr, k] -= wb[r, k]
        return out.reshape(x.shape)
    return impl


@by_type
def trapezoid_vjp_dx(g, y, x, dx):
    if is_none(x):
        return lambda g, y, x, dx: np.sum(_width_adjoint(g, y))
    return lambda g, y, x, dx: 0.0


# ------------------------------------------------------------ convolve, correlate
@public
def _offset(la, lv, mode, correlate):
    """Where the result of Numba's ``np.convolve`` (``np.correlate``) starts in the full
    convolution of ``a`` with ``v`` (with ``v`` reversed), and its length."""
    n = min(la, lv)
    if mode == "full":
        return 0, la + lv - 1
    if mode == "same":
        off = (n - 1) // 2
        if correlate and la < lv:        # Numba reverses the swapped operands' result
            off = n - 1 - off
        return off, max(la, lv)
    if mode == "valid":
        return n - 1, max(la, lv) - n + 1
    raise ValueError("Invalid 'mode', valid are 'full', 'same', 'valid'")


@public
def conv_vjp(g, a, v, mode, correlate, of_a):
    """The adjoint of ``a`` (``of_a``) or ``v`` in ``np.convolve(a, v, mode)`` or
    ``np.correlate(a, v, mode)`` (``correlate``): the full convolution's adjoint, ``g``
    placed where the result lies in it, correlated with the other operand."""
    la = a.size
    lv = v.size
    off, length = _offset(la, lv, mode, correlate)
    gf = np.zeros(la + lv - 1)
    gf[off:off + length] = g
    w = v[::-1] if correlate else v
    if of_a:
        out = np.zeros(la)
        for i in range(la):
            acc = 0.0
            for j in range(lv):
                acc += gf[i + j] * w[j]
            out[i] = acc
        return out
    out = np.zeros(lv)
    for j in range(lv):
        acc = 0.0
        for i in range(la):
            acc += gf[i + j] * a[i]
        out[j] = acc
    return out[::-1].copy() if correlate else out


# ------------------------------------------------------------------- cov, corrcoef
@by_type
def _as_variables(a, rowvar):
    """One operand of ``np.cov`` as variables along rows: a 1-d one is one variable."""
    if a.ndim == 1:
        return lambda a, rowvar: np.ascontiguousarray(a).reshape((1, a.size)).astype(
            np.float64)

    def impl(a, rowvar):
        if rowvar:
            return np.ascontiguousarray(a).astype(np.float64)
        return np.ascontiguousarray(a.T).astype(np.float64)
    return impl


@by_type
def _variables(m, y, rowvar):
    """The variables of ``np.cov(m, y, rowvar)`` as rows (observations along columns),
    and how many of them come from ``m``."""
    if is_none(y):
        def impl(m, y, rowvar):
            xm = _as_variables(m, rowvar)
            return xm, xm.shape[0]
        return impl

    def impl2(m, y, rowvar):
        xm = _as_variables(m, rowvar)
        return np.concatenate((xm, _as_variables(y, rowvar))), xm.shape[0]
    return impl2


@by_type
def _square(g, k):
    if _is_array(g):
        return lambda g, k: np.ascontiguousarray(g).reshape((k, k)).astype(np.float64)
    return lambda g, k: np.full((k, k), g, np.float64)


@by_type
def _ddof(bias, ddof):
    if is_none(ddof):
        return lambda bias, ddof: 0 if bias else 1
    return lambda bias, ddof: ddof


@by_type
def _part(xb, first, a, rowvar):
    """The rows ``first``... of the variables' adjoint that came from ``a``, in ``a``'s
    shape."""
    if is_none(a):
        return lambda xb, first, a, rowvar: 0.0

    def impl(xb, first, a, rowvar):
        k = 1 if a.ndim == 1 else (a.shape[0] if rowvar else a.shape[1])
        part = xb[first:first + k]
        if a.ndim == 2 and not rowvar:
            return np.ascontiguousarray(part.T)
        return np.ascontiguousarray(part).reshape(a.shape)
    return impl


@by_type(prefer_literal=True)
def _pick(xb, km, m, y, rowvar, of_m):
    """The contribution to ``m`` (``of_m``, a constant) or ``y``; without ``y``, to
    ``m``."""
    if is_none(y) or getattr(of_m, "literal_value", None) is True:
        return lambda xb, km, m, y, rowvar, of_m: _part(xb, 0, m, rowvar)
    if getattr(of_m, "literal_value", None) is False:
        return lambda xb, km, m, y, rowvar, of_m: _part(xb, km, y, rowvar)

    def impl(xb, km, m, y, rowvar, of_m):
        if of_m:
            return _part(xb, 0, m, rowvar)
        return _part(xb, km, y, rowvar)
    return impl


@public
def _centred(x):
    out = x.copy()
    for r in range(x.shape[0]):
        out[r] -= np.mean(x[r])
    return out


@public
def _cov_back(gc, x, fact):
    """The variables' adjoint of ``C = Xc Xc^T / fact``, ``Xc`` the rows centred: the
    centring removes the row means of ``(G + G^T) Xc``, which are zero already."""
    return np.dot(gc + gc.T, _centred(x)) / fact


@public
def cov_vjp(g, m, y, rowvar, bias, ddof, of_m):
    x, km = _variables(m, y, rowvar)
    fact = x.shape[1] - _ddof(bias, ddof)
    xb = _cov_back(_square(g, x.shape[0]), x, fact)
    return _pick(xb, km, m, y, rowvar, of_m)


@public
def corrcoef_vjp(g, m, y, rowvar, of_m):
    """``R = C / (s s^T)``, ``s`` the square roots of ``C``'s diagonal: the adjoint of
    ``C`` is ``G / (s s^T)``, less on the diagonal what reaches ``s`` through every
    entry of its row and column."""
    x, km = _variables(m, y, rowvar)
    k = x.shape[0]
    fact = x.shape[1] - 1
    xc = _centred(x)
    c = np.dot(xc, xc.T) / fact
    s = np.sqrt(np.diag(c))
    gr = _square(g, k)
    r = c / np.outer(s, s)
    gc = gr / np.outer(s, s)
    for i in range(k):
        sb = -(np.sum(gr[i] * r[i]) + np.sum(gr[:, i] * r[:, i])) / s[i]
        gc[i, i] += sb / (2.0 * s[i])
    xb = _cov_back(gc, x, fact)
    return _pick(xb, km, m, y, rowvar, of_m)


# ------------------------------------------------------------------------- ediff1d
@by_type
def _count(v):
    """How many values ``to_begin``/``to_end`` add: none, one, or an array's size."""
    if is_none(v):
        return lambda v: 0
    if _is_array(v):
        return lambda v: v.size
    return lambda v: 1


@public
def ediff1d_vjp(g, ary, to_begin):
    """Element ``j`` of the flattened ``ary`` starts difference ``j`` (``-g``) and ends
    difference ``j - 1`` (``+g``), after ``to_begin``'s values."""
    nb = _count(to_begin)
    n = ary.size
    out = np.zeros(n)
    for j in range(n - 1):
        out[j] -= g[nb + j]
        out[j + 1] += g[nb + j]
    return out.reshape(ary.shape)


@public
def ediff1d_vjp_end(g, ary, to_end, to_begin, at_end):
    """The slice of ``g`` that ``to_end`` (``at_end``) or ``to_begin`` filled."""
    nb = _count(to_begin)
    start = nb + max(ary.size - 1, 0) if at_end else 0
    k = _count(to_end) if at_end else nb
    return g[start:start + k]


@by_type
def ediff1d_part(part, v):
    """A slice of ``g`` as the contribution to ``v``: a float for a float, its shape
    for an array."""
    if _is_array(v):
        return lambda part, v: np.ascontiguousarray(part).reshape(v.shape)
    if is_none(v):
        return lambda part, v: 0.0
    return lambda part, v: part[0]


@by_type
def zeros_like_of(v):
    """None for None, 0.0 for a number, zeros for an array: ``to_begin``/``to_end``
    where their tangent is not the one taken."""
    if is_none(v):
        return lambda v: None
    if _is_array(v):
        return lambda v: np.zeros(v.shape)
    return lambda v: 0.0


# -------------------------------------------------------------------------- vander
@by_type
def _columns(x, N):
    if is_none(N):
        return lambda x, N: x.size
    return lambda x, N: N


@public
def _powers(ncol, increasing):
    p = np.arange(ncol)
    return p if increasing else p[::-1].copy()


@public
def vander_vjp(g, x, N, increasing):
    """``V[i, j] = x[i] ** p[j]``: ``x[i]`` gets ``sum_j g[i, j] p[j] x[i] ** (p[j] - 1)``."""
    p = _powers(_columns(x, N), increasing)
    out = np.zeros(x.size)
    for i in range(x.size):
        acc = 0.0
        for j in range(p.size):
            if p[j] > 0:
                acc += g[i, j] * p[j] * x[i] ** (p[j] - 1)
        out[i] = acc
    return out


@public
def vander_jvp(x, N, increasing, d):
    p = _powers(_columns(x, N), increasing)
    out = np.zeros((x.size, p.size))
    for i in range(x.size):
        for j in range(p.size):
            if p[j] > 0:
                out[i, j] = p[j] * x[i] ** (p[j] - 1) * d[i]
    return out


# --------------------------------------------------------------------------- arange
@by_type
def arange_vjp_start(g, stop):
    """``np.arange(start, stop, step)`` is ``start + i step``; with one argument it is
    the stop, whose value only sets the length."""
    if is_none(stop):
        return lambda g, stop: 0.0
    return lambda g, stop: np.sum(g)


@public
def arange_vjp_step(g):
    return np.sum(g * np.arange(g.size))


@by_type
def arange_jvp_start(y, stop, d):
    if is_none(stop):
        return lambda y, stop, d: np.zeros(y.size)
    return lambda y, stop, d: np.full(y.size, d)


# ------------------------------------------------------------- tangents of cov, ...
@public
def _tangent_rows(x, km, dpart, of_m):
    """The variables' tangent: ``dpart`` (rows like ``x``'s of one operand) in place,
    zeros elsewhere."""
    dx = np.zeros(x.shape)
    if of_m:
        dx[:km] = dpart[:km]
    else:
        dx[km:] = dpart[km:]
    return dx


@public
def _cov_tangent(m, y, rowvar, d, of_m):
    x, km = _variables(m, y, rowvar)
    dv, _ = _variables(d, y, rowvar) if of_m else _variables(m, d, rowvar)
    xc = _centred(x)
    dxc = _centred(_tangent_rows(x, km, dv, of_m))
    t = np.dot(dxc, xc.T)
    return x, xc, t + t.T


@by_type
def _shaped(out, m, y):
    """A 0-d array for the covariance of one 1-d variable, as Numba returns it."""
    if is_none(y) and m.ndim == 1:
        return lambda out, m, y: out.reshape(())
    return lambda out, m, y: out


@public
def cov_jvp(m, y, rowvar, bias, ddof, d, of_m):
    x, _, t = _cov_tangent(m, y, rowvar, d, of_m)
    out = t / (x.shape[1] - _ddof(bias, ddof))
    return _shaped(out, m, y)


@public
def corrcoef_jvp(m, y, rowvar, d, of_m):
    x, xc, t = _cov_tangent(m, y, rowvar, d, of_m)
    fact = x.shape[1] - 1
    c = np.dot(xc, xc.T) / fact
    dc = t / fact
    s = np.sqrt(np.diag(c))
    rel = np.diag(dc) / (2.0 * s * s)            # ds / s
    out = (dc - c * (rel.reshape((-1, 1)) + rel.reshape((1, -1)))) / np.outer(s, s)
    return _shaped(out, m, y)


@by_type
def trapezoid_jvp_dx(y, x, d):
    if is_none(x):
        return lambda y, x, d: np.trapezoid(y, None, d)
    return lambda y, x, d: 0.0 * np.trapezoid(y, x)
