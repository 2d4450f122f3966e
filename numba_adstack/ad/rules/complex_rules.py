"""Adjoint rules of complex arithmetic, for a real result of real inputs (JAX's reading).

A complex value is a pair of reals; its adjoint is ``z_bar = dL/dRe z + 1j * dL/dIm z``.
For ``w = f(z)`` holomorphic, ``z_bar += w_bar * conj(f'(z))``; for a real ``w`` of a
complex ``z`` (``abs``, ``.real``), ``z_bar += w_bar * (dw/dRe z + 1j * dw/dIm z)``. A real
operand of an operation with a complex result takes the real part of its contribution
(the emitter adds ``.real``): ``complex(a, b)`` is ``a + 1j * b``, so ``b_bar += Re(w_bar *
conj(1j))``, the imaginary part of ``w_bar``.

These tables are used where an operand or the result of a primitive is complex; the tables
of :mod:`.scalar` serve floats. Each rule is linear in ``{g}`` over the reals
(``.conjugate()`` and ``.real`` of a term linear in ``{g}`` count as linear).
"""
import cmath
import operator

import numpy as np
from numba.core import ir, types

from .scalar import INPLACE_TO_BINOP
from .template import RuleTable, check_linear

_CONJ_MUL = ("{g} * {1}.conjugate()", "{g} * {0}.conjugate()")
# w = a / b: a_bar += g * conj(1 / b), b_bar += g * conj(-w / b).
_CONJ_DIV = ("{g} / {1}.conjugate()", "-{g} * ({y} / {1}).conjugate()")
# w = a ** b: as the real rule, 0 where b == 0 (for a) and where a == 0 (for b).
_CONJ_POW = ("{g} * ({1} * {0} ** ({1} - 1.0 + ({1} == 0.0))).conjugate()",
             "{g} * ({y} * np.log({0} + ({0} == 0.0))).conjugate()")
# |z|: z / |z|, 0 at 0 (as JAX).
_ABS = ("{g} * ({0} / ({y} + ({y} == 0.0)))",)
# arg z = atan2(Im z, Re z): (-Im z + 1j Re z) / |z|^2, 0 at 0.
_PHASE = ("{g} * (1j * {0} / (abs({0}) ** 2 + ({0} == 0.0)))",)

COMPLEX_BINOP_RULES = RuleTable({
    operator.add: ("{g}", "{g}"),
    operator.sub: ("{g}", "-{g}"),
    operator.mul: _CONJ_MUL,
    operator.truediv: _CONJ_DIV,
    operator.pow: _CONJ_POW,
})
COMPLEX_UNARY_RULES = RuleTable({
    operator.neg: ("-{g}",),
    operator.pos: ("{g}",),
})

_CONJ = ("{g}.conjugate()",)
_REAL = ("{g}",)
_IMAG = ("{g} * 1j",)

COMPLEX_CALL_RULES = RuleTable({
    # complex(a, b) = a + 1j * b; of one complex operand, the identity.
    complex: ("{g}", "{g} * (-1j)"),
    np.complex128: ("{g}",),
    np.complex64: ("{g}",),
    abs: _ABS, np.abs: _ABS, np.absolute: _ABS,
    np.real: _REAL,
    np.imag: _IMAG,
    np.conj: _CONJ, np.conjugate: _CONJ,
    cmath.phase: _PHASE, np.angle: _PHASE,
    cmath.exp: ("{g} * {y}.conjugate()",), np.exp: ("{g} * {y}.conjugate()",),
    cmath.log: ("{g} / {0}.conjugate()",), np.log: ("{g} / {0}.conjugate()",),
    cmath.sqrt: ("{g} * (0.5 / {y}).conjugate()",),
    np.sqrt: ("{g} * (0.5 / {y}).conjugate()",),
    cmath.sin: ("{g} * np.cos({0}).conjugate()",), np.sin: ("{g} * np.cos({0}).conjugate()",),
    cmath.cos: ("-{g} * np.sin({0}).conjugate()",),
    np.cos: ("-{g} * np.sin({0}).conjugate()",),
    cmath.tan: ("{g} * (1.0 + {y} * {y}).conjugate()",),
    cmath.sinh: ("{g} * np.cosh({0}).conjugate()",),
    cmath.cosh: ("{g} * np.sinh({0}).conjugate()",),
    cmath.tanh: ("{g} * (1.0 - {y} * {y}).conjugate()",),
    # rect(r, phi) = r e^{i phi}: r_bar += Re(g conj(e^{i phi})), phi_bar += Re(g conj(i w)).
    cmath.rect: ("{g} * ({y} / ({0} + ({0} == 0.0))).conjugate()",
                 "{g} * (1j * {y}).conjugate()"),
    np.square: ("{g} * (2.0 * {0}).conjugate()",),
    np.multiply: _CONJ_MUL, np.divide: _CONJ_DIV, np.true_divide: _CONJ_DIV,
    np.add: ("{g}", "{g}"), np.subtract: ("{g}", "-{g}"), np.negative: ("-{g}",),
    np.power: _CONJ_POW,
})
for _fn in (np.sum, np.prod, np.mean):
    COMPLEX_CALL_RULES.setdefault(_fn, ("{g}",))     # of one complex number: itself
for _table, _fn in ((COMPLEX_BINOP_RULES, operator.add), (COMPLEX_BINOP_RULES, operator.sub),
                    (COMPLEX_BINOP_RULES, operator.mul),
                    (COMPLEX_BINOP_RULES, operator.truediv),
                    (COMPLEX_BINOP_RULES, operator.pow), (COMPLEX_UNARY_RULES, operator.neg)):
    COMPLEX_CALL_RULES.setdefault(_fn, _table[_fn])   # operator.mul(a, b)

#: Attributes of a complex number: ``.real``, ``.imag``, and the method ``.conjugate()``.
COMPLEX_ATTRIBUTE_RULES = RuleTable({"real": _REAL, "imag": _IMAG, "conjugate": _CONJ})

for _table, _name in ((COMPLEX_CALL_RULES, "COMPLEX_CALL_RULES"),
                      (COMPLEX_BINOP_RULES, "COMPLEX_BINOP_RULES"),
                      (COMPLEX_UNARY_RULES, "COMPLEX_UNARY_RULES"),
                      (COMPLEX_ATTRIBUTE_RULES, "COMPLEX_ATTRIBUTE_RULES")):
    check_linear(_table, "rules/complex_rules.py " + _name)


def complex_rule(facts, e):
    """``(rule, operands, fn)`` of the expression ``e`` where an operand or its result is
    complex; None where there is no complex rule (the checks refuse it)."""
    found = _complex_rule(facts, e)
    if found is None:
        return None
    ops = [v for v in found[1] if isinstance(v, ir.Var)]
    if any(isinstance(facts.ty(v.name), types.Array) for v in ops):
        return None             # complex arrays: the element-wise rules
    return found


def _complex_rule(facts, e):
    if not isinstance(e, ir.Expr):
        return None
    if e.op in ("binop", "inplace_binop"):
        fn = e.fn if e.op == "binop" else INPLACE_TO_BINOP.get(e.fn, e.immutable_fn)
        rule = COMPLEX_BINOP_RULES.get(fn)
        return None if rule is None else (rule, [e.lhs, e.rhs], fn)
    if e.op == "unary":
        rule = COMPLEX_UNARY_RULES.get(e.fn)
        return None if rule is None else (rule, [e.value], e.fn)
    if e.op == "getattr" and e.attr in ("real", "imag"):
        return COMPLEX_ATTRIBUTE_RULES[e.attr], [e.value], e.attr
    if e.op != "call" or e.kws or e.vararg is not None:
        return None
    fn = facts.resolve_global(e.func)
    if fn is None:
        d = facts.def_expr(e.func.name)
        if isinstance(d, ir.Expr) and d.op == "getattr" and d.attr == "conjugate" \
                and not e.args:
            return COMPLEX_ATTRIBUTE_RULES["conjugate"], [d.value], "conjugate"
        return None
    try:
        rule = COMPLEX_CALL_RULES.get(fn)
    except TypeError:           # an unhashable callee
        return None
    if rule is None or len(rule) != len(e.args):
        if fn is complex and len(e.args) == 1:
            return rule[:1], list(e.args), fn
        return None
    return rule, list(e.args), fn
