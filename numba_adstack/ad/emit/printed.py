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

from ..generated_source.code import body


def parse(text):
    """The tree (an ``ast.Module``) of the emitted ``text``."""
    return ast.parse(text)


def module(lines):
    """The module tree of ``lines`` (a :class:`..generated_source.code.Lines`): nested as
    they are when every line is a statement tree; printed and parsed once when some are
    still text."""
    if all(not isinstance(node, str) for _, node in lines.lines):
        return ast.Module(body=body(lines.lines), type_ignores=[])
    return parse(text(lines))


def text(lines):
    """The source of ``lines`` (a :class:`.code.Lines`, or its ``(level, statement)``
    pairs), statements given as text kept as written."""
    out = []
    for level, node in getattr(lines, "lines", lines):
        pad = "    " * level
        if isinstance(node, str):
            out.append(pad + node)
        else:
            out.append(pad + _head(node))
    return "\n".join(out) + "\n"


def _head(node):
    """One statement's line: a compound statement's header only."""
    from ..generated_source.code import Elif, Else
    if isinstance(node, Else):
        return "else:"
    if isinstance(node, Elif):
        return "elif %s:" % ast.unparse(node.test)
    if isinstance(node, (ast.If, ast.While, ast.For, ast.FunctionDef, ast.With)):
        body, orelse = node.body, getattr(node, "orelse", None)
        node.body = [ast.Pass()]
        if orelse is not None:
            node.orelse = []
        try:
            return ast.unparse(node).split("\n")[0]
        finally:
            node.body = body
            if orelse is not None:
                node.orelse = orelse
    return ast.unparse(node)


def printed(tree):
    """The source of ``tree``."""
    return ast.unparse(tree) + "\n"
