"""Stacks: which values and records the sweep keeps, and how big each stack is.

A stack holds what one site pushes within one reversal unit. *Records* are the
control-flow facts the sweep replays: which edge reached a merge point (``_c``), how many
iterations a loop ran (``_n``), which exit (``_x``) or back edge (``_l``) it took; a record
made once per unit is a local, one made in a loop a stack.

Sizing, by default (``storage="auto"`` and no ``ad_stack_size``), from what is known:

* a site whose loops all have constant trip counts needs their product: a *frame* stack
  of exactly that capacity, while the function's frame stacks fit the frame budget (the
  largest move to the heap otherwise);
* a site in a ``range`` (or array) loop of run-time length, left only when exhausted,
  needs that length times the constant trip counts of the loops inside it: known when the
  loop starts, so the stack is a *heap* stack in which the replay reserves room at the
  loop's entry (the stack of a fused loop's inner loop then holds one iteration);
* anything else (a ``while`` loop, a loop left by ``break``) is a heap stack that grows.

Heap stacks never overflow: their pushes check the capacity and grow (a reserve only saves
the growth). The explicit modes keep fixed capacities: ``ad_stack_size=N`` or
``storage="frame"`` give loops of run-time length N slots in the frame (two such loops
nested: a growable heap stack), with an overflow error past it and the frame budget
checked here, before Numba compiles; ``storage="heap"`` makes every stack a heap stack.
"""
from dataclasses import dataclass

from numba.core import ir, types

from ... import config
from ...errors import AdStackBudgetError
from .. import rules as R
from ..rules.template import adjoint_factor, calls_module
from ..facts.structure import node_key
from ..typeinfo import STACK_ENTRY_BYTES, is_float, is_kept_array, stack_dtype
from ..generated_source.code import stmt

#: First capacity of a heap stack that grows (a ``while`` loop's history): it doubles.
HEAP_START = 64
#: Bytes of a frame stack's count, ahead of its entries (see docs/adstack.md).
FRAME_HEADER_BYTES = 8


@dataclass(frozen=True)
class StackSpec:
    dtype: str            # source of the NumPy dtype of its entries
    capacity: int         # fixed (frame), or the first capacity (heap)
    storage: str          # "frame" or "heap"
    reserves: tuple = ()  # ((loop header, pushes per iteration), ...): room made at entry
    what: str = ""        # what it keeps, for messages
    block: int = None     # a block of one of its sites (which function declares it)
    sizing: tuple = ()    # "launch" storage: per site, its loops' trip counts (an int, or
    index: int = None     # the header of a loop counted at launch), and its place

    def frame_bytes(self):
        return FRAME_HEADER_BYTES + self.capacity * STACK_ENTRY_BYTES[self.dtype]


def fixed_size(options):
    """The capacity of loops of run-time length in the explicit modes, or None (auto)."""
    if options.storage == "auto" and options.ad_stack_size is None:
        return None
    return int(options.ad_stack_size or config.DEFAULT_AD_STACK_SIZE)


def reservable(facts, lp):
    """Is the trip count of ``lp`` known when it starts, and reached? (A range or array
    loop left only when exhausted: a ``break`` may leave it long before.)"""
    return facts.counted(lp)


def site_need(facts, loops):
    """What one push site needs, given the loops repeating it (innermost first):
    ``(constant count or None, (loop header, pushes per iteration) or None, grows)``."""
    per = 1
    for lp in loops:
        tc = lp.range.trip_count() if lp.range is not None else None
        if tc is None:
            if reservable(facts, lp):
                return None, (lp.header, per), False
            return None, None, True
        per *= max(tc, 1)
    return per, None, False


def capacity(facts, options, loops):
    """Explicit modes: capacity and storage of a stack pushed once per iteration of
    ``loops``."""
    cap, runtime = 1, 0
    for lp in loops:
        tc = lp.range.trip_count() if lp.range is not None else None
        if tc is None:
            runtime += 1
        else:
            cap *= max(tc, 1)
    if runtime:
        cap *= fixed_size(options)
    storage = "heap" if (runtime > 1 or options.storage == "heap") else "frame"
    return max(cap, 1), storage


def make_spec(facts, options, dtype, site_loops, what="", block=None):
    """The :class:`StackSpec` of a stack pushed at sites repeated by ``site_loops`` (one
    list of loops per site, innermost first)."""
    base, reserves, grows = 0, {}, False
    for loops in site_loops:
        const, res, g = site_need(facts, loops)
        base += const or 0
        grows = grows or g
        if res is not None:
            reserves[res[0]] = reserves.get(res[0], 0) + res[1]
    reserves = tuple(sorted(reserves.items()))
    if fixed_size(options) is None and getattr(facts.target, "sized_at_launch", False):
        sizing = tuple(tuple(_trip_count(lp) for lp in loops) for loops in site_loops)
        return StackSpec(dtype, 0, "launch", (), what, block, sizing)
    if fixed_size(options) is None:
        if reserves or grows:
            return StackSpec(dtype, base + HEAP_START, "heap", reserves, what, block)
        return StackSpec(dtype, max(base, 1), "frame", (), what, block)
    cap, storage = 0, "frame"
    for loops in site_loops:
        c, st = capacity(facts, options, loops)
        cap += c
        storage = "heap" if st == "heap" else storage
    if facts.target.forced_storage is not None:
        storage = facts.target.forced_storage
    return StackSpec(dtype, max(cap, 1), storage,
                     reserves if storage == "heap" else (), what, block)


def _trip_count(lp):
    tc = lp.range.trip_count() if lp.range is not None else None
    return max(tc, 1) if tc is not None else ("loop", lp.header)


def value_stacks(facts, options, recompute, sites, needed, types_of):
    """``{value name: StackSpec}`` for the needed values the sweep reads from a stack."""
    out = {}
    for name in sorted(needed):
        if not recompute.kept_on_stack(name):
            continue
        t = types_of(name)
        if is_kept_array(t):
            out[name] = StackSpec("list", 0, "list")     # a typed list of arrays
            continue
        dt = stack_dtype(t)
        if dt is None:
            facts.error("the reverse sweep needs the value of %r (%s) from every loop "
                        "iteration, and values of that type cannot be kept%s"
                        % (name, t, "; carry its real and imaginary parts as two floats"
                           if isinstance(t, types.Complex) else ""), _loc(facts, sites, name))
        per_site = sites.def_site_loops(name)
        loops = [lps for lps in per_site.values() if lps]
        if not loops:
            continue
        site = next(k for k, lps in per_site.items() if lps)
        block = site if not isinstance(site, tuple) else site[1]
        loc = sites.def_loc(name)
        line = getattr(loc, "line", None) or _block_line(facts, facts.def_label(name))
        out[name] = make_spec(facts, options, dt, loops, _value_what(name, line), block)
    return out


def _value_what(name, line):
    at = "" if line is None else " at line %d" % line
    if name.endswith(".d"):
        return "the derivative kept for the call%s (%s)" % (at, name[:-2])
    if name.startswith("$"):
        return "a temporary%s (%s)" % (at, name)
    return "%r%s" % (name.split(".")[0], at)


_RECORD_WHAT = {"_x": "the exit taken by the loop", "_n": "the iteration count of the loop",
                "_l": "the back edge taken in the loop", "_c": "the branch taken"}


def record_stacks(facts, options, sites, fused):
    """``{record name: StackSpec}`` for the control-flow records made in loops."""
    out = {}
    s = facts.s

    def record(name, loops, block):
        loops = sites.site_loops(loops, block)
        if loops:
            line = _block_line(facts, block)
            what = _RECORD_WHAT[name[:2]] + ("" if line is None else " at line %d" % line)
            out[name] = make_spec(facts, options, "np.int64", [loops], what, block)

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


def _block_line(facts, block):
    blk = facts.fir.blocks.get(block) if block is not None else None
    loc = getattr(blk, "loc", None) if blk is not None else None
    return getattr(loc, "line", None)


# ---------------------------------------------------------------- the frame budget

def fit_frame_budget(facts, options, parallel, values, records):
    """Check the frame stacks of each function the backward is made of (the backward, and
    the helper of each parallel loop) against the frame budget. By default the largest
    move to the heap until they fit; in the explicit modes, past the budget is an
    :class:`AdStackBudgetError` naming the stacks. Returns ``(values, records)``."""
    if facts.target.forced_storage is not None:
        return _numbered(values, records)   # (a GPU thread's stacks: no CPU frame budget)
    budget = options.frame_budget
    if budget is None:
        budget = config.get_frame_budget()
    specs = {("v", k): v for k, v in values.items()}
    specs.update({("r", k): v for k, v in records.items()})
    homes = {}
    for key, spec in specs.items():
        if spec.storage == "frame":
            homes.setdefault(_home(facts, parallel, spec.block), []).append(key)
    for home, keys in sorted(homes.items(), key=lambda kv: (kv[0] is not None, kv[0] or 0)):
        keys.sort(key=lambda k: (-specs[k].frame_bytes(), k))
        used = sum(specs[k].frame_bytes() for k in keys)
        if used <= budget:
            continue
        if fixed_size(options) is not None:
            raise AdStackBudgetError(budget_message(facts, home, [specs[k] for k in keys],
                                                    used, budget), highlighting=False)
        for k in keys:
            if used <= budget:
                break
            used -= specs[k].frame_bytes()
            old = specs[k]
            specs[k] = StackSpec(old.dtype, old.capacity, "heap", old.reserves, old.what,
                                 old.block)
    return ({k: specs[("v", k)] for k in values}, {k: specs[("r", k)] for k in records})


def _numbered(values, records):
    """Stacks sized at launch, each with its place among the launch's stacks."""
    keys = [("r", k) for k in sorted(records)] + [("v", k) for k in sorted(values)]
    out = ({}, {})
    for i, (kind, k) in enumerate(keys):
        spec = (records if kind == "r" else values)[k]
        if spec.storage == "launch":
            spec = StackSpec(spec.dtype, spec.capacity, spec.storage, spec.reserves,
                             spec.what, spec.block, spec.sizing, i)
        out[kind == "r"][k] = spec
    return out


def declaration_stmt(st, spec):
    """The statement declaring stack ``st`` at the top of the backward."""
    if spec.storage == "launch":
        # Its capacity and storage are constants of each compiled launch variant.
        return stmt("{} = launch_stack({}, {}, {}, _gstack, _gmeta)", st, spec.dtype,
                    "_K%d" % spec.index, spec.index)
    if spec.storage == "heap":
        return stmt('{} = adstack({}, {}, "heap")', st, spec.dtype, spec.capacity)
    return stmt("{} = adstack({}, {})", st, spec.dtype, spec.capacity)


def _home(facts, parallel, block):
    """The header of the parallel loop whose helper declares a stack, or None."""
    if block is None:
        return None
    for lp in facts.s.enclosing(block):
        if lp in parallel:
            return lp.header
    return None


def budget_message(facts, home, specs, used, budget):
    where = "the backward pass of %r" % facts.qualname
    if home is not None:
        where = "the parallel loop at block %d of %s" % (home, where)
    lines = ["adstack frame budget exceeded in %s: its frame stacks need %d bytes, over the "
             "budget of %d bytes:" % (where, used, budget)]
    for sp in specs:
        lines.append("  %s: %d bytes (%s x %d)" % (sp.what or "a stack", sp.frame_bytes(),
                                                   sp.dtype[3:], sp.capacity))
    lines.append("Fixes: leave ad_stack_size and storage unset, so that stacks size "
                 "themselves and go to the heap past the budget; pass a smaller "
                 "ad_stack_size; or raise the budget (frame_budget=N, "
                 "numba_adstack.config.FRAME_BUDGET_BYTES or the NUMBA_ADSTACK_FRAME_BUDGET "
                 "environment variable).")
    return "\n".join(lines)


def reserve_statements(specs, lp):
    """``reserve(...)`` statements for the heap stacks loop ``lp`` fills, run before it
    starts (``specs``: ``{stack source name: StackSpec}``)."""
    out = []
    for st, spec in sorted(specs.items()):
        for header, per in spec.reserves:
            if header == lp.header:
                out.append(stmt("reserve({}, {})", st, lp.range.len) if per == 1 else
                           stmt("reserve({}, {} * {})", st, lp.range.len, per))
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
        if len(uses) != 1 or None in uses or not recompute.kept_on_stack(x) \
                or not is_float(facts.ty(x)):      # (not a 0-d array: P takes floats)
            continue
        name, k = next(iter(uses))
        got = partial_of(facts, name)
        if k != 0 or got is None:
            continue
        types_[got[0]] = facts.ty(x)
        partials[name] = got
    return partials, types_


def partial_of(facts, name):
    """``(kept name, P template)`` where ``name = f(x)`` is a float call whose rule is
    ``{g} * P(x)``, P a library call: the derivative the plan may keep instead of ``x``
    (:func:`choose_partials`); else None."""
    e = facts.def_expr(name)
    if not (isinstance(e, ir.Expr) and e.op == "call") or not is_float(facts.ty(name)):
        return None         # (``np.sin(z)`` of an array: its rule is an array rule)
    rule = R.CALL_RULES.get(facts.resolve_global(e.func))
    if rule is None or len(rule) != 1 or rule[0] is None or e.kws:
        return None
    partial = adjoint_factor(rule[0])
    if partial is None or not calls_module(partial, "math"):
        return None
    return name + ".d", partial


def _loc(facts, sites, name):
    """Where ``name`` is defined; for a phi, where a value it merges is."""
    loc = sites.def_loc(name)
    if loc is None and name in facts.phis:
        for v in facts.phi_incoming(name).values():
            if isinstance(v, ir.Var) and facts.def_loc(v.name) is not None:
                return facts.def_loc(v.name)
    return loc
