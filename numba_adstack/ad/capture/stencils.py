"""Whole-array stencil updates in loops, made one primitive with a one-pass pullback.

A time loop written in whole-array NumPy updates its state with an expression of
shifted slices::

    for step in range(n):
        u[1:-1] = u[1:-1] + dt * (D * (u[2:] - 2.0 * u[1:-1] + u[:-2]) / dx ** 2
                                  + k * u[1:-1] * (1.0 - u[1:-1]))

Reversed operation by operation, each step of the backward keeps an array per product
(``k * u[1:-1]``, ``1.0 - u[1:-1]``, ...), and its reverse makes, zeroes and adds an
adjoint array per operation: a dozen passes over the cells per step. Here the typed IR
of such an expression (operators, negations and constant powers of float64 arrays of one
number of dimensions, 1 or 2, their slices of constant bounds and numbers, at least one
slice among them) is replaced
by a call of a generated primitive ``_stencil_<hash>(arrays..., numbers...)`` whose body
is the expression itself (the same NumPy operations: the values are those of the
statement as written, bit for bit) and whose pullback is one loop over the cells: per
cell, the expression's operands read at their offsets, its value recomputed, and its
adjoint taken back to each operand (``a_bar[start + i] += ...``, sums for the numbers).
The backward then keeps the arrays the primitive reads (one state per step) and reverses
each step as that one loop. The sources of the 2-d primitives are made by
:mod:`.stencils_2d`, the text of a cell's adjoint by :mod:`.stencil_cells`.

Only statements inside loops are rewritten (at the top level the element-wise runs of
:mod:`..emit.elementwise` fuse the backward already), and only when nothing between the
expression's first read and its last operation can write an array it reads: a write
in between is allowed only into an array made in the function that none of the arrays
the expression reads is, or is a view of. The pullback follows NumPy's broadcasting of
arrays of the same number of dimensions (an operand of length 1 on an axis against
``m`` elements); any other mismatch of lengths was an error of the primal already.
The pullback's calls for the operands of one statement are one call
(:mod:`..emit.common_calls`).
"""
import hashlib
import operator

import numba
import numpy as np
from numba.core import ir, types
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.ir_utils import build_definitions, find_callname, guard

from .. import runtime
from ..generated_source import exec_source
from ..rules import array_rules, helpers
from ..rules.helper_jit import helper_jit
from ..rules.array_rules import ArrayRule
from . import stencils_2d
from .stencil_cells import CellAdjoint, bound_lines, sources

_BINOPS = {operator.add: "+", operator.sub: "-", operator.mul: "*",
           operator.truediv: "/"}
#: Fewest operations for an expression to be made a primitive.
MIN_OPERATIONS = 2
_FLOAT_ARRAY = (types.float64,)
_CACHE = {}         # source of the expression -> (primitive, pullback name)


def _is_float_array(t, ndim):
    return isinstance(t, types.Array) and t.ndim == ndim and t.dtype in _FLOAT_ARRAY


def _is_number(t):
    return isinstance(t, (types.Float, types.Integer)) and not isinstance(t, types.Boolean)


def _slice_bounds(index):
    """``(start, stop)`` of a constant slice with no step, else None."""
    if not isinstance(index, slice) or index.step is not None:
        return None
    for b in (index.start, index.stop):
        if b is not None and not isinstance(b, int):
            return None
    return index.start, index.stop


def _index_bounds(index, ndim):
    """The bounds of a constant index taking a slice of every axis of an ``ndim``-d
    array: ``(start, stop)`` in 1-d, one such pair per axis in 2-d (``u[1:-1]`` of a 2-d
    ``u`` takes all of its second axis); None for any other index."""
    if ndim == 1:
        return _slice_bounds(index)
    index = index if isinstance(index, tuple) else (index,)
    if not 0 < len(index) <= ndim:
        return None
    bounds = tuple(_slice_bounds(k) for k in index)
    if None in bounds:
        return None
    return bounds + ((None, None),) * (ndim - len(bounds))


def _whole(ndim):
    """The bounds of a whole array."""
    return (None, None) if ndim == 1 else ((None, None),) * ndim


class _Tree:
    """The expression whose value is ``root`` (a variable of one block): its nodes in
    post order, its leaves (array slices and numbers) and the statements it takes."""

    def __init__(self, blk, upto, typemap, uses, consts, ndim):
        self.blk, self.typemap, self.uses, self.consts = blk, typemap, uses, consts
        self.ndim = ndim        # of every array of the expression (1 or 2)
        self.defs = {}
        for j, stmt in enumerate(blk.body[:upto]):
            if isinstance(stmt, ir.Assign):
                self.defs[stmt.target.name] = (j, stmt.value)
        self.nodes = []         # (key, kind, data, operand keys)
        self.keys = set()
        self.taken = set()      # statement indices absorbed
        self.arrays = []        # array variable names, in order
        self.numbers = []       # number variable names, in order
        self.ops = 0
        self.slices = 0

    def leaf_number(self, name):
        if name not in self.numbers:
            self.numbers.append(name)
        return ("num", name)

    def node(self, var, top=False):
        """The key of ``var``'s node, or None when the expression cannot be taken."""
        name = var.name
        t = self.typemap.get(name)
        if name in self.consts:
            c = self.consts[name]
            return ("const", repr(float(c)) if isinstance(c, float) else repr(c))
        d = self.defs.get(name)
        own = d is not None and (top or self.uses.get(name, 0) == 1)
        is_array = _is_float_array(t, self.ndim)
        if own:
            j, e = d
            if isinstance(e, ir.Expr) and e.op == "static_getitem" and is_array and \
                    _is_float_array(self.typemap.get(e.value.name), self.ndim) and \
                    _index_bounds(e.index, self.ndim) is not None:
                return self._add(("slice", e.value.name,
                                  _index_bounds(e.index, self.ndim)), j)
            if isinstance(e, ir.Expr) and e.op == "binop" and (
                    is_array or isinstance(t, types.Float)):
                if e.fn in _BINOPS:
                    a, b = self.node(e.lhs), self.node(e.rhs)
                    if a is None or b is None:
                        return None
                    self.ops += 1
                    return self._add(("op", _BINOPS[e.fn], (a, b), name), j)
                if e.fn is operator.pow and e.rhs.name in self.consts and \
                        isinstance(self.consts[e.rhs.name], (int, float)) and \
                        not isinstance(self.consts[e.rhs.name], bool):
                    a = self.node(e.lhs)
                    if a is None:
                        return None
                    self.ops += 1
                    return self._add(("pow", self.consts[e.rhs.name], (a,), name), j)
            if isinstance(e, ir.Expr) and e.op == "unary" and e.fn is operator.neg and (
                    is_array or isinstance(t, types.Float)):
                a = self.node(e.value)
                if a is None:
                    return None
                self.ops += 1
                return self._add(("neg", None, (a,), name), j)
        if _is_number(t):
            return self.leaf_number(name)
        if is_array:        # a whole array computed before: read as a slice
            return self._add(("slice", name, _whole(self.ndim)), None)
        return None

    def _add(self, key, j):
        if key[0] == "slice":
            if key[1] not in self.arrays:
                self.arrays.append(key[1])
            self.slices += key[2] != _whole(self.ndim)
        if j is not None:
            self.taken.add(j)
        if key not in self.keys:
            self.keys.add(key)
            self.nodes.append(key)
        return key


def _pullback_source(fname, tree, root, arr, num):
    """One loop over the cells: each operand read at its offset, the value recomputed
    node by node, the adjoint taken back to the operands (:class:`.CellAdjoint`)."""
    params = [arr[n] for n in tree.arrays] + [num[n] for n in tree.numbers]
    slices = [k for k in tree.nodes if k[0] == "slice"]
    sl = {k: i for i, k in enumerate(slices)}
    cell = CellAdjoint(tree, root, arr, num, sl)
    L = ["def %s(%s, g):" % (fname, ", ".join(params)),
         "    m = g.shape[0]"]
    L.extend(_bounds(sl, arr))
    for i in sl.values():
        L.append("    if len%d != m and len%d != 1:" % (i, i))
        L.append("        raise ValueError('operands could not be broadcast together')")
    L.extend(cell.prelude())

    def own_share(k, i, b):
        return ("Z%d[i] = %s" if i in direct else "B%d[i] = %s") % (i, b)

    def scatter(k, i, b):
        return "%s_b[lo%d + (i if len%d == m else 0)] += %s" % (arr[k[1]], i, i, b)
    # Where every operand has the result's length (no broadcasting), the loop writes
    # each operand's share into an array of its own and adds its sums in any order
    # (``radd``), so that it runs in SIMD lanes; the shares are added into the operands'
    # adjoints after it, one plain loop each.
    for n in tree.arrays:
        L.append("    %s_b = np.zeros_like(%s)" % (arr[n], arr[n]))
    for o in cell.summed:
        L.append("    %s = 0.0" % cell.total[o])
    L.append("    if %s:" % " and ".join("len%d == m" % i for i in sl.values()))
    # (views of the operands and of their adjoints at each offset: indexing from 0 lets
    # LLVM see the loop's accesses as consecutive; the first share of each array is
    # written into its adjoint, which holds zeros there, the others added after)
    direct, seen = set(), set()
    for k, i in sl.items():
        L.append("        A%d = %s[lo%d:lo%d + m]" % (i, arr[k[1]], i, i))
        L.append("        Z%d = %s_b[lo%d:lo%d + m]" % (i, arr[k[1]], i, i))
        if k[1] not in seen:
            seen.add(k[1])
            direct.add(i)
        else:
            L.append("        B%d = np.empty(m)" % i)
    L.append("        for i in range(m):")
    L.extend(cell.body(lambda j, a: "A%d[i]" % j, 3, own_share, "g[i]"))
    for k, i in sl.items():
        if i not in direct:
            L.append("        for i in range(m):")
            L.append("            Z%d[i] += B%d[i]" % (i, i))
    L.append("    else:")
    L.append("        for i in range(m):")
    L.extend(cell.body(lambda j, a: "%s[lo%d + (i if len%d == m else 0)]" % (a, j, j), 3,
                       scatter, "g[i]"))
    L.extend(cell.epilogue())
    L.append("    return (%s,)" % ", ".join("%s_b" % p for p in params))
    return "\n".join(L) + "\n"


def _bounds(sl, arr):
    """Lines computing ``lo<i>`` and ``len<i>``, where slice ``i`` starts in its array
    and how many elements it has."""
    L = []
    for k, i in sl.items():
        L.extend(bound_lines("%d" % i, arr[k[1]], 0, k[2]))
    return L


def _primal_source(name, tree, root):
    """The primitive: where every slice has the result's length, one loop computing the
    expression element by element (the same operations on each element, in the same
    order, as the whole-array expression: the same values), else the expression on the
    arrays as written (NumPy's broadcasting, its errors)."""
    expr, arr, num = sources(tree, root)
    params = [arr[n] for n in tree.arrays] + [num[n] for n in tree.numbers]
    slices = [k for k in tree.nodes if k[0] == "slice"]
    sl = {k: i for i, k in enumerate(slices)}
    element, _, _ = sources(tree, root, lambda k: "A%d[i]" % sl[k])
    L = ["def %s(%s):" % (name, ", ".join(params))]
    L.extend(_bounds(sl, arr))
    L.append("    m = max(%s)" % ", ".join("len%d" % i for i in sl.values())
             if len(sl) > 1 else "    m = len0")
    L.append("    if %s:" % " and ".join("len%d == m" % i for i in sl.values()))
    for k, i in sl.items():
        L.append("        A%d = %s[lo%d:lo%d + m]" % (i, arr[k[1]], i, i))
    L.append("        out = np.empty(m)")
    L.append("        for i in range(m):")
    L.append("            out[i] = %s" % element)
    L.append("        return out")
    L.append("    return %s" % expr)
    return "\n".join(L) + "\n"


def _primitive(tree, root):
    """The primitive computing the tree and its registered pullback (made once per
    expression)."""
    expr, arr, num = sources(tree, root)
    params = [arr[n] for n in tree.arrays] + [num[n] for n in tree.numbers]
    text = "def {name}(%s):\n    return %s\n" % (", ".join(params), expr)
    if text in _CACHE:
        return _CACHE[text]
    tag = hashlib.sha1(text.encode()).hexdigest()[:12]
    name = "_stencil_%s" % tag
    primal_source, pullback_source = (
        (_primal_source, _pullback_source) if tree.ndim == 1 else
        (stencils_2d.primal_source, stencils_2d.pullback_source))
    fn = exec_source(name, primal_source(name, tree, root), {"np": np}, "stencil")
    fn.__module__ = __name__
    # (a division by zero gives what it gives on the arrays, not an exception)
    prim = numba.njit(error_model="numpy")(fn)
    vname = "_stencil_vjp_%s" % tag
    vsrc = pullback_source(vname, tree, root, arr, num)
    pullback = exec_source(vname, vsrc, {"np": np, "radd": runtime.RUNTIME["radd"]},
                           "stencil pullback")
    vjp = helper_jit(error_model="numpy")(pullback)      # (as every rule's helper)
    vjp.py_func.__module__ = __name__
    helpers.RULE_HELPERS[vname] = vjp
    runtime.RUNTIME[vname] = vjp
    runtime.PURE.add(vname)
    runtime.ONE_CALL.add(vname)
    call = "%s(%s, {g})" % (vname, ", ".join("{%s}" % p for p in params))
    array_rules.ARRAY_RULES[prim] = ArrayRule(
        tuple(params), {p: "%s[%d]" % (call, k) for k, p in enumerate(params)}, {})
    _CACHE[text] = (prim, vname, vsrc)
    return _CACHE[text]


def _in_loops(fir):
    loops = compute_cfg_from_blocks(fir.blocks).loops()
    out = set()
    for lp in loops.values():
        out |= set(lp.body)
    return out


def _harmless(stmt, typemap):
    """A statement that writes no array: a constant, a global, a slice or a tuple of
    them built, or an operation on numbers or arrays that makes a new value."""
    if not isinstance(stmt, ir.Assign):
        return False
    v = stmt.value
    if isinstance(v, (ir.Const, ir.Global, ir.FreeVar, ir.Var, ir.Arg)):
        return True
    if isinstance(v, ir.Expr):
        if v.op in ("binop", "unary", "static_getitem", "getitem", "cast", "getattr",
                    "build_tuple"):
            return True
        if v.op == "call" and isinstance(typemap.get(v.func.name), types.Function) and \
                typemap[v.func.name].typing_key is slice:
            return True
    return False


#: Calls whose result is an array of its own (no view of another).
_FRESH_CALLS = {(name, "numpy") for name in (
    "copy", "zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like",
    "full_like")}


def _own_array(fir, defs, typemap, name, seen=()):
    """The variable holding the array that ``name`` is, or is a view of, when it was
    made in the function (a copy, a constructor, an operation making a new array), with
    one definition (``defs``: the definitions of the function's variables); None when it
    may be any array (an argument, a call's result)."""
    found = defs.get(name, ())
    if len(found) != 1 or name in seen:
        return None
    e = found[0]
    if isinstance(e, ir.Var):
        return _own_array(fir, defs, typemap, e.name, seen + (name,))
    if not isinstance(e, ir.Expr):
        return None
    if e.op in ("static_getitem", "getitem") and \
            isinstance(typemap.get(e.value.name), types.Array):
        return _own_array(fir, defs, typemap, e.value.name, seen + (name,))
    if e.op == "binop" or e.op == "unary" and e.fn is operator.neg:
        return name
    if e.op == "call":
        called = guard(find_callname, fir, e, typemap)
        if called is not None and (called in _FRESH_CALLS or called[0] == "copy" and
                                   isinstance(called[1], ir.Var) and
                                   isinstance(typemap.get(called[1].name), types.Array)):
            return name
    return None


def _written_apart(stmt, tree, fir, defs, typemap):
    """A statement writing into an array made in the function (``v[1:-1, 1:-1] = ...``,
    ``v += ...``) that none of the arrays the tree reads is, or is a view of: reading
    them after it reads the same values (Gray-Scott's second field updated after the
    first one's Laplacian was computed)."""
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        written = stmt.target.name
    elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and \
            stmt.value.op == "inplace_binop":
        written = stmt.value.lhs.name
    else:
        return False
    if not isinstance(typemap.get(written), types.Array):
        return False
    own = _own_array(fir, defs, typemap, written)
    if own is None:
        return False
    for name in tree.arrays:
        other = _own_array(fir, defs, typemap, name)
        if other is None or other == own:
            return False
    return True


def rewrite_stencils(fir, typemap, calltypes, typingctx):
    """Replace the stencil expressions of the loops of the typed IR ``fir`` by calls of
    their primitives (``typemap`` and ``calltypes`` updated). Returns how many."""
    uses, consts = {}, {}
    for blk in fir.blocks.values():
        for stmt in blk.body:
            for v in stmt.list_vars():
                uses[v.name] = uses.get(v.name, 0) + 1
            if isinstance(stmt, ir.Assign):
                uses[stmt.target.name] -= 1
                if isinstance(stmt.value, ir.Const) and \
                        isinstance(stmt.value.value, (int, float)):
                    consts[stmt.target.name] = stmt.value.value
    defs = build_definitions(fir.blocks)      # (as captured: read before any rewrite)
    count = 0
    for label in sorted(_in_loops(fir)):
        blk = fir.blocks[label]
        i = len(blk.body) - 1
        while i >= 0:
            stmt = blk.body[i]
            tree = _root_tree(blk, i, typemap, uses, consts)
            if tree is None:
                i -= 1
                continue
            first = min(tree.taken)
            if not all(_harmless(blk.body[j], typemap) or
                       _written_apart(blk.body[j], tree, fir, defs, typemap)
                       for j in range(first, i + 1)):
                i -= 1
                continue
            prim, _, _ = _primitive(tree, tree.nodes[-1])
            argtys = [typemap[n] for n in tree.arrays + tree.numbers]
            fnty = typingctx.resolve_value_type(prim)
            sig = typingctx.resolve_function_type(fnty, tuple(argtys), {})
            target = stmt.target
            if sig is None or sig.return_type != typemap[target.name]:
                i -= 1
                continue
            loc = stmt.loc
            g = ir.Var(blk.scope, "$stencil_fn.%d.%d" % (label, i), loc)
            typemap[g.name] = fnty
            call = ir.Expr.call(g, [ir.Var(blk.scope, n, loc)
                                    for n in tree.arrays + tree.numbers], (), loc)
            calltypes[call] = sig
            new = [ir.Assign(ir.Global(prim.__name__, prim, loc), g, loc),
                   ir.Assign(call, target, loc)]
            fir._definitions[g.name] = [new[0].value]
            fir._definitions[target.name] = [call]
            keep = [s for j, s in enumerate(blk.body[first:i], first)
                    if j not in tree.taken]
            for j in sorted(tree.taken):
                s = blk.body[j]
                if s is not stmt:
                    fir._definitions.pop(s.target.name, None)
                    typemap.pop(s.target.name, None)
            blk.body[first:i + 1] = keep + new
            count += 1
            i = first + len(keep) - 1       # (the statements kept may be roots too)
    return count


def _root_tree(blk, i, typemap, uses, consts):
    stmt = blk.body[i]
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
            and stmt.value.op in ("binop", "unary")):
        return None
    t = typemap.get(stmt.target.name)
    ndim = getattr(t, "ndim", 0)
    if ndim not in (1, 2) or not _is_float_array(t, ndim):
        return None
    tree = _Tree(blk, i + 1, typemap, uses, consts, ndim)
    root = tree.node(stmt.target, top=True)
    if root is None or tree.ops < MIN_OPERATIONS or not tree.slices or \
            root[0] not in ("op", "pow", "neg"):
        return None
    return tree
