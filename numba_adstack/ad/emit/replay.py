"""The forward replay: the function's own code again, pushing what the sweep will need.

Code is emitted region by region (:mod:`..facts.structure`): a branch becomes ``if``/``else`` up
to its post-dominator, a loop ``while True`` with ``continue`` on its back edges and
``break`` on its exits (a ``range`` loop left only when exhausted: ``for i in range(n)``).
Before a kept value is overwritten its old value is pushed; where arms merge inside a
loop, which arm arrived is pushed too (a local where the merge runs once per reversal
unit); a loop records its iteration count and the exit it took.
"""
from numba.core import ir, types
from numba.typed import Dict as TypedDict

from ..facts.ir_facts import is_range
from ..facts.operators import NODES
from ..facts.structure import LoopNode, node_key
from ..plan.shape_reads import extents_of
from ..plan.stacks import partial_of
from ..typeinfo import array_placeholder_expr, zero_expr
from ..rules.template import template
from ..generated_source.code import attribute, call, expr, fill, targets
from ..generated_source.code import stmt as statement
from .lowering import Keep, Snapshots, Variant, header_values


def range_start(L, rl, operand):
    """Set a range loop's counter state before its first iteration; ``operand`` renders
    its bounds (or the iterated array)."""
    if rl.array is not None:
        L.code("{} = len({})", rl.len, operand(rl.array))
    else:
        L.code("{} = len({})", rl.len, call("range", [operand(a) for a in rl.args]))
    L.code("{} = 0", rl.ctr)


def range_index(rl, counter, r):
    """The value a range (or array) loop yields at iteration ``counter``."""
    if rl.array is not None:
        return expr("{}[{}]", r(rl.array), counter)
    args = rl.args
    if len(args) == 1:
        return counter
    if len(args) == 2:
        return expr("{} + {}", r(args[0]), counter)
    return expr("{} + {} * {}", r(args[0]), counter, r(args[2]))


class Forward:
    def __init__(self, cx):
        self.cx = cx
        self.facts = cx.facts
        self.src = cx.src
        self.plain = set()      # headers of the loops replayed as ``for i in range(n)``

    # ------------------------------------------------------------------ regions
    def region(self, L, region):
        """Emit a whole region (the function body, or a loop body inside its ``while``)."""
        if self.cx.plan.shapes.forward_structured(region):
            self.seq(L, region, region.entry, None)
        else:
            self.guarded(L, region)

    def guarded(self, L, R):
        """Emit ``R`` as a guarded sequence (see :mod:`..plan.shapes`): each node once, in
        topological order, under ``if _fw == node:``; each sets the node that follows."""
        var = "_fw"     # one name for every region, as in Reverse.state_var
        states = self.cx.states
        ids = {n: states.marker(R, k, sweep=False) for k, n in enumerate(R.order)}
        L.code("{} = {}", var, ids[R.entry])
        for n in R.order:
            with L.block("if {} == {}:", var, ids[n]):
                if not self.node(L, R, n):
                    continue
                edges = R.out[n]
                if len(edges) == 1:
                    self.goto(L, R, edges[0], var, ids)
                elif isinstance(n, LoopNode):
                    for k, e in enumerate(edges):
                        with L.arm(k, len(edges), "_x%d" % n.header):
                            self.goto(L, R, e, var, ids)
                else:
                    term = self.facts.fir.blocks[n].terminator
                    with L.block("if {}:", self.src.operand(term.cond)):
                        self.goto(L, R, (n, term.truebr), var, ids)
                    with L.block("else:"):
                        self.goto(L, R, (n, term.falsebr), var, ids)

    def goto(self, L, R, e, var, ids):
        nxt = self.follow(L, R, e)
        if nxt is not None:
            L.code("{} = {}", var, ids[nxt])

    def node(self, L, R, n):
        """Emit node ``n`` of ``R``; False when it ends the function (no edge leaves it:
        a return or a raise)."""
        if isinstance(n, LoopNode):
            self.loop_node(L, n)
            return True
        self.block(L, n)
        if not R.out[n]:
            self.block_end(L, n, self.facts.fir.blocks[n].terminator)
            return False
        return True

    def loop_node(self, L, lp):
        if lp in self.cx.plan.fused:
            self.cx.fused.loop(L, lp)
        else:
            self.loop(L, lp)

    def seq(self, L, R, n, stop):
        """Emit region ``R`` from node ``n`` up to (not including) ``stop``."""
        while n is not None and n != stop:
            if not self.node(L, R, n):
                return
            edges = R.out[n]
            if len(edges) == 1:
                n = self.follow(L, R, edges[0])
                continue
            j = R.ipdom.get(n)
            if isinstance(n, LoopNode):
                for k, e in enumerate(edges):
                    with L.arm(k, len(edges), "_x%d" % n.header):
                        self.arm(L, R, e, j)
            else:
                term = self.facts.fir.blocks[n].terminator
                with L.block("if {}:", self.src.operand(term.cond)):
                    self.arm(L, R, (n, term.truebr), j)
                with L.block("else:"):
                    self.arm(L, R, (n, term.falsebr), j)
            n = j

    def arm(self, L, R, e, stop):
        nxt = self.follow(L, R, e)
        if nxt is not None and nxt != stop:
            self.seq(L, R, nxt, stop)

    def follow(self, L, R, e):
        """Emit what happens on edge ``e`` of region ``R``; the next node, if inside R."""
        cx = self.cx
        kind = R.edge_kind(e)
        lp = R.loop
        if kind == "exit" and lp is cx.helper_loop:
            L.code("break")     # never taken: the helper runs one iteration that exists
            return None
        if kind == "exit":
            if cx.fused.reverses(lp):
                cx.fused.iteration_reverse(L, lp, e)
            if len(lp.exits) > 1:
                L.code("{} = {}", "_x%d" % lp.header, lp.exits.index(e))
            L.code("break")
            return None
        if kind == "back":
            if lp in cx.plan.fused:
                if cx.fused.reverses(lp):
                    cx.fused.iteration_reverse(L, lp, e)
                self.copies(L, e)
            else:
                self.copies(L, e)
                if len(lp.latches) > 1:
                    self.record(L, "_l%d" % lp.header, lp.latches.index(e[0]),
                                self.facts.s.enclosing(lp.header), lp.header)
                if lp.header not in self.plain:
                    L.code("{} += 1", "_n%d" % lp.header)
            L.code("break" if lp is cx.helper_loop else "continue")
            return None
        self.copies(L, e)
        m = R.node_of(e[1])
        ins = R.ins[m]
        if len(ins) > 1:
            self.record(L, "_c%s" % node_key(m), cx.plan.shapes.in_order(R, m).index(e),
                        cx.region_loops(R), R.entry)
        return m

    # ------------------------------------------------------------------ records, pushes
    def record(self, L, name, value, loops, block):
        """Record a control-flow fact: pushed when made in a loop of its unit."""
        if self.cx.plan.sites.site_loops(loops, block):
            self.cx.keep(L, record=name, pushed=value)
        else:
            L.code("{} = {}", name, value)

    def record_after(self, L, name, loops, block):
        """Push a record that stays in its local when made once per unit."""
        if self.cx.plan.sites.site_loops(loops, block):
            self.cx.keep(L, record=name, pushed=name)

    def _strided_kept(self, name):
        """Is ``name`` a fresh array, not C-contiguous, that a list stack keeps?"""
        t = self.facts.ty(name)
        return (isinstance(t, types.Array) and t.layout != "C"
                and self.facts.computed_array(name) and self.cx.value_stack(name) is not None
                and self.cx.plan.stacks[self.cx.value_stack(name)].storage == "list")

    def push_value(self, L, name, label):
        """Push the old value of ``name`` before its definition in ``label`` runs again."""
        if self.cx.plan.sites.site_repeats(label):
            self.cx.keep(L, name)

    def copies(self, L, e):
        cps = self.facts.edge_copies(e)
        # A phi with no value on this edge (``for its in range(n)`` read after the loop:
        # undefined when the loop ran no iteration) takes a zero of its type, as Numba's
        # null value (an array an empty one), or nothing where it has none.
        cps = [(t, v) for t, v in cps if isinstance(v, ir.Var) or
               isinstance(self.facts.ty(t), (types.Number, types.Boolean, types.Array))]
        if not cps:
            return
        if self.cx.plan.sites.edge_pushes(e):
            for tgt, _ in cps:
                self.cx.keep(L, tgt.name)
        lhs = [self.cx.names.n(t) for t, _ in cps]
        rhs = [self._converted(v, t) if isinstance(v, ir.Var)
               else array_placeholder_expr(self.facts.ty(t))
               if isinstance(self.facts.ty(t), types.Array)
               else zero_expr(self.facts.ty(t)) for t, v in cps]
        if len(cps) == 1:
            L.code("{} = {}", lhs[0], rhs[0])
        else:
            L.code("{} = {}", targets(lhs), tuple(rhs))

    def _converted(self, v, t):
        """``v`` as a value of ``t``'s type: Numba unifies a variable assigned an integer
        and a float as a float, but stores what a tuple unpacking gives it as it is."""
        tt, vt = self.facts.ty(t), types.unliteral(self.facts.ty(v))
        src = self.src.operand(v)
        if isinstance(tt, types.Number) and isinstance(vt, types.Number) and tt != vt:
            return expr("{}({})", attribute("np", tt), src)
        return src

    # ------------------------------------------------------------------ blocks
    def block(self, L, label):
        for stmt in self.facts.fir.blocks[label].body:
            if isinstance(stmt, (ir.Jump, ir.Branch, ir.Return)):
                continue
            self.stmt(L, label, stmt)

    def block_end(self, L, label, term):
        facts = self.facts
        if isinstance(term, ir.Return):
            line = facts.target.return_statement(self.src.operand(term.value))
            if line is not None:
                L(line)
            if len(facts.return_blocks) > 1:
                L.code("_rsite = {}", facts.return_blocks.index(label))
        elif isinstance(term, ir.StaticRaise):
            args = () if term.exc_args is None else [self.src.const(a) for a in term.exc_args]
            L.code("raise {}", call(self.cx.names.gname(term.exc_class), args))
        elif isinstance(term, ir.DynamicRaise):     # (a raise of a checked backward)
            args = () if term.exc_args is None else [
                self.src.operand(a) if isinstance(a, ir.Var) else self.src.const(a)
                for a in term.exc_args]
            L.code("raise {}", call(self.cx.names.gname(term.exc_class), args))
        elif isinstance(term, ir.Raise):
            L.code("raise {}", self.cx.names.n(term.exception))
        else:
            facts.error("the block terminator %s" % term, term.loc)

    def stmt(self, L, label, stmt):
        if isinstance(stmt, ir.Assign):
            self.assign(L, label, stmt)
        elif isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
            if not self.facts.target.replays_store(self.facts, stmt) \
                    or self.cx.fused.stored_already(label):
                return
            idx = self.src.store_index(stmt, self.src.operand)
            if not self.facts.s.enclosing(label) and self.cx.indexed.wrapped_arrays():
                where = ("store", label, self.facts.fir.blocks[label].body.index(stmt))
                self.cx.indexed.check_stores(L, where, self.src.operand)
            L.code("{}[{}] = {}", self.cx.names.n(stmt.target), idx,
                   self.src.operand(stmt.value))
        elif isinstance(stmt, ir.Print):
            # Printed once per call, as the primal prints: by the replay, not by a loop
            # the sweep runs again.
            if not self.cx.fused.sweeping and stmt.vararg is None:
                L.code("{}", call("print", [self.src.operand(a) for a in stmt.args]))
        elif isinstance(stmt, ir.Del):
            return
        elif isinstance(stmt, (ir.StaticRaise, ir.DynamicRaise, ir.Raise)):
            self.block_end(L, label, stmt)
        else:
            self.facts.error("the statement %s" % stmt, stmt.loc)

    def assign(self, L, label, stmt):
        facts, cx, names = self.facts, self.cx, self.cx.names
        name, e = stmt.target.name, stmt.value
        if isinstance(e, ir.Arg) or self.iteration(L, label, name, e):
            return
        if isinstance(e, ir.Var) and name in facts.iter_alias:
            return
        if facts.target.atomic_update(facts, stmt) is not None:
            return      # the forward launch did it already
        if self.src.static(name) is not None:
            return      # written in place where it is used
        copies = cx.plan.snapshots.get(name, {})
        self.snapshots(L, name, copies, False, label)   # (the arrays it reads, as it does)
        self.push_value(L, name, label)
        if isinstance(e, ir.Var):
            src = self.src.operand(e)
        elif self._bool_of_bool(e):
            src = self.src.operand(e.args[0])   # Numba's bool() around a branch test
        elif e.op == "inplace_binop" and isinstance(facts.ty(e.lhs), types.Array):
            # Written in place, as the function does: other views see it.
            lhs = self.src.operand(e.lhs)
            update = statement("{} += {}", lhs, self.src.operand(e.rhs))
            update.op = NODES[e.immutable_fn]()     # (``*=``, ``/=``...: the operator's)
            L(update)
            src = lhs
        elif isinstance(e, ir.Expr) and e.op == "build_map" and not e.items and \
                isinstance(facts.ty(name), types.DictType):
            # {}: the typed Dict Numba makes of it (facts/containers.py follows it)
            t = facts.ty(name)
            src = expr("{}.empty({}, {})", names.gname(TypedDict), names.gname(t.key_type),
                       names.gname(t.value_type))
        elif isinstance(e, ir.Expr):
            src = self.src.expr(e, self.src.operand)
        else:
            facts.error("the statement %s" % stmt, stmt.loc)
        if self._strided_kept(name):
            # Kept on a list stack of C arrays: one layout for every value of the name
            # (NumPy's result of ``0.5 * X.T`` is strided; mixed with the C arrays the
            # stack gives back, Numba cannot allocate the next result).
            src = expr("np.ascontiguousarray({})", src)
        L.code("{} = {}", names.n(name), src)
        if name in cx.plan.partials and not cx.fused.replaying:
            pname, partial = cx.plan.partials[name]
            self.push_value(L, pname, label)
            L.code("{} = {}", names.n(pname),
                   fill(template(partial).tree, {"0": self.src.operand(e.args[0])}))
        elif cx.draft and not cx.fused.replaying:
            self._partial_variant(L, name, e, label)
        self.snapshots(L, name, copies, True, label)    # (its own result, as it made it)
        for k, d in enumerate(cx.plan.kept_shapes.get(name, ())):
            # Read by the sweep only for its shape: that is kept (plan/shape_reads.py).
            self.push_value(L, d, label)
            L.code("{} = {}.shape[{}]", names.n(d), names.n(name), k)
        if cx.draft and name not in cx.plan.kept_shapes:
            self._extents_variant(L, name, label)
        kind = cx.activity.array_adjoints.get(name)
        if kind == "new":       # (assigned: each element by a loop, plan/assigned.py)
            L.code("{} = np.empty_like({})" if name in cx.plan.assigned_adjoints
                   else "{} = np.zeros_like({})", names.bar(name), names.n(name))
        elif kind == "local":
            L.code("{} = {}", names.bar(name), src)     # local memory is not zeroed
            k = names.fresh("k")
            with L.block("for {} in range({}.shape[0]):", k, names.bar(name)):
                L.code("{}[{}] = 0.0", names.bar(name), k)

    def snapshots(self, L, name, copies, own, label):
        """Copy the arrays statement ``name`` reads (``own``: its result) where the plan
        snapshots them (``copies``: plan/snapshots.py), each pushed first as
        :meth:`push_value` does; under a draft plan, left open (lowering.Snapshots)."""
        cx = self.cx
        if cx.draft and name not in cx.plan.snapshots:
            L(Snapshots(name, own, label, cx.open_loops, cx.fused.replaying))
            cx.variants.add(("snapshot", name))
            return
        n = cx.names.n
        for x, c in sorted(copies.items()):
            if (x == name) == own:
                self.push_value(L, c, label)
                L.code("{} = {}.copy()", n(c), n(name) if own else self.src.operand(x))

    # ------------------------------------------------------------------ variants
    # Under a draft plan, what the replay writes where the settled plan keeps a call's
    # partial or an array's extents: left open (lowering.Variant).
    def _partial_variant(self, L, name, e, label):
        got = partial_of(self.facts, name)
        if got is None:
            return
        pname, partial = got
        n = self.cx.names.n
        body = [statement("{} = {}", n(pname),
                          fill(template(partial).tree, {"0": self.src.operand(e.args[0])}))]
        self._variant(L, "partial", name, [pname], label, body)

    def _extents_variant(self, L, name, label):
        cx = self.cx
        extents = extents_of(self.facts, cx.plan.recompute, name, cx.plan.ty(self.facts, name))
        if not extents:
            return
        n = cx.names.n
        body = [statement("{} = {}.shape[{}]", n(d), n(name), k)
                for k, d in enumerate(extents)]
        self._variant(L, "shape", name, extents, label, body)

    def _variant(self, L, kind, key, kept, label, body):
        """``body``, each of the ``kept`` names it assigns pushed before (as push_value
        does), in a :class:`.lowering.Variant`."""
        cx = self.cx
        out = []
        for name, line in zip(kept, body):
            if cx.plan.sites.site_repeats(label):
                out.append(cx.keep_node(Keep(cx.names.n(name), name,
                                             loops=tuple(cx.open_loops))))
            out.append(line)
        L(Variant(kind, key, out))
        cx.variants.add((kind, key))

    # ------------------------------------------------------------------ plain range loops
    def plain_range(self, lp):
        """Is ``lp`` a ``for`` loop over a range (or a 1-d array) left only when its range
        is exhausted, whose header does nothing else that the replay or the sweep could
        see after the loop? It is then replayed as ``for i in range(n):``, as Numba
        compiles and the source reads; its count is the range's length."""
        facts, rl, h = self.facts, lp.range, lp.header
        R = facts.s.regions[lp]
        if rl is None or rl.block != h or len(lp.exits) != 1 or lp.exits[0][0] != h \
                or lp is self.cx.helper_loop or not self.cx.plan.shapes.forward_structured(R):
            return False
        term = facts.fir.blocks[h].terminator
        if not isinstance(term, ir.Branch) or lp.exits[0][1] != term.falsebr \
                or term.truebr not in lp.blocks:
            return False
        made = header_values(facts, h)
        if any(self.cx.value_stack(name) is not None for name in made):
            return False        # pushed on the exit test too
        # What the header makes is not read after the loop (its last run is not replayed).
        for name in made:
            for label, _ in facts.uses.get(name, ()):
                if label not in lp.blocks:
                    return False
        return not any(isinstance(v, ir.Var) and v.name in made
                       for _, v in facts.edge_copies(lp.exits[0]))

    def range_loop(self, L, lp):
        """Open the ``for`` statement of a plain range loop (a block: its body is what is
        written inside the ``with``)."""
        rl = lp.range
        rng = "numba.prange" if lp in self.cx.plan.parallel_replay else "range"
        if rl.array is None and rl.first is not None:     # the index itself
            return L.block("for {} in {}:", self.cx.names.n(rl.first),
                           call(rng, [self.src.operand(a) for a in rl.args]))
        return L.block("for {} in {}:", rl.ctr, call(rng, [rl.len]))

    def range_body(self, L, lp):
        """The header of a plain range loop (its index), then its body."""
        facts, h, rl = self.facts, lp.header, lp.range
        R = facts.s.regions[lp]
        self.cx.checkpoint.guard_iteration(L, lp)
        for stmt in facts.fir.blocks[h].body:
            op = stmt.value.op if isinstance(stmt, ir.Assign) \
                and isinstance(stmt.value, ir.Expr) else None
            if op == "pair_second" or (op == "pair_first" and rl.array is None):
                continue        # the loop's own test, the loop's own variable
            if not isinstance(stmt, (ir.Jump, ir.Branch, ir.Return)):
                self.stmt(L, h, stmt)
        self.plain.add(h)
        nxt = self.follow(L, R, (h, facts.fir.blocks[h].terminator.truebr))
        if nxt is not None:
            self.seq(L, R, nxt, None)

    def _bool_of_bool(self, e):
        return (isinstance(e, ir.Expr) and e.op == "call" and len(e.args) == 1
                and not e.kws and self.facts.resolve_global(e.func) is bool
                and isinstance(self.facts.ty(e.args[0]), types.Boolean))

    def iteration(self, L, label, name, e):
        """Emit the loop machinery a ``for`` statement stands for; True when ``e`` was one
        (a phi, ``getiter``, ``iternext``, the index and the go-on flag, the range)."""
        facts, names = self.facts, self.cx.names
        if not isinstance(e, ir.Expr):
            return False
        if e.op in ("phi", "iternext"):
            return True
        if e.op == "getiter":
            self.getiter(L, name, e)
            return True
        if e.op == "pair_first":
            rl = facts.iter_alias[facts.pair_iter(e).name]
            self.push_value(L, name, label)
            value = range_index(rl, rl.ctr, self.src.operand)
            if rl.array is not None:      # no read past the end on the last test
                value = expr("{} if {} < {} else {}", value, rl.ctr, rl.len,
                             zero_expr(facts.ty(name)))
            L.code("{} = {}", names.n(name), value)
            return True
        if e.op == "pair_second":
            rl = facts.iter_alias[facts.pair_iter(e).name]
            L.code("{} = {} < {}", names.n(name), rl.ctr, rl.len)
            L.code("{} += 1", rl.ctr)
            return True
        if e.op == "call" and is_range(facts.resolve_global(e.func)):
            return True          # consumed by getiter
        return isinstance(facts.ty(name), types.RangeIteratorType) or name in facts.iter_alias

    def getiter(self, L, name, e):
        rl = self.facts.iter_alias.get(name)
        if rl is None:
            self.facts.error("iteration over %s" % self.facts.ty(e.value), e.loc)
        range_start(L, rl, self.src.operand)

    # ------------------------------------------------------------------ loops
    def loop(self, L, lp):
        cx = self.cx
        h = lp.header
        cx.indexed.check_stores(L, h, self.src.operand)
        if cx.checkpoint.applies(lp):
            cx.checkpoint.forward(L, lp)
            return
        cx.checkpoint.guard(L, lp)
        if not cx.fused.replaying:      # room for what the loop pushes
            cx.reserve(L, lp)
        plain = self.plain_range(lp)
        if not plain:
            L.code("{} = 0", "_n%d" % h)
        opened = self.range_loop(L, lp) if plain else L.block("while True:")
        cx.open_loops.append(h)
        with opened:
            if plain:
                self.range_body(L, lp)
            else:
                cx.checkpoint.guard_iteration(L, lp)
                self.region(L, self.facts.s.regions[lp])
        cx.open_loops.pop()
        if plain:
            L.code("{} = {}", "_n%d" % h, lp.range.len)
        loops = self.facts.s.enclosing(h)[1:]
        if len(lp.exits) > 1:
            self.record_after(L, "_x%d" % h, loops, h)
        if not self.facts.counted(lp):
            self.record_after(L, "_n%d" % h, loops, h)
