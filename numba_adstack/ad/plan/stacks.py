"""Stacks: which values and records the sweep keeps, and how big each stack is.

A stack holds what one site pushes within one reversal unit: a loop with a constant trip
count multiplies its capacity by that count; a loop whose count is only known at run time
by ``ad_stack_size`` (and two such loops nested make the stack a growable heap stack).
*Records* are the control-flow facts the sweep replays: which edge reached a merge point
(``_c``), how many iterations a loop ran (``_n``), which exit (``_x``) or back edge
(``_l``) it took; a record made once per unit is a local, one made in a loop a stack.
"""
from dataclasses import dataclass

from numba.core import ir

from ... import config
from .. import rules as R
from ..structure import node_key
from ..typeinfo import is_float_array, stack_dtype


@dataclass(frozen=True)
class StackSpec:
    dtype: str          # source of the NumPy dtype of its entries
    capacity: int
    storage: str        # "frame" or "heap"


def capacity(facts, options, loops):
    """Capacity and storage of a stack pushed once per iteration of ``loops``."""
    cap, runtime = 1, 0
    for lp in loops:
        tc = lp.range.trip_count() if lp.range is not None else None
        if tc is None:
            runtime += 1
        else:
            cap *= max(tc, 1)
    storage = "heap" if (runtime > 1 or options.storage == "heap") else "frame"
    # A constant loop inside a run-time one (a solver's maxiter loop called per
    # sample) multiplies the stack by its trip count; past the frame budget it could never
    # compile as a frame stack: it grows on the heap, as under two run-time loops.
    if runtime and cap > 1 and cap * options.ad_stack_size * 8 > config.get_frame_budget():
        storage = "heap"
    if runtime:
        cap *= options.ad_stack_size
    if facts.target.forced_storage is not None:
        storage = facts.target.forced_storage
    return max(cap, 1), storage


def value_stacks(facts, options, recompute, sites, needed, types_of):
    """``{value name: StackSpec}`` for the needed values the sweep reads from a stack."""
    out = {}
    for name in sorted(needed):
        if not recompute.kept_on_stack(name):
            continue
        t = types_of(name)
        if is_float_array(t):
            out[name] = StackSpec("list", 0, "list")     # a typed list of arrays
            continue
        dt = stack_dtype(t)
        if dt is None:
            facts.error("the reverse sweep needs the value of %r (%s) from every loop "
                        "iteration, and values of that type cannot be kept"
                        % (name, t), sites.def_loc(name))
        cap, storage = 0, "frame"
        for lps in sites.def_site_loops(name).values():
            if not lps:
                continue
            c, s = capacity(facts, options, lps)
            cap += c
            if s == "heap":
                storage = "heap"
        out[name] = StackSpec(dt, cap, storage)
    return out


def record_stacks(facts, options, sites, fused):
    """``{record name: StackSpec}`` for the control-flow records made in loops."""
    out = {}
    s = facts.s

    def record(name, loops, block):
        loops = sites.site_loops(loops, block)
        if loops:
            cap, storage = capacity(facts, options, loops)
            out[name] = StackSpec("np.int64", cap, storage)

    for lp in s.loops:
        if lp in fused:
            continue
        h = lp.header
        if len(lp.exits) > 1:
            record("_x%d" % h, s.enclosing(h)[1:], h)
        if not facts.counted(lp):
            record("_n%d" % h, s.enclosing(h)[1:], h)
        if len(lp.latches) > 1:
            record("_l%d" % h, s.enclosing(h), h)
    for region in s.regions.values():
        loops = [] if region.loop is None else s.enclosing(region.loop.header)
        for n in region.nodes:
            if len(region.ins[n]) > 1:
                record("_c%s" % node_key(n), loops, region.entry)
    return out


def choose_partials(facts, recompute, ref_uses):
    """Calls ``y = f(x)`` whose rule is ``{g} * P(x)`` with P a library call (``sin`` ->
    ``cos(x)``), where the sweep would read ``x`` from a stack only for P: keep P on the
    stack instead of ``x``. Same pushes and as many calls, but P is computed in the forward
    replay, where it overlaps the primal's own chain of dependent calls, and the sweep is
    left with a multiply per step (JAX's residuals do the same).

    Returns ``{y: (kept name, P template)}`` and ``{kept name: type}``."""
    partials, types_ = {}, {}
    for x, uses in sorted(ref_uses.items()):
        if len(uses) != 1 or None in uses or not recompute.kept_on_stack(x):
            continue
        name, k = next(iter(uses))
        e = facts.def_expr(name)
        if k != 0 or not (isinstance(e, ir.Expr) and e.op == "call"):
            continue
        rule = R.CALL_RULES.get(facts.resolve_global(e.func))
        if rule is None or len(rule) != 1 or rule[0] is None or e.kws:
            continue
        head, _, partial = rule[0].partition(" * ")
        if head != "{g}" or "{g}" in partial or "{y}" in partial or "math." not in partial:
            continue
        pname = name + ".d"
        types_[pname] = facts.ty(x)
        partials[name] = (pname, partial)
    return partials, types_
