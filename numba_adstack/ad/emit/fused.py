"""Fused loops in the emitted code: each iteration is reversed right after it runs.

Before the loop, the early seed of each sum (:mod:`..plan.seeds`) is computed. On each
back edge (and on the exit), the iteration just run is reversed with the seed as the
adjoint of the sum it added to; its stacks are then empty again.
"""
from contextlib import nullcontext

from numba.core import ir, types

from .constants import ZERO
from ..plan.assigned import covers_every_element
from ..plan.replay import follows_parent
from .replay import range_start


class Fused:
    def __init__(self, cx):
        self.cx = cx
        self.facts = cx.facts
        self._sweeping = set()      # map loops being run again in the sweep
        self.replaying = 0          # inside loops the sweep runs again, in the replay
        self._follow = {}

    def reverses(self, lp):
        """Is each iteration of ``lp`` reversed right after it runs, here? (A map loop
        only runs in the replay; the sweep runs it again, reversing as it goes; one inside
        such a loop may be reversed as its parent's iteration runs again.)"""
        plan = self.cx.plan
        if lp not in plan.fused or self.cx.checkpoint.advancing:
            return False        # (iterations of a checkpointed loop that keep nothing)
        if lp not in plan.replayed or lp in self._sweeping:
            return True
        return self._follows(lp) and self.reverses(lp.parent)

    def stored_already(self, label):
        """Is block ``label`` in a top-level map loop the sweep runs again? Its stores
        write what the replay stored (nothing else writes those arrays, and the loop runs
        once): the sweep leaves them out, and with them the work that only made the
        stored values (a branch taken is still found, as the reverse needs it)."""
        return any(lp.depth == 1 and label in lp.blocks and not self.cx.plan.fused[lp]
                   for lp in self._sweeping)      # (a map loop has no sums)

    @property
    def sweeping(self):
        """Is a loop being run again by the sweep?"""
        return bool(self._sweeping)

    def _follows(self, lp):
        got = self._follow.get(lp)
        if got is None:
            got = self._follow[lp] = follows_parent(self.facts, self.cx.plan.replayed, lp)
        return got

    def sweep(self, L, lp):
        """Run loop ``lp`` again from its first iteration, reversing each one: a map loop,
        or a loop of sums seeded with the adjoint of the sum that leaves it."""
        cx, names = self.cx, self.cx.names
        if self._follows(lp):
            return          # reversed already, as its parent's iteration ran again
        for phi, members, outflow, seed in cx.plan.fused[lp]:
            live = outflow is not None and outflow in cx.activity.useful
            L.code("{} = {}", self.seed_name(phi), names.bar(outflow) if live else 0.0)
            if live:
                L.code("{} = {}", names.bar(outflow), ZERO)
        self._restore_inputs(L, lp)
        # The values entering the loop, as the replay set them before its first iteration.
        for pred in self.facts.s.preds[lp.header]:
            if pred not in lp.blocks:
                cx.forward.copies(L, (pred, lp.header))
        range_start(L, lp.range, cx.adjoints.ref)
        self._sweeping.add(lp)
        try:
            self.loop(L, lp)
        finally:
            self._sweeping.discard(lp)
        # A sum's final value depends on its initial value with slope one.
        for phi, members, outflow, seed in cx.plan.fused[lp]:
            L.code("{} = {}", names.bar(phi), self.seed_name(phi))

    def _restore_inputs(self, L, lp):
        """Values the loop reads from before it, defined in loops that are not reversed an
        iteration at a time (a map loop in a time loop): the sweep reads them as any value
        it reads (kept on a stack, or recomputed), so that the loop runs again on them."""
        cx, facts = self.cx, self.facts
        names = set()
        for b in lp.blocks:
            for stmt in facts.fir.blocks[b].body:
                names.update(v.name for v in stmt.list_vars())
        for pred in facts.s.preds[lp.header]:
            if pred not in lp.blocks:
                names.update(v.name for _, v in facts.edge_copies((pred, lp.header))
                             if isinstance(v, ir.Var))
        for name in sorted(names):
            label = facts.def_label(name)
            if label is None or label in lp.blocks or cx.src.static(name) is not None \
                    or cx.plan.sites.once(name) or not isinstance(
                        cx.plan.ty(facts, name), (types.Number, types.Boolean, types.Array)):
                continue        # (a range's iterator: the loop runs on its own counter)
            if cx.draft:        # (assigned where the read is recomputed: reads.py)
                L.code("{} = {}", cx.names.n(name),
                       cx.adjoints.ref(name, restores=True, shared=cx.parallel.shares(name)))
                continue
            got = cx.adjoints.ref(name)
            if got != cx.names.n(name):
                cx.parallel.note_assigned(name)
                L.code("{} = {}", cx.names.n(name), got)

    def element_seed(self, stmt):
        """The adjoint of the element that ``stmt`` stores into an array a map loop fills:
        the seed of that loop (an array a later loop reads: :mod:`.indexed_seeds`); a
        name."""
        return self.seed_name(self.facts.array_root(stmt.target.name))

    def seed_name(self, phi):
        return self.cx.names.seed(phi)

    def loop(self, L, lp):
        cx = self.cx
        if lp not in cx.plan.replayed:      # (the sweep seeds those that it runs again)
            for phi, members, outflow, seed in cx.plan.fused[lp]:
                L.code("{} = {}", self.seed_name(phi), cx.src.seed(seed))
        if lp not in self._sweeping:
            for array, (loop, seed) in sorted(cx.plan.element_seeds.items()):
                if loop is lp and seed[0] != "indexed":
                    L.code("{} = {}", self.seed_name(array), cx.src.seed(seed))
            cx.indexed.reading_loop(L, lp)
        for array, (loop, _) in sorted(cx.plan.assigned_adjoints.items()):
            if loop is lp and not covers_every_element(self.facts, lp, array):
                # (its iterations assign the elements before this one)
                L.code("{}[{}:] = 0.0", cx.names.bar(array), lp.range.len)
        if lp in cx.plan.parallel and self.reverses(lp):
            cx.parallel.loop(L, lp)     # (a loop the sweep runs again: in the sweep)
            return
        # Run by the replay only to be run again by the sweep: the replay keeps nothing
        # of it (its inner loops push nothing, compute no kept derivative).
        quiet = lp in cx.plan.replayed and not self.reverses(lp)
        self.replaying += quiet
        try:
            with cx.summing_cells(L, lp) if self.reverses(lp) else nullcontext():
                with L.block("while True:"):
                    cx.forward.region(L, self.facts.s.regions[lp])
        finally:
            self.replaying -= quiet

    def iteration_reverse(self, L, lp, e):
        """Reverse, right away, the iteration of fused loop ``lp`` that ends on edge ``e``."""
        cx, facts = self.cx, self.facts
        src, dst = e
        kind = facts.s.regions[lp].edge_kind(e)
        if lp.range is not None and lp.range.array is not None:
            L.code("{} = {} - 1", "_it%d" % lp.header, lp.range.ctr)
        for phi, members, outflow, seed in cx.plan.fused[lp]:
            if kind == "back":
                inc = facts.phi_incoming(phi).get(src)
                if isinstance(inc, ir.Var):
                    self._seed_into(L, inc.name, phi)
            elif outflow is not None:
                flowing = self._flowing(dst, src, members, outflow)
                if flowing is not None and flowing in cx.activity.useful:
                    self._seed_into(L, flowing, phi)
        region = facts.s.regions[lp]
        cx.reverse.region_from(L, region, region.node_of(src))
        for tgt, _ in facts.block_phis[lp.header]:
            if tgt.name in cx.activity.useful:
                L.code("{} = {}", cx.names.bar(tgt), ZERO)

    def _seed_into(self, L, name, phi):
        """The sum's seed is the adjoint of the value leaving the iteration (assigned when
        that is its only contribution, see :mod:`..plan.direct`)."""
        L.code("{} = {}" if name in self.cx.plan.direct else "{} += {}",
               self.cx.names.bar(name), self.seed_name(phi))

    def _flowing(self, dst, src, members, outflow):
        """The member of a sum's family that leaves the loop on the edge ``src -> dst``."""
        flowing = None
        for tgt, incs in self.facts.block_phis.get(dst, ()):
            v = incs.get(src)
            if tgt.name == outflow or (isinstance(v, ir.Var) and v.name in members
                                       and tgt.name not in members):
                if isinstance(v, ir.Var) and v.name in members:
                    flowing = v.name
        if flowing is None and outflow in members:
            flowing = outflow
        return flowing
