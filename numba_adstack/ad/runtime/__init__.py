"""Helpers the generated backward calls: accumulating array adjoints.

An array computed by the function (``z = x * y``) has an adjoint array of its own. One
read once gets its adjoint assigned (see :mod:`numba_adstack.ad.plan.direct`); one read
several times accumulates contributions, starting from *no adjoint yet*: an array of the
right type and size 0, as JAX starts from a symbolic zero. The first contribution makes an
array of the value's shape; later ones add into it in place. Adjoint arrays made here are
owned by the variable that holds them: nothing else refers to them, so adding into them
in place never changes another adjoint.

``RUNTIME`` maps the names the generated code uses to these functions and to the helpers
of the array rules (``RULE_HELPERS``, rules/helpers.py).
"""
import numpy as np
from numba import njit, types
from numba.extending import overload

from ...errors import AdjointReadError
from ..rules.helpers import IN_PLACE, RULE_HELPERS
from ..rules.vjp_core import is_shape, sum_to


def acc(a, c, like):
    """``a + c`` with the shape of ``like`` (an array, or its shape), where ``a`` of
    another shape (size 0) means zero; adds into ``a`` in place when it already is an
    adjoint array."""
    raise NotImplementedError


@overload(acc)
def _ov_acc(a, c, like):
    if is_shape(like):      # the value's shape, kept instead of it (plan/shape_reads.py)
        def by_shape(a, c, like):
            if a.shape != like:
                out = np.zeros(like, a.dtype)
                out += c
                return out
            a += c
            return a
        return by_shape

    def impl(a, c, like):
        if a.shape != like.shape:
            out = np.zeros(like.shape, like.dtype)
            out += c
            return out
        a += c
        return a
    return impl


def ensure(a, like):
    """``a``, or a zero array of the shape of ``like`` (an array, or its shape) when
    ``a`` has none yet (size 0)."""
    raise NotImplementedError


@overload(ensure)
def _ov_ensure(a, like):
    if is_shape(like):
        def by_shape(a, like):
            if a.shape != like:
                return np.zeros(like, a.dtype)
            return a
        return by_shape

    def impl(a, like):
        if a.shape != like.shape:
            return np.zeros(like.shape, like.dtype)
        return a
    return impl


def fill_as(c, like):
    """An array of the shape of ``like`` from a contribution: a float fills it, an array
    is summed back to it (``sum_to``, rules/vjp_core.py)."""
    raise NotImplementedError


@overload(fill_as)
def _ov_fill_as(c, like):
    if isinstance(c, types.Number):
        return lambda c, like: np.full(like.shape, c, like.dtype)
    return lambda c, like: sum_to(c, like)


#: The helpers of the array rules (``sum_to``, ``unreduce``...; those adding into an adjoint
#: in place, ``IN_PLACE``) and the ones above.
@njit(cache=False)
def written(a, what):
    """``a``, an adjoint the backward reads; in checked mode (emit/checked.py) an
    :class:`~numba_adstack.errors.AdjointReadError` when nothing was written into it yet."""
    if a.size == 0:
        raise AdjointReadError(what)
    return a


RUNTIME = dict(RULE_HELPERS, **IN_PLACE, acc=acc, ensure=ensure, fill_as=fill_as,
               written=written)
#: Helpers with no effect on their arguments (the generated code may move their calls).
PURE = set(RULE_HELPERS) | {"fill_as"}
