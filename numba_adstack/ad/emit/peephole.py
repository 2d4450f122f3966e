"""Exact rewrites of straight-line code in the generated source.

Emission writes each reverse statement as its rule gives it: an adjoint reset to ``-0.0``
after its last use even where nothing reads it again, ``g_bar = s_bar`` for an adjoint
that is assigned rather than accumulated, ``a_bar = -0.0`` right before ``a_bar += e``.
Copies of names assigned once are propagated into their reads; a reset followed by
``+=`` is an assignment, and so is ``g += e`` where a forward analysis of the names known
to hold ``-0.0`` (a client of :mod:`.dataflow`) finds ``g`` zero on every path. Each
keeps the program's meaning exactly (``-0.0 + e`` is ``e`` for every ``e``); Numba has
fewer statements and versions to type and lower.
"""
import ast

from .dataflow import EveryPath, Unsure, stored
from .syntax import walk


# ---------------------------------------------------------------------------- copies
def propagate_copies(node, stores, loads, params):
    """``a = b`` where ``a`` is assigned once and every read of ``a`` follows in the
    same statement list, before anything assigns ``b``: those reads read ``b`` and the
    copy goes (``g_bar = s_bar`` of an assigned adjoint). Returns whether any went."""
    changed = False
    for field in ("body", "orelse"):
        stmts = getattr(node, field, None)
        if not isinstance(stmts, list):
            continue
        i = 0
        while i < len(stmts):
            if _propagate_one(stmts, i, stores, loads, params):
                changed = True
                continue
            changed |= propagate_copies(stmts[i], stores, loads, params)
            i += 1
    return changed


def _propagate_one(stmts, i, stores, loads, params):
    s = stmts[i]
    if not (isinstance(s, ast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Name)):
        return False
    a, b = s.targets[0].id, s.value.id
    if a in params or a == b or stores.get(a) != 1:
        return False
    seen, last, want = 0, None, loads.get(a, 0)
    for j in range(i + 1, len(stmts)):
        if seen == want:
            break
        k = sum(1 for n in walk(stmts[j]) if n.__class__ is ast.Name and n.id == a)
        if k:
            seen, last = seen + k, j
    if last is None or seen != want:
        return False
    for j in range(i + 1, last + 1):
        if b in stored([stmts[j]]):
            return False
    for j in range(i + 1, last + 1):
        for n in walk(stmts[j]):
            if isinstance(n, ast.Name) and n.id == a:
                n.id = b
    del stmts[i]
    loads[b] = loads.get(b, 0) + seen
    stores[a] = loads[a] = 0
    return True


# ---------------------------------------------------------------------------- resets
def fold_resets(node):
    """``g = -0.0`` followed, in the same statement list and with nothing between that
    names ``g`` or leaves the list, by ``g += e``: that is ``g = e`` (``-0.0 + e`` is
    ``e`` for every ``e``, signed zeros and NaN included). Returns whether any folded."""
    changed = False
    for field in ("body", "orelse"):
        stmts = getattr(node, field, None)
        if not isinstance(stmts, list):
            continue
        i = 0
        while i < len(stmts):
            if _fold_reset(stmts, i):
                changed = True
                continue
            changed |= fold_resets(stmts[i])
            i += 1
    return changed


#: How far a reset is followed to the ``+=`` it folds into (the sweep writes them close).
_RESET_REACH = 12


def _is_negative_zero(expr):
    return isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) \
        and isinstance(expr.operand, ast.Constant) and type(expr.operand.value) is float \
        and expr.operand.value == 0.0


def _fold_reset(stmts, i):
    s = stmts[i]
    if i and _is_copy(s) and _is_copy(stmts[i - 1]) \
            and s.targets[0].id == stmts[i - 1].value.id \
            and s.value.id == stmts[i - 1].targets[0].id:
        del stmts[i]        # ``a = b`` then ``b = a``: b holds a already
        return True
    if not (isinstance(s, ast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name) and _is_negative_zero(s.value)):
        return False
    g = s.targets[0].id
    for j in range(i + 1, min(len(stmts), i + 1 + _RESET_REACH)):
        t = stmts[j]
        if isinstance(t, ast.AugAssign) and isinstance(t.op, ast.Add) \
                and isinstance(t.target, ast.Name) and t.target.id == g \
                and not any(isinstance(n, ast.Name) and n.id == g
                            for n in walk(t.value)):
            stmts[j] = ast.Assign(targets=[ast.Name(g, ast.Store())], value=t.value,
                                  lineno=0)
            del stmts[i]
            return True
        if not isinstance(t, (ast.Assign, ast.AugAssign, ast.Expr)) or any(
                isinstance(n, ast.Name) and n.id == g for n in walk(t)):
            return False
    return False


def _is_copy(s):
    return isinstance(s, ast.Assign) and len(s.targets) == 1 \
        and isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Name)


# ---------------------------------------------------------------------------- known zeros
def assign_onto_zeros(fn):
    """``g += e`` where ``g`` holds ``-0.0`` on every path there (reset after its last use,
    or declared so) is ``g = e``; the reset then often has no reader left. Returns
    whether any changed."""
    flow = _Zeros()
    try:
        flow.solve(fn.body, frozenset())
    except Unsure:
        return False
    hits = {k for k, known in flow.known.items() if known}
    if not hits:
        return False
    _assign_hits(fn, hits)
    return True


def _assign_hits(node, hits):
    for field in ("body", "orelse"):
        stmts = getattr(node, field, None)
        if not isinstance(stmts, list):
            continue
        for k, s in enumerate(stmts):
            if id(s) in hits:
                stmts[k] = ast.Assign(targets=[ast.Name(s.target.id, ast.Store())],
                                      value=s.value, lineno=0)
            else:
                _assign_hits(s, hits)


class _Zeros(EveryPath):
    """The names that hold ``-0.0`` on every path."""

    def __init__(self):
        self.known = {}         # id(``g += e``) -> g holds -0.0 on every visit

    def transfer(self, s, state):
        if state is None:
            return None
        if s.__class__ is ast.Assign:
            state = state - stored(s.targets)
            if len(s.targets) == 1 and s.targets[0].__class__ is ast.Name \
                    and _is_negative_zero(s.value):
                state = state | {s.targets[0].id}
            return state
        if s.__class__ is ast.AugAssign and s.target.__class__ is ast.Name:
            name = s.target.id
            if s.op.__class__ is ast.Add and not any(
                    n.__class__ is ast.Name and n.id == name for n in walk(s.value)):
                self.known[id(s)] = self.known.get(id(s), True) and name in state
            return state - {name}
        return state

    def bind(self, target, state):
        return None if state is None else state - stored([target])
