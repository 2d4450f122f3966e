"""Adjoint cells summed in a local: the reverse of an element read at an index that does
not change while a loop runs.

QuantEcon's Gini coefficient reads ``y[i]`` in every iteration of its inner loop::

    for j in range(n):
        acc += abs(y[i] - y[j])

Reversing the read adds into ``y_bar[i]`` in every iteration: a load and a store of the same
element per pair, a chain that LLVM cannot take apart since ``y_bar[j]`` may be the same
element. When nothing in the loop touches ``y``'s adjoint otherwise, the contributions are
summed in a local instead, set to ``-0.0`` before the reverse of the loop, and added into
``y_bar[i]`` after it (when it is not zero: a read that never ran adds nothing, and its
index may not be one). The terms are the same; only the order of the additions changes
(``y_bar[j]`` of ``j == i`` is added before the sum, not among its terms).

The read ``v = a[idx]`` qualifies for the outermost loop ``lp`` around it such that:

* ``idx`` (a variable, or a constant) and ``a`` are defined outside ``lp``: the cell is
  the same in every iteration, and both are defined where the sum is added;
* inside ``lp`` (its inner loops too), every use of an array of ``a``'s root or buffer
  class is a read of one float element, ``len`` or ``.shape``/``.size``/``.ndim``: no
  store (whose reverse reads and clears the cell), no view, no call, no in-place operator;
* ``lp`` is not a ``prange`` loop (its iterations run in other helpers and threads) nor a
  checkpointed loop (reversed in segments), and ``a``'s adjoint is neither assigned
  (:mod:`.assigned`) nor given by element seeds (:mod:`.read_seeds`).

On a target whose shared adjoints are added atomically (kernels), a read the target sums
privately (:meth:`~numba_adstack.ad.emit.target.Target.accumulates_privately`: a constant index
into an argument the kernel never writes) is summed over the whole backward instead, and
added atomically once at its end; a loop's sum is added atomically after the loop.
"""
from numba.core import ir, types

from ..typeinfo import is_float

_SHAPE_ATTRS = ("shape", "size", "ndim")


def cell_sums(facts, activity, excluded_roots=(), checkpointed=()):
    """``{name of an element read: the loop over which its adjoint is summed in a local, or
    None for the whole backward}``; ``excluded_roots``: arrays whose adjoints the plan
    gives otherwise (assigned, element seeds)."""
    out = {}
    target = facts.target
    for name, (label, stmt) in sorted(facts.defs.items()):
        e = stmt.value
        if name not in activity.useful or not is_float(facts.ty(name)) \
                or not _element_read(facts, e) or name in facts.inplace_loads \
                or facts.array_root(e.value.name) in excluded_roots:
            continue
        if target.needs_atomic(facts, e) and target.accumulates_privately(facts, e):
            out[name] = None
            continue
        best = None
        for lp in facts.s.enclosing(label):
            if not _summable_over(facts, e, lp, checkpointed):
                break
            best = lp
        if best is not None:
            out[name] = best
    return out


def _element_read(facts, e):
    """Is ``e`` a read of one element of an array, at a basic index?"""
    if not (isinstance(e, ir.Expr) and e.op in ("getitem", "static_getitem")
            and isinstance(facts.ty(e.value), types.Array)):
        return False
    return not facts._advanced_index(e)


def _summable_over(facts, e, lp, checkpointed):
    if lp in checkpointed or (lp.range is not None and lp.range.parallel):
        return False
    idx = e.index_var if e.op == "static_getitem" else e.index
    if idx is None:
        if e.op != "static_getitem":
            return False
    elif not _outside(facts, idx.name, lp):
        return False
    if not _outside(facts, e.value.name, lp):
        return False
    return _only_element_reads(facts, lp, e.value.name)


def _outside(facts, name, lp):
    """Is ``name`` defined (once) outside ``lp``, or static?"""
    if facts.static_form(name) is not None:
        return True
    label = facts.def_label(name)
    return label is not None and label not in lp.blocks


def _only_element_reads(facts, lp, array):
    """Is every use, inside ``lp``, of an array sharing ``array``'s root or memory a read
    of one float element, its length or its shape?"""
    root = facts.array_root(array)
    cls = facts.buffer_class.get(root, root)

    def related(v):
        return isinstance(facts.typemap.get(v), types.Array) and (
            facts.array_root(v) == root or facts.buffer_class.get(v, v) == cls)
    for b in lp.blocks:
        for stmt in facts.fir.blocks[b].body:
            if isinstance(stmt, ir.Del):
                continue
            used = [v.name for v in stmt.list_vars() if related(v.name)]
            if used and not _harmless_use(facts, stmt):
                return False
    return True


def _harmless_use(facts, stmt):
    if not isinstance(stmt, ir.Assign) or isinstance(facts.typemap.get(stmt.target.name),
                                                     types.Array):
        return False
    e = stmt.value
    if not isinstance(e, ir.Expr):
        return False
    if e.op in ("getitem", "static_getitem"):
        return _element_read(facts, e) and not isinstance(facts.ty(stmt.target), types.Array)
    if e.op == "getattr":
        return e.attr in _SHAPE_ATTRS
    if e.op == "call":
        return len(e.args) == 1 and not e.kws and facts.resolve_global(e.func) is len
    return False
