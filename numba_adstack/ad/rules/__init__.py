"""Adjoint rules, read by the rewrite: one table per family of primitives.

* :mod:`.scalar`: functions and operators on floats (``math.sin``, ``*``, ``min``...);
* :mod:`.complex_rules`: the same, and ``.real``, ``abs``, ``cmath.*``, on complex numbers;
* :mod:`.array_rules`: NumPy primitives on arrays (element-wise with broadcasting,
  reductions, linear algebra, shapes), with their njit helpers in ``vjp_*.py``, gathered
  by name in :mod:`.helpers`;
* :mod:`.array_effects`: what calls do to arrays: constructors make fresh ones (no
  gradient flows through them), other calls write into the arrays they are given;
* :mod:`.powers`: rules specialised to literal operands (``x ** 6``, ``x ** 0.5``);
* :mod:`.template`: the templates, parsed once into trees, and what reads them.

Adding a primitive is adding one entry to its family's table.
"""

from .array_effects import ARRAY_CONSTRUCTORS, FILL_ARGUMENT, MUTATING_FUNCTIONS, MUTATING_METHODS
from .powers import LITERAL_RULES, specialise  # noqa: F401
from .scalar import (BINOP_RULES, CALL_RULES, INPLACE_TO_BINOP, NON_DIFFERENTIABLE_CALLS,
                     OPERANDS_WITHOUT_RULE, UNARY_RULES)
from .complex_rules import complex_rule  # noqa: F401
from . import template as _template


def needed_operands(rule):
    """Which placeholders (operand indices, and 'y') a rule reads."""
    used = set()
    for expr in rule:
        if expr is None:
            continue
        reads = _template.template(expr).reads
        used |= {int(k) for k in reads if k.isdigit()}
        if "y" in reads:
            used.add("y")
    return used
