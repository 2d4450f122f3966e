"""The source of the JVP function: the primal with each statement's tangent beside it.

Reads the typed IR's :class:`~..facts.ir_facts.IRFacts`, which arguments have tangents, and the
values that vary with them (:func:`..facts.activity._varied`); produces :class:`JVPSource`, the
Python source of ``f_jvp(args..., tangents...) -> (value, tangent)`` and its globals.

Control flow is regenerated as the reverse rewrite's replay does it
(:class:`..emit.replay.Forward`: structured ``if``/``while`` by regions, guarded
sequences where arms share nodes), with nothing recorded and nothing pushed: a tangent is
a local variable beside its primal, a phi's tangent is copied on the same edge as the
phi, and a float array's tangent is an array of its shape whose views and writes mirror
the primal's, so aliasing needs no analysis of its own.
"""
import ast
from dataclasses import dataclass

from numba.core import ir, types

from .varied import varied_values
from ..emit import Names, Source
from ..emit.replay import Forward
from ..generated_source.code import Lines, expr, function_def, targets
from ..emit.names import identifier
from ..emit.control import simplify_control
from ..generated_source.code import module, printed
from ..emit.states import States
from ..emit import record_names
from ..facts.ir_facts import IRFacts, is_range
from ..emit.target import CPU
from ..typeinfo import zero_expr
from ..plan.shapes import Shapes
from ..rules.template import guards_as_branches, guards_outside_loops, ieee_products as plain_products
from .tangents import Tangents, has_floats, zero_of


# Filters of the values forward mode gives a tangent, registered by ad/calls/ (a recursive
# call takes its tangent from its operands', not from their packed copy).
_VARIED_FILTERS = []


def register_varied_filter(keep):
    """``keep(facts, varied) -> varied``, applied in turn to every JVP built after."""
    _VARIED_FILTERS.append(keep)


@dataclass
class JVPSource:
    """The generated JVP function: name, source, globals, and the facts it came from
    (``wrt``: the argument indices that take a tangent)."""
    fname: str
    source: str
    globals: dict
    facts: IRFacts
    wrt: frozenset


class _Plan:
    """The reverse rewrite's plan, as the replay reads it, when nothing is kept."""
    fused = {}
    snapshots = {}
    partials = {}
    kept_shapes = {}
    parallel_replay = frozenset()

    def __init__(self, facts):
        self.shapes = Shapes(facts)


class _Activity:
    array_adjoints = {}


class _NoFusedLoops:
    """No loop is reversed iteration by iteration: nothing is reversed."""

    replaying = 0

    def reverses(self, lp):
        return False

    def stored_already(self, label):
        return False


class _NoIndexedSeeds:
    """Nothing is reversed: no store's index is checked for the sweep."""

    def wrapped_arrays(self):
        return []

    def check_stores(self, L, where, r):
        pass


class _NoCheckpoints:
    """Forward mode keeps no history: no loop is checkpointed or guarded."""

    def applies(self, lp):
        return False

    def guarded(self, lp):
        return False

    def guard(self, L, lp):
        pass

    def guard_iteration(self, L, lp):
        pass


class _Context:
    """What :class:`Forward` reads of an emission, for a function that keeps nothing."""

    def __init__(self, facts, names, src):
        self.facts, self.names, self.src = facts, names, src
        self.plan = _Plan(facts)
        self.activity = _Activity()
        self.fused = _NoFusedLoops()
        self.indexed = _NoIndexedSeeds()
        self.checkpoint = _NoCheckpoints()
        self.states = States(names)
        self.helper_loop = None
        self.open_loops = []
        self.loop_stacks = {}

    draft = False

    def stack_specs(self):
        return {}

    def value_stack(self, name):
        return None     # nothing is kept

    def reserve(self, L, lp):
        pass

    def region_loops(self, region):
        return [] if region.loop is None else self.facts.s.enclosing(region.loop.header)


class TangentForward(Forward):
    """The replay of :mod:`..emit.replay` with tangents and without records."""

    def __init__(self, cx, tangents):
        super().__init__(cx)
        self.t = tangents

    # Nothing is reversed: of the control-flow records only the exit a loop took is read
    # (by the code after the loop), and it is a plain local.
    def record(self, L, name, value, loops, block):
        if name.startswith("_x"):
            L.code("{} = {}", name, value)

    def record_after(self, L, name, loops, block):
        pass

    def push_value(self, L, name, label):
        pass

    def iteration(self, L, label, name, e):
        if isinstance(e, ir.Expr) and e.op == "call" and is_range(
                self.facts.resolve_global(e.func)) and not self._iterated(name):
            return False        # a range object used otherwise (len(range(n)))
        return super().iteration(L, label, name, e)

    def _iterated(self, name):
        return any(isinstance(st, ir.Assign) and isinstance(st.value, ir.Expr)
                   and st.value.op == "getiter" for _, st in self.facts.uses.get(name, ()))

    def copies(self, L, e):
        cps = self.facts.edge_copies(e)
        if not cps:
            return
        # A phi with no value on this edge (a variable of generated code defined on some
        # paths only) takes a zero of its type, or nothing where it has none.
        cps = [(t, v) for t, v in cps if isinstance(v, ir.Var) or
               isinstance(self.facts.ty(t), (types.Number, types.Boolean))]
        if not cps:
            return
        lhs = [self.cx.names.n(t) for t, _ in cps]
        rhs = [self.src.operand(v) if isinstance(v, ir.Var) else zero_expr(self.facts.ty(t))
               for t, v in cps]
        for t, v in cps:
            if self.t.has(t):
                lhs.append(self.t.dot(t))
                rhs.append(self.t.of(v) if isinstance(v, ir.Var) else 0.0)
        if len(lhs) == 1:
            L.code("{} = {}", lhs[0], rhs[0])
        else:
            L.code("{} = {}", targets(lhs), tuple(rhs))

    def block_end(self, L, label, term):
        if not isinstance(term, ir.Return):
            return super().block_end(L, label, term)
        if not self.facts.target.returns_value:
            L.code("return")        # a kernel: its outputs are the arrays it writes
            return
        value = term.value
        tangent = self.t.of(value) if isinstance(value, ir.Var) else None
        L.code("return {}, {}", self.src.operand(value), tangent)

    def assign(self, L, label, stmt):
        name, e = stmt.target.name, stmt.value
        t = self.t
        if isinstance(e, ir.Expr) and e.op == "inplace_binop" and t.has(e.lhs) \
                and isinstance(self.facts.ty(e.lhs), types.Array):
            before, after = t.inplace_array(name, e)
            L(before)
            super().assign(L, label, stmt)
            L(after)
            if t.has(name):
                L.code("{} = {}", t.dot(name), t.dot(e.lhs))
            return
        super().assign(L, label, stmt)
        if isinstance(e, ir.Arg):
            return
        effect = t.effect(e)
        if effect is not None:
            L(effect)
        if not t.has(name):
            return
        if isinstance(e, ir.Expr) and e.op == "phi":
            return                  # copied on the edges
        if isinstance(e, ir.Expr) and e.op == "pair_first":
            rl = self.facts.iter_alias[self.facts.pair_iter(e).name]
            if rl.array is not None:
                # (range_index of the tangents, which may be trees: the array's element)
                value = expr("{}[{}]", t.of(rl.array), rl.ctr)
                L.code("{} = {} if {} < {} else 0.0", t.dot(name), value, rl.ctr, rl.len)
            return
        if isinstance(e, ir.Expr) and e.op in ("getiter", "iternext", "pair_second"):
            return
        tangent = t.expr(name, e)
        if tangent is None:
            tangent = zero_of(self.facts.ty(name), self.cx.names.n(name))
        L.code("{} = {}", t.dot(name), tangent)

    def stmt(self, L, label, stmt):
        super().stmt(L, label, stmt)
        if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) and self.t.has(stmt.target):
            idx = self.src.store_index(stmt, self.src.operand)
            value = self.t.dot(stmt.value) if self.t.has(stmt.value) else 0.0
            L.code("{}[{}] = {}", self.t.dot(stmt.target), idx, value)


def build_jvp(typed, py_func, wrt, target=CPU, ieee_products=False):
    """The :class:`JVPSource` of one typed function, differentiated along the tangents of
    the arguments in ``wrt`` (argument indices). ``target``: the platform (a kernel's
    tangent kernel writes its tangent outputs into the tangent arrays it is given).
    ``ieee_products``: a zero tangent times an infinite partial is NaN (by default,
    zero: :func:`..rules.template.ieee_products`)."""
    facts = IRFacts(typed, py_func, target)
    names = Names(target, reserved=[rl.len[:-4] for rl in facts.ranges.values()],
                  counter=len(facts.ranges))
    src = Source(facts, names)
    varied = frozenset(varied_values(facts, wrt))
    for keep in _VARIED_FILTERS:        # (the packed operands of a recursive call: none)
        varied = keep(facts, varied)
    tangents = Tangents(facts, src, names, varied)
    cx = _Context(facts, names, src)
    body = Lines(level=1)
    TangentForward(cx, tangents).region(body, facts.s.regions[None])
    args = facts.arg_vars
    params = [names.n(a) for a in args]
    params += [tangents.dot(a) for k, a in enumerate(args) if k in wrt]
    fname = "%s_jvp" % identifier(py_func.__name__)
    out = Lines()
    with out.open(function_def(fname, params)):
        for name in sorted(record_names(facts)):
            if name.startswith("_x"):   # the only records read (see TangentForward.record)
                out.code("{} = 0", name)
        for k, a in enumerate(args):
            if not target.allocates_arrays:
                break           # a kernel writes its outputs where it is told to
            # The function's writes into its arguments land in copies, as for ``grad``.
            written = a in facts.written_roots
            if written:
                out.code("{} = {}.copy()", names.n(a), names.n(a))
            if k in wrt and written and tangents.has(a):
                out.code("{} = {}.copy()", tangents.dot(a), tangents.dot(a))
            elif k not in wrt and tangents.has(a):
                out.code("{} = {}", tangents.dot(a), zero_of(facts.ty(a), names.n(a)))
        out.extend(body)
    tree = module(out)
    if cx.states.number:        # guarded sequences: their states numbered on the tree
        cx.states.resolve(tree)
        # Guards only one state reaches replaced by their arm: the return no longer sits
        # under a guard Numba cannot see is always taken (an optional result otherwise).
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef):
                simplify_control(fn)
    if ieee_products:
        plain_products(tree)
    elif not target.guarded_product_calls:
        guards_as_branches(tree)
    else:
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef):
                guards_outside_loops(fn)
    return JVPSource(fname, printed(tree), names.globals, facts, frozenset(wrt))


__all__ = ["JVPSource", "build_jvp", "has_floats"]
