"""Scalar adjoint rules: one entry per primitive on floats.

A rule gives, for each operand of ``y = f(a0, a1, ...)``, the expression of that operand's
adjoint contribution as Python source. Placeholders: ``{g}`` the adjoint of ``y``, ``{y}``
the primal value of ``y``, ``{0}``, ``{1}``... the primal operands. ``None`` means the operand
gets no gradient (for example the exponent of ``floor``). Generated code sees the modules
``math`` and ``np``; rules use ``math`` so that the same source compiles for every target.

Adding a primitive is adding one line here: the same line gives its adjoint in reverse
mode, its tangent in forward mode (``{g}`` the operand's tangent) and, for NumPy ufuncs,
its rule on arrays (rules/array_rules.py lifts it, rules/template.py). Each template is
parsed once, into a tree, and must be linear in ``{g}`` (checked at import). Write it as
``{g} * (...)``: the part in parentheses reads only primal values, so it is computed off
the chain of adjoint updates that runs through a loop, and the adjoint pays one multiply
per step.

A rule whose partial may be infinite or NaN where its operands are finite (``sqrt`` and
``log`` at 0, a quotient by 0, ``asin`` at 1, a pole of ``lgamma``) is written
``zero_safe("{g} * (...)")``: its contribution is exactly 0 where the adjoint is, rather
than ``0 * inf = NaN`` (rules/template.py). The others are plain products: their partial
is finite wherever the operands are, and a loop's adjoint chain pays nothing for them.
"""
import math
import operator

import numpy as np

from .special import digamma, trigamma
from .template import RuleTable, check_linear, zero_safe
from .vjp_elementwise import zmul, zmul_select

# x ** y: as JAX, d/dx is 0 where y == 0 (not 0 * x ** -1, NaN at x == 0) and d/dy is 0
# where x == 0 (log(0) * 0 ** y is NaN): log reads 1 there. Comparisons added as numbers,
# not conditionals, keep the rule valid element-wise on arrays.
_POW = (zero_safe("{g} * ({1} * {0} ** ({1} - 1.0 + ({1} == 0.0)))"),
        zero_safe("{g} * ({y} * math.log({0} + ({0} == 0.0)))"))

# Rules by Python function object. NumPy ufuncs map to the same rule as their math twin.
CALL_RULES = RuleTable({
    math.sin: ("{g} * math.cos({0})",),
    math.cos: ("-{g} * math.sin({0})",),
    math.tan: ("{g} * (1.0 + {y} * {y})",),
    math.asin: (zero_safe("{g} * (1.0 / math.sqrt(1.0 - {0} * {0}))"),),
    math.acos: (zero_safe("{g} * (-1.0 / math.sqrt(1.0 - {0} * {0}))"),),
    math.atan: ("{g} * (1.0 / (1.0 + {0} * {0}))",),
    math.atan2: (zero_safe("{g} * ({1} / ({0} * {0} + {1} * {1}))"),
                 zero_safe("{g} * (-{0} / ({0} * {0} + {1} * {1}))")),
    math.sinh: ("{g} * math.cosh({0})",),
    math.cosh: ("{g} * math.sinh({0})",),
    math.tanh: ("{g} * (1.0 - {y} * {y})",),
    math.asinh: ("{g} * (1.0 / math.sqrt({0} * {0} + 1.0))",),
    math.acosh: (zero_safe("{g} * (1.0 / math.sqrt({0} * {0} - 1.0))"),),
    math.atanh: (zero_safe("{g} * (1.0 / (1.0 - {0} * {0}))"),),
    math.erf: ("{g} * (1.1283791670955126 * math.exp(-({0} * {0})))",),
    math.erfc: ("{g} * (-1.1283791670955126 * math.exp(-({0} * {0})))",),
    # digamma and trigamma: njit helpers of rules/special.py, in the generated code's
    # namespace (RULE_HELPERS, rules/helpers.py); called, not inlined, as they have rules here.
    math.lgamma: (zero_safe("{g} * digamma({0})"),),
    math.gamma: (zero_safe("{g} * ({y} * digamma({0}))"),),
    digamma: (zero_safe("{g} * trigamma({0})"),),
    math.exp: ("{g} * {y}",),
    math.exp2: ("{g} * ({y} * 0.6931471805599453)",),
    math.expm1: ("{g} * ({y} + 1.0)",),
    math.log: (zero_safe("{g} * (1.0 / {0})"),),
    math.log1p: (zero_safe("{g} * (1.0 / (1.0 + {0}))"),),
    math.log10: (zero_safe("{g} * (1.0 / ({0} * 2.302585092994046))"),),
    math.log2: (zero_safe("{g} * (1.0 / ({0} * 0.6931471805599453))"),),
    math.sqrt: (zero_safe("{g} * (0.5 / {y})"),),
    math.hypot: (zero_safe("{g} * ({0} / {y})"), zero_safe("{g} * ({1} / {y})")),
    math.pow: _POW,
    math.radians: ("{g} * 0.017453292519943295",),
    math.degrees: ("{g} * 57.29577951308232",),
    math.floor: (None,),
    math.ceil: (None,),
    math.trunc: (None,),
    math.copysign: ("{g} * (math.copysign(1.0, {0}) * math.copysign(1.0, {1}))", None),
    math.fabs: ("{g} * math.copysign(1.0, {0})",),
    # a * 2**e: e an integer; the next float after a moves with a.
    math.ldexp: ("{g} * math.ldexp(1.0, {1})", None),
    math.nextafter: ("{g}", None),
    abs: ("{g} * math.copysign(1.0, {0})",),
    float: ("{g}",),
    # min/max: the gradient goes to the operand the primal returned. Python and Numba
    # return the first unless the second is strictly smaller (larger): the first on ties
    # and wherever a NaN makes the comparison false (max(1.0, nan) is 1.0).
    min: ("(0.0 if {1} < {0} else {g})", "({g} if {1} < {0} else 0.0)"),
    max: ("(0.0 if {1} > {0} else {g})", "({g} if {1} > {0} else 0.0)"),
    # np.minimum/np.maximum return a NaN operand (the first on ties);
    # np.fmin/np.fmax return the other operand of a NaN.
    np.minimum: ("({g} if {0} <= {1} or math.isnan({0}) else 0.0)",
                 "(0.0 if {0} <= {1} or math.isnan({0}) else {g})"),
    np.maximum: ("({g} if {0} >= {1} or math.isnan({0}) else 0.0)",
                 "(0.0 if {0} >= {1} or math.isnan({0}) else {g})"),
    np.fmin: ("({g} if {0} <= {1} or math.isnan({1}) else 0.0)",
              "(0.0 if {0} <= {1} or math.isnan({1}) else {g})"),
    np.fmax: ("({g} if {0} >= {1} or math.isnan({1}) else 0.0)",
              "(0.0 if {0} >= {1} or math.isnan({1}) else {g})"),
    # np.logaddexp(a, b) = log(e^a + e^b): d/da = e^(a - y).
    np.logaddexp: ("{g} * math.exp({0} - {y})", "{g} * math.exp({1} - {y})"),
    np.logaddexp2: ("{g} * math.exp2({0} - {y})", "{g} * math.exp2({1} - {y})"),
    np.cbrt: (zero_safe("{g} * (1.0 / (3.0 * {y} * {y}))"),),
    math.fmod: ("{g}", "{g} * (-math.trunc({0} / {1}))"),
    np.rint: (None,),
    # sinc(x) = sin(pi x) / (pi x): (cos(pi x) - sinc(x)) / x, 0 at x = 0 (the comparison
    # as a number keeps the rule valid element-wise).
    np.sinc: ("{g} * ((math.cos(3.141592653589793 * {0}) - {y}) / ({0} + ({0} == 0.0)))",),
    # Of float input: real and conj are the identity, imag and angle constants.
    np.real: ("{g}",),
    np.conjugate: ("{g}",),
    np.imag: (None,),
    np.angle: (None,),
    np.nan_to_num: ("{g} * math.isfinite({0})",),
})

_NUMPY_TWINS = {
    np.sin: math.sin, np.cos: math.cos, np.tan: math.tan, np.arcsin: math.asin,
    np.arccos: math.acos, np.arctan: math.atan, np.arctan2: math.atan2, np.sinh: math.sinh,
    np.cosh: math.cosh, np.tanh: math.tanh, np.arcsinh: math.asinh, np.arccosh: math.acosh,
    np.arctanh: math.atanh, np.exp: math.exp, np.exp2: math.exp2, np.expm1: math.expm1,
    np.radians: math.radians, np.degrees: math.degrees, np.deg2rad: math.radians,
    np.rad2deg: math.degrees,
    np.log: math.log, np.log1p: math.log1p, np.log10: math.log10, np.log2: math.log2,
    np.sqrt: math.sqrt, np.hypot: math.hypot, np.power: math.pow, np.floor: math.floor,
    np.ceil: math.ceil, np.trunc: math.trunc, np.copysign: math.copysign,
    np.fmod: math.fmod,
    np.fabs: math.fabs, np.abs: abs, np.absolute: abs, np.nextafter: math.nextafter,
    np.float64: float, np.float32: float,
}
for _np_fn, _math_fn in _NUMPY_TWINS.items():
    CALL_RULES.setdefault(_np_fn, CALL_RULES[_math_fn])

# Reductions of one float (arithmetic on 0-d arrays gives floats in Numba: ``np.sum(x * x)``
# of a 0-d ``x``): the float itself. Of arrays, they are reductions (rules/array_rules.py).
for _np_fn in (np.sum, np.prod, np.mean, np.max, np.min, np.amax, np.amin, np.nansum,
               np.nanprod, np.nanmean, np.nanmax, np.nanmin, np.median, np.nanmedian):
    CALL_RULES.setdefault(_np_fn, ("{g}",))
# Of one float, Numba's np.cumsum, np.average, np.percentile and np.quantile (whatever
# the q) are the float itself, and its np.ptp is 0, as their array forms of one element.
for _np_fn in (np.cumsum, np.nancumsum, np.average):
    CALL_RULES.setdefault(_np_fn, ("{g}",))
for _np_fn in (np.percentile, np.nanpercentile, np.quantile, np.nanquantile):
    CALL_RULES.setdefault(_np_fn, ("{g}", None))
CALL_RULES.setdefault(np.ptp, (None,))
# Random draws, reparameterised (a draw of the distribution at its parameters is the
# parameters' function of a standard draw): normal loc + scale z, uniform low + (high -
# low) u, exponential scale e. The draw is kept, never drawn again.
CALL_RULES.update({
    np.random.normal: ("{g}", "{g} * (({y} - {0}) / {1})"),
    np.random.uniform: ("{g} * (({1} - {y}) / ({1} - {0}))",
                        "{g} * (({y} - {0}) / ({1} - {0}))"),
    np.random.exponential: ("{g} * ({y} / {0})",),
})
# Rounding (np.round(x, 2) of a float): a step function.
for _np_fn in (np.round, np.around):
    CALL_RULES.setdefault(_np_fn, (None, None))
# The spread of one float is 0, whatever the float.
for _np_fn in (np.std, np.var, np.nanstd, np.nanvar):
    CALL_RULES.setdefault(_np_fn, (None,))

# The guarded product of the generated code (rules/template.py, zero_safe): a primitive
# where forward mode differentiates a backward (hvp).
CALL_RULES[zmul] = (zero_safe("{g} * {1}"), "({g} * {0} if {0} != 0.0 else 0.0)")
CALL_RULES[zmul_select] = CALL_RULES[zmul]

# Rules by operator (binary and in-place binary operators share them).
BINOP_RULES = RuleTable({
    operator.add: ("{g}", "{g}"),
    operator.sub: ("{g}", "-{g}"),
    operator.mul: ("{g} * {1}", "{g} * {0}"),
    # (one reciprocal for both partials: a division, the slowest operation of a loop's
    # reverse, made once)
    operator.truediv: (zero_safe("{g} * (1.0 / {1})"),
                       zero_safe("{g} * (-{0} * (1.0 / {1}) * (1.0 / {1}))")),
    operator.pow: _POW,
    operator.mod: ("{g}", "{g} * (-math.floor({0} / {1}))"),
    operator.floordiv: (None, None),
})
INPLACE_TO_BINOP = {
    operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
    operator.itruediv: operator.truediv, operator.ipow: operator.pow,
    operator.imod: operator.mod, operator.ifloordiv: operator.floordiv,
}
UNARY_RULES = RuleTable({
    operator.neg: ("-{g}",),
    operator.pos: ("{g}",),
})

# Operands a primitive has no derivative in (a function -> {operand index: what it is}):
# a varied one is refused where the gradient or a tangent needs it (its rule entry is
# None only so that the other operands have theirs).
OPERANDS_WITHOUT_RULE = {}

# Calls whose result carries no gradient whatever their operands (the rewrite still checks
# that they do not produce floats from floats).
NON_DIFFERENTIABLE_CALLS = {len, range, int, bool, round, math.isnan, math.isinf,
                            math.isfinite, np.isnan, np.isinf, np.isfinite, np.sign}


# ---------------------------------------------------------------------- NumPy ufuncs
# Arithmetic ufuncs called on scalars (``np.multiply(a, 3.0)``): the rule of their
# operator. On arrays their result is whole-array arithmetic, which the checks refuse.
_UFUNC_RULES = {
    np.add: BINOP_RULES[operator.add],
    np.subtract: BINOP_RULES[operator.sub],
    np.multiply: BINOP_RULES[operator.mul],
    np.divide: BINOP_RULES[operator.truediv],
    np.true_divide: BINOP_RULES[operator.truediv],
    np.negative: UNARY_RULES[operator.neg],
    np.positive: UNARY_RULES[operator.pos],
    np.square: ("{g} * (2.0 * {0})",),
    np.reciprocal: (zero_safe("{g} * (-{y} * {y})"),),
    np.float_power: CALL_RULES[math.pow],
    np.mod: BINOP_RULES[operator.mod],
    np.floor_divide: BINOP_RULES[operator.floordiv],
}
for _fn, _rule in _UFUNC_RULES.items():
    CALL_RULES.setdefault(_fn, _rule)
# The operators called as functions (operator.mul(a, b)): their operators' rules.
for _table in (BINOP_RULES, UNARY_RULES):
    for _fn, _rule in _table.items():
        CALL_RULES.setdefault(_fn, _rule)

for _table, _name in ((CALL_RULES, "CALL_RULES"), (BINOP_RULES, "BINOP_RULES"),
                      (UNARY_RULES, "UNARY_RULES")):
    check_linear(_table, "rules/scalar.py " + _name)
