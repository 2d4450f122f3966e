"""Fused loops: top-level loops whose iterations interact only through sums.

Such a loop (``s += e`` with ``e`` independent of ``s``, no stores) is reversed iteration by
iteration, right after each iteration runs, when the adjoint of its sums can be computed
before the loop (:mod:`.seeds`) and no array it reads is written after it: its stacks then
hold one iteration's history. With
``parallel=True`` a fused ``prange`` loop runs in parallel in the backward too.
"""
import operator

import numpy as np
from numba.core import ir, types

from .. import rules as R
from ..generated_source import identifier
from ..facts.containers import container_root
from ..facts.structure import reachable
from ..typeinfo import is_float, is_float_container
from .seeds import early_seed


def choose_fused(facts, activity):
    """``{loop: [(phi, members, outflow, seed), ...]}`` for the loops to fuse, one entry
    per sum the loop carries."""
    if not facts.target.fuses_loops:
        return {}
    out = {}
    for lp in sorted(facts.s.loops, key=lambda lp: lp.depth):
        if touches_list_adjoint(facts, activity, lp):
            continue
        if lp.depth == 1:
            plan = None if _reads_array_written_after(facts, lp) \
                else _fusion_plan(facts, activity, lp)
        elif lp.parent in out:
            plan = _fusion_plan(facts, activity, lp, out[lp.parent])
        else:
            continue
        if plan is not None:
            out[lp] = plan
    return out


def touches_list_adjoint(facts, activity, lp):
    """Does the loop read or change a list or Dict whose adjoint the sweep keeps
    (emit/lists.py)? Such a loop is reversed by the sweep, not an iteration at a time: the
    container's adjoint is whole only once the forward is done."""
    lists = activity.container_adjoints
    if not lists:
        return False
    def held(var):
        return is_float_container(facts.ty(var.name)) and \
            container_root(facts, var.name) in lists

    if lp.range is not None and lp.range.array is not None and held(lp.range.array):
        return True                 # for v in L
    for b in lp.blocks:
        for stmt in facts.fir.blocks[b].body:
            if any(held(v) for v in stmt.list_vars()):
                return True
            e = stmt.value if isinstance(stmt, ir.Assign) else None
            if isinstance(e, ir.Expr) and e.op == "call":
                f = facts.def_expr(e.func.name)
                if isinstance(f, ir.Expr) and f.op == "getattr" and held(f.value):
                    return True
    return False


def choose_parallel(facts, fused, parallel_option):
    """``{loop: helper name}`` for the fused ``prange`` loops (map loops too) that run in
    parallel: each iteration, its forward replay and its reverse, is a call to a helper
    function (its stacks in the helper's frame, so each thread has its own), and the sums
    and the adjoints of values from before the loop are reductions. (A map loop the sweep
    runs again runs in parallel there, and serially in the replay.)"""
    if not facts.target.parallel_loops or not parallel_option:
        return {}
    out = {}
    for lp, families in fused.items():
        rl = lp.range
        if rl is None or not rl.parallel or rl.array is not None \
                or rl.block != lp.header or len(lp.exits) != 1 \
                or lp.exits[0][0] != lp.header:
            continue
        sums = {phi for phi, _, _, _ in families}
        if any(tgt.name not in sums for tgt, _ in facts.block_phis[lp.header]):
            continue        # something else is carried from one iteration to the next
        out[lp] = "%s_iteration%d" % (identifier(facts.py_func.__name__), lp.header)
    return out


def sum_families(facts, activity, lp, seed_of):
    """The families of sums of ``lp`` when it carries nothing else and stores nothing,
    each seeded by ``seed_of(outflow)``; else None."""
    return _fusion_plan(facts, activity, lp, seed_of=seed_of)


def _fusion_plan(facts, activity, lp, parent=None, seed_of=None):
    """The families of sums of ``lp``, or None when it cannot be fused. A loop inside a
    fused loop (``parent``: its families) fuses when each of its sums belongs to one of
    the parent's: its seed is then the parent's seed."""
    if len({d for _, d in lp.exits}) != 1:
        return None
    for b in lp.blocks:
        for stmt in facts.fir.blocks[b].body:
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) \
                    or _writes_outer_array(facts, lp, stmt):
                return None
    families, in_family = [], set()
    for phi, inc in facts.block_phis[lp.header]:
        if phi.name not in activity.useful:
            continue
        fam = _accumulator_family(facts, lp, phi.name)
        if fam is None:
            return None
        members, outflow = fam
        latch_in = [inc[b].name for b in lp.latches if isinstance(inc.get(b), ir.Var)]
        if not all(v in members for v in latch_in):
            return None
        if seed_of is not None:
            seed = seed_of(outflow)
        elif parent is None:
            seed = early_seed(facts, lp, outflow)
        else:
            seed = _parent_seed(parent, phi.name)
        if seed is None:
            return None
        families.append((phi.name, members, outflow, seed))
        in_family |= members
    # Every other useful float made in the loop stays in the loop.
    for b in lp.blocks:
        for stmt in facts.fir.blocks[b].body:
            if not isinstance(stmt, ir.Assign):
                continue
            name = stmt.target.name
            if name in activity.useful and name not in in_family:
                for label, _ in facts.uses.get(name, ()):
                    if label not in lp.blocks:
                        return None
    return families


def _reads_array_written_after(facts, lp):
    """Does the top-level loop ``lp`` read an array that a block after it writes? Its
    reverse, right after it runs, would add into that array's adjoint before the sweep
    reverses the later store, which takes the adjoint of the element it stores from there:
    the contribution of the old value would go to the new one."""
    after = reachable(facts.fir.blocks, [dst for _, dst in lp.exits])
    written = facts.written_members(skip=set(facts.fir.blocks) - after)
    if not written:
        return False
    classes = {facts.buffer_class.get(m, m) for m in written}
    roots = {facts.array_root(m) for m in written}
    for b in lp.blocks:
        for stmt in facts.fir.blocks[b].body:
            for v in stmt.list_vars():
                if isinstance(facts.typemap.get(v.name), types.Array) and (
                        facts.buffer_class.get(v.name, v.name) in classes
                        or facts.array_root(v.name) in roots):
                    return True
    return False


def _writes_outer_array(facts, lp, stmt):
    """Does ``stmt`` write, in place, into an array made before the loop (``v += e`` on a
    view ``v = b[i]``, as a helper given the row does)?"""
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)):
        return False
    e = stmt.value
    written = list(facts.mutated_arrays(e))
    if e.op == "inplace_binop" and isinstance(facts.ty(e.lhs), types.Array):
        written.append(e.lhs)
    return any(facts.def_label(facts.array_root(a.name)) not in lp.blocks for a in written)


def _parent_seed(parent, phi):
    for outer_phi, members, _, _ in parent:
        if phi in members:
            return ("fused", outer_phi)
    return None


def _accumulator_family(facts, lp, phi):
    """Variables carrying the sum ``phi`` around the loop (only + and - of values that do
    not depend on it, copies and phis), and the one that leaves the loop."""
    members, work, outside = set(), [phi], []
    while work:
        v = work.pop()
        if v in members:
            continue
        members.add(v)
        for label, stmt in facts.uses.get(v, ()):
            if label not in lp.blocks:
                outside.append(v)
                continue
            if not isinstance(stmt, ir.Assign):
                return None
            nxt = _sum_step(facts, lp, v, stmt, members)
            if nxt is None:
                return None
            work.append(nxt)
    for m in members:
        if m in facts.phis and facts.phis[m] in lp.blocks:
            for b, val in facts.phi_incoming(m).items():
                if b in lp.blocks and isinstance(val, ir.Var) and val.name not in members:
                    return None
    outs = set(outside)
    if len(outs) != 1:
        return None if outs else (members, None)
    return members, outs.pop()


def _sum_step(facts, lp, v, stmt, members):
    """The variable ``stmt`` makes from the sum member ``v`` when it keeps it a sum
    (a copy, a phi, ``v + e``, ``v - e``, ``e + v``), else None."""
    e, t = stmt.value, stmt.target.name
    if isinstance(e, ir.Var) or (isinstance(e, ir.Expr) and e.op in ("cast", "phi")):
        return t
    if isinstance(e, ir.Expr) and e.op in ("binop", "inplace_binop"):
        fn = e.fn if e.op == "binop" else R.INPLACE_TO_BINOP.get(e.fn)
        other = e.rhs if e.lhs.name == v else e.lhs
        if other.name == v or _depends_on(facts, other.name, members | {v}, lp):
            return None
        if fn is operator.add or (fn is operator.sub and e.lhs.name == v):
            return t
    return None


def _depends_on(facts, name, targets, lp, seen=None):
    seen = set() if seen is None else seen
    if name in targets:
        return True
    if name in seen:
        return False
    seen.add(name)
    if name in facts.phis:
        if facts.phis[name] not in lp.blocks:
            return False
        return any(isinstance(v, ir.Var) and _depends_on(facts, v.name, targets, lp, seen)
                   for v in facts.phi_incoming(name).values())
    d = facts.defs.get(name)
    if d is None or d[0] not in lp.blocks:
        return False
    value = d[1].value
    if isinstance(value, ir.Expr):
        return any(_depends_on(facts, v.name, targets, lp, seen) for v in value.list_vars())
    return isinstance(value, ir.Var) and _depends_on(facts, value.name, targets, lp, seen)


def skippable_loops(facts, activity, fused):
    """``{loop: adjoints flowing into its reverse}`` for the loops whose reverse is
    skipped when all those adjoints are zero (a Monte Carlo path out of the money): loops
    directly in a fused loop (their history is one iteration's) that write no memory."""
    out = {}
    for lp in facts.s.loops:
        if lp in fused or lp.parent is None or lp.parent not in fused:
            continue
        if any(facts.array_update(stmt) is not None
               for b in lp.blocks for stmt in facts.fir.blocks[b].body):
            continue
        outs = set()
        for name in activity.useful:
            label = facts.def_label(name)
            if label is None or label not in lp.blocks or not is_float(facts.ty(name)):
                continue
            if any(lbl not in lp.blocks for lbl, _ in facts.uses.get(name, ())):
                outs.add(name)
        if outs and _may_select_zero(facts, lp, outs):
            out[lp] = sorted(outs)
    return out


# Calls whose adjoint goes to one operand and is zero for the other.
_SELECTING_CALLS = {min, max, np.minimum, np.maximum, np.fmin, np.fmax}
_COMPARISONS = {operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
                operator.ne}


def _may_select_zero(facts, lp, outs):
    """Can the adjoint of ``outs`` be zero on some iterations of the parent loop? Only
    then does testing it before the reverse of ``lp`` pay (a payoff ``max(s - K, 0)``, a
    branch on the value); otherwise the test costs a compare and a branch per iteration
    and never skips. Follows the values ``outs`` make in the parent's iteration: a
    selecting call, a comparison or a merge of branches (a phi other than the loop's own)
    may select a zero adjoint."""
    parent = lp.parent
    inside = set(parent.blocks) - set(lp.blocks)
    seen, work = set(), list(outs)
    while work:
        v = work.pop()
        if v in seen or len(seen) > 200:
            continue
        seen.add(v)
        for label, stmt in facts.uses.get(v, ()):
            if label not in inside:
                continue
            if not isinstance(stmt, ir.Assign):
                return True             # a branch on the value
            e = stmt.value
            if isinstance(e, ir.Expr):
                if e.op == "phi" and label != parent.header:
                    return True
                if e.op == "call" and facts.resolve_global(e.func) in _SELECTING_CALLS:
                    return True
                if e.op == "binop" and e.fn in _COMPARISONS:
                    return True
            work.append(stmt.target.name)
    return False
