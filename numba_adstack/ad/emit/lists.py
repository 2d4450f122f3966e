"""Adjoints of lists of floats (and typed Lists), and of typed Dicts of floats, made in
the function.

A typed Dict ``d`` whose floats the gradient reads gets, at the start of the reverse
sweep, an adjoint Dict of its final keys, each 0 (``dict_zeros``): a read ``d[k]`` adds
into ``d_bar[k]``, a store ``d[k] = v`` gives ``v`` that adjoint and clears it.

A list whose floats the gradient reads (:func:`..facts.containers.container_adjoints`)
gets, at the start of the reverse sweep, an adjoint array of its final length and a count
of the items it holds, ``len(L)``. The sweep walks the forward backwards, so at every point the
count is the list's length at the same point of the forward: ``L.append(v)`` reversed
takes the count down by one and gives ``v`` the adjoint of that last item; a read
``L[i]`` adds into item ``i`` (a negative ``i`` counted from the count); a store
``L[i] = v`` gives ``v`` item ``i``'s adjoint and clears it; the items of ``[a, b]`` get
the first adjoints (those of ``{k: a, ...}``, as stores, the adjoints of their keys). The list itself is the forward's (its values are the replay's).

A list of float arrays gets a list of zero arrays, one of each item's shape
(``list_zeros_like``): a read adds the read array's adjoint into its item's (``acc``, to
the read array's shape), a store takes it and leaves an empty one (the array the list
held before may have another shape), and an append reversed hands the last item's
adjoint to the array appended (``acc`` copies it: the two never share memory).
"""
import ast

from numba.core import ir, types

from ..facts.containers import container_root
from ..typeinfo import is_array_list, is_float_array, is_float_dict
from ..generated_source.code import attribute, expr
from .contributions import Add, Assigned, Guarded, ThroughView


def declarations(cx, L):
    """The adjoint array and the count of every list adjoint, at the start of the sweep."""
    for name in sorted(cx.activity.container_adjoints):
        if is_float_dict(cx.facts.ty(name)):
            L.code("{} = dict_zeros({})", bar(cx, name), cx.adjoints.ref(name))
            continue
        if is_array_list(cx.facts.ty(name)):
            L.code("{} = list_zeros_like({})", bar(cx, name), cx.adjoints.ref(name))
        else:
            L.code("{} = np.zeros(len({}), {})", bar(cx, name), cx.adjoints.ref(name),
                   attribute("np", cx.facts.ty(name).dtype))
        L.code("{} = len({})", count(cx, name), cx.adjoints.ref(name))


def bar(cx, name):
    return cx.names.bar(name)


def count(cx, name):
    return "_n_" + cx.names.bar(name)


def holds_adjoint(cx, var):
    return var is not None and bool(cx.activity.container_adjoints) and \
        _root(cx, var) in cx.activity.container_adjoints


def _root(cx, var):
    """The list adjoint's name: that of the list made, whatever copy names it here."""
    return container_root(cx.facts, var if isinstance(var, str) else var.name)


def _item(cx, name, index):
    """The adjoint of item ``index`` (source) of the list ``name``, a negative index
    counted from the items it holds at this point (of a Dict: the key ``index``)."""
    if is_float_dict(cx.facts.ty(name)) or _non_negative_literal(index):
        return expr("{}[{}]", bar(cx, name), index)
    return expr("{}[{} if {} >= 0 else {} + {}]", bar(cx, name), index, index, index,
                count(cx, name))


def _non_negative_literal(index):
    """Is the index a literal ``0``, ``1``...?"""
    if isinstance(index, ast.Constant):
        return type(index.value) is int and index.value >= 0
    return isinstance(index, str) and index.isdigit()


def read(cx, e, g, name=None):
    """The contribution of ``name = L[i]`` (``e``) to the list's adjoint. An array item's
    adjoint is accumulated with ``acc`` to the shape of the array read: a store reversed
    leaves the item's adjoint empty (the array there before may have had another shape),
    and the read's adjoint may hold nothing yet (only its shape read)."""
    cell = _item(cx, _root(cx, e.value), cx.src.index(e, cx.adjoints.ref))
    if is_array_list(cx.facts.ty(_root(cx, e.value))):
        return [Assigned(cell, expr("acc({}, {}, {})", cell, g,
                                    cx.adjoints.ref_shape(name)))]
    return [Add(cell, g)]


def loop_item(cx, rl, h, g):
    """The contribution of ``for v in L`` at the iteration ``_it{h}``."""
    it = "_it%d" % h
    return [Guarded(expr("{} < {}", it, rl.len),
                    expr("{}[{}]", bar(cx, _root(cx, rl.array)), it), g)]


def reverse_statement(rev, L, stmt):
    """Reverse ``stmt`` when it puts items into a list adjoint; True when it did."""
    cx = rev.cx
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        if not holds_adjoint(cx, stmt.target):
            return False
        name = _root(cx, stmt.target)
        cell = _item(cx, name, cx.src.store_index(stmt, cx.adjoints.ref))
        if stmt.value.name in cx.activity.useful:
            _give(rev, L, stmt.value, cell)
        _clear(cx, L, name, cell)
        return True
    e = stmt.value if isinstance(stmt, ir.Assign) else None
    if not isinstance(e, ir.Expr):
        return False
    if e.op == "build_list" and holds_adjoint(cx, stmt.target):
        name = stmt.target.name
        for k, item in enumerate(e.items):
            if item.name in cx.activity.useful:
                _give(rev, L, item, expr("{}[{}]", bar(cx, name), k))
        return True
    if e.op == "build_map" and holds_adjoint(cx, stmt.target):
        # The items as stores, reversed: a key given twice keeps its last value.
        name = stmt.target.name
        for key, item in reversed(e.items):
            cell = _item(cx, name, cx.adjoints.ref(key))
            if item.name in cx.activity.useful:
                rev.make_adjoints(L)
                rev.accumulate(L, Add(cx.names.bar(item), cell))
            L.code("{} = 0.0", cell)
        return True
    if e.op != "call":
        return False
    method = cx.facts.def_expr(e.func.name)
    if not (isinstance(method, ir.Expr) and method.op == "getattr" and
            method.attr == "append" and holds_adjoint(cx, method.value)):
        return False
    name = _root(cx, method.value)
    L.code("{} -= 1", count(cx, name))
    v = e.args[0]
    if v.name in cx.activity.useful:
        _give(rev, L, v, expr("{}[{}]", bar(cx, name), count(cx, name)))
    return True


def _give(rev, L, v, cell):
    """The adjoint of the item ``cell`` (source) into that of ``v``, the value put there."""
    cx = rev.cx
    if is_float_array(cx.facts.ty(v.name)):
        for c in cx.adjoints.array_target(v, cell, shaped=True):
            rev.make_adjoints(L)
            if isinstance(c, ThroughView):      # (the item's adjoint may be empty)
                L.code("add_adjoint({}, {})", c.adjoint, c.source)
            else:
                rev.accumulate(L, c)
        return
    rev.make_adjoints(L)
    rev.accumulate(L, Add(cx.names.bar(v), cell))


def _clear(cx, L, name, cell):
    """The item's adjoint after a store reversed: what the list held before got none."""
    if is_array_list(cx.facts.ty(name)):
        L.code("{0} = np.zeros_like({0}[:0])", cell)        # empty: nothing yet
    else:
        L.code("{} = 0.0", cell)


def is_list(t):
    return isinstance(t, (types.List, types.ListType))
