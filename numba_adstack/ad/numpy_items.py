"""Items of the tuples NumPy functions return, read as functions of their own.

``np.linalg.eigh(a)[0]`` (or ``w, v = np.linalg.eigh(a)``) becomes ``eigh_values(a)``
before typing, a primitive with an array rule (rules/vjp_decomp.py), so the rewrite never
sees the tuple. Items with no derivative rule (the singular vectors of ``svd``) are left
as they are; the checks refuse them naming the function and the item.
"""
import numpy as np
from numba.core import ir
from numba.core.ir_utils import build_definitions

from .rules import vjp_decomp as D

#: function -> the function of each item (None: no rule), and the keyword arguments that
#: leave the items read unchanged.
ITEMS = {
    np.linalg.eigh: ((D.eigh_values, D.eigh_vectors), ()),
    np.linalg.svd: ((None, D.svd_values, None), ("full_matrices",)),
    np.linalg.slogdet: ((D.slogdet_sign, D.slogdet_logabs), ()),
}
#: Functions returning a list of arrays -> the function of one item, given the call's
#: arguments and the item's index.
LIST_ITEMS = {np.split: D.split_item, np.array_split: D.array_split_item}


def _definition(func_ir, var):
    try:
        return func_ir.get_definition(var)
    except Exception:
        return None


def _called(func_ir, e):
    """The function a call calls, when it is a global (or a module's attribute)."""
    d = _definition(func_ir, e.func)
    if isinstance(d, (ir.Global, ir.FreeVar)):
        return d.value
    if isinstance(d, ir.Expr) and d.op == "getattr":
        base = _called_base(func_ir, d.value)
        return getattr(base, d.attr, None) if base is not None else None
    return None


def _called_base(func_ir, var):
    d = _definition(func_ir, var)
    if isinstance(d, (ir.Global, ir.FreeVar)):
        return d.value
    if isinstance(d, ir.Expr) and d.op == "getattr":
        base = _called_base(func_ir, d.value)
        return getattr(base, d.attr, None) if base is not None else None
    return None


def _tuple_call(func_ir, var):
    """The call producing the tuple ``var`` (through ``a, b = ...``), and its entry."""
    d = _definition(func_ir, var)
    if isinstance(d, ir.Expr) and d.op == "exhaust_iter":
        d = _definition(func_ir, d.value)
    if not (isinstance(d, ir.Expr) and d.op == "call") or d.vararg is not None:
        return None
    try:
        entry = ITEMS.get(_called(func_ir, d))
    except TypeError:
        return None
    return None if entry is None else (d, entry)


def _list_call(func_ir, var):
    """The call of ``LIST_ITEMS`` (two positional arguments) producing ``var``, and the
    function of its items."""
    d = _definition(func_ir, var)
    if not (isinstance(d, ir.Expr) and d.op == "call") or d.vararg is not None \
            or d.kws or len(d.args) != 2:
        return None
    try:
        fn = LIST_ITEMS.get(_called(func_ir, d))
    except TypeError:
        return None
    return None if fn is None else (d, fn)


def rewrite_items(func_ir):
    """Rewrite the item reads of ``ITEMS``'s functions; True when any was."""
    func_ir._definitions = build_definitions(func_ir.blocks)
    changed = False
    for block in func_ir.blocks.values():
        k = 0
        while k < len(block.body):
            stmt = block.body[k]
            k += 1
            if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                    and stmt.value.op == "static_getitem"
                    and isinstance(stmt.value.index, int)):
                continue
            split = _list_call(func_ir, stmt.value.value)
            if split is not None:
                call, fn = split
                loc = stmt.loc
                gvar = block.scope.redefine("$np_item", loc)
                ivar = block.scope.redefine("$np_item_index", loc)
                block.body.insert(k - 1, ir.Assign(ir.Global(fn.__name__, fn, loc), gvar, loc))
                block.body.insert(k, ir.Assign(ir.Const(stmt.value.index, loc), ivar, loc))
                stmt.value = ir.Expr.call(gvar, list(call.args) + [ivar], (), loc)
                k += 2
                changed = True
                continue
            found = _tuple_call(func_ir, stmt.value.value)
            if found is None:
                continue
            call, (items, ignored) = found
            index = stmt.value.index
            if not 0 <= index < len(items) or items[index] is None or len(call.args) != 1 \
                    or any(name not in ignored for name, _ in call.kws):
                continue
            fn = items[index]
            loc = stmt.loc
            gvar = block.scope.redefine("$np_item", loc)
            block.body.insert(k - 1, ir.Assign(ir.Global(fn.__name__, fn, loc), gvar, loc))
            stmt.value = ir.Expr.call(gvar, list(call.args), (), loc)
            k += 1
            changed = True
    if changed:
        _drop_unread_tuples(func_ir)
        func_ir._definitions = build_definitions(func_ir.blocks)
    return changed


def _drop_unread_tuples(func_ir):
    """Remove the calls of ``ITEMS``'s functions (and their unpacking) whose tuple is no
    longer read: the rewrite would otherwise see a tuple of varied arrays computed."""
    while True:
        read = set()
        for block in func_ir.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, ir.Assign):
                    v = stmt.value
                    names = [x.name for x in v.list_vars()] if isinstance(v, ir.Expr) else \
                        [v.name] if isinstance(v, ir.Var) else []
                else:
                    names = [x.name for x in stmt.list_vars()]
                read.update(names)
        dropped = False
        for block in func_ir.blocks.values():
            keep = []
            for stmt in block.body:
                if isinstance(stmt, ir.Assign) and stmt.target.name not in read and \
                        isinstance(stmt.value, ir.Expr) and (
                            stmt.value.op == "exhaust_iter" or (
                                stmt.value.op == "call"
                                and (_tuple_call(func_ir, stmt.target) is not None
                                     or _list_call(func_ir, stmt.target) is not None))):
                    dropped = True
                    continue
                keep.append(stmt)
            block.body = keep
        if not dropped:
            return
        func_ir._definitions = build_definitions(func_ir.blocks)
