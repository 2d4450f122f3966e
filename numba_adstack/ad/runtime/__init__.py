"""Helpers the generated backward calls: accumulating array adjoints.

An array computed by the function (``z = x * y``) has an adjoint array of its own. One
read once gets its adjoint assigned (see :mod:`numba_adstack.ad.plan.direct`); one read
several times accumulates contributions, starting from *no adjoint yet*: an array of the
right type and size 0, as JAX starts from a symbolic zero. The first contribution makes an
array of the value's shape; later ones add into it in place. Adjoint arrays made here are
owned by the variable that holds them: nothing else refers to them, so adding into them
in place never changes another adjoint.

``RUNTIME`` maps the names the generated code uses to these functions.
"""
import numpy as np
from numba import njit, types
from numba.extending import overload


def unbroadcast(c, like):
    """``c`` summed back to the shape of ``like`` (undoing NumPy broadcasting): ``c``
    itself when the shapes already match, a float when ``like`` is a float."""
    raise NotImplementedError


@overload(unbroadcast)
def _ov_unbroadcast(c, like):
    if isinstance(like, types.Number):
        if isinstance(c, types.Array):
            return lambda c, like: np.sum(c)
        return lambda c, like: c
    if not isinstance(like, types.Array):
        return None
    if isinstance(c, types.Number):
        return lambda c, like: np.full(like.shape, c, like.dtype)
    if c.ndim == like.ndim:
        def impl(c, like):
            if c.shape == like.shape:
                return c
            return _reduce_to(c, like)
        return impl
    return lambda c, like: _reduce_to(c, like)


@njit(cache=False)
def _reduce_to(c, like):
    out = np.zeros(like.shape, like.dtype)
    lead = c.ndim - like.ndim
    flat_out = out.reshape(out.size)
    cshape = c.shape
    lshape = like.shape
    cc = np.ascontiguousarray(c).reshape(c.size)
    for k in range(c.size):
        # c's multi-index from k, then the index into like (size-1 dims collapse)
        rem, pos, stride = k, 0, 1
        for d in range(c.ndim - 1, -1, -1):
            i = rem % cshape[d]
            rem //= cshape[d]
            if d >= lead:
                ld = d - lead
                if lshape[ld] != 1:
                    pos += i * stride
                stride *= lshape[ld]
        flat_out[pos] += cc[k]
    return out


def acc(a, c, like):
    """``a + c`` with the shape of ``like``, where ``a`` of another shape (size 0) means
    zero; adds into ``a`` in place when it already is an adjoint array."""
    raise NotImplementedError


@overload(acc)
def _ov_acc(a, c, like):
    def impl(a, c, like):
        if a.shape != like.shape:
            out = np.zeros(like.shape, like.dtype)
            out += c
            return out
        a += c
        return a
    return impl


def ensure(a, like):
    """``a``, or a zero array of the shape of ``like`` when ``a`` has none yet (size 0)."""
    raise NotImplementedError


@overload(ensure)
def _ov_ensure(a, like):
    def impl(a, like):
        if a.shape != like.shape:
            return np.zeros(like.shape, like.dtype)
        return a
    return impl


def fill_as(c, like):
    """An array of the shape of ``like`` from a contribution: a float fills it, an array
    is summed back to it (see :func:`unbroadcast`)."""
    raise NotImplementedError


@overload(fill_as)
def _ov_fill_as(c, like):
    if isinstance(c, types.Number):
        return lambda c, like: np.full(like.shape, c, like.dtype)
    return lambda c, like: unbroadcast(c, like)


RUNTIME = {"unbroadcast": unbroadcast, "acc": acc, "ensure": ensure, "fill_as": fill_as}
#: Helpers with no effect on their arguments (the generated code may move their calls).
PURE = {"unbroadcast", "fill_as"}
