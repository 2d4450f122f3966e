"""Adjoints of powers and quotients with a literal operand, as fast as the primal.

Numba lowers ``x ** 6`` (an integer literal) to multiplications, and LLVM turns
``x ** 0.5`` into a square root; the generic rule ``{g} * ({1} * {0} ** ({1} - 1))`` would
make each of them a libm ``pow`` call per step in the sweep. With a literal exponent ``k``
the derivative ``k x^(k-1)`` is written instead with integer powers (multiplications),
square roots and the result ``y`` itself; with a literal base ``c`` the exponent's
derivative ``y ln c`` gets ``ln c`` as a constant. A quotient with a literal numerator
(``1. / r``) differentiates to ``-y * y / c``, reusing the quotient: no division. Where
the derivative may be infinite at a finite operand (``x ** 0.5`` and ``1. / x`` at 0) the
rule is ``zero_safe`` (rules/template.py).

``LITERAL_RULES`` maps each power primitive (and quotients and products) to the function
giving the rule for its literal operands (one entry per primitive: ``math.pow`` and
``np.power`` share it). The rules are written here for floats; rules/array_rules.py lifts
them to arrays.
"""
import math
import operator

import numpy as np

from .template import rule, zero_safe

#: Integer literal powers up to this Numba lowers to multiplications.
_MAX_INT_POWER = 0x10000


def _num(v):
    return repr(float(v))


def _int_power(base, k):
    """Source of ``base ** k`` for an integer ``k >= 0`` that Numba lowers to
    multiplications (an integer literal exponent)."""
    if k == 0:
        return "1.0"
    if k == 1:
        return base
    if k == 2:
        return "(%s * %s)" % (base, base)
    return "%s ** %d" % (base, k)


def exponent_derivative(k):
    """Source of ``d (x ** k) / dx`` in terms of ``{0}`` (x) and ``{y}`` (x ** k); None
    for ``k == 0``. Exponents other than integers and half-integers keep ``pow``, as the
    primal does."""
    k = float(k)
    if k == 0:
        return None
    if k.is_integer() and abs(k) <= _MAX_INT_POWER:
        k = int(k)
        if k == 1:
            return "1.0"
        if k == -1:
            return "(-({y} * {y}))"
        if k > 1:
            return "(%s * %s)" % (_num(k), _int_power("{0}", k - 1))
        return "(%s / %s)" % (_num(k), _int_power("{0}", 1 - k))
    if (2 * k).is_integer() and abs(k) <= _MAX_INT_POWER:
        if k == 0.5:
            return "(0.5 / {y})"
        if k == -0.5:
            return "(-0.5 * ({y} * {y} * {y}))"
        j = k - 1.0                               # a half-integer: sqrt(x) x^a or its inverse
        a = int(abs(j) - 0.5)
        root = "math.sqrt({0})"
        part = root if a == 0 else "(%s * %s)" % (root, _int_power("{0}", a))
        if j > 0:
            return "(%s * %s)" % (_num(k), part)
        return "(%s / %s)" % (_num(k), part)
    return "(%s * {0} ** %s)" % (_num(k), _num(k - 1.0))


def power_rule(literals):
    """The rule of ``y = base ** exponent`` for ``literals = [base or None, exponent or
    None]`` (the values of the literal operands), or None for the generic rule. The
    derivative of a power other than a positive integer is infinite at 0 (``x ** 0.5``,
    ``x ** -2``) or NaN below it: its contribution is ``zero_safe``."""
    base, k = literals[0], literals[1]
    if k is not None:
        d = exponent_derivative(k)             # (x ** 0 is 1: no gradient)
        if d is None or d == "1.0":
            return (None if d is None else "{g}", None)
        finite = float(k).is_integer() and k > 1
        return ("{g} * %s" % d if finite else zero_safe("{g} * %s" % d), None)
    if base is not None and base > 0:
        return (None, "{g} * ({y} * %r)" % math.log(base))
    return None


def quotient_rule(literals):
    """The rule of ``y = c / x`` for a literal numerator ``c`` (``1. / r``): ``d y / d x =
    -c / x**2 = -y * y / c`` reuses the quotient the primal computed, with no division
    (the generic rule divides by ``x * x``); of ``y = x / c``, a literal divisor: ``1 / c``,
    a finite number; None for the generic rule."""
    c, x = literals[0], literals[1]
    if c is None and x is not None and x != 0 and math.isfinite(x):
        # (a literal divisor: the numerator's partial is a finite number)
        return ("{g} * (1.0 / %s)" % _num(x), None)
    if c is None or x is not None or c == 0:
        return None
    if c == 1:
        return (None, zero_safe("{g} * (-({y} * {y}))"))
    return (None, zero_safe("{g} * (-({y} * {y}) * %s)" % _num(1.0 / c)))


def product_rule(literals):
    """The rule of ``y = a * b`` for a literal finite operand (``-0.5 * z``): the other
    operand's partial is that number, a plain product even on arrays (where a partial
    that reads a value is guarded, rules/template.py); None for the generic rule."""
    a, b = literals
    if (a is None) == (b is None) or not math.isfinite(a if b is None else b):
        return None
    return (None, "{g} * %s" % _num(a)) if b is None else ("{g} * %s" % _num(b), None)


LITERAL_RULES = {operator.pow: power_rule, math.pow: power_rule, np.power: power_rule,
                 np.float_power: power_rule, operator.truediv: quotient_rule,
                 np.divide: quotient_rule, np.true_divide: quotient_rule,
                 operator.mul: product_rule, np.multiply: product_rule}


def specialise(fn, literals):
    """The rule of primitive ``fn`` for these literal operand values (None where an
    operand is not a literal), or None: the table's rule applies."""
    special = LITERAL_RULES.get(fn)
    if special is None or all(v is None for v in literals):
        return None
    return rule(special(literals))
