"""One call of a pullback whose results several statements read.

An array rule gives one template per operand, so a pullback that returns the adjoints
of all its operands at once (``vjp(u, D, k, g)[0]``, ``[1]``, ``[2]``) is called once per
operand the gradient needs, each call a pass over the arrays. In a list of statements,
the calls of such a pullback (a name in ``runtime.ONE_CALL``: it returns fresh values,
none the view of another) with the same operands, each read at another index, become
one call before the first, as long as no statement in between assigns, or writes into,
a name the call reads (or a name assigned from one).
"""
import ast

from ..runtime import ONE_CALL
from .syntax import walk


def share_pullback_calls(fn):
    """Share the repeated pullback calls of every statement list of ``fn`` (changed in
    place). Returns how many calls were shared."""
    if not ONE_CALL:
        return 0
    count = 0
    for node in list(walk(fn)):
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                count += _share(stmts, fn)
    return count


def _calls(stmt):
    """``(key, subscript node)`` of each ``pullback(names...)[k]`` in ``stmt``."""
    out = []
    for node in walk(stmt):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, ast.Name) and \
                node.value.func.id in ONE_CALL and \
                isinstance(node.slice, ast.Constant) and \
                all(isinstance(a, (ast.Name, ast.Constant)) for a in node.value.args) and \
                not node.value.keywords:
            out.append((ast.dump(node.value), node))
    return out


def _written(stmt):
    """``(rebound, written into)``: the names ``stmt`` binds anew (``x = ``), and those
    it writes into (``x[...] = ``, ``x += ``), which writes into what they alias too."""
    rebound, into = set(), set()
    augmented = {id(n.target) for n in walk(stmt) if isinstance(n, ast.AugAssign)}
    for node in walk(stmt):
        if isinstance(node, (ast.Name,)) and isinstance(node.ctx, ast.Store):
            (into if id(node) in augmented else rebound).add(node.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and \
                isinstance(node.ctx, ast.Store):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                into.add(base.id)
    return rebound, into


def _aliases(stmts):
    """Name -> the names its assigned value reads (``_v = u_bar`` makes ``_v`` a view
    of ``u_bar``)."""
    out = {}
    for s in stmts:
        if isinstance(s, ast.Assign):
            reads = {n.id for n in walk(s.value) if isinstance(n, ast.Name)}
            for t in s.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, set()).update(reads)
    return out


def _share(stmts, fn):
    sites = {}
    for j, s in enumerate(stmts):
        if isinstance(s, (ast.Assign, ast.AugAssign, ast.Expr)):
            for key, node in _calls(s):
                sites.setdefault(key, []).append((j, node))
    count = 0
    aliases = _aliases(stmts)
    taken = {n.id for n in walk(fn) if isinstance(n, ast.Name)}
    inserts = []
    for key, found in sites.items():
        call = found[0][1].value
        reads = {a.id for a in call.args if isinstance(a, ast.Name)}
        groups, group, touched = [], [], set()
        for j, node in found:
            if group:
                for s in stmts[group[-1][0]:j]:
                    rebound, into = _written(s)
                    touched |= rebound | into
                    for w in into:
                        touched |= aliases.get(w, set())
                if touched & reads or node.slice.value in {n.slice.value for _, n in group}:
                    groups.append(group)
                    group, touched = [], set()
            group.append((j, node))
        groups.append(group)
        for group in groups:
            if len(group) < 2:
                continue
            k = 0
            while "_pb%d" % k in taken:
                k += 1
            name = "_pb%d" % k
            taken.add(name)
            for _, node in group:
                node.value = ast.Name(id=name, ctx=ast.Load())
            inserts.append((group[0][0], ast.Assign(
                targets=[ast.Name(id=name, ctx=ast.Store())], value=call, lineno=0)))
            count += 1
    for first, stmt in sorted(inserts, key=lambda p: -p[0]):
        stmts.insert(first, stmt)
    return count
