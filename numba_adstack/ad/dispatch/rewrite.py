"""The reverse-mode rewrite: typed SSA Numba IR -> Python source of the backward function.

The phases, in the order a compilation passes through them:

1. :mod:`..capture.pipeline`   the typed SSA IR of the function (njit callees inlined);
2. :mod:`..facts.ir_facts`     definitions, uses, phis, loops and regions (:mod:`..facts.structure`);
3. :mod:`..facts.activity`  which values vary with the inputs and reach the result;
4. :mod:`..facts.checks`    refusals of what cannot be differentiated;
5. :mod:`..plan`      fused and parallel loops, recomputation, kept derivatives, stacks:
   drafted, then settled from the backward's IR built under the draft
   (:class:`..emit.BackwardIR`, its reads left open);
6. :mod:`..emit`      the forward replay, the reverse sweep and their assembly.

Each phase reads the results of the earlier ones and hands on its own; the adjoint rules
of the primitives live in :mod:`..rules`, and what depends on the platform behind
:class:`..emit.target.Target`.
"""
from dataclasses import dataclass

from numba.core import types

from ..facts import activity as _activity
from ..facts.checks import check
from ..emit import BackwardIR, Names, Source, emit_backward
from ..facts.ir_facts import IRFacts
from ..plan import Rebuild, draft_plan, settle_plan
from ..plan.map_sums import fold_map_sums
from ..capture.results import float_result
from ..emit.target import CPU, AccumulatingTarget
from ..typeinfo import is_float


@dataclass
class Options:
    """What the user chose: stack capacity and storage (``ad_stack_size=None`` with
    ``storage="auto"``: stacks size themselves, see :mod:`..plan.stacks`), the
    differentiated arguments, whether ``prange`` loops run in parallel in the backward,
    the frame budget (None: ``numba_adstack.config``'s)."""
    ad_stack_size: int = None
    storage: str = "auto"
    wrt: frozenset = None
    parallel: bool = False
    frame_budget: int = None
    checked: bool = False     # boundscheck/debug: reads of adjoints checked (emit/checked.py)
    # Checkpointing of top-level time loops (plan/checkpoint.py): "auto" (past the memory
    # budget, checkpointed), "revolve" (always), "off", or "fit" (the variant a jitted
    # caller links: emit/checkpoint.py); snapshot slots (None: from the
    # budget); the budget in bytes (None: a fraction of the available memory).
    checkpoint: str = "auto"
    snapshots: int = None
    memory_budget: int = None
    # ``grad_into``: the gradients of float array arguments are added into buffers the
    # caller passes (emit.target.AccumulatingTarget).
    into: bool = False
    # A zero adjoint times an infinite partial is NaN, as IEEE products give
    # (rules/template.py, ieee_products); by default it is zero.
    ieee_products: bool = False


@dataclass
class BackwardSource:
    """The generated backward: its name, its source, the globals it needs, the helpers it
    defines (compiled first), those of them inlined into ``prange`` bodies, and the facts
    it was made from."""
    fname: str
    source: str
    globals: dict
    helpers: list
    inlined: frozenset
    facts: IRFacts
    activity: object
    plan: object


def build_backward(typed, py_func, options, target=CPU):
    """Run the phases on one typed function; return its :class:`BackwardSource`."""
    if options.into:
        target = AccumulatingTarget(options.wrt, target.global_map)
    if target.returns_value:
        typed = float_result(typed)         # a 0-d array result: its float
    typed = fold_map_sums(typed, target)
    facts = IRFacts(typed, py_func, target)
    if target.returns_value and not is_float(facts.return_type):
        hint = ""
        if isinstance(facts.return_type, (types.Integer, types.Boolean)):
            hint = " (an integer or a boolean, which has no derivative)"
        if isinstance(facts.return_type, (types.Array, types.BaseTuple)):
            hint = ("; for an array or tuple result, f.vjp(*args) gives the value and a "
                    "pullback of a cotangent shaped like it, and f.vjp_call(*args, "
                    "cotangent) the cotangents of the arguments in one call")
        facts.error("grad needs a function returning a float scalar, this one returns %s%s"
                    % (facts.return_type, hint))
    act = _activity.analyse(facts, options.wrt)
    check(facts, act)
    names = Names(target, reserved=[rl.len[:-4] for rl in facts.ranges.values()],
                  counter=len(facts.ranges))
    src = Source(facts, names)
    plan = draft_plan(facts, act, options)
    while True:     # (the IR is built again where the settled plan changes its shape)
        ir = BackwardIR(facts, act, plan, names, src)
        plan = settle_plan(facts, act, options, plan, ir)
        if not isinstance(plan, Rebuild):
            break
        plan = plan.draft
    out = emit_backward(facts, act, plan, names, src, options.wrt, options.checked, ir,
                        ieee_products=options.ieee_products)
    return BackwardSource(out.fname, out.source, names.globals, list(out.helpers),
                          out.inlined, facts, act, plan)

