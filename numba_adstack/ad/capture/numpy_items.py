"""Items of the tuples and lists NumPy functions return, read as functions of their own;
``np.select`` of lists written at the call, as the ``np.where`` calls it makes.

``np.linalg.eigh(a)[0]`` (or ``w, v = np.linalg.eigh(a)``) becomes ``eigh_values(a)``
before typing, a primitive with an array rule (rules/vjp_decomp.py; lstsq's items in
rules/vjp_lstsq.py, polydiv's in rules/vjp_poly.py), so the rewrite never sees the tuple;
``np.split(x, n, axis=1)[k]`` becomes ``split_item(x, n, k, 1)`` (rules/vjp_split.py), ``k``
a constant or a variable. Items with no derivative rule are left as they are; the checks
refuse them naming the function and the item.
"""
import numpy as np
from numba.core import ir
from numba.core.ir_utils import build_definitions

from ..rules import vjp_decomp as D
from ..rules import vjp_lstsq, vjp_poly, vjp_split
from .ir_emitter import ir_global

#: function -> the function of each item (None: no rule), and the parameters the call may
#: pass (by position or keyword), which the item's function takes alike.
ITEMS = {
    np.linalg.eigh: ((D.eigh_values, D.eigh_vectors), ("a",)),
    np.linalg.eig: ((D.eig_values, D.eig_vectors), ("a",)),
    np.linalg.svd: ((D.svd_u, D.svd_values, D.svd_vh), ("a", "full_matrices")),
    np.linalg.slogdet: ((D.slogdet_sign, D.slogdet_logabs), ("a",)),
    np.linalg.qr: ((D.qr_q, D.qr_r), ("a",)),
    np.linalg.lstsq: ((vjp_lstsq.lstsq_solution, vjp_lstsq.lstsq_residuals,
                       vjp_lstsq.lstsq_rank, vjp_lstsq.lstsq_sv), ("a", "b", "rcond")),
    np.polynomial.polynomial.polydiv: ((vjp_poly.polydiv_quotient,
                                        vjp_poly.polydiv_remainder), ("c1", "c2")),
}
#: Functions returning a list of arrays -> the function of one item, given the call's
#: array, its sections and the item's index (then the axis, where the function takes one).
LIST_ITEMS = {np.split: vjp_split.split_item, np.array_split: vjp_split.array_split_item,
              np.hsplit: vjp_split.hsplit_item, np.vsplit: vjp_split.vsplit_item,
              np.dsplit: vjp_split.dsplit_item}
_TAKES_AXIS = {np.split, np.array_split}


def _definition(func_ir, var):
    """What ``var`` is assigned, through copies and casts (an inlined callee's return)."""
    try:
        d = func_ir.get_definition(var)
        while isinstance(d, ir.Expr) and d.op == "cast":
            d = func_ir.get_definition(d.value)
        return d
    except Exception:
        return None


def _called(func_ir, e):
    """The function a call calls, when it is a global (or a module's attribute)."""
    d = _definition(func_ir, e.func)
    if isinstance(d, ir.Expr) and d.op == "getattr":
        base = ir_global(func_ir, d.value)
        return getattr(base, d.attr, None) if base is not None else None
    return d.value if isinstance(d, (ir.Global, ir.FreeVar)) else None


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
    """The call of ``LIST_ITEMS`` producing ``var``, the function of its items and their
    arguments but the index (the array, the sections and any axis); or None."""
    d = _definition(func_ir, var)
    if not (isinstance(d, ir.Expr) and d.op == "call") or d.vararg is not None:
        return None
    try:
        fn = _called(func_ir, d)
        item = LIST_ITEMS.get(fn)
    except TypeError:
        return None
    if item is None:
        return None
    kws = dict(d.kws)
    axis = d.args[2:] + ([kws.pop("axis")] if "axis" in kws else [])
    if len(d.args) < 2 or kws or len(axis) > (fn in _TAKES_AXIS):
        return None
    return d, item, list(d.args[:2]) + axis


def _only_read(func_ir, var):
    """Is the list ``var`` only read (items, ``len``, unpacking, loops)? A list changed in
    place (``p.pop(0)``, ``p[0] = y``) no longer holds the pieces in order."""
    for block in func_ir.blocks.values():
        for stmt in block.body:
            if var.name not in (v.name for v in stmt.list_vars()):
                continue
            e = stmt.value if isinstance(stmt, ir.Assign) else None
            if not isinstance(e, ir.Expr):
                if not (isinstance(stmt, ir.Assign) and stmt.target.name == var.name):
                    return False
            elif e.op in ("static_getitem", "getitem", "exhaust_iter", "getiter"):
                if e.value.name != var.name or (e.op == "getitem"
                                                and e.index.name == var.name):
                    return False
            elif e.op == "call" and _called(func_ir, e) is len and not e.kws:
                continue
            elif stmt.target.name != var.name:
                return False
    return True


def _item_index(func_ir, e):
    """The index of ``e``, a getitem of a list (a constant or a variable), or None for a
    slice."""
    if e.op == "static_getitem":
        return e.index if isinstance(e.index, int) else None
    if e.op != "getitem":
        return None
    d = _definition(func_ir, e.index)
    if isinstance(d, ir.Expr) and d.op == "call" and _called(func_ir, d) is slice:
        return None
    return e.index


def rewrite_items(func_ir):
    """Rewrite the item reads of ``ITEMS``'s and ``LIST_ITEMS``'s functions and the
    ``np.select`` calls of lists built at the call; True when any was."""
    func_ir._definitions = build_definitions(func_ir.blocks)
    unread = _expand_selects(func_ir)
    changed = bool(unread)
    for block in func_ir.blocks.values():
        k = 0
        while k < len(block.body):
            stmt = block.body[k]
            k += 1
            if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                    and stmt.value.op in ("static_getitem", "getitem")):
                continue
            split = _list_call(func_ir, stmt.value.value)
            if split is not None and not _only_read(func_ir, stmt.value.value):
                split = None
            index = _item_index(func_ir, stmt.value)
            loc = stmt.loc
            if split is not None and index is not None:
                call, fn, args = split
                gvar = block.scope.redefine("$np_item", loc)
                block.body.insert(k - 1, ir.Assign(ir.Global(fn.__name__, fn, loc), gvar, loc))
                k += 1
                if not isinstance(index, ir.Var):
                    ivar = block.scope.redefine("$np_item_index", loc)
                    block.body.insert(k - 1, ir.Assign(ir.Const(index, loc), ivar, loc))
                    index = ivar
                    k += 1
                stmt.value = ir.Expr.call(gvar, args[:2] + [index] + args[2:], (), loc)
                changed = True
                continue
            found = _tuple_call(func_ir, stmt.value.value)
            if found is None or stmt.value.op != "static_getitem" \
                    or not isinstance(index, int):
                continue
            call, (items, params) = found
            if not 0 <= index < len(items) or items[index] is None \
                    or not 1 <= len(call.args) <= len(params) \
                    or any(name not in params[len(call.args):] for name, _ in call.kws):
                continue
            fn = items[index]
            gvar = block.scope.redefine("$np_item", loc)
            block.body.insert(k - 1, ir.Assign(ir.Global(fn.__name__, fn, loc), gvar, loc))
            stmt.value = ir.Expr.call(gvar, list(call.args), list(call.kws), loc)
            k += 1
            changed = True
    if changed:
        _drop_unread_tuples(func_ir, unread)
        func_ir._definitions = build_definitions(func_ir.blocks)
    return changed


def _sequence_items(func_ir, var, uses):
    """The items of the tuple, or of the list read nowhere else (``append`` would change
    it), built as ``var``; else None."""
    d = _definition(func_ir, var)
    if isinstance(d, ir.Expr) and (d.op == "build_tuple" or (
            d.op == "build_list" and uses.get(var.name, 0) == 1)):
        return list(d.items)
    return None


def _uses(func_ir):
    """Variable name -> how many statements read it (an alias counts as a read)."""
    out = {}
    for block in func_ir.blocks.values():
        for stmt in block.body:
            names = [v.name for v in stmt.list_vars()]
            if isinstance(stmt, ir.Assign):
                names.remove(stmt.target.name)
            for n in set(names):
                out[n] = out.get(n, 0) + 1
    return out


def _expand_selects(func_ir):
    """``np.select([c0, c1], [x0, x1], default)`` -> ``np.where(c0, x0, np.where(c1, x1,
    default))``, as Numba computes it, where both lists are written at the call; the
    names of the lists, to drop once unread."""
    lists = set()
    uses = _uses(func_ir)
    for block in func_ir.blocks.values():
        body = []
        for stmt in block.body:
            e = stmt.value if isinstance(stmt, ir.Assign) else None
            if not (isinstance(e, ir.Expr) and e.op == "call" and e.vararg is None
                    and _called(func_ir, e) is np.select):
                body.append(stmt)
                continue
            kws = dict(e.kws)
            args = list(e.args) + [kws.pop(n) for n in ("condlist", "choicelist", "default")
                                   [len(e.args):] if n in kws]
            conds = _sequence_items(func_ir, args[0], uses) if len(args) > 1 else None
            choices = _sequence_items(func_ir, args[1], uses) if len(args) > 1 else None
            if kws or len(args) > 3 or not conds or choices is None \
                    or len(conds) != len(choices):
                body.append(stmt)
                continue
            loc = stmt.loc
            where = block.scope.redefine("$np_where", loc)
            body.append(ir.Assign(ir.Global("where", np.where, loc), where, loc))
            if len(args) == 3:
                out = args[2]
            else:
                out = block.scope.redefine("$np_select_default", loc)
                body.append(ir.Assign(ir.Const(0, loc), out, loc))
            for k in range(len(conds) - 1, -1, -1):
                target = stmt.target if k == 0 else block.scope.redefine("$np_select", loc)
                body.append(ir.Assign(ir.Expr.call(where, [conds[k], choices[k], out], (),
                                                   loc), target, loc))
                out = target
            lists.update((args[0].name, args[1].name))
        block.body = body
    if lists:
        func_ir._definitions = build_definitions(func_ir.blocks)
    return lists


def _droppable(func_ir, stmt):
    """Is ``stmt`` an unpacking, or the call of ``ITEMS``'s or ``LIST_ITEMS``'s function
    or a copy or cast of its result (what an inlined callee's return leaves)?"""
    v = stmt.value
    if isinstance(v, ir.Expr) and v.op == "exhaust_iter":
        return True
    if not (isinstance(v, ir.Var) or isinstance(v, ir.Expr) and v.op in ("call", "cast")):
        return False
    return _tuple_call(func_ir, stmt.target) is not None or \
        _list_call(func_ir, stmt.target) is not None


def _drop_unread_tuples(func_ir, lists=()):
    """Remove the calls of ``ITEMS``'s functions (and their unpacking) whose tuple is no
    longer read, and the ``lists`` no longer read: the rewrite would otherwise see a
    tuple of varied arrays computed."""
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
                # (the call, and the copies and casts of its result an inlined
                # callee's return leaves)
                if isinstance(stmt, ir.Assign) and stmt.target.name not in read and (
                        stmt.target.name in lists or _droppable(func_ir, stmt)):
                    dropped = True
                    continue
                keep.append(stmt)
            block.body = keep
        if not dropped:
            return
        func_ir._definitions = build_definitions(func_ir.blocks)
