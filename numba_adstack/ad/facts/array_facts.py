"""IR facts about arrays: which array a variable views, which arrays are written, the rules
of array expressions. Part of :class:`~.ir_facts.IRFacts` (a mixin: one object of facts).

Array variables fall into *buffer classes*: a variable and the views, aliases, in-place
results and phis that may share its memory. A class is *written* when any member is
stored into, updated in place or passed to a call that writes it; its members' contents
may then change after they are defined.
"""
import operator

import numpy as np
from numba.core import ir, types

from .. import rules as R
from ..rules import array_effects as effects
from .rule_binding import bind_expr
from ..rules.vjp_sequence import take_index_parts
from ..capture.tuples import namedtuple_class
from ..typeinfo import is_float, is_float_array


class ArrayFacts:
    def array_root(self, name):
        """The argument, constructor or computed array an array variable is a view of."""
        alias = self.phi_alias(name)
        if alias is not None:
            return self.array_root(alias)
        e = self.def_expr(name)
        if isinstance(e, ir.Var):
            return self.array_root(e.name)
        if isinstance(e, ir.Expr) and e.op == "inplace_binop" \
                and isinstance(self.ty(e.lhs), types.Array):
            # ``x += e`` writes into x's memory: the same buffer, when x is one the
            # function was given or made, or a view of any array (``q[1:] += e`` changes
            # q); else a new value (the old one is gone).
            root = self.array_root(e.lhs.name)
            if self.is_buffer_source(root) or self.is_view(e.lhs.name):
                return root
            return name
        if isinstance(e, ir.Expr) and e.op == "getattr" and e.attr == "T" \
                and isinstance(self.ty(e.value), types.Array):
            return self.array_root(e.value.name)
        if isinstance(e, ir.Expr) and e.op in ("getitem", "static_getitem", "cast"):
            if isinstance(self.ty(e.value), types.Array):
                if e.op != "cast" and self._advanced_index(e):
                    return name     # x[idx] with an array idx: a copy
                return self.array_root(e.value.name)
            item = self.tuple_item(e)
            if item is not None:
                return self.array_root(item.name)
        return name

    def phi_alias(self, name):
        """The variable an array phi always names the memory of, or None: the phi of a
        loop or a join whose every value is one array given or made (or a view of one) or
        the phi itself updated in place (``inner = u[1:]``, then ``inner *= 0.9`` in a
        loop)."""
        cache = self.__dict__.setdefault("_phi_aliases", {})
        if name not in cache:
            cache[name] = "..."         # being looked for: a cycle of phis is no alias
            cache[name] = self._find_phi_alias(name)
        return None if cache[name] == "..." else cache[name]

    def _find_phi_alias(self, name):
        if name not in self.phis or not isinstance(self.typemap.get(name), types.Array):
            return None
        found = set()
        for v in self.phi_incoming(name).values():
            if not isinstance(v, ir.Var):
                return None
            v = self._updated_from(v.name)
            if v != name:
                found.add(v)
        if len(found) != 1:
            return None
        (alias,) = found
        if not self.is_buffer_source(self.array_root(alias)):
            return None     # a value the function computed: updated in place, a new value
        if alias in self.phis and (self.phi_alias(alias) is None and
                                   self.__dict__["_phi_aliases"].get(alias) == "..."):
            return None
        return alias

    def _updated_from(self, name):
        """``name`` through aliases and in-place updates back to the array they update."""
        for _ in range(1000):
            e = self.def_expr(name)
            if isinstance(e, ir.Var):
                name = e.name
            elif isinstance(e, ir.Expr) and e.op == "inplace_binop" \
                    and isinstance(self.ty(e.lhs), types.Array):
                name = e.lhs.name
            else:
                return name
        return name

    def is_view(self, name):
        """Is ``name`` (through aliases) a slice, row or transpose of another array?"""
        alias = self.phi_alias(name)
        if alias is not None:
            return self.is_view(alias)
        e = self.def_expr(name)
        # Through aliases and in-place results: ``u *= c`` on a view leaves a view, and
        # ``u += e`` after it still writes into the array viewed.
        while isinstance(e, ir.Var) or (
                isinstance(e, ir.Expr) and e.op == "inplace_binop"
                and isinstance(self.ty(e.lhs), types.Array)):
            e = self.def_expr(e.name if isinstance(e, ir.Var) else e.lhs.name)
        if not isinstance(e, ir.Expr):
            return False
        if e.op == "getattr" and e.attr == "T":
            return isinstance(self.ty(e.value), types.Array)
        return e.op in ("getitem", "static_getitem") \
            and isinstance(self.ty(e.value), types.Array) and not self._advanced_index(e)

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
            elif isinstance(e, ir.Expr) and e.op == "call" and not e.kws and \
                    e.vararg is None and namedtuple_class(self.resolve_global(e.func)) \
                    and len(e.args) == len(self.resolve_global(e.func)._fields):
                # A named tuple built by its class: its fields by position.
                return ir.Expr.build_tuple(list(e.args), e.loc)
            elif isinstance(e, ir.Expr) and self.tuple_item(e) is not None:
                # An item of a built tuple: a nested tuple argument.
                name = self.tuple_item(e).name
            else:
                return None
        return None

    def index_var(self, e):
        """The index variable of a getitem (the first one of a tuple index), or None."""
        idx = e.index_var if e.op == "static_getitem" else e.index
        if idx is None:
            return None
        d = self.def_expr(idx.name)
        if isinstance(d, ir.Expr) and d.op == "build_tuple" and d.items:
            return d.items[0]
        return idx

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

    def fill_value(self, e):
        """The value ``np.full(shape, v)`` / ``np.full_like(a, v)`` fills with, or None."""
        if not (isinstance(e, ir.Expr) and e.op == "call"):
            return None
        k = R.FILL_ARGUMENT.get(self.resolve_global(e.func))
        if k is None:
            return None
        v = e.args[k] if len(e.args) > k else dict(e.kws).get("fill_value")
        return v if isinstance(v, ir.Var) and is_float(self.ty(v)) else None

    def is_constructor_call(self, name):
        """Is ``name`` a fresh float array from an array constructor (``np.zeros``...)?"""
        e = self.def_expr(name)
        return (isinstance(e, ir.Expr) and e.op == "call"
                and self.resolve_global(e.func) in R.ARRAY_CONSTRUCTORS)

    def local_array(self, name):
        """Is ``name`` a per-thread scratch array of the target (its adjoint is too)?"""
        e = self.def_expr(name)
        return (isinstance(e, ir.Expr) and e.op == "call" and is_float_array(self.ty(name))
                and self.target.is_thread_local_constructor(self.resolve_global(e.func)))

    def computed_array(self, name):
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

    def reduction(self, e):
        """The :class:`~.rule_binding.BoundRule` of a call that reduces float arrays to a
        float (``np.sum(x)``, ``x.max()``, ``np.linalg.det(a)``, ``np.dot(x, y)``...),
        else None."""
        if e.op == "binop" and e.fn is operator.matmul:
            pass            # u @ v of two vectors: np.dot
        elif e.op != "call" or self.array_copy_source(e) is not None:
            return None
        sig = self.typed.calltypes.get(e)
        if sig is None or not is_float(sig.return_type):
            return None
        bound = bind_expr(self, e)
        if bound is None or bound.elementwise or not any(
                is_float_array(self.ty(a)) for a in bound.operands):
            return None
        return bound

    def array_rule(self, e):
        """``(templates, operands, shaped)`` of the rule of an array-valued expression
        (rules/array_rules.py), or None; ``shaped``: each contribution has its operand's
        shape already (else it is summed back to it, undoing broadcasting)."""
        if not isinstance(e, ir.Expr) or self.array_copy_source(e) is not None:
            return None
        bound = bind_expr(self, e)
        if bound is None:
            return None
        return bound.templates(), bound.operands, not bound.elementwise

    def tuple_arrays(self, var):
        """The float arrays of a tuple built in the function (``np.concatenate((x, y))``),
        or None when ``var`` is not one."""
        if not isinstance(self.ty(var), types.BaseTuple):
            return None
        src = self.tuple_build(var.name)
        if src is None:
            return None
        return [v if is_float_array(self.ty(v)) else None for v in src.items]

    def arrays_read(self, name):
        """Names of the arrays whose elements the definition of ``name`` reads."""
        e = self.def_expr(name)
        if not isinstance(e, ir.Expr):
            return []
        if e.op in ("getitem", "static_getitem") and isinstance(self.ty(e.value), types.Array):
            return [e.value.name]
        if e.op in ("call", "binop") and self.reduction(e):
            return [a.name for a in self.reduction(e).operands if is_float_array(self.ty(a))]
        if e.op == "pair_first":
            rl = self.iter_alias.get(self.pair_iter(e).name)
            if rl is not None and rl.array is not None:
                return [rl.array.name]
        return []

    def mutated_arrays(self, e):
        """Float arrays a call may write into, by the effect table
        (:mod:`..rules.array_effects`); [] for anything else."""
        return [a for a in self.call_writes(e)[0] if is_float_array(self.ty(a))]

    def call_writes(self, e):
        """``(arrays, what)``: the variables a call may write into (a ``out`` left, the
        receiver of a writing method, the arguments of a writing function, or every array
        given to a call the effect table does not know) and how to name the call; ``([],
        None)`` for anything else."""
        if not (isinstance(e, ir.Expr) and e.op == "call"):
            return [], None
        fn = self.resolve_global(e.func)
        d = self.def_expr(e.func.name)
        if fn is None and isinstance(d, ir.Expr) and d.op == "getattr":
            if isinstance(self.ty(d.value), types.Array) and (
                    d.attr in R.MUTATING_METHODS
                    or self._out_given(e, effects.method_out_position(d.attr))):
                return [d.value], "the method .%s()" % d.attr
            return [], None
        if fn is None:
            return [], None
        what = "%s()" % getattr(fn, "__name__", fn)
        if isinstance(self.typemap.get(e.func.name), types.ObjModeDispatcher):
            what = "a `with numba.objmode()` block"
        if effects.writes_into_first(fn):
            return list(e.args[:1]), what
        out = self._out_given(e, effects.out_position(fn))
        if out is not None:
            return [out], what
        if effects.writes_nothing(fn) or effects.member(fn, R.ARRAY_CONSTRUCTORS) or \
                self._known_primitive(e, fn):
            return [], None
        args = list(e.args) + [v for _, v in e.kws]
        return [a for a in args if isinstance(self.ty(a), types.Array)], what

    def float_itself(self, e):
        """The float ``x`` when call ``e`` is ``x.item()`` or ``x.conjugate()`` of a float
        (its value, unchanged), else None."""
        if not (isinstance(e, ir.Expr) and e.op == "call") or e.args or e.kws:
            return None
        d = self.def_expr(e.func.name)
        if isinstance(d, ir.Expr) and d.op == "getattr" and d.attr in (
                "item", "conjugate", "conj") and is_float(self.ty(d.value)):
            return d.value
        return None

    def draws_random(self, e):
        """Is ``e`` a call that draws from a random generator (module functions, or a
        method of a ``np.random.Generator``)?"""
        if not (isinstance(e, ir.Expr) and e.op == "call"):
            return False
        if effects.draws_random(self.resolve_global(e.func)):
            return True
        d = self.def_expr(e.func.name)
        return isinstance(d, ir.Expr) and d.op == "getattr" and isinstance(
            self.ty(d.value), (types.NumPyRandomGeneratorType,
                               types.NumPyRandomBitGeneratorType))

    def _out_given(self, e, position):
        """The ``out`` argument a call is given (at ``position``, or by keyword), else
        None."""
        out = dict(e.kws).get("out")
        if out is None and position is not None and len(e.args) > position:
            out = e.args[position]
        if out is None or not isinstance(self.ty(out), (types.Array, types.BaseTuple)):
            return None
        return out

    def _known_primitive(self, e, fn):
        """A call the rewrite differentiates or gives a rule (a primitive of the rules, a
        Numba function with a rule of its own, the package's own primitives): it writes
        nothing it is given."""
        if bind_expr(self, e) is not None:
            return True
        mod = getattr(fn, "__module__", None) or getattr(type(fn), "__module__", "")
        if mod.startswith("numba_adstack") or mod.startswith("numba.cuda"):
            return not _is_atomic(fn)
        t = self.typemap.get(e.func.name)
        return isinstance(t, types.Dispatcher) and not isinstance(t, types.ObjModeDispatcher)

    def array_update(self, stmt):
        """``(array, value)`` when ``stmt`` writes ``value`` into an element of ``array``
        (a store, or the target's atomic update), else None."""
        if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            return stmt.target, stmt.value
        upd = self.target.atomic_update(self, stmt)
        return None if upd is None else (upd[0], upd[2])

    def store_is_region(self, stmt):
        """Does this store write a region (a slice, ``...``, a row) rather than one
        element?"""
        ndim = self.ty(stmt.target).ndim
        if isinstance(stmt, ir.StaticSetItem):
            t = self.ty(stmt.index_var) if stmt.index_var is not None else None
            if t is None:
                ix = stmt.index
                parts = ix if isinstance(ix, tuple) else (ix,)
                # (a[..., i, j] of a 2-d a is one element: the ``...`` stands for none)
                return any(isinstance(p, slice) or p is None for p in parts) \
                    or sum(isinstance(p, int) for p in parts) < ndim
        else:
            t = self.ty(stmt.index)
        parts = t.types if isinstance(t, types.BaseTuple) else (t,)
        return any(isinstance(p, (types.SliceType, types.Array, types.NoneType))
                   for p in parts) or \
            sum(isinstance(p, (types.Integer, types.IntegerLiteral)) for p in parts) < ndim

    def store_by_index_array(self, stmt):
        """Is ``stmt`` a store ``a[idx] = v`` with ``idx`` a 1-d array of integers, or a
        tuple of such arrays with integers and slices (``a[idx, 1] = v``): a store that
        may write a cell twice?"""
        if isinstance(stmt, ir.StaticSetItem):
            return False
        t = self.ty(stmt.index)
        if isinstance(t, types.BaseTuple):
            parts = take_index_parts(t)
            return parts is not None and isinstance(t.types[parts[0][0]].dtype,
                                                    types.Integer)
        return isinstance(t, types.Array) and t.ndim == 1 \
            and isinstance(t.dtype, types.Integer)

    def is_buffer_source(self, name):
        """Is ``name`` memory the function was given or made (an argument, a fresh array,
        a copy, a per-thread scratch array)? Other arrays are values it computed."""
        return (name in self.arg_vars or self.is_constructor_call(name)
                or self.array_copy_source(self.def_expr(name)) is not None
                or self.local_array(name))

    def written_members(self, skip=()):
        """Array variables stored into, updated in place or written by a call (in the
        blocks not in ``skip``)."""
        out = []
        for label, blk in self.fir.blocks.items():
            if label in skip:
                continue
            for stmt in blk.body:
                upd = self.array_update(stmt)
                if upd is not None:
                    out.append(upd[0].name)
                elif isinstance(stmt, ir.Assign):
                    e = stmt.value
                    if isinstance(e, ir.Expr) and e.op == "inplace_binop" \
                            and isinstance(self.ty(e.lhs), types.Array):
                        out.append(e.lhs.name)
                    out.extend(a.name for a in self.mutated_arrays(e))
        return out

    def _buffer_classes(self):
        """Union-find of the array variables that may share memory (views, aliases,
        in-place results, phis): ``{name: representative}``."""
        parent = {}

        def find(a):
            parent.setdefault(a, a)
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a
        for name, (label, stmt) in self.defs.items():
            if not isinstance(self.typemap.get(name), types.Array):
                continue
            src = self._shares_memory_with(stmt.value)
            if src is not None:
                parent[find(name)] = find(src)
            find(name)
        for name, label in self.phis.items():
            if isinstance(self.typemap.get(name), types.Array):
                for v in self.phi_incoming(name).values():
                    if isinstance(v, ir.Var):
                        parent[find(name)] = find(v.name)
        return {a: find(a) for a in list(parent)}

    def _shares_memory_with(self, e):
        if isinstance(e, ir.Var):
            return e.name
        if not isinstance(e, ir.Expr):
            return None
        if e.op in ("getitem", "static_getitem") and self._advanced_index(e):
            return None
        if e.op in ("getitem", "static_getitem", "cast") or (
                e.op == "getattr" and e.attr == "T"):
            v = e.value
        elif e.op == "inplace_binop":
            v = e.lhs
        else:
            return None
        return v.name if isinstance(self.typemap.get(v.name), types.Array) else None

    def _written_roots(self):
        """Roots of the arrays whose memory the function writes (through any member of
        their buffer class), and the written classes."""
        self.buffer_class = self._buffer_classes()
        members = self.written_members()
        self.written_classes = {self.buffer_class.get(m, m) for m in members}
        written = {self.array_root(m) for m in members}
        for name, rep in self.buffer_class.items():
            if rep in self.written_classes:
                written.add(self.array_root(name))
        return written

    def is_readonly_array(self, name):
        """Can the contents of ``name`` not change after it is defined?"""
        rep = self.buffer_class.get(name)
        if rep is not None:
            return rep not in self.written_classes
        return self.array_root(name) not in self.written_roots

    def is_arg_array(self, name):
        return self.array_root(name) in self.arg_vars

    def _inplace_updates(self):
        """``a[i] = a[i] + e`` (and ``-``, ``+=``, ``-=``) on one element within a block, and
        ``a[s] op= e`` on a region (a slice, a row: any in-place operator).

        The adjoint of the element passes through such an update unchanged, so the reverse
        sweep only reads it (into ``e``'s adjoint) instead of clearing it at the store and
        adding it back at the load. A region's update writes through the view ``a[s]``,
        whose in-place operator does the whole adjoint; the store Python adds after it
        writes the view back onto itself and has none. Returns the ids of those stores and
        the names of their loads."""
        stores, loads = set(), set()
        for blk in self.fir.blocks.values():
            body = blk.body
            for k, st in enumerate(body):
                if not isinstance(st, (ir.SetItem, ir.StaticSetItem)):
                    continue
                load = self._inplace_load(body, k, st)
                if load is not None:
                    stores.add(id(st))
                    loads.add(load)
        return stores, loads

    @staticmethod
    def _index_name(node):
        """The name of the index variable of a getitem or setitem (static ones too)."""
        static = isinstance(node, ir.StaticSetItem) or (
            isinstance(node, ir.Expr) and node.op == "static_getitem")
        idx = node.index_var if static else node.index
        return None if idx is None else idx.name

    def _advanced_index(self, e):
        """Does getitem ``e`` index with an array (a copy, not a view)?"""
        name = self._index_name(e)
        t = self.typemap.get(name) if name is not None else None
        parts = t.types if isinstance(t, types.BaseTuple) else (t,)
        return any(isinstance(p, types.Array) for p in parts)

    def _inplace_load(self, body, k, st):
        t = self.defs.get(st.value.name)
        if t is None or t[1] not in body or len(self.uses.get(st.value.name, ())) != 1:
            return None
        e = t[1].value
        if not (isinstance(e, ir.Expr) and e.op in ("binop", "inplace_binop")):
            return None
        region = e.op == "inplace_binop" and isinstance(self.ty(e.lhs), types.Array)
        fn = e.fn if e.op == "binop" else R.INPLACE_TO_BINOP.get(e.fn)
        if not region and fn not in (operator.add, operator.sub):
            return None
        ld = self.defs.get(e.lhs.name)
        if ld is None or ld[1] not in body or len(self.uses.get(e.lhs.name, ())) != 1:
            return None
        le = ld[1].value
        if not (isinstance(le, ir.Expr) and le.op in ("getitem", "static_getitem")
                and le.value.name == st.target.name
                and self._index_name(le) is not None
                and self._index_name(le) == self._index_name(st)):
            return None
        if region and self._advanced_index(le):
            return None     # the load is a copy, and the store writes it back
        j = body.index(ld[1])
        root = self.array_root(st.target.name)
        if any(isinstance(o, (ir.SetItem, ir.StaticSetItem))
               and self.array_root(o.target.name) == root for o in body[j + 1:k]):
            return None
        return e.lhs.name


def _is_atomic(fn):
    """A CUDA atomic operation (it writes into its first argument)."""
    return "atomic" in (getattr(fn, "__qualname__", "") or "") or \
        "atomic" in (getattr(fn, "__module__", "") or "")
