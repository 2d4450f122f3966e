"""Writes made explicit: the spellings that write into an array through a call become the
stores and in-place operators the rest of the rewrite reads and differentiates.

Reads the untyped IR (before SSA, after the Numba callees are inlined and the loop forms
rewritten) and rewrites, statement by statement::

    r = np.sin(x, out)  /  np.sin(x, out=out)   ->  t = np.sin(x); out[:] = t; r = out
    r = np.dot(A, x, out) (any NumPy ``out``)    ->  t = np.dot(A, x); out[:] = t; r = out
    r = a.clip(lo, hi, out)                       ->  t = a.clip(lo, hi); out[:] = t; r = out
    r = operator.imul(a, b)                       ->  r = a *= b   (the in-place operator)
    np.copyto(dst, src)                           ->  dst[:] = src
    a.fill(v)                                     ->  a[:] = v
    a.sort()                                      ->  a[:] = np.sort(a)
    np.nan_to_num(a, copy=False)                  ->  a[:] = np.nan_to_num(a)
    a.flat[k] = v  /  v = a.flat[k]               ->  a[k // m, k % m] = v  /  v = a[...]

Each replacement computes the same values into the same memory as the call (``out[:] =
t`` casts as the ufunc's ``out`` does). What is not rewritten here is named by the effect
table (:mod:`..rules.array_effects`) and refused by the checks where the gradient reads
the memory written.
"""
import operator

import numpy as np
from numba.core import ir, types
from numba.core.compiler_machinery import register_pass
from numba.core.ir_utils import build_definitions

from .ir_emitter import RefusingPass, global_value, read_names, rewrite_statements, unravel
from .loopforms import ndim_before_typing
from ..rules.array_effects import method_out_position, out_position
from ..rules.scalar import INPLACE_TO_BINOP

# operator.iadd ... operator.ipow, operator.imatmul: the in-place operators as functions.
_INPLACE_FUNCTIONS = {**INPLACE_TO_BINOP, operator.imatmul: operator.matmul}


def _method(em, var):
    """``(receiver, name)`` when the called variable is ``receiver.name``; else None."""
    d = em.definition(var)
    if isinstance(d, ir.Expr) and d.op == "getattr" and global_value(em, var) is None:
        return d.value, d.attr
    return None


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _is_none(em, var):
    d = em.definition(var)
    return isinstance(d, ir.Const) and d.value is None


def _const(em, var):
    d = em.definition(var)
    return d.value if isinstance(d, ir.Const) else d


def _split_out(em, e, position):
    """``(args, kws, out)`` of a call whose ``out`` is at ``position`` (or keyword): the
    arguments without it, and the array written (None when no ``out`` is given)."""
    args, kws = list(e.args), list(e.kws)
    out = None
    if position is not None and len(args) > position:
        out = args.pop(position)
    for k, (name, v) in enumerate(kws):
        if name == "out":
            out = v
            del kws[k]
            break
    if out is None or _is_none(em, out):
        return args, kws, None
    d = em.definition(out)
    if isinstance(d, ir.Expr) and d.op == "build_tuple":
        if len(d.items) != 1:
            em.refuse("a ufunc given %d `out` arrays" % len(d.items))
        out = d.items[0]
    return args, kws, out


def _store_all(em, target, value):
    """``target[:] = value`` (what ``target[...] = value`` does to an array of one or more
    dimensions; Numba reads no ``a[...]``, which the reverse of the store would)."""
    none = em.const(None)
    em.emit(ir.SetItem(target, em.call(slice, none, none), value, em.loc))


def _rewrite_assign(em, stmt):
    """The statements replacing ``stmt`` (an assignment of a call), or None to keep it."""
    e = stmt.value
    fn = global_value(em, e.func)
    method = _method(em, e.func) if fn is None else None
    if _hashable(fn) and fn in _INPLACE_FUNCTIONS and len(e.args) == 2 and not e.kws:
        # ``a op= b``: of an array, written into a's memory and ``a`` is the result, so it
        # is rebound as the operator rebinds it (the reads after it, and a loop around it,
        # see the value written); of a number, a new value and ``a`` unchanged: the sites
        # typing found on numbers are rewritten again without it (:func:`scalar_sites`).
        stmt.value = ir.Expr.inplace_binop(fn, _INPLACE_FUNCTIONS[fn], e.args[0], e.args[1],
                                           e.loc)
        a = e.args[0]
        if a.name.startswith("$") or _site(e.loc) in em.scalar_sites:
            return [stmt]
        REBOUND.add(_site(e.loc))
        return [stmt, ir.Assign(stmt.target, a, e.loc)]
    if fn is np.copyto and len(e.args) == 2 and not e.kws:
        _store_all(em, e.args[0], e.args[1])
        return em.out + [ir.Assign(ir.Const(None, e.loc), stmt.target, e.loc)]
    if fn is np.nan_to_num and e.args and any(
            k == "copy" and _const(em, v) is False for k, v in e.kws):
        kws = [(k, v) for k, v in e.kws if k != "copy"]
        t = em.assign(ir.Expr.call(e.func, list(e.args), kws, e.loc), "$written")
        _store_all(em, e.args[0], t)
        return em.out + [ir.Assign(e.args[0], stmt.target, e.loc)]
    if method is not None:
        receiver, name = method
        if name == "fill" and len(e.args) == 1 and not e.kws:
            _store_all(em, receiver, e.args[0])
            return em.out + [ir.Assign(ir.Const(None, e.loc), stmt.target, e.loc)]
        if name == "sort" and not e.args and not e.kws and _known_array(em, receiver):
            _store_all(em, receiver, em.call(np.sort, receiver))
            return em.out + [ir.Assign(ir.Const(None, e.loc), stmt.target, e.loc)]
        position = method_out_position(name)
    elif fn is not None and e.vararg is None:
        position = out_position(fn)
    else:
        return None
    if position is None and not any(k == "out" for k, _ in e.kws):
        return None
    args, kws, out = _split_out(em, e, position)
    if out is None:
        if len(args) != len(e.args) or len(kws) != len(e.kws):     # out=None given
            stmt.value = ir.Expr.call(e.func, args, kws, e.loc)
            return [stmt]
        return None
    t = em.assign(ir.Expr.call(e.func, args, kws, e.loc), "$written")
    _store_all(em, out, t)
    return em.out + [ir.Assign(out, stmt.target, e.loc)]


def _known_array(em, var):
    """Is ``var`` known before typing to be an array (not a list, which sorts too)?"""
    if ndim_before_typing(em, var) is not None:
        return True
    d = em.definition(var)
    if isinstance(d, ir.Expr) and d.op in ("binop", "inplace_binop", "unary"):
        return True
    return isinstance(d, ir.Expr) and d.op == "call" and isinstance(
        global_value(em, d.func), np.ufunc)


def _flat_of(em, var):
    """The array ``a`` when ``var`` is ``a.flat``, else None."""
    d = em.definition(var)
    if isinstance(d, ir.Expr) and d.op == "getattr" and d.attr == "flat":
        return d.value
    return None


def _flat_index(em, array, k):
    """The index of ``array`` that ``array.flat[k]`` names, or None when the array's
    dimensions are not known before typing."""
    ndim = ndim_before_typing(em, array)
    if ndim is None:
        return None
    if ndim == 1:
        return k
    shape = em.assign(ir.Expr.getattr(array, "shape", em.loc))
    dims = [em.static_getitem(shape, j) for j in range(ndim)]
    return em.tuple(unravel(em, k, dims)).var


def _rewrite(em, stmt):
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        array = _flat_of(em, stmt.target)
        if array is None:
            return None
        k = stmt.index if isinstance(stmt, ir.SetItem) else (
            stmt.index_var or em.const(stmt.index))
        idx = _flat_index(em, array, k)
        if idx is None:
            return None
        return em.out + [ir.SetItem(array, idx, stmt.value, stmt.loc)]
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)):
        return None
    e = stmt.value
    if e.op in ("getitem", "static_getitem"):
        array = _flat_of(em, e.value)
        if array is None:
            return None
        k = e.index if e.op == "getitem" else (e.index_var or em.const(e.index))
        idx = _flat_index(em, array, k)
        if idx is None:
            return None
        stmt.value = ir.Expr.getitem(array, idx, e.loc)
        return em.out + [stmt]
    if e.op == "call":
        return _rewrite_assign(em, stmt)
    return None


# The sites rebound by the last capture (read under Numba's compiler lock).
REBOUND = set()


def _site(loc):
    return (loc.filename, loc.line, loc.col)


class ScalarInPlaceSites(Exception):
    """Typing found ``operator.iadd(a, b)``... rebound on numbers at these sites: the
    capture runs again without rebinding them."""

    def __init__(self, sites):
        super().__init__(sites)
        self.sites = frozenset(sites)


def scalar_sites(fir, typemap):
    """The sites of in-place operators whose ``a`` typed as no array (of those, the
    ``operator.i*(a, b)`` this pass rebound, in ``REBOUND``, were rebound wrongly)."""
    found = set()
    for blk in fir.blocks.values():
        for stmt in blk.body:
            e = stmt.value if isinstance(stmt, ir.Assign) else None
            if isinstance(e, ir.Expr) and e.op == "inplace_binop" \
                    and stmt.target.name.startswith("$") \
                    and not isinstance(typemap.get(e.lhs.name), types.Array):
                found.add(_site(e.loc))
    return found


def _drop_unused_methods(fir):
    """Drop the ``a.fill``/``a.sort`` attributes whose call was rewritten away (Numba
    would type them, as bound methods, for nothing)."""
    used = read_names(fir)
    for blk in fir.blocks.values():
        blk.body = [s for s in blk.body if not (
            isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
            and s.value.op == "getattr" and s.value.attr in ("fill", "sort", "flat")
            and s.target.name not in used)]


@register_pass(mutates_CFG=False, analysis_only=False)
class RewriteWrites(RefusingPass):
    """Make writes through calls explicit stores and in-place operators (see
    :mod:`.writes`)."""
    _name = "numba_adstack_rewrite_writes"

    def _run(self, state):
        changed = rewrite_statements(state, _rewrite, scalar_sites=getattr(
            state.pipeline, "scalar_inplace_sites", ()))
        if changed:
            _drop_unused_methods(state.func_ir)
            state.func_ir._definitions = build_definitions(state.func_ir.blocks)
        return changed
