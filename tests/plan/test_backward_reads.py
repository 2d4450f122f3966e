"""The plan is settled from the backward's IR built under its draft (emit/reads.py): the
reads it finds under a kept partial, a snapshot or a kept shape by the passes over that
IR are those of the IR built again under the settled plan; the final backward refuses a
read the plan does not keep. Lowered under the settled plan (emit/lowering.py), the IR is
the backward that emission under that plan writes."""
import ast
import re
import math
from dataclasses import replace

import numpy as np
import pytest
from numba import typeof

from numba_adstack.ad.capture.pipeline import typed_ir
from numba_adstack.ad.dispatch.rewrite import Options, build_backward
from numba_adstack.ad.emit import BackwardIR, Names, Source, emit_backward
from numba_adstack.ad.emit.lowering import lowerable
from numba_adstack.ad.plan import draft_plan, settle_plan

from conftest import check_fd


def kept_partial(x, n):
    s = 0.0
    v = x
    for _ in range(n):
        v = math.sin(v) * 1.1       # the sweep reads v only for sin: cos(v) is kept
        s += v
    return s


def snapshot(w0, x, n):
    w = w0.copy()
    s = 0.0
    for _ in range(n):
        z = x * w                   # reads w, which the next line writes in place
        s += np.sum(np.sin(z))
        w -= 0.1 * z
    return s + np.sum(w * w)


def kept_shape(u0, k, n):
    u = u0.copy()
    for _ in range(n):
        lap = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
               - 4.0 * u[1:-1, 1:-1])
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + k * lap
    return np.sum(u * u)


CASES = {
    "partials": (kept_partial, (0.3, 7)),
    "snapshots": (snapshot, (np.linspace(0.1, 0.9, 5), np.linspace(1.0, 2.0, 5), 4)),
    "kept_shapes": (kept_shape, (np.linspace(0.0, 1.0, 36).reshape(6, 6), 0.1, 3)),
}
OPTIONS = Options(checkpoint="off")


@pytest.fixture(scope="module", params=sorted(CASES))
def settled(request):
    fn, args = CASES[request.param]
    typed = typed_ir(fn, tuple(typeof(a) for a in args))
    rw = build_backward(typed, fn, OPTIONS)
    return request.param, rw


def _fresh(facts):
    names = Names(facts.target)
    return names, Source(facts, names)


def test_reads_settled_from_the_draft_are_those_under_the_settled_plan(settled):
    kind, rw = settled
    facts, act, plan = rw.facts, rw.activity, rw.plan
    assert getattr(plan, kind), "the case no longer exercises %s" % kind
    names, src = _fresh(facts)
    from_draft = BackwardIR(facts, act, draft_plan(facts, act, OPTIONS), names, src)
    unstacked = replace(plan, value_stacks={}, stacks={}, stack_of={}, stack_types={},
                        sweep_assigned={})
    rebuilt = BackwardIR(facts, act, unstacked, names, src)
    # (the rebuilt IR reads the partials, copies and extents itself: resolved as they are)
    as_built = replace(plan, partials={}, snapshots={}, kept_shapes={})
    got, want = from_draft.reads(plan), rebuilt.reads(as_built)
    assert got.needed == want.needed == set(plan.needed)
    assert (got.for_shape, got.for_values) == (want.for_shape, want.for_values)


def test_a_read_the_plan_does_not_keep_is_refused(settled):
    kind, rw = settled
    names, src = _fresh(rw.facts)
    with pytest.raises(AssertionError, match="the sweep reads .* which the plan does not"):
        emit_backward(rw.facts, rw.activity, replace(rw.plan, needed=frozenset()),
                      names, src)


def while_break(x, y, n):
    """Values kept in a ``while`` loop left by ``break``, a branch in it (records)."""
    s = 0.0
    k = 0
    while True:
        if k % 3 == 0:
            s = s * 0.9 + x * s * s
        else:
            s = s + y / (1.0 + s * s)
        k += 1
        if k >= n:
            break
    return s


def guarded(x, y, n):
    """A top-level loop keeping its history, guarded against the memory budget."""
    s = 0.0
    for i in range(n):
        s = (s + x) * s * 0.5 + y * i
    return s


LOWERED = {"while_break": (while_break, (0.7, 0.3, 9)), "guarded": (guarded, (0.7, 0.3, 6)),
           "kept_partial": CASES["partials"], "snapshot": CASES["snapshots"],
           "kept_shape": CASES["kept_shapes"]}


def _normal(source):
    """The syntax tree of ``source``, numbers in names aside (each emission numbers its
    temporaries on from where the one before left off)."""
    return re.sub(r"'[^']*'", lambda m: re.sub(r"\d+", "N", m.group(0)),
                  ast.dump(ast.parse(source)))


@pytest.mark.parametrize("name", sorted(LOWERED))
def test_the_lowered_ir_is_the_backward_emitted_under_the_settled_plan(name):
    fn, args = LOWERED[name]
    options = Options()
    typed = typed_ir(fn, tuple(typeof(a) for a in args))
    rw = build_backward(typed, fn, options)
    facts, act = rw.facts, rw.activity
    names = Names(facts.target, reserved=[rl.len[:-4] for rl in facts.ranges.values()],
                  counter=len(facts.ranges))
    src = Source(facts, names)
    draft = draft_plan(facts, act, options)
    ir = BackwardIR(facts, act, draft, names, src)
    plan = settle_plan(facts, act, options, draft, ir)
    assert plan.value_stacks and lowerable(facts, ir, plan)
    if name == "guarded":
        assert plan.checkpointed and plan.checkpoint_mode == "auto"
    if name in ("kept_partial", "snapshot", "kept_shape"):     # (the draft's variants
        assert getattr(plan, {"kept_partial": "partials", "snapshot": "snapshots",  # chosen)
                              "kept_shape": "kept_shapes"}[name])
    again = emit_backward(facts, act, plan, names, src)
    lowered = emit_backward(facts, act, plan, names, src, ir=ir)
    assert _normal(lowered.source) == _normal(again.source)
    assert "push(" in lowered.source and "pop(" in lowered.source


def test_a_lowered_backward_gradient():
    import numba_adstack as nad
    fn, args = LOWERED["while_break"]
    check_fd(nad.grad_jit(fn), *args)
