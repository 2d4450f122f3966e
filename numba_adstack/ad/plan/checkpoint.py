"""Checkpointed loops: a top-level time loop whose history is kept a step at a time.

A loop's carried state is what one iteration hands the next: its header phis (scalars,
arrays the loop rebinds) and the memory of the arrays made before it that it writes in
place. Knowing that state, the backward need not keep the history of every iteration:
it stores the state at a few *snapshots* and, in the sweep, runs segments again from the
nearest one, keeping the history of one segment at a time (:mod:`..checkpoint_schedule`
chooses where; :mod:`..emit.checkpoint` emits it).

A loop qualifies when it is at the top level: a ``for`` loop over a range (or a 1-d array)
left only when its range is exhausted (its count known when it starts: the binomial
schedule), or a ``while`` loop or a loop left by ``break`` (*online*: its count is known
only at its end, see :func:`..checkpoint_schedule.online_plan`); neither fused nor run again by the sweep (those
keep no history of their iterations already) nor parallel, and keeps something on a stack
in each iteration. Its state must be restorable: scalar and array phis, arrays written
in place that were made before the loop. A loop writing into the memory of an array it
carries (the array given on entry may be one made before it) is left as it is.
"""
from dataclasses import dataclass

from numba.core import types

from ..checkpoint_loop import mark_of
from ..typeinfo import stack_dtype


@dataclass(frozen=True)
class Carried:
    """The state a checkpointed loop carries from one iteration to the next."""
    scalars: tuple          # ((phi name, NumPy dtype source), ...)
    arrays: tuple           # array phis: restored by rebinding to a copy
    in_place: tuple         # arrays made before the loop that it writes into
    scalar_bytes: int       # bytes the loop keeps per iteration on scalar stacks
    list_values: int        # arrays it keeps per iteration on list stacks
    line: int = None        # the loop's first line, for inspect_adjoint and messages
    online: bool = False    # its trip count is unknown when it starts
    marked: bool = False    # marked numba_adstack.checkpoint: checkpointed, never guarded
    slots: int = None       # its snapshot count (None: the function's)
    budget: int = None      # its memory budget in bytes, -1 for none (None: the function's)


def carried_state(facts, lp):
    """:class:`Carried` of ``lp``'s state (without its history), or a reason it has none
    that can be restored (a string)."""
    scalars, arrays = [], []
    for tgt, _ in facts.block_phis[lp.header]:
        name, t = tgt.name, facts.ty(tgt.name)
        if name in facts.iter_alias or isinstance(t, (types.RangeIteratorType,
                                                      types.SimpleIteratorType)):
            continue
        if isinstance(t, types.Array):
            arrays.append(name)
        elif stack_dtype(t) is not None:
            scalars.append((name, stack_dtype(t)))
        else:
            return "it carries %r of type %s" % (name.split(".")[0], t)
    in_place = set()
    outside = set(facts.fir.blocks) - set(lp.blocks)
    for m in facts.written_members(skip=outside):
        root = facts.array_root(m)
        label = facts.def_label(root)
        if root in facts.phis and facts.phis[root] == lp.header:
            return "it writes into the array %r it carries" % root.split(".")[0]
        if label is None or label not in lp.blocks:
            in_place.add(root)
    return Carried(tuple(scalars), tuple(arrays), tuple(sorted(in_place)), 0, 0,
                   _line(facts, lp))


def _line(facts, lp):
    loc = getattr(facts.fir.blocks[lp.header], "loc", None)
    return getattr(loc, "line", None)


def choose_checkpointed(facts, options, fused, replayed, parallel, value_stacks, stacks,
                        site_of):
    """``{loop: Carried}``: the loops the backward checkpoints (``checkpoint="revolve"``)
    or guards (``"auto"``: past the memory budget the call is made again with
    checkpointing). Empty with ``checkpoint="off"`` and on targets without it."""
    mode = getattr(options, "checkpoint", "off")
    if mode == "off" or not getattr(facts.target, "checkpoints", False):
        return {}
    out = {}
    for lp in facts.s.loops:
        mark = mark_of(facts, lp)
        if lp in fused or lp in replayed:
            continue            # reversed an iteration at a time: no history to save
        if lp.depth != 1 or lp in parallel or (lp.range is not None and lp.range.parallel):
            if mark:
                _refuse_mark(facts, lp, "it is inside another loop" if lp.depth != 1
                             else "it runs in parallel")
            continue
        online = not facts.counted(lp)
        if not online and (lp.range is None or len(lp.latches) != 1):
            if mark:
                _refuse_mark(facts, lp, "it continues to its header from several places")
            continue
        got = carried_state(facts, lp)
        if isinstance(got, str):
            if mark:
                _refuse_mark(facts, lp, got)
            continue
        if online:
            scalar_bytes, list_values = _kept_per_iteration(facts, lp, value_stacks,
                                                            site_of)
        else:
            scalar_bytes, list_values = _history_per_iteration(facts, lp, value_stacks,
                                                               stacks, site_of)
        if not scalar_bytes and not list_values:
            continue            # it keeps nothing: nothing to save
        slots = budget = None
        if mark:
            slots = mark[1] or options.snapshots
            budget = options.memory_budget
            if budget is None:
                budget = -1 if slots else _default_budget()
        out[lp] = Carried(got.scalars, got.arrays, got.in_place, scalar_bytes,
                          list_values, got.line, online, bool(mark), slots, budget)
    return out


def _default_budget():
    from ... import config
    return config.default_memory_budget()


def _refuse_mark(facts, lp, why):
    facts.error("the loop marked numba_adstack.checkpoint cannot be checkpointed: %s "
                "(take the marker off to keep its history)" % why,
                getattr(facts.fir.blocks[lp.header], "loc", None))


def _kept_per_iteration(facts, lp, value_stacks, site_of):
    """A loop of unknown trip count (no reserves): bytes its values keep per iteration on
    scalar stacks, and arrays on list stacks, counting each site in its body once (a
    site in a nested loop of run-time length counts once too: an estimate)."""
    scalar, arrays = 0, 0
    for name, spec in value_stacks.items():
        label = facts.def_label(site_of(name))
        if label is None or label not in lp.blocks:
            continue
        if spec.storage == "list":
            arrays += 1
        else:
            scalar += _ENTRY_BYTES.get(spec.dtype, 8)
    return scalar, arrays


_ENTRY_BYTES = {"np.float64": 8, "np.int64": 8, "np.float32": 4, "np.int32": 4,
                "np.bool_": 1}


def _history_per_iteration(facts, lp, value_stacks, stacks, site_of):
    """Bytes kept per iteration of ``lp`` on scalar stacks (what its reserves make room
    for), and the number of arrays kept per iteration on list stacks."""
    scalar = 0
    for st, spec in stacks.items():
        for header, per in spec.reserves:
            if header == lp.header:
                scalar += per * _ENTRY_BYTES.get(spec.dtype, 8)
    arrays = 0
    for name, spec in value_stacks.items():
        if spec.storage != "list":
            continue
        label = facts.def_label(site_of(name))
        if label is not None and label in lp.blocks:
            arrays += 1
    return scalar, arrays


def loop_budget(plan, car):
    """The memory budget a checkpointed loop is emitted with (bytes; -1: none)."""
    return plan.memory_budget if car.budget is None else car.budget


def loop_slots(plan, car):
    """Its snapshot count (None: from the budget)."""
    return car.slots if car.marked else plan.checkpoint_slots


def checkpoint_note(plan):
    """Comment lines stating how each checkpointed loop is kept (for inspect_adjoint)."""
    if not plan.checkpointed or plan.checkpoint_mode == "off":
        return ""
    out = []
    for lp, car in sorted(plan.checkpointed.items(), key=lambda kv: kv[0].header):
        budget, slots = loop_budget(plan, car), loop_slots(plan, car)
        at = "" if car.line is None else " at line %d" % car.line
        kept = "%d bytes on scalar stacks and %d arrays per iteration" % (
            car.scalar_bytes, car.list_values)
        state = ", ".join([n.split(".")[0] for n, _ in car.scalars]
                          + [n.split(".")[0] for n in car.arrays + car.in_place])
        if plan.checkpoint_mode == "auto" and not car.marked:
            out.append("# loop%s: keeps its history (%s) while n times that is under the "
                       "memory budget of %d bytes; checkpointed past it" % (at, kept, budget))
            continue
        why = " (marked numba_adstack.checkpoint)" if car.marked else ""
        if car.online and plan.checkpoint_mode == "fit" and not car.marked:
            out.append("# loop%s: keeps its history (%s) while n times that is under the "
                       "memory budget of %d bytes; past it, drops it and goes on by the "
                       "online schedule (state: %s)" % (at, kept, budget, state))
            continue
        if car.online:
            out.append("# loop%s: checkpointed%s, online schedule (its trip count is known "
                       "at its end): state stored every k iterations, k doubled when half of "
                       "the %s snapshots are full, segments reversed by the binomial "
                       "schedule; state: %s; history kept: %s of one segment (memory "
                       "budget %d bytes)" % (at, why, slots or "budget's", state, kept,
                                             budget))
            continue
        how = ("%d snapshots, segments of one iteration" % slots if slots and budget < 0
               else "%s snapshots, segments of up to half the memory budget of %d bytes"
               % (slots or "as many as half", budget))
        out.append("# loop%s: checkpointed%s, binomial (revolve) schedule: %s; state: %s; "
                   "history kept: %s of one segment; projected peak: the snapshots plus "
                   "one segment's history" % (at, why, how, state, kept))
    return "\n".join(out) + "\n"
