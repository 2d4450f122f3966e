"""Shape reads: arrays the sweep reads only for their shape keep their shape, not their values.

The adjoint of an element-wise operation goes to each operand summed over the axes it was
broadcast along: ``sum_to(g, x)`` reads ``x`` only for its shape, as ``ensure(a, x)`` and
``acc(a, c, x)`` do (the adjoint made or accumulated with ``x``'s shape). A temporary of
a loop body (``a + b`` in ``a + b + c``) is read by the sweep for nothing else, yet keeping
it on a list stack keeps the whole array per iteration: memory, and a fresh allocation
every iteration. Its shape is enough: the replay keeps its extents, one integer each, on
an integer stack (``x.shape.0``, ``x.shape.1``...), and the sweep passes them as the tuple
those helpers also take (rules/vjp_core.py, ad/runtime). The same holds for a rule
template's operand read only as the second argument of ``sum_to``, ``unreduce`` or
``reduced_view`` (``np.sum``'s rule: :func:`..rules.template.shape_only`).

Whether an operand has its result's shape cannot be known statically in general (one of
two arrays of run-time shapes may broadcast), so the shape is kept rather than assumed.
The reads of the backward's IR tell which are for the shape
(:meth:`..emit.adjoints.Adjoints.ref_shape`, :mod:`..emit.reads`);
an array also read for its values is kept whole, as before.
"""
from numba.core import ir, types

from ..typeinfo import is_kept_array


#: Definitions the replay writes as loop machinery (``for row in a``), not as assignments.
_LOOP_MACHINERY = ("phi", "getiter", "iternext", "pair_first", "pair_second")


def choose_kept_shapes(facts, recompute, reads, types_of, added_types):
    """``{array name: names of its kept extents}`` for the arrays the sweep would read
    from a stack only for their shape; the extents' types go into ``added_types``."""
    out = {}
    for x in sorted(reads.for_shape - reads.for_values):
        extents = x in reads.needed and extents_of(facts, recompute, x, types_of(x))
        if extents:
            added_types.update(dict.fromkeys(extents, types.intp))
            out[x] = extents
    return out


def extents_of(facts, recompute, x, t):
    """The names of the extents the plan may keep for the array ``x`` of type ``t``, read
    for its shape (:func:`choose_kept_shapes`), or None where it keeps no extents of it."""
    if not is_kept_array(t) or t.ndim == 0 or x in facts.phis \
            or not recompute.kept_on_stack(x):
        return None
    e = facts.def_expr(x)
    if not isinstance(e, ir.Expr) or e.op in _LOOP_MACHINERY or x in facts.iter_alias:
        return None         # (the replay assigns the extents after an assignment of x)
    return tuple("%s.shape.%d" % (x, k) for k in range(t.ndim))
