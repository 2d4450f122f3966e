"""What the backward built under a draft plan leaves open, and its lowering once the plan
is settled.

Under a draft plan the stacks are not chosen yet: which values are kept is known only
from what the sweep reads (:mod:`.reads`). Emission then writes, where the backward
keeps, restores or makes room for a value or a record, a node that says so, and at each
top-level loop a node for the guard of its history (``checkpoint="auto"``):

* :class:`Keep`, :class:`Restore`: a push or a pop of a value (a candidate: recomputed
  values have none) or of a control-flow record;
* :class:`Reserve`: the room a loop's stacks take before it starts;
* :class:`ClearStacks`: the history a loop skipped in the sweep leaves, dropped;
* :class:`Guard`, :class:`GuardIteration`: the guard of a loop's history against the
  memory budget, before it and in each iteration;
* :class:`Variant`, :class:`Choice`: where the plan may keep a call's partial instead of
  its operand (:func:`..plan.stacks.partial_of`) or an array's extents instead of the
  array (:func:`..plan.shape_reads.extents_of`), what the replay writes for it, and the
  rule's term or the partial's;
* :class:`Snapshots`: the copies of the arrays a statement reads, where the plan keeps
  them (:mod:`..plan.snapshots`), and their pops (a read of such an array by the
  statement's rule reads the copy);
* a node of a guarded sequence (:meth:`.reverse.Reverse.guarded`) that its restores
  alone make non-empty carries what to do when they are lowered to nothing.

:func:`lower` writes them under the settled plan (through the emission's own producers:
``push_statement``, ``pop_statement``...) and resolves every :class:`.reads.Read`, so
that the IR built once is the backward. Where the settled plan changes more than these
(:func:`lowerable`), the backward is emitted again under it.
"""
import ast

from numba.core import ir

from ..generated_source.code import Lines, body as body_of, value
from ..plan.stacks import reserve_statements
from .reads import Read, read_value


class Keep(ast.stmt):
    """Push ``pushed`` (a tree) for the value ``value`` or the record ``record``, made
    while the loops ``loops`` (headers) were open."""
    _fields = ("pushed",)

    def __init__(self, pushed, value=None, record=None, loops=(), t=None):
        super().__init__()
        self.pushed, self.value, self.record, self.loops, self.t = \
            pushed, value, record, loops, t


class Restore(ast.stmt):
    """Pop the value ``value`` or the record ``record`` into the name ``into``."""
    _fields = ()

    def __init__(self, into, value=None, record=None):
        super().__init__()
        self.into, self.value, self.record = into, value, record


class _AtLoop(ast.stmt):
    """A statement about the loop ``loop``."""
    _fields = ()

    def __init__(self, loop):
        super().__init__()
        self.loop = loop


class Reserve(_AtLoop):
    """Room on the heap stacks that ``loop`` fills, before it starts."""


class ClearStacks(_AtLoop):
    """Drop what ``loop`` pushed (its reverse is skipped)."""


class Guard(_AtLoop):
    """The guard of the top-level ``loop``'s history, before it starts."""


class GuardIteration(_AtLoop):
    """The guard of the top-level ``loop``'s history, in each iteration."""


class Variant(ast.stmt):
    """What the replay writes where the plan keeps the partial of ``key`` (``kind``
    "partial": :func:`..plan.stacks.partial_of`) or the extents of the array ``key``
    ("shape": :func:`..plan.shape_reads.extents_of`) instead: ``body``, or nothing."""
    _fields = ("body",)

    def __init__(self, kind, key, body):
        super().__init__()
        self.kind, self.key, self.body = kind, key, body


class Snapshots(ast.stmt):
    """The copies of the arrays statement ``name`` reads (``own``: of its result) where
    the plan snapshots them, each pushed first (``popped``: their pops, in the sweep);
    ``label`` is the statement's block, ``loops`` and ``replaying`` what the replay had
    open around it."""
    _fields = ()

    def __init__(self, name, own, label, loops=(), replaying=0, popped=False):
        super().__init__()
        self.name, self.own, self.label, self.popped = name, own, label, popped
        self.loops, self.replaying = tuple(loops), replaying


class Choice(ast.expr):
    """The term of the rule of ``key``'s definition (``rule``), or the kept partial's
    (``partial``) where the plan keeps it."""
    _fields = ("key", "partial", "rule")     # (each a field: templates copy fields)

    def __init__(self, key, partial, rule):
        super().__init__()
        self.key, self.partial, self.rule = key, partial, rule


def chosen(plan, kind, key):
    """Does ``plan`` keep the partial (``kind`` "partial"), the extents ("shape") or
    snapshots ("snapshot") of ``key``?"""
    return key in {"partial": plan.partials, "shape": plan.kept_shapes,
                   "snapshot": plan.snapshots}[kind]


_DEFERRED = (Keep, Restore, Reserve, ClearStacks, Guard, GuardIteration)
#: Nodes that hold nothing to lower: names, constants, contexts and operators.
_LEAVES = frozenset([ast.Name, ast.Constant] + [
    c for base in (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
    for c in base.__subclasses__()])


def header_values(facts, h):
    """The values the statements of block ``h`` (a loop's header) define, its phis
    aside."""
    return {stmt.target.name for stmt in facts.fir.blocks[h].body
            if isinstance(stmt, ir.Assign) and not (isinstance(stmt.value, ir.Expr)
                                                    and stmt.value.op == "phi")}


def lowerable(facts, draft_ir, plan):
    """Can ``draft_ir`` (built under a draft) be lowered under the settled ``plan``? Not
    where the plan changes more than what the IR leaves open: kept partials, kept shapes
    and snapshots the IR holds no variant for, checkpointed (not only guarded) loops,
    parallel loops and replays, the versions of loops and the cells summed over loops
    that checkpointed loops change, strided arrays kept on list stacks, and ``for`` loops
    over a range whose header defines a kept value (replayed as ``while`` loops then)."""
    if plan.parallel or plan.parallel_replay \
            or plan.sweep_assigned != draft_ir.plan.sweep_assigned \
            or plan.cell_sums != draft_ir.plan.cell_sums:
        return False
    for kind, keys in (("partial", plan.partials), ("shape", plan.kept_shapes),
                       ("snapshot", plan.snapshots)):
        if any(not chosen(draft_ir.plan, kind, k) and (kind, k) not in draft_ir.cx.variants
               for k in keys):
            return False        # (written as the IR's draft chose it, or as a variant)
    if plan.checkpointed and (plan.checkpoint_mode != "auto"
                              or any(c.marked for c in plan.checkpointed.values())):
        return False
    for name, spec in plan.value_stacks.items():
        t = plan.ty(facts, name)
        if spec.storage == "list" and getattr(t, "layout", "C") != "C":
            return False
    return not any(name in plan.value_stacks for h in draft_ir.cx.forward.plain
                   for name in header_values(facts, h))    # (see Forward.plain_range)


def lower(tree, cx):
    """Lower the open nodes of ``tree`` (built under a draft) under ``cx.plan``, now the
    settled plan."""
    _expand_snapshots(tree.body, cx)
    loop_stacks = {}
    for node in cx.keeps:
        st = _stack(cx, node)
        if st is not None:
            for h in node.loops:
                loop_stacks.setdefault(h, set()).add(st)
    _Lowering(cx, loop_stacks).statements(tree.body)


def _expand_snapshots(body, cx):
    """Write each :class:`Snapshots` node of the statement list ``body`` (and those
    nested in it) as the settled plan's copies, pushes and pops: :class:`Keep` and
    :class:`Restore` nodes as the draft writes them, lowered with the others."""
    out = []
    for s in body:
        if s.__class__ is not Snapshots:
            reversible = getattr(s, "reversible", None)
            if reversible is not None:      # (its two parts, counted again)
                part, back = s.body[:reversible[0]], s.body[reversible[0]:]
                _expand_snapshots(part, cx)
                _expand_snapshots(back, cx)
                s.body, s.reversible = part + back, (len(part), reversible[1])
            else:
                for f in ("body", "orelse"):
                    nested = getattr(s, f, None)
                    if nested:
                        _expand_snapshots(nested, cx)
                        if not nested:
                            nested.append(ast.Pass())   # (a block needs a statement)
            out.append(s)
            continue
        copies = cx.plan.snapshots.get(s.name, {})
        if not copies:
            continue
        L = Lines()
        saved = cx.draft, cx.open_loops, cx.fused.replaying
        cx.draft, cx.open_loops, cx.fused.replaying = True, list(s.loops), s.replaying
        try:
            if s.popped:
                cx.reverse.snapshot_pops(L, s.name, copies, s.own, s.label)
            else:
                cx.forward.snapshots(L, s.name, copies, s.own, s.label)
        finally:
            cx.draft, cx.open_loops, cx.fused.replaying = saved
        out.extend(body_of(L.lines))
    body[:] = out


def _stack(cx, node):
    if node.record is not None:
        return cx.record_stack(node.record)
    return cx.value_stack(node.value)


class _Lowering:
    def __init__(self, cx, loop_stacks):
        self.cx = cx
        self.loop_stacks = loop_stacks

    def statements(self, body):
        """Lower a statement list in place; False when it is left empty."""
        out = []
        for s in body:
            out.extend(self.statement(s))
        body[:] = out
        return bool(out)

    def statement(self, s):
        cls, cx = s.__class__, self.cx
        if cls in _DEFERRED:
            return self.deferred(s)
        if cls is Variant:
            if not chosen(cx.plan, s.kind, s.key):
                return []
            self.statements(s.body)
            return s.body
        if cls is ast.Assign and s.value.__class__ is Read and s.value.read.restores_input:
            got = self.read(s.value)
            if isinstance(got, ast.Name) and got.id == s.targets[0].id:
                return []       # still in its variable: nothing to restore
            cx.parallel.note_assigned(s.value.read.value)
            s.value = got
            return [s]
        reversible = getattr(s, "reversible", None)
        if reversible is not None:
            return self.guarded_node(s, reversible)
        self.fields(s)
        return [s]

    def guarded_node(self, s, reversible):
        """A node of a guarded sequence: ``reversible`` is the count of its statements that
        reverse the node, and, where the node is skipped when they are none, the states
        it maps (``(state, state before)``)."""
        count, skip = reversible
        body, back = s.body[:count], s.body[count:]
        has_body = self.statements(body)
        has_back = self.statements(back)
        self.fields(s, skip_body=True)
        if not has_body and skip is not None:
            self.cx.states.skip(*skip)
            return []
        if not has_body and not has_back:
            return []
        s.body = body + back
        return [s]

    def fields(self, node, skip_body=False):
        for f in node._fields:
            if skip_body and f == "body":
                continue
            v = getattr(node, f, None)
            cls = v.__class__
            if cls is list:
                if v and isinstance(v[0], ast.stmt):
                    if not self.statements(v):
                        v.append(ast.Pass())     # (Python needs a statement in a block)
                    continue
                for k, x in enumerate(v):
                    if x.__class__ not in _LEAVES and isinstance(x, ast.AST):
                        v[k] = self.expression(x)
            elif cls not in _LEAVES and isinstance(v, ast.AST):
                setattr(node, f, self.expression(v))

    def expression(self, x):
        cls = x.__class__
        if cls is Read:
            return self.read(x)
        if cls is Choice:
            return self.expression(x.partial if x.key in self.cx.plan.partials else x.rule)
        self.fields(x)
        return x

    def read(self, node):
        r = node.read
        adjoints = self.cx.adjoints
        if r.shape:
            return value(adjoints.ref_shape(r.value))
        return value(adjoints.ref(read_value(r, self.cx.plan)))

    def deferred(self, s):
        cx, cls = self.cx, s.__class__
        if cls is Keep:
            st = _stack(cx, s)
            if st is None:
                return []
            return [cx.push_statement(st, s.pushed, s.t)]
        if cls is Restore:
            st = _stack(cx, s)
            return [] if st is None else [cx.pop_statement(st, s.into, cx.type_of(s.value))]
        if cls is Reserve:
            return reserve_statements(cx.stack_specs(), s.loop)
        if cls is ClearStacks:
            return [cx.clear_statement(st)
                    for st in sorted(self.loop_stacks.get(s.loop.header, ()))]
        L = Lines()
        if cls is Guard:
            cx.checkpoint.guard(L, s.loop)
        else:
            cx.checkpoint.guard_iteration(L, s.loop)
        return body_of(L.lines)
