"""Parallel loops in the emitted code: one helper call per iteration, inside ``prange``.

The helper is the fused iteration (replay, then reverse) as its own function, with its
stacks in its own frame. What it returns (the iteration's share of each sum and of each
adjoint of a value from before the loop) is reduced by Numba's parfor reductions. Array
adjoints written at the loop's own index are written in place; the others get one copy per
thread (``numba.get_thread_id()``), summed after the loop.

Which names of the body are the helper's parameters, results, stacks and locals is read
from what emission knows, not from the text: the names it handed out while writing the
body (:attr:`.names.Names.mentions`), each with its IR name, whether that is defined
inside the loop, and its Numba type; the stacks it pushed, popped or cleared; the seeds it
named. A loop whose iteration would assign a value from before it runs serially
(:func:`.reads.shared_assignments`).
"""
import ast

from numba.core import ir, types

from ..facts.structure import node_key
from ..typeinfo import is_float
from .constants import ZERO
from ..generated_source.code import call, expr, function_def, value
from .syntax import walk

#: Elements of per-thread adjoint copies (all threads together) a parallel loop may make;
#: past it the backward raises MemoryError and the caller runs the serial backward.
SHARED_COPY_LIMIT = 1 << 22


class Parallel:
    def __init__(self, cx):
        self.cx = cx
        self.facts = cx.facts
        self._inside = {}       # parallel loop -> the IR names defined inside it

    def loop(self, L, lp):
        cx, names = self.cx, self.cx.names
        helper = cx.plan.parallel[lp]
        H, mentioned = self._helper_body(L, lp)
        shared = sorted(names.bar(r) for r in cx.shared_roots.get(lp, ()))
        params, sums, adjoints, stacks, locals_ = self._split_names(lp, mentioned)
        out = L.sub(0)
        results = sums + adjoints
        with out.open(function_def(helper, ["_p"] + params)):
            for st in sorted(stacks):
                out(cx.stack_declaration(st))
            for name, init in locals_:
                out.code("{} = {}", name, init)
            for name in sums:
                out.code("{} = 0.0", name)
            for name in adjoints:
                out.code("{} = {}", name, ZERO)
            out.extend(H)
            out.code("return {}", tuple(results))
        cx.helpers[helper] = out
        cx.helper_stacks |= stacks
        if names.mentions is not None:      # the call, in the helper of a loop around
            names.mentions.update(params + results)
        self._reduced_loop(L, lp, helper, params, results, shared)

    def _helper_body(self, L, lp):
        """The helper's body: one iteration, from the loop's index ``_p``; and the names
        emission handed out for it (:attr:`.names.Names.mentions`)."""
        cx = self.cx
        H = L.sub(1)
        saved = cx.helper_loop, cx.names.mentions
        cx.helper_loop = lp
        cx.names.mentions = mentioned = set()
        H.code("{} = _p", lp.range.ctr)
        with H.block("while True:"):
            cx.forward.region(H, self.facts.s.regions[lp])
        cx.helper_loop, cx.names.mentions = saved
        return H, mentioned

    def _reduced_loop(self, L, lp, helper, params, results, shared):
        """The loop: reductions of what each iteration adds, and per-thread copies of the
        adjoints several iterations add into. Copies past SHARED_COPY_LIMIT elements make
        the backward raise, and the caller then runs the serial one."""
        rl = lp.range
        if shared:
            size = expr("{}.size", shared[0])
            for b in shared[1:]:
                size = expr("{} + {}.size", size, b)
            with L.block("if {} * numba.get_num_threads() > {}:", size, SHARED_COPY_LIMIT):
                L.code('raise MemoryError("per-thread adjoint copies past the limit")')
        copies = {b: "_t_" + b for b in shared}
        for b in shared:
            L.code("{} = np.zeros((numba.get_num_threads(),) + {b}.shape, {b}.dtype)",
                   copies[b], b=b)
        args = [value("_p")] + [expr("{}[numba.get_thread_id()]", copies[p]) if p in shared
                                else value(p) for p in params]
        with L.block("for _p in numba.prange({}):", rl.len):
            L.code("_c = {}", call(helper, args))
            for k, r in enumerate(results):
                L.code("{} += _c[{}]", r, k)
        for b in shared:
            L.code("{} += {}.sum(axis=0)", b, copies[b])
        # Leaving the loop: the test that ends it and what the reverse does there.
        L.code("{} = {}", rl.ctr, rl.len)
        with L.block("while True:"):
            self.cx.forward.block(L, lp.header)
            self.cx.forward.follow(L, self.facts.s.regions[lp], lp.exits[0])

    def _split_names(self, lp, mentioned):
        """Split the names of a helper body: parameters (values from before the loop, the
        adjoint arrays of those, the seeds computed before it, the loop's length), sums
        and adjoints of floats from before the loop (returned and reduced), stacks, and
        the helper's own locals that the backward declares. ``mentioned``: the names
        emission handed out for the body; what each one is comes from its IR name."""
        cx, facts, plan = self.cx, self.facts, self.cx.plan
        values = cx.names.values()
        inside = self._names_inside(lp)
        aliases = plan.sites.aliases
        sums = sorted(cx.names.n(phi) for phi, _, _, _ in plan.fused[lp])
        seeded = {phi: loop for loop, families in plan.fused.items()
                  for phi, _, _, _ in families}
        seeded.update({a: loop for a, (loop, _) in plan.element_seeds.items()})
        seed_loops = {s: seeded[v] for s, v in cx.names.seeds.items()}
        decl = cx.declarations()
        stacks = {n for n in mentioned if n in cx.stack_specs()}
        params, adjoints, own = {lp.range.len}, [], set()
        for name in mentioned - stacks:
            if name in seed_loops:      # made before the loop, or by a loop inside it
                loop = seed_loops[name]
                (own if loop is not lp and loop.header in lp.blocks else params).add(name)
                continue
            if name not in values:
                continue                # made by the helper (temporaries, records)
            value, adjoint = values[name]
            if aliases.get(value, value) in inside:
                own.add(name)
            elif adjoint and is_float(facts.ty(value)):
                adjoints.append(name)   # outer adjoint: += only
            else:
                params.add(name)        # a value from before the loop, or its adjoint array
        own |= self._records(lp)
        own = sorted(n for n in own - set(sums) if n in decl)
        return (sorted(params), sums, sorted(adjoints), stacks,
                [(n, decl[n]) for n in own])

    def _records(self, lp):
        """The control-flow records the loops and merges of ``lp`` may make (a helper
        declares those it makes; the others the tidy pass drops, nothing reads them)."""
        names = set()
        for inner in self.facts.s.loops:
            if inner.header in lp.blocks:
                names.update("_%s%d" % (k, inner.header) for k in ("n", "x", "l", "it"))
        for region in self.facts.s.regions.values():
            if region.loop is not None and region.loop.header in lp.blocks:
                names.update("_c%s" % node_key(n) for n in region.nodes
                             if len(region.ins[n]) > 1)
        return names

    def shares(self, name):
        """The parallel loop whose helper is being emitted, when assigning the value
        ``name`` there would make its iterations depend on each other (a value from
        before the loop); else None."""
        lp = self.cx.helper_loop
        if lp is None:
            return None
        value = self.cx.plan.sites.aliases.get(name, name)
        if value in self._names_inside(lp) or name in self.cx.plan.added_types:
            return None
        return lp

    def note_assigned(self, name):
        """Emission assigns the value ``name`` here. The plan ran serially every parallel
        loop whose iteration would assign a value from before it
        (:func:`.reads.shared_assignments`)."""
        if self.shares(name) is not None:
            self.facts.error("internal: a parallel loop assigns %r, defined before it" % name)

    def _names_inside(self, lp):
        got = self._inside.get(lp)
        if got is None:
            got = self._inside[lp] = set(self._loop_names(lp))
        return got

    def _loop_names(self, lp):
        """IR names defined inside loop ``lp`` (statements and phis of its blocks)."""
        for name, (label, _) in self.facts.defs.items():
            if label in lp.blocks:
                yield name
        for name, label in self.facts.phis.items():
            if label in lp.blocks:
                yield name

    # ------------------------------------------------------------------ shared adjoints
    def note_adjoint_write(self, arr, idx):
        """Inside a parallel loop's helper, an adjoint written at ``arr[idx]`` belongs to
        this iteration when ``idx``, or the index of a view ``arr`` comes from, is the
        loop's index. Otherwise several iterations add into it: the array's adjoint is
        shared, and each thread gets a copy of its own (summed after the loop)."""
        lp = self.cx.helper_loop
        if lp is None or self._is_iteration_index(idx, lp):
            return
        facts = self.facts
        name = arr.name
        for _ in range(100):
            d = facts.def_expr(name)
            if isinstance(d, ir.Var):
                name = d.name
            elif isinstance(d, ir.Expr) and d.op in ("getitem", "static_getitem") \
                    and isinstance(facts.ty(d.value), types.Array):
                if self._is_iteration_index(facts.index_var(d), lp):
                    return
                name = d.value.name
            else:
                break
        self.cx.shared_roots.setdefault(lp, set()).add(facts.array_root(arr.name))

    def _is_iteration_index(self, var, lp):
        name = var.name if var is not None else None
        for _ in range(100):
            if name is None:
                return False
            if name == lp.range.first:
                return True
            d = self.facts.def_expr(name)
            name = d.name if isinstance(d, ir.Var) else None
        return False


def straight_helpers(tree, helpers):
    """The iteration helpers (functions of the generated module ``tree`` named in
    ``helpers``) that hold at most one loop (the ``while True`` shell around the
    iteration's body) and at most one branch. Numba inlines those into the ``prange``
    body (a call per iteration cost a map loop twice its serial time); inlined there, an
    iteration that branches had its adjoints accumulate across iterations in Numba's
    parfor lowering (a wrong gradient), so the others are called."""
    out = set()
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name in helpers:
            nodes = list(walk(fn))
            loops = sum(isinstance(n, (ast.For, ast.While)) for n in nodes)
            branches = sum(isinstance(n, (ast.If, ast.IfExp)) for n in nodes)
            if loops <= 1 and branches <= 1:
                out.add(fn.name)
    return frozenset(out)
