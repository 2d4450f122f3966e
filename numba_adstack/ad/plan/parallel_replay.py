"""Parallel replay: ``prange`` loops whose forward replay runs in parallel as the primal's.

A ``prange`` loop that is neither fused nor a map loop (QuantEcon's Gini coefficient:
``i_sum[i] += abs(y[i] - y[j])`` in place) is replayed before the sweep and reversed by
it. When the replay keeps nothing of it (no value pushed and no record made inside it: the
sweep recomputes what it reads), the replay is the primal's own loop, and can run as the
primal does, with ``numba.prange``. Nothing it defines may be read after it (a value
defined in a ``prange`` body has no "last iteration" after the loop), and it carries
nothing from one iteration to the next but its counter. The sweep stays serial.
"""
from numba.core import ir

from ..typeinfo import is_float


def parallel_replays(facts, options, fused, parallel, replayed, value_stacks,
                     record_stacks, checkpointed, alias):
    """The top-level ``prange`` loops the replay runs with ``numba.prange``. ``alias``
    maps a name the plan adds (a kept derivative) to the IR value it stands for."""
    if not options.parallel or not facts.target.parallel_loops:
        return frozenset()
    out = set()
    for lp in facts.s.loops:
        rl = lp.range
        if lp.depth != 1 or rl is None or not rl.parallel or rl.array is not None \
                or lp in fused or lp in parallel or lp in replayed or lp in checkpointed:
            continue
        blocks = set(lp.blocks)
        if any(facts.def_label(alias(name)) in blocks for name in value_stacks) or \
                any(_sited_in(spec, blocks) for spec in value_stacks.values()) or \
                any(_sited_in(spec, blocks) for spec in record_stacks.values()):
            continue            # the replay pushes in it
        if _carries_or_escapes(facts, lp, blocks):
            continue
        out.add(lp)
    return frozenset(out)


def _sited_in(spec, blocks):
    return spec.block in blocks or any(h in blocks for h, _ in spec.reserves)


def _carries_or_escapes(facts, lp, blocks):
    if any(is_float(facts.ty(tgt.name)) for tgt, _ in facts.block_phis.get(lp.header, ())):
        return True             # a value carried to the next iteration
    for b in blocks:
        for stmt in facts.fir.blocks[b].body:
            if not isinstance(stmt, ir.Assign):
                continue
            for label, _ in facts.uses.get(stmt.target.name, ()):
                if label not in blocks:
                    return True
    return False
