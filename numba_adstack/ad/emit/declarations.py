"""Declarations no read can see: dropped from the generated source.

The backward starts by declaring every variable the replay or the sweep may read before
writing it (``a = 0.0``, ``_n64 = 0``, ``a_bar = -0.0``), because a loop's first
iteration or a path through a branch may get there first. Most reads are in fact preceded
by a write on every path (``_n64 = 0`` right before its loop, ``a_1_bar = a_9_bar`` in the
sweep), and their declaration is a statement Numba types and lowers for nothing (a long
branchy backward declared about one variable in seven of its lines). A definite-assignment
analysis over the source, as Python's own compiler does for its locals, keeps only the
declarations some read may see.
"""
import ast

from .syntax import walk


class _Unsure(Exception):
    """A construct the analysis does not follow: every declaration is kept."""


def drop_unseen_declarations(fn):
    """Remove from the function ``fn`` (an ``ast.FunctionDef``) the top-level constant
    declarations whose value no read can see. Returns whether it removed any."""
    candidates = _declarations(fn)
    if not candidates:
        return False
    flow = _DefiniteAssignment(set(candidates), {a.arg for a in fn.args.args})
    declared = set(candidates.values())
    try:
        flow.block([s for s in fn.body if id(s) not in declared], set())
    except _Unsure:
        return False
    unseen = {candidates[n] for n in candidates if n not in flow.seen}
    if not unseen:
        return False
    fn.body[:] = [s for s in fn.body if id(s) not in unseen] or [ast.Pass()]
    return True


def _declarations(fn):
    """``{name: statement}`` for each top-level ``name = constant`` that comes before any
    other top-level statement naming ``name``, and is its only such constant."""
    out, named = {}, set()
    for s in fn.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name) and _constant(s.value):
            name = s.targets[0].id
            if name not in named:
                out[name] = s
                named.add(name)
                continue
        named |= {n.id for n in walk(s) if isinstance(n, ast.Name)}
    return {n: id(s) for n, s in out.items()}


def _constant(expr):
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float, bool))


class _DefiniteAssignment:
    """Walks statements with the set of names assigned on every path so far; records in
    ``seen`` the watched names read where some path has not assigned them."""

    def __init__(self, watched, params):
        self.watched = watched
        self.params = params
        self.seen = set()
        self.breaks = []        # per enclosing loop: the assigned sets at its breaks

    def block(self, stmts, assigned):
        """The assigned set after ``stmts``, or None when no path falls through."""
        assigned = set(assigned) | self.params
        for s in stmts:
            assigned = self.stmt(s, assigned)
            if assigned is None:
                return None
        return assigned

    def reads(self, node, assigned):
        for n in walk(node):
            if isinstance(n, (ast.Lambda, ast.comprehension, ast.NamedExpr)):
                raise _Unsure()
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) \
                    and n.id in self.watched and n.id not in assigned:
                self.seen.add(n.id)

    def stmt(self, s, assigned):
        if isinstance(s, ast.Assign):
            self.reads(s.value, assigned)
            for t in s.targets:
                self.reads(t, assigned)
            return assigned | _stored(s.targets)
        if isinstance(s, ast.AugAssign):
            self.reads(s.value, assigned)
            if isinstance(s.target, ast.Name):
                self.reads(ast.Name(s.target.id, ast.Load()), assigned)
            else:
                self.reads(s.target, assigned)
            return assigned | _stored([s.target])
        if isinstance(s, (ast.Expr, ast.Return)):
            if s.value is not None:
                self.reads(s.value, assigned)
            return assigned if isinstance(s, ast.Expr) else None
        if isinstance(s, ast.Pass):
            return assigned
        if isinstance(s, ast.If):
            self.reads(s.test, assigned)
            return _meet(self.block(s.body, assigned), self.block(s.orelse, assigned))
        if isinstance(s, (ast.While, ast.For)):
            return self.loop(s, assigned)
        if isinstance(s, ast.Break):
            if not self.breaks:
                raise _Unsure()
            self.breaks[-1].append(assigned)
            return None
        if isinstance(s, ast.Continue):
            return None
        raise _Unsure()

    def loop(self, s, assigned):
        """A loop body's first run sees what was assigned before the loop; later runs see
        more. After it: what every break saw, and, unless it loops forever
        (``while True``), what was assigned before it."""
        if isinstance(s, ast.While):
            self.reads(s.test, assigned)
            entry = assigned
            forever = isinstance(s.test, ast.Constant) and s.test.value is True
        else:
            self.reads(s.iter, assigned)
            entry = assigned | _stored([s.target])
            forever = False
        self.breaks.append([])
        self.block(s.body, entry)
        breaks = self.breaks.pop()
        after = None if forever else assigned
        if s.orelse:
            after = self.block(s.orelse, assigned) if after is not None else None
        for b in breaks:
            after = _meet(after, b)
        return after


def _stored(targets):
    return {n.id for t in targets for n in walk(t)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _meet(a, b):
    """Assigned on every path: a path that does not fall through (None) adds nothing."""
    if a is None:
        return b
    if b is None:
        return a
    return a & b


#: Width up to which declarations of one value share a line (``a = b = -0.0``).
CHAIN_WIDTH = 88


def chain_declarations(fn):
    """Write each run of top-level constant declarations as one chained assignment per
    value (``a_bar = b_bar = -0.0``), wrapped at :data:`CHAIN_WIDTH` columns."""
    body, out, run = fn.body, [], []
    for s in body + [None]:
        if s is not None and isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name) and _constant(s.value) \
                and s.targets[0].id not in {t.id for r in run for t in r.targets}:
            run.append(s)
            continue
        out.extend(_chained(run))
        run = []
        if s is not None:
            out.append(s)
    body[:] = out


def _chained(run):
    groups = {}
    for s in run:
        groups.setdefault(ast.dump(s.value), []).append(s)
    out = []
    for stmts in groups.values():
        value = ast.unparse(stmts[0].value)
        line = None
        for s in stmts:
            name = s.targets[0].id
            if line is not None and len(" = ".join(
                    [t.id for t in line.targets] + [name, value])) + 4 <= CHAIN_WIDTH:
                line.targets.append(ast.Name(name, ast.Store()))
                continue
            line = ast.Assign(targets=[ast.Name(name, ast.Store())], value=stmts[0].value,
                              lineno=0)
            out.append(line)
    return out

