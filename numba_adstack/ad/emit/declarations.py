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

from .dataflow import EveryPath, Unsure, stored
from .syntax import walk


def drop_unseen_declarations(fn):
    """Remove from the function ``fn`` (an ``ast.FunctionDef``) the top-level constant
    declarations whose value no read can see. Returns whether it removed any."""
    candidates = _declarations(fn)
    if not candidates:
        return False
    flow = _DefiniteAssignment(set(candidates))
    declared = set(candidates.values())
    try:
        flow.solve([s for s in fn.body if id(s) not in declared],
                   frozenset(a.arg for a in fn.args.args))
    except Unsure:
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


def _constant_source(expr):
    """How a constant declared value (:func:`_constant`) is written: ``-0.0``, ``0``."""
    if isinstance(expr, ast.UnaryOp):
        return "-" + repr(expr.operand.value)
    return repr(expr.value)


class _DefiniteAssignment(EveryPath):
    """The names assigned on every path so far; records in ``seen`` the watched names
    read where some path has not assigned them."""

    def __init__(self, watched):
        self.watched = watched
        self.seen = set()

    def _reads(self, node, assigned):
        for n in walk(node):
            if n.__class__ in _SCOPES:
                raise Unsure()
            if n.__class__ is ast.Name and n.ctx.__class__ is ast.Load \
                    and n.id in self.watched and n.id not in assigned:
                self.seen.add(n.id)

    def evaluate(self, node, assigned):
        if assigned is not None:
            self._reads(node, assigned)
        return assigned

    def transfer(self, s, assigned):
        if assigned is None:
            return None
        if s.__class__ is ast.Assign:
            self._reads(s.value, assigned)
            for t in s.targets:
                self._reads(t, assigned)
            return assigned | stored(s.targets)
        if s.__class__ is ast.AugAssign:
            self._reads(s.value, assigned)
            if s.target.__class__ is ast.Name:
                self._reads(ast.Name(s.target.id, ast.Load()), assigned)
            else:
                self._reads(s.target, assigned)
            return assigned | stored([s.target])
        self._reads(s.value, assigned)
        return assigned

    def bind(self, target, assigned):
        return None if assigned is None else assigned | stored([target])


#: Constructs with names of their own scope (the analysis does not follow them).
_SCOPES = {ast.Lambda, ast.comprehension, ast.NamedExpr}


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
    for s in run:       # (by the value as written: 0 and 0.0, -0.0 and 0.0 differ)
        groups.setdefault(_constant_source(s.value), []).append(s)
    out = []
    for value, stmts in groups.items():
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

