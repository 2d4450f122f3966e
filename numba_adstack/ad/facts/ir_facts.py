"""IR facts: what the typed SSA IR of one function says, gathered once and then only read.

Reads a :class:`~numba_adstack.ad.capture.pipeline.TypedIR`; produces an :class:`IRFacts`: the
definition and the uses of every variable, the phis of every block, the loops and regions
(:mod:`.structure`), the ``for`` loops over ranges and arrays, which arrays are views of
which, and which arrays the function writes. Later phases ask it questions; none of them
changes it.
"""

import numba
import numpy as np
from numba.core import ir, types

from ...errors import raise_non_differentiable
from .array_facts import ArrayFacts
from .names import in_user_names
from .rule_binding import bind_expr
from .structure import Structure
from ..typeinfo import is_complex, is_float, is_float_array, is_float_container, \
    is_float_list, is_literal


def _scalar_class(ty):
    """The NumPy scalar class a value of Numba type ``NumberClass`` stands for (``T`` in
    ``T = type(z)``; ``T(0.5)`` casts), or None."""
    if not isinstance(ty, types.NumberClass) or \
            not isinstance(ty.instance_type, (types.Float, types.Integer)):
        return None
    return np.dtype(str(ty.instance_type)).type


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


def is_range(fn):
    # A prange loop is replayed and reversed as a range loop unless the plan runs it in
    # parallel.
    return fn is range or fn is numba.prange


class IRFacts(ArrayFacts):
    """Read-only facts about one typed function (see the module docstring)."""

    def __init__(self, typed, py_func, target):
        self.typed = typed
        self.fir = typed.func_ir
        self.typemap = typed.typemap
        self.return_type = typed.return_type
        self.py_func = py_func
        self.qualname = getattr(py_func, "__qualname__", py_func.__name__)
        self.target = target
        self.s = Structure(self.fir)
        self.defs = {}            # var name -> (block label, stmt)
        self.phis = {}            # var name -> block label of its phi
        self.block_phis = {}      # label -> [(target var, {pred label: incoming var})]
        self.uses = {}            # var name -> [(block label, stmt)]
        self._collect()
        self.iter_alias = {}      # iterator var name -> RangeLoop
        self.ranges = {}          # loop header -> RangeLoop
        self._find_ranges()
        self.arg_vars = self._arg_vars()
        self.return_blocks = [b for b, blk in sorted(self.fir.blocks.items())
                              if isinstance(blk.terminator, ir.Return)]
        self.written_roots = self._written_roots()
        self.inplace_stores, self.inplace_loads = self._inplace_updates()

    def error(self, what, loc=None):
        # (quoted IR names become the user's: facts/names.py)
        raise_non_differentiable(self.qualname, in_user_names(self, what), loc)

    # ------------------------------------------------------------------ definitions, uses
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

    def _arg_vars(self):
        found = {}
        for stmt in self.fir.blocks[self.s.entry].body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Arg):
                found[stmt.value.index] = stmt.target.name
        return [found[i] for i in sorted(found)]

    def def_expr(self, name):
        d = self.defs.get(name)
        return None if d is None else d[1].value

    def def_loc(self, name):
        d = self.defs.get(name)
        return None if d is None else d[1].loc

    def def_label(self, name):
        """The block defining ``name`` (the block of its phi for a phi), or None."""
        if name in self.phis:
            return self.phis[name]
        d = self.defs.get(name)
        return None if d is None else d[0]

    def phi_incoming(self, name):
        """``{pred label: incoming var}`` of the phi defining ``name``."""
        for tgt, inc in self.block_phis[self.phis[name]]:
            if tgt.name == name:
                return inc
        return {}

    def edge_copies(self, e):
        """``[(phi target, incoming value)]``: what the phis of ``e``'s destination take
        on edge ``e``."""
        src, dst = e
        out = []
        for tgt, inc in self.block_phis.get(dst, ()):
            if src not in inc:
                self.error("a phi without a value for the edge %s -> %s" % e, tgt.loc)
            out.append((tgt, inc[src]))
        return out

    def ty(self, var):
        return self.typemap[var if isinstance(var, str) else var.name]

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
        # ``type(z)`` of a number: its class, fixed by typing (``type(a)(b)`` casts).
        return _scalar_class(self.typemap.get(var.name))

    def static_form(self, name):
        """How a value known before the function runs is written, or None: ``("const",
        value)``, ``("global", object)`` or ``("attr", base form, attribute)``. Such values
        are written in place wherever they are used, never assigned."""
        if name in self.phis:
            return None
        scalar_class = _scalar_class(self.typemap.get(name))
        if scalar_class is not None:    # type(z) of a number: its class, fixed by typing
            return ("global", scalar_class)
        e = self.def_expr(name)
        if isinstance(e, ir.Const):
            return ("const", e.value)
        if isinstance(e, (ir.Global, ir.FreeVar)):
            return ("global", e.value)
        if isinstance(e, ir.Var):
            return self.static_form(e.name)
        if isinstance(e, ir.Expr) and e.op == "getattr":
            base = self.static_form(e.value.name)
            if base is not None and not is_literal(self.resolve_global(e.value)):
                return ("attr", base, e.attr)
        return None

    def expr_inputs(self, e):
        """Variables an expression reads, including the object of a bound method
        (``x`` in ``x.reshape(...)``)."""
        out = []
        for v in e.list_vars():
            out.append(v.name)
            d = self.def_expr(v.name)
            if isinstance(d, ir.Expr) and d.op == "getattr":
                out.append(d.value.name)
        return out

    # ------------------------------------------------------------------ for loops
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
        v, seen = itervar, []
        while True:
            seen.append(v.name)
            e = self.def_expr(v.name)
            if isinstance(e, ir.Var):
                v = e
                continue
            break
        if not (isinstance(e, ir.Expr) and e.op == "getiter"):
            self.error("a loop over something other than range(...)",
                       lp and self.fir.blocks[lp.header].loc)
        prefix = "_r%d" % (len(self.ranges) + 1)
        at = self.ty(e.value)
        if isinstance(at, types.Array) and at.ndim == 1 or \
                isinstance(at, (types.List, types.ListType)) and \
                isinstance(at.dtype, (types.Number, types.Boolean)):
            # (A list's items are read as x[k]; where they vary, emission refuses them.)
            rl = RangeLoop(lp, prefix, array=e.value)
        else:
            rng = self.def_expr(e.value.name)
            fn = None
            if isinstance(rng, ir.Expr) and rng.op == "call":
                fn = self.resolve_global(rng.func)
            if isinstance(at, types.Array):
                # Rows of an array whose dimensions were not known before typing
                # (ad/capture/loopforms.py rewrites the loops over rows it can see).
                self.error("`for` over the rows of %s made in a way whose number of "
                           "dimensions is not known before typing; write `for i in "
                           "range(len(x))` and read x[i]" % at, e.loc)
            if not is_range(fn):
                self.error("`for` over %s; the loops supported are over range(...) (or "
                           "prange), arrays, zip, enumerate, np.ndindex and x.flat (index "
                           "others with range(len(x)))" % self.ty(e.value), e.loc)
            consts = []
            for a in rng.args:
                c = self.resolve_global(a)
                consts.append(c if isinstance(c, (int, np.integer))
                              and not isinstance(c, bool) else None)
            const_args = None if any(c is None for c in consts) else \
                tuple(int(c) for c in consts)
            rl = RangeLoop(lp, prefix, rng.args, const_args)
            rl.parallel = fn is numba.prange
        for nm in seen:
            self.iter_alias[nm] = rl
        return rl

    def pair_iter(self, e):
        """The iterator a ``pair_first`` / ``pair_second`` expression reads."""
        return self.def_expr(e.value.name).value

    def counted(self, lp):
        """A range loop left only when its range is exhausted: its iteration count is the
        length of the range, which the reverse sweep recomputes instead of storing."""
        rl = lp.range
        return rl is not None and len(lp.exits) == 1 and lp.exits[0][0] == rl.block

    # ------------------------------------------------------------------ operands
    def adjoint_operands(self, name):
        """Variables an adjoint may flow into from ``name`` (whether or not they vary)."""
        if name in self.phis:
            return [v.name for v in self.phi_incoming(name).values()
                    if isinstance(v, ir.Var) and _differentiable(self.ty(v))]
        e = self.def_expr(name)
        if isinstance(e, ir.Var):
            t = self.ty(e)
            return [e.name] if _differentiable(t) or isinstance(t, types.Array) \
                else []
        if not isinstance(e, ir.Expr):
            return []
        if e.op in ("binop", "inplace_binop"):
            return [v.name for v in (e.lhs, e.rhs) if _differentiable(self.ty(v))]
        if e.op == "unary":
            return [e.value.name] if _differentiable(self.ty(e.value)) else []
        if e.op == "getattr" and e.attr == "T":
            return [e.value.name] if is_float_array(self.ty(e.value)) else []
        if e.op == "getattr" and is_complex(self.ty(e.value)) and e.attr in ("real", "imag"):
            return [e.value.name]
        if e.op == "getattr" and is_float_array(self.ty(e.value)) \
                and bind_expr(self, e) is not None:
            # x.real, x.imag: the adjoint flows into x (a computed x must be useful, or
            # its own operands would get none).
            return [e.value.name]
        if e.op == "cast":
            return [e.value.name]
        if e.op == "getattr" and e.attr == "real" and is_float(self.ty(e.value)):
            return [e.value.name]
        if e.op == "call" and self.float_itself(e) is not None:
            return [self.float_itself(e).name]
        if e.op == "call":
            # Float arrays passed to a call make its float result depend on them: with no
            # rule for the call, the rewrite must refuse it rather than drop the gradient.
            # The arrays of a tuple built in the function count (np.concatenate((x, y))),
            # and so does a method's receiver.
            bound = bind_expr(self, e)
            out = []
            f = self.def_expr(e.func.name)
            if isinstance(f, ir.Expr) and f.op == "getattr" and is_complex(self.ty(f.value)):
                out.append(f.value.name)        # z.conjugate()
            for a in (bound.operands if bound is not None
                      else list(e.args) + [v for _, v in e.kws]):
                items = self.tuple_arrays(a) or []
                out.extend(v.name for v in items if v is not None)
                if isinstance(a, ir.Var) and _differentiable(self.ty(a)):
                    out.append(a.name)
            return out
        if e.op == "pair_first":
            rl = self.iter_alias.get(self.pair_iter(e).name)
            if rl is not None and rl.array is not None and (
                    is_float_array(self.ty(rl.array)) or
                    isinstance(self.ty(rl.array), (types.List, types.ListType))):
                return [rl.array.name]      # (emission refuses a list whose items vary)
            return []
        if e.op in ("getitem", "static_getitem") and is_float_container(self.ty(e.value)):
            return [e.value.name]           # L[i], d[k] of floats (the container's adjoint)
        if e.op == "getitem" and bind_expr(self, e) is not None:     # x[idx]: a gather
            return [e.value.name] if is_float_array(self.ty(e.value)) else []
        if e.op in ("static_getitem", "getitem") and isinstance(self.ty(e.value),
                                                               types.BaseTuple):
            item = self.tuple_item(e)
            if item is not None and _differentiable(self.ty(item)) \
                    and not isinstance(self.ty(item), types.Array):
                return [item.name]
        return []


def _differentiable(t):
    return is_float(t) or is_float_array(t) or is_complex(t)
