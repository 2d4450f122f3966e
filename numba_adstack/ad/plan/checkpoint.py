"""Checkpointed loops: a top-level time loop whose history is kept a step at a time.

A loop's carried state is what one iteration hands the next: its header phis (scalars,
arrays the loop rebinds) and the memory of the arrays made before it that it writes in
place. Knowing that state, the backward need not keep the history of every iteration:
it stores the state at a few *snapshots* and, in the sweep, runs segments again from the
nearest one, keeping the history of one segment at a time (:mod:`.checkpoint_schedule`
chooses where; :mod:`..emit.checkpoint` emits it).

A loop qualifies when it is at the top level: a ``for`` loop over a range (or a 1-d array)
left only when its range is exhausted (its count known when it starts: the binomial
schedule), or a ``while`` loop or a loop left by ``break`` (*online*: its count is known
only at its end, see :func:`.checkpoint_schedule.online_plan`); neither fused nor run again by the sweep (those
keep no history of their iterations already) nor parallel, and keeps something on a stack
in each iteration. Its state must be restorable: scalar and array phis, arrays written
in place that were made before the loop. A loop writing into the memory of an array it
carries (the array given on entry may be one made before it) is left as it is.
"""
import warnings
from dataclasses import dataclass

from numba.core import ir, types

from ... import config
from ...errors import CheckpointIgnoredWarning
from ..capture.checkpoint_loop import mark_of
from ..generated_source.code import expr, printed_expression
from ..typeinfo import STACK_ENTRY_BYTES, stack_dtype


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
    nested: tuple = ()      # Nested: what run-time loops inside it keep per iteration of it
    slots: int = None       # its snapshot count (None: the function's)
    budget: int = None      # its memory budget in bytes, -1 for none (None: the function's)


@dataclass(frozen=True)
class Nested:
    """What a loop nested in a checkpointed loop keeps, per iteration of the checkpointed
    loop: ``scalar_bytes`` and ``list_values`` per iteration of the nested loop, times the
    lengths of the ``lengths`` range loops (the nested loop and those between), each known
    before the checkpointed loop starts; ``lengths`` is None when one is not (counted
    once: an estimate)."""
    scalar_bytes: int
    list_values: int
    lengths: tuple
    line: int


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
    for b in lp.blocks:
        for stmt in facts.fir.blocks[b].body:
            if isinstance(stmt, ir.Assign) and facts.draws_random(stmt.value):
                return "it draws random numbers, which a segment run again would draw anew"
            changed = _container_changed(facts, stmt)
            if changed is not None and facts.def_label(changed) not in lp.blocks:
                return ("it changes %r (a %s) in place, which a segment run again would "
                        "change again" % (changed.split(".")[0], facts.ty(changed)))
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


_CONTAINERS = (types.List, types.ListType, types.DictType, types.Set)


def _container_changed(facts, stmt):
    """The list, typed List, typed Dict or set ``stmt`` changes in place (a store into it,
    a call of one of its methods other than reading ones), or None."""
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem, ir.DelItem)):
        target = stmt.target.name
        return target if isinstance(facts.ty(target), _CONTAINERS) else None
    e = stmt.value if isinstance(stmt, ir.Assign) else None
    if isinstance(e, ir.Expr) and e.op == "call":
        method = facts.def_expr(e.func.name)
        if isinstance(method, ir.Expr) and method.op == "getattr" and \
                isinstance(facts.ty(method.value), _CONTAINERS) and \
                method.attr not in ("copy", "count", "index", "get", "keys", "values",
                                    "items"):
            return method.value.name
    if isinstance(e, ir.Expr) and e.op == "inplace_binop" and \
            isinstance(facts.ty(e.lhs), _CONTAINERS):
        return e.lhs.name
    return None


def _line(facts, lp):
    loc = getattr(facts.fir.blocks[lp.header], "loc", None)
    return getattr(loc, "line", None)


def choose_checkpointed(facts, options, fused, replayed, parallel, value_stacks, stacks,
                        site_of):
    """``{loop: Carried}``: the loops the backward checkpoints (``checkpoint="revolve"``)
    or guards (``"auto"``: past the memory budget the call is made again with
    checkpointing). Empty with ``checkpoint="off"`` and on targets without it."""
    mode = getattr(options, "checkpoint", "off")
    if mode == "off":
        return {}
    if not getattr(facts.target, "checkpoints", False):
        _warn_marks_ignored(facts)
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
        scalar_bytes, list_values, nested = _history(facts, lp, value_stacks, stacks,
                                                     site_of, online)
        if not scalar_bytes and not list_values and not nested:
            continue            # it keeps nothing: nothing to save
        slots = budget = None
        if mark:
            slots = mark[1] or options.snapshots
            budget = options.memory_budget
            if budget is None:
                budget = -1 if slots else _default_budget()
        out[lp] = Carried(got.scalars, got.arrays, got.in_place, scalar_bytes,
                          list_values, got.line, online, marked=bool(mark), slots=slots,
                          budget=budget, nested=nested)
    return out


def _default_budget():
    return config.default_memory_budget()


def _warn_marks_ignored(facts):
    """A target without checkpointing (kernels: each thread keeps its own history) keeps
    the history of a marked loop whole: said once per loop."""
    for lp in facts.s.loops:
        if mark_of(facts, lp):
            loc = getattr(facts.fir.blocks[lp.header], "loc", None)
            warnings.warn(CheckpointIgnoredWarning(
                "%s: numba_adstack.checkpoint on the loop at line %s has no effect on this "
                "target: the backward keeps the loop's whole history (%s)"
                % (facts.qualname, getattr(loc, "line", "?"), facts.target.history_place)))


def _refuse_mark(facts, lp, why):
    facts.error("the loop marked numba_adstack.checkpoint cannot be checkpointed: %s "
                "(take the marker off to keep its history)" % why,
                getattr(facts.fir.blocks[lp.header], "loc", None))


def _history(facts, lp, value_stacks, stacks, site_of, online):
    """What ``lp`` keeps per iteration: bytes on scalar stacks and arrays on list stacks
    in its own body, and a :class:`Nested` per loop inside it that keeps something.

    A loop's scalar bytes are what its reserves make room for, per iteration; a loop with
    none (one of unknown trip count, and ``lp`` itself when it is one) counts each value
    kept in its body once, unless a constant trip count folds it into the reserve of a
    loop around it. Arrays: the list-stack sites in its body, each once per iteration."""
    inner = [x for x in facts.s.loops if x is not lp and x.blocks <= lp.blocks]
    own = {x: [0, 0] for x in [lp] + inner}

    def innermost(label):
        return min((x for x in own if label in x.blocks), key=lambda x: len(x.blocks))

    reserved = {x: 0 for x in own}
    for spec in stacks.values():
        for header, per in spec.reserves:
            for x in own:
                if x.header == header:
                    reserved[x] += per * entry_bytes(spec.dtype)
    for name, spec in value_stacks.items():
        label = facts.def_label(site_of(name))
        if label is None or label not in lp.blocks:
            continue
        x = innermost(label)
        if spec.storage == "list":
            own[x][1] += 1
        elif not reserved[x] and not _folded(lp, x, reserved):
            own[x][0] += entry_bytes(spec.dtype)
    for x in own:
        if reserved[x] or (x is lp and not online):
            own[x][0] = reserved[x]
    nested = []
    for x in sorted(inner, key=lambda x: x.header):
        scalar, arrays = own[x]
        if scalar or arrays:
            nested.append(Nested(scalar, arrays, _lengths(facts, lp, x),
                                 _line(facts, x)))
    return own[lp][0], own[lp][1], tuple(nested)


def _chain(lp, x):
    """``x`` and the loops around it, inside ``lp``."""
    out = []
    while x is not None and x is not lp:
        out.append(x)
        x = x.parent
    return out


def _folded(lp, x, reserved):
    """Is ``x`` of constant trip count inside a loop whose reserves count its values?"""
    rl = x.range
    if rl is None or rl.trip_count() is None:
        return False
    return any(reserved[y] for y in _chain(lp, x.parent) + [lp] if y in reserved)


def _lengths(facts, lp, x):
    """``(range loop, its operands as expression trees)`` for the loops whose lengths
    multiply what ``x`` keeps per iteration of ``lp``, or None when one of them is not
    known before ``lp`` starts."""
    out = []
    for y in _chain(lp, x):
        rl = y.range
        if rl is None or not facts.counted(y):
            return None
        if rl.trip_count() is not None:
            out.append((rl, None))
            continue
        trees = [_invariant(facts, lp, v, 8) for v in
                 ([rl.array] if rl.array is not None else rl.args)]
        if any(t is None for t in trees):
            bound = _length_bound(facts, lp, rl)
            if bound is None:
                return None
            trees = [("bound", bound)]      # at most len(range(bound))
        out.append((rl, tuple(trees)))
    return tuple(out)


def _length_bound(facts, lp, rl):
    """A tree known before ``lp`` starts bounding the length of the range loop ``rl``
    whose bounds depend on the indices of loops around it (``range(i + 1, d)``,
    ``range(i)``): its stop, or the bound of the index it stops at, where its start is
    not negative; None when there is none."""
    if rl.array is not None or not rl.args or len(rl.args) > 3:
        return None
    if len(rl.args) == 3 and not _positive_constant(facts, rl.args[2]):
        return None
    start, stop = (None, rl.args[0]) if len(rl.args) == 1 else rl.args[:2]
    if start is not None and not _not_negative(facts, lp, start, 6):
        return None
    return _upper(facts, lp, stop, 6)


def _index_range(facts, lp, v, depth=6):
    """The range loop (inside ``lp``, or ``lp``) whose index ``v`` is, or None."""
    for _ in range(depth):
        for lp2 in facts.s.loops:
            rl = lp2.range
            if rl is not None and rl.array is None and rl.first == v.name and \
                    (lp2 is lp or lp2.header in lp.blocks):
                return rl
        e = facts.def_expr(v.name)
        if not isinstance(e, ir.Var):
            return None
        v = e
    return None


def _upper(facts, lp, v, depth):
    """A tree known before ``lp`` that is at least the value of ``v`` where it is
    read (an invariant, or the stop of the loop whose index ``v`` is), or None."""
    tree = _invariant(facts, lp, v, 8)
    if tree is not None or depth <= 0:
        return tree
    rl = _index_range(facts, lp, v)
    if rl is None or len(rl.args) == 3 and not _positive_constant(facts, rl.args[2]):
        return None
    return _upper(facts, lp, rl.args[0] if len(rl.args) == 1 else rl.args[1], depth - 1)


def _not_negative(facts, lp, v, depth):
    """Is ``v`` never negative: a sum or product of non-negative constants and of
    indices of loops counting up from a start that is not negative?"""
    if not hasattr(v, "name"):
        return isinstance(v, int) and v >= 0
    e = facts.def_expr(v.name)
    if isinstance(e, (ir.Const, ir.Global, ir.FreeVar)):
        return isinstance(e.value, int) and e.value >= 0
    if depth <= 0:
        return False
    rl = _index_range(facts, lp, v)
    if rl is not None:
        if len(rl.args) == 3 and not _positive_constant(facts, rl.args[2]):
            return False
        return len(rl.args) == 1 or _not_negative(facts, lp, rl.args[0], depth - 1)
    if isinstance(e, ir.Var):
        return _not_negative(facts, lp, e, depth - 1)
    if isinstance(e, ir.Expr) and e.op == "binop" and \
            getattr(e.fn, "__name__", None) in ("add", "mul"):
        return _not_negative(facts, lp, e.lhs, depth - 1) and \
            _not_negative(facts, lp, e.rhs, depth - 1)
    return False


def _positive_constant(facts, v):
    e = facts.def_expr(v.name) if hasattr(v, "name") else None
    return isinstance(e, (ir.Const, ir.Global, ir.FreeVar)) and \
        isinstance(e.value, int) and e.value > 0


_BINOPS = {"+", "-", "*", "//"}


def _invariant(facts, lp, v, depth):
    """An expression tree computing ``v`` from values defined before ``lp`` (variables,
    constants, ``+ - * //``, ``.shape``, ``.size``, constant items, ``len``), or None."""
    if not hasattr(v, "name"):
        return ("const", v)
    label = facts.def_label(v.name)
    if label is None or label not in lp.blocks:
        return ("var", v)
    e = facts.def_expr(v.name)
    if depth <= 0 or e is None:
        return None
    if isinstance(e, ir.Const) and isinstance(e.value, int):
        return ("const", e.value)
    if isinstance(e, (ir.Global, ir.FreeVar)) and isinstance(e.value, int):
        return ("const", e.value)
    if isinstance(e, ir.Var):
        return _invariant(facts, lp, e, depth - 1)
    if not isinstance(e, ir.Expr):
        return None
    if e.op == "binop" and getattr(e.fn, "__name__", None) in ("add", "sub", "mul",
                                                                "floordiv"):
        op = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//"}[e.fn.__name__]
        a, b = _invariant(facts, lp, e.lhs, depth - 1), _invariant(facts, lp, e.rhs, depth - 1)
        return None if a is None or b is None else ("binop", op, a, b)
    if e.op == "getattr" and e.attr in ("shape", "size"):
        a = _invariant(facts, lp, e.value, depth - 1)
        return None if a is None else ("attr", a, e.attr)
    if e.op == "static_getitem" and isinstance(e.index, int):
        a = _invariant(facts, lp, e.value, depth - 1)
        return None if a is None else ("item", a, e.index)
    if e.op == "call" and facts.resolve_global(e.func) is len and len(e.args) == 1:
        a = _invariant(facts, lp, e.args[0], depth - 1)
        return None if a is None else ("len", a)
    return None


#: Templates of the operations of an invariant's tree (:func:`_invariant`).
_BINOP_TEMPLATES = {"+": "({} + {})", "-": "({} - {})", "*": "({} * {})",
                    "//": "({} // {})"}
_ATTR_TEMPLATES = {"shape": "{}.shape", "size": "{}.size"}
#: ``len(range(...))`` of one, two or three operands.
_RANGE_LEN_TEMPLATES = {1: "len(range({}))", 2: "len(range({}, {}))",
                        3: "len(range({}, {}, {}))"}


def _tree_expr(tree, operand):
    """The expression tree computing an invariant's tree, its values before the
    checkpointed loop given by ``operand`` (their source, or names)."""
    kind = tree[0]
    if kind == "bound":             # (an upper bound of a length: _length_bound)
        return _tree_expr(tree[1], operand)
    if kind == "var":
        return operand(tree[1])
    if kind == "const":
        c = tree[1]
        return c if isinstance(c, (int, float)) else repr(c)
    if kind == "binop":
        return expr(_BINOP_TEMPLATES[tree[1]], _tree_expr(tree[2], operand),
                     _tree_expr(tree[3], operand))
    if kind == "attr":
        return expr(_ATTR_TEMPLATES[tree[2]], _tree_expr(tree[1], operand))
    if kind == "item":
        return expr("{}[{}]", _tree_expr(tree[1], operand), tree[2])
    return expr("len({})", _tree_expr(tree[1], operand))


def length_expr(length, operand):
    """The expression of a range loop's length (an item of :attr:`Nested.lengths`), its
    values before the checkpointed loop given by ``operand`` (their source, or names)."""
    rl, trees = length
    if trees is None:
        return rl.trip_count()
    if rl.array is not None:
        return expr("len({})", _tree_expr(trees[0], operand))
    return expr(_RANGE_LEN_TEMPLATES[len(trees)], *(_tree_expr(t, operand) for t in trees))


def length_source(length, name):
    """The text of a range loop's length in :func:`checkpoint_note` (a comment), its
    values before the checkpointed loop shown by ``name``."""
    return printed_expression(length_expr(length, name))


def entry_bytes(dtype):
    """Bytes of one entry of a stack of ``dtype`` (its NumPy dtype's source)."""
    return STACK_ENTRY_BYTES.get(dtype, 8)


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
            car.scalar_bytes, car.list_values) + "".join(_nested_note(n)
                                                         for n in car.nested)
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
        peak = ("%d copies of the state plus one iteration's history" % slots
                if slots and budget < 0 else
                "%s copies of the state plus one segment's history, within the memory "
                "budget of %d bytes" % (slots or "at most half the budget in", budget))
        out.append("# loop%s: checkpointed%s, binomial (revolve) schedule: %s; state: %s; "
                   "history kept: %s of one segment; projected peak: %s"
                   % (at, why, how, state, kept, peak))
    return "\n".join(out) + "\n"


def _nested_note(n):
    what = "%d bytes and %d arrays per iteration of the loop at line %s" % (
        n.scalar_bytes, n.list_values, n.line)
    if n.lengths is None:
        return ", plus %s, counted once (its length is not known when the loop starts: " \
            "an estimate)" % what
    name = lambda v: v.name.split(".")[0] if hasattr(v, "name") else repr(v)   # noqa
    bounded = any(trees and trees[0][0] == "bound" for _, trees in n.lengths)
    return ", plus %s times %s%s" % (what, " * ".join(length_source(rl, name)
                                                      for rl in n.lengths),
                                     " (at most: a bound of a length known inside the "
                                     "loop)" if bounded else "")
