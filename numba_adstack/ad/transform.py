"""The reverse-mode rewrite: typed SSA Numba IR -> Python source of the backward function.

The backward function replays the forward code, then walks it backwards:

* A value defined inside a loop is overwritten by the next iteration. If the reverse sweep
  needs it, the forward replay pushes its old value on an adstack right before overwriting
  it, and the reverse sweep pops it back right after reversing that definition ("restore"
  semantics: at every point of the reverse sweep each variable holds the value it had at the
  same point of the forward replay). Values that are cheap and safe to recompute (integer
  index arithmetic, copies, constants, loads from arrays the function never writes) are
  recomputed in place instead.
* Control flow is reversed region by region: which arm of a branch was taken is recorded
  where the arms merge (a local when the merge runs once, a stack inside loops), loops record
  how many iterations ran, and a counted loop reverses as a counted loop.
* A loop whose iterations do not depend on each other except through sums (``s += ...``) is
  reversed iteration by iteration, right after each iteration, when the adjoint of the sums
  can be computed before the loop: its stacks then hold one iteration's history.

The primitive adjoints live in :mod:`numba_adstack.ad.rules`.
"""
import builtins
import keyword
import math
import operator
import re

import numba
import numpy as np
from numba.core import ir, types

from ..errors import NonDifferentiableError
from . import rules as R
from .structure import Structure, LoopNode

# What a scalar adjoint is reset to.  ``-0.0 + x`` is ``x`` for every x, so LLVM folds the
# first ``x_bar += ...`` after a reset into a plain assignment; ``0.0 + x`` it may not fold
# (it turns -0.0 into 0.0), and the extra adds then sit on every dependency chain.
ZERO = "-0.0"

_OPS = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.lshift: "<<",
    operator.rshift: ">>", operator.and_: "&", operator.or_: "|", operator.xor: "^",
    operator.matmul: "@", operator.eq: "==", operator.ne: "!=", operator.lt: "<",
    operator.le: "<=", operator.gt: ">", operator.ge: ">=", operator.is_: "is",
    operator.is_not: "is not",
}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.not_: "not ", operator.invert: "~"}


def is_float(t):
    return isinstance(t, types.Float)


def is_float_array(t):
    return isinstance(t, types.Array) and isinstance(t.dtype, types.Float)


def _stack_dtype(t):
    if isinstance(t, types.Float):
        return "np.float32" if t.bitwidth == 32 else "np.float64"
    if isinstance(t, types.Boolean):
        return "np.bool_"
    if isinstance(t, types.Integer):
        return "np.int32" if t.bitwidth == 32 and t.signed else "np.int64"
    return None


class RangeLoop:
    """``for i in range(...)`` or ``for v in array``: what is iterated and the names of the
    counter state the generated code keeps (``len`` iterations, counter ``ctr``)."""

    def __init__(self, loop, prefix, args=(), const_args=None, array=None):
        self.loop = loop
        self.args = list(args)        # IR vars of range(...)
        self.const_args = const_args  # their values when all are constants, else None
        self.array = array            # the array, for ``for v in array``
        self.first = None             # pair_first var (the index) in the header
        self.block = None             # label of the block holding the iternext
        self.len, self.ctr = prefix + "_len", prefix + "_i"
        self.parallel = False         # numba.prange

    def trip_count(self):
        if self.const_args is None:
            return None
        return len(range(*self.const_args))


class Options:
    def __init__(self, ad_stack_size, storage="frame", target="cpu", global_map=None,
                 atomic_add=None, grid=None, wrt=None, dims=None, parallel=False):
        self.ad_stack_size = int(ad_stack_size)
        self.parallel = parallel          # run prange loops of the backward in parallel
        self.wrt = wrt                    # indices of the arguments to differentiate
        self.storage = storage
        self.target = target
        self.global_map = global_map or {}
        self.atomic_add = atomic_add      # the object of ``cuda.atomic.add`` in the IR
        self.grid = grid                  # the object of ``cuda.grid`` in the IR
        self.dims = dims or {}            # id of threadIdx/blockIdx/blockDim objects -> name


class Lines:
    def __init__(self):
        self.lines = []
        self.level = 0

    def __call__(self, text):
        self.lines.append("    " * self.level + text)

    def indent(self):
        outer = self

        class _Ctx:
            def __enter__(self):
                outer.level += 1
                return outer

            def __exit__(self, *a):
                outer.level -= 1
        return _Ctx()

    def mark(self):
        return len(self.lines)

    def close_block(self, mark):
        """Python needs a statement in a block: add ``pass`` when nothing was emitted."""
        if len(self.lines) == mark:
            self("pass")


class Rewrite:
    """One function, one set of argument types: the source of its backward function."""

    def __init__(self, typed, py_func, options):
        self.t = typed
        self.fir = typed.func_ir
        self.typemap = typed.typemap
        self.py_func = py_func
        self.qualname = getattr(py_func, "__qualname__", py_func.__name__)
        self.opt = options
        self.s = Structure(self.fir)
        self.globals = {"math": math, "np": np}
        # Objects the IR names that the generated code must name differently (the CUDA
        # target types kernels with stand-ins for numba.cuda).
        self.global_map = dict(options.global_map)
        self._global_names = {}
        self._names = {}
        self._used_names = set(self.globals) | set(keyword.kwlist)
        self.defs = {}            # var name -> (block label, stmt)
        self.phis = {}            # var name -> block label of its phi
        self.block_phis = {}      # label -> [(target var, {pred label: incoming var})]
        self.uses = {}            # var name -> [(block label, stmt)]
        self.iter_alias = {}      # iterator var name -> RangeLoop
        self.ranges = {}          # loop header -> RangeLoop
        self.fused = set()        # loops reversed iteration by iteration
        self.fused_seed = {}      # fused loop -> [(seed var name, source expr)]
        self.stacks = {}          # stack var name -> (dtype src, capacity, storage)
        self.pushed = {}          # primal var name -> stack var name
        self.decls = {}           # declared locals -> initial value source
        self.needed = set()
        self.partials = {}        # call target -> (name of its kept derivative, its source)
        self.parallel = {}        # fused prange loop -> name of its per-iteration helper
        self.helpers = {}         # helper name -> its source
        self.helper_stacks = set()  # stacks declared in helpers, not in the backward
        self._helper_loop = None  # the parallel loop whose helper is being emitted
        self._private_failed = set()  # fused prange loops that cannot run in parallel
        self._shared_roots = {}   # parallel loop -> arrays whose adjoints it shares
        self._extra_types = {}    # types of the names the rewrite adds (kept derivatives)
        self._ref_ctx = None      # the rule operand being rendered, while collecting
        self._ref_uses = {}       # name -> rule operands (or None) the reverse reads it for
        self._static = {}
        self._once = {}
        self._open_loops = []     # headers of the loops being emitted (forward)
        self.loop_stacks = {}     # loop header -> stacks pushed inside that loop
        self._counter = 0
        self._collect()
        self._find_ranges()
        self.useful = self._useful_vars()
        self.written_roots = self._written_roots()
        self.arg_vars = self._arg_vars()
        self.inplace_stores, self.inplace_loads = self._inplace_updates()
        self.array_adjoints = self._array_adjoints()
        self.record_names = self._record_names()

    # ------------------------------------------------------------------ errors
    def error(self, what, loc=None):
        """Raise NonDifferentiableError naming the function, the construct and the line."""
        msg = "cannot differentiate %r: %s" % (self.qualname, what)
        if loc is not None and getattr(loc, "line", None) is not None:
            msg += "\n  File \"%s\", line %d" % (loc.filename, loc.line)
            try:
                text = loc.get_lines()[loc.line - 1].strip()
            except Exception:
                text = ""
            if text:
                msg += ":\n    " + text
        raise NonDifferentiableError(msg, highlighting=False)

    # ------------------------------------------------------------------ names
    def fresh(self, base):
        self._counter += 1
        name = "_%s%d" % (base, self._counter)
        self._used_names.add(name)
        return name

    def n(self, var):
        """Source name of an IR variable."""
        name = var if isinstance(var, str) else var.name
        got = self._names.get(name)
        if got is None:
            base = re.sub(r"\W", "_", name).strip("_") or "v"
            if base[0].isdigit():
                base = "v" + base
            got, k = base, 1
            while got in self._used_names:
                k += 1
                got = "%s_%d" % (base, k)
            self._used_names.add(got)
            self._names[name] = got
        return got

    def bar(self, var):
        """Source name of the adjoint of an IR variable."""
        name = var if isinstance(var, str) else var.name
        return self.n(name + ".bar")

    def gname(self, value):
        """Name of a global object in the generated module."""
        key = id(value)
        if key not in self._global_names:
            if value is math:
                name = "math"
            elif value is np:
                name = "np"
            else:
                value = self.global_map.get(id(value), value)
                base = getattr(value, "__name__", type(value).__name__)
                if base == "numba.cuda" and "cuda" not in self._used_names:
                    name = "cuda"       # kernels read as they were written
                    self._used_names.add(name)
                else:
                    name = self.fresh("g_" + re.sub(r"\W", "_", str(base).split(".")[-1]))
                self.globals[name] = value
            self._global_names[key] = name
        return self._global_names[key]

    def ty(self, var):
        name = var if isinstance(var, str) else var.name
        got = self._extra_types.get(name)
        return self.typemap[name] if got is None else got

    # ------------------------------------------------------------------ IR facts
    def _collect(self):
        for label, blk in self.fir.blocks.items():
            phis = []
            for stmt in blk.body:
                if isinstance(stmt, ir.Assign):
                    if isinstance(stmt.value, ir.Expr) and stmt.value.op == "phi":
                        inc = {}
                        for v, b in zip(stmt.value.incoming_values,
                                        stmt.value.incoming_blocks):
                            inc[b] = v
                        phis.append((stmt.target, inc))
                        self.phis[stmt.target.name] = label
                        for v in stmt.value.incoming_values:
                            if isinstance(v, ir.Var):
                                self.uses.setdefault(v.name, []).append((label, stmt))
                        continue
                    self.defs[stmt.target.name] = (label, stmt)
                for v in stmt.list_vars():
                    if isinstance(stmt, ir.Assign) and v.name == stmt.target.name:
                        continue
                    self.uses.setdefault(v.name, []).append((label, stmt))
            self.block_phis[label] = phis

    def def_expr(self, name):
        d = self.defs.get(name)
        return None if d is None else d[1].value

    def resolve_global(self, var):
        """The Python object a variable holds when it is a global (or module attribute)."""
        e = self.def_expr(var.name)
        if isinstance(e, (ir.Global, ir.FreeVar)):
            return e.value
        if isinstance(e, ir.Const):
            return e.value
        if isinstance(e, ir.Var):
            return self.resolve_global(e)
        if isinstance(e, ir.Expr) and e.op == "getattr":
            base = self.resolve_global(e.value)
            if base is not None:
                return getattr(base, e.attr, None)
        return None

    def _find_ranges(self):
        for lp in self.s.loops:
            # The iternext sits in the header or in a straight-line chain right after it.
            hdr, label = self.fir.blocks[lp.header], lp.header
            while not any(isinstance(st, ir.Assign) and isinstance(st.value, ir.Expr)
                          and st.value.op == "iternext" for st in hdr.body):
                term = hdr.terminator
                if not (isinstance(term, ir.Jump) and term.target in lp.blocks
                        and len(self.s.preds[term.target]) == 1):
                    break
                label = term.target
                hdr = self.fir.blocks[label]
            for stmt in hdr.body:
                if (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                        and stmt.value.op == "iternext"):
                    rl = self._range_of_iter(stmt.value.value, lp)
                    rl.block = label
                    lp.range = rl
                    self.ranges[lp.header] = rl
                    for s2 in hdr.body:
                        if (isinstance(s2, ir.Assign) and isinstance(s2.value, ir.Expr)
                                and s2.value.op == "pair_first"):
                            rl.first = s2.target.name

    def _range_of_iter(self, itervar, lp):
        v = itervar
        seen = []
        while True:
            seen.append(v.name)
            e = self.def_expr(v.name)
            if isinstance(e, ir.Var):
                v = e
                continue
            break
        if not (isinstance(e, ir.Expr) and e.op == "getiter"):
            self.error("a loop over something other than range(...)", lp and
                       self.fir.blocks[lp.header].loc)
        at = self.ty(e.value)
        if isinstance(at, types.Array) and at.ndim == 1:
            rl = RangeLoop(lp, self.fresh("r"), array=e.value)
            for nm in seen:
                self.iter_alias[nm] = rl
            return rl
        rng = self.def_expr(e.value.name)
        fn = None
        if isinstance(rng, ir.Expr) and rng.op == "call":
            fn = self.resolve_global(rng.func)
        if not _is_range(fn):
            self.error("`for` over %s; only `for ... in range(...)` (or prange) and 1-d "
                       "array loops are supported (index arrays with range(len(x)))"
                       % self.ty(e.value), e.loc)
        consts = []
        for a in rng.args:
            c = self.resolve_global(a)
            consts.append(c if isinstance(c, (int, np.integer)) and not isinstance(c, bool)
                          else None)
        const_args = None if any(c is None for c in consts) else tuple(int(c) for c in consts)
        rl = RangeLoop(lp, self.fresh("r"), rng.args, const_args)
        rl.parallel = fn is numba.prange
        for nm in seen:
            self.iter_alias[nm] = rl
        return rl

    def _inplace_updates(self):
        """``a[i] = a[i] + e`` (and ``-``, ``+=``, ``-=``) on one element within a block.

        The adjoint of the element passes through such an update unchanged, so the reverse
        sweep only reads it (into ``e``'s adjoint) instead of clearing it at the store and
        adding it back at the load. Returns the ids of those stores and the names of their
        loads."""
        stores, loads = set(), set()
        for blk in self.fir.blocks.values():
            body = blk.body
            for k, st in enumerate(body):
                if not isinstance(st, ir.SetItem):
                    continue
                t = self.defs.get(st.value.name)
                if t is None or t[1] not in body or len(self.uses.get(st.value.name, ())) != 1:
                    continue
                e = t[1].value
                if not (isinstance(e, ir.Expr) and e.op in ("binop", "inplace_binop")):
                    continue
                fn = e.fn if e.op == "binop" else R.INPLACE_TO_BINOP.get(e.fn)
                if fn not in (operator.add, operator.sub):
                    continue
                ld = self.defs.get(e.lhs.name)
                if ld is None or ld[1] not in body or len(self.uses.get(e.lhs.name, ())) != 1:
                    continue
                le = ld[1].value
                if not (isinstance(le, ir.Expr) and le.op == "getitem"
                        and le.value.name == st.target.name
                        and le.index.name == st.index.name):
                    continue
                j = body.index(ld[1])
                root = self.array_root(st.target.name)
                if any(isinstance(o, (ir.SetItem, ir.StaticSetItem))
                       and self.array_root(o.target.name) == root for o in body[j + 1:k]):
                    continue
                stores.add(id(st))
                loads.add(e.lhs.name)
        return stores, loads

    def _arg_vars(self):
        found = {}
        for stmt in self.fir.blocks[self.s.entry].body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Arg):
                found[stmt.value.index] = stmt.target.name
        return [found[i] for i in sorted(found)]

    def array_copy_source(self, e):
        """The array copied when call ``e`` is ``np.copy(x)`` or ``x.copy()``, else None."""
        if not (isinstance(e, ir.Expr) and e.op == "call") or e.kws:
            return None
        if self.resolve_global(e.func) is np.copy and len(e.args) == 1:
            src = e.args[0]
        else:
            f = self.def_expr(e.func.name)
            if not (isinstance(f, ir.Expr) and f.op == "getattr" and f.attr == "copy"
                    and not e.args):
                return None
            src = f.value
        return src if is_float_array(self.ty(src)) else None

    def _array_adjoints(self):
        out = {a: "arg" for a in self.arg_vars if is_float_array(self.ty(a))}
        for name, (label, stmt) in self.defs.items():
            e = stmt.value
            if self.local_array(name):
                if self.s.depth(label) > 0:
                    self.error("creating the array %r inside a loop; create it before the "
                               "loop" % name, stmt.loc)
                if self.ty(name).ndim != 1:
                    if self.array_root(name) in self._useful_roots:
                        self.error("a %d-d cuda.local.array on the gradient path; use a 1-d "
                                   "one" % self.ty(name).ndim, stmt.loc)
                    continue
                out[name] = "local"
                continue
            if (isinstance(e, ir.Expr) and e.op == "call" and is_float_array(self.ty(name))
                    and (self.resolve_global(e.func) in R.ARRAY_CONSTRUCTORS
                         or self.array_copy_source(e) is not None)):
                if self.s.depth(label) > 0:
                    self.error("creating the array %r inside a loop; create it before the "
                               "loop" % name, stmt.loc)
                if self.opt.target == "cuda":
                    self.error("allocating arrays in a kernel", stmt.loc)
                out[name] = "new"
        return out

    def _record_names(self):
        names = {"_rsite"}
        for lp in self.s.loops:
            names.update({"_n%d" % lp.header, "_x%d" % lp.header, "_l%d" % lp.header,
                          "_it%d" % lp.header})
        for R_ in self.s.regions.values():
            for n in R_.nodes:
                if len(R_.ins[n]) > 1:
                    names.add("_c%s" % _node_key(n))
        return names

    def reduction(self, e):
        """``(function, array operands)`` when call ``e`` reduces float arrays to a float
        (``np.sum(x)``, ``x.sum()``, ``np.dot(x, y)``...), else None."""
        if e.kws or e.vararg is not None:
            return None
        fn = self.resolve_global(e.func)
        operands = list(e.args)
        if fn is None:
            f = self.def_expr(e.func.name)
            if (isinstance(f, ir.Expr) and f.op == "getattr"
                    and isinstance(self.ty(f.value), types.Array)):
                fn = R.REDUCTION_METHODS.get(f.attr)
                operands = [f.value] + operands
        rule = R.REDUCTION_RULES.get(fn) if fn is not None else None
        if rule is None or len(rule) != len(operands):
            return None
        if not all(isinstance(self.ty(a), types.Array) and a.name for a in operands):
            return None
        return fn, operands

    def arrays_read(self, name):
        """Names of the arrays whose elements the definition of ``name`` reads."""
        e = self.def_expr(name)
        if not isinstance(e, ir.Expr):
            return []
        if e.op in ("getitem", "static_getitem") and isinstance(self.ty(e.value), types.Array):
            return [e.value.name]
        if e.op == "call" and self.reduction(e):
            return [a.name for a in self.reduction(e)[1]]
        if e.op == "pair_first":
            rl = self.iter_alias.get(self._pair_iter(e).name)
            if rl is not None and rl.array is not None:
                return [rl.array.name]
        return []

    def atomic_update(self, stmt):
        """``(array, index, value)`` when ``stmt`` is ``cuda.atomic.add(array, index,
        value)``."""
        if (self.opt.atomic_add is not None and isinstance(stmt, ir.Assign)
                and isinstance(stmt.value, ir.Expr) and stmt.value.op == "call"
                and self.resolve_global(stmt.value.func) is self.opt.atomic_add):
            a = stmt.value.args
            return a[0], a[1], a[2]
        return None

    def is_arg_array(self, name):
        root = self.array_root(name)
        return root in self.arg_vars

    def def_loc(self, name):
        d = self.defs.get(name)
        return None if d is None else d[1].loc

    # ------------------------------------------------------------------ analyses
    def array_root(self, name):
        """The argument or constructor an array variable is a view of."""
        e = self.def_expr(name)
        if isinstance(e, ir.Var):
            return self.array_root(e.name)
        if isinstance(e, ir.Expr) and e.op in ("getitem", "static_getitem", "cast"):
            if isinstance(self.ty(e.value), types.Array):
                return self.array_root(e.value.name)
            item = self.tuple_item(e)
            if item is not None:
                return self.array_root(item.name)
        return name

    def local_array(self, name):
        """Is ``name`` created by ``cuda.local.array`` (a per-thread scratch array)?"""
        e = self.def_expr(name)
        return (isinstance(e, ir.Expr) and e.op == "call" and is_float_array(self.ty(name))
                and self.resolve_global(e.func) in R.THREAD_LOCAL_CONSTRUCTORS)

    def fill_value(self, e):
        """The value ``np.full(shape, v)`` / ``np.full_like(a, v)`` fills with, or None."""
        if not (isinstance(e, ir.Expr) and e.op == "call"):
            return None
        k = R.FILL_ARGUMENT.get(self.resolve_global(e.func))
        if k is None:
            return None
        if len(e.args) > k:
            v = e.args[k]
        else:
            v = dict(e.kws).get("fill_value")
        return v if isinstance(v, ir.Var) and is_float(self.ty(v)) else None

    def tuple_item(self, e):
        """The variable ``t[k]`` reads, for a tuple ``t`` built in the function and a
        constant ``k``; else None."""
        if e.op not in ("getitem", "static_getitem") or \
                not isinstance(self.ty(e.value), types.BaseTuple):
            return None
        src = self.tuple_build(e.value.name)
        if src is None:
            return None
        idx = e.index if e.op == "static_getitem" else self.resolve_global(e.index)
        if isinstance(idx, int) and -len(src.items) <= idx < len(src.items):
            return src.items[idx]
        return None

    def tuple_build(self, name):
        """The ``build_tuple`` expression a tuple variable comes from (through copies,
        casts and unpacking, as an inlined function's return leaves them), or None."""
        for _ in range(100):
            e = self.def_expr(name)
            if isinstance(e, ir.Var):
                name = e.name
            elif isinstance(e, ir.Expr) and e.op in ("exhaust_iter", "cast"):
                name = e.value.name
            elif isinstance(e, ir.Expr) and e.op == "build_tuple":
                return e
            else:
                return None
        return None

    def _written_roots(self):
        """Roots of the arrays the function stores into."""
        written = set()
        for label, blk in self.fir.blocks.items():
            for stmt in blk.body:
                if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                    written.add(self.array_root(stmt.target.name))
                elif self.atomic_update(stmt) is not None:
                    written.add(self.array_root(self.atomic_update(stmt)[0].name))
                elif isinstance(stmt, ir.Assign):
                    for a in self._mutated_arrays(stmt.value):
                        written.add(self.array_root(a.name))
        return written

    def is_readonly_array(self, name):
        return self.array_root(name) not in self.written_roots

    def _varied_vars(self):
        """Float variables that depend on a differentiable input (float arguments and
        float array contents)."""
        varied = set()
        for name, t in self.typemap.items():
            if name in self.defs and isinstance(self.defs[name][1].value, ir.Arg) \
                    and (is_float(t) or is_float_array(t)):
                if self.opt.wrt is None or self.defs[name][1].value.index in self.opt.wrt:
                    varied.add(name)
        wrt_roots = {a for a in varied if is_float_array(self.typemap[a])}
        # Arrays whose contents depend on the inputs: the differentiated arguments, and
        # arrays a varied value is stored into.
        varied_roots = set()

        def depends_on_inputs(v):
            return v in varied or self.array_root(v) in varied_roots \
                or self.array_root(v) in wrt_roots

        def depends(name, e):
            if name in self.phis:
                inputs = [v.name for tgt, incs in self.block_phis[self.phis[name]]
                          if tgt.name == name
                          for v in incs.values() if isinstance(v, ir.Var)]
            elif isinstance(e, ir.Expr):
                inputs = self._expr_inputs(e)
            elif isinstance(e, ir.Var):
                inputs = [e.name]
            else:
                return False
            return any(depends_on_inputs(v) for v in inputs)

        changed = True
        while changed:
            changed = False
            for blk in self.fir.blocks.values():
                for stmt in blk.body:
                    upd = None
                    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                        upd = (stmt.target, stmt.value)
                    elif self.atomic_update(stmt) is not None:
                        upd = self.atomic_update(stmt)[0], self.atomic_update(stmt)[2]
                    if upd is not None and upd[1].name in varied:
                        root = self.array_root(upd[0].name)
                        if root not in varied_roots:
                            varied_roots.add(root)
                            changed = True
                    written = self._mutated_arrays(stmt.value) \
                        if isinstance(stmt, ir.Assign) else []
                    if written and any(depends_on_inputs(v) for v in
                                       self._expr_inputs(stmt.value)):
                        for a in written:
                            if self.array_root(a.name) not in varied_roots:
                                varied_roots.add(self.array_root(a.name))
                                changed = True
            for name, (label, stmt) in self.defs.items():
                if name in varied_roots:
                    continue
                src = self.array_copy_source(stmt.value)
                fill = self.fill_value(stmt.value)
                if src is not None:
                    inputs = [src.name]
                elif fill is not None:
                    inputs = [fill.name]
                elif self._computed_array(name):
                    # Whole-array arithmetic (x * 2.0, np.sin(x), x.T): its values depend on
                    # its inputs. Marking it lets the sweep refuse it where its values reach
                    # the result, instead of treating it as a constant.
                    inputs = self._expr_inputs(stmt.value)
                else:
                    continue
                if any(depends_on_inputs(v) for v in inputs):
                    varied_roots.add(name)
                    changed = True
            for name in list(self.defs) + list(self.phis):
                if name in varied:
                    continue
                t = self.typemap.get(name)
                e = None if name in self.phis else self.def_expr(name)
                if _carries_floats(t):
                    # A tuple, list, complex number, bound method... built from varied
                    # values: whatever float is read out of it depends on them too.
                    if depends(name, e):
                        varied.add(name)
                        changed = True
                    continue
                if not (is_float(t) or is_float_array(t)):
                    continue
                if isinstance(e, ir.Expr) and e.op in ("getitem", "static_getitem") \
                        and isinstance(self.ty(e.value), types.Array):
                    root = self.array_root(e.value.name)
                    hit = root in wrt_roots or root in varied_roots
                elif is_float_array(t):
                    # An array is varied when the array it views or aliases holds varied
                    # values.
                    root = self.array_root(name)
                    hit = root in wrt_roots or root in varied_roots
                else:
                    # Every input counts, not only those a rule differentiates: a float
                    # that depends on the inputs through a construct without a rule must
                    # be refused, not taken as a constant.
                    hit = depends(name, e) or any(
                        op in varied for op in self._diff_operands(name, False))
                if hit:
                    varied.add(name)
                    changed = True
        return varied

    def _computed_array(self, name):
        """Is ``name`` a float array computed from other values (not an argument, a view,
        an alias, a fresh array from a constructor, or a copy)?"""
        if not is_float_array(self.ty(name)) or self.array_root(name) != name:
            return False
        e = self.def_expr(name)
        if not isinstance(e, ir.Expr) or self.array_copy_source(e) is not None:
            return False
        if e.op == "call" and (self.resolve_global(e.func) in R.ARRAY_CONSTRUCTORS
                               or self.local_array(name)):
            return False
        if e.op in ("getitem", "static_getitem"):
            return True     # out of a tuple or list the rewrite cannot follow
        return e.op in ("binop", "inplace_binop", "unary", "call", "getattr")

    def _expr_inputs(self, e):
        """Variables an expression reads, including the object of a bound method
        (``x`` in ``x.reshape(...)``)."""
        out = []
        for v in e.list_vars():
            out.append(v.name)
            d = self.def_expr(v.name)
            if isinstance(d, ir.Expr) and d.op == "getattr":
                out.append(d.value.name)
        return out

    def _useful_vars(self):
        """Float variables whose adjoint can be non-zero: they depend on a differentiable
        input and flow into the result."""
        self.varied = self._varied_vars()
        useful = set()
        work = []
        for blk in self.fir.blocks.values():
            term = blk.terminator
            if isinstance(term, ir.Return):
                work.append(term.value.name)
        if self.opt.target == "cuda":
            for blk in self.fir.blocks.values():
                for stmt in blk.body:
                    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                        work.append(stmt.value.name)
                    elif self.atomic_update(stmt) is not None:
                        work.append(self.atomic_update(stmt)[2].name)
        useful_roots = set()
        while work:
            while work:
                name = work.pop()
                if name in useful or name not in self.varied:
                    continue
                useful.add(name)
                for op in self._diff_operands(name):
                    if op not in useful:
                        work.append(op)
                for a in self.arrays_read(name):
                    useful_roots.add(self.array_root(a))
            # A copy of an array read usefully makes its source read usefully.
            grew = True
            while grew:
                grew = False
                for name, (label, stmt) in self.defs.items():
                    src = self.array_copy_source(stmt.value)
                    if src is not None and name in useful_roots and \
                            self.array_root(src.name) not in useful_roots:
                        useful_roots.add(self.array_root(src.name))
                        grew = True
                        if src.name in self.varied:
                            useful.add(src.name)
            # So does the value a useful array is filled with at its creation.
            for name, (label, stmt) in self.defs.items():
                fill = self.fill_value(stmt.value)
                if fill is not None and name in useful_roots and fill.name not in useful \
                        and fill.name in self.varied:
                    work.append(fill.name)
            # A value stored into an array matters when that array is read usefully.
            for blk in self.fir.blocks.values():
                for stmt in blk.body:
                    if (isinstance(stmt, (ir.SetItem, ir.StaticSetItem))
                            and self.array_root(stmt.target.name) in useful_roots
                            and stmt.value.name not in useful
                            and stmt.value.name in self.varied):
                        work.append(stmt.value.name)
        self._useful_roots = useful_roots
        return useful

    def _diff_operands(self, name, only_varied=True):
        """Operands through which an adjoint flows from ``name``."""
        ops = self._diff_operands_all(name)
        if only_varied:
            return [o for o in ops if o in self.varied]
        return ops

    def _diff_operands_all(self, name):
        if name in self.phis:
            label = self.phis[name]
            for tgt, inc in self.block_phis[label]:
                if tgt.name == name:
                    return [v.name for v in inc.values()
                            if isinstance(v, ir.Var) and is_float(self.ty(v))]
        e = self.def_expr(name)
        if isinstance(e, ir.Var):
            return [e.name] if is_float(self.ty(e)) or isinstance(self.ty(e), types.Array) \
                else []
        if not isinstance(e, ir.Expr):
            return []
        if e.op in ("binop", "inplace_binop"):
            return [v.name for v in (e.lhs, e.rhs) if is_float(self.ty(v))]
        if e.op == "unary":
            return [e.value.name] if is_float(self.ty(e.value)) else []
        if e.op == "cast":
            return [e.value.name]
        if e.op == "call":
            red = self.reduction(e)
            if red is not None:
                return [a.name for a in red[1] if is_float_array(self.ty(a))]
            # Float arrays passed to a call make its float result depend on them: with no
            # rule for the call, the rewrite must refuse it rather than drop the gradient.
            return [a.name for a in list(e.args) + [v for _, v in e.kws]
                    if is_float(self.ty(a)) or is_float_array(self.ty(a))]
        if e.op == "pair_first":
            rl = self.iter_alias.get(self._pair_iter(e).name)
            if rl is not None and rl.array is not None and is_float_array(self.ty(rl.array)):
                return [rl.array.name]
            return []
        if e.op in ("static_getitem", "getitem"):
            vt = self.ty(e.value)
            if isinstance(vt, types.BaseTuple):
                item = self.tuple_item(e)
                if item is not None and is_float(self.ty(item)):
                    return [item.name]
            return []
        return []

    # ------------------------------------------------------------------ driver
    def build(self):
        self._check_return()
        self._choose_fused()
        self._choose_parallel()
        # Dry run: find what the reverse sweep reads, then decide stacks.
        self.collecting = True
        self._dry_run()
        if self._private_failed:
            for lp in self._private_failed:
                del self.parallel[lp]
            self._dry_run()
        if self._choose_partials():
            self._dry_run()
        self._decide_stacks()
        self.collecting = False
        self.helpers = {}
        self.helper_stacks = set()
        fwd = Lines()
        fwd.level = 1
        self.emit_region_fwd(fwd, self.s.regions[None], None)
        rev = Lines()
        rev.level = 1
        self.emit_reverse_top(rev)
        return self._assemble(fwd, rev)

    def _dry_run(self):
        self.needed = set()
        self._ref_uses = {}
        self.emit_region_fwd(Lines(), self.s.regions[None], None)
        self.emit_reverse_top(Lines())

    def _choose_partials(self):
        """Calls ``y = f(x)`` whose rule is ``{g} * P(x)`` with P a library call (``sin``
        -> ``cos(x)``), where the sweep would read ``x`` from a stack only for P: keep P on
        the stack instead of ``x``. Same pushes and as many calls, but P is computed in the
        forward replay, where it overlaps the primal's own chain of dependent calls, and the
        sweep is left with a multiply per step (JAX's residuals do the same)."""
        for x, uses in sorted(self._ref_uses.items()):
            if len(uses) != 1 or None in uses or not self._kept_on_stack(x):
                continue
            name, k = next(iter(uses))
            e = self.def_expr(name)
            if k != 0 or not (isinstance(e, ir.Expr) and e.op == "call"):
                continue
            rule = R.CALL_RULES.get(self.resolve_global(e.func))
            if rule is None or len(rule) != 1 or rule[0] is None or e.kws:
                continue
            head, _, partial = rule[0].partition(" * ")
            if head != "{g}" or "{g}" in partial or "{y}" in partial or "math." not in partial:
                continue
            pname = name + ".d"
            self._extra_types[pname] = self.ty(x)
            self.defs[pname] = self.defs[name]
            self.partials[name] = (pname, partial)
        return bool(self.partials)

    def _kept_on_stack(self, name):
        """Will the sweep read ``name`` from a stack (rather than recompute it or find it
        still in place)?"""
        if self.is_remat(name) or self.is_rc(name):
            return False
        if name not in self.defs and name not in self.phis:
            return False
        return any(self.def_site_loops(name).values())

    def _check_return(self):
        rt = self.t.return_type
        if self.opt.target == "cpu" and not is_float(rt):
            self.error("grad needs a function returning a float scalar, this one returns %s"
                       % rt)
        self.return_blocks = [b for b, blk in sorted(self.fir.blocks.items())
                              if isinstance(blk.terminator, ir.Return)]

    # ------------------------------------------------------------------ depth and sites
    def unit_base(self, block):
        """Depth of the innermost fused loop holding ``block`` (0 outside of any)."""
        for lp in self.s.enclosing(block):
            if lp in self.fused:
                return lp.depth
        return 0

    def site_loops(self, loops, block):
        """The loops of ``loops`` that repeat a site within its reversal unit."""
        base = self.unit_base(block)
        return [lp for lp in loops if lp.depth > base]

    def capacity(self, loops):
        cap, runtime = 1, 0
        for lp in loops:
            tc = lp.range.trip_count() if lp.range is not None else None
            if tc is None:
                runtime += 1
            else:
                cap *= max(tc, 1)
        if runtime:
            cap *= self.opt.ad_stack_size
        storage = "heap" if (runtime > 1 or self.opt.storage == "heap") else "frame"
        if self.opt.target == "cuda":
            storage = "frame"     # per-thread local memory; overflow sets the flag
        return max(cap, 1), storage

    def def_site_loops(self, name):
        """Loops repeating the definition(s) of ``name``, per definition site."""
        if name in self.phis:
            label = self.phis[name]
            sites = {}
            for tgt, inc in self.block_phis[label]:
                if tgt.name == name:
                    for pred in inc:
                        sites[(pred, label)] = self.site_loops(
                            self.s.edge_loops(pred, label), label)
            return sites
        label = self.defs[name][0]
        return {label: self.site_loops(self.s.enclosing(label), label)}

    def _decide_stacks(self):
        for name in sorted(self.needed):
            if not self._kept_on_stack(name):
                continue
            repeated = [lps for lps in self.def_site_loops(name).values() if lps]
            dt = _stack_dtype(self.ty(name))
            if dt is None:
                self.error("the reverse sweep needs the value of %r (%s) from every loop "
                           "iteration, and values of that type cannot be kept"
                           % (name, self.ty(name)), self.def_loc(name))
            cap, storage = 0, "frame"
            for lps in repeated:
                c, s = self.capacity(lps)
                cap += c
                if s == "heap":
                    storage = "heap"
            st = "_st_" + self.n(name)
            self.stacks[st] = (dt, cap, storage)
            self.pushed[name] = st


    # ------------------------------------------------------------------ recomputation
    def is_remat(self, name):
        """Can the reverse sweep recompute this value where it needs it (cheap, pure)?"""
        if name in self.phis:
            return False
        e = self.def_expr(name)
        if e is None or isinstance(e, ir.Arg):
            return False
        if isinstance(e, (ir.Const, ir.Global, ir.FreeVar, ir.Var)):
            return True
        if not isinstance(e, ir.Expr):
            return False
        t = self.ty(name)
        if e.op in ("getattr", "build_tuple", "exhaust_iter", "cast"):
            return True
        if e.op in ("getitem", "static_getitem"):
            vt = self.ty(e.value)
            if isinstance(vt, types.BaseTuple):
                return True
            if isinstance(vt, types.Array):
                return isinstance(t, types.Array) or self.is_readonly_array(e.value.name)
            return False
        if e.op in ("binop", "unary", "inplace_binop"):
            return isinstance(t, (types.Integer, types.Boolean))
        if e.op == "call":
            fn = self.resolve_global(e.func)
            return fn in (len, slice) and not e.kws
        return False

    def rc_loop(self, name):
        """The range loop whose index ``name`` is, when the reverse sweep can recompute it
        from the iteration number (every use is inside that loop)."""
        for lp in self.s.loops:
            rl = lp.range
            if rl is None or rl.first != name or lp in self.fused:
                continue
            if rl.array is not None and not self.is_readonly_array(rl.array.name):
                return None     # the values change: keep them on a stack
            chain, work = set(), [name]
            while work:
                v = work.pop()
                if v in chain:
                    continue
                chain.add(v)
                for label, stmt in self.uses.get(v, ()):
                    if label not in lp.blocks:
                        return None
                    if (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var)
                            and stmt.value.name == v):
                        work.append(stmt.target.name)
            return lp
        return None

    def is_rc(self, name):
        return self.rc_loop(name) is not None

    def ref(self, var):
        """Source of a primal value at the current point of the reverse sweep."""
        if not isinstance(var, (ir.Var, str)):
            return repr(var)
        name = var if isinstance(var, str) else var.name
        static = self.static_src(name)
        if static is not None:
            return static
        if name not in self._once:
            self._once[name] = (name in self.defs or name in self.phis) and not any(
                self.def_site_loops(name).values())
        if self._once[name]:
            return self.n(name)       # defined once per reversal unit: still there
        if self.is_remat(name):
            return self.remat_src(name)
        if self.collecting:
            self.needed.add(name)
            self._ref_uses.setdefault(name, set()).add(self._ref_ctx)
        return self.n(name)

    def static_src(self, name):
        """Source of a value known before the function runs (constants, globals and their
        attributes), or None. Such values are written in place, never assigned."""
        if name in self._static:
            return self._static[name]
        out = None
        if name not in self.phis:
            e = self.def_expr(name)
            if isinstance(e, ir.Const):
                out = self.const_src(e.value)
            elif isinstance(e, (ir.Global, ir.FreeVar)):
                out = self.const_src(e.value) if _is_literal(e.value) else \
                    self.gname(e.value)
            elif isinstance(e, ir.Var):
                out = self.static_src(e.name)
            elif isinstance(e, ir.Expr) and e.op == "getattr":
                base = self.static_src(e.value.name)
                if base is not None and not _is_literal(self.resolve_global(e.value)):
                    out = "%s.%s" % (base, e.attr)
        self._static[name] = out
        return out

    def fwd_name(self, var):
        """Source of an operand in the forward replay."""
        if not isinstance(var, (ir.Var, str)):
            return repr(var)
        name = var if isinstance(var, str) else var.name
        static = self.static_src(name)
        return self.n(name) if static is None else static

    def remat_src(self, name):
        e = self.def_expr(name)
        if isinstance(e, ir.Const):
            return self.const_src(e.value)
        if isinstance(e, (ir.Global, ir.FreeVar)):
            return self.gname(e.value) if not _is_literal(e.value) else \
                self.const_src(e.value)
        if isinstance(e, ir.Var):
            return self.ref(e)
        return "(%s)" % self.expr_src(e, self.ref)

    def ref_bar(self, var):
        """Source of the adjoint array of a float array variable."""
        name = var if isinstance(var, str) else var.name
        e = self.def_expr(name)
        if isinstance(e, ir.Var):
            return self.ref_bar(e)
        if isinstance(e, ir.Expr) and e.op == "cast":
            return self.ref_bar(e.value)
        if isinstance(e, ir.Expr) and e.op in ("getitem", "static_getitem"):
            item = self.tuple_item(e)
            if item is not None:
                return self.ref_bar(item)
            return "%s[%s]" % (self.ref_bar(e.value), self.index_src(e, self.ref))
        if isinstance(e, ir.Arg) or name in self.array_adjoints:
            return self.bar(name)
        if self._computed_array(name):
            self.error(self._array_expr_message(name), self.def_loc(name))
        self.error("the array %r is produced by an expression that is not differentiated "
                   "(%s); build arrays with np.zeros/np.empty/np.ones and write them with "
                   "loops" % (name, e), self.def_loc(name))

    # ------------------------------------------------------------------ expression source
    def const_src(self, value):
        if isinstance(value, float):
            if math.isinf(value):
                return "math.inf" if value > 0 else "(-math.inf)"
            if math.isnan(value):
                return "math.nan"
            return repr(value)
        if isinstance(value, (bool, int, str, type(None))):
            return repr(value)
        if isinstance(value, tuple):
            return "(%s)" % "".join(self.const_src(v) + ", " for v in value)
        if isinstance(value, np.generic):
            return "%s(%r)" % (self.gname(type(value)), value.item())
        return self.gname(value)

    def index_src(self, e, r):
        if e.op == "static_getitem":
            if e.index_var is not None:
                return r(e.index_var)
            return self.const_src(e.index)
        return r(e.index)

    def expr_src(self, e, r):
        """Python source of an IR expression; ``r`` renders operand variables."""
        op = e.op
        if op in ("binop", "inplace_binop"):
            fn = e.immutable_fn if op == "inplace_binop" else e.fn
            if fn is operator.contains:
                return "%s in %s" % (r(e.rhs), r(e.lhs))
            if fn not in _OPS:
                self.error("operator %s" % fn, e.loc)
            return "%s %s %s" % (r(e.lhs), _OPS[fn], r(e.rhs))
        if op == "unary":
            return "%s%s" % (_UNARY[e.fn], r(e.value))
        if op == "call":
            if e.vararg is not None or e.varkwarg is not None:
                self.error("calls with *args or **kwargs", e.loc)
            args = [r(a) for a in e.args] + ["%s=%s" % (k, r(v)) for k, v in e.kws]
            return "%s(%s)" % (r(e.func), ", ".join(args))
        if op == "getattr":
            return "%s.%s" % (r(e.value), e.attr)
        if op in ("getitem", "static_getitem"):
            return "%s[%s]" % (r(e.value), self.index_src(e, r))
        if op == "build_tuple":
            return "(%s)" % "".join(r(v) + ", " for v in e.items)
        if op == "build_list":
            return "[%s]" % ", ".join(r(v) for v in e.items)
        if op in ("exhaust_iter", "cast"):
            return r(e.value)
        self.error("the construct %r" % op, e.loc)

    # ------------------------------------------------------------------ forward emission
    def emit_region_fwd(self, L, R, stop):
        self.emit_seq(L, R, R.entry, stop)

    def emit_seq(self, L, R, n, stop):
        while n is not None and n != stop:
            if isinstance(n, LoopNode):
                if n in self.fused:
                    self.emit_fused_loop(L, R, n)
                else:
                    self.emit_loop(L, R, n)
                edges = R.out[n]
            else:
                self.emit_block(L, n)
                edges = R.out[n]
                term = self.fir.blocks[n].terminator
                if not edges:
                    self.emit_block_end(L, n, term)
                    return
            if len(edges) == 1:
                n = self.follow(L, R, edges[0])
                continue
            j = R.ipdom.get(n)
            if isinstance(n, LoopNode):
                xname = "_x%d" % n.header
                for k, e in enumerate(edges):
                    kw = "if" if k == 0 else ("elif" if k < len(edges) - 1 else "else")
                    L("%s %s == %d:" % (kw, xname, k) if kw != "else" else "else:")
                    with L.indent():
                        self.emit_arm(L, R, e, j)
            else:
                term = self.fir.blocks[n].terminator
                L("if %s:" % self.fwd_name(term.cond))
                with L.indent():
                    self.emit_arm(L, R, (n, term.truebr), j)
                L("else:")
                with L.indent():
                    self.emit_arm(L, R, (n, term.falsebr), j)
            n = j

    def emit_arm(self, L, R, e, stop):
        m = L.mark()
        nxt = self.follow(L, R, e)
        if nxt is not None and nxt != stop:
            self.emit_seq(L, R, nxt, stop)
        L.close_block(m)

    def follow(self, L, R, e):
        """Emit what happens on edge ``e`` of region ``R``; the next node, if inside R."""
        kind = R.edge_kind(e)
        lp = R.loop
        if kind == "exit" and lp is self._helper_loop:
            L("break")      # never taken: the helper runs one iteration that exists
            return None
        if kind == "exit":
            if lp in self.fused:
                self.emit_fused_iteration_reverse(L, lp, e)
            if len(lp.exits) > 1:
                L("_x%d = %d" % (lp.header, lp.exits.index(e)))
            L("break")
            return None
        if kind == "back":
            if lp in self.fused:
                self.emit_fused_iteration_reverse(L, lp, e)
                self.emit_copies(L, e)
            else:
                self.emit_copies(L, e)
                if len(lp.latches) > 1:
                    self.rec_fwd(L, "_l%d" % lp.header, lp.latches.index(e[0]),
                                 self.s.enclosing(lp.header), lp.header)
                L("_n%d += 1" % lp.header)
            L("break" if lp is self._helper_loop else "continue")
            return None
        self.emit_copies(L, e)
        m = R.node_of(e[1])
        ins = R.ins[m]
        if len(ins) > 1:
            self.rec_fwd(L, "_c%s" % _node_key(m), ins.index(e), self._region_loops(R),
                         R.entry)
        return m

    def _region_loops(self, R):
        return [] if R.loop is None else self.s.enclosing(R.loop.header)

    def rec_fwd(self, L, name, value, loops, block):
        loops = self.site_loops(loops, block)
        if loops:
            self.emit_push(L, self._rec_stack(name, loops), value)
        else:
            L("%s = %s" % (name, value))

    def emit_push(self, L, stack, value):
        L("push(%s, %s)" % (stack, value))
        for h in self._open_loops:
            self.loop_stacks.setdefault(h, set()).add(stack)

    def rec_rev(self, L, name, loops, block):
        loops = self.site_loops(loops, block)
        if loops:
            L("%s = pop(%s)" % (name, self._rec_stack(name, loops)))

    def _rec_stack(self, name, loops):
        st = "_st" + name
        if st not in self.stacks:
            cap, storage = self.capacity(loops)
            self.stacks[st] = ("np.int64", cap, storage)
        return st

    def copies(self, e):
        src, dst = e
        out = []
        for tgt, inc in self.block_phis.get(dst, ()):
            if src not in inc:
                self.error("a phi without a value for the edge %s -> %s" % e, tgt.loc)
            out.append((tgt, inc[src]))
        return out

    def edge_pushes(self, e):
        return bool(self.site_loops(self.s.edge_loops(*e), e[1]))

    def emit_copies(self, L, e):
        cps = self.copies(e)
        if not cps:
            return
        if self.edge_pushes(e):
            for tgt, _ in cps:
                if tgt.name in self.pushed:
                    self.emit_push(L, self.pushed[tgt.name], self.n(tgt))
        lhs = ", ".join(self.n(t) for t, _ in cps)
        rhs = ", ".join(self.fwd_name(v) for _, v in cps)
        L("%s = %s" % (lhs, rhs))

    def emit_block(self, L, label):
        for stmt in self.fir.blocks[label].body:
            if isinstance(stmt, (ir.Jump, ir.Branch, ir.Return)):
                continue
            self.emit_stmt_fwd(L, label, stmt)

    def emit_block_end(self, L, label, term):
        if isinstance(term, ir.Return):
            if self.opt.target == "cpu":
                L("_retval = %s" % self.fwd_name(term.value))
                if len(self.return_blocks) > 1:
                    L("_rsite = %d" % self.return_blocks.index(label))
            elif len(self.return_blocks) > 1:
                L("_rsite = %d" % self.return_blocks.index(label))
        elif isinstance(term, ir.StaticRaise):
            args = "" if term.exc_args is None else ", ".join(
                self.const_src(a) for a in term.exc_args)
            L("raise %s(%s)" % (self.gname(term.exc_class), args))
        elif isinstance(term, ir.Raise):
            L("raise %s" % self.n(term.exception))
        else:
            self.error("the block terminator %s" % term, term.loc)

    def emit_stmt_fwd(self, L, label, stmt):
        if isinstance(stmt, ir.Assign):
            name = stmt.target.name
            e = stmt.value
            if isinstance(e, ir.Arg):
                return
            if isinstance(e, ir.Expr):
                if e.op == "phi":
                    return
                if e.op == "getiter":
                    self.emit_getiter(L, name, e)
                    return
                if e.op == "iternext":
                    return
                if e.op == "pair_first":
                    rl = self.iter_alias[self._pair_iter(e).name]
                    if name in self.pushed and self._site_repeats(label):
                        self.emit_push(L, self.pushed[name], self.n(name))
                    value = self._range_index(rl, rl.ctr, self.fwd_name)
                    if rl.array is not None:      # no read past the end on the last test
                        value = "%s if %s < %s else %s" % (value, rl.ctr, rl.len,
                                                           _zero_src(self.ty(name)))
                    L("%s = %s" % (self.n(name), value))
                    return
                if e.op == "pair_second":
                    rl = self.iter_alias[self._pair_iter(e).name]
                    L("%s = %s < %s" % (self.n(name), rl.ctr, rl.len))
                    L("%s += 1" % rl.ctr)
                    return
                if e.op == "call" and _is_range(self.resolve_global(e.func)):
                    return          # consumed by getiter
                if (isinstance(self.ty(name), types.RangeIteratorType)
                        or name in self.iter_alias):
                    return
            if isinstance(e, ir.Var) and name in self.iter_alias:
                return
            if self.opt.target == "cuda" and self.atomic_update(stmt) is not None:
                return      # the forward kernel did it already
            if self.static_src(name) is not None:
                return      # written in place where it is used
            if name in self.pushed and self._site_repeats(label):
                self.emit_push(L, self.pushed[name], self.n(name))
            if isinstance(e, ir.Var):
                src = self.fwd_name(e)
            elif isinstance(e, ir.Expr):
                if e.op == "call":
                    self._check_call(e, name)
                    self._check_mutating_call(e)
                if e.op == "inplace_binop" and isinstance(self.ty(e.lhs), types.Array):
                    self.error("in-place whole-array arithmetic (`%s=` on %s); write the "
                               "element-wise loop" % (_OPS.get(e.immutable_fn, "?"),
                                                      self.ty(e.lhs)), e.loc)
                src = self.expr_src(e, self.fwd_name)
            else:
                self.error("the statement %s" % stmt, stmt.loc)
            L("%s = %s" % (self.n(name), src))
            if name in self.partials:
                pname, partial = self.partials[name]
                if pname in self.pushed and self._site_repeats(label):
                    self.emit_push(L, self.pushed[pname], self.n(pname))
                L("%s = %s" % (self.n(pname), partial.format(self.fwd_name(e.args[0]))))
            if name in self.array_adjoints and self.array_adjoints[name] == "new":
                L("%s = np.zeros_like(%s)" % (self.bar(name), self.n(name)))
            elif name in self.array_adjoints and self.array_adjoints[name] == "local":
                L("%s = %s" % (self.bar(name), src))     # local memory is not zeroed
                k = self.fresh("k")
                L("for %s in range(%s.shape[0]):" % (k, self.bar(name)))
                L("    %s[%s] = 0.0" % (self.bar(name), k))
        elif isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            if self.opt.target == "cuda" and self.is_arg_array(stmt.target.name):
                return      # the forward kernel wrote it already
            if isinstance(stmt, ir.SetItem):
                idx = self.fwd_name(stmt.index)
            elif stmt.index_var is not None:
                idx = self.fwd_name(stmt.index_var)
            else:
                idx = self.const_src(stmt.index)
            L("%s[%s] = %s" % (self.n(stmt.target), idx, self.fwd_name(stmt.value)))
        elif isinstance(stmt, (ir.Del, ir.Print)):
            return
        elif isinstance(stmt, (ir.StaticRaise, ir.Raise)):
            self.emit_block_end(L, label, stmt)
        else:
            self.error("the statement %s" % stmt, stmt.loc)

    def _site_repeats(self, label):
        return bool(self.site_loops(self.s.enclosing(label), label))

    def _pair_iter(self, e):
        pair = self.def_expr(e.value.name)
        return pair.value

    def _range_index(self, rl, counter, r):
        if rl.array is not None:
            return "%s[%s]" % (r(rl.array), counter)
        args = rl.args
        if len(args) == 1:
            return counter
        start = r(args[0])
        if len(args) == 2:
            return "%s + %s" % (start, counter)
        return "%s + %s * %s" % (start, counter, r(args[2]))

    def emit_getiter(self, L, name, e):
        rl = self.iter_alias.get(name)
        if rl is None:
            self.error("iteration over %s" % self.ty(e.value), e.loc)
        if rl.array is not None:
            L("%s = len(%s)" % (rl.len, self.fwd_name(rl.array)))
        else:
            args = ", ".join(self.fwd_name(a) for a in rl.args)
            L("%s = len(range(%s))" % (rl.len, args))
        L("%s = 0" % rl.ctr)

    def _check_call(self, e, name):
        if self.reduction(e) is not None or self.array_copy_source(e) is not None:
            return
        fn = self.resolve_global(e.func)
        t = self.ty(name)
        if fn in R.ARRAY_CONSTRUCTORS:
            return
        if name in self.useful and (is_float(t) or is_float_array(t)) \
                and fn not in R.CALL_RULES and fn not in R.NON_DIFFERENTIABLE_CALLS:
            fname = getattr(fn, "__name__", None)
            if fname is None:
                f = self.def_expr(e.func.name)
                fname = ("the method %s" % f.attr if isinstance(f, ir.Expr)
                         and f.op == "getattr" else str(fn))
            self.error("the call to %s has no adjoint rule (add one to "
                       "numba_adstack.ad.rules.CALL_RULES)" % fname, e.loc)

    # ------------------------------------------------------------------ loops, forward
    def counted(self, lp):
        """A range loop left only when its range is exhausted: its iteration count is the
        length of the range, which the reverse sweep recomputes instead of storing."""
        rl = lp.range
        return rl is not None and len(lp.exits) == 1 and lp.exits[0][0] == rl.block

    def emit_loop(self, L, R, lp):
        h = lp.header
        L("_n%d = 0" % h)
        L("while True:")
        self._open_loops.append(h)
        with L.indent():
            m = L.mark()
            self.emit_seq(L, self.s.regions[lp], h, None)
            L.close_block(m)
        self._open_loops.pop()
        loops = self.s.enclosing(h)[1:]
        if len(lp.exits) > 1:
            self.rec_after(L, "_x%d" % h, loops, h)
        if not self.counted(lp):
            self.rec_after(L, "_n%d" % h, loops, h)

    def rec_after(self, L, name, loops, block):
        loops = self.site_loops(loops, block)
        if loops:
            self.emit_push(L, self._rec_stack(name, loops), name)

    # ------------------------------------------------------------------ reverse emission
    def emit_reverse_top(self, L):
        Rt = self.s.regions[None]
        rbs = self.return_blocks
        if len(rbs) == 1:
            self.seed(L, rbs[0])
            self.rev_seq(L, Rt, rbs[0], None)
            return
        d = rbs[0]
        for b in rbs[1:]:
            d = _common_dom(Rt, d, b)
        for k, b in enumerate(rbs):
            L("%s _rsite == %d:" % ("if" if k == 0 else "elif", k))
            with L.indent():
                m = L.mark()
                self.seed(L, b)
                if b != d:
                    self.rev_seq(L, Rt, b, d)
                L.close_block(m)
        if d in rbs:
            return
        self.rev_seq(L, Rt, d, None)

    def seed(self, L, label):
        if self.opt.target != "cpu":
            return
        ret = self.fir.blocks[label].terminator.value
        if ret.name in self.useful:
            L("%s = _ret_b" % self.bar(ret))

    def rev_seq(self, L, R, n, stop):
        while n != stop:
            self.rev_node(L, R, n)
            if n == R.entry:
                return
            ins = R.ins[n]
            if len(ins) == 1:
                self.rev_edge(L, ins[0])
                n = R.node_of(ins[0][0])
                continue
            d = R.idom[n]
            cname = "_c%s" % _node_key(n)
            self.rec_rev(L, cname, self._region_loops(R), R.entry)
            for k, e in enumerate(ins):
                kw = "if" if k == 0 else ("elif" if k < len(ins) - 1 else "else")
                L("%s %s == %d:" % (kw, cname, k) if kw != "else" else "else:")
                with L.indent():
                    m = L.mark()
                    self.rev_edge(L, e)
                    p = R.node_of(e[0])
                    if p != d:
                        self.rev_seq(L, R, p, d)
                    L.close_block(m)
            n = d

    def rev_node(self, L, R, n):
        if isinstance(n, LoopNode):
            if n not in self.fused:
                outs = self._skippable(n)
                if outs is None:
                    self.rev_loop(L, n)
                else:
                    # Nothing flows back into the loop: skip its reverse, drop its history.
                    L("if %s:" % " or ".join("%s != 0.0" % self.bar(o) for o in outs))
                    with L.indent():
                        self.rev_loop(L, n)
                    L("else:")
                    with L.indent():
                        m = L.mark()
                        for st in sorted(self.loop_stacks.get(n.header, ())):
                            L("clear(%s)" % st)
                        L.close_block(m)
            else:
                # Reversed already, iteration by iteration; a sum's final value depends
                # on its initial value with slope one.
                for phi, members, outflow, seed in self.fused_seed[n]:
                    L("%s = %s" % (self.bar(phi), self._seed_name(phi)))
            return
        blk = self.fir.blocks[n]
        for stmt in reversed(blk.body):
            self.rev_stmt(L, n, stmt)

    def _skippable(self, lp):
        """The adjoints that flow into the reverse of ``lp`` when, all being zero, the
        reverse can be skipped: ``lp`` sits directly in a fused loop (so its history is
        this iteration's alone) and writes no memory. None otherwise."""
        parent = lp.parent
        if parent is None or parent not in self.fused:
            return None
        for b in lp.blocks:
            for stmt in self.fir.blocks[b].body:
                if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) or \
                        self.atomic_update(stmt) is not None:
                    return None
        outs = set()
        for name in self.useful:
            label = self.phis.get(name) or (self.defs[name][0] if name in self.defs else None)
            if label is None or label not in lp.blocks or not is_float(self.ty(name)):
                continue
            if any(l not in lp.blocks for l, _ in self.uses.get(name, ())):
                outs.add(name)
        return sorted(outs) if outs else None

    def rev_loop(self, L, lp):
        h = lp.header
        loops = self.s.enclosing(h)[1:]
        if self.counted(lp) and self.site_loops(loops, h):
            if lp.range.array is not None:
                L("_n%d = len(%s)" % (h, self.ref(lp.range.array)))
            else:
                L("_n%d = len(range(%s))" % (h, ", ".join(self.ref(a)
                                                           for a in lp.range.args)))
        else:
            self.rec_rev(L, "_n%d" % h, loops, h)
        Rl = self.s.regions[lp]
        if len(lp.exits) > 1:
            self.rec_rev(L, "_x%d" % h, loops, h)
            for k, (src, dst) in enumerate(lp.exits):
                kw = "if" if k == 0 else ("elif" if k < len(lp.exits) - 1 else "else")
                L("%s _x%d == %d:" % (kw, h, k) if kw != "else" else "else:")
                with L.indent():
                    m = L.mark()
                    self.set_rc(L, lp, "_n%d" % h)
                    self.rev_seq(L, Rl, Rl.node_of(src), None)
                    L.close_block(m)
        else:
            self.set_rc(L, lp, "_n%d" % h)
            self.rev_seq(L, Rl, Rl.node_of(lp.exits[0][0]), None)
        mvar = "_m%d" % h
        # A count-down ``while`` rather than ``range(n - 1, -1, -1)``: LLVM then knows the
        # index is never negative and drops NumPy's wraparound from every access.
        L("%s = _n%d" % (mvar, h))
        L("while %s > 0:" % mvar)
        with L.indent():
            L("%s -= 1" % mvar)
            m = L.mark()
            self.set_rc(L, lp, mvar)
            if len(lp.latches) == 1:
                self.rev_edge(L, (lp.latches[0], h))
                self.rev_seq(L, Rl, Rl.node_of(lp.latches[0]), None)
            else:
                self.rec_rev(L, "_l%d" % h, self.s.enclosing(h), h)
                for k, latch in enumerate(lp.latches):
                    kw = "if" if k == 0 else ("elif" if k < len(lp.latches) - 1 else "else")
                    L("%s _l%d == %d:" % (kw, h, k) if kw != "else" else "else:")
                    with L.indent():
                        self.rev_edge(L, (latch, h))
                        self.rev_seq(L, Rl, Rl.node_of(latch), None)
            L.close_block(m)

    def set_rc(self, L, lp, counter):
        rl = lp.range
        if rl is not None and rl.array is not None:
            L("_it%d = %s" % (lp.header, counter))
        if rl is None or rl.first is None or not self.is_rc(rl.first):
            return
        L("%s = %s" % (self.n(rl.first), self._range_index(rl, counter, self.ref)))

    def rev_edge(self, L, e):
        cps = self.copies(e)
        flt = [(t, v) for t, v in cps if t.name in self.useful]
        targets = {t.name for t, _ in cps}
        if flt:
            swap = any(isinstance(v, ir.Var) and v.name in targets for _, v in flt)
            if swap:
                tmps = []
                for t, v in flt:
                    tmp = "_t" + self.bar(t)
                    L("%s = %s" % (tmp, self.bar(t)))
                    tmps.append(tmp)
                for (t, v), tmp in zip(flt, tmps):
                    L("%s = %s" % (self.bar(t), ZERO))
                for (t, v), tmp in zip(flt, tmps):
                    if isinstance(v, ir.Var) and v.name in self.useful:
                        L("%s += %s" % (self.bar(v), tmp))
            else:
                for t, v in flt:
                    if isinstance(v, ir.Var) and v.name in self.useful:
                        L("%s += %s" % (self.bar(v), self.bar(t)))
                    L("%s = %s" % (self.bar(t), ZERO))
        if self.edge_pushes(e):
            for t, _ in reversed(cps):
                if t.name in self.pushed:
                    L("%s = pop(%s)" % (self.n(t), self.pushed[t.name]))

    def rev_stmt(self, L, label, stmt):
        if isinstance(stmt, ir.Assign):
            name = stmt.target.name
            e = stmt.value
            if isinstance(e, ir.Expr) and e.op == "phi":
                return
            upd = self.atomic_update(stmt)
            if upd is not None:
                arr, idx, val = upd
                if val.name in self.useful:
                    L("%s += %s[%s]" % (self.bar(val), self.ref_bar(arr), self.ref(idx)))
                return
            if name in self.useful and is_float_array(self.ty(name)):
                self._check_array_def(name, e, stmt)
            fill = self.fill_value(e)
            if fill is not None and fill.name in self.useful:
                L("%s += np.sum(%s)" % (self.bar(fill), self.ref_bar(name)))
            src = self.array_copy_source(e)
            if src is not None and src.name in self.varied and \
                    self.array_root(name) in self.useful_roots():
                tmp = self.fresh("view")
                L("%s = %s" % (tmp, self.ref_bar(src)))
                L("%s += %s" % (tmp, self.bar(name)))
            if name in self.useful and is_float(self.ty(name)) and not isinstance(e, ir.Arg):
                g = self.bar(name)
                for op, src in self.contributions(name, e):
                    if op == "_ATOMIC":
                        L("cuda.atomic.add(%s, %s, %s)" % src)
                    elif op == "_GUARD":
                        L("if %s:" % src[0])
                        L("    %s += %s" % (src[1], src[2]))
                    elif op == "_ARRAY":
                        # In place, through a view when the adjoint is a slice of another.
                        tmp = self.fresh("view")
                        L("%s = %s" % (tmp, src[0]))
                        L("%s += %s" % (tmp, src[1]))
                    else:
                        L("%s += %s" % (op, src))
                L("%s = %s" % (g, ZERO))
            if name in self.partials and self.partials[name][0] in self.pushed \
                    and self._site_repeats(label):
                pname = self.partials[name][0]
                L("%s = pop(%s)" % (self.n(pname), self.pushed[pname]))
            if name in self.pushed and self._site_repeats(label):
                L("%s = pop(%s)" % (self.n(name), self.pushed[name]))
        elif isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            if not is_float_array(self.ty(stmt.target)):
                return
            if self.array_root(stmt.target.name) not in self.useful_roots() and not (
                    self.opt.target == "cuda" and self.is_arg_array(stmt.target.name)):
                return
            if isinstance(stmt, ir.SetItem):
                idx = self.ref(stmt.index)
            elif stmt.index_var is not None:
                idx = self.ref(stmt.index_var)
            else:
                idx = self.const_src(stmt.index)
            cell = "%s[%s]" % (self.ref_bar(stmt.target), idx)
            v = stmt.value
            if v.name in self.useful:
                if not is_float(self.ty(v)):
                    self.error("assigning %s into a slice of an array (`a[i:j] = ...`); "
                               "write the element-wise loop" % self.ty(v), stmt.loc)
                if self._region_index(stmt):
                    L("%s += np.sum(%s)" % (self.bar(v), cell))   # one value, many cells
                else:
                    L("%s += %s" % (self.bar(v), cell))
            if id(stmt) not in self.inplace_stores:
                L("%s = 0.0" % cell)

    def _mutated_arrays(self, e):
        """Float arrays a call writes into (``y`` of ``y.fill(v)``), by the lists in
        rules.py; [] for anything else."""
        if not (isinstance(e, ir.Expr) and e.op == "call"):
            return []
        fn = self.resolve_global(e.func)
        d = self.def_expr(e.func.name)
        if fn is None and isinstance(d, ir.Expr) and d.op == "getattr" \
                and d.attr in R.MUTATING_METHODS:
            arrays = [d.value]
        elif fn in R.MUTATING_FUNCTIONS:
            arrays = list(e.args)
        else:
            return []
        return [a for a in arrays if is_float_array(self.ty(a))]

    def _check_mutating_call(self, e):
        """Refuse a call that writes into an array the gradient reads (``y.fill(v)``,
        ``np.fill_diagonal(y, v)``): what it writes is invisible to the rewrite."""
        arrays = self._mutated_arrays(e)
        if not arrays:
            return
        fn = self.resolve_global(e.func)
        what = "%s()" % getattr(fn, "__name__", fn) if fn is not None else \
            "the method .%s()" % self.def_expr(e.func.name).attr
        for a in arrays:
            if self.array_root(a.name) in self.useful_roots():
                self.error("%s writes into the array %r, which the gradient reads; write "
                           "the element-wise loop" % (what, self.array_root(a.name)), e.loc)

    def _region_index(self, stmt):
        """Does this store write a region (a slice, ``...``) rather than one element?"""
        if isinstance(stmt, ir.StaticSetItem):
            t = self.ty(stmt.index_var) if stmt.index_var is not None else None
            if t is None:
                ix = stmt.index
                parts = ix if isinstance(ix, tuple) else (ix,)
                return any(isinstance(p, slice) or p is Ellipsis for p in parts)
        else:
            t = self.ty(stmt.index)
        parts = t.types if isinstance(t, types.BaseTuple) else (t,)
        return any(isinstance(p, (types.SliceType, types.EllipsisType)) for p in parts)

    def _check_array_def(self, name, e, stmt):
        """Arrays on the gradient path must be arguments, fresh arrays, views or aliases;
        whole-array arithmetic is refused rather than differentiated wrongly."""
        if isinstance(e, (ir.Arg, ir.Var, ir.Global, ir.FreeVar, ir.Const)):
            return
        if isinstance(e, ir.Expr):
            if e.op in ("getitem", "static_getitem", "cast"):
                return
            if e.op == "call" and (self.resolve_global(e.func) in R.ARRAY_CONSTRUCTORS
                                   or self.local_array(name)):
                return
            if self.array_copy_source(e) is not None:
                return
        self.error(self._array_expr_message(name), stmt.loc)

    def _array_expr_message(self, name):
        e = self.def_expr(name)
        if isinstance(e, ir.Expr) and e.op == "call":
            fn = self.resolve_global(e.func)
            if fn in R.REFUSED_CONSTRUCTORS:
                return "`%s` on the gradient path: %s" % (R.DISPLAY_NAMES.get(fn, fn),
                                                           R.REFUSED_CONSTRUCTORS[fn])
        what = "an array expression"
        if isinstance(e, ir.Expr):
            if e.op in ("binop", "inplace_binop"):
                fn = e.immutable_fn if e.op == "inplace_binop" else e.fn
                what = "whole-array arithmetic (`%s`)" % _OPS.get(fn, fn)
            elif e.op == "unary":
                what = "whole-array arithmetic (unary `%s`)" % _UNARY.get(e.fn, e.fn).strip()
            elif e.op == "getattr":
                what = "the array attribute `.%s`" % e.attr
            elif e.op == "call":
                fn = self.resolve_global(e.func)
                d = self.def_expr(e.func.name)
                if fn is None and isinstance(d, ir.Expr) and d.op == "getattr":
                    what = "the array method `.%s()`" % d.attr
                elif fn in R.DISPLAY_NAMES:
                    what = "`%s`" % R.DISPLAY_NAMES[fn]
                else:
                    prefix = "np." if isinstance(fn, np.ufunc) or getattr(
                        fn, "__module__", "").startswith("numpy") else ""
                    what = "the array function `%s%s`" % (prefix, getattr(fn, "__name__", fn))
        target = "" if name.startswith("$") else ", assigned to %r," % name
        return ("%s%s producing %s: write the element-wise loop (the whole-array reductions "
                "np.sum, np.mean, np.dot and copies are supported)"
                % (what, target, self.ty(name)))

    def useful_roots(self):
        """Roots of the arrays whose contents reach the result (found with ``useful``)."""
        return self._useful_roots

    def contributions(self, name, e):
        """(adjoint variable, contribution source) pairs for ``name = e``."""
        g = self.bar(name)
        out = []

        def add(var, src):
            if isinstance(var, ir.Var) and var.name in self.useful and is_float(self.ty(var)):
                out.append((self.bar(var), src))

        def apply(rule, operands):
            active = [r is not None and isinstance(op, ir.Var) and op.name in self.useful
                      and is_float(self.ty(op)) for r, op in zip(rule, operands)]
            if not any(active):
                return
            if name in self.partials:
                out.append((self.bar(operands[0]), "%s * %s"
                            % (g, self.ref(self.partials[name][0]))))
                return
            used = R.needed_operands([r for r, a in zip(rule, active) if a])
            self._ref_ctx = (name, "y")
            fmt = {"g": g, "y": self.ref(name) if "y" in used else ""}
            pos = []
            for k, op in enumerate(operands):
                self._ref_ctx = (name, k)
                pos.append(self.ref(op) if k in used else "")
            self._ref_ctx = None
            for r, op, a in zip(rule, operands, active):
                if a:
                    out.append((self.bar(op), r.format(*pos, **fmt)))

        if isinstance(e, ir.Var):
            add(e, g)
        elif isinstance(e, (ir.Const, ir.Global, ir.FreeVar, ir.Arg)):
            pass
        elif e.op == "cast":
            add(e.value, g)
        elif e.op in ("binop", "inplace_binop"):
            fn = e.fn if e.op == "binop" else R.INPLACE_TO_BINOP.get(e.fn, e.immutable_fn)
            rule = R.BINOP_RULES.get(fn)
            if rule is None:
                self.error("the operator %s on floats" % _OPS.get(fn, fn), e.loc)
            apply(rule, [e.lhs, e.rhs])
        elif e.op == "unary":
            rule = R.UNARY_RULES.get(e.fn)
            if rule is None:
                self.error("the unary operator %s on floats" % e.fn, e.loc)
            apply(rule, [e.value])
        elif e.op == "call" and self.reduction(e) is not None:
            fn, operands = self.reduction(e)
            rule = R.REDUCTION_RULES[fn]
            active = [r is not None and a.name in self.varied for r, a in zip(rule, operands)]
            used = R.needed_operands([r for r, act in zip(rule, active) if act])
            pos = []
            for k, a in enumerate(operands):
                if k in used and not self.is_readonly_array(a.name):
                    self.error("%s of the array %r, which the function also writes; copy the "
                               "values it needs or write the loop"
                               % (getattr(fn, "__name__", fn), a.name), e.loc)
                pos.append(self.ref(a) if k in used else "")
            for r, a, act in zip(rule, operands, active):
                if act:
                    self._check_private(a, None)
                    out.append(("_ARRAY", (self.ref_bar(a), r.format(*pos, g=g))))
        elif e.op == "call":
            fn = self.resolve_global(e.func)
            if fn in R.NON_DIFFERENTIABLE_CALLS or fn in R.ARRAY_CONSTRUCTORS:
                return out
            rule = R.CALL_RULES.get(fn)
            if rule is None:
                self._check_call(e, name)
                return out
            if e.kws:
                self.error("keyword arguments to %s" % getattr(fn, "__name__", fn), e.loc)
            if len(rule) != len(e.args):
                self.error("%s with %d arguments" % (getattr(fn, "__name__", fn),
                                                     len(e.args)), e.loc)
            apply(rule, list(e.args))
        elif e.op in ("getitem", "static_getitem"):
            vt = self.ty(e.value)
            if isinstance(vt, types.Array):
                if isinstance(self.ty(name), types.Array) or name in self.inplace_loads:
                    return out
                self._check_private(e.value, self.index_var(e))
                if self.opt.target == "cuda" and not self.thread_private(e) \
                        and not self.local_array(self.array_root(e.value.name)):
                    out.append(("_ATOMIC", (self.ref_bar(e.value), self.index_src(e, self.ref),
                                            g)))
                else:
                    out.append(("%s[%s]" % (self.ref_bar(e.value), self.index_src(e, self.ref)),
                                g))
            elif isinstance(vt, types.BaseTuple):
                ops = self._diff_operands(name)
                if not ops and e.value.name in self.varied:
                    self.error("reading a float out of a tuple that is not built in the "
                               "function (%s)" % vt, e.loc)
                for op in ops:
                    out.append((self.bar(op), g))
            else:
                self.error("reading floats out of a %s; keep them in an array or a tuple"
                           % vt, e.loc)
        elif e.op == "exhaust_iter":
            pass
        elif e.op == "pair_first":
            rl = self.iter_alias[self._pair_iter(e).name]
            if rl.array is not None:
                h = rl.loop.header
                self._check_private(rl.array, None)
                # The last test of the loop reads no element: guard its (zero) adjoint.
                out.append(("_GUARD", ("_it%d < %s" % (h, rl.len),
                                       "%s[_it%d]" % (self.ref_bar(rl.array), h), g)))
        elif e.op == "getattr":
            self.error("the attribute `.%s` of %s" % (e.attr, self.ty(e.value)), e.loc)
        else:
            self.error("the expression %r producing a float" % e.op, e.loc)
        return out

    def thread_private(self, e):
        """Is the element ``e`` reads indexed by this thread's own grid position? Then no
        other thread accumulates into its adjoint and no atomic is needed."""
        idx = e.index_var if e.op == "static_getitem" else e.index
        if idx is None:
            return False
        return self._grid_derived(idx.name)

    def _dim_x(self, name):
        """'threadIdx', 'blockIdx' or 'blockDim' when ``name`` is that object's ``.x``."""
        ex = self.def_expr(name)
        while isinstance(ex, ir.Var):
            ex = self.def_expr(ex.name)
        if isinstance(ex, ir.Expr) and ex.op == "getattr" and ex.attr == "x":
            return self.opt.dims.get(id(self.resolve_global(ex.value)))
        return None

    def _grid_derived(self, name, depth=0):
        if depth > 20:
            return False
        ex = self.def_expr(name)
        if isinstance(ex, ir.Var):
            return self._grid_derived(ex.name, depth + 1)
        if not isinstance(ex, ir.Expr):
            return False
        if ex.op == "call":
            fn = self.resolve_global(ex.func)
            return getattr(fn, "__name__", "") == "grid" and fn is self.opt.grid
        if ex.op == "build_tuple":
            return all(self._grid_derived(v.name, depth + 1) for v in ex.items)
        if ex.op == "binop" and ex.fn is operator.add:
            # threadIdx.x + blockIdx.x * blockDim.x, in any order: cuda.grid(1) by hand.
            terms = [self._dim_x(ex.lhs.name), self._dim_x(ex.rhs.name)]
            for a, b in ((0, 1), (1, 0)):
                if terms[a] == "threadIdx":
                    prod = self.def_expr((ex.rhs if b else ex.lhs).name)
                    if isinstance(prod, ir.Expr) and prod.op == "binop" and \
                            prod.fn is operator.mul and {
                                self._dim_x(prod.lhs.name),
                                self._dim_x(prod.rhs.name)} == {"blockIdx", "blockDim"}:
                        return True
            return False
        if ex.op in ("static_getitem", "exhaust_iter"):
            return self._grid_derived(ex.value.name, depth + 1)
        return False

    # ------------------------------------------------------------------ fused loops
    def _choose_fused(self):
        """Top-level loops whose iterations interact only through sums are reversed
        iteration by iteration inside the forward replay (see the module docstring)."""
        if self.opt.target != "cpu":
            return
        for lp in self.s.loops:
            if lp.depth == 1:
                plan = self._fusion_plan(lp)
                if plan is not None:
                    self.fused.add(lp)
                    self.fused_seed[lp] = plan

    def _fusion_plan(self, lp):
        if len({d for _, d in lp.exits}) != 1:
            return None
        for b in lp.blocks:
            for stmt in self.fir.blocks[b].body:
                if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                    return None
        families = []
        in_family = set()
        for phi, inc in self.block_phis[lp.header]:
            if phi.name not in self.useful:
                continue
            fam = self._accumulator_family(lp, phi.name)
            if fam is None:
                return None
            members, outflow = fam
            latch_in = [inc[b].name for b in lp.latches
                        if isinstance(inc.get(b), ir.Var)]
            if not all(v in members for v in latch_in):
                return None
            seed = self._early_seed(lp, outflow)
            if seed is None:
                return None
            families.append((phi.name, members, outflow, seed))
            in_family |= members
        # Every other useful float made in the loop stays in the loop.
        for b in lp.blocks:
            for stmt in self.fir.blocks[b].body:
                if not isinstance(stmt, ir.Assign):
                    continue
                name = stmt.target.name
                if name in self.useful and name not in in_family:
                    for label, _ in self.uses.get(name, ()):
                        if label not in lp.blocks:
                            return None
        return families

    def _accumulator_family(self, lp, phi):
        """Variables carrying the sum ``phi`` around the loop (only + and - of values that
        do not depend on it, copies and phis), and the one that leaves the loop."""
        members, work, outside = set(), [phi], []
        while work:
            v = work.pop()
            if v in members:
                continue
            members.add(v)
            for label, stmt in self.uses.get(v, ()):
                if label not in lp.blocks:
                    outside.append((v, label, stmt))
                    continue
                if not isinstance(stmt, ir.Assign):
                    return None
                e, t = stmt.value, stmt.target.name
                if isinstance(e, ir.Var) or (isinstance(e, ir.Expr) and e.op == "cast"):
                    work.append(t)
                elif isinstance(e, ir.Expr) and e.op == "phi":
                    work.append(t)
                elif isinstance(e, ir.Expr) and e.op in ("binop", "inplace_binop"):
                    fn = e.fn if e.op == "binop" else R.INPLACE_TO_BINOP.get(e.fn)
                    other = e.rhs if e.lhs.name == v else e.lhs
                    if other.name == v or self._depends_on(other.name, members | {v}, lp):
                        return None
                    if fn is operator.add or (fn is operator.sub and e.lhs.name == v):
                        work.append(t)
                    else:
                        return None
                else:
                    return None
        for m in members:
            if m in self.phis and self.phis[m] in lp.blocks:
                for tgt, inc in self.block_phis[self.phis[m]]:
                    if tgt.name == m:
                        for b, val in inc.items():
                            if b in lp.blocks and isinstance(val, ir.Var) \
                                    and val.name not in members:
                                return None
        outs = {v for v, _, _ in outside}
        if len(outs) != 1:
            return None if outs else (members, None)
        return members, outs.pop()

    def _depends_on(self, name, targets, lp, seen=None):
        seen = set() if seen is None else seen
        if name in targets:
            return True
        if name in seen:
            return False
        seen.add(name)
        if name in self.phis:
            if self.phis[name] not in lp.blocks:
                return False
            for tgt, inc in self.block_phis[self.phis[name]]:
                if tgt.name == name:
                    return any(isinstance(v, ir.Var) and self._depends_on(v.name, targets,
                                                                           lp, seen)
                               for v in inc.values())
        d = self.defs.get(name)
        if d is None or d[0] not in lp.blocks:
            return False
        return any(self._depends_on(v.name, targets, lp, seen)
                   for v in d[1].value.list_vars()) if isinstance(d[1].value, ir.Expr) \
            else isinstance(d[1].value, ir.Var) and self._depends_on(
                d[1].value.name, targets, lp, seen)

    def _early_seed(self, lp, var):
        """Source of d(result)/d(var) computable before ``lp`` runs, or None."""
        if var is None:
            return "0.0"
        hdr_node = lp
        Rt = self.s.regions[None]
        exit_block = lp.exits[0][1]
        straight = [exit_block]
        while True:
            term = self.fir.blocks[straight[-1]].terminator
            if isinstance(term, ir.Jump) and len(self.s.preds[term.target]) == 1 \
                    and self.s.depth(term.target) == 0:
                straight.append(term.target)
            else:
                break
        straight = set(straight)

        def hoist(v, depth=0):
            if depth > 20:
                return None
            static = self.static_src(v.name)
            if static is not None:
                return static
            e = self.def_expr(v.name) if v.name not in self.phis else None
            if v.name in self.phis:
                label = self.phis[v.name]
            else:
                label = self.defs[v.name][0]
            if isinstance(e, ir.Arg):
                return self.n(v)
            if isinstance(e, ir.Const):
                return self.const_src(e.value)
            if isinstance(e, (ir.Global, ir.FreeVar)):
                return self.const_src(e.value) if _is_literal(e.value) else \
                    self.gname(e.value)
            if label not in lp.blocks and self.s.depth(label) == 0 and \
                    _dominates(Rt, Rt.node_of(label), hdr_node):
                return self.n(v)
            if label in straight and isinstance(e, (ir.Expr, ir.Var)):
                parts = {}
                for op in (e.list_vars() if isinstance(e, ir.Expr) else [e]):
                    h = hoist(op, depth + 1)
                    if h is None:
                        return None
                    parts[op.name] = h
                if isinstance(e, ir.Var):
                    return parts[e.name]
                if e.op in ("getitem", "static_getitem"):
                    vt = self.ty(e.value)
                    if not (isinstance(vt, types.BaseTuple) or (
                            isinstance(vt, types.Array)
                            and self.is_readonly_array(e.value.name))):
                        return None
                elif e.op not in ("binop", "unary", "call", "getattr", "cast"):
                    return None
                return "(%s)" % self.expr_src(e, lambda x: parts[x.name])
            return None

        def seed(v, depth=0):
            if depth > 50:
                return None
            terms = []
            for label, stmt in self.uses.get(v, ()):
                if label in lp.blocks:
                    continue
                if label not in straight:
                    return None
                if isinstance(stmt, ir.Return):
                    terms.append("_ret_b")
                    continue
                if not isinstance(stmt, ir.Assign):
                    return None
                e, t = stmt.value, stmt.target
                if isinstance(e, ir.Var) or (isinstance(e, ir.Expr) and e.op == "cast"):
                    s = seed(t.name, depth + 1)
                    if s is None:
                        return None
                    terms.append(s)
                    continue
                if isinstance(e, ir.Expr) and e.op == "unary" and e.fn is operator.neg:
                    s = seed(t.name, depth + 1)
                    if s is None:
                        return None
                    terms.append("(-(%s))" % s)
                    continue
                if not (isinstance(e, ir.Expr) and e.op in ("binop", "inplace_binop")):
                    return None
                fn = e.fn if e.op == "binop" else R.INPLACE_TO_BINOP.get(e.fn)
                if e.lhs.name == v and e.rhs.name == v:
                    return None
                other = e.rhs if e.lhs.name == v else e.lhs
                s = seed(t.name, depth + 1)
                if s is None:
                    return None
                if fn is operator.add:
                    terms.append(s)
                elif fn is operator.sub:
                    terms.append(s if e.lhs.name == v else "(-(%s))" % s)
                elif fn is operator.mul:
                    c = hoist(other)
                    if c is None:
                        return None
                    terms.append("(%s) * %s" % (s, c))
                elif fn is operator.truediv and e.lhs.name == v:
                    c = hoist(other)
                    if c is None:
                        return None
                    terms.append("(%s) / %s" % (s, c))
                else:
                    return None
            if not terms:
                return "0.0"
            return " + ".join(terms)
        return seed(var)

    def emit_fused_loop(self, L, R_, lp):
        h = lp.header
        for phi, members, outflow, seed in self.fused_seed[lp]:
            L("%s = %s" % (self._seed_name(phi), seed))
        if lp in self.parallel:
            self.emit_parallel_loop(L, lp)
            return
        L("while True:")
        with L.indent():
            m = L.mark()
            self.emit_seq(L, self.s.regions[lp], h, None)
            L.close_block(m)

    # ------------------------------------------------------------------ parallel loops
    def _choose_parallel(self):
        """Fused ``prange`` loops run in parallel in the backward too: each iteration, its
        forward replay and its reverse, is a call to a helper function (its stacks are in
        the helper's frame, so each thread has its own), and the sums and the adjoints of
        values from before the loop are reductions. Only where every array adjoint the
        iteration writes is indexed by the loop's own index (checked while emitting)."""
        if self.opt.target != "cpu" or not self.opt.parallel:
            return
        for lp in self.fused:
            rl = lp.range
            if rl is None or not rl.parallel or rl.array is not None \
                    or rl.block != lp.header or len(lp.exits) != 1 \
                    or lp.exits[0][0] != lp.header:
                continue
            sums = {phi for phi, _, _, _ in self.fused_seed[lp]}
            if any(tgt.name not in sums for tgt, _ in self.block_phis[lp.header]):
                continue        # something else is carried from one iteration to the next
            self.parallel[lp] = "%s_iteration%d" % (self.py_func.__name__, lp.header)

    def index_var(self, e):
        """The index variable of a getitem (the first one of a tuple index), or None."""
        idx = e.index_var if e.op == "static_getitem" else e.index
        if idx is None:
            return None
        d = self.def_expr(idx.name)
        if isinstance(d, ir.Expr) and d.op == "build_tuple" and d.items:
            return d.items[0]
        return idx

    def _is_iteration_index(self, var, lp):
        name = var.name if var is not None else None
        for _ in range(100):
            if name is None:
                return False
            if name == lp.range.first:
                return True
            d = self.def_expr(name)
            name = d.name if isinstance(d, ir.Var) else None
        return False

    def _check_private(self, arr, idx):
        """Inside a parallel loop's helper, an adjoint written at ``arr[idx]`` belongs to
        this iteration when ``idx``, or the index of a view ``arr`` comes from, is the
        loop's index. Otherwise several iterations add into it: the array's adjoint is
        shared, and each thread gets a copy of its own (summed after the loop)."""
        lp = self._helper_loop
        if lp is None:
            return
        if self._is_iteration_index(idx, lp):
            return
        name = arr.name
        for _ in range(100):
            d = self.def_expr(name)
            if isinstance(d, ir.Var):
                name = d.name
            elif isinstance(d, ir.Expr) and d.op in ("getitem", "static_getitem") \
                    and isinstance(self.ty(d.value), types.Array):
                if self._is_iteration_index(self.index_var(d), lp):
                    return
                name = d.value.name
            else:
                break
        self._shared_roots.setdefault(lp, set()).add(self.array_root(arr.name))

    def emit_parallel_loop(self, L, lp):
        h = lp.header
        rl = lp.range
        helper = self.parallel[lp]
        # The helper: one iteration, from the loop's index ``_p``.
        H = Lines()
        H.level = 1
        saved = self._helper_loop
        self._helper_loop = lp
        H("%s = _p" % rl.ctr)
        H("while True:")
        with H.indent():
            m = H.mark()
            self.emit_seq(H, self.s.regions[lp], h, None)
            H.close_block(m)
        self._helper_loop = saved
        shared = sorted(self.bar(r) for r in self._shared_roots.get(lp, ()))
        params, sums, adjoints, stacks, locals_ = self._helper_names(lp, H.lines)
        out = Lines()
        out("def %s(%s):" % (helper, ", ".join(["_p"] + params)))
        out.level = 1
        for st in sorted(stacks):
            dt, cap, storage = self.stacks[st]
            out("%s = adstack(%s, %d%s)" % (st, dt, cap,
                                             ', "heap"' if storage == "heap" else ""))
        for name, init in locals_:
            out("%s = %s" % (name, init))
        for name in sums:
            out("%s = 0.0" % name)
        for name in adjoints:
            out("%s = %s" % (name, ZERO))
        out.lines.extend(H.lines)
        results = sums + adjoints
        out("return (%s)" % "".join(r + ", " for r in results))
        self.helpers[helper] = "\n".join(out.lines) + "\n"
        self.helper_stacks |= stacks
        # The loop: reductions of what each iteration adds, and per-thread copies of the
        # adjoints several iterations add into. Copies past SHARED_COPY_LIMIT elements make
        # the backward raise, and the caller then runs the serial one.
        if shared:
            L("if (%s) * numba.get_num_threads() > %d:" % (
                " + ".join("%s.size" % b for b in shared), SHARED_COPY_LIMIT))
            L("    raise MemoryError(\"per-thread adjoint copies past the limit\")")
        for b in shared:
            L("_t_%s = np.zeros((numba.get_num_threads(),) + %s.shape, %s.dtype)" % (b, b, b))
        args = ["_p"] + ["_t_%s[numba.get_thread_id()]" % p if p in shared else p
                         for p in params]
        L("for _p in numba.prange(%s):" % rl.len)
        with L.indent():
            L("_c = %s(%s)" % (helper, ", ".join(args)))
            for k, r in enumerate(results):
                L("%s += _c[%d]" % (r, k))
        for b in shared:
            L("%s += _t_%s.sum(axis=0)" % (b, b))
        # Leaving the loop: the test that ends it and what the reverse does there.
        L("%s = %s" % (rl.ctr, rl.len))
        L("while True:")
        with L.indent():
            self.emit_block(L, h)
            self.follow(L, self.s.regions[lp], lp.exits[0])

    def _helper_names(self, lp, lines):
        """Split the names of a helper body: parameters (read, never written), sums and
        outer adjoints (returned and reduced), stacks, and the helper's own locals."""
        import ast
        tree = ast.parse("def _f():\n" + "\n".join(lines) + "\n")
        stored, augmented, loaded = set(), set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                (stored if isinstance(node.ctx, ast.Store) else loaded).add(node.id)
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                augmented.add(node.target.id)
        by_source = {v: k for k, v in self._names.items()}
        inside = set(self._loop_names(lp))
        sums = sorted(self.n(phi) for phi, _, _, _ in self.fused_seed[lp]
                      if self.n(phi) in stored | loaded)
        adjoints, locals_ = [], []
        decl = self._declarations()
        for name in sorted(stored | augmented):
            if name in sums:
                continue
            ir_name = by_source.get(name)
            base = ir_name[:-4] if ir_name and ir_name.endswith(".bar") else None
            if base is not None and base not in inside and is_float(self.ty(base)):
                adjoints.append(name)           # outer adjoint: += only
                continue
            if ir_name is not None and base is None and ir_name not in inside \
                    and ir_name not in self._extra_types:
                # A value from before the loop reassigned in it: not independent iterations.
                if self.collecting:
                    self._private_failed.add(lp)
                else:
                    self.error("internal: a parallel loop assigns %r, defined before it"
                               % name)
            if name in decl:
                locals_.append((name, decl[name]))
        stacks = {n for n in loaded if n in self.stacks}
        known = set(self.globals) | set(_INTRINSIC_NAMES) | set(dir(builtins)) | {"numba"}
        params = sorted(n for n in loaded - stored - augmented
                        if n not in known and n not in stacks and n != "_p")
        return params, sums, adjoints, stacks, locals_

    def _loop_names(self, lp):
        """IR names defined inside loop ``lp`` (statements and phis of its blocks)."""
        for name, (label, _) in self.defs.items():
            if label in lp.blocks:
                yield name
        for name, label in self.phis.items():
            if label in lp.blocks:
                yield name

    def _declarations(self):
        """Generated name -> initial value, for the locals the backward declares."""
        out = {}
        for name in self.pushed:
            out[self.n(name)] = _zero_src(self.ty(name))
        for name in self.useful:
            if is_float(self.ty(name)):
                out[self.bar(name)] = ZERO
        for name in self.record_names:
            out[name] = "0"
        return out

    def _seed_name(self, phi):
        return "_seed_" + self.n(phi)

    def emit_fused_iteration_reverse(self, L, lp, e):
        """Reverse, right away, the iteration of fused loop ``lp`` that ends on edge ``e``."""
        src, dst = e
        kind = self.s.regions[lp].edge_kind(e)
        if lp.range is not None and lp.range.array is not None:
            L("_it%d = %s - 1" % (lp.header, lp.range.ctr))
        for phi, members, outflow, seed in self.fused_seed[lp]:
            if kind == "back":
                for tgt, incs in self.block_phis[lp.header]:
                    if tgt.name == phi and isinstance(incs.get(src), ir.Var):
                        L("%s += %s" % (self.bar(incs[src]), self._seed_name(phi)))
            elif outflow is not None:
                flowing = None
                for tgt, incs in self.block_phis.get(dst, ()):
                    if tgt.name == outflow or (isinstance(incs.get(src), ir.Var)
                                               and incs[src].name in members
                                               and tgt.name not in members):
                        v = incs.get(src)
                        if isinstance(v, ir.Var) and v.name in members:
                            flowing = v.name
                if flowing is None and outflow in members:
                    flowing = outflow
                if flowing is not None and flowing in self.useful:
                    L("%s += %s" % (self.bar(flowing), self._seed_name(phi)))
        Rl = self.s.regions[lp]
        self.rev_seq(L, Rl, Rl.node_of(src), None)
        for tgt, _ in self.block_phis[lp.header]:
            if tgt.name in self.useful:
                L("%s = %s" % (self.bar(tgt), ZERO))

    # ------------------------------------------------------------------ assembly
    def _assemble(self, fwd, rev):
        args = self.arg_vars
        params = [self.n(a) for a in args]
        if self.opt.target == "cpu":
            params.append("_ret_b")
        if self.opt.target == "cpu":
            params += [self.bar(a) for a in args if is_float_array(self.ty(a))]
        else:
            params += [self.bar(a) for a in args if isinstance(self.ty(a), types.Array)]
            params.append("_flag")
        fname = "%s_backward" % self.py_func.__name__
        out = Lines()
        for helper in sorted(self.helpers):
            out.lines.extend(self.helpers[helper].splitlines())
            out("")
            out("")
        if self.helpers:
            self.globals["numba"] = numba
        out("def %s(%s):" % (fname, ", ".join(params)))
        out.level = 1
        for st, (dt, cap, storage) in sorted(self.stacks.items()):
            if st in self.helper_stacks:
                continue
            if storage == "heap":
                out("%s = adstack(%s, %d, \"heap\")" % (st, dt, cap))
            else:
                out("%s = adstack(%s, %d)" % (st, dt, cap))
        for name, init in sorted(self._declarations().items()):
            out("%s = %s" % (name, init))
        if self.opt.target == "cpu":
            out("_retval = 0.0")
        body = out.lines + fwd.lines + rev.lines
        if self.opt.target == "cpu":
            # ``+ 0.0`` turns an untouched ZERO back into the 0.0 a user expects to see.
            grads = [self.bar(a) + " + 0.0" if (a in self.useful and is_float(self.ty(a)))
                     else "0.0" for a in args if is_float(self.ty(a))]
            body.append("    return _retval, (%s)" % "".join(g + ", " for g in grads))
        else:
            for st in sorted(self.stacks):
                body.append("    if overflowed(%s):" % st)
                body.append("        _flag[0] = 1")
            body.append("    return")
        return fname, "\n".join(body) + "\n"


#: Elements of per-thread adjoint copies (all threads together) a parallel loop may make;
#: past it the backward runs serially.
SHARED_COPY_LIMIT = 1 << 22

#: Names the generated code calls that are not in its module namespace as globals.
_INTRINSIC_NAMES = ("adstack", "push", "pop", "top", "size", "overflowed", "clear")


def _carries_floats(t):
    """Types other than floats and float arrays that can hold a differentiable value."""
    return isinstance(t, (types.Complex, types.BaseTuple, types.List, types.BoundFunction,
                          types.NumpyFlatType, types.Record))


def _is_range(fn):
    # A prange loop is replayed and reversed as a range loop: the backward runs serially.
    return fn is range or fn is numba.prange


def _zero_src(t):
    if isinstance(t, types.Float):
        return "np.float32(0.0)" if t.bitwidth == 32 else "0.0"
    if isinstance(t, types.Boolean):
        return "False"
    if isinstance(t, types.Integer) and t.bitwidth == 32 and t.signed:
        return "np.int32(0)"
    return "0"


def _is_literal(value):
    return isinstance(value, (bool, int, float, str, type(None)))


def _node_key(n):
    return "L%d" % n.header if isinstance(n, LoopNode) else str(n)


def _dominates(R, a, b):
    """Does node ``a`` dominate node ``b`` in region ``R``?"""
    x = b
    while True:
        if x == a:
            return True
        if x == R.entry:
            return False
        x = R.idom[x]


def _common_dom(R, a, b):
    da, x = [], a
    while True:
        da.append(x)
        if x == R.entry:
            break
        x = R.idom[x]
    x = b
    while x not in da:
        x = R.idom[x]
    return x
