"""Checkpointed loops in the emitted code: a schedule interpreted in the replay and the
sweep (see :mod:`..plan.checkpoint` and :mod:`..plan.checkpoint_schedule`).

The replay computes the schedule when the loop starts, then runs its first actions:
store the state (snapshot), *advance* (the iterations with nothing kept: the replay's code
with its pushes left out, as for loops the sweep runs again), and last *tape* the last
segment (the replay's code as usual, keeping its history). The sweep runs the others:
*reverse* a taped segment (the loop's usual count-down, between two bounds), *restore* a
snapshot, store, advance and tape. At every point each variable holds what it held at the
same point of the forward run, so the code of one iteration is the code without
checkpointing; only the driver around it is new.

A loop of unknown trip count (``while``, ``break``) is replayed as usual, a ``while True:``
around its body, keeping nothing and storing the state by the online schedule; its sweep
reverses the segments between stored states from the last, each interpreting a binomial
schedule of its own. Every run of its body counts its iterations in ``_n<header>`` (and
its range's counter, for a range left by ``break``), which a restore sets back. A segment
that ends where the loop did runs to the loop's own exit; the reverse of one starts at
that exit (the record ``_x<header>`` says which), of the others at a back edge.

The variant a jitted caller links (``checkpoint="fit"``, which cannot be called again)
keeps the history of such a loop from its start, storing the states of the online
schedule as it goes; at the iteration where the history would pass the budget it pops
the stacks back to their heights at the loop's start and goes on keeping nothing. The
sweep reverses a loop that ended while keeping its history as one segment (no second
run), and the others by the online schedule.

With ``checkpoint="auto"`` the loop is emitted as usual behind a guard that compares its
projected history with the memory budget; past it the call raises
:class:`~..plan.checkpoint_schedule.CheckpointNeeded` and the dispatcher makes the call again
with a checkpointed backward.
"""
from ..plan import checkpoint_schedule as CS
from ..plan.checkpoint import entry_bytes, length_expr, loop_budget, loop_slots
from ..generated_source.code import call, expr, sum_of
from .constants import ZERO
from .lowering import Guard, GuardIteration
from .replay import range_index

#: The tests of an ``if``/``elif`` chain on the exit record, by keyword.
class Checkpoint:
    def __init__(self, cx):
        self.cx = cx
        self.facts = cx.facts
        self.advancing = 0          # emitting iterations that keep nothing

    def _eligible(self, lp):
        car = self.cx.plan.checkpointed.get(lp)
        return car is not None and (car.online or self.cx.forward.plain_range(lp))

    def applies(self, lp):
        """Is ``lp`` checkpointed here (and not only guarded)?"""
        return self._eligible(lp) and (self.cx.plan.checkpoint_mode in ("revolve", "fit")
                                       or self.cx.plan.checkpointed[lp].marked)

    def _taped_first(self, lp):
        """``checkpoint="fit"`` (the variant a jitted caller links): a loop of unknown trip
        count keeps its history while it fits the budget, and only past it is
        checkpointed; a loop that fits is reversed with no second run."""
        car = self.cx.plan.checkpointed[lp]
        return self.cx.plan.checkpoint_mode == "fit" and car.online and not car.marked

    def guarded(self, lp):
        return self.cx.plan.checkpoint_mode == "auto" and self._eligible(lp) \
            and not self.cx.plan.checkpointed[lp].marked

    def _budget(self, lp):
        return loop_budget(self.cx.plan, self.cx.plan.checkpointed[lp])

    def _slots(self, lp):
        return loop_slots(self.cx.plan, self.cx.plan.checkpointed[lp]) or -1

    def online(self, lp):
        return self.cx.plan.checkpointed[lp].online

    # ------------------------------------------------------------------ names
    def _v(self, kind, lp):
        return "_ck%s%d" % (kind, lp.header)

    def _slot_name(self, lp, name):
        return "_cks%d_%s" % (lp.header, self.cx.names.n(name))

    # ------------------------------------------------------------------ sizes
    def _sizes(self, L, lp):
        """Set the bytes kept per iteration and the bytes of the state (projections)."""
        car = self.cx.plan.checkpointed[lp]
        n = self.cx.names.n
        arrays = [expr("{}.nbytes", n(a)) for a in car.arrays + car.in_place]
        largest = call("max", [8] + list(arrays)) if arrays else 8
        if self._measured(lp):
            L.code("{} = {}", self._v("L", lp), largest)
            largest = self._v("L", lp)
        kept = expr("{} + {} * {}", car.scalar_bytes, car.list_values, largest)
        for m in car.nested:
            per = expr("({} + {} * {})", m.scalar_bytes, m.list_values, largest)
            for rl in m.lengths or ():
                per = expr("{} * {}", per, length_expr(rl, self.cx.src.operand))
            kept = expr("{} + {}", kept, per)
        L.code("{} = {}", self._v("b", lp), kept)
        state = 8 * len(car.scalars)
        for a in arrays:
            state = expr("{} + {}", state, a)
        L.code("{} = {}", self._v("z", lp), state)

    def guard(self, L, lp):
        """``checkpoint="auto"``: past the budget, ask for a checkpointed backward. A loop
        of unknown trip count compares its count with a limit in each iteration
        (:meth:`guard_iteration`). (Under a draft plan, left open: lowering.py.)"""
        if self.cx.draft:
            if lp.depth == 1:
                L(Guard(lp))
            return
        if not self.guarded(lp):
            return
        self._sizes(L, lp)
        if self.online(lp):
            L.code("{} = {}({}, {})", self._v("l", lp), self.cx.names.gname(CS.guard_count),
                   self._v("b", lp), self.cx.plan.memory_budget)
            return
        L.code("{}({}, {}, {})", self.cx.names.gname(CS.guard), lp.range.len,
               self._v("b", lp), self.cx.plan.memory_budget)

    def guard_iteration(self, L, lp):
        """In each iteration of a guarded loop: a loop of unknown trip count compares its
        count with the limit its guard set; a loop with a nested loop whose length is not
        known when it starts (``for j in range(i)``) measures what its stacks hold."""
        if self.cx.draft:
            if lp.depth == 1 and not self.cx.fused.replaying:
                L(GuardIteration(lp))
            return
        if not self.guarded(lp) or self.cx.fused.replaying:
            return
        if self.online(lp):
            with L.block("if {} == {}:", "_n%d" % lp.header, self._v("l", lp)):
                L.code("{}()", self.cx.names.gname(CS.need_checkpoint))
        elif self._measured(lp):
            held = self._held(lp)
            if held is not None:
                with L.block("if {} > {}:", held, self.cx.plan.memory_budget):
                    L.code("{}()", self.cx.names.gname(CS.need_checkpoint))

    def _measured(self, lp):
        """Does the guard of ``lp`` measure its history as it runs (a nested loop of a
        length its guard cannot know before it starts)?"""
        car = self.cx.plan.checkpointed.get(lp)
        return car is not None and not car.online and any(
            m.lengths is None for m in car.nested)

    def _held(self, lp):
        """The bytes the stacks hold now: scalar stacks by their size, list stacks by their
        length times the largest array of the loop's state."""
        terms = []
        for st, spec in sorted(self.cx.stack_specs().items()):
            if spec.storage == "list":
                terms.append(expr("len({}) * {}", st, self._v("L", lp)))
            elif spec.storage in ("heap", "frame"):
                terms.append(expr("size({}) * {}", st, entry_bytes(spec.dtype)))
        return sum_of(terms) if terms else None

    # ------------------------------------------------------------------ state
    def _store(self, L, lp, slot):
        car, n = self.cx.plan.checkpointed[lp], self.cx.names.n
        for name, _ in car.scalars:
            L.code("{}[{}] = {}", self._slot_name(lp, name), slot, n(name))
        for name in car.arrays + car.in_place:
            L.code("{}[{}] = {}.copy()", self._slot_name(lp, name), slot, n(name))

    def _restore(self, L, lp, slot, first=None):
        """The state of ``slot``; a loop of unknown trip count also sets its counts back
        to ``first``, the iteration the slot holds the state before."""
        car, n = self.cx.plan.checkpointed[lp], self.cx.names.n
        if car.online:
            L.code("{} = {}", "_n%d" % lp.header, first)
            if lp.range is not None:
                L.code("{} = {}", lp.range.ctr, first)
        for name, _ in car.scalars:
            L.code("{} = {}[{}]", n(name), self._slot_name(lp, name), slot)
        for name in car.arrays:         # (never written in place by the loop)
            L.code("{} = {}[{}]", n(name), self._slot_name(lp, name), slot)
        for name in car.in_place:       # other names may be views of its memory
            L.code("{}[...] = {}[{}]", n(name), self._slot_name(lp, name), slot)

    def _declare(self, L, lp, c=None):
        car, n, facts = self.cx.plan.checkpointed[lp], self.cx.names.n, self.facts
        c = c or expr("{}({})", self.cx.names.gname(CS.slot_count), self._v("a", lp))
        for name, dtype in car.scalars:
            L.code("{} = np.empty({}, {})", self._slot_name(lp, name), c, dtype)
        for name in car.arrays + car.in_place:
            t = facts.ty(name)
            t = t.copy(layout="C") if t.layout != "C" else t
            s = self._slot_name(lp, name)
            L.code("{} = List.empty_list({})", s, self.cx.names.gname(t))
            k = self.cx.names.fresh("k")
            with L.block("for {} in range({}):", k, c):
                L.code("{}.append({}.copy())", s, n(name))

    # ------------------------------------------------------------------ the replay
    def forward(self, L, lp):
        if self.online(lp):
            self.forward_online(L, lp)
            return
        cx, h, v = self.cx, lp.header, self._v
        rl = lp.range
        self._sizes(L, lp)
        L.code("{} = {}({}, {}, {}, {}, {})", v("a", lp), cx.names.gname(CS.plan_schedule),
               rl.len, v("b", lp), v("z", lp), self._budget(lp), self._slots(lp))
        self._declare(L, lp)
        L.code("{} = 0", v("p", lp))
        o = v("o", lp)
        with L.block("while True:"):
            self._next(L, lp)
            with L.block("if {} == {}:", o, CS.STORE):
                self._store(L, lp, v("k", lp))
            with L.block("elif {} == {}:", o, CS.ADVANCE):
                self._run(L, lp, keep=False)
            with L.block("else:"):
                self._run(L, lp, keep=True)
                L.code("break")
        L.code("{} = {}", "_n%d" % h, rl.len)

    def _next(self, L, lp):
        v = self._v
        p = v("p", lp)
        L.code("{o}, {f}, {e}, {k} = {a}[{p}, 0], {a}[{p}, 1], {a}[{p}, 2], {a}[{p}, 3]",
               o=v("o", lp), f=v("f", lp), e=v("e", lp), k=v("k", lp), a=v("a", lp), p=p)
        L.code("{} += 1", p)

    def _run(self, L, lp, keep):
        """Iterations ``[_ckf, _cke)`` of the loop: keeping their history, or nothing."""
        cx, rl = self.cx, lp.range
        f, e = self._v("f", lp), self._v("e", lp)
        if keep:
            for st, spec in sorted(cx.stack_specs().items()):
                for header, per in spec.reserves:
                    if header == lp.header:
                        if per == 1:
                            L.code("reserve({}, {} - {})", st, e, f)
                        else:
                            L.code("reserve({}, ({} - {}) * {})", st, e, f, per)
        quiet = 0 if keep else 1
        cx.fused.replaying += quiet
        self.advancing += quiet
        cx.open_loops.append(lp.header)
        try:
            with L.block("for {} in range({}, {}):", rl.ctr, f, e):
                if rl.array is None and rl.first is not None:
                    L.code("{} = {}", cx.names.n(rl.first),
                           range_index(rl, rl.ctr, cx.src.operand))
                cx.forward.range_body(L, lp)
        finally:
            cx.open_loops.pop()
            cx.fused.replaying -= quiet
            self.advancing -= quiet

    # ------------------------------------------------------------------ the sweep
    def sweep(self, L, lp):
        if self.online(lp):
            self.sweep_online(L, lp)
            return
        cx, facts, h, v = self.cx, self.facts, lp.header, self._v
        rev = cx.reverse
        Rl = facts.s.regions[lp]
        # The partial last iteration (the exhausted range's test), as Reverse.counted_loop.
        rev.set_index(L, lp, "_n%d" % h)
        rev.seq(L, Rl, Rl.node_of(lp.exits[0][0]), None)
        o = v("o", lp)
        with L.block("while {} < {}.shape[0]:", v("p", lp), v("a", lp)):
            self._next(L, lp)
            with L.block("if {} == {}:", o, CS.REVERSE):
                mvar = "_m%d" % h
                L.code("{} = {}", mvar, v("e", lp))
                with L.block("while {} > {}:", mvar, v("f", lp)):
                    L.code("{} -= 1", mvar)
                    rev.set_index(L, lp, mvar)
                    rev.edge(L, (lp.latches[0], h))
                    rev.region_from(L, Rl, Rl.node_of(lp.latches[0]))
            with L.block("elif {} == {}:", o, CS.RESTORE):
                self._restore(L, lp, v("k", lp))
            with L.block("elif {} == {}:", o, CS.STORE):
                self._store(L, lp, v("k", lp))
            with L.block("elif {} == {}:", o, CS.ADVANCE):
                self._run(L, lp, keep=False)
            with L.block("else:"):
                self._run(L, lp, keep=True)

    # ------------------------------------------------------------------ unknown trip count
    def forward_online(self, L, lp):
        """The replay: the loop keeping nothing, storing its state every ``_cki``
        iterations in up to ``_ckL`` slots; full, every other one is kept and ``_cki``
        doubles (``_ckL`` is even: the state of this iteration is stored next)."""
        cx, h, v = self.cx, lp.header, self._v
        car = cx.plan.checkpointed[lp]
        self._sizes(L, lp)
        w = v("w", lp)
        L.code("{} = {}({}, {}, {}, {})", w, cx.names.gname(CS.online_plan), v("b", lp),
               v("z", lp), self._budget(lp), self._slots(lp))
        L.code("{}, {}, {} = {}[0], {}[1], {}[2]", v("g", lp), v("C", lp), v("L", lp),
               w, w, w)
        self._declare(L, lp, v("C", lp))
        L.code("{} = 0", v("c", lp))                # slots filled
        L.code("{} = {}", v("i", lp), v("g", lp))   # iterations between them
        L.code("{} = 0", v("q", lp))                # the next iteration stored
        taped = self._taped_first(lp)
        if taped:
            self._taping_start(L, lp)
        n = "_n%d" % h
        L.code("{} = 0", n)
        with L.block("while True:"):
            with L.block("if {} == {}:", n, v("q", lp)):
                with L.block("if {} == {}:", v("c", lp), v("L", lp)):
                    j = cx.names.fresh("k")
                    with L.block("for {} in range(1, {} // 2):", j, v("L", lp)):
                        for name, _ in car.scalars:
                            s = self._slot_name(lp, name)
                            L.code("{s}[{j}] = {s}[2 * {j}]", s=s, j=j)
                        for name in car.arrays + car.in_place:
                            s = self._slot_name(lp, name)
                            L.code("{s}[{j}] = {s}[2 * {j}]", s=s, j=j)
                    L.code("{} = {} // 2", v("c", lp), v("L", lp))
                    L.code("{} *= 2", v("i", lp))
                self._store(L, lp, v("c", lp))
                L.code("{} += 1", v("c", lp))
                L.code("{} += {}", v("q", lp), v("i", lp))
            if not taped:
                self._region(L, lp, keep=False)
                return
            with L.block("if {}:", v("T", lp)):
                self._taping_end(L, lp)
            with L.block("if {}:", v("T", lp)):
                self._region(L, lp, keep=True)
            with L.block("else:"):
                self._region(L, lp, keep=False)

    def _taping_start(self, L, lp):
        """Keep the history from the start (``_ckT``) up to the iteration at which it would
        pass the budget (``_ckl``); the stacks' heights to go back to then."""
        v = self._v
        L.code("{} = 1", v("T", lp))
        L.code("{} = max(1, {} // max({}, 1))", v("l", lp), self._budget(lp), v("b", lp))
        for st in sorted(self.cx.stack_specs()):
            L.code("{} = {}", self._height(lp, st), self._size(st))

    def _taping_end(self, L, lp):
        """Past the budget: drop the history kept so far and go on keeping nothing (the
        states stored so far are those of the online schedule)."""
        v = self._v
        with L.block("if {} == {}:", "_n%d" % lp.header, v("l", lp)):
            for st in sorted(self.cx.stack_specs()):
                with L.block("while {} > {}:", self._size(st), self._height(lp, st)):
                    L.code("{}.pop()" if self._is_list(st) else "pop({})", st)
            L.code("{} = 0", v("T", lp))

    def _height(self, lp, st):
        return "_ckh%d_%s" % (lp.header, st)

    def _size(self, st):
        return expr("len({})" if self._is_list(st) else "size({})", st)

    def _is_list(self, st):
        return self.cx.plan.stacks[st].storage == "list"     # arrays: a typed list

    def _region(self, L, lp, keep):
        """One iteration of the loop's body (``continue`` to the next, ``break`` out)."""
        cx = self.cx
        quiet = 0 if keep else 1
        cx.fused.replaying += quiet
        self.advancing += quiet
        cx.open_loops.append(lp.header)
        try:
            cx.forward.region(L, self.facts.s.regions[lp])
        finally:
            cx.open_loops.pop()
            cx.fused.replaying -= quiet
            self.advancing -= quiet

    def _run_online(self, L, lp, keep):
        """Iterations ``[_ckf, _cke)``; one past the last full iteration ends at the
        loop's exit."""
        with L.block("while True:"):
            with L.block("if {} == {}:", "_n%d" % lp.header, self._v("e", lp)):
                L.code("break")
            self._region(L, lp, keep)

    def sweep_online(self, L, lp):
        cx, h, v = self.cx, lp.header, self._v
        Rl = self.facts.s.regions[lp]
        nn = v("N", lp)
        # Adjoints the back edge assigns are read above it in the text: define them.
        for latch in lp.latches:
            for t, val in self.facts.edge_copies((latch, h)):
                if getattr(val, "name", None) in cx.plan.direct:
                    L.code("{} = {}", cx.names.bar(val), ZERO)
        # the iterations run, the partial last one too
        L.code("{} = {} + 1", nn, "_n%d" % h)
        if self._taped_first(lp):
            with L.block("if {}:", v("T", lp)):     # all of it kept: reversed as it is
                L.code("{}, {} = 0, {}", v("f", lp), v("e", lp), nn)
                self._reverse_online(L, lp, Rl, nn)
            with L.block("else:"):
                self._sweep_segments(L, lp, Rl, nn)
            return
        self._sweep_segments(L, lp, Rl, nn)

    def _sweep_segments(self, L, lp, Rl, nn):
        """The segments between the stored states, from the last."""
        cx, v = self.cx, self._v
        j, b = v("j", lp), v("s", lp)
        L.code("{} = {} - 1", j, v("c", lp))
        with L.block("while {} >= 0:", j):
            L.code("{} = {} * {}", b, j, v("i", lp))
            L.code("{a} = {schedule}(min({b} + {i}, {n}) - {b}, {g}, {C} - {j})",
                   a=v("a", lp), schedule=cx.names.gname(CS.schedule), b=b, i=v("i", lp),
                   n=nn, g=v("g", lp), C=v("C", lp), j=j)
            self._restore(L, lp, j, b)
            L.code("{} = 0", v("p", lp))
            o = v("o", lp)
            with L.block("while {} < {}.shape[0]:", v("p", lp), v("a", lp)):
                self._next(L, lp)
                L.code("{} += {}", v("f", lp), b)
                L.code("{} += {}", v("e", lp), b)
                L.code("{} += {}", v("k", lp), j)
                with L.block("if {} == {}:", o, CS.REVERSE):
                    self._reverse_online(L, lp, Rl, nn)
                with L.block("elif {} == {}:", o, CS.RESTORE):
                    self._restore(L, lp, v("k", lp), v("f", lp))
                with L.block("elif {} == {}:", o, CS.STORE):
                    self._store(L, lp, v("k", lp))
                with L.block("elif {} == {}:", o, CS.ADVANCE):
                    self._run_online(L, lp, keep=False)
                with L.block("else:"):
                    self._run_online(L, lp, keep=True)
            L.code("{} -= 1", j)

    def _reverse_online(self, L, lp, Rl, nn):
        """Reverse iterations ``[_ckf, _cke)`` just taped, as Reverse.entered_loop: from
        the loop's exit when the last is the partial last iteration, else from its back
        edge."""
        h, rev = lp.header, self.cx.reverse
        var, mvar, e = rev.state_var(Rl), "_m%d" % h, self._v("e", lp)
        srcs = [Rl.node_of(src) for src, _ in lp.exits]
        L.code("{} = {} - 1", mvar, e)
        with L.block("if {} == {}:", e, nn):
            if len(srcs) == 1:
                L.code("{} = {}", var, rev.state(Rl, srcs[0]))
            else:
                for k, s in enumerate(srcs):
                    with L.arm(k, len(srcs), "_x%d" % h):
                        L.code("{} = {}", var, rev.state(Rl, s))
        with L.block("else:"):
            rev.back_edge(L, lp, Rl)
        with L.block("while True:"):
            rev.set_index(L, lp, mvar)
            starts = list(dict.fromkeys(srcs + [Rl.node_of(x) for x in lp.latches]))
            rev.guarded(L, Rl, var, starts)
            with L.block("if {} == {}:", mvar, self._v("f", lp)):
                L.code("break")
            L.code("{} -= 1", mvar)
            rev.back_edge(L, lp, Rl)
