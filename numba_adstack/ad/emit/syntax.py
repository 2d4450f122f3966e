"""Walks of the generated code's tree: a faster ``ast.walk`` (the passes walk it often:
``ast.walk`` goes through two generators per node), and names replaced by nodes."""
import ast

_AST = ast.AST
_NAME = ast.Name


def walk(node):
    """Every node under ``node`` (itself included), in no particular order."""
    todo = [node]
    pop, push, extend = todo.pop, todo.append, todo.extend
    while todo:
        n = pop()
        yield n
        for field in n._fields:
            v = getattr(n, field, None)
            if v.__class__ is list:
                extend(v)
            elif isinstance(v, _AST):
                push(v)


def substitute_names(tree, made):
    """Replace, in place, each name ``made`` gives a node for (``made(name)``: a new
    node, or None to keep the name)."""
    for n in walk(tree):
        for field in n._fields:
            v = getattr(n, field, None)
            if v.__class__ is list:
                for k, item in enumerate(v):
                    if item.__class__ is _NAME:
                        got = made(item.id)
                        if got is not None:
                            v[k] = got
            elif v.__class__ is _NAME:
                got = made(v.id)
                if got is not None:
                    setattr(n, field, got)
