"""The generated code as one tree, printed once.

Emission builds the backward (or a JVP function) as statement trees
(:mod:`..generated_source.code`); :func:`module` nests them into one module tree. The
passes that follow work on that tree in place: the states of guarded sequences numbered
(:meth:`.states.States.resolve`), the code tidied (:mod:`.tidy`), the reads of adjoints
checked in checked mode (:mod:`.checked`), what decides how each iteration helper of a
parallel loop is compiled read off (:func:`.parallel.straight_helpers`). The tree is then
printed, once (:func:`printed`): that text is what ``inspect_adjoint`` shows, the disk
cache keeps and Numba compiles. No other module prints code.
"""
import ast

from ..generated_source.code import body


def module(lines):
    """The module tree of ``lines`` (a :class:`..generated_source.code.Lines`)."""
    return ast.Module(body=body(lines.lines), type_ignores=[])


def printed(tree):
    """The source of ``tree``."""
    return ast.unparse(tree) + "\n"
