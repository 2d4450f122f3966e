"""Which rule of the array table (rules/array_rules.py) an IR expression applies, and to
which operands: calls by position and keyword (``np.sum(x, axis=0)``), methods
(``x.sum(axis=0)``, ``x.reshape(3, 4)``), ``.T``, and operators on arrays.

A :class:`BoundRule` holds the operands (IR variables, in parameter order) and the
argument of each parameter (an operand position, or a default's source text); its
templates are written over operand positions (``{0}``, ``{1}``), as the scalar rules are,
so emission fills both kinds the same way.
"""
import operator
from dataclasses import dataclass

import numpy as np
from numba.core import ir, types

from ..rules.array_rules import METHODS, array_of_items, bind, by_operand, rule_of
from ..rules.scalar import INPLACE_TO_BINOP
from ..rules.vjp_sequence import take_index_parts

# Methods whose arguments after the receiver may be given one by one rather than as a
# tuple (``x.reshape(3, 4)``, ``x.transpose(1, 0)``): they are packed into the parameter.
_PACKED_METHODS = {"reshape", "transpose"}


@dataclass
class BoundRule:
    rule: object          # the ArrayRule
    fn: object            # the primitive (a function, ufunc or operator)
    operands: list        # IR variables
    args: dict            # parameter -> operand position, tuple of positions, or source

    def templates(self, accumulate=False, into=False):
        """One template per operand (None: no gradient), over operand positions;
        ``accumulate``: the rule's cheaper forms that only broadcast to the operand;
        ``into``: its forms adding in place into ``{out}`` (None where it has none)."""
        by_param = by_operand(self.rule, self.args, accumulate, into)
        out = [None] * len(self.operands)
        for p, a in self.args.items():
            if isinstance(a, int):
                out[a] = by_param[p]
        return tuple(out)

    @property
    def elementwise(self):
        return self.rule.elementwise


def bind_expr(facts, e):
    """The :class:`BoundRule` of expression ``e``, or None when the table has no rule for
    it (nor for the form of its arguments)."""
    if not isinstance(e, ir.Expr):
        return None
    kws = {}
    if e.op in ("binop", "inplace_binop"):
        fn = e.fn if e.op == "binop" else INPLACE_TO_BINOP.get(e.fn, e.immutable_fn)
        args = [e.lhs, e.rhs]
    elif e.op == "unary":
        fn, args = e.fn, [e.value]
    elif e.op == "getattr" and isinstance(facts.ty(e.value), types.Array):
        fn, args = e.attr, [e.value]
    elif e.op == "getitem" and isinstance(facts.ty(e.value), types.Array) \
            and _is_index_array(facts.ty(e.index)):
        fn, args = operator.getitem, [e.value, e.index]
    elif e.op == "call" and e.vararg is None:
        if facts.array_copy_source(e) is not None:
            return None     # a copy is memory of its own, with its own adjoint array
        fn, args = _callee(facts, e)
        kws = dict(e.kws)
        if fn is np.array and args:
            bound = _array_of_items(facts, args[0])
            if bound is not None:
                return bound
    else:
        return None
    rule = rule_of(fn)
    if rule is None:
        return None
    if isinstance(fn, str) and fn in _PACKED_METHODS and len(args) > 2:
        args = args[:1] + [tuple(args[1:])]
    operands = []
    positional = [_operand(operands, a) for a in args]
    try:
        positions = bind(rule, positional,
                         {k: _operand(operands, v) for k, v in kws.items()})
    except TypeError:
        # Another form than the rule's (``np.where(c)`` gives indices): no rule; refused
        # by the checks only where its result reaches the gradient.
        return None
    return BoundRule(rule, METHODS.get(fn, fn) if isinstance(fn, str) else fn, operands,
                     positions)


def _callee(facts, e):
    """``(function or method name, arguments)`` of a call; a method's receiver comes
    first."""
    fn = facts.resolve_global(e.func)
    if fn is not None:
        return fn, list(e.args)
    f = facts.def_expr(e.func.name)
    if isinstance(f, ir.Expr) and f.op == "getattr" \
            and isinstance(facts.ty(f.value), types.Array):
        return f.attr, [f.value] + list(e.args)
    return None, list(e.args)


def _operand(operands, a):
    """Append an argument (a variable, or a tuple of them) to ``operands``; its
    position(s)."""
    if isinstance(a, tuple):
        return tuple(_operand(operands, v) for v in a)
    operands.append(a)
    return len(operands) - 1


def _is_index_array(t):
    """A 1-d array of integers or booleans, an n-d array of integers, or a tuple of a 1-d
    one with integers and slices: ``x[idx]``, ``x[idx2d]``, ``x[idx, 1]``, ``x[:, idx]``
    gather (a copy, not a view)."""
    if isinstance(t, types.BaseTuple):
        return take_index_parts(t) is not None
    return isinstance(t, types.Array) and (
        isinstance(t.dtype, types.Integer)
        or (t.ndim == 1 and isinstance(t.dtype, types.Boolean)))


def _array_of_items(facts, seq):
    """The :class:`BoundRule` of ``np.array(seq)`` for ``seq`` a list or tuple (nested
    ones for more dimensions) of numbers built in the function, or None."""
    items, shape = _items(facts, seq)
    if items is None or not shape:
        return None
    rule = array_of_items(tuple(shape))
    return BoundRule(rule, np.array, items, {p: k for k, p in enumerate(rule.params)})


def _items(facts, var):
    """``(leaves in C order, shape)`` of a (nested) list or tuple built in the function
    from numbers; ``(None, None)`` for anything else, or a ragged nesting."""
    e = facts.def_expr(var.name)
    while isinstance(e, ir.Var):
        e = facts.def_expr(e.name)
    if not (isinstance(e, ir.Expr) and e.op in ("build_list", "build_tuple")):
        if isinstance(facts.ty(var), types.Number):
            return [var], []
        return None, None
    leaves, inner = [], None
    for item in e.items:
        sub, sub_shape = _items(facts, item)
        if sub is None or (inner is not None and sub_shape != inner):
            return None, None
        leaves.extend(sub)
        inner = sub_shape
    return leaves, [len(e.items)] + (inner or [])
