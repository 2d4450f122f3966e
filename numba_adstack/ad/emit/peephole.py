"""Exact rewrites of straight-line code in the generated source.

Emission writes each reverse statement as its rule gives it: an adjoint reset to ``-0.0``
after its last use even where nothing reads it again, ``g_bar = s_bar`` for an adjoint
that is assigned rather than accumulated, ``a_bar = -0.0`` right before ``a_bar += e``.
A liveness over the whole function finds the stores no path reads; copies of names
assigned once are propagated into their reads; a reset followed by ``+=`` is an
assignment. Each keeps the program's meaning exactly (``-0.0 + e`` is ``e`` for every
``e``); Numba has fewer statements and versions to type and lower.
"""
import ast

from .control import _Unsure, _stored
from .syntax import walk


# ---------------------------------------------------------------------------- dead stores
def dead_stores(fn):
    """The ``name = ...`` statements of ``fn`` whose name no path reads afterwards (the
    ids of their nodes), or None when the function has a construct the liveness does
    not follow."""
    flow = _LiveNames()
    try:
        flow.block(fn.body, frozenset())
    except _Unsure:
        return None
    return {k for k, live in flow.live_after.items() if not live}


def _loads(node):
    return {n.id for n in walk(node) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}


class _LiveNames:
    """Backward liveness of every local name of a function."""

    def __init__(self):
        self.live_after = {}    # id(single-name store) -> read after it on some path
        self.loops = []         # per enclosing loop: (live after it, live at its head)

    def block(self, stmts, live):
        for s in reversed(stmts):
            live = self.stmt(s, live)
        return live

    def stmt(self, s, live):
        if isinstance(s, ast.Assign):
            if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                name = s.targets[0].id
                self.live_after[id(s)] = self.live_after.get(id(s), False) or name in live
            reads = _loads(s.value)
            for t in s.targets:
                reads |= _loads(t)
            return (live - _stored(s.targets)) | reads
        if isinstance(s, ast.AugAssign):
            extra = {s.target.id} if isinstance(s.target, ast.Name) else set()
            return live | _loads(s.value) | _loads(s.target) | extra
        if isinstance(s, ast.Expr):
            return live | _loads(s.value)
        if isinstance(s, ast.Pass):
            return live
        if isinstance(s, (ast.Return, ast.Raise)):
            return frozenset(_loads(s))
        if isinstance(s, ast.If):
            return self.block(s.body, live) | self.block(s.orelse, live) | _loads(s.test)
        if isinstance(s, (ast.While, ast.For)) and not s.orelse:
            return self.loop(s, live)
        if isinstance(s, (ast.Break, ast.Continue)) and self.loops:
            return self.loops[-1][isinstance(s, ast.Continue)]
        raise _Unsure()

    def loop(self, s, live):
        forever = isinstance(s, ast.While) and isinstance(s.test, ast.Constant) \
            and s.test.value is True
        head = frozenset()
        while True:
            self.loops.append((live, head))
            body = self.block(s.body, head)
            self.loops.pop()
            if isinstance(s, ast.While):
                new = body | _loads(s.test) | (frozenset() if forever else live)
            else:       # the target is assigned at the head, then the body runs
                new = (body - _stored([s.target])) | live
            new = frozenset(new)
            if new == head:
                break
            head = new
        return head | _loads(s.iter) if isinstance(s, ast.For) else head


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
        if b in _stored_anywhere(stmts[j]):
            return False
    for j in range(i + 1, last + 1):
        for n in walk(stmts[j]):
            if isinstance(n, ast.Name) and n.id == a:
                n.id = b
    del stmts[i]
    loads[b] = loads.get(b, 0) + seen
    stores[a] = loads[a] = 0
    return True


def _stored_anywhere(stmt):
    out = {n.id for n in walk(stmt) if isinstance(n, ast.Name)
           and isinstance(n.ctx, ast.Store)}
    return out


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
        flow.block(fn.body, frozenset())
    except _Unsure:
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


def _meet(a, b):
    """Names known to hold ``-0.0`` on both paths (None: a point no path reaches)."""
    if a is None:
        return b
    if b is None:
        return a
    return a & b


class _Zeros:
    """Forward analysis of the names that hold ``-0.0`` on every path."""

    def __init__(self):
        self.known = {}         # id(``g += e``) -> g holds -0.0 on every visit
        self.loops = []         # per enclosing loop: [break states, continue states]

    def block(self, stmts, state):
        for s in stmts:
            if state is None:
                return None
            state = self.stmt(s, state)
        return state

    def stmt(self, s, state):
        if isinstance(s, ast.Assign):
            state = state - _stored(s.targets)
            if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                    and _is_negative_zero(s.value):
                state = state | {s.targets[0].id}
            return state
        if isinstance(s, ast.AugAssign):
            if isinstance(s.target, ast.Name):
                name = s.target.id
                if isinstance(s.op, ast.Add) and not any(
                        n.__class__ is ast.Name and n.id == name for n in walk(s.value)):
                    self.known[id(s)] = self.known.get(id(s), True) and name in state
                return state - {name}
            return state
        if isinstance(s, (ast.Expr, ast.Pass)):
            return state
        if isinstance(s, (ast.Return, ast.Raise)):
            return None
        if isinstance(s, ast.If):
            return _meet(self.block(s.body, state), self.block(s.orelse, state))
        if isinstance(s, (ast.While, ast.For)) and not s.orelse:
            return self.loop(s, state)
        if isinstance(s, (ast.Break, ast.Continue)) and self.loops:
            self.loops[-1][isinstance(s, ast.Continue)].append(state)
            return None
        raise _Unsure()

    def loop(self, s, state):
        forever = isinstance(s, ast.While) and isinstance(s.test, ast.Constant) \
            and s.test.value is True
        head = state
        while True:
            self.loops.append(([], []))
            entry = head - _stored([s.target]) if isinstance(s, ast.For) else head
            end = self.block(s.body, entry)
            breaks, continues = self.loops.pop()
            new = state
            for st in [end] + continues:
                new = _meet(new, st)
            if new == head:
                break
            head = new
        after = None if forever else head
        for st in breaks:
            after = _meet(after, st)
        return after
