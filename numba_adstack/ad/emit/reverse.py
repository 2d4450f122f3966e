"""The reverse sweep: the replayed code walked backwards, accumulating adjoints.

A region is reversed from where it was left back to its entry, using dominators: where
several edges reached a node, the record made in the replay says which one to walk back.
A loop is reversed as a count-down ``while`` over its recorded (or recomputed) iteration
count, after first reversing the partial last iteration that ended at the exit. Each
statement's adjoint comes from :mod:`.adjoints`; right after reversing the definition of a
kept value, its old value is popped back ("restore" semantics: at every point of the sweep
each variable holds the value it had at the same point of the replay).
"""
import ast

from numba.core import ir, types

from ..plan.shape_reads import extents_of
from ..plan.shapes import ancestors, join_leaves
from ..plan.stacks import partial_of
from ..facts.structure import LoopNode, node_key
from ..typeinfo import array_zero_expr, has_scalar_adjoint, is_float_array, \
    zero_expr
from .constants import ZERO
from .contributions import (Add, Assigned, Atomic, Guarded, Into, Scaled, ThroughView,
                            ToValue)
from . import lists
from .replay import range_index
from ..generated_source.code import call, expr, top_statements
from .lowering import Snapshots


#: ``if``/``elif`` tests of a join's arms: one record number, or up to one.
_BRANCH = {True: ("if {} == {}:", "if {} <= {}:"), False: ("elif {} == {}:", "elif {} <= {}:")}


class Reverse:
    def __init__(self, cx):
        self.cx = cx
        self.facts = cx.facts
        self.names = cx.names
        self._resets = None     # adjoints to reset when the block being reversed is done

    # ------------------------------------------------------------------ the function
    def top(self, L):
        facts = self.facts
        lists.declarations(self.cx, L)
        Rt = facts.s.regions[None]
        rbs = facts.return_blocks
        if len(rbs) == 1:
            self.seed(L, rbs[0])
            self.region_from(L, Rt, rbs[0])
            return
        # Several returns: seed the one taken, then walk back from it.
        var = self.state_var(Rt)
        for k, b in enumerate(rbs):
            with L.block("if _rsite == {}:" if k == 0 else "elif _rsite == {}:", k):
                self.seed(L, b)
                L.code("{} = {}", var, self.state(Rt, b))
        self.guarded(L, Rt, var, rbs)

    def seed(self, L, label):
        if not self.facts.target.returns_value:
            return
        ret = self.facts.fir.blocks[label].terminator.value
        if ret.name in self.cx.activity.useful:
            L.code("{} = _ret_b", self.names.bar(ret))

    # ------------------------------------------------------------------ regions
    def seq(self, L, R, n, stop):
        """Reverse region ``R`` from node ``n`` back to (not including) ``stop``."""
        while n != stop:
            self.node(L, R, n)
            if n == R.entry:
                return
            ins = R.ins[n]
            if len(ins) == 1:
                self.edge(L, ins[0])
                n = R.node_of(ins[0][0])
                continue
            d = R.idom[n]
            cname = "_c%s" % node_key(n)
            self.record(L, cname, self.cx.region_loops(R), R.entry)
            shapes = self.cx.plan.shapes
            number = {e: k for k, e in enumerate(shapes.in_order(R, n))}
            self.join(L, R, shapes.join(R, n), cname, number, d)
            n = d

    def join(self, L, R, tree, cname, number, stop):
        """Reverse the edges of a join tree (:func:`..plan.shapes.join_tree`) back to
        ``stop``: one arm per branch, chosen by the range of record numbers it holds;
        the branch node itself once, after them."""
        kind = tree[0]
        if kind == "edge":
            e = tree[1]
            self.edge(L, e)
            p = R.node_of(e[0])
            if p != stop:
                self.seq(L, R, p, stop)
            return
        arms = [("edge", e) for e in tree[1]] if kind == "flat" else tree[2]
        b = stop if kind == "flat" else tree[1]
        for k, arm in enumerate(arms):
            last = [number[e] for e in join_leaves(arm)]
            if k == len(arms) - 1:
                opened = L.block("else:")
            elif len(last) == 1:
                opened = L.block(_BRANCH[k == 0][0], cname, last[0])
            else:
                opened = L.block(_BRANCH[k == 0][1], cname, last[-1])
            with opened:
                self.join(L, R, arm, cname, number, b)
        if b != stop:
            self.seq(L, R, b, stop)

    def region_from(self, L, R, start):
        """Reverse region ``R`` from node ``start`` back to its entry."""
        if self.cx.plan.shapes.reverse_structured(R, start):
            self.seq(L, R, start, None)
        else:
            var = self.state_var(R)
            L.code("{} = {}", var, self.state(R, start))
            self.guarded(L, R, var, [start])

    def state_var(self, R):
        # One name serves every region: a region's state is dead while a loop nested in
        # one of its nodes runs (the node sets it again when the loop is done).
        return "_rv"

    def state(self, R, n):
        return self.cx.states.marker(R, R.order.index(n))

    def guarded(self, L, R, var, starts):
        """Reverse ``R`` as a guarded sequence (see :mod:`..plan.shapes`) from the node
        whose number ``var`` holds (one of ``starts``) back to the entry: each node once,
        in reverse topological order, under ``if var == node:``; each sets the node the
        path came from. A node with nothing to reverse is left out (see :mod:`.states`)."""
        keep = ancestors(R, starts)
        for n in reversed(R.order):
            if n not in keep:
                continue
            body = L.sub(L.level + 1)
            self.node(body, R, n)
            back = L.sub(L.level + 1)
            if n != R.entry:
                self.back_to_pred(back, R, n, var)
            if not body.lines and n != R.entry and len(R.ins[n]) == 1 \
                    and len(back.lines) == 1:
                self.cx.states.skip(self.state(R, n), self.state(R, R.node_of(R.ins[n][0][0])))
                continue
            if body.lines or back.lines:
                m = L.mark()
                with L.block("if {} == {}:", var, self.state(R, n)):
                    L.extend(body)
                    L.extend(back)
                if self.cx.draft and body.lines:
                    # Its restores may be all it has (lowering.py): skipped as above then.
                    skip = None
                    if n != R.entry and len(R.ins[n]) == 1 and len(back.lines) == 1:
                        skip = (self.state(R, n), self.state(R, R.node_of(R.ins[n][0][0])))
                    L.lines[m][1].reversible = (top_statements(body), skip)

    def back_to_pred(self, L, R, n, var):
        """Reverse the edge the path took into ``n``; set ``var`` to where it came from."""
        ins = R.ins[n]
        if len(ins) == 1:
            self.edge(L, ins[0])
            L.code("{} = {}", var, self.state(R, R.node_of(ins[0][0])))
            return
        cname = "_c%s" % node_key(n)
        self.record(L, cname, self.cx.region_loops(R), R.entry)
        ins = self.cx.plan.shapes.in_order(R, n)
        for k, e in enumerate(ins):
            with L.arm(k, len(ins), cname):
                self.edge(L, e)
                L.code("{} = {}", var, self.state(R, R.node_of(e[0])))

    def record(self, L, name, loops, block, into=None):
        """Pop a control-flow record made in a loop of its unit (a local otherwise) into
        ``into`` (its own name by default); whether it popped."""
        if self.cx.plan.sites.site_loops(loops, block):
            self.cx.restore(L, record=name, into=into or name)
            return True
        return False

    def node(self, L, R, n):
        cx = self.cx
        if not isinstance(n, LoopNode):
            # Adjoints are reset once the block is reversed: nothing else in the block
            # reads them (SSA), and reading them unreset lets temporaries fold into uses.
            self._resets = []
            for stmt in reversed(self.facts.fir.blocks[n].body):
                self.stmt(L, n, stmt)
            for g, zero in self._resets:
                L.code("{} = {}", g, zero)
            self._resets = None
            return
        if n in cx.plan.replayed:
            cx.fused.sweep(L, n)
            return
        if n in cx.plan.fused:
            # Reversed already, iteration by iteration; a sum's final value depends on its
            # initial value with slope one.
            for phi, members, outflow, seed in cx.plan.fused[n]:
                L.code("{} = {}", self.names.bar(phi), cx.fused.seed_name(phi))
            return
        outs = cx.plan.skippable.get(n)
        if outs is None:
            self.loop(L, n)
            return
        # Nothing flows back into the loop: skip its reverse, drop its history.
        test = [expr("{} != 0.0", self.names.bar(o)) for o in outs]
        with L.open(ast.If(test=test[0] if len(test) == 1 else
                           ast.BoolOp(op=ast.Or(), values=test), body=[], orelse=[])):
            self.loop(L, n)
        with L.block("else:"):
            cx.clear_loop_stacks(L, n)

    # ------------------------------------------------------------------ loops
    def loop(self, L, lp):
        with self.cx.summing_cells(L, lp):
            self.cx.versions.loop(L, lp, lambda L: self._loop(L, lp))

    def _loop(self, L, lp):
        facts, cx = self.facts, self.cx
        h = lp.header
        if cx.checkpoint.applies(lp):
            cx.checkpoint.sweep(L, lp)
            return
        loops = facts.s.enclosing(h)[1:]
        if facts.counted(lp) and cx.plan.sites.site_loops(loops, h):
            if lp.range.array is not None:
                L.code("{} = len({})", "_n%d" % h, cx.adjoints.ref(lp.range.array))
            else:
                L.code("{} = len({})", "_n%d" % h,
                       call("range", [cx.adjoints.ref(a) for a in lp.range.args]))
        else:
            straight = cx.plan.shapes.straight_exits(lp)
            # An entered loop counts down its count at once: pop it there.
            if not straight and self.record(L, "_n%d" % h, loops, h, into="_m%d" % h):
                if len(lp.exits) > 1:
                    self.record(L, "_x%d" % h, loops, h)
                self.entered_loop(L, lp, counted=True)
                return
            self.record(L, "_n%d" % h, loops, h)
        if len(lp.exits) > 1:
            self.record(L, "_x%d" % h, loops, h)
        if cx.plan.shapes.straight_exits(lp):
            self.counted_loop(L, lp)
        else:
            self.entered_loop(L, lp)

    def counted_loop(self, L, lp):
        """The partial last iteration (a straight chain from the header) reversed apart,
        then a count-down over the full iterations."""
        facts = self.facts
        h = lp.header
        Rl = facts.s.regions[lp]
        if len(lp.exits) > 1:
            for k, (src, dst) in enumerate(lp.exits):
                with L.arm(k, len(lp.exits), "_x%d" % h):
                    self.set_index(L, lp, "_n%d" % h)
                    self.seq(L, Rl, Rl.node_of(src), None)
        else:
            self.set_index(L, lp, "_n%d" % h)
            self.seq(L, Rl, Rl.node_of(lp.exits[0][0]), None)
        mvar = "_m%d" % h
        # A count-down ``while`` rather than ``range(n - 1, -1, -1)``: LLVM then knows the
        # index is never negative and drops NumPy's wraparound from every access.
        L.code("{} = {}", mvar, "_n%d" % h)
        with L.block("while {} > 0:", mvar):
            L.code("{} -= 1", mvar)
            self.set_index(L, lp, mvar)
            if len(lp.latches) == 1:
                self.edge(L, (lp.latches[0], h))
                self.region_from(L, Rl, Rl.node_of(lp.latches[0]))
            else:
                self.back_edge(L, lp, Rl)
                self.guarded(L, Rl, self.state_var(Rl),
                             [Rl.node_of(b) for b in lp.latches])

    def back_edge(self, L, lp, Rl):
        """Reverse the back edge the iteration took; set the state to its latch."""
        h = lp.header
        var = self.state_var(Rl)
        if len(lp.latches) == 1:
            self.edge(L, (lp.latches[0], h))
            L.code("{} = {}", var, self.state(Rl, Rl.node_of(lp.latches[0])))
            return
        self.record(L, "_l%d" % h, self.facts.s.enclosing(h), h)
        for k, latch in enumerate(lp.latches):
            with L.arm(k, len(lp.latches), "_l%d" % h):
                self.edge(L, (latch, h))
                L.code("{} = {}", var, self.state(Rl, Rl.node_of(latch)))

    def entered_loop(self, L, lp, counted=False):
        """One copy of the body's reverse serves the partial last iteration and the full
        ones: each pass enters it at the node its iteration ended on (an exit, then a back
        edge), then reverses the back edge before the pass for the iteration before.
        ``counted``: its count is in ``_m<header>`` already."""
        h = lp.header
        Rl = self.facts.s.regions[lp]
        var = self.state_var(Rl)
        srcs = [Rl.node_of(src) for src, _ in lp.exits]
        mvar = "_m%d" % h
        if not counted:
            L.code("{} = {}", mvar, "_n%d" % h)
        if len(srcs) == 1:
            L.code("{} = {}", var, self.state(Rl, srcs[0]))
        else:
            for k, s in enumerate(srcs):
                with L.arm(k, len(srcs), "_x%d" % h):
                    L.code("{} = {}", var, self.state(Rl, s))
        # Adjoints the back edge assigns are read above it in the text: define them.
        for latch in lp.latches:
            for t, v in self.facts.edge_copies((latch, h)):
                if isinstance(v, ir.Var) and v.name in self.cx.plan.direct:
                    L.code("{} = {}", self.names.bar(v), ZERO)
        with L.block("while True:"):
            self.set_index(L, lp, mvar)
            starts = list(dict.fromkeys(srcs + [Rl.node_of(b) for b in lp.latches]))
            if len(starts) == 1 and self.cx.plan.shapes.reverse_structured(Rl, starts[0]):
                self.seq(L, Rl, starts[0], None)
            else:
                self.guarded(L, Rl, var, starts)
            with L.block("if {} == 0:", mvar):
                L.code("break")
            L.code("{} -= 1", mvar)
            self.back_edge(L, lp, Rl)

    def set_index(self, L, lp, counter):
        """Recompute the loop's index (and array position) for iteration ``counter``."""
        rl = lp.range
        if rl is not None and rl.array is not None:
            L.code("{} = {}", "_it%d" % lp.header, counter)
        if rl is None or rl.first is None or not self.cx.plan.recompute.is_rc(rl.first):
            return
        value = range_index(rl, counter, self.cx.adjoints.ref)
        seq = None if rl.array is None else self.facts.ty(rl.array)
        if seq is not None and not isinstance(seq, types.Array):
            # A list raises on a read past its end (the sweep's first pass reads at the
            # trip count; its value is not used then).
            value = expr("{} if {} < len({}) else {}", value, counter,
                         self.cx.adjoints.ref(rl.array), zero_expr(seq.dtype))
        L.code("{} = {}", self.names.n(rl.first), value)

    # ------------------------------------------------------------------ edges, statements
    def edge(self, L, e):
        """Reverse the phi copies of edge ``e``: adjoints flow back, kept values pop."""
        cx, names = self.cx, self.names
        cps = self.facts.edge_copies(e)
        # (a phi that always names one array shares that array's adjoint: nothing flows)
        flt = [(t, v) for t, v in cps if t.name in cx.activity.useful
               and self.facts.phi_alias(t.name) is None]
        targets = {t.name for t, _ in cps}
        if any(isinstance(v, ir.Var) and (v.name in targets or (
                is_float_array(self.facts.ty(v)) and self.facts.array_root(v.name)
                in targets)) for _, v in flt):
            # A swap (a, b = b, a; for arrays also through aliases, whose adjoint is
            # their root's): read every adjoint before any is reset.
            tmps = []
            for t, v in flt:
                tmp = "_t" + names.bar(t)
                L.code("{} = {}", tmp, names.bar(t))
                tmps.append(tmp)
            for t, v in flt:
                L.code("{} = {}", names.bar(t), self.zero(t.name))
            for (t, v), tmp in zip(flt, tmps):
                self.flow(L, v, tmp, t.name in cx.activity.array_values)
        else:
            for t, v in flt:
                self.flow(L, v, names.bar(t), t.name in cx.activity.array_values)
                L.code("{} = {}", names.bar(t), self.zero(t.name))
        if cx.plan.sites.edge_pushes(e):
            for t, _ in reversed(cps):
                cx.restore(L, t.name)

    def flow(self, L, v, src, maybe_unset=False):
        """Add the adjoint ``src`` of a phi into the adjoint of its incoming value ``v``;
        ``maybe_unset``: ``src`` may be an array value's *no adjoint yet*."""
        cx, names = self.cx, self.names
        if not (isinstance(v, ir.Var) and v.name in cx.activity.useful):
            return
        direct = v.name in cx.plan.direct
        if has_scalar_adjoint(self.facts.ty(v)):
            L.code("{} = {}" if direct else "{} += {}", names.bar(v), src)
        elif v.name in cx.activity.array_values:
            if direct:
                # A phi's adjoint may be *no adjoint yet* here (reset by the iteration
                # reversed before, nothing in the loop read it): assigned, it must still
                # have the value's shape when the value's rule reads it.
                src = expr("ensure({}, {})", src, cx.adjoints.ref_shape(v))
            self.accumulate(L, ToValue(v.name, src), {v.name: None} if direct else ())
        else:                       # memory given or made, a view, an alias of a value
            for c in cx.adjoints.array_target(v, src, shaped=True):
                self.make_adjoints(L)
                if maybe_unset and isinstance(c, ThroughView):
                    # (nothing reached the phi: nothing to add, and nothing to read)
                    L.code("add_adjoint({}, {})", c.adjoint, c.source)
                else:
                    self.accumulate(L, c)

    def stmt(self, L, label, stmt):
        if lists.reverse_statement(self, L, stmt):
            return
        if isinstance(stmt, ir.Assign):
            self.assign(L, label, stmt)
        elif isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            self.store(L, stmt)

    def assign(self, L, label, stmt):
        cx, facts, names = self.cx, self.facts, self.names
        name, e = stmt.target.name, stmt.value
        if isinstance(e, ir.Expr) and e.op == "phi":
            return
        upd = facts.target.atomic_update(facts, stmt)
        if upd is not None:
            arr, idx, val = upd
            if val.name in cx.activity.useful:
                L.code("{} += {}[{}]", names.bar(val), cx.adjoints.ref_bar(arr),
                       cx.adjoints.ref(idx))
            return
        cx.adjoints.array_definition(L, name, e)
        if isinstance(e, ir.Expr) and e.op == "inplace_binop" \
                and is_float_array(facts.ty(name)) and facts.array_root(name) != name \
                and facts.array_root(name) in cx.activity.useful_roots:
            contributions = cx.adjoints.inplace_store(name, e)
            self.make_adjoints(L)
            for c in contributions:
                self.accumulate(L, c)
        if cx.activity.array_adjoints.get(name) == "new" and \
                cx.plan.sites.site_repeats(label):
            # The adjoint of the array the iteration before made.
            self.make_adjoints(L)
            L.code("{} = np.zeros_like({})", names.bar(name), cx.adjoints.ref(name))
        if name in cx.activity.useful and not isinstance(e, ir.Arg) and (
                has_scalar_adjoint(facts.ty(name)) or name in cx.activity.array_values):
            direct = {v: use for v, use in cx.plan.direct.items() if use is stmt}
            contributions = cx.adjoints.contributions(name, e)
            if contributions and name in cx.activity.array_values and \
                    not self._reached_in_block(label, stmt, name):
                # Nothing may have reached it (a use in a branch not taken, the last
                # iteration of a loop tested at its end): a rule reads its adjoint as an
                # array of its value's shape, never as the size-0 "nothing yet".
                L.code("{0} = ensure({0}, {1})", names.bar(name),
                       cx.adjoints.ref_shape(name))
            self.make_adjoints(L)
            for c in contributions:
                self.accumulate(L, c, direct)
            for v in direct:        # this read adds nothing into it
                L.code("{} = {}", names.bar(v), self.zero(v))
            if name not in cx.plan.direct and name not in cx.activity.array_adjoints:
                self._resets.append((names.bar(name), self.zero(name)))
        for d in reversed(cx.plan.kept_shapes.get(name, ()) or self._variant_extents(name)):
            self.pop_value(L, d, label)
        copies = cx.plan.snapshots.get(name, {})
        self.snapshot_pops(L, name, copies, True, label)
        if name in cx.plan.partials:
            self.pop_value(L, cx.plan.partials[name][0], label)
        elif ("partial", name) in cx.variants:
            self.pop_value(L, partial_of(facts, name)[0], label)
        self.pop_value(L, name, label)
        self.snapshot_pops(L, name, copies, False, label)

    def _reached_in_block(self, label, stmt, name):
        """Does a statement after ``stmt`` in its block add into ``name``'s adjoint
        whenever the block runs (its reverse, before this one's, always writes it)?"""
        facts, useful = self.facts, self.cx.activity.useful
        body = facts.fir.blocks[label].body
        later = body[body.index(stmt) + 1:]
        for _, use in facts.uses.get(name, ()):
            if not any(use is s for s in later):
                continue
            if isinstance(use, ir.Assign) and isinstance(use.value, ir.Var):
                if self._reached_in_block(label, use, use.target.name):   # an alias
                    return True
            elif isinstance(use, ir.Return) or (
                    isinstance(use, ir.Assign) and use.target.name in useful
                    and not (isinstance(use.value, ir.Expr) and use.value.op == "phi")):
                return True
        return False

    def snapshot_pops(self, L, name, copies, own, label):
        """Pop the snapshots of :meth:`.replay.Forward.snapshots` back, in reverse; under
        a draft plan, left open (lowering.Snapshots)."""
        cx = self.cx
        if cx.draft and name not in cx.plan.snapshots:
            L(Snapshots(name, own, label, popped=True))
            return
        for x, c in sorted(copies.items(), reverse=True):
            if (x == name) == own:
                self.pop_value(L, c, label)

    def make_adjoints(self, L):
        """Make the adjoints of computed arrays that the next lines add into in place
        (element by element, or through a view)."""
        adj = self.cx.adjoints
        for v in sorted(adj.made):
            L.code("{0} = ensure({0}, {1})", self.names.bar(v), adj.ref_shape(v))
        adj.made.clear()

    def zero(self, name):
        """The reset value of ``name``'s adjoint."""
        t = self.facts.ty(name)
        return array_zero_expr(t) if is_float_array(t) else ZERO

    def accumulate(self, L, c, direct=()):
        """Write contribution ``c`` (a record of :mod:`.contributions`); ``direct``: the
        values whose adjoint it assigns, being their only contribution (plan/direct.py)."""
        names = self.names
        if isinstance(c, ToValue):      # a computed array's own adjoint
            bar = names.bar(c.value)
            if direct and c.value in direct:
                direct.pop(c.value)
                L.code("{} = {}", bar, c.source)
            elif c.into is not None:    # the rule adds it in place (adjoints.array_target)
                L.code("{0} = ensure({0}, {1})", bar, self.cx.adjoints.ref_shape(c.value))
                L(c.into.statement(out=bar))
            else:
                L.code("{0} = acc({0}, {1}, {2})", bar, c.source,
                       self.cx.adjoints.ref_shape(c.value))
        elif isinstance(c, Add):
            for v in list(direct):
                if names.bar(v) == c.adjoint:
                    del direct[v]
                    L.code("{} = {}", c.adjoint, c.source)
                    return
            L.code("{} += {}", c.adjoint, c.source)
        elif isinstance(c, Scaled):     # an adjoint array becomes a function of itself
            tmp = self.names.fresh("view")
            L.code("{} = {}", tmp, c.adjoint)
            L.code("{}[...] = {}", tmp, c.scaled.tree(g=tmp))
        elif isinstance(c, Into):       # a helper's call adding it in place, no temporary
            L(c.statement())
        elif isinstance(c, Assigned):   # the element's one contribution (plan/assigned.py)
            L.code("{} = {}", c.cell, c.source)
        elif isinstance(c, Atomic):
            L(self.facts.target.atomic_add_statement(c.array, c.index, c.source))
        elif isinstance(c, Guarded):
            with L.block("if {}:", c.test):
                L.code("{} += {}", c.cell, c.source)
        elif isinstance(c, ThroughView):
            # In place, through a view when the adjoint is a slice of another.
            tmp = self.names.fresh("view")
            L.code("{} = {}", tmp, c.adjoint)
            L.code("{} += {}", tmp, c.source)
        else:
            raise AssertionError("unknown contribution %r" % (c,))

    def _variant_extents(self, name):
        """The extents the replay's variant for ``name`` assigns (lowering.Variant)."""
        cx = self.cx
        if ("shape", name) not in cx.variants:
            return ()
        return extents_of(self.facts, cx.plan.recompute, name, cx.plan.ty(self.facts, name))

    def pop_value(self, L, name, label):
        if self.cx.plan.sites.site_repeats(label):
            self.cx.restore(L, name)

    def store(self, L, stmt):
        cx, facts = self.cx, self.facts
        if not is_float_array(facts.ty(stmt.target)):
            return
        if facts.array_root(stmt.target.name) not in cx.activity.useful_roots and \
                not facts.target.seeds_store(facts, stmt):
            return
        v = stmt.value
        seeded = cx.plan.element_seeds.get(facts.array_root(stmt.target.name))
        if seeded is not None:
            # Its elements' adjoints are known before the sweep: those of a map loop's
            # outputs, or given by a later loop that reads them.
            if v.name in cx.activity.useful and seeded[1][0] == "indexed":
                cx.indexed.store(L, stmt, self.names.bar(v))
            elif v.name in cx.activity.useful:
                L.code("{} += {}", self.names.bar(v), cx.fused.element_seed(stmt))
            return
        idx = cx.src.store_index(stmt, cx.adjoints.ref)
        cell = expr("{}[{}]", cx.adjoints.ref_bar(stmt.target), idx)
        # a[idx] = v with an index array: a cell written twice keeps the last value.
        stored = expr("last_writes({}, {}, {})", cell, cx.adjoints.ref(stmt.target), idx) \
            if facts.store_by_index_array(stmt) else expr("{}.copy()", cell)
        if v.name in cx.activity.useful and not (
                is_float_array(facts.ty(v)) and id(stmt) in facts.inplace_stores):
            # (a[i] += e on a row: the in-place update into a's memory did it all.)
            if is_float_array(facts.ty(v)) and \
                    facts.array_root(v.name) == facts.array_root(stmt.target.name):
                # u[1:] = u[:-1]: the store copies as through a temporary, and b's adjoint
                # is a view of the one being cleared: the region's taken, then cleared,
                # then added.
                tmp = self.names.fresh("stored")
                self.make_adjoints(L)
                L.code("{} = {}", tmp, stored)
                L.code("{} = 0.0", cell)
                for c in cx.adjoints.array_target(v, tmp):
                    self.make_adjoints(L)
                    self.accumulate(L, c)
                return
            if is_float_array(facts.ty(v)):
                # a[i:j] = b: b's adjoint is the region's, taken before it is cleared.
                for c in cx.adjoints.array_target(v, stored):
                    self.make_adjoints(L)
                    self.accumulate(L, c)
            elif facts.store_is_region(stmt):
                self.make_adjoints(L)
                L.code("{} += np.sum({})", self.names.bar(v), stored)  # one value, many cells
            else:
                self.make_adjoints(L)
                L.code("{} += {}", self.names.bar(v), cell)
        self.make_adjoints(L)
        if id(stmt) not in facts.inplace_stores:
            L.code("{} = 0.0", cell)
