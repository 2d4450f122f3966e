"""The sums of a loop a ``np.sum`` was folded into, added in any order.

:mod:`..plan.map_sums` turns ``r[i] = g(...)`` then ``np.sum(r)`` into a loop of sums; the
plan fuses it, so one loop computes each element, adds it to the sum, and adds its
share into the adjoints of the values from before the loop (``mu_bar += ...``). Each of
those adds is a chain through the iterations, and a chain of ordinary float adds keeps
LLVM's loop vectoriser out: it may not reorder them. ``np.sum`` promises no order (NumPy
adds pairwise), so in such a loop the sum and the adjoint sums are written with
``radd`` (:func:`..runtime.radd`, an add LLVM may reassociate): the loop then runs in SIMD
lanes, each lane with its own partial sums, added together after it. Only these sums
change order; every other operation is the statement's own.

A sum qualifies when it is a float name only added into in the loop (``v += e``), read
nowhere else in it; the folded sum itself is ``next = acc + e``. Loops of ``prange``
(Numba's parfor reductions read ``+=``) are left as they are.
"""
import ast

from numba.core import types as nbtypes

from .syntax import walk


def reassociate_folded_sums(fn, sums, types):
    """Rewrite in place the loops of function ``fn`` (an ``ast.FunctionDef``) that add
    into one of ``sums`` (the source names of folded sums); ``types``: ``{name: Numba
    type}``."""
    if not sums:
        return
    for node in list(walk(fn)):
        if isinstance(node, (ast.While, ast.For)) and not _is_prange(node):
            folded = [st for st in _own_statements(node) if _folded_add(st, sums)]
            if folded:
                _rewrite(node, folded, types)


def _is_prange(node):
    if not isinstance(node, ast.For) or not isinstance(node.iter, ast.Call):
        return False
    f = node.iter.func
    return (isinstance(f, ast.Attribute) and f.attr == "prange") or \
        (isinstance(f, ast.Name) and f.id == "prange")


def _own_statements(loop):
    """The statements of ``loop``, in branches too, not in loops inside it."""
    out, todo = [], list(loop.body)
    while todo:
        st = todo.pop()
        out.append(st)
        if isinstance(st, ast.If):
            todo.extend(st.body)
            todo.extend(st.orelse)
    return out


def _folded_add(st, sums):
    return isinstance(st, ast.Assign) and len(st.targets) == 1 \
        and isinstance(st.targets[0], ast.Name) and isinstance(st.value, ast.BinOp) \
        and isinstance(st.value.op, ast.Add) and isinstance(st.value.left, ast.Name) \
        and st.value.left.id in sums


def _rewrite(loop, folded, types):
    stores, loads = {}, {}
    for n in walk(loop):
        if isinstance(n, ast.Name):
            (stores if isinstance(n.ctx, ast.Store) else loads)[n.id] = \
                (stores if isinstance(n.ctx, ast.Store) else loads).get(n.id, 0) + 1
    for st in folded:
        st.value = _radd(st.value.left, st.value.right)
    for st in _own_statements(loop):
        if not (isinstance(st, ast.AugAssign) and isinstance(st.op, ast.Add)
                and isinstance(st.target, ast.Name)):
            continue
        v = st.target.id
        if not isinstance(types.get(v), nbtypes.Float) or stores.get(v) != \
                _adds_into(loop, v) or loads.get(v, 0):
            continue
        new = ast.Assign(targets=[ast.Name(v, ast.Store())],
                         value=_radd(ast.Name(v, ast.Load()), st.value))
        ast.copy_location(new, st)
        _replace(loop, st, new)


def _adds_into(loop, v):
    return sum(1 for n in walk(loop) if isinstance(n, ast.AugAssign)
               and isinstance(n.target, ast.Name) and n.target.id == v
               and isinstance(n.op, ast.Add))


def _radd(a, b):
    return ast.Call(func=ast.Name("radd", ast.Load()), args=[a, b], keywords=[])


def _replace(loop, old, new):
    for n in walk(loop):
        for field in ("body", "orelse"):
            body = getattr(n, field, None)
            if isinstance(body, list):
                for k, st in enumerate(body):
                    if st is old:
                        body[k] = new
                        return
