"""Argument adjoints assigned element by element rather than zeroed and added into.

``total += w[i] * avg[i]``: when a loop of sums reads an argument array once per
iteration, at its index, and nothing else reads the array, reversing iteration ``i``
gives ``w_bar[i]`` its one contribution. The adjoint is then made with ``np.empty_like``,
the elements the loop does not reach (from its trip count on) are set to zero before it,
and each iteration assigns its element: no pass over memory to zero the array first, and
no read of it back.
"""
from numba.core import ir, types

from ..typeinfo import is_float, is_float_array
from .read_seeds import plain_reading_loop, uses_of_array
from .replay import _is_index


def assigned_adjoints(facts, activity, fused):
    """``{argument array: the fused loop that assigns each element of its adjoint}``."""
    if not facts.target.fuses_loops:
        return {}
    out = {}
    for lp in fused:
        if not plain_reading_loop(facts, lp):
            continue
        for b in lp.blocks:
            if facts.s.enclosing(b)[0] is not lp:
                continue
            for stmt in facts.fir.blocks[b].body:
                e = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(e, ir.Expr) and e.op == "getitem"
                        and isinstance(facts.ty(e.value), types.Array)
                        and is_float(facts.ty(stmt.target.name))
                        and stmt.target.name in activity.useful):
                    continue
                root = facts.array_root(e.value.name)
                if root not in facts.arg_vars or root in out \
                        or not is_float_array(facts.ty(root)) or facts.ty(root).ndim != 1:
                    continue
                aliases, stores, reads = uses_of_array(facts, root)
                if aliases is not None and not stores and reads == [stmt] \
                        and _is_index(facts, lp.range, e.index.name):
                    out[root] = lp
    return out
