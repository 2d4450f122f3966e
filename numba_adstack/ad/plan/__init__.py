"""The plan: every decision about the backward, made before any of it is emitted.

Reads the facts, the activity and the options; produces a frozen :class:`Plan`:

* which loops are fused (reversed iteration by iteration) and with which early seeds
  (:mod:`.fusion`, :mod:`.seeds`), and which of them run in parallel;
* where each definition runs relative to its reversal unit (:mod:`.sites`), and which
  needed values are recomputed rather than kept (:mod:`.recompute`);
* which calls keep their derivative rather than their operand (:mod:`.stacks`), and
  which arrays keep only their shape, read for nothing else (:mod:`.shape_reads`);
* the stacks: one per kept value and per control-flow record made in a loop, with its
  capacity and storage (:mod:`.stacks`);
* which ``prange`` loops the replay runs in parallel (:mod:`.parallel_replay`);
* which element reads sum their adjoint in a local over a loop (:mod:`.cell_sums`);
* which argument adjoints the loop the sweep reverses first assigns
  (:mod:`.sweep_assigned`).

What the sweep reads depends on these choices. So the plan is made in two steps:
:func:`draft_plan` makes the choices that come first; the backward's IR is built under
that draft, each read of a primal value left open (:class:`..emit.BackwardIR`); and
:func:`settle_plan` settles the rest from the passes over that IR: what the sweep reads
under each further choice, and which parallel loops' iterations would share a value.
"""
from dataclasses import dataclass, field, replace

from ... import config

from .assigned import assigned_adjoints
from .cell_sums import cell_sums
from .checkpoint import choose_checkpointed
from .direct import direct_adjoints
from .groups import group_stacks
from .fusion import choose_fused, choose_parallel, skippable_loops
from .recompute import Recompute
from .shapes import Shapes
from .shape_reads import choose_kept_shapes
from .sites import Sites
from .sweep_assigned import sweep_assigned
from .read_seeds import read_seeds
from .reciprocals import reciprocals
from .parallel_replay import parallel_replays
from .replay import choose_replayed
from .snapshots import choose_snapshots
from .stacks import (StackSpec, choose_partials, fit_frame_budget, record_stacks,
                     value_stacks)

__all__ = ["Plan", "Reads", "Rebuild", "StackSpec", "draft_plan", "settle_plan"]


@dataclass(frozen=True)
class Plan:
    fused: dict                 # fused loop -> [(phi, members, outflow, seed tree)]
    #                             (map loops too, with no sums: see ``replayed``)
    parallel: dict              # fused prange loop -> name of its per-iteration helper
    skippable: dict             # loop -> adjoints that must be non-zero to reverse it
    shapes: Shapes
    sites: Sites
    recompute: Recompute
    partials: dict = field(default_factory=dict)       # y -> (kept name, template)
    added_types: dict = field(default_factory=dict)    # name the plan adds -> Numba type
    value_stacks: dict = field(default_factory=dict)   # value name -> StackSpec
    record_stacks: dict = field(default_factory=dict)  # record name -> StackSpec
    needed: frozenset = frozenset()                    # values the sweep reads
    direct: dict = field(default_factory=dict)         # value -> statement assigning its adjoint
    stacks: dict = field(default_factory=dict)         # stack name -> StackSpec (groups)
    stack_of: dict = field(default_factory=dict)       # value or record -> stack name
    stack_types: dict = field(default_factory=dict)    # list stack -> its arrays' type

    snapshots: dict = field(default_factory=dict)      # stmt target -> {array: copy}
    replayed: frozenset = frozenset()                  # map loops, run again in the sweep
    element_seeds: dict = field(default_factory=dict)  # array a map loop fills -> (loop, seed)
    #                             (or a later loop reads: (that loop, ("indexed", tree)))
    assigned_adjoints: dict = field(default_factory=dict)  # argument -> (loop, read)
    #                             (the loop assigns its adjoint, at that read: plan/assigned.py)
    reciprocals: dict = field(default_factory=dict)    # v -> q = 1. / v, still in place
    checkpointed: dict = field(default_factory=dict)   # top-level loop -> its Carried state
    parallel_replay: frozenset = frozenset()           # prange loops replayed with prange
    checkpoint_mode: str = "off"                       # "auto" (guarded) or "revolve"
    memory_budget: int = -1                            # bytes (-1: none given)
    checkpoint_slots: int = None                       # snapshot slots (None: from budget)
    sweep_assigned: dict = field(default_factory=dict)  # argument -> SweepAssigned
    #                             (the loop the sweep reverses first assigns its adjoint)
    cell_sums: dict = field(default_factory=dict)      # element read -> loop (None: all)
    #                             (its adjoint summed in a local over it: plan/cell_sums.py)
    kept_shapes: dict = field(default_factory=dict)    # array -> names of its kept extents
    #                             (read only for its shape: plan/shape_reads.py)

    def ty(self, facts, name):
        """Type of an IR variable or of a name the plan adds."""
        got = self.added_types.get(name)
        return facts.ty(name) if got is None else got


@dataclass
class Reads:
    """What the sweep reads under a plan (a pass over the backward's IR:
    :meth:`..emit.BackwardIR.reads`)."""
    needed: set                 # primal values read where they may have been overwritten
    ref_uses: dict              # value -> {(defined name, operand index) or None}
    for_shape: set = field(default_factory=set)    # needed values read for their shape
    for_values: set = field(default_factory=set)   # needed values read for their values


@dataclass(frozen=True)
class Rebuild:
    """The settled plan changes the shape of the IR it was settled from: build it again
    under ``draft`` (``why`` says what changed)."""
    draft: Plan
    why: str


def draft_plan(facts, activity, options):
    """The :class:`Plan` of every choice made before what the sweep reads is known (the
    backward's IR is built under it: :class:`..emit.BackwardIR`)."""
    sums = choose_fused(facts, activity)
    maps, replayed, element_seeds = choose_replayed(facts, activity, sums)
    element_seeds.update(read_seeds(facts, activity, sums, element_seeds, maps))
    fused = {**sums, **maps}      # both reversed an iteration at a time
    sites = Sites(facts, fused)
    recompute = Recompute(facts, fused, sites)
    parallel = choose_parallel(facts, fused, options.parallel)
    draft = Plan(fused, parallel,
                 skippable_loops(facts, activity, fused), Shapes(facts), sites, recompute,
                 record_stacks=record_stacks(facts, options, sites, fused),
                 replayed=replayed, element_seeds=element_seeds,
                 assigned_adjoints=assigned_adjoints(facts, activity, fused, replayed,
                                                     element_seeds, parallel),
                 reciprocals=reciprocals(facts, sites),
                 # Assigned adjoints read no value for a shape: the IR must show them.
                 direct=direct_adjoints(facts, activity))
    given = set(draft.element_seeds) | set(draft.assigned_adjoints)
    # (as if no loop is checkpointed: settle_plan takes out those that are)
    swept = sweep_assigned(facts, activity, fused, replayed, draft.skippable, set(), given)
    return replace(draft, cell_sums=cell_sums(facts, activity, given), sweep_assigned=swept)


def settle_plan(facts, activity, options, draft, ir):
    """The :class:`Plan`, settled from the passes over ``ir``, the backward's IR built
    under ``draft`` (:class:`..emit.BackwardIR`); or a :class:`Rebuild` when it changes
    that IR's shape."""
    shared = ir.shared_loops(draft)
    if shared:
        return Rebuild(replace(draft, parallel={lp: h for lp, h in draft.parallel.items()
                                                if lp not in shared}),
                       "a parallel loop's iterations share a value: run serially")
    reads = ir.reads(draft)
    fused = draft.fused
    sites, recompute = draft.sites, draft.recompute
    if not draft.partials and not draft.snapshots:
        partials, added = choose_partials(facts, recompute, reads.ref_uses)
        snapshots = choose_snapshots(facts, reads.ref_uses, added)
        if partials or snapshots:
            aliases = {p: y for y, (p, _) in partials.items()}
            aliases.update({c: name for name, copies in snapshots.items()
                            for c in copies.values()})
            sites = Sites(facts, fused, aliases)
            recompute = Recompute(facts, fused, sites)
            draft = replace(draft, sites=sites, recompute=recompute, partials=partials,
                            added_types=added, snapshots=snapshots)
            if ir.with_reciprocals(snapshots):
                return Rebuild(draft, "a rule with a snapshot is written without the "
                                      "reciprocal")
            reads = ir.reads(draft)
    added = dict(draft.added_types)
    kept_shapes = choose_kept_shapes(facts, recompute, reads,
                                     lambda n: draft.ty(facts, n), added)
    if kept_shapes:
        aliases = dict(sites.aliases)
        aliases.update({d: x for x, ds in kept_shapes.items() for d in ds})
        sites = Sites(facts, fused, aliases)
        recompute = Recompute(facts, fused, sites)
        draft = replace(draft, sites=sites, recompute=recompute, added_types=added,
                        kept_shapes=kept_shapes)
        reads = ir.reads(draft)
    types_of = lambda n: draft.ty(facts, n)          # noqa: E731
    values = value_stacks(facts, options, recompute, sites, reads.needed, types_of)
    values, records = fit_frame_budget(facts, options, draft.parallel, values,
                                       draft.record_stacks)
    stacks, stack_of, stack_types = group_stacks(
        facts, values, records, set(draft.skippable) | set(draft.parallel),
        types_of, lambda n: sites.aliases.get(n, n))
    checkpointed = choose_checkpointed(facts, options, fused, draft.replayed,
                                       draft.parallel, values, stacks,
                                       lambda n: sites.aliases.get(n, n))
    replays = parallel_replays(facts, options, fused, draft.parallel, draft.replayed,
                               values, records, checkpointed,
                               lambda n: sites.aliases.get(n, n))
    given = set(draft.element_seeds) | set(draft.assigned_adjoints)
    if checkpointed:        # (reversed in segments: not summed over)
        draft = replace(draft, cell_sums=cell_sums(facts, activity, given, checkpointed))
    mode = getattr(options, "checkpoint", "off")
    segmented = {lp for lp, car in checkpointed.items()         # (not only guarded)
                 if mode != "off" and (mode in ("revolve", "fit") or car.marked)}
    swept = sweep_assigned(facts, activity, fused, draft.replayed, draft.skippable,
                           segmented, given)
    return replace(draft, value_stacks=values, record_stacks=records,
                   needed=frozenset(reads.needed), parallel_replay=replays,
                   stacks=stacks, stack_of=stack_of, stack_types=stack_types,
                   checkpointed=checkpointed, sweep_assigned=swept,
                   **_checkpoint_options(options, checkpointed))


def _checkpoint_options(options, checkpointed):
    """The mode, budget and snapshot count the checkpointed loops are emitted with."""
    mode = getattr(options, "checkpoint", "off")
    if not checkpointed or mode == "off":
        return {}
    budget = options.memory_budget
    if budget is None and not (mode == "revolve" and options.snapshots):
        budget = config.default_memory_budget()
    return {"checkpoint_mode": mode, "checkpoint_slots": options.snapshots,
            "memory_budget": -1 if budget is None else int(budget)}
