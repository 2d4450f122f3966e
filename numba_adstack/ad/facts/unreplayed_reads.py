"""Reads of arrays whose stores the backward does not replay.

A kernel's backward (``numba_adstack.cuda``) runs after its forward launch, on the same
arrays: the stores into argument arrays are not done again (``Target.replays_store``),
so such an array holds what the kernel wrote, not what the kernel read. A read of one of
its elements, replayed, would see the written value: a wrong gradient, silently. Such a
read is allowed only where its value is not needed: when it flows, through additions,
subtractions, negations and products with (or divisions by) values that do not vary,
into stores of the same array only (``y[i] += v``, ``y[i] *= 2.0``: the seed passes
through, and nothing reads the old value). Anything else is refused, naming the read and
the fix. (A read right after a store of the same element in the same block reads the
stored value: the kernel's target forwards it before this runs.)
"""
import operator

from numba.core import ir

_ADDITIVE = (operator.add, operator.sub, operator.iadd, operator.isub)
_SCALING = (operator.mul, operator.imul, operator.truediv, operator.itruediv)


def check_reads_of_unreplayed_stores(facts, activity):
    """Refuse a read of an array the backward's replay does not store into again, where
    the read's value is used for more than passing the seed through."""
    stored = set()
    for blk in facts.fir.blocks.values():
        for stmt in blk.body:
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) and \
                    not facts.target.replays_store(facts, stmt):
                stored.add(facts.array_root(stmt.target.name))
    if not stored:
        return
    for blk in facts.fir.blocks.values():
        for stmt in blk.body:
            if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                    and stmt.value.op in ("getitem", "static_getitem")):
                continue
            root = facts.array_root(stmt.value.value.name)
            if root in stored and not _passes_through(facts, activity, stmt.target.name,
                                                      root):
                array = root.split(".")[0]
                facts.error(
                    "it reads an element of the array %r, which it also writes into, and "
                    "uses the value: the backward runs after the forward launch, when %r "
                    "holds what the kernel wrote, not what this read saw. Keep the value "
                    "in a local variable and write the array once (`v = ...; %s[i] = v`), "
                    "or read it from an array the kernel does not write"
                    % (array, array, array), stmt.loc)


def _passes_through(facts, activity, name, root):
    """Does the value ``name`` reach only stores into ``root``, through additive steps
    and scalings by values that do not vary?"""
    seen, work = set(), [name]
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        for _, use in facts.uses.get(v, ()):
            if isinstance(use, (ir.SetItem, ir.StaticSetItem)):
                if use.value.name != v or facts.array_root(use.target.name) != root:
                    return False
                continue
            if not isinstance(use, ir.Assign):
                return False
            e = use.value
            if isinstance(e, ir.Var) or (isinstance(e, ir.Expr) and (
                    e.op in ("cast", "phi") or
                    (e.op == "unary" and e.fn in (operator.neg, operator.pos)))):
                work.append(use.target.name)
                continue
            if not (isinstance(e, ir.Expr) and e.op in ("binop", "inplace_binop")):
                return False
            fn = e.fn
            other = e.rhs if e.lhs.name == v else e.lhs
            if fn in _ADDITIVE and other.name != v:
                work.append(use.target.name)
            elif fn in _SCALING and e.lhs.name == v and other.name != v and \
                    other.name not in activity.varied:
                work.append(use.target.name)
            elif fn in (operator.mul, operator.imul) and e.rhs.name == v and \
                    other.name != v and other.name not in activity.varied:
                work.append(use.target.name)
            else:
                return False
    return True
