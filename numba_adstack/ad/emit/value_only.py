"""The work done for the value alone, done only when the value is wanted.

The backward returns the function's value with the gradient; ``grad`` drops it. Work whose
only use is the value (a likelihood's logarithm and its sum, a loss accumulated beside
its reverse) is done under the backward's flag (``_value``, ``backward.SEED_TYPES``):
the assignments of the names read by nothing but such assignments and by the value's
own (``_retval``, or the value's expression in the ``return``). Where the flag is off,
the value returned is ``0.0``.
"""
import ast

from .syntax import walk

#: The backward's value, and its parameter that says whether the value is wanted
#: (``Target.backward_params``).
VALUE, VALUE_FLAG = "_retval", "_value"


def guard_value_work(fn, pure):
    """Put the assignments that only make the value of ``fn`` (an ``ast.FunctionDef``,
    changed in place) under ``if _value:``; ``pure(expr)``: ``expr`` has no effect.
    Returns whether any went under it."""
    if VALUE_FLAG not in {a.arg for a in fn.args.args}:
        return False
    readers = {}            # name -> the statements that read it (None: not an assignment)
    assigns = {}            # name -> its assignments
    returned = []          # ``return (value, gradients)``: the value's expressions
    for s in _statements(fn):
        if s.__class__ is ast.Return and s.value.__class__ is ast.Tuple \
                and len(s.value.elts) == 2:
            returned.append(s.value)
            for name in _reads(s.value.elts[0], None):
                readers.setdefault(name, []).append(VALUE)
            for name in _reads(s.value.elts[1], None):
                readers.setdefault(name, []).append(None)
            continue
        target = _assigned(s)
        if target is not None and pure(s.value):
            assigns.setdefault(target, []).append(s)
        for name in _reads(s, target):
            readers.setdefault(name, []).append(
                target if target is not None and pure(s.value) else None)
        if target is not None and not pure(s.value):
            readers.setdefault(target, []).append(None)
    value_only = {VALUE}
    changed = True
    while changed:
        changed = False
        for name in assigns:
            if name in value_only or name == VALUE_FLAG:
                continue
            uses = readers.get(name, [])
            if uses and all(u in value_only or u == name for u in uses) \
                    and VALUE in _reach(name, readers):
                value_only.add(name)
                changed = True
    value_only.discard(VALUE)
    if not value_only:
        return False
    guarded = {id(s): None for name in value_only for s in assigns[name]}
    # The value's own assignments that read them: 0.0 where the value is not wanted.
    guarded.update((id(s), ast.Assign(targets=[ast.Name(VALUE, ast.Store())],
                                      value=ast.Constant(0.0), lineno=0))
                   for s in assigns.get(VALUE, ()) if set(_reads(s, VALUE)) & value_only)
    for ret in returned:
        if set(_reads(ret.elts[0], None)) & value_only:
            ret.elts[0] = ast.IfExp(ast.Name(VALUE_FLAG, ast.Load()), ret.elts[0],
                                    ast.Constant(0.0))
    _guard(fn, guarded)
    return True


def _reach(name, readers):
    """The names ``name`` flows into (through the assignments that read it)."""
    seen, todo = set(), [name]
    while todo:
        for u in readers.get(todo.pop(), []):
            if u is not None and u not in seen:
                seen.add(u)
                todo.append(u)
    return seen


def _statements(node):
    for field in ("body", "orelse"):
        for s in getattr(node, field, None) or []:
            yield s
            yield from _statements(s)


def _assigned(s):
    """The name a simple assignment (``n = e``, ``n += e``) sets, or None."""
    if s.__class__ is ast.Assign and len(s.targets) == 1 \
            and s.targets[0].__class__ is ast.Name:
        return s.targets[0].id
    if s.__class__ is ast.AugAssign and s.target.__class__ is ast.Name:
        return s.target.id
    return None


def _reads(s, target):
    """The names ``s`` (a statement or an expression) reads itself (an ``if`` or a
    loop: its test or its iterable)."""
    if s.__class__ in (ast.If, ast.While):
        parts = [s.test]
    elif s.__class__ is ast.For:
        parts = [s.iter]
    elif s.__class__ in (ast.FunctionDef,):
        parts = []
    else:
        parts = [s]
    out = [n.id for p in parts for n in walk(p)
           if n.__class__ is ast.Name and n.ctx.__class__ is ast.Load]
    if s.__class__ is ast.AugAssign and target is not None:
        out.append(target)
    return out


def _guard(node, guarded):
    for field in ("body", "orelse"):
        stmts = getattr(node, field, None)
        if not isinstance(stmts, list):
            continue
        for k, s in enumerate(stmts):
            if id(s) in guarded:
                other = guarded[id(s)]
                stmts[k] = ast.If(ast.Name(VALUE_FLAG, ast.Load()), [s],
                                  [] if other is None else [other])
            else:
                _guard(s, guarded)
