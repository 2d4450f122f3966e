"""Map loops: loops whose iterations are independent, replayed in the sweep.

A map loop (``out[i] = f(x[i], params)`` for each ``i``) carries nothing from one
iteration to the next, and each iteration writes only its own elements of arrays that no
iteration reads. The forward replay runs it as the primal does, keeping nothing. When the
sweep reaches it, the adjoints of its outputs are known, so it runs the loop again, and
reverses each iteration right after running it, as fused loops are in the replay
(:mod:`.fusion`): its stacks hold one iteration, and the history never grows with the
trip count. When the adjoints of its outputs are known before it runs (element seeds), it
is reversed in the replay instead, and not run again.

Running an iteration again gives the same values only when the memory it reads is the
same: the loop must read arrays that nothing writes, and store into arrays that nothing
outside the loop writes (running the stores again then writes what is already there). The
values it reads from before it must be the same too: defined once in the reversal unit
around it, or got back by the sweep (:meth:`..emit.fused.Fused.sweep`).

A loop of sums (:mod:`.fusion`) whose sums' adjoint is known only after it is run again
the same way, seeded with the adjoint of the sum that leaves it.
"""
import numpy as np
from numba.core import ir, types

from ..typeinfo import is_float
from .fusion import sum_families, touches_list_adjoint
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
    loops, again, seeds = {}, set(), {}
    for lp in sorted(facts.s.loops, key=lambda lp: lp.depth):
        if lp in fused or touches_list_adjoint(facts, activity, lp):
            continue
        # Inside loops reversed an iteration at a time, what an iteration reads from
        # before the loop is defined once in that unit (at the top level: once in the
        # function), still in its variable when the unit's sweep reaches the loop. Inside
        # other loops (a time loop), the sweep gets those values back as it gets back any
        # value it reads (see Fused.sweep).
        in_unit = lp.depth == 1 or lp.parent in fused or lp.parent in loops
        sums = _seeded_sums(facts, activity, lp, loops, again, seeds) if in_unit else None
        if sums is not None:
            loops[lp] = sums            # reversed in the replay, like a fused loop
            continue
        stored = _map_loop_outputs(facts, activity, lp)
        if stored is not None and not in_unit and not _inputs_restorable(facts, lp):
            continue
        if stored is None:
            sums = _replayed_sums(facts, activity, lp)
            if sums is not None:
                loops[lp] = sums
                again.add(lp)
            continue
        early = {a: element_seed(facts, lp, a) for a in stored} \
            if lp.depth == 1 and _writes_each_element_once(facts, lp) else {}
        if early and all(seed is not None for seed in early.values()):
            seeds.update({a: (lp, seed) for a, seed in early.items()})
        else:
            again.add(lp)
        loops[lp] = []
    return loops, frozenset(again), seeds


def follows_parent(facts, replayed, lp):
    """Is map loop ``lp``, inside a map loop the sweep runs again, reversed with its
    parent's iteration as that runs again (rather than run once more when the iteration
    is reversed)? Its elements' adjoints are final then: its iterations store into
    disjoint elements, nothing else stores into its arrays, and the parent reads none of
    them (the checks of both map loops)."""
    return lp.parent is not None and lp in replayed and lp.parent in replayed


def _seeded_sums(facts, activity, lp, loops, again, seeds):
    """The families of a loop of sums inside a map loop reversed in the replay, when each
    sum leaves it only to be stored into an element of an array of element seeds (``e[i]
    = s``, a row's energy): the sum's seed is that element's."""
    parent = lp.parent
    if parent is None or parent not in loops or parent in again:
        return None

    def seed_of(outflow):
        if outflow is None:
            return ("zero",)
        roots = set()
        for label, stmt in facts.uses.get(outflow, ()):
            if label in lp.blocks:
                continue
            if not isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) \
                    or stmt.value.name != outflow:
                return None
            roots.add(facts.array_root(stmt.target.name))
        if len(roots) != 1 or seeds.get(next(iter(roots)), (None,))[0] is not parent:
            return None
        return ("fused", roots.pop())

    families = sum_families(facts, activity, lp, seed_of)
    return families or None


def _inputs_restorable(facts, lp):
    """Can the sweep get back each value the loop reads from the loops around it? Numbers
    and arrays it keeps or recomputes (``Fused.sweep``); the loop's own range it makes
    again; anything else (a tuple built in the time step) it would read as the last step
    left it."""
    outer = set(lp.parent.blocks) - set(lp.blocks)
    for b in lp.blocks:
        for stmt in facts.fir.blocks[b].body:
            for v in stmt.list_vars():
                if facts.def_label(v.name) not in outer or \
                        facts.static_form(v.name) is not None:
                    continue
                t = facts.ty(v.name)
                if not isinstance(t, (types.Number, types.Boolean, types.Array,
                                      types.RangeType, types.RangeIteratorType)):
                    return False
    return True


def _replayed_sums(facts, activity, lp):
    """The families of a range loop that carries only sums, writes no memory and reads
    only arrays that nothing writes, but whose sums' adjoint is known only after it (the
    squared distance summed over a row's components, then square-rooted): the sweep runs
    it again, seeding each iteration with the adjoint of the sum that leaves it."""
    rl = lp.range
    if rl is None or rl.first is None or lp.depth != 1:
        # Inside a loop reversed an iteration at a time, the history of one run of the
        # loop is all its stack holds; run again, a loop of a few iterations (a distance
        # over 3 components) is vectorised by LLVM and runs slower than its stack.
        return None
    if any(facts.array_update(stmt) is not None or (
            isinstance(stmt, ir.Assign) and not _plain_assign(facts, activity, lp, stmt,
                                                               sums_leave=True))
           for b in lp.blocks for stmt in facts.fir.blocks[b].body):
        return None
    families = sum_families(facts, activity, lp, lambda out: ("adjoint", out))
    if not families or not _memory_is_stable(facts, lp, {}):
        return None
    return families


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
    """The arrays (roots) that map loop ``lp`` fills, or None when it is not one. Loops
    inside it run within its iteration, reversed as usual."""
    rl = lp.range
    if rl is None or rl.first is None or len(lp.exits) != 1 \
            or lp.exits[0][0] != lp.header:
        return None
    for phi, _ in facts.block_phis[lp.header]:
        if phi.name in activity.useful or phi.name in activity.varied:
            return None             # something flows from one iteration to the next
    positions = {}                  # array -> where the loop's index is in its stores
    for b in lp.blocks:
        for stmt in facts.fir.blocks[b].body:
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                root = facts.array_root(stmt.target.name)
                at = _own_element(facts, rl, stmt)
                if at is None or positions.setdefault(root, at) != at:
                    return None
            elif isinstance(stmt, ir.Assign) and not _plain_assign(facts, activity, lp, stmt):
                return None
            elif not isinstance(stmt, (ir.Assign, ir.Del, ir.Jump, ir.Branch)):
                return None
    if positions and _memory_is_stable(facts, lp, positions):
        return sorted(positions)
    return None


def _store_index_items(facts, stmt):
    idx = stmt.index_var if isinstance(stmt, ir.StaticSetItem) else stmt.index
    if idx is None:
        return None
    d = facts.def_expr(idx.name)
    if isinstance(d, ir.Expr) and d.op == "build_tuple" and d.items:
        return list(d.items)
    return [idx]


def _own_element(facts, rl, stmt):
    """For ``out[..., i, ...] = v`` with ``i`` the loop's index, the position of ``i`` in
    the index (so that iterations write disjoint elements when each store of ``out`` has
    it at the same position); else None."""
    items = _store_index_items(facts, stmt)
    if items is None or not is_float(facts.ty(stmt.value)):
        return None
    for k, item in enumerate(items):
        if is_loop_index(facts, rl, item.name):
            return k
    return None


def is_loop_index(facts, rl, name, depth=0):
    if name == rl.first:
        return True
    d = facts.def_expr(name) if name not in facts.phis else None
    return depth < 8 and isinstance(d, ir.Var) and is_loop_index(facts, rl, d.name, depth + 1)


def _writes_each_element_once(facts, lp):
    """Does one iteration write each element at most once? (An element seed goes to the
    value stored; a second store of the same element would get it too.) Stores outside
    loops inside ``lp``, each at a distinct index: the loop's index and constants."""
    seen = set()
    for b in lp.blocks:
        for stmt in facts.fir.blocks[b].body:
            if not isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                continue
            if facts.s.enclosing(b)[0] is not lp:
                return False
            key = [facts.array_root(stmt.target.name)]
            for item in _store_index_items(facts, stmt):
                const = facts.static_form(item.name)
                key.append("i" if is_loop_index(facts, lp.range, item.name) else
                           const[1] if const is not None and const[0] == "const"
                           and isinstance(const[1], int) else None)
            if None in key or tuple(key) in seen:
                return False
            seen.add(tuple(key))
    return True


def _plain_assign(facts, activity, lp, stmt, sums_leave=False):
    """A statement an iteration may hold: no in-place array arithmetic, no call that
    writes memory, no array made (views are fine); floats it makes stay in the loop
    (unless ``sums_leave``: the sums' families are checked apart)."""
    e, name = stmt.value, stmt.target.name
    if isinstance(e, ir.Expr):
        if e.op == "inplace_binop" and isinstance(facts.ty(e.lhs), types.Array):
            return False
        if facts.mutated_arrays(e) or facts.target.atomic_update(facts, stmt) is not None:
            return False
        if facts.draws_random(e):       # run again, it would draw other numbers
            return False
        if e.op == "call" and isinstance(facts.ty(name), types.Array):
            return False
    if isinstance(facts.ty(name), types.Array) and not (
            isinstance(e, ir.Var) or (isinstance(e, ir.Expr) and e.op in (
                "getitem", "static_getitem", "getattr", "cast"))):
        return False
    if name in activity.useful and not sums_leave:
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
