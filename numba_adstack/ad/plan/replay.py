"""Map loops: loops whose iterations are independent, replayed in the sweep.

A map loop (``out[i] = f(x[i], params)`` for each ``i``) carries nothing from one
iteration to the next, and each iteration writes only its own elements of arrays that no
iteration reads. The forward replay runs it as the primal does, keeping nothing. When the
sweep reaches it, the adjoints of its outputs are known, so it runs the loop again, and
reverses each iteration right after running it, as fused loops are in the replay
(:mod:`.fusion`): its stacks hold one iteration, and the history never grows with the
trip count.

Running an iteration again gives the same values only when the memory it reads is the
same: the loop must read arrays that nothing writes, and store into arrays that nothing
outside the loop writes (running the stores again then writes what is already there).
"""
import numpy as np
from numba.core import ir, types

from ..typeinfo import is_float
from .seeds import seed_tree, straight_after


def choose_replayed(facts, activity, fused):
    """The map loops: ``{loop: []}``, in the form of ``fused`` (no sums), so that the rest
    of the plan treats an iteration as a reversal unit; the set of those the sweep runs
    again; and ``{array: (loop, seed tree)}`` for the arrays filled by the others, whose
    adjoint is known before the loop (``w * out.sum()`` after it: ``w`` for each element;
    see :mod:`.seeds`): such a loop is reversed in the replay, each iteration right after
    it runs, like a fused loop, and is not run again."""
    if not facts.target.fuses_loops:
        return {}, frozenset(), {}
    # Top-level loops only: what the iteration reads from before the loop is then
    # defined once in the function, and still in its variable when the sweep runs it.
    loops, again, seeds = {}, set(), {}
    for lp in facts.s.loops:
        if lp.depth != 1 or lp in fused:
            continue
        stored = _map_loop_outputs(facts, activity, lp)
        if stored is None:
            continue
        early = {a: element_seed(facts, lp, a) for a in stored}
        if all(seed is not None for seed in early.values()):
            seeds.update({a: (lp, seed) for a, seed in early.items()})
        else:
            again.add(lp)
        loops[lp] = []
    return loops, frozenset(again), seeds


def element_seed(facts, lp, array):
    """The seed tree of the adjoint of each element of ``array``, a fresh array filled by
    map loop ``lp``, when the code after the loop only sums it into linear terms of the
    result; else None."""
    if not facts.is_constructor_call(array) or facts.fill_value(facts.def_expr(array)) \
            is not None:
        return None
    return _array_seed(facts, lp, straight_after(facts, lp), array, 0)


def _array_seed(facts, lp, straight, v, depth):
    if depth > 20:
        return None
    terms = []
    for label, stmt in facts.uses.get(v, ()):
        if label in lp.blocks:
            continue
        if label not in straight or not isinstance(stmt, ir.Assign):
            return None
        e, t = stmt.value, stmt.target.name
        if isinstance(e, ir.Var):
            term = _array_seed(facts, lp, straight, t, depth + 1)
        elif isinstance(e, ir.Expr) and e.op == "build_tuple":
            term = _tuple_seed(facts, lp, straight, t, v, depth)
        elif isinstance(e, ir.Expr) and e.op == "getattr" and e.attr == "sum":
            term = _method_sum_seed(facts, lp, straight, t, depth)
        elif isinstance(e, ir.Expr) and e.op == "call" and not e.kws and len(e.args) == 1 \
                and facts.resolve_global(e.func) is np.sum:
            term = seed_tree(facts, lp, straight, t, depth + 1)
        else:
            term = None
        if term is None:
            return None
        terms.append(term)
    return ("sum", terms) if terms else ("zero",)


def _tuple_seed(facts, lp, straight, tup, v, depth):
    """Through a tuple that is only unpacked (a helper returning ``call, put``)."""
    terms = []
    for label, stmt in facts.uses.get(tup, ()):
        e = stmt.value if isinstance(stmt, ir.Assign) else None
        if label not in straight or not isinstance(e, (ir.Expr, ir.Var)):
            return None
        if isinstance(e, ir.Var) or e.op == "exhaust_iter":
            sub = _tuple_seed(facts, lp, straight, stmt.target.name, v, depth + 1)
        elif e.op in ("getitem", "static_getitem"):
            item = facts.tuple_item(e)
            if item is None:
                return None
            sub = _array_seed(facts, lp, straight, stmt.target.name, depth + 1) \
                if item.name == v else ("zero",)
        else:
            return None
        if sub is None:
            return None
        terms.append(sub)
    return ("sum", terms)


def _method_sum_seed(facts, lp, straight, method, depth):
    terms = []
    for label, stmt in facts.uses.get(method, ()):
        e = stmt.value if isinstance(stmt, ir.Assign) else None
        if label not in straight or not (isinstance(e, ir.Expr) and e.op == "call"
                                         and not e.args and not e.kws):
            return None
        term = seed_tree(facts, lp, straight, stmt.target.name, depth + 1)
        if term is None:
            return None
        terms.append(term)
    return ("sum", terms)


def _map_loop_outputs(facts, activity, lp):
    """The arrays (roots) that map loop ``lp`` fills, or None when it is not one."""
    rl = lp.range
    if rl is None or rl.first is None or rl.parallel or len(lp.exits) != 1 \
            or lp.exits[0][0] != lp.header:
        return None
    if any(other.parent is lp for other in facts.s.loops):
        return None
    for phi, _ in facts.block_phis[lp.header]:
        if phi.name in activity.useful or phi.name in activity.varied:
            return None             # something flows from one iteration to the next
    stored = set()
    for b in lp.blocks:
        for stmt in facts.fir.blocks[b].body:
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                if not _own_element(facts, rl, stmt):
                    return None
                stored.add(facts.array_root(stmt.target.name))
            elif isinstance(stmt, ir.Assign) and not _plain_assign(facts, activity, lp, stmt):
                return None
            elif not isinstance(stmt, (ir.Assign, ir.Del, ir.Jump, ir.Branch)):
                return None
    if stored and _memory_is_stable(facts, lp, stored):
        return sorted(stored)
    return None


def _own_element(facts, rl, stmt):
    """``out[i] = v`` or ``out[i, ...] = v`` with ``i`` the loop's index."""
    idx = stmt.index_var if isinstance(stmt, ir.StaticSetItem) else stmt.index
    if idx is None:
        return False
    d = facts.def_expr(idx.name)
    if isinstance(d, ir.Expr) and d.op == "build_tuple" and d.items:
        idx = d.items[0]
    return _is_index(facts, rl, idx.name) and is_float(facts.ty(stmt.value))


def _is_index(facts, rl, name, depth=0):
    if name == rl.first:
        return True
    d = facts.def_expr(name) if name not in facts.phis else None
    return depth < 8 and isinstance(d, ir.Var) and _is_index(facts, rl, d.name, depth + 1)


def _plain_assign(facts, activity, lp, stmt):
    """A statement an iteration may hold: no in-place array arithmetic, no call that
    writes memory, no array made (views are fine); floats it makes stay in the loop."""
    e, name = stmt.value, stmt.target.name
    if isinstance(e, ir.Expr):
        if e.op == "inplace_binop" and isinstance(facts.ty(e.lhs), types.Array):
            return False
        if facts.mutated_arrays(e) or facts.target.atomic_update(facts, stmt) is not None:
            return False
        if e.op == "call" and isinstance(facts.ty(name), types.Array):
            return False
    if isinstance(facts.ty(name), types.Array) and not (
            isinstance(e, ir.Var) or (isinstance(e, ir.Expr) and e.op in (
                "getitem", "static_getitem", "getattr", "cast"))):
        return False
    if name in activity.useful:
        return all(label in lp.blocks for label, _ in facts.uses.get(name, ()))
    return True


def _memory_is_stable(facts, lp, stored):
    """Arrays read in the loop are never written; arrays stored into are written only by
    the loop's stores and never read in it."""
    for b in lp.blocks:
        for stmt in facts.fir.blocks[b].body:
            e = stmt.value if isinstance(stmt, ir.Assign) else None
            if isinstance(e, ir.Expr) and e.op in ("getitem", "static_getitem") \
                    and isinstance(facts.ty(e.value), types.Array):
                if facts.array_root(e.value.name) in stored \
                        or not facts.is_readonly_array(e.value.name):
                    return False
    return not any(_shares(facts, w, stored) for w in facts.written_members(lp.blocks))


def _shares(facts, name, roots):
    rep = facts.buffer_class.get(name)
    if facts.array_root(name) in roots:
        return True
    return rep is not None and any(facts.buffer_class.get(r) == rep for r in roots)
