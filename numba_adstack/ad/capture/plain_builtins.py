"""Builtins written as the operations the rules know, before typing::

    pow(a, b)                  ->  a ** b
    max(a, b, c)               ->  max(max(a, b), c)          (min likewise)
    max((a, b, c)), max([..])  ->  max(max(a, b), c)          (items written at the call)
    math.frexp(x)              ->  (math.ldexp(x, -e), e) with e = frexp_exponent(x)
    divmod(a, b)               ->  (a // b, a % b)
    sum(a, start=s)            ->  sum(a, s)

Python's ``max`` keeps the first of equal items and replaces it only by a strictly larger
one, as the nested pairs do, so the value (and which operand gets the gradient) is the
same, NaN included. ``sum``/``max``/``min`` of an array are primitives with rules of their
own (rules/array_rules.py). ``frexp``'s mantissa is ``x`` scaled by a power of two, exactly
(zero, infinities and NaN included): written so, its derivative is ``ldexp``'s, ``2**-e``.
"""
import builtins
import math
import operator

from numba.extending import overload

from numba.core import ir
from numba.core.compiler_machinery import FunctionPass, register_pass

from .ir_emitter import global_value, rewrite_statements


def frexp_exponent(x):
    """The exponent ``math.frexp(x)`` returns (an integer: nothing to differentiate)."""
    return math.frexp(x)[1]


@overload(frexp_exponent)
def _frexp_exponent(x):
    return lambda x: math.frexp(x)[1]


def _builtin(em, var):
    value = global_value(em, var)
    if value in (builtins.pow, builtins.max, builtins.min, math.frexp, builtins.divmod,
                 builtins.sum):
        return value
    return None


def _items(em, e):
    """The operands of ``max``/``min``: its arguments, or the items of the one tuple or
    list written at the call."""
    if len(e.args) == 1:
        d = em.definition(e.args[0])
        if isinstance(d, ir.Expr) and d.op in ("build_tuple", "build_list") and d.items:
            return list(d.items)
        return None
    return list(e.args) if len(e.args) > 2 else None


def _rewrite(em, stmt):
    e = stmt.value if isinstance(stmt, ir.Assign) else None
    if not (isinstance(e, ir.Expr) and e.op == "call") or e.vararg is not None:
        return None
    fn = _builtin(em, e.func)
    if fn is builtins.sum and len(e.args) == 1 and [k for k, _ in e.kws] == ["start"]:
        stmt.value = ir.Expr.call(e.func, [e.args[0], e.kws[0][1]], (), e.loc)
        return [stmt]
    if e.kws:
        return None
    if fn is builtins.pow and len(e.args) == 2:
        stmt.value = ir.Expr.binop(operator.pow, e.args[0], e.args[1], e.loc)
        return [stmt]
    if fn is math.frexp and len(e.args) == 1:
        exponent = em.call(frexp_exponent, e.args[0])
        down = em.assign(ir.Expr.unary(operator.neg, exponent, e.loc), "$builtin")
        mantissa = em.call(math.ldexp, e.args[0], down)
        stmt.value = ir.Expr.build_tuple([mantissa, exponent], e.loc)
        return em.out + [stmt]
    if fn is builtins.divmod and len(e.args) == 2:
        # (a // b, a % b), as Python defines it: the operators have their rules.
        a, b = e.args
        q = em.assign(ir.Expr.binop(operator.floordiv, a, b, e.loc), "$builtin")
        r = em.assign(ir.Expr.binop(operator.mod, a, b, e.loc), "$builtin")
        stmt.value = ir.Expr.build_tuple([q, r], e.loc)
        return em.out + [stmt]
    if fn in (builtins.max, builtins.min):
        items = _items(em, e)
        if items is None:
            return None
        acc = items[0]
        for item in items[1:-1]:
            acc = em.assign(ir.Expr.call(e.func, [acc, item], (), e.loc), "$builtin")
        stmt.value = ir.Expr.call(e.func, [acc, items[-1]], (), e.loc)
        return em.out + [stmt]
    return None


@register_pass(mutates_CFG=False, analysis_only=False)
class RewritePlainBuiltins(FunctionPass):
    """``pow``, and ``max``/``min`` of several operands, as the rules read them (see
    :mod:`.plain_builtins`)."""
    _name = "numba_adstack_rewrite_plain_builtins"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        return rewrite_statements(state, _rewrite)
