"""Adjoint rules, read by the rewrite: one table per family of primitives.

* :mod:`.scalar`: functions and operators on floats (``math.sin``, ``*``, ``min``...);
* :mod:`.arrays`: reductions of whole arrays, array constructors, writing calls;
* :mod:`.powers`: rules specialised to literal operands (``x ** 6``, ``x ** 0.5``).

Adding a primitive is adding one entry to its family's table.
"""
from .arrays import (ARRAY_CONSTRUCTORS, FILL_ARGUMENT, MUTATING_FUNCTIONS,  # noqa: F401
                     MUTATING_METHODS, REDUCTION_METHODS, REDUCTION_RULES)
from .powers import LITERAL_RULES, specialise  # noqa: F401
from .scalar import (BINOP_RULES, CALL_RULES, INPLACE_TO_BINOP,  # noqa: F401
                     NON_DIFFERENTIABLE_CALLS, UNARY_RULES)


def needed_operands(rule):
    """Which placeholders (operand indices, and 'y') a rule reads."""
    used = set()
    for expr in rule:
        if expr is None:
            continue
        for k in range(4):
            if "{%d}" % k in expr:
                used.add(k)
        if "{y}" in expr:
            used.add("y")
    return used
