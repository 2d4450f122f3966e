"""Loop forms: ``for`` loops over ``zip``, ``enumerate``, ``np.ndindex``, ``x.flat`` and the
rows of an n-d array, rewritten as the range loops the rest of the rewrite reads.

Reads the untyped IR of the function (before SSA, after its Numba callees are inlined, so
that loops in helpers are rewritten too). Produces the same IR in which each such loop
iterates ``range(n)`` and its body starts by computing, from the index ``k``, the value the
original iterator yields::

    for a, b in zip(x, y):        ->   for k in range(min(len(x), len(y))):
                                           a, b = x[k], y[k]
    for i, v in enumerate(x, s)   ->   for k in range(len(x)): i, v = s + k, x[k]
    for idx in np.ndindex(n, m)   ->   for k in range(n * m): idx = (k // m, k % m)
    for v in A.flat               ->   for k in range(A.size): v = A[k // m, k % m]
                                       (v = np.ravel(A)[k] when A's dimensions are known
                                       only once typed)
    for row in X                  ->   for k in range(len(X)): row = X[k]
    zip(range(a, b, c), ...)      ->   item k is a + k * c

The iterated values are the ones Numba's iterators yield, in the same order, and the
loop runs as many times (``zip`` stops at the shortest). Tuples unpacked at the top of the
body (``i, (a, b) = ...``) read the items directly; a tuple used whole (an ``ndindex``
index) is built. ``for`` over a ``range`` or a 1-d array is left as it is.

A new form is one more ``_<form>_sequence`` function, listed in ``_sequence``: it says how
long the sequence is (emitted before the loop) and how to compute its item ``k`` (emitted
at the top of the body).
"""
import operator

import numpy as np
from numba.core import ir, types
from numba.core.extending import overload
from numba.core.compiler_machinery import register_pass
from numba.core.ir_utils import build_definitions, simplify_CFG
from numba.core import postproc

from .checkpoint_loop import strip_markers
from ..generated_source import exec_source
from .literal_items import built_sequence as _built
from .ir_emitter import Emitter as _Emitter, RefusingPass, Tuple as _Tuple, fresh_label, \
    ir_global, product as _product, read_names, unravel as _unravel, var_of as _var_of

# NumPy functions returning iterators rather than arrays.
_ITERATORS = {"nditer", "ndenumerate", "ndindex", "flatiter"}
# Creators whose first argument is the shape of the array they make.
_SHAPED_CREATORS = {"zeros", "ones", "empty", "full"}
_LIKE_CREATORS = {"zeros_like", "ones_like", "empty_like", "full_like", "copy"}
# NumPy functions whose result has a number of dimensions known from their name.
_MADE_NDIM = {"outer": 2, "eye": 2, "identity": 2, "linspace": 1, "logspace": 1,
              "arange": 1}


def index_count(shape):
    """The number of indices of an array of ``shape`` (an integer: nothing to
    differentiate)."""
    return int(np.prod(np.array(shape)))


def index_at(k, shape):
    """The C-order index ``k`` of an array of ``shape``, as ``np.ndindex`` yields it."""
    return tuple(int(i) for i in np.unravel_index(k, shape))


@overload(index_count)
def _index_count(shape):
    if not isinstance(shape, types.BaseTuple):
        return None
    terms = " * ".join(["1"] + ["shape[%d]" % j for j in range(len(shape))])
    return _function("shape", "return " + terms)


@overload(index_at)
def _index_at(k, shape):
    if not isinstance(shape, types.BaseTuple):
        return None
    n = len(shape)
    if n == 0:
        return lambda k, shape: ()      # a 0-d array's one index
    lines = ["r = k"]
    for j in range(n - 1, 0, -1):
        lines += ["i%d = r %% shape[%d]" % (j, j), "r = r // shape[%d]" % j]
    lines.append("return (r,%s)" % "".join(" i%d," % j for j in range(1, n)))
    return _function("k, shape", "\n    ".join(lines))


def _function(params, body):
    return exec_source("impl", "def impl(%s):\n    %s\n" % (params, body), {},
                       "loop index")


class _Sequence:
    """What a loop iterates: its length (a variable computed before the loop) and
    ``item(k)``, which emits the statements computing item ``k`` and returns it."""

    def __init__(self, length, item):
        self.length = length
        self.item = item


# ---------------------------------------------------------------------- the loop forms
def _sequence(em, var):
    """The :class:`_Sequence` of the iterable ``var``."""
    defn = em.definition(var)
    if isinstance(defn, ir.Expr) and defn.op == "call":
        name = em.callname(defn)
        if name == ("zip", "builtins"):
            return _zip_sequence(em, defn)
        if name == ("enumerate", "builtins"):
            return _enumerate_sequence(em, defn)
        if name == ("range", "builtins"):
            return _range_sequence(em, defn)
        if name in (("ndindex", "numpy"), ("pndindex", "numba")):
            # (numba.pndindex: the primal's loop runs in parallel, the gradient's serially)
            return _ndindex_sequence(em, defn)
        if name == ("ndenumerate", "numpy"):
            return _ndenumerate_sequence(em, defn)
    if isinstance(defn, ir.Expr) and defn.op == "getattr" and defn.attr == "flat":
        return _flat_sequence(em, defn.value)
    return _array_sequence(em, var)


# Iterables without items k, read by ``x[k]``: left to Numba's own iterators.
_UNINDEXED_METHODS = {"items", "keys", "values"}
_UNINDEXED_BUILDS = {"build_map", "build_set"}


def _array_sequence(em, var):
    """An array (its rows when it has several dimensions) or any sequence with
    ``len`` and ``[k]``."""
    defn = em.definition(var)
    method = em.definition(defn.func) if isinstance(defn, ir.Expr) and \
        defn.op == "call" else None
    if isinstance(defn, ir.Expr) and defn.op in _UNINDEXED_BUILDS or \
            isinstance(method, ir.Expr) and method.op == "getattr" and \
            method.attr in _UNINDEXED_METHODS or \
            isinstance(defn, ir.Expr) and defn.op == "call" and \
            em.callname(defn) in (("iter", "builtins"), ("reversed", "builtins")):
        em.refuse("a zip or enumerate over a dict, a set or an iterator; zip and "
                  "enumerate take arrays, lists, tuples and ranges")
    held = em.assign(var, "$loopform_seq")
    length = em.call(len, held)
    return _Sequence(length, lambda k: em.getitem(held, k))


def _range_sequence(em, call):
    if call.kws or call.vararg is not None or not 1 <= len(call.args) <= 3:
        em.refuse("a range(...) in a zip or enumerate with keyword or * arguments")
    args = [em.assign(a, "$loopform_range") for a in call.args]
    start, stop = (args[0], args[1]) if len(args) > 1 else (em.const(0), args[0])
    step = 1
    if len(args) == 3:
        step = getattr(em.definition(call.args[2]), "value", None)
        if not isinstance(step, int) or isinstance(step, bool) or step == 0:
            em.refuse("a range(...) in a zip or enumerate whose step is not a constant")
    # len(range(start, stop, step)) = max(0, ceil((stop - start) / step))
    if step > 0:
        span = em.binop(operator.sub, stop, start)
    else:
        span = em.binop(operator.sub, start, stop)
    steps = abs(step)
    if steps != 1:
        span = em.binop(operator.floordiv, em.binop(operator.add, span,
                                                    em.const(steps - 1)), em.const(steps))
    length = em.call(max, em.const(0), span)

    def item(k):
        offset = k if step == 1 else em.binop(operator.mul, k, em.const(step))
        return em.binop(operator.add, start, offset)
    return _Sequence(length, item)


def _enumerate_sequence(em, call):
    # Numba's enumerate takes no keywords: neither does this one.
    if call.kws or call.vararg is not None or not 1 <= len(call.args) <= 2:
        em.refuse("enumerate(...) with arguments other than (iterable) or (iterable, "
                  "start)")
    inner = _sequence(em, call.args[0])
    start = em.assign(call.args[1], "$loopform_start") if len(call.args) > 1 else \
        em.const(0)
    return _Sequence(inner.length, lambda k: em.tuple(
        [em.binop(operator.add, start, k), inner.item(k)]))


def _zip_sequence(em, call):
    if call.kws or call.vararg is not None or not call.args:
        em.refuse("zip(...) with no arguments, keywords or * arguments")
    inners = [_sequence(em, a) for a in call.args]
    length = inners[0].length
    for s in inners[1:]:
        length = em.call(min, length, s.length)
    return _Sequence(length, lambda k: em.tuple([s.item(k) for s in inners]))


def _ndindex_sequence(em, call):
    if call.kws:
        em.refuse("np.ndindex(...) with keyword arguments")
    if call.vararg is not None:
        dims = None if call.args else _shape_items(em, call.vararg)
    elif len(call.args) == 1:
        dims = _shape_items(em, call.args[0])
        if dims is None and _is_int(em, call.args[0]):
            dims = [call.args[0]]
    else:
        dims = list(call.args)
    if dims is None and call.vararg is None and len(call.args) == 1:
        # A shape whose length is known once typed (np.outer(x, y).shape).
        shape = em.assign(call.args[0], "$loopform_shape")
        return _Sequence(em.call(index_count, shape),
                         lambda k: em.call(index_at, k, shape))
    if dims is None:
        em.refuse("np.ndindex(*shape) with a shape whose length is not known before typing "
                  "(pass the shape itself, a tuple (n, m), or n, m)")
    dims = [em.assign(d, "$loopform_dim") for d in dims]
    return _Sequence(_product(em, dims), lambda k: em.tuple(_unravel(em, k, dims)))


def _ndenumerate_sequence(em, call):
    if call.kws or call.vararg is not None or len(call.args) != 1:
        em.refuse("np.ndenumerate(...) with arguments other than (array)")
    array = call.args[0]
    ndim = ndim_before_typing(em, array)
    held = em.assign(array, "$loopform_seq")
    if ndim is None:        # known once typed: its indices from its shape
        shape = em.assign(ir.Expr.getattr(held, "shape", em.loc))

        def typed_item(k):
            idx = em.call(index_at, k, shape)
            return em.tuple([idx, em.getitem(held, idx)])
        return _Sequence(em.call(index_count, shape), typed_item)
    if ndim == 1:
        return _Sequence(em.call(len, held), lambda k: em.tuple(
            [em.tuple([k]), em.getitem(held, k)]))
    shape = em.assign(ir.Expr.getattr(held, "shape", em.loc))
    dims = [em.static_getitem(shape, j) for j in range(ndim)]

    def item(k):
        idx = em.tuple(_unravel(em, k, dims))
        return em.tuple([idx, em.getitem(held, idx.var)])
    return _Sequence(_product(em, dims), item)


def _flat_sequence(em, array):
    ndim = ndim_before_typing(em, array)
    held = em.assign(array, "$loopform_seq")
    if ndim is None:
        # Dimensions known only once typed (np.outer(x, y).flat): the items of
        # np.ravel(x), made before the loop (a view of a contiguous x).
        flat = em.call(np.ravel, held)
        return _Sequence(em.call(len, flat), lambda k: em.getitem(flat, k))
    if ndim == 1:
        return _Sequence(em.call(len, held), lambda k: em.getitem(held, k))
    shape = em.assign(ir.Expr.getattr(held, "shape", em.loc))
    dims = [em.static_getitem(shape, j) for j in range(ndim)]
    return _Sequence(_product(em, dims), lambda k: em.getitem(
        held, em.tuple(_unravel(em, k, dims)).var))


# ---------------------------------------------------------------------- shapes before typing
def _arg_type(em, defn):
    if isinstance(defn, ir.Arg) and defn.index < len(em.state.args):
        return em.state.args[defn.index]
    return None


def _is_int(em, var):
    if var.name in em.indices:
        return True
    defn = em.definition(var)
    if isinstance(defn, ir.Const):
        return isinstance(defn.value, int)
    if isinstance(defn, ir.Expr) and defn.op == "call":
        return em.callname(defn) == ("len", "builtins")
    return isinstance(_arg_type(em, defn), types.Integer)


def _shape_items(em, var):
    """Variables (or constants) for the items of the shape tuple ``var``, when its length
    is known before typing; else None."""
    defn = em.definition(var)
    if isinstance(defn, ir.Expr) and defn.op == "build_tuple":
        return list(defn.items)
    if isinstance(defn, ir.Const) and isinstance(defn.value, tuple):
        return [em.const(v) for v in defn.value]
    if isinstance(defn, ir.Expr) and defn.op == "getattr" and defn.attr == "shape":
        ndim = ndim_before_typing(em, defn.value)
    else:
        t = _arg_type(em, defn)
        ndim = len(t) if isinstance(t, types.UniTuple) else None
    if ndim is None:
        return None
    held = em.assign(var, "$loopform_shape")
    return [em.static_getitem(held, j) for j in range(ndim)]


def ndim_before_typing(em, var):
    """The number of dimensions of the array ``var`` when known before typing: an
    argument, ``x.T``, ``x.copy()``, or an array made by a NumPy creator with a known
    shape; for a variable assigned several times (``A, B = B, A``), the number all its
    assignments agree on. None when unknown."""
    ndim = _ndim_of_var(em, var, set())
    return None if ndim == -1 else ndim


def _ndim_of_var(em, var, seen):
    name = var.name if isinstance(var, ir.Var) else var
    if name in seen:
        return -1               # a cycle of copies: the other assignments decide
    seen.add(name)
    found = set()
    for d in em.fir._definitions.get(name, []):
        found.add(_ndim_of_var(em, d, seen) if isinstance(d, ir.Var)
                  else _ndim_of(em, d, seen))
    found.discard(-1)
    if not found:
        return -1 if em.fir._definitions.get(name) else None
    return found.pop() if len(found) == 1 else None


def _ndim_of(em, defn, seen):
    t = _arg_type(em, defn)
    if t is not None:
        return t.ndim if isinstance(t, types.Array) else None
    if isinstance(defn, ir.Expr) and defn.op == "getattr" and defn.attr == "T":
        return _ndim_of_var(em, defn.value, seen)
    if isinstance(defn, ir.Expr) and defn.op in ("getitem", "static_getitem"):
        # A row x[k] (an integer k) of an array of known dimensions.
        whole = _ndim_of_var(em, defn.value, seen)
        if defn.op == "static_getitem":
            row = isinstance(defn.index, int)
        else:
            row = _is_int(em, defn.index)
        return whole - 1 if row and whole not in (None, -1) and whole > 1 else None
    if isinstance(defn, ir.Expr) and defn.op == "call":
        method = em.definition(defn.func)
        if isinstance(method, ir.Expr) and method.op == "getattr" and \
                method.attr in ("copy", "astype") and not defn.kws:
            return _ndim_of_var(em, method.value, seen)
        if not defn.args:
            return None
        if isinstance(method, ir.Expr) and method.op == "getattr" and \
                method.attr == "reshape":
            return _shape_length(em, defn.args)
        name = em.callname(defn)
        if name is None or name[1] != "numpy":
            return None
        if name[0] in _MADE_NDIM:
            return _MADE_NDIM[name[0]]
        if name[0] in _LIKE_CREATORS:
            return _ndim_of_var(em, defn.args[0], seen)
        if name[0] in _SHAPED_CREATORS:
            return _shape_length(em, defn.args[:1])
    return None


def _shape_length(em, args):
    """The length of the shape given as ``args`` (``(n, m)``, or ``n, m``), or None."""
    if len(args) > 1:
        return len(args)
    shape = em.definition(args[0])
    if isinstance(shape, ir.Expr) and shape.op == "build_tuple":
        return len(shape.items)
    if isinstance(shape, ir.Const) and isinstance(shape.value, tuple):
        return len(shape.value)
    return 1 if _is_int(em, args[0]) else None


# ---------------------------------------------------------------------- the rewrite
class _ForLoop:
    """One ``for`` loop of the untyped IR: where its iterator is made (``getiter`` in
    ``pre``), its header (``iternext``, then the copy of the yielded value that the body
    reads) and the first block of its body."""

    def __init__(self, pre, getiter, header, copy, body):
        self.pre, self.getiter, self.header = pre, getiter, header
        self.copy, self.body = copy, body


def _for_loops(fir):
    """The ``for`` loops of ``fir`` whose header has the shape Numba's bytecode reader
    gives them."""
    getiters = {}
    for label, blk in fir.blocks.items():
        for stmt in blk.body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and \
                    stmt.value.op == "getiter":
                getiters[id(stmt.value)] = (label, stmt)
    loops = []
    for label, blk in fir.blocks.items():
        nxt = [s for s in blk.body if isinstance(s, ir.Assign) and
               isinstance(s.value, ir.Expr) and s.value.op == "iternext"]
        term = blk.terminator
        if len(nxt) != 1 or not isinstance(term, ir.Branch):
            continue
        try:
            made = fir.get_definition(nxt[0].value.value)
        except KeyError:
            continue
        firsts = [s.target.name for s in blk.body if isinstance(s, ir.Assign) and
                  isinstance(s.value, ir.Expr) and s.value.op == "pair_first"]
        copies = [s for s in blk.body if isinstance(s, ir.Assign) and
                  isinstance(s.value, ir.Var) and s.value.name in firsts]
        if id(made) in getiters and len(copies) == 1:
            pre, getiter = getiters[id(made)]
            loops.append(_ForLoop(pre, getiter, label, copies[0], term.truebr))
    return loops


def _is_loop_form(em, var):
    """Whether the loop over ``var`` is one this module rewrites: not a ``range`` (nor
    ``prange``), and not an array known to have one dimension (nor one whose dimensions
    are unknown: the rest of the rewrite reads those loops directly)."""
    defn = em.definition(var)
    if isinstance(defn, ir.Expr) and defn.op == "call" and em.callname(defn) in (
            ("zip", "builtins"), ("enumerate", "builtins"), ("ndindex", "numpy"),
            ("pndindex", "numba"), ("ndenumerate", "numpy")):
        return True
    if isinstance(defn, ir.Expr) and defn.op == "getattr" and defn.attr == "flat":
        return True
    if _built(em.fir, var)[0] is not None:
        return True         # a tuple or list written here: read t[k] (.literal_items)
    if isinstance(defn, ir.Expr) and defn.op == "build_list":
        return True         # a list made empty and appended to: read L[k] too
    ndim = ndim_before_typing(em, var)
    if ndim is None and isinstance(defn, ir.Expr) and defn.op == "call":
        # An array a NumPy function makes, of dimensions known only once typed
        # (np.outer(x, y)): its rows x[k], or its elements when it has one dimension.
        name = em.callname(defn)
        return name is not None and name[1] == "numpy" and name[0] not in _ITERATORS
    return ndim is not None and ndim > 1


def _rewrite_loop(state, loop, made, indices):
    """Rewrite one loop as a range loop (see the module docstring); False when it is not
    a loop form."""
    fir = state.func_ir
    pre = fir.blocks[loop.pre]
    em = _Emitter(state, pre.scope, loop.getiter.loc, indices)
    iterable = loop.getiter.value.value
    if not _is_loop_form(em, iterable):
        return False
    seq = _sequence(em, iterable)
    loop.getiter.value.value = em.call(range, seq.length)
    at = pre.body.index(loop.getiter)
    pre.body[at:at] = em.out

    # The header's copy of the yielded value now copies the index k; a new block between
    # the header and the body computes the item and gives it the copy's name.
    yielded = loop.copy.target
    k = pre.scope.redefine("$loopform_k", loop.copy.loc)
    loop.copy.target = k
    indices.add(k.name)
    em.out = []
    item = seq.item(k)
    em.out.append(ir.Assign(_var_of(item), yielded, loop.copy.loc))
    label = fresh_label(fir)
    blk = ir.Block(pre.scope, loop.copy.loc)
    blk.body = em.out + [ir.Jump(loop.body, loop.copy.loc)]
    fir.blocks[label] = blk
    fir.blocks[loop.header].terminator.truebr = label
    made.update(id(s) for s in em.made)
    _read_unpacked_items(fir.blocks[loop.body], yielded, item, made)
    return True


def _read_unpacked_items(body, yielded, item, made):
    """``i, (a, b) = yielded`` at the top of the body reads the items directly: each
    ``static_getitem`` of an unpacked built tuple becomes a copy of its item."""
    known = {yielded.name: item}
    for stmt in body.body:
        if not isinstance(stmt, ir.Assign):
            continue
        v, name = stmt.value, stmt.target.name
        src = None
        if isinstance(v, ir.Var):
            src = v.name
        elif isinstance(v, ir.Expr) and v.op in ("exhaust_iter", "static_getitem"):
            src = v.value.name
        tree = known.get(src)
        if not isinstance(tree, _Tuple):
            known.pop(name, None)
            if isinstance(v, ir.Var) and src in known:
                known[name] = known[src]
            continue
        if isinstance(v, ir.Expr) and v.op == "exhaust_iter":
            if v.count != len(tree.items):
                known.pop(name, None)
                continue
            made.add(id(stmt))
            known[name] = tree
        elif isinstance(v, ir.Expr) and v.op == "static_getitem" and \
                isinstance(v.index, int) and -len(tree.items) <= v.index < len(tree.items):
            sub = tree.items[v.index]
            stmt.value = _var_of(sub)
            made.add(id(stmt))
            known[name] = sub
        else:
            known[name] = tree


def _drop_unused(fir, droppable):
    """Remove the statements in ``droppable`` (ids) whose result nothing reads: the
    iterators replaced and the tuples the body now reads item by item."""
    while True:
        used = read_names(fir)
        dropped = False
        for blk in fir.blocks.values():
            keep = [s for s in blk.body if not (
                id(s) in droppable and s.target.name not in used)]
            dropped |= len(keep) != len(blk.body)
            blk.body = keep
        if not dropped:
            return


def _iterator_statements(fir, roots):
    """Ids of the statements that make the iterables ``roots`` (zip, enumerate, ndindex,
    range calls and ``x.flat``, with the globals they call): pure, so droppable."""
    out = set()
    defs = {}
    for blk in fir.blocks.values():
        for stmt in blk.body:
            if isinstance(stmt, ir.Assign):
                defs.setdefault(stmt.target.name, []).append(stmt)
    work = list(roots)
    while work:
        name = work.pop()
        stmts = defs.get(name, [])
        if len(stmts) != 1 or id(stmts[0]) in out:
            continue
        v = stmts[0].value
        pure = isinstance(v, ir.Global) or (isinstance(v, ir.Expr) and (
            v.op == "call" and getattr(ir_global(fir, v.func), "__name__", None) in
            ("zip", "enumerate", "range", "ndindex", "pndindex", "ndenumerate")
            or v.op == "getattr" and v.attr in ("flat", "ndindex")))
        if pure:
            out.add(id(stmts[0]))
            if isinstance(v, ir.Expr):
                work.extend(x.name for x in v.list_vars())
    return out


@register_pass(mutates_CFG=True, analysis_only=False)
class RewriteLoopForms(RefusingPass):
    """Rewrite ``for`` loops over zip, enumerate, np.ndindex, x.flat and rows as range
    loops (see :mod:`.loopforms`)."""
    _name = "numba_adstack_rewrite_loop_forms"

    def _run(self, state):
        fir = state.func_ir
        fir._definitions = build_definitions(fir.blocks)
        stripped = strip_markers(fir, state.func_id.func_qualname)   # checkpoint(range(n))
        if stripped:
            fir._definitions = build_definitions(fir.blocks)
        made, roots, indices = set(), [], set()
        for loop in _for_loops(fir):
            iterable = loop.getiter.value.value
            if _rewrite_loop(state, loop, made, indices):
                roots.append(iterable.name)
                # The loops inside read what this one now defines (rows x[k]).
                fir._definitions = build_definitions(fir.blocks)
        if not roots:
            return stripped
        made |= _iterator_statements(fir, roots)
        _drop_unused(fir, made)
        fir._definitions = build_definitions(fir.blocks)
        postproc.PostProcessor(fir).run()
        fir.blocks = simplify_CFG(fir.blocks)
        return True
