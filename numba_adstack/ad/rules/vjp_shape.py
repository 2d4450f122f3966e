"""Adjoints of shape functions: transposes, concatenation, stacking.

``concatenate_vjp`` and ``stack_vjp`` return a tuple: one contribution per array of the
tuple the primal was given, in order.
Reshapes (``reshape``, ``ravel``, ``flatten``, ``np.atleast_*d``, ``np.expand_dims``) need no
helper: their rule reshapes ``g`` to the operand's shape.
"""
import numpy as np
from numba import njit, types
from numba.core.errors import TypingError

from .vjp_core import by_type, internal, is_none, norm_axis, split_at


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
    exec("def permuted(g, a, axes=None):\n"
         "    return np.ascontiguousarray(np.transpose(g, (%s,)))\n" % inverse, ns)
    return ns["permuted"]


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


def _per_array(arrays, name, part, concat):
    """An implementation unrolled over the tuple ``arrays`` at compile time: ``part % i``
    is the contribution to array ``i`` (``start``: its offset along the axis, when
    ``concat``); the tuple of the parts is returned."""
    if not isinstance(arrays, types.BaseTuple) or not all(
            isinstance(t, types.Array) for t in arrays.types):
        raise TypingError("%s: a tuple of arrays is needed, not %s" % (name, arrays))
    n = len(arrays.types)
    src = ["def impl(g, arrays, axis=0):",
           "    ax = norm_axis(axis, g.ndim)",
           "    start = 0"]
    for i in range(n):
        src.append("    p%d = %s" % (i, part % {"i": i}))
        if concat:
            src.append("    start += arrays[%d].shape[ax]" % i)
    src.append("    return (%s)" % "".join("p%d, " % i for i in range(n)))
    ns = {"np": np, "norm_axis": norm_axis, "_slab": _slab, "_slice": _slice}
    exec("\n".join(src), ns)
    return ns["impl"]


@by_type
def concatenate_vjp(g, arrays, axis=0):
    """``y = np.concatenate(arrays, axis)``: the tuple of the slabs of ``g`` along ``axis``
    that each array of ``arrays`` went to."""
    return _per_array(arrays, "concatenate_vjp",
                      "_slab(g, start, start + arrays[%(i)d].shape[ax], ax, "
                      "arrays[%(i)d].shape)", True)


@by_type
def stack_vjp(g, arrays, axis=0):
    """``y = np.stack(arrays, axis)``: the tuple of ``g``'s slices at 0, 1, ... along
    ``axis``."""
    return _per_array(arrays, "stack_vjp", "_slice(g, %(i)d, ax, arrays[%(i)d].shape)",
                      False)
