"""Early seeds: the adjoint of a fused loop's sum, known before the loop runs.

When the code after a fused loop is linear in the sum it produces (``return s``,
``return c * s / n``), the adjoint of the sum is a product of factors computed before the
loop. The seed is returned as a small tree that emission renders:

* ``("ret",)``: the adjoint of the function's result; ``("zero",)``;
* ``("neg", t)``, ``("mul", t, h)``, ``("div", t, h)``, ``("sum", [t, ...])``;

where ``h`` is a *hoisted* factor: ``("static", var)`` (a constant or global),
``("var", var)`` (a variable already defined before the loop), or ``("expr", ir_expr,
{operand name: h})`` (an expression recomputed from hoisted operands).
"""
import operator

from numba.core import ir, types

from .. import rules as R
from ..facts.structure import dominates

_MAX_HOIST_DEPTH = 20
_MAX_SEED_DEPTH = 50


def early_seed(facts, lp, var):
    """The seed tree of d(result)/d(``var``), computable before ``lp`` runs, or None."""
    if var is None:
        return ("zero",)
    straight = straight_after(facts, lp)
    return seed_tree(facts, lp, straight, var, 0)


def straight_after(facts, lp):
    """The exit block of ``lp`` and the straight-line chain of top-level blocks after it."""
    straight = [lp.exits[0][1]]
    while True:
        term = facts.fir.blocks[straight[-1]].terminator
        if isinstance(term, ir.Jump) and len(facts.s.preds[term.target]) == 1 \
                and facts.s.depth(term.target) == 0:
            straight.append(term.target)
        else:
            return set(straight)


def _hoist(facts, lp, straight, v, depth):
    if depth > _MAX_HOIST_DEPTH:
        return None
    if facts.static_form(v.name) is not None:
        return ("static", v.name)
    e = facts.def_expr(v.name) if v.name not in facts.phis else None
    label = facts.def_label(v.name)
    if isinstance(e, ir.Arg):
        return ("var", v.name)
    top = facts.s.regions[None]
    if label not in lp.blocks and facts.s.depth(label) == 0 and \
            dominates(top, top.node_of(label), lp):
        return ("var", v.name)
    if label in straight and isinstance(e, (ir.Expr, ir.Var)):
        parts = {}
        for op in (e.list_vars() if isinstance(e, ir.Expr) else [e]):
            h = _hoist(facts, lp, straight, op, depth + 1)
            if h is None:
                return None
            parts[op.name] = h
        if isinstance(e, ir.Var):
            return parts[e.name]
        if e.op in ("getitem", "static_getitem"):
            vt = facts.ty(e.value)
            if not (isinstance(vt, types.BaseTuple) or (
                    isinstance(vt, types.Array) and facts.is_readonly_array(e.value.name))):
                return None
        elif e.op not in ("binop", "unary", "call", "getattr", "cast"):
            return None
        return ("expr", e, parts)
    return None


def seed_tree(facts, lp, straight, v, depth):
    if depth > _MAX_SEED_DEPTH:
        return None
    terms = []
    for label, stmt in facts.uses.get(v, ()):
        if label in lp.blocks:
            continue
        if label not in straight:
            return None
        term = _seed_term(facts, lp, straight, v, stmt, depth)
        if term is None:
            return None
        terms.append(term)
    if not terms:
        return ("zero",)
    return ("sum", terms)


def _seed_term(facts, lp, straight, v, stmt, depth):
    """The contribution of one use of ``v`` after the loop to the seed, or None."""
    if isinstance(stmt, ir.Return):
        return ("ret",)
    if not isinstance(stmt, ir.Assign):
        return None
    e, t = stmt.value, stmt.target
    if isinstance(e, ir.Var) or (isinstance(e, ir.Expr) and e.op == "cast"):
        return seed_tree(facts, lp, straight, t.name, depth + 1)
    if isinstance(e, ir.Expr) and e.op == "unary" and e.fn is operator.neg:
        s = seed_tree(facts, lp, straight, t.name, depth + 1)
        return None if s is None else ("neg", s)
    if not (isinstance(e, ir.Expr) and e.op in ("binop", "inplace_binop")):
        return None
    fn = e.fn if e.op == "binop" else R.INPLACE_TO_BINOP.get(e.fn)
    if e.lhs.name == v and e.rhs.name == v:
        return None
    other = e.rhs if e.lhs.name == v else e.lhs
    s = seed_tree(facts, lp, straight, t.name, depth + 1)
    if s is None:
        return None
    if fn is operator.add:
        return s
    if fn is operator.sub:
        return s if e.lhs.name == v else ("neg", s)
    if fn is operator.mul or (fn is operator.truediv and e.lhs.name == v):
        c = _hoist(facts, lp, straight, other, 0)
        if c is None:
            return None
        return ("mul" if fn is operator.mul else "div", s, c)
    return None
