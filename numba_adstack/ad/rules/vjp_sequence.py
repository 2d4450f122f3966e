"""Adjoints of functions of sequences: differences (``np.diff``), piecewise-linear
interpolation (``np.interp``) and gathers by an index array (``x[idx]``).

Each helper returns the contribution to one operand's adjoint, a new C-contiguous array of
that operand's shape (a float for a scalar operand), as the other ``vjp_*`` helpers do.
"""
import numpy as np
from numba import types
from numba.np.numpy_support import as_dtype

from .vjp_core import by_type, internal, is_scalar
from ..generated_source import exec_source


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
def _knots_increase(xp):
    """Raise unless the knots of ``np.interp`` increase: NumPy leaves the result
    unspecified otherwise (Numba computes one that depends on its search), so there is no
    derivative to follow."""
    for k in range(xp.size - 1):
        if xp[k + 1] < xp[k]:
            raise ValueError("np.interp with knots xp that do not increase: its result is "
                             "unspecified, and has no gradient; sort xp (and fp with it)")


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
    _knots_increase(xp)
    out = np.empty(x.size)
    for k in range(x.size):
        j, t, inside = _interval(x[k], xp)
        out[k] = g[k] * _slope(j, xp, fp) if inside else 0.0
    return out


@internal
def _interp_table_vjp(g, x, xp, fp, values):
    """Flat ``g`` and ``x``: the adjoint of ``fp`` (``values``) or of ``xp``."""
    _knots_increase(xp)
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


def _contribution_dtype(g, a):
    """The dtype of a new contribution: NumPy's promotion of the adjoint's and the
    operand's (a float32 operand keeps float32 adjoints float32)."""
    return np.promote_types(as_dtype(g.dtype), as_dtype(a.dtype))


def take_index_parts(index):
    """For the type of a tuple index mixing 1-d arrays of integers (or one of booleans)
    with integers and slices (``x[idx, 1]``, ``x[:, idx]``, ``x[rows, cols]``),
    ``(positions of the arrays, position of the gathered dimension in the result)``;
    None for any other index. NumPy (and Numba) count the integers as advanced indices
    too: when they and the arrays are adjacent the gathered dimension stays where they
    are, else it comes first."""
    if not isinstance(index, types.BaseTuple):
        return None
    parts = index.types
    arrays = tuple(k for k, t in enumerate(parts) if isinstance(t, types.Array))
    if not arrays or not all(isinstance(t, (types.Integer, types.SliceType))
                             for k, t in enumerate(parts) if k not in arrays):
        return None
    for k in arrays:
        t = parts[k]
        if t.ndim != 1 or not isinstance(t.dtype, (types.Integer, types.Boolean)) or (
                isinstance(t.dtype, types.Boolean) and len(arrays) > 1):
            return None
    advanced = [k for k, t in enumerate(parts) if k in arrays or isinstance(t, types.Integer)]
    adjacent = advanced[-1] - advanced[0] == len(advanced) - 1
    slices_before = sum(isinstance(parts[k], types.SliceType) for k in range(arrays[0]))
    return arrays, slices_before if adjacent else 0


_TAKE_TUPLE = """
def impl(g, a, index):
    out = np.zeros(a.shape, dtype)
{select}
    k = 0
    for j in range(size):
{pick}
        out[{cells}] += g[{rows}]
        k += 1
    return out
"""
_SELECT_BY_MASK = """    sel = index[{p}]
    size = sel.size"""
_PICK_BY_MASK = """        if not sel[j]:
            continue
        i{p} = j"""
# Index arrays broadcast together: each of the longest one's size, or of size 1.
_SELECT_BY_POSITION = """    sel{p} = index[{p}]
    n{p} = a.shape[{p}]
    size = max(size, sel{p}.size)"""
_PICK_BY_POSITION = """        i{p} = sel{p}[min(j, sel{p}.size - 1)]
        if i{p} < 0:
            i{p} += n{p}"""


def _take_tuple_impl(g, a, index):
    """``y = a[index]`` with a tuple index of index arrays, integers and slices: for each
    position along the index arrays, its slice of ``g`` added back into the cells it
    came from (a loop, so that repeated entries add up)."""
    parts = take_index_parts(index)
    if parts is None:
        return None
    arrays, at = parts
    if isinstance(index.types[arrays[0]].dtype, types.Boolean):
        select = _SELECT_BY_MASK.format(p=arrays[0])
        pick = _PICK_BY_MASK.format(p=arrays[0])
    else:
        select = "\n".join(["    size = 0"] + [_SELECT_BY_POSITION.format(p=p)
                                                for p in arrays])
        pick = "\n".join(_PICK_BY_POSITION.format(p=p) for p in arrays)
    src = _TAKE_TUPLE.format(
        select=select, pick=pick,
        cells=", ".join("i%d" % k if k in arrays else "index[%d]" % k
                        for k in range(len(index))),
        rows=", ".join([":"] * at + ["k"]))
    ns = {"np": np, "dtype": _contribution_dtype(g, a)}
    return exec_source("impl", src, ns, "sequence rule")


@by_type
def take_vjp(g, a, index):
    """``y = a[index]`` with ``index`` an array of integers or a 1-d array of booleans
    (along the first axis), or a tuple of such arrays with integers and slices (``a[idx, 1]``,
    ``a[:, idx]``, ``a[rows, cols]``): ``g``'s slices added back into the cells they
    came from (repeated indices add up)."""
    if isinstance(index, types.BaseTuple):
        return _take_tuple_impl(g, a, index)
    if not isinstance(index, types.Array) or (index.ndim != 1 and not isinstance(
            index.dtype, types.Integer)):
        return None
    dtype = _contribution_dtype(g, a)
    if isinstance(index.dtype, types.Boolean):
        def by_mask(g, a, index):
            out = np.zeros(a.shape, dtype)
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
        # (an n-d index array gathers its rows in C order, as a flat one would)
        out = np.zeros(a.shape, dtype)
        n = a.shape[0]
        rows = out.reshape((n, out.size // n if n else 0))
        src = np.ascontiguousarray(g).reshape((index.size, rows.shape[1]))
        flat = np.ascontiguousarray(index).reshape(index.size)
        for k in range(index.size):
            i = flat[k]
            rows[i + n if i < 0 else i] += src[k]
        return out
    return by_position


@internal
def _interp_tangent(x, xp, fp, dx, dxp, dfp):
    """Flat ``x``, ``dx``: the tangent of ``np.interp(x, xp, fp)`` along ``dx``, ``dxp``,
    ``dfp`` (the transpose of the three adjoints above)."""
    _knots_increase(xp)
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
    return exec_source("impl", src, ns, "sequence rule")


@internal
def _interp_adjoint_tangents(g, x, xp, fp, dg, dx, dxp, dfp):
    """Flat arrays: the tangents of the three adjoints of ``np.interp`` (``x``'s, ``xp``'s
    and ``fp``'s, as ``_interp_x_vjp`` and ``_interp_table_vjp`` give them) along ``dg``,
    ``dx``, ``dxp``, ``dfp``. Inside an interval they are products of ``g`` with the
    weights ``1 - t``, ``t`` and the slope ``s``, all smooth there:
    ``dt = (dx - (1 - t) dxp[j] - t dxp[j+1]) / h``, ``ds = (dfp[j+1] - dfp[j] - s (dxp[j+1]
    - dxp[j])) / h``. Outside the knots, and on an interval of zero width, only ``fp``'s
    adjoint is not zero, and it is linear in ``g``."""
    n = xp.size
    tx = np.zeros(x.size)
    txp = np.zeros(n)
    tfp = np.zeros(n)
    for k in range(x.size):
        j, t, inside = _interval(x[k], xp)
        h = xp[j + 1] - xp[j] if inside else 0.0
        if h == 0.0:
            tfp[j] += dg[k]
            continue
        s = (fp[j + 1] - fp[j]) / h
        dt = (dx[k] - (1.0 - t) * dxp[j] - t * dxp[j + 1]) / h
        ds = (dfp[j + 1] - dfp[j] - s * (dxp[j + 1] - dxp[j])) / h
        tx[k] = dg[k] * s + g[k] * ds
        tfp[j] += dg[k] * (1.0 - t) - g[k] * dt
        tfp[j + 1] += dg[k] * t + g[k] * dt
        txp[j] -= (dg[k] * s + g[k] * ds) * (1.0 - t) - g[k] * s * dt
        txp[j + 1] -= (dg[k] * s + g[k] * ds) * t + g[k] * s * dt
    return tx, txp, tfp


def _interp_adjoint_jvp(which):
    """The selector of the tangent of ``interp_vjp_<which>(g, x, xp, fp)``, shaped like
    that adjoint (a float for a scalar ``x``), from the tangents ``dg``, ``dx``, ``dxp``,
    ``dfp`` (None: no tangent)."""
    def select(g, x, xp, fp, dg, dx, dxp, dfp):
        scalar = is_scalar(x)
        k = ("x", "xp", "fp").index(which)
        if which == "x":
            shaped = "r[0]" if scalar else "r.reshape(x.shape)"
        else:
            shaped = "r.reshape(%s.shape)" % which
        src = ("def impl(g, x, xp, fp, dg, dx, dxp, dfp):\n"
               "    r = _interp_adjoint_tangents(%s, %s, xp.ravel(), fp.ravel(), %s, %s, %s,"
               " %s)[%d]\n    return %s\n" % (
                   "np.array([g])" if scalar else "np.ascontiguousarray(g).ravel()",
                   "np.array([x])" if scalar else "x.ravel()",
                   _flat_tangent("dg", g, dg, "1" if scalar else "x.size"),
                   _flat_tangent("dx", x, dx, "1" if scalar else "x.size"),
                   _flat_tangent("dxp", xp, dxp, "xp.size"),
                   _flat_tangent("dfp", fp, dfp, "fp.size"), k, shaped))
        ns = {"np": np, "_interp_adjoint_tangents": _interp_adjoint_tangents}
        return exec_source("impl", src, ns, "sequence rule")
    select.__name__ = "interp_vjp_%s_jvp" % which
    select.__qualname__ = select.__name__
    return by_type(select)


# Forward mode over the backward (hvp): the tangents of the three adjoints.
interp_vjp_x_jvp = _interp_adjoint_jvp("x")
interp_vjp_xp_jvp = _interp_adjoint_jvp("xp")
interp_vjp_fp_jvp = _interp_adjoint_jvp("fp")


_LAST_WRITES_TUPLE = """
def impl(cells, a, index):
    out = np.ascontiguousarray(cells).copy()
    size = 0
{select}
    seen = np.zeros({cells_count}, np.bool_)
    for j in range(size - 1, -1, -1):
        cell = 0
{pick}
        if seen[cell]:
            out[{rows}] = 0.0
        seen[cell] = True
    return out
"""
_PICK_CELL = """        i = sel{p}[min(j, sel{p}.size - 1)]
        cell = cell * n{p} + (i + n{p} if i < 0 else i)"""


def _last_writes_tuple(index):
    """``last_writes`` for a tuple index of integer index arrays, integers and slices:
    two positions along the index arrays write the same cells when their entries agree
    in every array (the integers and slices are the same for all)."""
    arrays, at = take_index_parts(index)
    select = "\n".join(_SELECT_BY_POSITION.format(p=p) for p in arrays)
    src = _LAST_WRITES_TUPLE.format(
        select=select, cells_count=" * ".join("n%d" % p for p in arrays),
        pick="\n".join(_PICK_CELL.format(p=p) for p in arrays),
        rows=", ".join([":"] * at + ["j"]))
    ns = {"np": np}
    return exec_source("impl", src, ns, "sequence rule")


@by_type
def last_writes(cells, a, index):
    """``a[index] = v`` with an index array (or a tuple of them with integers and slices):
    the adjoint of ``v`` is ``a``'s adjoint at the cells it was stored into (``cells``),
    zero where a later entry of the index arrays overwrote the same cells (NumPy keeps
    the last write)."""
    if isinstance(index, types.BaseTuple) and take_index_parts(index) is not None and \
            isinstance(index.types[take_index_parts(index)[0][0]].dtype, types.Integer):
        return _last_writes_tuple(index)
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
