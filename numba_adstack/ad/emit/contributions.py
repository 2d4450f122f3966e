"""Contributions: what reversing one definition adds into which adjoint, as records.

:mod:`.adjoints` makes them from the rules, :meth:`.reverse.Reverse.accumulate` writes
them. Each kind is a small frozen record carrying the pieces its statement needs; a rule
filled in is a :class:`Term`, whose placeholders still open (the adjoint array an
in-place form adds into, the adjoint a rescaling reads) are filled by name when the
statement is written; it is filled by substitution into the rule's tree.
"""
import ast
from dataclasses import dataclass

from ..rules.template import template
from ..generated_source.code import fill


@dataclass(frozen=True)
class Term:
    """A rule template with its operands rendered (``operands`` by position, ``named``
    by placeholder); :meth:`tree` fills in the placeholders left open."""
    template: str
    operands: tuple = ()
    named: dict = None          # placeholder -> source

    @classmethod
    def of(cls, template, operands=(), **named):
        return cls(template, tuple(operands), named)

    def tree(self, **late):
        """The term's expression tree, its template's tree filled with the operands, the
        named values and ``late``."""
        values = {str(k): v for k, v in enumerate(self.operands)}
        values.update(self.named or ())
        values.update(late)
        return fill(template(self.template).tree, values)

    def statement(self, **late):
        """The term as a statement (a call made for what it does)."""
        return ast.Expr(value=self.tree(**late))


@dataclass(frozen=True)
class Add:
    """``adjoint += source`` (assigned when it is the adjoint's only contribution, see
    :mod:`..plan.direct`); ``adjoint`` is a scalar adjoint or an element of an array's."""
    adjoint: str
    source: str


@dataclass(frozen=True)
class ToValue:
    """Into the adjoint of the computed array ``value`` (its IR name): accumulated with
    ``acc`` (it may have none yet), or added in place by the rule's in-place form
    ``into`` (a :class:`Term` with ``{out}`` open) once the adjoint exists."""
    value: str
    source: str
    into: Term = None


@dataclass(frozen=True)
class Into:
    """A helper's call that adds the contribution in place into an existing adjoint array
    (``add_dot_vjp_a({out}, ...)``, ``{out}`` being ``adjoint``): no temporary."""
    adjoint: str
    call: Term

    def statement(self):
        return self.call.statement(out=self.adjoint)


@dataclass(frozen=True)
class ThroughView:
    """``adjoint += source`` in place into an adjoint array given or made, through a view
    when the adjoint is a slice of another's."""
    adjoint: str
    source: str


@dataclass(frozen=True)
class Scaled:
    """``x op= c`` on memory given or made: its adjoint array becomes ``scaled`` of itself
    (a :class:`Term` reading the adjoint as ``{g}``), written in place."""
    adjoint: str
    scaled: Term


@dataclass(frozen=True)
class Guarded:
    """``if test: cell += source`` (an element read on all but the last test of a loop)."""
    test: str
    cell: str
    source: str


@dataclass(frozen=True)
class Atomic:
    """An add into ``array[index]`` that other threads may make too."""
    array: str
    index: str
    source: str


@dataclass(frozen=True)
class Assigned:
    """``cell = source``: the element's one contribution (:mod:`..plan.assigned`)."""
    cell: str
    source: str
