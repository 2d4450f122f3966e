"""Adjoints of functions of sequences: differences (``np.diff``), piecewise-linear
interpolation (``np.interp``) and gathers by an index array (``x[idx]``).

Each helper returns the contribution to one operand's adjoint, a new C-contiguous array of
that operand's shape (a float for a scalar operand), as the other ``vjp_*`` helpers do.
"""
import numpy as np
from numba import types

from .vjp_core import by_type, internal, is_scalar


@internal
def _diff_once_vjp(g):
    """The adjoint of ``a`` for ``g`` the adjoint of ``np.diff(a)``, both seen as
    ``(rows, length)``: ``a[:, 1:]`` gets ``g``, ``a[:, :-1]`` gets ``-g``."""
    rows, m = g.shape
    out = np.zeros((rows, m + 1))
    for r in range(rows):
        for k in range(m):
            out[r, k + 1] += g[r, k]
            out[r, k] -= g[r, k]
    return out


@by_type
def diff_vjp(g, a, n=1):
    """``y = np.diff(a, n)`` along the last axis: the adjoint of one difference applied
    ``n`` times, reshaped to ``a``'s shape."""
    def impl(g, a, n=1):
        last = a.shape[a.ndim - 1]
        rows = 1
        for d in range(a.ndim - 1):
            rows *= a.shape[d]
        out = np.ascontiguousarray(g).reshape((rows, g.size // rows if rows else 0))
        for _ in range(min(n, last)):
            out = _diff_once_vjp(out)
        if n > last:                    # NumPy returns an empty array: no gradient
            return np.zeros(a.shape)
        return out.reshape(a.shape)
    return impl


@internal
def _interval(xv, xp):
    """``(j, t, inside)`` for the point ``xv`` of ``np.interp(xv, xp, fp)``: the value is
    ``(1 - t) * fp[j] + t * fp[j + 1]`` inside ``[xp[0], xp[-1]]`` (a knot belongs to the
    interval it starts, the last knot to the last interval), ``fp[j]`` (``t == 0``)
    outside."""
    n = xp.size
    if n == 1 or not xv >= xp[0]:           # left of the knots (or NaN): fp[0]
        return 0, 0.0, False
    if xv > xp[n - 1]:
        return n - 1, 0.0, False
    j = np.searchsorted(xp, xv, side="right") - 1
    if j >= n - 1:
        j = n - 2
    h = xp[j + 1] - xp[j]
    t = (xv - xp[j]) / h if h != 0.0 else 0.0
    return j, t, True


@internal
def _slope(j, xp, fp):
    h = xp[j + 1] - xp[j]
    return (fp[j + 1] - fp[j]) / h if h != 0.0 else 0.0


@internal
def _interp_x_vjp(g, x, xp, fp):
    """Flat ``g`` and ``x``: each point's adjoint is ``g`` times the slope of its
    interval (0 outside the knots)."""
    out = np.empty(x.size)
    for k in range(x.size):
        j, t, inside = _interval(x[k], xp)
        out[k] = g[k] * _slope(j, xp, fp) if inside else 0.0
    return out


@internal
def _interp_table_vjp(g, x, xp, fp, values):
    """Flat ``g`` and ``x``: the adjoint of ``fp`` (``values``) or of ``xp``."""
    n = xp.size
    out = np.zeros(n)
    for k in range(x.size):
        j, t, inside = _interval(x[k], xp)
        if values:
            out[j] += g[k] * (1.0 - t)
            if inside:
                out[j + 1] += g[k] * t
        elif inside:
            # y = fp[j] + s (x - xp[j]), s = (fp[j+1] - fp[j]) / (xp[j+1] - xp[j])
            s = _slope(j, xp, fp)
            out[j] -= g[k] * s * (1.0 - t)
            out[j + 1] -= g[k] * s * t
    return out


@by_type
def interp_vjp_x(g, x, xp, fp):
    """``y = np.interp(x, xp, fp)``: the adjoint of the query points ``x``."""
    if is_scalar(x):
        return lambda g, x, xp, fp: _interp_x_vjp(
            np.array([g]), np.array([x]), xp.ravel(), fp.ravel())[0]
    return lambda g, x, xp, fp: _interp_x_vjp(
        np.ascontiguousarray(g).ravel(), x.ravel(), xp.ravel(), fp.ravel()).reshape(x.shape)


def _table_impl(g, values):
    """The implementation of the adjoint of ``xp`` or ``fp`` (``values``) for a scalar or
    array ``g`` (the query points are shaped like it)."""
    if isinstance(g, types.Array):
        return lambda g, x, xp, fp: _interp_table_vjp(
            np.ascontiguousarray(g).ravel(), x.ravel(), xp.ravel(), fp.ravel(),
            values).reshape(xp.shape)
    return lambda g, x, xp, fp: _interp_table_vjp(
        np.array([g]), np.array([x]), xp.ravel(), fp.ravel(), values).reshape(xp.shape)


@by_type
def interp_vjp_fp(g, x, xp, fp):
    """``y = np.interp(x, xp, fp)``: the adjoint of the values ``fp`` (the two knots of
    each point's interval share its ``g`` linearly; outside, the end value gets it)."""
    return _table_impl(g, True)


@by_type
def interp_vjp_xp(g, x, xp, fp):
    """``y = np.interp(x, xp, fp)``: the adjoint of the knots ``xp`` (0 outside them)."""
    return _table_impl(g, False)


@by_type
def take_vjp(g, a, index):
    """``y = a[index]`` with ``index`` a 1-d array of integers or booleans (along the
    first axis): ``g``'s rows added back into the rows they came from."""
    if not isinstance(index, types.Array) or index.ndim != 1:
        return None
    if isinstance(index.dtype, types.Boolean):
        def by_mask(g, a, index):
            out = np.zeros(a.shape)
            rows = out.reshape((a.shape[0], out.size // a.shape[0] if a.shape[0] else 0))
            src = np.ascontiguousarray(g).reshape((g.shape[0], rows.shape[1]))
            k = 0
            for i in range(index.size):
                if index[i]:
                    rows[i] += src[k]
                    k += 1
            return out
        return by_mask

    def by_position(g, a, index):
        out = np.zeros(a.shape)
        n = a.shape[0]
        rows = out.reshape((n, out.size // n if n else 0))
        src = np.ascontiguousarray(g).reshape((index.size, rows.shape[1]))
        for k in range(index.size):
            i = index[k]
            rows[i + n if i < 0 else i] += src[k]
        return out
    return by_position


@internal
def _interp_tangent(x, xp, fp, dx, dxp, dfp):
    """Flat ``x``, ``dx``: the tangent of ``np.interp(x, xp, fp)`` along ``dx``, ``dxp``,
    ``dfp`` (the transpose of the three adjoints above)."""
    out = np.empty(x.size)
    for k in range(x.size):
        j, t, inside = _interval(x[k], xp)
        if inside:
            s = _slope(j, xp, fp)
            out[k] = (1.0 - t) * dfp[j] + t * dfp[j + 1] + s * (
                dx[k] - (1.0 - t) * dxp[j] - t * dxp[j + 1])
        else:
            out[k] = dfp[j]
    return out


def _flat_tangent(name, of, ty, size):
    """Source of the flat tangent ``name`` of the array or float ``of``; zeros of
    ``size`` for a missing one (None)."""
    if ty is None or isinstance(ty, (types.NoneType, types.Omitted)):
        return "np.zeros(%s)" % size
    if is_scalar(ty):
        return "np.array([%s])" % name
    return "np.ascontiguousarray(%s).ravel()" % name


@by_type
def interp_jvp(x, xp, fp, dx, dxp, dfp):
    """Forward mode of ``y = np.interp(x, xp, fp)``: the tangent of ``y`` (shaped like
    ``x``) from those of the points, the knots and the values (None: no tangent)."""
    scalar = is_scalar(x)
    src = "def impl(x, xp, fp, dx, dxp, dfp):\n    r = _interp_tangent(%s, xp.ravel(), " \
          "fp.ravel(), %s, %s, %s)\n    return %s\n" % (
              "np.array([x])" if scalar else "x.ravel()",
              _flat_tangent("dx", x, dx, "1" if scalar else "x.size"),
              _flat_tangent("dxp", xp, dxp, "xp.size"),
              _flat_tangent("dfp", fp, dfp, "fp.size"),
              "r[0]" if scalar else "r.reshape(x.shape)")
    ns = {"np": np, "_interp_tangent": _interp_tangent}
    exec(src, ns)
    return ns["impl"]


@by_type
def last_writes(cells, a, index):
    """``a[index] = v`` with an index array: the adjoint of ``v`` is ``a``'s adjoint at the
    cells it was stored into (``cells``), zero where a later entry of ``index`` overwrote
    the same cell (NumPy keeps the last write)."""
    if not (isinstance(index, types.Array) and index.ndim == 1
            and isinstance(index.dtype, types.Integer)):
        return lambda cells, a, index: cells
    def impl(cells, a, index):
        out = np.ascontiguousarray(cells).copy()
        rows = out.reshape((index.size, out.size // index.size if index.size else 0))
        n = a.shape[0]
        seen = np.zeros(n, np.bool_)
        for k in range(index.size - 1, -1, -1):
            i = index[k] + n if index[k] < 0 else index[k]
            if seen[i]:
                rows[k] = 0.0
            seen[i] = True
        return out
    return impl
