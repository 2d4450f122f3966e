"""Exact rewrites of straight-line code in the generated source.

Emission writes each reverse statement as its rule gives it: an adjoint reset to ``-0.0``
after its last use even where nothing reads it again, ``g_bar = s_bar`` for an adjoint
that is assigned rather than accumulated, ``a_bar = -0.0`` right before ``a_bar += e``.
Copies of names assigned once are propagated into their reads; a reset followed by
``+=`` is an assignment, and so is ``g += e`` where a forward analysis of the names known
to hold ``-0.0`` (a client of :mod:`.dataflow`) finds ``g`` zero on every path. Each
keeps the program's meaning exactly (``-0.0 + e`` is ``e`` for every ``e``); Numba has
fewer statements and versions to type and lower. Last, whole-array temporaries whose only
use is a sum, or the first add into an adjoint, are left out (:func:`whole_array_forms`).
"""
import ast

from ..rules.template import GUARDED_UFUNC, guarded_product_call
from .dataflow import EveryPath, Unsure, stored
from .syntax import walk


# ---------------------------------------------------------------------------- copies
def propagate_copies(node, stores, loads, params):
    """``a = b`` where ``a`` is assigned once and every read of ``a`` follows in the
    same statement list, before anything assigns ``b``: those reads read ``b`` and the
    copy goes (``g_bar = s_bar`` of an assigned adjoint). Returns whether any went."""
    return _at_each_statement(node, lambda stmts, i: _propagate_one(stmts, i, stores, loads,
                                                                     params))


def _at_each_statement(node, rewrite):
    """``rewrite(stmts, i)`` at each statement of every statement list in ``node``, again
    at the same place while it rewrites there. Returns whether it rewrote any."""
    changed = False
    for field in ("body", "orelse"):
        stmts = getattr(node, field, None)
        if not isinstance(stmts, list):
            continue
        i = 0
        while i < len(stmts):
            if rewrite(stmts, i):
                changed = True
                continue
            changed |= _at_each_statement(stmts[i], rewrite)
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
    return _at_each_statement(node, _fold_reset)


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


# ---------------------------------------------------------------------------- reductions
def whole_array_forms(node):
    """Whole-array temporaries the backward does not need, left out:

    * ``np.sum(a * b)`` is ``sum_of_product(a, b)`` (``np.sum(-(a * b))``:
      ``sum_of_negated_product``, ``np.sum(zmultiply(a, b))``:
      ``sum_of_guarded_product``):
      one pass and no array for the product (the adjoint of a float operand of an array
      rule is such a sum);
    * ``unreduce(g, x, None, False) * e`` (``e * ...`` alike, and
      ``zmultiply(unreduce(...), e)``) is ``broadcast_like(g * e, x)``
      (``broadcast_like(zmultiply(g, e), x)``): the
      adjoint of a sum of all of ``x`` is one number, so Numba makes the product in one
      pass, with no array of ``g``;
    * ``acc(a, e, x)`` of a whole-array expression ``e`` (an operator's result, a new
      array) is ``acc_new(a, e, x)``: the first contribution is that array itself, with
      no array of zeros made and added to.

    The first two are exact (:mod:`..runtime`: the same operations in the same order,
    falling back to the expression as written for shapes or layouts the single pass does
    not take); the third differs from ``0.0 + e`` only where ``e`` holds ``-0.0``, which
    is what an adjoint starting from ``-0.0`` holds (as an assigned adjoint does).
    Returns whether any changed."""
    changed = False
    for n in walk(node):
        for field in n._fields:
            v = getattr(n, field, None)
            if isinstance(v, list):
                for k, item in enumerate(v):
                    new = _reduction_form(item)
                    if new is not None:
                        v[k] = new
                        changed = True
            else:
                new = _reduction_form(v)
                if new is not None:
                    setattr(n, field, new)
                    changed = True
    return changed


def _reduction_form(e):
    """The rewritten form of the expression ``e`` (see :func:`whole_array_forms`), or None."""
    if e.__class__ is ast.Call and e.func.__class__ is ast.Name and e.func.id == "acc" \
            and len(e.args) == 3 and not e.keywords and _is_new_array(e.args[1]):
        return _call("acc_new", list(e.args))
    if e.__class__ is ast.Call and is_np_sum(e):
        arg = e.args[0]
        helper = "sum_of_product"
        if arg.__class__ is ast.UnaryOp and arg.op.__class__ is ast.USub:
            arg, helper = arg.operand, "sum_of_negated_product"
        if arg.__class__ is ast.BinOp and arg.op.__class__ is ast.Mult:
            return _call(helper, [arg.left, arg.right])
        guarded = guarded_product_call(arg, GUARDED_UFUNC)
        if guarded is not None and helper == "sum_of_product":
            return _call("sum_of_guarded_product", list(guarded))
        return None
    guarded = guarded_product_call(e, GUARDED_UFUNC)
    if guarded is not None and is_sum_unreduce(guarded[0]):
        g, x = guarded[0].args[0], guarded[0].args[1]
        return _call("broadcast_like", [_call(GUARDED_UFUNC, [g, guarded[1]]), x])
    if e.__class__ is ast.BinOp and e.op.__class__ is ast.Mult:
        for side, other in ((e.left, e.right), (e.right, e.left)):
            if is_sum_unreduce(side):
                g, x = side.args[0], side.args[1]
                product = ast.BinOp(g, ast.Mult(), other) if side is e.left \
                    else ast.BinOp(other, ast.Mult(), g)
                return _call("broadcast_like", [product, x])
    return None


def _is_new_array(e):
    """Is ``e`` an operator's result, or the guarded product's (on arrays, a new array
    nothing else refers to)?"""
    return e.__class__ is ast.BinOp or (e.__class__ is ast.UnaryOp
                                        and e.op.__class__ is ast.USub) \
        or guarded_product_call(e, GUARDED_UFUNC) is not None


def is_np_sum(e):
    """``np.sum(x)`` of one argument, no keywords."""
    if e.__class__ is not ast.Call:
        return False
    f = e.func
    return f.__class__ is ast.Attribute and f.attr == "sum" \
        and f.value.__class__ is ast.Name and f.value.id == "np" \
        and len(e.args) == 1 and not e.keywords


def is_sum_unreduce(e):
    """``unreduce(g, x, None, False)``: the adjoint of ``np.sum(x)`` over all of ``x``."""
    return e.__class__ is ast.Call and e.func.__class__ is ast.Name \
        and e.func.id == "unreduce" and len(e.args) == 4 and not e.keywords \
        and all(a.__class__ is ast.Constant and a.value is v
                for a, v in zip(e.args[2:], (None, False)))


def _call(name, args):
    return ast.Call(ast.Name(name, ast.Load()), args, [])
