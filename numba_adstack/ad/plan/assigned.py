"""Array adjoints assigned element by element rather than zeroed and added into.

``total += w[i] * avg[i]``: when a loop of sums without branches reads an argument array
only at its index, and nothing else reads the array, reversing iteration ``i`` makes all
the contributions to ``w_bar[i]``, and the first one it makes (that of the last read) can
be assigned. The adjoint is then made with ``np.empty_like``, the elements the loop does
not reach (from its trip count on) are set to zero before it, and each iteration assigns
its element, adding the other reads' contributions to it: no pass over memory to zero the
array first, and one read of it fewer.
"""
from numba.core import ir, types

from ..typeinfo import is_float_array
from .read_seeds import plain_reading_loop, uses_of_array
from .replay import is_loop_index


def assigned_adjoints(facts, activity, fused, replayed=frozenset(), element_seeds=(),
                      parallel=None):
    """``{argument or fresh array: (the fused loop that assigns each element of its
    adjoint, the read whose contribution is assigned)}``; ``replayed``: the loops of
    ``fused`` that the sweep runs again; ``element_seeds``: arrays that have no adjoint
    (:mod:`.read_seeds`); ``parallel``: the loops the backward runs in parallel (when
    given, a ``prange`` loop outside it, run serially, assigns too)."""
    if not facts.target.fuses_loops:
        return {}
    out = {}
    for lp in fused:
        serial = parallel is not None and lp not in parallel
        order = _body_order(facts, lp) if plain_reading_loop(facts, lp, serial) else None
        if order is None:
            continue
        for root in sorted({facts.array_root(stmt.value.value.name) for stmt in order
                            if _is_array_read(facts, stmt)}):
            if root in out or root in element_seeds or not is_float_array(facts.ty(root)) \
                    or facts.ty(root).ndim != 1:
                continue
            aliases, stores, reads = uses_of_array(facts, root)
            if aliases is None or not reads or any(
                    r not in order or not is_loop_index(facts, lp.range, r.value.index.name)
                    for r in reads):
                continue
            if root not in facts.arg_vars and not _fresh_first_touched(
                    facts, activity, fused, replayed, lp, root, stores):
                continue
            if root in facts.arg_vars and (stores or facts.target.accumulates_arguments):
                continue
            useful = [r for r in order if r in reads and r.target.name in activity.useful]
            if useful:
                out[root] = (lp, useful[-1].target.name)
    return out


def covers_every_element(facts, lp, root):
    """Does range loop ``lp`` run once per element of the 1-d array ``root``
    (``range(len(a))``, ``range(a.shape[0])`` or ``for v in a``, ``a`` sharing ``root``'s
    memory)? Its assigned adjoint then has no element past the trip count to zero."""
    rl = lp.range
    if rl is None:
        return False
    if rl.array is not None:
        return facts.array_root(rl.array.name) == root
    if len(rl.args) == 2 and rl.const_args is None:
        start = facts.resolve_global(rl.args[0]) if isinstance(rl.args[0], ir.Var) else None
        if not (isinstance(start, int) and start == 0):
            return False
        stop = rl.args[1]
    elif len(rl.args) == 1:
        stop = rl.args[0]
    else:
        return False
    e = facts.def_expr(stop.name)
    while isinstance(e, ir.Var):
        e = facts.def_expr(e.name)
    if isinstance(e, ir.Expr) and e.op == "call" and facts.resolve_global(e.func) is len \
            and len(e.args) == 1:
        measured = e.args[0]
    elif isinstance(e, ir.Expr) and e.op == "static_getitem" and e.index == 0:
        shape = facts.def_expr(e.value.name)
        if not (isinstance(shape, ir.Expr) and shape.op == "getattr"
                and shape.attr == "shape"):
            return False
        measured = shape.value
    else:
        return False
    return isinstance(facts.ty(measured.name), types.Array) \
        and facts.ty(measured.name).ndim == 1 and facts.array_root(measured.name) == root


def _fresh_first_touched(facts, activity, fused, replayed, lp, root, stores):
    """Is the adjoint of the fresh array ``root`` (made once, before ``lp``, with its
    adjoint made beside it) first touched by ``lp``'s reverse? ``lp`` is then reversed in
    the replay, before the sweep reverses anything else (its stores among them), so each
    element's first contribution is that of ``lp``'s iteration at its index."""
    if lp in replayed or activity.array_adjoints.get(root) != "new" \
            or facts.s.depth(facts.def_label(root)) != 0 \
            or not facts.is_constructor_call(root):
        return False
    # (a store reversed in the replay too could come first: one in a loop of ``fused``)
    return not any(other in fused and other not in replayed
                   for label, _ in stores for other in facts.s.enclosing(label))


def _is_array_read(facts, stmt):
    e = stmt.value if isinstance(stmt, ir.Assign) else None
    return isinstance(e, ir.Expr) and e.op == "getitem" \
        and isinstance(facts.ty(e.value), types.Array)


def _body_order(facts, lp):
    """The statements of the loop's body in the order they run (a chain of blocks from
    the header back to it), or None."""
    header = facts.fir.blocks[lp.header]
    inside = [t for t in header.terminator.get_targets() if t in lp.blocks]
    if len(inside) != 1:
        return None
    stmts, b = [], inside[0]
    while b != lp.header:
        if b not in lp.blocks or len(stmts) > 100000:
            return None
        block = facts.fir.blocks[b]
        stmts.extend(block.body)
        if not isinstance(block.terminator, ir.Jump):
            return None
        b = block.terminator.target
    return stmts
