"""Argument adjoints assigned by the first loop the sweep reverses that reads them.

``s += a[i] - a[i - w]`` for ``i`` in ``range(w, n)`` (a moving sum): reversing the loop,
the sweep adds into ``a_bar[i]`` and ``a_bar[i - w]``. It counts ``i`` down, so element
``e`` is touched at offset ``-w`` in iteration ``e + w``, and at offset ``0`` in iteration
``e``, which comes later in the sweep when ``w > 0``. When nothing touched ``a_bar``
before this loop's reverse, the contribution at the smallest offset is then each
element's first one, and can be assigned: ``a_bar`` is made with ``np.empty_like``, the
elements that offset does not reach are set to zero just before the loop's reverse, and
there is no pass zeroing it all first, nor a read of the element for that add.

This holds for a 1-d float argument ``x`` when:

* it is used only by element reads, ``len``, ``.shape`` and arrays made like it (no
  store, view or other call);
* one top-level counted loop ``L`` over ``range(start, stop)`` (step 1, no branch in its
  body, reversed by the sweep's count-down: not fused, run again, skipped, checkpointed
  nor a ``prange``) reads it, each read at ``i + c`` (``i`` its index, ``c`` a sum of
  integers and values defined once outside loops); every other read runs before ``L``
  (none reachable from it) and is reversed by the sweep (in no loop reversed in the
  replay), and ``L`` runs on every path to the return;
* one offset ``c*`` is below every other (their differences are positive) and
  ``start + c*`` is not negative (so no read counts from the end): proved, or checked
  where the sweep reaches ``L``, which then reverses it twice in the text, assigning
  when the checks hold and adding into a zeroed ``x_bar`` otherwise
  (:mod:`..emit.loop_versions`).

The last read at ``c*`` in the body is reversed first in its iteration: its
contribution is assigned, the others added.
"""
from dataclasses import dataclass

from numba.core import ir, types

from ..facts.structure import dominates, reachable
from ..typeinfo import is_float_array
from .assigned import covers_every_element
from .read_seeds import constant, linear, minus, plus, uses_of_array


@dataclass(frozen=True)
class SweepAssigned:
    loop: object            # the loop whose reverse assigns the elements
    read: str               # the read whose contribution is assigned
    first: tuple            # linear form of the first element assigned: start + c*
    stop: tuple             # one past the last: stop + c*
    checks: tuple           # (form, ">" or ">=") that must hold against 0, not proved
    every: bool = False     # the loop assigns every element (nothing to zero)


def sweep_assigned(facts, activity, fused, replayed, skippable, checkpointed, taken):
    """``{argument: SweepAssigned}``; ``fused``, ``replayed``, ``skippable``: the plan's
    loops; ``checkpointed``: those reversed in segments (not only guarded); ``taken``:
    arrays given their adjoint otherwise."""
    if not facts.target.fuses_loops:
        return {}
    out = {}
    for root in facts.arg_vars:
        t = facts.ty(root)
        if root in taken or not is_float_array(t) or t.ndim != 1:
            continue
        aliases, stores, reads = uses_of_array(facts, root, like=True)
        if aliases is None or stores or not any(
                r.target.name in activity.useful for r in reads):
            continue
        got = _assigned_by(facts, activity, root, reads, fused, replayed, skippable,
                           checkpointed)
        if got is not None:
            out[root] = got
    return out


def _assigned_by(facts, activity, root, reads, fused, replayed, skippable, checkpointed):
    label_of = {id(r): facts.def_label(r.target.name) for r in reads}
    last = [lp for lp in {_top_loop(facts, label_of[id(r)]) for r in reads}
            if lp is not None and not _reaches_reads(facts, lp, reads, label_of)]
    if len(last) != 1:
        return None
    lp = last[0]
    if not _plain_counted(facts, lp) or lp in fused or lp in skippable \
            or lp in checkpointed or not _on_every_path(facts, lp):
        return None
    for r in reads:             # (the others are reversed after lp, by the sweep)
        if label_of[id(r)] not in lp.blocks and any(
                other in fused and other not in replayed
                for other in facts.s.enclosing(label_of[id(r)])):
            return None
    offsets = []                # (offset form, read), in body order
    for r in sorted((r for r in reads if label_of[id(r)] in lp.blocks),
                    key=lambda r: (label_of[id(r)],
                                   facts.fir.blocks[label_of[id(r)]].body.index(r))):
        form = _index_offset(facts, lp, r)
        if form is None:
            return None
        offsets.append((form, r))
    chosen = _smallest(list(dict.fromkeys(_key(f) for f, _ in offsets)))
    if chosen is None:
        return None
    low, checks = chosen
    at_low = [r for f, r in offsets if _key(f) == low and r.target.name in activity.useful]
    if not at_low:
        return None
    low = _form(low)
    rl = lp.range
    start = linear(facts, rl.args[0].name, 0) if len(rl.args) == 2 else ({}, 0)
    stop = linear(facts, rl.args[-1].name, 0)
    if start is None or stop is None:
        return None
    first = plus(start, low)
    known = constant(first)
    if known is not None and known < 0:
        return None
    if known is None:
        checks = checks + ((first, ">="),)
    every = low == ({}, 0) and covers_every_element(facts, lp, root)
    return SweepAssigned(lp, at_low[-1].target.name, first, plus(stop, low), checks, every)


def _top_loop(facts, label):
    loops = facts.s.enclosing(label)
    return loops[-1] if loops else None


def _reaches_reads(facts, lp, reads, label_of):
    """Is a read outside ``lp`` reachable from its header (run after it)?"""
    seen = reachable(facts.fir.blocks, [lp.header])
    return any(label_of[id(r)] in seen and label_of[id(r)] not in lp.blocks for r in reads)


def _plain_counted(facts, lp):
    """A top-level serial loop over ``range(stop)`` or ``range(start, stop)`` left only
    when exhausted, with no branch in its body (every read runs in every iteration)."""
    rl = lp.range
    if lp.depth != 1 or rl is None or rl.array is not None or rl.parallel \
            or rl.first is None or len(rl.args) not in (1, 2) or not facts.counted(lp):
        return False
    return all(isinstance(facts.fir.blocks[b].terminator, ir.Jump)
               for b in lp.blocks if b != lp.header and b != rl.block)


def _on_every_path(facts, lp):
    """Does ``lp`` run on every path to a return (so that its reverse always runs)?"""
    top = facts.s.regions[None]
    return all(dominates(top, lp, top.node_of(b)) for b in facts.return_blocks)


def _index_offset(facts, lp, read):
    """``c`` of a read ``x[i + c]`` (``i`` the index of ``lp``), or None."""
    idx = read.value.index
    if not isinstance(facts.ty(idx.name), types.Integer):
        return None
    form = linear(facts, idx.name, 0)
    me = ("i", lp.header)
    if form is None or form[0].get(me) != 1 \
            or any(isinstance(b, tuple) for b in form[0] if b != me):
        return None
    return ({b: k for b, k in form[0].items() if b != me}, form[1])


def _key(form):
    return (tuple(sorted(form[0].items())), form[1])


def _form(key):
    return (dict(key[0]), key[1])


def _smallest(keys):
    """``(offset, checks)``: the offset below every other, with the differences not
    proved positive as checks; preferring fewer checks, then differences with no
    negative coefficient (offsets in lengths and windows, which are rarely negative)."""
    best = None
    for k in keys:
        checks, likely = [], True
        for other in keys:
            if other == k:
                continue
            d = minus(_form(other), _form(k))
            known = constant(d)
            if known is not None and known <= 0:
                break
            if known is None:
                checks.append((d, ">"))
                likely = likely and d[1] >= 0 and all(v >= 0 for v in d[0].values())
        else:
            rank = (len(checks), not likely)
            if best is None or rank < best[0]:
                best = (rank, k, tuple(checks))
    return None if best is None else (best[1], best[2])
