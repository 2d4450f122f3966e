"""Hoist ``a = ensure(a, x)`` out of the top-level loops of the backward.

The adjoint of an array the function computes starts with no memory (size 0); the sweep
makes it with ``ensure`` right before the statements that add into it. Inside a loop that
is a call, an array rebound and its reference count touched on every iteration, which kept
the reversed loops of numba-stats' likelihoods from being vectorised (about 3.5x their
cost). ``ensure(a, x)`` gives ``a`` when it has ``x``'s shape and zeros of that shape
otherwise, so when neither ``a`` (but by these calls) nor ``x`` is rebound in the loop,
and both are assigned before it, one call before the loop gives every iteration the same
array. When the loop's own call would not have run (no iteration, or a path that skips
it), the adjoint is zeros where it was "none yet": the same value.
"""
import ast


def hoist_ensures(fn):
    """Move the hoistable ``ensure`` calls of ``fn``'s top-level loops before them."""
    known = {a.arg for a in fn.args.args}
    body, i = fn.body, 0
    while i < len(body):
        stmt = body[i]
        if isinstance(stmt, (ast.For, ast.While)):
            calls = {}
            for parent, s in _ensures(stmt):
                calls.setdefault(s.targets[0].id, []).append((parent, s))
            rebound = _rebound(stmt)
            moved = []
            for a, sites in sorted(calls.items()):
                xs = {s.value.args[1].id for _, s in sites}
                if len(xs) != 1 or a not in known or not xs <= known:
                    continue
                x = xs.pop()
                if rebound.get(x, 0) or rebound.get(a, 0) != len(sites):
                    continue
                for parent, s in sites:
                    parent.remove(s)
                    if not parent:
                        parent.append(ast.Pass())
                moved.append(sites[0][1])
            body[i:i] = moved
            i += len(moved)
        known |= _assigned_here(stmt)
        i += 1


def _is_ensure(s):
    return isinstance(s, ast.Assign) and len(s.targets) == 1 \
        and isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Call) \
        and isinstance(s.value.func, ast.Name) and s.value.func.id == "ensure" \
        and len(s.value.args) == 2 and not s.value.keywords \
        and all(isinstance(a, ast.Name) for a in s.value.args) \
        and s.value.args[0].id == s.targets[0].id


def _ensures(node):
    """``(statement list, statement)`` of every ``ensure`` inside ``node``."""
    for field in ("body", "orelse"):
        stmts = getattr(node, field, None)
        if not isinstance(stmts, list):
            continue
        for s in list(stmts):
            if _is_ensure(s):
                yield stmts, s
            elif isinstance(s, (ast.For, ast.While, ast.If)):
                yield from _ensures(s)


def _rebound(node):
    """How many times each name is bound inside ``node``."""
    out = {}
    for n in ast.walk(node):
        targets = []
        if isinstance(n, ast.Assign):
            targets = n.targets
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For)):
            targets = [n.target]
        elif isinstance(n, ast.NamedExpr):
            targets = [n.target]
        for t in targets:
            for m in ast.walk(t):
                if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Store):
                    out[m.id] = out.get(m.id, 0) + 1
    return out


def _assigned_here(stmt):
    """Names a top-level statement binds on every path (a plain assignment)."""
    if isinstance(stmt, ast.Assign):
        return {m.id for t in stmt.targets for m in ast.walk(t)
                if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Store)}
    return set()
