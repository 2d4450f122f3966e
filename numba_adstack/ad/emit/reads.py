"""The primal values the sweep reads, as nodes of the backward's IR, and the passes that
settle the plan from them.

Built under a draft plan (:func:`..emit.backward_ir`), the backward holds each read of a
primal value as a :class:`Read` node: which value, for which rule operand, whether only
for its shape, within which rule application. Where the sweep finds the value (still in
its variable, recomputed, or kept on a stack) is left open. :func:`reads_of` resolves
every read under a plan, the draft's or one the plan settles from it, and gives the
plan's :class:`..plan.Reads`:

* a kept partial replaces the reads of its application by one read of the partial;
* a snapshot makes the reads of its application read the copy;
* a kept shape makes a read for the shape read the kept extents;
* a value recomputed is read through the values its definition reads.

:func:`shared_assignments` finds the parallel loops whose iteration would assign a value
from before the loop (restoring an input recomputed in the sweep): they run serially.
"""
import ast
from dataclasses import dataclass

from numba.core import ir

from ..plan import Reads


@dataclass(frozen=True)
class PrimalRead:
    value: str              # the IR name read
    use: object = None      # (application, operand slot) it is read for, or None
    shape: bool = False     # read only for its shape
    application: str = None  # the rule application reading it (its result's name)
    reciprocal: bool = False  # that application is written with a kept reciprocal
    restores_input: bool = False  # read as an input a loop restores: assigned to its
    #                               variable unless it is still there (restore_inputs)
    shared: object = None   # the parallel loop whose iteration would then assign a value
    #                         from before the loop
    kept_partial: bool = False  # the read of the application's kept partial, where the
    #                             plan keeps it (lowering.Choice)


class Read(ast.expr):
    """A read of a primal value, in the IR built under a draft plan."""
    _fields = ("read",)

    def __init__(self, read):
        super().__init__()
        self.read = read


def reads_of(raw, facts, src, plan):
    """:class:`..plan.Reads` of the reads ``raw`` (those of an IR, as it was built)
    under ``plan``."""
    reads = Reads(set(), {}, set())
    sites, recompute = plan.sites, plan.recompute

    def visit(name, use, shape):
        if src.static(name) is not None:
            return
        reads.ref_uses.setdefault(name, set()).add(use)
        if sites.once(name):
            return
        if recompute.is_remat(name):
            e = facts.def_expr(name)
            if isinstance(e, ir.Var):
                visit(e.name, use, False)
            elif isinstance(e, ir.Expr):
                src.expr(e, lambda v: operand(v, use))
            return
        reads.needed.add(name)
        (reads.for_shape if shape else reads.for_values).add(name)

    def operand(var, use):
        if isinstance(var, (ir.Var, str)):
            visit(var if isinstance(var, str) else var.name, use, False)
        return "_"

    partials = set()
    for r in raw:
        app = r.application
        if r.kept_partial:
            continue        # (read below where the plan keeps the partial)
        if app in plan.partials:
            partials.add(app)
            continue
        if r.shape and r.value in plan.kept_shapes:
            for d in plan.kept_shapes[r.value]:
                visit(d, None, False)
            continue
        visit(read_value(r, plan), r.use, r.shape)
    for app in sorted(partials):
        visit(plan.partials[app][0], None, False)
    return reads


def read_value(r, plan):
    """The value read ``r`` reads under ``plan``: the copy a snapshot of its application
    made of it, or the value itself (a read for the shape reads the array itself)."""
    if r.shape or r.application is None or r.kept_partial:
        return r.value
    return plan.snapshots.get(r.application, {}).get(r.value, r.value)


def written_with_reciprocals(raw, snapshots):
    """The applications with snapshots in ``snapshots`` that the IR writes with a kept
    reciprocal: their reads with a snapshot are those of the plain rule (the IR is built
    again with the snapshots)."""
    return {r.application for r in raw if r.reciprocal and r.application in snapshots}


def shared_assignments(raw, plan):
    """The parallel loops whose iteration assigns a value from before the loop (an input
    it restores, recomputed: see :meth:`..emit.fused.Fused.restore_inputs`)."""
    out = set()
    for r in raw:
        # (an input still in its variable, or kept, is not assigned: see restore_inputs)
        if r.shared is not None and not plan.sites.once(r.value) \
                and plan.recompute.is_remat(r.value):
            out.add(r.shared)
    return out
