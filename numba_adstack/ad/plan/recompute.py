"""Recomputation: which values the sweep recomputes instead of keeping them.

A value the sweep needs is recomputed where it is cheap and pure: constants and globals
(written in place), copies, tuples, integer index arithmetic, loads from arrays the
function never writes or, made in the function, writes only before the load
(facts/memory.py ``unchanged_after``: the array holds the same values when the sweep
reads it), the index of a range loop (from the reversed iteration number),
and a few float operations on values that do not change within the reversal unit (the
constant ``-T(0.5)`` that numba-stats computes in its loop, ``-k`` in a time loop): those
are loop invariants, which the replay would otherwise push on every iteration, and which
LLVM hoists out of the sweep's loop; and one or two float operations on loads from
arrays nothing writes and loop indices (``y[i] - y[j]``) where the value's history would
grow with nested loops or a top-level loop (``_cheap``). Everything else that is
overwritten within its reversal unit goes on a stack.
"""
import operator

from numba.core import ir, types

from ..typeinfo import stack_dtype, is_float
from ..capture.loopforms import index_at
from ..facts.memory import unchanged_after_definition

#: Operations a loop-invariant value may take to be recomputed rather than kept.
INVARIANT_OPS = 4
#: Operations a value with a growing history may take to be recomputed (see ``_cheap``).
CHEAP_OPS = 2


_PURE_OPS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg,
             operator.pos}
#: A loop invariant may take a power too (``nu * dt / dx ** 2`` in a stencil: LLVM hoists
#: it out of the sweep's loop, where the replay pushed it for every element).
_INVARIANT_OPS = _PURE_OPS | {operator.pow}


class Recompute:
    def __init__(self, facts, fused, sites):
        self.facts = facts
        self.fused = frozenset(fused)
        self.sites = sites
        self._rc = {}

    def is_remat(self, name):
        """Can the reverse sweep recompute this value where it needs it (cheap, pure)?"""
        f = self.facts
        if name in f.phis:
            return False
        e = f.def_expr(name)
        if e is None or isinstance(e, ir.Arg):
            return False
        if isinstance(e, (ir.Const, ir.Global, ir.FreeVar, ir.Var)):
            return True
        if not isinstance(e, ir.Expr):
            return False
        t = f.ty(name)
        if e.op in ("getattr", "build_tuple", "exhaust_iter", "cast"):
            return True
        if e.op in ("getitem", "static_getitem"):
            vt = f.ty(e.value)
            if isinstance(vt, types.BaseTuple):
                # An item of a tuple the sweep would have to keep from every iteration (a
                # solver's named tuple in a loop) is kept itself: a tuple cannot be.
                return stack_dtype(t) is None or not self.kept_on_stack(
                    self._copied(e.value.name))
            if isinstance(vt, types.Array):
                return isinstance(t, types.Array) or f.is_readonly_array(e.value.name) \
                    or self._final_when_read(name, e)
            return False
        if e.op in ("binop", "unary", "inplace_binop"):
            if isinstance(t, (types.Integer, types.Boolean)):
                return True
        if e.op == "call":
            fn = f.resolve_global(e.func)
            if fn in (len, slice, index_at) and not e.kws:
                return True     # (index_at: the index of np.ndindex's k-th iteration)
        return self._invariant_cost(name) is not None or self._cheap(name)

    def _final_when_read(self, name, e):
        """An element read from a float array made in the function that nothing writes
        after the read (``Qdiags`` filled before the loop reading it): the sweep reads it
        again from the array, which holds the same values then."""
        return is_float(self.facts.ty(name)) and \
            unchanged_after_definition(self.facts, e.value.name, name)

    def _copied(self, name):
        """The value ``name`` is a copy of (through copies), or ``name``."""
        for _ in range(100):
            e = self.facts.def_expr(name)
            if not isinstance(e, ir.Var) or name in self.facts.phis:
                return name
            name = e.name
        return name

    def _cheap(self, name):
        """A float of one or two operations on values the sweep has for free (loads from
        arrays nothing writes, loop indices, values defined once), defined where its
        history would grow with the product of several trip counts (or with a top-level
        loop's): recomputing it costs those operations, keeping it a store and a load per
        iteration. (A loop of a few iterations inside a fused loop keeps its stack: its
        history stays in cache, and the sweep's recomputing loop measured slower.)"""
        f = self.facts
        if name in f.phis or name not in f.defs or not is_float(f.ty(name)):
            return False
        label = f.defs[name][0]
        loops = self.sites.site_loops(f.s.enclosing(label), label)
        if not (len(loops) >= 2 or (loops and self.sites.unit_base(label) == 0)):
            return False
        # The sweep sets a loop's index as it reverses each iteration: read after the
        # loop (or by a phi, in the next iteration) the value would see another index.
        if not self._read_within(name, loops[0]):
            return False
        return self._cheap_cost(name, CHEAP_OPS) is not None

    def _read_within(self, name, lp):
        """Are ``name`` and its copies read only inside ``lp``, and by no phi?"""
        f, seen, work = self.facts, set(), [name]
        while work:
            v = work.pop()
            if v in seen:
                continue
            seen.add(v)
            for label, stmt in f.uses.get(v, ()):
                if label not in lp.blocks:
                    return False
                if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) \
                        and stmt.value.op == "phi":
                    return False
                if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var):
                    work.append(stmt.target.name)
        return name not in f.phis

    def _cheap_cost(self, name, budget):
        f = self.facts
        e = f.def_expr(name)
        if isinstance(e, ir.Var):
            return 0 if self._free(e.name) else self._cheap_cost(e.name, budget)
        if not isinstance(e, ir.Expr) or budget < 1 or name in f.phis:
            return None
        if e.op in ("binop", "unary") and e.fn in _PURE_OPS:
            operands = [e.lhs, e.rhs] if e.op == "binop" else [e.value]
        else:
            return None
        cost = 1
        for v in operands:
            if self._free(v.name):
                continue
            if not is_float(f.ty(v.name)):
                return None
            c = self._cheap_cost(v.name, budget - cost)
            if c is None:
                return None
            cost += c
        return cost

    def _free(self, name, depth=0):
        """Does the sweep have ``name`` without a stack and with no float operation:
        a static value, one defined once per unit, a loop index, integer arithmetic on
        those, or a load from an array nothing writes at such an index?"""
        f = self.facts
        if f.static_form(name) is not None or self.sites.once(name) or self.is_rc(name):
            return True
        if name in f.phis or depth > 4:
            return False
        e = f.def_expr(name)
        if isinstance(e, ir.Var):
            return self._free(e.name, depth + 1)
        if not isinstance(e, ir.Expr):
            return False
        t = f.ty(name)
        if e.op in ("getitem", "static_getitem") and \
                isinstance(f.ty(e.value), types.Array) and \
                (isinstance(t, types.Array) or f.is_readonly_array(e.value.name)):
            index = [e.index] if e.op == "getitem" else [v for v in [e.index_var] if v]
            return self._free(e.value.name, depth + 1) and \
                all(self._free(v.name, depth + 1) for v in index)
        if e.op == "build_tuple" or (e.op in ("binop", "unary") and
                                     isinstance(t, (types.Integer, types.Boolean))):
            return all(self._free(v.name, depth + 1) for v in e.list_vars())
        return False

    def _invariant_cost(self, name, budget=INVARIANT_OPS):
        """Operations that recompute the float ``name`` from values in place for its whole
        reversal unit (constants, globals, values defined once per unit), or None when it
        is not such a value or takes more than ``budget`` operations."""
        f = self.facts
        if f.static_form(name) is not None:
            return 0
        if name in f.phis or not is_float(f.ty(name)):
            return None
        e = f.def_expr(name)
        if isinstance(e, ir.Var):
            return self._operand_cost(e.name, budget)
        if not isinstance(e, ir.Expr) or budget < 1:
            return None
        if e.op in ("binop", "unary") and e.fn in _INVARIANT_OPS:
            operands = [e.lhs, e.rhs] if e.op == "binop" else [e.value]
        elif e.op == "call" and not e.kws and len(e.args) == 1 and \
                isinstance(f.ty(e.func), types.NumberClass):
            operands = list(e.args)       # T(0.5): a cast
        else:
            return None
        cost = 1
        for v in operands:
            c = self._operand_cost(v.name, budget - cost)
            if c is None:
                return None
            cost += c
        return cost

    def _operand_cost(self, name, budget):
        f = self.facts
        if f.static_form(name) is not None or self.sites.once(name):
            return 0
        if name in f.phis or not is_float(f.ty(name)):
            return None
        return self._invariant_cost(name, budget)

    def rc_loop(self, name):
        """The range loop whose index ``name`` is, when the reverse sweep can recompute it
        from the iteration number (every use is inside that loop)."""
        if name not in self._rc:
            self._rc[name] = self._find_rc_loop(name)
        return self._rc[name]

    def _find_rc_loop(self, name):
        f = self.facts
        for lp in f.s.loops:
            rl = lp.range
            if rl is None or rl.first != name or lp in self.fused:
                continue
            if rl.array is not None and not f.is_readonly_array(rl.array.name):
                return None     # the values change: keep them on a stack
            chain, work = set(), [name]
            while work:
                v = work.pop()
                if v in chain:
                    continue
                chain.add(v)
                for label, stmt in f.uses.get(v, ()):
                    if label not in lp.blocks:
                        return None
                    if (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var)
                            and stmt.value.name == v):
                        work.append(stmt.target.name)
            return lp
        return None

    def is_rc(self, name):
        return self.rc_loop(name) is not None

    def kept_on_stack(self, name):
        """Will the sweep read ``name`` from a stack (rather than recompute it or find it
        still in place)?"""
        if self.is_remat(name) or self.is_rc(name):
            return False
        if not self.sites.has_def(name):
            return False
        return any(self.sites.def_site_loops(name).values())
