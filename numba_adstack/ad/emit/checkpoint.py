"""Checkpointed loops in the emitted code: a schedule interpreted in the replay and the
sweep (see :mod:`..plan.checkpoint` and :mod:`..checkpoint_schedule`).

The replay computes the schedule when the loop starts, then runs its first actions:
store the state (snapshot), *advance* (the iterations with nothing kept: the replay's code
with its pushes left out, as for loops the sweep runs again), and last *tape* the last
segment (the replay's code as usual, keeping its history). The sweep runs the others:
*reverse* a taped segment (the loop's usual count-down, between two bounds), *restore* a
snapshot, store, advance and tape. At every point each variable holds what it held at the
same point of the forward run, so the code of one iteration is the code without
checkpointing; only the driver around it is new.

With ``checkpoint="auto"`` the loop is emitted as usual behind a guard that compares its
projected history with the memory budget; past it the call raises
:class:`~..checkpoint_schedule.CheckpointNeeded` and the dispatcher makes the call again
with a checkpointed backward.
"""
from .. import checkpoint_schedule as CS
from .forward import range_index


class Checkpoint:
    def __init__(self, cx):
        self.cx = cx
        self.facts = cx.facts
        self.advancing = 0          # emitting iterations that keep nothing

    def applies(self, lp):
        """Is ``lp`` checkpointed here (and not only guarded)?"""
        return (self.cx.plan.checkpoint_mode == "revolve" and lp in self.cx.plan.checkpointed
                and self.cx.forward.plain_range(lp))

    def guarded(self, lp):
        return (self.cx.plan.checkpoint_mode == "auto" and lp in self.cx.plan.checkpointed
                and self.cx.forward.plain_range(lp))

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
        arrays = ["%s.nbytes" % n(a) for a in car.arrays + car.in_place]
        largest = "max(8, %s)" % ", ".join(arrays) if arrays else "8"
        L("%s = %d + %d * %s" % (self._v("b", lp), car.scalar_bytes, car.list_values,
                                 largest))
        L("%s = %d%s" % (self._v("z", lp), 8 * len(car.scalars),
                         "".join(" + " + a for a in arrays)))

    def guard(self, L, lp):
        """``checkpoint="auto"``: past the budget, ask for a checkpointed backward."""
        self._sizes(L, lp)
        L("%s(%s, %s, %d)" % (self.cx.names.gname(CS.guard), lp.range.len,
                              self._v("b", lp), self.cx.plan.memory_budget))

    # ------------------------------------------------------------------ state
    def _store(self, L, lp, slot):
        car, n = self.cx.plan.checkpointed[lp], self.cx.names.n
        for name, _ in car.scalars:
            L("%s[%s] = %s" % (self._slot_name(lp, name), slot, n(name)))
        for name in car.arrays + car.in_place:
            L("%s[%s] = %s.copy()" % (self._slot_name(lp, name), slot, n(name)))

    def _restore(self, L, lp, slot):
        car, n = self.cx.plan.checkpointed[lp], self.cx.names.n
        for name, _ in car.scalars:
            L("%s = %s[%s]" % (n(name), self._slot_name(lp, name), slot))
        for name in car.arrays:         # (never written in place by the loop)
            L("%s = %s[%s]" % (n(name), self._slot_name(lp, name), slot))
        for name in car.in_place:       # other names may be views of its memory
            L("%s[...] = %s[%s]" % (n(name), self._slot_name(lp, name), slot))

    def _declare(self, L, lp):
        car, n, facts = self.cx.plan.checkpointed[lp], self.cx.names.n, self.facts
        c = "%s(%s)" % (self.cx.names.gname(CS.slot_count), self._v("a", lp))
        for name, dtype in car.scalars:
            L("%s = np.empty(%s, %s)" % (self._slot_name(lp, name), c, dtype))
        for name in car.arrays + car.in_place:
            t = facts.ty(name)
            t = t.copy(layout="C") if t.layout != "C" else t
            s = self._slot_name(lp, name)
            L("%s = List.empty_list(%s)" % (s, self.cx.names.gname(t)))
            k = self.cx.names.fresh("k")
            L("for %s in range(%s):" % (k, c))
            L("    %s.append(%s.copy())" % (s, n(name)))

    # ------------------------------------------------------------------ the replay
    def forward(self, L, lp):
        cx, h = self.cx, lp.header
        rl = lp.range
        self._sizes(L, lp)
        L("%s = %s(%s, %s, %s, %d, %d)" % (
            self._v("a", lp), cx.names.gname(CS.plan_schedule), rl.len, self._v("b", lp),
            self._v("z", lp), cx.plan.memory_budget, cx.plan.checkpoint_slots or -1))
        self._declare(L, lp)
        L("%s = 0" % self._v("p", lp))
        L("while True:")
        with L.indent():
            self._next(L, lp)
            L("if %s == %d:" % (self._v("o", lp), CS.STORE))
            with L.indent():
                self._store(L, lp, self._v("k", lp))
            L("elif %s == %d:" % (self._v("o", lp), CS.ADVANCE))
            with L.indent():
                self._run(L, lp, keep=False)
            L("else:")
            with L.indent():
                self._run(L, lp, keep=True)
                L("break")
        L("_n%d = %s" % (h, rl.len))

    def _next(self, L, lp):
        a, p = self._v("a", lp), self._v("p", lp)
        L("%s, %s, %s, %s = %s[%s, 0], %s[%s, 1], %s[%s, 2], %s[%s, 3]" % (
            self._v("o", lp), self._v("f", lp), self._v("e", lp), self._v("k", lp),
            a, p, a, p, a, p, a, p))
        L("%s += 1" % p)

    def _run(self, L, lp, keep):
        """Iterations ``[_ckf, _cke)`` of the loop: keeping their history, or nothing."""
        cx, rl = self.cx, lp.range
        f, e = self._v("f", lp), self._v("e", lp)
        if keep:
            for st, spec in sorted(cx.stack_specs().items()):
                for header, per in spec.reserves:
                    if header == lp.header:
                        L("reserve(%s, (%s - %s)%s)" % (st, e, f,
                                                         "" if per == 1 else " * %d" % per))
        L("for %s in range(%s, %s):" % (rl.ctr, f, e))
        quiet = 0 if keep else 1
        cx.fused.replaying += quiet
        self.advancing += quiet
        cx.open_loops.append(lp.header)
        try:
            with L.indent():
                m = L.mark()
                if rl.array is None and rl.first is not None:
                    L("%s = %s" % (cx.names.n(rl.first),
                                   range_index(rl, rl.ctr, cx.src.operand)))
                cx.forward.range_body(L, lp)
                L.close_block(m)
        finally:
            cx.open_loops.pop()
            cx.fused.replaying -= quiet
            self.advancing -= quiet

    # ------------------------------------------------------------------ the sweep
    def sweep(self, L, lp):
        cx, facts, h = self.cx, self.facts, lp.header
        rev = cx.reverse
        Rl = facts.s.regions[lp]
        # The partial last iteration (the exhausted range's test), as Reverse.counted_loop.
        rev.set_index(L, lp, "_n%d" % h)
        rev.seq(L, Rl, Rl.node_of(lp.exits[0][0]), None)
        L("while %s < %s.shape[0]:" % (self._v("p", lp), self._v("a", lp)))
        with L.indent():
            self._next(L, lp)
            o = self._v("o", lp)
            L("if %s == %d:" % (o, CS.REVERSE))
            with L.indent():
                mvar = "_m%d" % h
                L("%s = %s" % (mvar, self._v("e", lp)))
                L("while %s > %s:" % (mvar, self._v("f", lp)))
                with L.indent():
                    L("%s -= 1" % mvar)
                    m = L.mark()
                    rev.set_index(L, lp, mvar)
                    rev.edge(L, (lp.latches[0], h))
                    rev.region_from(L, Rl, Rl.node_of(lp.latches[0]))
                    L.close_block(m)
            L("elif %s == %d:" % (o, CS.RESTORE))
            with L.indent():
                self._restore(L, lp, self._v("k", lp))
            L("elif %s == %d:" % (o, CS.STORE))
            with L.indent():
                self._store(L, lp, self._v("k", lp))
            L("elif %s == %d:" % (o, CS.ADVANCE))
            with L.indent():
                self._run(L, lp, keep=False)
            L("else:")
            with L.indent():
                self._run(L, lp, keep=True)
