"""Control flow of the generated source, made as plain as the paths allow.

A guarded sequence (:mod:`..plan.shapes`) writes every node under ``if _rv == node:`` and
every edge as ``_rv = node``; most guards can see one value only (``_rv = 12`` then
``if _rv == 12:``). A forward dataflow of the constants the state variables may hold
(the sets of values possible at each point, loops to a fixed point) finds them: a guard
that only its own value reaches is replaced by its body, one its value cannot reach by
its ``else``. A backward liveness then drops the ``_rv = ...`` no guard reads.
Branch reversal writes the same tail in every arm (``a_bar = -0.0`` after each arm's
``+=``): the statements every arm of a complete ``if``/``elif``/``else`` ends with are
written once after it; an arm left empty is folded into its neighbour's condition. Each
step keeps the program's meaning exactly; Numba compiles fewer blocks and versions.
"""
import ast

from .dataflow import Dataflow, Unsure, dead_stores, stored
from .syntax import walk

#: The state variables of guarded sequences (reverse sweep, forward replay).
STATE_VARS = ("_rv", "_fw")


def simplify_control(fn):
    """Simplify the function ``fn`` (an ``ast.FunctionDef``) in place."""
    for var in STATE_VARS:
        if not any(isinstance(n, ast.Name) and n.id == var for n in walk(fn)):
            continue
        try:
            flow = _StateFlow(var)
            flow.solve(fn.body, frozenset())
        except Unsure:
            continue
        _resolve_guards(fn, var, flow.at_guard)
        unread = dead_stores(fn, {var})
        if unread is not None:
            _drop_stores(fn, unread)
    _hoist_tails(fn)


# ---------------------------------------------------------------------------- guards
def _guard_value(node, var):
    """``K`` when ``node`` is ``if var == K:``, else None."""
    t = node.test if isinstance(node, ast.If) else None
    if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq) \
            and isinstance(t.left, ast.Name) and t.left.id == var \
            and isinstance(t.comparators[0], ast.Constant) \
            and type(t.comparators[0].value) is int:
        return t.comparators[0].value
    return None


def _constant_int(expr):
    return expr.value if isinstance(expr, ast.Constant) and type(expr.value) is int \
        else None


class _StateFlow(Dataflow):
    """The values ``var`` may hold: a frozenset of ints, or None for any value. The empty
    set is a point no path reaches."""

    unreachable = frozenset()

    def __init__(self, var):
        self.var = var
        self.at_guard = {}      # id(guard) -> values reaching it (joined over visits)

    def join(self, a, b):
        return _join(a, b)

    def transfer(self, s, state):
        var = self.var
        if s.__class__ is ast.Assign:
            if var not in stored(s.targets):
                return state
            if len(s.targets) == 1 and s.targets[0].__class__ is ast.Name:
                k = _constant_int(s.value)
                return None if k is None else frozenset([k])
            return None
        if s.__class__ is ast.AugAssign:
            return None if var in stored([s.target]) else state
        return state

    def bind(self, target, state):
        return None if self.var in stored([target]) else state

    def branch(self, s, state):
        k = _guard_value(s, self.var)
        if k is None:
            return state, state
        key = id(s)
        self.at_guard[key] = _join(self.at_guard.get(key, frozenset()), state)
        inside = frozenset([k]) if state is None or k in state else frozenset()
        outside = state if state is None else state - {k}
        return inside, outside


def _join(a, b):
    if a is None or b is None:
        return None
    return a | b


def _resolve_guards(node, var, at_guard):
    """Replace each guard whose outcome the reaching values decide by the arm taken."""
    for field in ("body", "orelse"):
        stmts = getattr(node, field, None)
        if not isinstance(stmts, list):
            continue
        out = []
        for s in stmts:
            k = _guard_value(s, var)
            reach = at_guard.get(id(s)) if k is not None else None
            if k is not None and id(s) in at_guard and reach is not None:
                arm = s.body if reach == {k} else s.orelse if k not in reach else None
                if arm is not None:
                    out.extend(_resolve_list(arm, var, at_guard))
                    continue
            _resolve_guards(s, var, at_guard)
            out.append(s)
        stmts[:] = out


def _resolve_list(stmts, var, at_guard):
    holder = ast.If(test=ast.Constant(True), body=list(stmts), orelse=[])
    _resolve_guards(holder, var, at_guard)
    return holder.body


def _drop_stores(node, unread):
    """Drop the constant stores among ``unread`` (of the state variable)."""
    for field in ("body", "orelse"):
        stmts = getattr(node, field, None)
        if not isinstance(stmts, list):
            continue
        keep = [s for s in stmts
                if not (id(s) in unread and _constant_int(s.value) is not None)]
        for s in keep:
            _drop_stores(s, unread)
        stmts[:] = keep


# ---------------------------------------------------------------------------- tails
def _hoist_tails(node):
    """In every statement list under ``node``: the statements all arms of a complete
    ``if``/``elif``/``else`` end with, written once after it; empty arms folded."""
    for field in ("body", "orelse"):
        stmts = getattr(node, field, None)
        if not isinstance(stmts, list):
            continue
        out = []
        if isinstance(node, (ast.While, ast.For)) and field == "body":
            while len(stmts) > 1 and isinstance(stmts[-1], ast.Continue):
                stmts.pop()         # the loop goes on there anyway
        todo = list(reversed(stmts))
        while todo:
            s = todo.pop()
            _hoist_tails(s)
            if not isinstance(s, ast.If):
                out.append(s)
                continue
            _merge_equal_arms(s)
            tail = _common_tail(s)
            folded = _fold_empty_arms(s)
            if folded is not None and folded.orelse and _jumps(folded.body):
                # ``if a: ...; break`` needs no ``else``: what follows runs otherwise.
                todo.extend(reversed(folded.orelse))
                folded.orelse = []
                tail = []   # (every arm jumps: nothing is left after it)
            if folded is not None:
                out.append(folded)
            out.extend(tail)
        stmts[:] = out


def _jumps(stmts):
    """Does every path through ``stmts`` end in a jump (never falling through)?"""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Break, ast.Continue, ast.Return, ast.Raise)):
        return True
    return isinstance(last, ast.If) and _jumps(last.body) and _jumps(last.orelse)


def _merge_equal_arms(chain):
    """``if a: X elif b: X`` is ``if a or b: X`` (the tests are evaluated as before: ``b``
    only when ``a`` fails)."""
    node = chain
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        nxt = node.orelse[0]
        if [ast.dump(s) for s in node.body] == [ast.dump(s) for s in nxt.body]:
            tests = node.test.values if isinstance(node.test, ast.BoolOp) \
                and isinstance(node.test.op, ast.Or) else [node.test]
            node.test = ast.BoolOp(op=ast.Or(), values=tests + [nxt.test])
            node.orelse = nxt.orelse
            continue
        node = nxt


def _arms(chain):
    """The statement lists of ``chain``'s arms (its elif chain followed), or None when it
    has no final ``else``."""
    arms = []
    node = chain
    while True:
        arms.append(node.body)
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        if not _real(node.orelse):
            return None
        arms.append(node.orelse)
        return arms


def _real(stmts):
    return [s for s in stmts if not isinstance(s, ast.Pass)]


def _common_tail(chain):
    """Take out of ``chain``'s arms what all of them do last: the statements every arm
    ends with, then the constant assignments every arm makes that nothing after them in
    the arm reads or writes (``a_bar = -0.0`` before ``_rv = 8``)."""
    arms = _arms(chain)
    if arms is None:
        return []
    for arm in arms:
        arm[:] = _real(arm)
    sinkable = [_sinkable(arm) for arm in arms]
    sunk = set.intersection(*(set(k) for k in sinkable))
    resets = [s for s in arms[0] if ast.dump(s) in sunk and s is sinkable[0][ast.dump(s)]]
    for arm, movable in zip(arms, sinkable):
        gone = {id(movable[d]) for d in sunk}
        arm[:] = [s for s in arm if id(s) not in gone]
    tail = []
    while all(arms) and len({ast.dump(arm[-1]) for arm in arms}) == 1:
        tail.insert(0, arms[0][-1])
        for arm in arms:
            arm.pop()
    return tail + resets


def _sinkable(arm):
    """``{dump: statement}`` of the ``name = constant`` statements of ``arm`` that can
    move to its end: only plain statements not naming ``name`` come after them."""
    out, later, plain = {}, set(), True
    for s in reversed(arm):
        if plain and isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name) \
                and isinstance(s.value, (ast.Constant, ast.UnaryOp)) \
                and _constant_value(s.value) and s.targets[0].id not in later:
            out.setdefault(ast.dump(s), s)
        plain = plain and isinstance(s, (ast.Assign, ast.AugAssign, ast.Expr))
        later |= {n.id for n in walk(s) if isinstance(n, ast.Name)}
    return out


def _constant_value(expr):
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float))


def _fold_empty_arms(chain):
    """``chain`` with its empty arms folded into the conditions of the others, or None
    when nothing is left of it (every arm empty and every test pure)."""
    if chain.orelse and isinstance(chain.orelse[0], ast.If) and len(chain.orelse) == 1:
        rest = _fold_empty_arms(chain.orelse[0])
        chain.orelse = [] if rest is None else [rest]
    chain.orelse = _real(chain.orelse)
    chain.body = _real(chain.body)
    if chain.body:
        return chain
    if not chain.orelse:
        return None if _pure_test(chain.test) else _with_body(chain)
    return ast.If(test=_negate(chain.test), body=chain.orelse, orelse=[])


def _with_body(chain):
    chain.body = [ast.Pass()]
    return chain


def _pure_test(expr):
    return all(isinstance(n, (ast.Name, ast.Constant, ast.Compare, ast.BoolOp,
                              ast.UnaryOp, ast.expr_context, ast.cmpop, ast.boolop,
                              ast.unaryop)) for n in walk(expr))


_INVERSE = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
            ast.In: ast.NotIn, ast.NotIn: ast.In}


def _negate(test):
    # Only the inverses that hold for NaN too (``not a < b`` is not ``a >= b``).
    if isinstance(test, ast.Compare) and len(test.ops) == 1 \
            and type(test.ops[0]) in _INVERSE:
        return ast.Compare(left=test.left, ops=[_INVERSE[type(test.ops[0])]()],
                           comparators=test.comparators)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    return ast.UnaryOp(op=ast.Not(), operand=test)
