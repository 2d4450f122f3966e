"""Builtins written as the operations the rules know, before typing::

    pow(a, b)                  ->  a ** b
    max(a, b, c)               ->  max(max(a, b), c)          (min likewise)
    max((a, b, c)), max([..])  ->  max(max(a, b), c)          (items written at the call)
    math.frexp(x)              ->  (math.ldexp(x, -e), e) with e = frexp_exponent(x)
    divmod(a, b)               ->  (a // b, a % b)
    cmath.polar(z)             ->  (abs(z), cmath.phase(z))
    sum(a, start=s)            ->  sum(a, s)

Python's ``max`` keeps the first of equal items and replaces it only by a strictly larger
one, as the nested pairs do, so the value (and which operand gets the gradient) is the
same, NaN included. ``sum``/``max``/``min`` of an array are primitives with rules of their
own (rules/array_rules.py). ``frexp``'s mantissa is ``x`` scaled by a power of two, exactly
(zero, infinities and NaN included): written so, its derivative is ``ldexp``'s, ``2**-e``.
"""
import builtins
import cmath
import math
import operator

from numba.extending import overload

from numba.core import ir
from numba.core.compiler_machinery import FunctionPass, register_pass

from numba.core import types

from .call_registry import register_call_rewriter
from .ir_emitter import global_value, rewrite_statements
from .library_calls import Implementation


def frexp_exponent(x):
    """The exponent ``math.frexp(x)`` returns (an integer: nothing to differentiate)."""
    return math.frexp(x)[1]


@overload(frexp_exponent)
def _frexp_exponent(x):
    return lambda x: math.frexp(x)[1]


def builtin_sum(iterable, start=0):
    """``sum`` of a list or tuple of numbers, as Numba's own implementation computes it;
    inlined, so that the rewrite differentiates its loop over the items."""
    acc = start
    for x in iterable:
        acc = acc + x
    return acc


def builtin_max(iterable):
    """``max`` of a list or tuple of numbers, as Numba's own implementation computes it
    (the first of equal items; an item replaces it only when strictly larger)."""
    n = len(iterable)
    if n == 0:
        raise ValueError("max() arg is an empty sequence")
    acc = iterable[0]
    for k in range(1, n):
        if iterable[k] > acc:
            acc = iterable[k]
    return acc


def builtin_min(iterable):
    """``min`` of a list or tuple of numbers, as Numba's own implementation computes it."""
    n = len(iterable)
    if n == 0:
        raise ValueError("min() arg is an empty sequence")
    acc = iterable[0]
    for k in range(1, n):
        if iterable[k] < acc:
            acc = iterable[k]
    return acc


def builtin_list(iterable):
    """``list(a)``: a list made in the function, item by item (its adjoint follows)."""
    out = []
    for v in iterable:
        out.append(v)
    return out


_IMPLEMENTATIONS = {builtins.sum: builtin_sum, builtins.max: builtin_max,
                    builtins.min: builtin_min, builtins.list: builtin_list}
_SEQUENCES = (types.List, types.ListType, types.UniTuple)
# (a tuple argument is taken apart before this: its sum is that of the tuple built again)


def _builtin_of_sequence(state, block, i, expr, called, defined_value, tuple_items):
    """``sum(L)``, ``sum(L, start)``, ``max(L)``, ``min(L)`` of a list made in the
    function (``[...]``, a comprehension, ``list(...)``) or passed in (a list or
    homogeneous tuple argument) call :func:`builtin_sum`..., inlined (``sum``, ``max``
    and ``min`` of an array keep their rules); ``list(a)`` of an array calls
    :func:`builtin_list`."""
    impl = next((f for fn, f in _IMPLEMENTATIONS.items() if called is fn), None)
    if impl is None or expr.vararg is not None or not expr.args or \
            (called is not builtins.sum and (len(expr.args) != 1 or expr.kws)):
        return False
    d = defined_value(expr.args[0])
    if called is builtins.list:
        # list(a) of an array: the items the adjoint of the list follows
        if not (isinstance(d, ir.Arg) and d.index < len(state.args) and
                isinstance(state.args[d.index], types.Array) and state.args[d.index].ndim == 1
                or isinstance(d, ir.Expr) and d.op in ("binop", "unary", "call",
                                                       "getitem", "static_getitem")):
            return False
        return _call_implementation(state, block, i, expr, impl)
    if called is not builtins.sum and isinstance(d, ir.Expr) and d.op == "build_list" \
            and d.items:
        return False            # max([a, b, c]): nested max (RewritePlainBuiltins)
    if called is builtins.sum and isinstance(d, ir.Expr) and d.op == "build_tuple" \
            and d.items and len(expr.args) < 3:
        # sum((a, b, c)[, start]): ((start + a) + b) + c, added as written
        stmt = block.body[i]
        start = expr.args[1] if len(expr.args) == 2 else \
            dict(expr.kws).get("start")
        acc, new = start, []
        for item in d.items:
            if acc is None:
                acc = item
                continue
            v = block.scope.redefine("$builtin_sum", expr.loc)
            new.append(ir.Assign(ir.Expr.binop(operator.add, acc, item, expr.loc), v,
                                 expr.loc))
            state.func_ir._definitions[v.name].append(new[-1].value)
            acc = v
        defs = state.func_ir._definitions[stmt.target.name]
        defs.remove(expr)
        defs.append(acc)
        block.body[i:i + 1] = new + [ir.Assign(acc, stmt.target, expr.loc)]
        return True
    made = isinstance(d, ir.Expr) and (d.op == "build_list" or (
        d.op == "call" and defined_value(d.func) is not None and
        getattr(defined_value(d.func), "value", None) is builtins.list))
    passed = isinstance(d, ir.Arg) and d.index < len(state.args) and \
        isinstance(state.args[d.index], _SEQUENCES)
    if not (made or passed):
        return False
    return _call_implementation(state, block, i, expr, impl)


def _call_implementation(state, block, i, expr, impl):
    """The call at ``block.body[i]`` calls ``impl`` (inlined by the capture)."""
    var = block.scope.redefine("$" + impl.__name__, expr.loc)
    value = ir.Global(impl.__name__, Implementation(impl), expr.loc)
    block.body.insert(i, ir.Assign(value, var, expr.loc))
    state.func_ir._definitions[var.name].append(value)
    expr.func = var
    return True


register_call_rewriter(_builtin_of_sequence)


def _builtin(em, var):
    value = global_value(em, var)
    if value in (builtins.pow, builtins.max, builtins.min, math.frexp, builtins.divmod,
                 builtins.sum, cmath.polar):
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
    if fn is cmath.polar and len(e.args) == 1:
        # (the complex rules have abs and phase: the tuple is built in the function)
        stmt.value = ir.Expr.build_tuple([em.call(builtins.abs, e.args[0]),
                                          em.call(cmath.phase, e.args[0])], e.loc)
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
