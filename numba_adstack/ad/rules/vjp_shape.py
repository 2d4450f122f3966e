"""Adjoints of shape functions: transposes, concatenation, stacking, sorting.

``concatenate_vjp``, ``stack_vjp``, ``hstack_vjp``, ``vstack_vjp`` and ``column_stack_vjp``
return a tuple: one contribution per array of the tuple the primal was given, in order.
Reshapes (``reshape``, ``ravel``, ``flatten``, ``np.atleast_*d``, ``np.expand_dims``) need no
helper: their rule reshapes ``g`` to the operand's shape.
"""
import numpy as np
from numba import njit, types
from numba.core.errors import TypingError
from numba.np.numpy_support import as_dtype

from .vjp_core import by_type, internal, is_none, norm_axis, split_at
from ..generated_source import exec_source


@njit(inline="always")
def _position(axes, k, n):
    """Where axis ``k`` went in the permutation ``axes`` of ``n`` axes."""
    for i in range(n):
        if axes[i] == k or axes[i] == k - n:
            return i
    raise ValueError("axes is not a permutation")


@by_type
def transpose_vjp(g, a, axes=None):
    """``y = np.transpose(a, axes)`` (or ``a.T``): ``g`` permuted back to ``a``'s axes,
    as a new C-contiguous array."""
    if is_none(axes):
        return lambda g, a, axes=None: np.ascontiguousarray(g.T)
    n = a.ndim
    # The inverse permutation, unrolled: a tuple of a length known at compile time.
    inverse = ", ".join("_position(axes, %d, %d)" % (k, n) for k in range(n))
    ns = {"np": np, "_position": _position}
    src = ("def permuted(g, a, axes=None):\n"
           "    return np.ascontiguousarray(np.transpose(g, (%s,)))\n" % inverse)
    return exec_source("permuted", src, ns, "shape rule")


@internal
def _slab(g, start, stop, ax, shape):
    """``g[..., start:stop, ...]`` along ``ax``, as a new C-contiguous array of
    ``shape``."""
    outer, n, inner = split_at(g.shape, ax)
    # Rows of (start - stop) * inner contiguous elements: one loop along memory each.
    src = np.ascontiguousarray(g).reshape((outer, n * inner))
    width = (stop - start) * inner
    out = np.empty((outer, width), src.dtype)
    first = start * inner
    for p in range(outer):
        row = src[p, first:first + width]
        for k in range(width):
            out[p, k] = row[k]
    return out.reshape(shape)


@internal
def _slice(g, i, ax, shape):
    """``g[..., i, ...]`` along ``ax``, as a new C-contiguous array of ``shape``."""
    return _slab(g, i, i + 1, ax, shape)


def _per_array(arrays, name, part, step=None, axis="norm_axis(axis, g.ndim)"):
    """An implementation unrolled over the tuple ``arrays`` at compile time:
    ``part(i, t)`` is the source of the contribution to array ``i`` (of type ``t``), read
    at ``start`` along the axis ``ax`` (``axis``: its source), which moves on by
    ``step(i, t)`` after each array (None: stays); the tuple of the parts is returned."""
    if not isinstance(arrays, types.BaseTuple) or not all(
            isinstance(t, types.Array) for t in arrays.types):
        raise TypingError("%s: a tuple of arrays is needed, not %s" % (name, arrays))
    src = ["def impl(g, arrays, axis=0):",
           "    ax = %s" % axis,
           "    start = 0"]
    for i, t in enumerate(arrays.types):
        src.append("    p%d = %s" % (i, part(i, t)))
        if step is not None:
            src.append("    start += %s" % step(i, t))
    src.append("    return (%s)" % "".join("p%d, " % i for i in range(len(arrays.types))))
    ns = {"np": np, "norm_axis": norm_axis, "_slab": _slab, "_slice": _slice}
    return exec_source("impl", "\n".join(src), ns, "shape rule")


def _width(dim):
    """The extent of an array along ``dim`` once stacked: 1 when it has no such
    dimension (a 1-d array becomes one row of ``vstack``, one column of
    ``column_stack``)."""
    return lambda i, t: "arrays[%d].shape[%d]" % (i, dim) if t.ndim > dim else "1"


def _slabs(name, arrays, width, axis):
    """Consecutive slabs of ``g`` along ``axis`` (source), of ``width(i, t)`` each, one
    per array, in the arrays' shapes."""
    return _per_array(arrays, name, lambda i, t: "_slab(g, start, start + %s, ax, "
                      "arrays[%d].shape)" % (width(i, t), i), width, axis)


@by_type
def hstack_vjp(g, arrays, axis=0):
    """``y = np.hstack(arrays)``: the slabs of ``g`` along its second axis (its first for
    1-d arrays), one per array."""
    if not isinstance(g, types.Array):
        raise TypingError("hstack_vjp: adjoint of type %s" % g)
    ax = 0 if g.ndim == 1 else 1
    return _slabs("hstack_vjp", arrays, _width(ax), str(ax))


@by_type
def vstack_vjp(g, arrays, axis=0):
    """``y = np.vstack(arrays)``: the slabs of ``g`` along its first axis, one per array
    (one row for a 1-d array)."""
    return _slabs("vstack_vjp", arrays, lambda i, t: "arrays[%d].shape[0]" % i
                  if t.ndim > 1 else "1", "0")


@by_type
def column_stack_vjp(g, arrays, axis=0):
    """``y = np.column_stack(arrays)``: the slabs of ``g`` along its second axis, one per
    array (one column for a 1-d array)."""
    return _slabs("column_stack_vjp", arrays, _width(1), "1")


@by_type
def concatenate_vjp(g, arrays, axis=0):
    """``y = np.concatenate(arrays, axis)``: the tuple of the slabs of ``g`` along ``axis``
    that each array of ``arrays`` went to."""
    return _slabs("concatenate_vjp", arrays, lambda i, t: "arrays[%d].shape[ax]" % i,
                  "norm_axis(axis, g.ndim)")


@by_type
def stack_vjp(g, arrays, axis=0):
    """``y = np.stack(arrays, axis)``: the tuple of ``g``'s slices at 0, 1, ... along
    ``axis``."""
    return _per_array(arrays, "stack_vjp",
                      lambda i, t: "_slice(g, %d, ax, arrays[%d].shape)" % (i, i))


@by_type
def sort_vjp(g, a):
    """``y = np.sort(a)`` (along the last axis): each element of ``g`` goes back to the
    position its value came from (a stable argsort: equal values keep their order; any
    order of equal values gives the same result, so any is an adjoint)."""
    if not isinstance(a, types.Array):
        raise TypingError("sort_vjp: operand of type %s" % a)
    dtype = np.promote_types(as_dtype(g.dtype), as_dtype(a.dtype))

    def impl(g, a):
        out = np.zeros(a.shape, dtype)
        n = a.shape[a.ndim - 1]
        if out.size == 0:
            return out
        rows = a.size // n
        src = np.ascontiguousarray(a).reshape((rows, n))
        gs = np.ascontiguousarray(g).reshape((rows, n))
        flat = out.reshape((rows, n))
        for r in range(rows):
            perm = np.argsort(src[r], kind="mergesort")
            for k in range(n):
                flat[r, perm[k]] = gs[r, k]
        return out
    return impl


@by_type
def median_vjp(g, a):
    """``y = np.median(a)`` (of all of ``a``): ``g`` to the middle element of the sorted
    values, or half of it to each of the two middle ones."""
    def impl(g, a):
        out = np.zeros(a.shape)
        flat = out.reshape(out.size)
        n = a.size
        perm = np.argsort(np.ascontiguousarray(a).reshape(n), kind="mergesort")
        if n % 2 == 1:
            flat[perm[n // 2]] = g
        else:
            flat[perm[n // 2 - 1]] += 0.5 * g
            flat[perm[n // 2]] += 0.5 * g
        return out
    return impl


@by_type
def tri_vjp(g, m, k, upper):
    """``y = np.triu(m, k)`` (``upper``) or ``np.tril(m, k)``: ``g`` with the same
    triangle kept; for a 1-d ``m`` (NumPy repeats it as rows first) summed over the
    rows."""
    if isinstance(m, types.Array) and m.ndim == 1:
        def of_vector(g, m, k, upper):
            kept = np.triu(g, k) if upper else np.tril(g, k)
            return np.sum(kept, axis=0)
        return of_vector
    return lambda g, m, k, upper: np.triu(g, k) if upper else np.tril(g, k)


def _append_impl(g, arr, values, of_values):
    """The part of ``g`` that came from ``arr`` (the first ``arr.size`` elements) or,
    with ``of_values``, from ``values``, in that operand's shape (a float for a
    scalar)."""
    operand = values if of_values else arr
    if isinstance(arr, types.Array):
        first = "arr.size"
    elif isinstance(arr, types.BaseTuple) and all(isinstance(t, types.Number)
                                                 for t in arr.types) or \
            isinstance(arr, types.List) and isinstance(arr.dtype, types.Number):
        first = "len(arr)"                  # a flat list or tuple of numbers
    elif isinstance(arr, (types.List, types.BaseTuple)):
        first = "np.asarray(arr).size"
    else:
        first = "1"
    if isinstance(operand, types.Array):
        part = "g[%s:]" % first if of_values else "g[:%s]" % first
        body = "np.ascontiguousarray(%s).reshape(%s.shape)" % (
            part, "values" if of_values else "arr")
    else:
        body = "g[%s]" % (first if of_values else "0")
    ns = {"np": np}
    return exec_source("impl", "def impl(g, arr, values):\n    return %s\n" % body, ns,
                       "shape rule")


@by_type
def append_vjp_arr(g, arr, values):
    """``y = np.append(arr, values)`` (both flattened): ``arr``'s part of ``g``."""
    return _append_impl(g, arr, values, False)


@by_type
def append_vjp_values(g, arr, values):
    """``y = np.append(arr, values)``: ``values``' part of ``g``."""
    return _append_impl(g, arr, values, True)


@by_type
def sort_jvp(a, da):
    """Forward mode of ``y = np.sort(a)`` (along the last axis): the tangent ``da``
    reordered as ``a`` is (a stable argsort, as ``sort_vjp``)."""
    def impl(a, da):
        out = np.empty(a.shape, da.dtype)
        n = a.shape[a.ndim - 1]
        if out.size == 0:
            return out
        rows = a.size // n
        src = np.ascontiguousarray(a).reshape((rows, n))
        ds = np.ascontiguousarray(da).reshape((rows, n))
        flat = out.reshape((rows, n))
        for r in range(rows):
            perm = np.argsort(src[r], kind="mergesort")
            for k in range(n):
                flat[r, k] = ds[r, perm[k]]
        return out
    return impl
