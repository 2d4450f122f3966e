"""Scalar rules lifted to whole arrays, for forward mode.

An element-wise function or operator applied to arrays has, per element, the derivative
of its scalar rule: the scalar template, written with NumPy (``np.cos`` for ``math.cos``),
is already an array expression, and with ``{g}`` the operand's tangent it is the
tangent's term. Templates that do not lift as written (conditional expressions) have an
array form here.
"""
import re

import numpy as np

from ..rules.scalar import BINOP_RULES, CALL_RULES, UNARY_RULES



def _where(first):
    """The rule sending the tangent of the first operand where ``first`` holds, the
    second's elsewhere (the operand the primal returned, see rules/scalar.py)."""
    return ("np.where(%s, {g}, 0.0)" % first, "np.where(%s, 0.0, {g})" % first)


#: Array forms of scalar rules that do not lift as written, by function.
ARRAY_FORMS = {min: _where("np.logical_not({1} < {0})"),
               max: _where("np.logical_not({1} > {0})"),
               np.minimum: _where("({0} <= {1}) | np.isnan({0})"),
               np.maximum: _where("({0} >= {1}) | np.isnan({0})"),
               np.fmin: _where("({0} <= {1}) | np.isnan({1})"),
               np.fmax: _where("({0} >= {1}) | np.isnan({1})")}

_NP_NAME = re.compile(r"np\.(\w+)")


def lift(rule):
    """The array form of a scalar rule, or None when it has none."""
    out = []
    for t in rule:
        if t is None:
            out.append(None)
            continue
        if " if " in t:
            return None
        t = t.replace("math.", "np.")
        if any(not hasattr(np, f) for f in _NP_NAME.findall(t)):
            return None                     # np.erf: no NumPy twin
        out.append(t)
    return tuple(out)


def elementwise_rule(fn, is_binop=False, is_unary=False):
    """Templates of ``fn`` (a function, or an operator with ``is_binop``/``is_unary``)
    applied element-wise to arrays, or None."""
    if fn in ARRAY_FORMS:
        return ARRAY_FORMS[fn]
    table = BINOP_RULES if is_binop else UNARY_RULES if is_unary else CALL_RULES
    rule = table.get(fn)
    if rule is None or not (is_binop or is_unary or isinstance(fn, np.ufunc)):
        return None
    return lift(rule)
