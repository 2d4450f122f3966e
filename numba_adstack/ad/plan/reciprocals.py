"""Reciprocals the primal computes, for rules that divide by the same value.

The Lennard-Jones chain computes ``r = s ** 0.5`` and then ``ir = 1. / r``; the root's
derivative is ``0.5 / r``. With ``ir`` at hand it is ``0.5 * ir``: a multiply in place of
a division. A rule term ``(c / {y})`` or ``(c / {k})`` becomes ``(c * q)`` when ``q = 1. /
v`` of the same value ``v`` is still in its variable when the rule runs: both are defined
once per reversal unit (never overwritten before the sweep reads them, never on a stack),
and ``q``'s block runs whenever ``v``'s does (it follows it through unconditional jumps,
entering no loop).
"""
import operator

from numba.core import ir

from ..typeinfo import is_float

_MAX_CHAIN = 64


def reciprocals(facts, sites):
    """``{v: q}``: ``q = 1. / v`` (``v`` through copies) that rules dividing by ``v`` may
    multiply by instead."""
    headers = {lp.header for lp in facts.s.loops}
    out = {}
    for q, (label, stmt) in sorted(facts.defs.items()):
        e = stmt.value
        if not (isinstance(e, ir.Expr) and e.op == "binop" and e.fn is operator.truediv
                and is_float(facts.ty(q)) and is_float(facts.ty(e.rhs.name))):
            continue
        one = facts.static_form(e.lhs.name)
        if one is None or one[0] != "const" or one[1] != 1:
            continue
        v = copy_root(facts, e.rhs.name)
        if v in out or not (sites.once(q) and sites.once(v)):
            continue
        if _always_reaches(facts, facts.def_label(v), label, headers):
            out[v] = q
    return out


def copy_root(facts, name):
    """The value ``name`` copies (through ``a = b`` assignments), or ``name``."""
    for _ in range(_MAX_CHAIN):
        d = facts.def_expr(name) if name not in facts.phis else None
        if not isinstance(d, ir.Var):
            return name
        name = d.name
    return name


def _always_reaches(facts, start, target, headers):
    b = start
    for _ in range(_MAX_CHAIN):
        if b == target:
            return True
        term = facts.fir.blocks[b].terminator
        if not isinstance(term, ir.Jump) or term.target in headers:
            return False
        b = term.target
    return False
