"""Emission: the backward function as a tree, from facts, activity and plan.

The backward is ``forward replay`` (:mod:`.replay`) + ``reverse sweep``
(:mod:`.reverse`), assembled here with the declarations of its stacks and locals. Fused
loops (:mod:`.fused`) reverse each iteration inside the replay; parallel ones
(:mod:`.parallel`) call a per-iteration helper from a ``prange``. Emission decides nothing:
every choice comes from the plan. Its only bookkeeping is of what it has written (which
stacks a loop pushed, which adjoints a parallel iteration shares).

:class:`BackwardIR` is the same emission under a draft plan, with the reads of primal
values, the pushes and pops and the guards left open as nodes (:mod:`.reads`,
:mod:`.lowering`): the plan is settled from the passes over it (see :mod:`..plan`), and
:func:`emit_backward` lowers it under the settled plan where that changes nothing else.
"""
import ast
from contextlib import contextmanager
from dataclasses import dataclass

import numba
from numba.core import types

from ..plan.map_sums import is_folded_sum
from ..plan.stacks import declaration_stmt, reserve_statements
from ..facts.structure import node_key
from .checked import check_accumulations, check_adjoint_reads
from ..typeinfo import array_placeholder_expr, array_zero_expr, is_complex, is_float, is_kept_array, zero_expr
from .adjoints import Adjoints
from .checkpoint import Checkpoint
from .constants import ZERO
from .replay import Forward
from .fused import Fused
from .indexed_seeds import IndexedSeeds
from .loop_versions import LoopVersions
from .lowering import ClearStacks, Keep, Reserve, Restore, lower, lowerable
from ..generated_source.code import Lines, code_key, function_def, stmt
from .names import Names, identifier
from .parallel import Parallel, straight_helpers
from ..generated_source.code import module, printed
from .reads import Read, reads_of, shared_assignments, written_with_reciprocals
from .reassoc import reassociate_folded_sums
from ..rules.template import guards_as_branches, guards_outside_loops, ieee_products as plain_products
from .reverse import Reverse
from .source import Source
from .states import States
from .tidy import tidy

__all__ = ["Names", "Source", "Emission", "Emitted", "BackwardIR", "emit_backward"]


class Emission:
    """One run of the emitter over a plan."""

    def __init__(self, facts, activity, plan, names, src, draft=False):
        self.facts = facts
        self.activity = activity
        self.plan = plan
        self.names = names
        self.src = src
        self.draft = draft          # under a draft plan: reads left open (reads.py)
        self.helper_loop = None     # the parallel loop whose helper is being emitted
        self.open_loops = []        # headers of the loops being emitted (replay)
        self.loop_stacks = {}       # loop header -> stacks pushed inside that loop
        self.shared_roots = {}      # parallel loop -> arrays whose adjoints it shares
        self.helpers = {}           # helper name -> its source
        self.helper_stacks = set()  # stacks declared in helpers, not in the backward
        self.states = States(names)  # numbers of the nodes of guarded sequences
        self.forward = Forward(self)
        self.reverse = Reverse(self)
        self.adjoints = Adjoints(self)
        self.fused = Fused(self)
        self.indexed = IndexedSeeds(self)
        self.versions = LoopVersions(self)
        self.parallel = Parallel(self)
        self.checkpoint = Checkpoint(self)
        self.variants = set()       # (kind, key) of the replay's variants (lowering.py)
        self.reads = []             # under a draft plan: each read made (reads.PrimalRead)
        self.keeps = []             # and each push left open (lowering.Keep)
        self.private_cells = {}     # (adjoint array, index) -> its sum over the backward
        self.open_cells = {}        # loop -> {cell: (its sum, the read)}, while emitted

    def cell_sum(self, name, e, cell):
        """The local that sums the contributions of the element read ``name = e`` to the
        adjoint ``cell`` (its array's source and index) when the plan sums them
        (:mod:`..plan.cell_sums`) over the whole backward, or over a loop whose reverse is
        being written here; else None."""
        if name not in self.plan.cell_sums:
            return None
        lp = self.plan.cell_sums[name]
        key = tuple(map(code_key, cell))
        if lp is None:      # added atomically once, at the end (_assemble)
            got = self.private_cells.get(key)
            if got is None:
                got = self.private_cells[key] = (self._cell_local(cell), cell)
            return got[0]
        cells = self.open_cells.get(lp)
        if cells is None:
            return None
        if key not in cells:
            cells[key] = (self._cell_local(cell), e)
        return cells[key][0]

    def _cell_local(self, cell):
        # (the adjoint may be a view, ``a_bar[i]``: named after the array)
        array = cell[0] if isinstance(cell[0], str) else \
            next(n.id for n in ast.walk(cell[0]) if isinstance(n, ast.Name))
        return self.names.fresh("acc_" + identifier(array).strip("_"))

    @contextmanager
    def summing_cells(self, L, lp):
        """Around the code that reverses every iteration of ``lp``: the sums of the cells
        read there (:meth:`cell_sum`) are set to ``-0.0`` before it and added into their
        cells after it."""
        if lp not in self.plan.cell_sums.values():
            yield
            return
        m, level = L.mark(), L.level
        outer = self.open_cells.get(lp)
        self.open_cells[lp] = cells = {}
        try:
            yield
        finally:
            self.open_cells[lp] = outer
        L.insert(m, level, [stmt("{} = {}", acc, ZERO) for acc, _ in cells.values()])
        for acc, e in cells.values():
            self.adjoints.add_cell_sum(L, acc, e)

    # -- stacks (shared by values and records of one kind, see plan/groups.py)
    def value_stack(self, name):
        """Name of the stack keeping ``name``, or None."""
        if name in self.plan.value_stacks:
            return self.plan.stack_of[name]
        return None

    def record_stack(self, name):
        if name not in self.plan.record_stacks:
            raise AssertionError("no stack planned for the record %s" % name)
        # A draft plan has records but no groups yet.
        return self.plan.stack_of.get(name, "_st" + name)

    def stack_specs(self):
        return self.plan.stacks

    def stack_declaration(self, st):
        spec = self.plan.stacks[st]
        if spec.storage == "list":          # arrays: a typed list of them
            return stmt("{} = List.empty_list({})", st,
                        self.names.gname(self.plan.stack_types[st]))
        return declaration_stmt(st, spec)

    def _is_list(self, st):
        spec = self.plan.stacks.get(st)
        return spec is not None and spec.storage == "list"

    def _stack(self, st):
        """Stack ``st`` is written here (in a helper: it is the helper's own)."""
        if self.names.mentions is not None:
            self.names.mentions.add(st)
        return st

    def push_statement(self, st, value, t=None):
        """Push ``value`` (of type ``t`` when known) on stack ``st``."""
        st = self._stack(st)
        if not self._is_list(st):
            return stmt("push({}, {})", st, value)
        if isinstance(t, types.Array) and t.layout != "C":
            # A list stack holds C arrays (plan/groups.py): ``A.T * q`` may be strided.
            return stmt("{}.append(np.ascontiguousarray({}))", st, value)
        return stmt("{}.append({})", st, value)

    def type_of(self, value):
        """The type of the IR value or plan-added name ``value``, None when unknown."""
        if value is None:
            return None
        return self.plan.added_types.get(value) or self.facts.typemap.get(value)

    def pop_statement(self, st, name, t=None):
        """Pop into ``name`` (of type ``t`` when known) from stack ``st``."""
        st = self._stack(st)
        if not self._is_list(st):
            return stmt("{} = pop({})", name, st)
        if isinstance(t, types.Array) and t.layout == "F":
            # Back in the layout the name has in the replay: Numba would otherwise type
            # the name as both, and what is computed from it in neither.
            return stmt("{} = np.asfortranarray({}.pop())", name, st)
        return stmt("{} = {}.pop()", name, st)

    def clear_statement(self, st):
        st = self._stack(st)
        return stmt("{}.clear()" if self._is_list(st) else "clear({})", st)

    # -- what the backward reads and keeps (under a draft plan: left open, see reads.py
    #    and lowering.py; each node is indexed as it is made, for the passes over them)
    def read_node(self, read):
        self.reads.append(read)
        return Read(read)

    def keep_node(self, node):
        self.keeps.append(node)
        return node

    def keep(self, L, value=None, record=None, pushed=None):
        """Push a value's old value (``value``: its IR name), or a record's (``record``:
        its name; ``pushed``: what it holds), on its stack: where the plan keeps it."""
        if self.fused.replaying:
            return          # in a loop the sweep runs again: nothing is popped from it
        facts = self.facts
        if self.draft:
            if record is not None or value not in facts.typemap \
                    or self.plan.recompute.kept_on_stack(value):
                L(self.keep_node(Keep(self.names.n(value) if pushed is None else pushed,
                                      value, record, tuple(self.open_loops),
                                      None if value is None else self.plan.ty(facts, value))))
            return
        stack = self.record_stack(record) if record is not None else self.value_stack(value)
        if stack is None:
            return
        L(self.push_statement(stack, self.names.n(value) if pushed is None else pushed,
                              None if value is None else self.plan.ty(facts, value)))
        for h in self.open_loops:
            self.loop_stacks.setdefault(h, set()).add(stack)

    def restore(self, L, value=None, record=None, into=None):
        """Pop a value (``value``) or a record (``record``, into the name ``into``)
        back: where the plan keeps it."""
        if self.draft:
            if record is not None or value not in self.facts.typemap \
                    or self.plan.recompute.kept_on_stack(value):    # (the first: a
                #                                                     variant's, lowering.py)
                L(Restore(self.names.n(value) if into is None else into, value, record))
            return
        stack = self.record_stack(record) if record is not None else self.value_stack(value)
        if stack is not None:
            L(self.pop_statement(stack, self.names.n(value) if into is None else into,
                                 self.type_of(value)))

    def reserve(self, L, lp):
        """Room for what loop ``lp`` pushes on the heap stacks, before it starts."""
        L(Reserve(lp) if self.draft else reserve_statements(self.stack_specs(), lp))

    def clear_loop_stacks(self, L, lp):
        """Drop what loop ``lp`` pushed."""
        if self.draft:
            L(ClearStacks(lp))
            return
        for st in sorted(self.loop_stacks.get(lp.header, ())):
            L(self.clear_statement(st))

    def region_loops(self, region):
        return [] if region.loop is None else self.facts.s.enclosing(region.loop.header)

    def declarations(self):
        """Generated name -> initial value, for the locals the backward declares."""
        facts, names = self.facts, self.names
        out = {}
        for name in self.plan.value_stacks:
            t = self.plan.ty(facts, name)
            out[names.n(name)] = array_placeholder_expr(t) if is_kept_array(t) else zero_expr(t)
        for name in self.activity.useful:
            if name in self.plan.direct:
                continue
            if is_float(facts.ty(name)):
                out[names.bar(name)] = ZERO
            elif is_complex(facts.ty(name)):
                out[names.bar(name)] = 0j
            elif name in self.activity.array_values:
                out[names.bar(name)] = array_zero_expr(facts.ty(name))
        for name in record_names(facts):
            out[name] = 0
        for acc, _ in self.private_cells.values():
            out[acc] = ZERO
        for root in self.indexed.wrapped_arrays():
            out[self.indexed.names(root)[0]] = False
        return out


def record_names(facts):
    """Every name a control-flow record may have (declared up front, so that a record
    read on a path that did not set it is still defined)."""
    names = {"_rsite"}
    for lp in facts.s.loops:
        names.update({"_n%d" % lp.header, "_x%d" % lp.header, "_l%d" % lp.header,
                      "_it%d" % lp.header})
    for region in facts.s.regions.values():
        for n in region.nodes:
            if len(region.ins[n]) > 1:
                names.add("_c%s" % node_key(n))
    return names


class BackwardIR:
    """The backward built under a draft plan (``plan``): the replay's and the sweep's
    statements, with what depends on what the sweep reads left open (every read of a
    primal value a :class:`.reads.Read` node, the pushes, pops and guards the nodes of
    :mod:`.lowering`), and the emission that wrote them. The plan is settled from the
    passes over its reads (:meth:`reads`, :meth:`shared_loops`, :meth:`with_reciprocals`),
    indexed as they were made; :func:`emit_backward` lowers it."""

    def __init__(self, facts, activity, plan, names, src):
        self.facts, self.src, self.plan = facts, src, plan
        self.cx = cx = Emission(facts, activity, plan, names, src, draft=True)
        self.forward, self.reverse = fwd, rev = Lines(level=1), Lines(level=1)
        cx.forward.region(fwd, facts.s.regions[None])
        cx.reverse.top(rev)
        self.raw = cx.reads

    def reads(self, plan):
        """What the sweep reads under ``plan`` (:func:`.reads.reads_of`)."""
        return reads_of(self.raw, self.facts, self.src, plan)

    def shared_loops(self, plan):
        """The parallel loops whose iterations would assign a value from before them."""
        return shared_assignments(self.raw, plan)

    def with_reciprocals(self, snapshots):
        """The applications with snapshots that this IR writes with kept reciprocals."""
        return written_with_reciprocals(self.raw, snapshots)


@dataclass(frozen=True)
class Emitted:
    """The emitted backward: its function's name, its source, the iteration helpers of
    its parallel loops (defined before it) and those of them straight enough to inline
    into a ``prange`` body (:func:`.parallel.straight_helpers`)."""
    fname: str
    source: str
    helpers: tuple
    inlined: frozenset


def emit_backward(facts, activity, plan, names, src, wrt=None, checked=False, ir=None,
                  ieee_products=False):
    """The :class:`Emitted` backward under ``plan``; ``checked``: its reads of adjoint
    arrays are checked (:mod:`.checked`). ``ir``: the :class:`BackwardIR` the plan was
    settled from, lowered under it where it can be (:mod:`.lowering`); else the backward
    is emitted under ``plan``. ``ieee_products``: its guarded products are plain ones
    (:func:`..rules.template.ieee_products`). Its statements are nested into one tree,
    the passes work on that tree, and it is printed once
    (:func:`..generated_source.code.printed`)."""
    lowered = ir is not None and lowerable(facts, ir, plan)
    if lowered:
        cx, fwd, rev = ir.cx, ir.forward, ir.reverse
        cx.plan, cx.draft = plan, False
    else:
        cx = Emission(facts, activity, plan, names, src)
        fwd = Lines(level=1)
        cx.forward.region(fwd, facts.s.regions[None])
        rev = Lines(level=1)
        cx.reverse.top(rev)
    fname, lines = _assemble(cx, fwd, rev, wrt)
    tree = module(lines)
    if lowered:
        lower(tree, cx)
    cx.states.resolve(tree)
    if ieee_products:
        plain_products(tree)
    elif not facts.target.guarded_product_calls:
        guards_as_branches(tree)
    else:       # (a parallel loop's helper is its body: it runs in the loop)
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef) and fn.name not in cx.helpers:
                guards_outside_loops(fn)
    # (element-wise runs fused where the target makes arrays: not in checked mode, whose
    # reads of adjoints are checked statement by statement)
    tidy(tree, names.globals, set(cx.helpers), name_types(cx),
         fuse=facts.target.allocates_arrays and not checked)
    # (sums a np.sum was folded into: added in any order, see reassoc.py)
    folded = {source for source, (value, adjoint) in names.values().items()
              if not adjoint and is_folded_sum(value)}
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name not in cx.helpers:
            reassociate_folded_sums(fn, folded, name_types(cx))
    if checked:
        check_adjoint_reads(tree, {names.bar(v): _shown(facts, v)
                                   for v in activity.array_values})
        check_accumulations(tree)
    if facts.target.accumulates_arguments:
        _check_buffers_kept(tree, fname, [names.bar(a) for a in facts.target.buffered(facts)
                                          if facts.target.adjoint_given(facts, a)])
    return Emitted(fname, printed(tree), tuple(sorted(cx.helpers)),
                   straight_helpers(tree, cx.helpers))


def _check_buffers_kept(tree, fname, buffers):
    """The buffers a ``grad_into`` backward adds into are never bound to another array
    (what was added would not reach the caller)."""
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == fname:
            for node in ast.walk(fn):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AnnAssign, ast.For)) else []
                for t in targets:
                    for leaf in ast.walk(t):
                        if isinstance(leaf, ast.Name) and leaf.id in buffers and \
                                isinstance(leaf.ctx, ast.Store):
                            raise AssertionError("%s binds the buffer %s again"
                                                 % (fname, leaf.id))


def name_types(cx):
    """``{source name: Numba type}`` of the generated names whose type emission knows: the
    IR values and their adjoints (the adjoint has its value's type), the control-flow
    records and state variables, the counters of range loops and the early seeds."""
    facts, plan = cx.facts, cx.plan
    out = {}
    for source, (value, _) in cx.names.values().items():
        t = plan.added_types.get(value) or facts.typemap.get(value)
        if t is not None:
            out[source] = t
    out.update(dict.fromkeys(cx.names.seeds, types.float64))
    ints = record_names(facts) | {"_rv", "_fw"}
    ints.update("_m%d" % lp.header for lp in facts.s.loops)
    for rl in facts.ranges.values():
        ints.update((rl.len, rl.ctr))
    out.update(dict.fromkeys(ints, types.intp))
    out["_ret_b"] = types.float64
    return out


def _shown(facts, name):
    """How a checked read names a value: its source name and line."""
    line = getattr(facts.def_loc(name), "line", None)
    shown = "a temporary" if name.startswith("$") else repr(name.split(".")[0])
    return "%s%s of %r" % (shown, "" if line is None else " at line %d" % line,
                           facts.qualname)


def _assemble(cx, fwd, rev, wrt):
    facts, names = cx.facts, cx.names
    params = [names.n(a) for a in facts.arg_vars]
    params += facts.target.backward_params(facts, names)
    fname = "%s_backward" % identifier(facts.py_func.__name__)
    out = Lines()
    for helper in sorted(cx.helpers):
        out.extend(cx.helpers[helper])
    if cx.helpers or cx.plan.parallel_replay:
        names.globals["numba"] = numba
    with out.open(function_def(fname, params)):
        for st in sorted(cx.stack_specs()):
            if st not in cx.helper_stacks:
                out(cx.stack_declaration(st))
        for name, init in sorted(cx.declarations().items()):
            out.code("{} = {}", name, init)
        assigned = set(cx.plan.assigned_adjoints) | set(cx.plan.sweep_assigned)
        out(facts.target.backward_prologue(facts, names, assigned))
        out.extend(fwd)
        out.extend(rev)
        for _, (acc, cell) in sorted(cx.private_cells.items()):
            with out.block("if {} != 0.0:", acc):
                out(facts.target.atomic_add_statement(cell[0], cell[1], acc))
        stacks = sorted(cx.stack_specs())
        out(facts.target.backward_epilogue(facts, cx.activity, names, stacks, wrt))
    return fname, out
