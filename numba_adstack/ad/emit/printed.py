"""The generated code as one tree: its lines parsed once, the tree printed once.

Emission writes the backward (or a JVP function) as lines of Python (:class:`.names.Lines`).
They are parsed here, once, into a syntax tree; the passes that follow work on that tree
in place: the states of guarded sequences numbered (:meth:`.states.States.resolve`), the
code tidied (:mod:`.tidy`), the reads of adjoints checked in checked mode (:mod:`.checked`),
what decides how each iteration helper of a parallel loop is compiled read off
(:func:`.parallel.straight_helpers`). The tree is then printed, once: that text is what
``inspect_adjoint`` shows, the disk cache keeps and Numba compiles. No other module of
:mod:`.` parses or prints code.
"""
import ast


def parse(text):
    """The tree (an ``ast.Module``) of the emitted ``text``."""
    return ast.parse(text)


def printed(tree):
    """The source of ``tree``."""
    return ast.unparse(tree) + "\n"
