"""Capacities of the stacks of a CUDA backward kernel, computed at each launch.

The plan gives each stack sized at launch, per push site, the trip counts of the loops
repeating the site (:mod:`numba_adstack.ad.plan.stacks`): constants, or loops counted
here. A loop's trip count is computed on the host from the kernel's arguments when its
``range`` depends only on scalar arguments, constants and array shapes (``range(n)``,
``range(1, x.shape[0] - 1)``); the stacks then hold exactly what the launch pushes. A
``while`` loop, or a loop whose range depends on the thread or on data, counts as
``while_cap`` iterations: past it the launch reports an overflow.
"""
import operator

import numpy as np
from numba.core import ir, types

from ..ad.typeinfo import STACK_ENTRY_BYTES as _ITEMSIZE
_BINOPS = {operator.add: operator.add, operator.sub: operator.sub,
           operator.mul: operator.mul, operator.floordiv: operator.floordiv,
           operator.mod: operator.mod}


class LaunchSizing:
    """The launch-sized stacks of one backward kernel and how to size them."""

    def __init__(self, facts, plan, while_cap):
        self.while_cap = int(while_cap)
        specs = list(plan.value_stacks.values()) + list(plan.record_stacks.values())
        self.stacks = sorted((s.index, _ITEMSIZE[s.dtype], s.sizing) for s in specs
                             if s.storage == "launch")
        headers = {f[1] for _, _, sizing in self.stacks for site in sizing for f in site
                   if isinstance(f, tuple)}
        loops = {lp.header: lp for lp in facts.s.loops}
        self.counters = {h: _trip_counter(facts, loops[h]) for h in headers}

    def __bool__(self):
        return bool(self.stacks)

    def capacities(self, args):
        """``({stack index: capacity}, capped)`` for a launch with ``args``; ``capped``
        when a loop counts as ``while_cap`` iterations."""
        counts, capped = {}, False
        for h, counter in self.counters.items():
            n = None if counter is None else counter(args)
            if n is None:
                n, capped = self.while_cap, True
            counts[h] = max(int(n), 0)
        caps = {}
        for index, _, sizing in self.stacks:
            total = 0
            for site in sizing:
                k = 1
                for f in site:
                    k *= counts[f[1]] if isinstance(f, tuple) else f
                total += k
            caps[index] = max(total, 1)
        return caps, capped

    def itemsizes(self):
        return {index: size for index, size, _ in self.stacks}


def _trip_counter(facts, lp):
    """``args -> trip count`` of loop ``lp`` from the kernel's arguments, or None when the
    count is not known at launch (a while loop, a range depending on the thread or data)."""
    rl = lp.range
    if rl is None:
        return None
    if rl.array is not None:
        arr = _host_value(facts, rl.array, 0)
        return None if arr is None else (lambda args: arr(args).shape[0])
    parts = [_host_value(facts, a, 0) for a in rl.args]
    if any(p is None for p in parts):
        return None
    return lambda args: len(range(*[int(p(args)) for p in parts]))


def _host_value(facts, var, depth):
    """``args -> value`` of an IR variable computed from arguments, constants and shapes
    only, or None."""
    if depth > 30:
        return None
    e = facts.def_expr(var.name)
    if isinstance(e, ir.Var):
        return _host_value(facts, e, depth + 1)
    if isinstance(e, ir.Arg):
        t = facts.ty(var)
        if isinstance(t, (types.Integer, types.Array)):
            return lambda args, i=e.index: args[i]
        return None
    if isinstance(e, (ir.Const, ir.Global, ir.FreeVar)):
        v = e.value
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            return lambda args, v=int(v): v
        return None
    if not isinstance(e, ir.Expr):
        return None
    sub = (lambda v: _host_value(facts, v, depth + 1))
    if e.op == "binop" and e.fn in _BINOPS:
        a, b = sub(e.lhs), sub(e.rhs)
        if a is None or b is None:
            return None
        return lambda args, f=_BINOPS[e.fn]: f(a(args), b(args))
    if e.op == "cast":
        return sub(e.value)
    if e.op == "getattr" and e.attr in ("shape", "size"):
        a = sub(e.value)
        if a is None:
            return None
        return lambda args, attr=e.attr: _meta(a(args), attr)
    if e.op in ("static_getitem", "getitem"):
        a = sub(e.value)
        idx = e.index if e.op == "static_getitem" else facts.resolve_global(e.index)
        if a is None or not isinstance(idx, int):
            return None
        return lambda args, k=idx: a(args)[k]
    if e.op == "call" and not e.kws:
        fn = facts.resolve_global(e.func)
        ops = [sub(v) for v in e.args]
        if any(o is None for o in ops):
            return None
        if fn is len and len(ops) == 1:
            return lambda args: ops[0](args).shape[0]
        if fn in (min, max) and ops:
            return lambda args: fn(*[o(args) for o in ops])
        if fn is int and len(ops) == 1:
            return lambda args: int(ops[0](args))
    return None


def _meta(arr, attr):
    shape = tuple(getattr(arr, "shape"))
    return shape if attr == "shape" else int(np.prod(shape))


def round_up(n):
    """The power of two at or above ``n`` (capacities of compiled variants, so that a few
    variants serve every size)."""
    n = max(int(n), 1)
    return 1 << (n - 1).bit_length()
