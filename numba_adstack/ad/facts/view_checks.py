"""Refusals of writes into memory that the rewrite cannot follow: arrays read out of lists
and dicts, stores through ``.flat`` left for after typing. (A write into memory that two
names with adjoints of their own may name, a call's view among them, is the memory
model's: facts/memory.py.)

An array put into a list or a dict is memory the rewrite no longer follows: an array read
out of one is a value of its own to it. A write into such an array is refused where the
gradient reads it or what it may be. A store through ``.flat`` of an array whose number of
dimensions is known only once typed (:mod:`..capture.writes` rewrites the others) is refused where
the gradient reads the array.
"""
from numba.core import ir, types

from .memory import array_writes


def check_views(facts, activity):
    writes = list(array_writes(facts))
    active = activity.useful_roots | activity.varied
    _check_flat_stores(facts, active, writes)
    _check_container_writes(facts, active, writes)


def _check_flat_stores(facts, active, writes):
    for _, _, target, stmt in writes:
        d = facts.def_expr(target.name)
        if isinstance(facts.ty(target), types.NumpyFlatType) and isinstance(d, ir.Expr) \
                and d.op == "getattr" and (facts.array_root(d.value.name) in active
                                           or stmt.value.name in active):
            facts.error("a store through `.flat` of %r, whose number of dimensions is "
                        "known only once typed: store by its indices (`a[i, j] = v`), or "
                        "make it with a literal shape first" % d.value.name, stmt.loc)


def _check_container_writes(facts, active, writes):
    """Writes into arrays read out of lists and dicts, where an array put into one, or
    the array written, is read by the gradient."""
    escaped = _put_in_containers(facts)
    if not escaped:
        return
    for _, _, target, stmt in writes:
        d = facts.def_expr(facts.array_root(target.name))
        if not (isinstance(d, ir.Expr) and d.op in ("getitem", "static_getitem")
                and isinstance(facts.ty(d.value), _CONTAINERS)):
            continue
        if escaped & active or facts.array_root(target.name) in active:
            facts.error("writing into an array read out of %r, a %s: the rewrite does "
                        "not follow the arrays put into it (%s); write into the array by "
                        "its own name, or keep the arrays in a tuple"
                        % (d.value.name, facts.ty(d.value),
                           ", ".join(repr(a) for a in sorted(escaped)
                                     if not a.startswith("$")) or "arrays it computed"),
                        stmt.loc)


_CONTAINERS = (types.List, types.ListType, types.DictType, types.Set)


def _put_in_containers(facts):
    """Roots of the arrays put into lists or dicts (built with them, appended, stored)."""
    out = set()
    for blk in facts.fir.blocks.values():
        for stmt in blk.body:
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) and isinstance(
                    facts.ty(stmt.target), _CONTAINERS):
                vals = [stmt.value]
            elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and \
                    stmt.value.op in ("build_list", "build_map", "build_set", "call"):
                e = stmt.value
                if e.op == "call":
                    f = facts.def_expr(e.func.name)
                    if not (isinstance(f, ir.Expr) and f.op == "getattr" and
                            isinstance(facts.ty(f.value), _CONTAINERS)):
                        continue
                    vals = list(e.args)
                elif e.op == "build_map":
                    vals = [v for _, v in e.items]
                else:
                    vals = list(e.items)
            else:
                continue
            out |= {facts.array_root(v.name) for v in vals
                    if isinstance(v, ir.Var) and isinstance(facts.ty(v), types.Array)}
    return out
