"""The stores of arrays whose elements' adjoints a later loop of sums gives
(:mod:`..plan.read_seeds`): each store's value takes the seed tree evaluated at its
index, and there is no adjoint array.

Where the plan could not prove a store's indices free of negative ones (``range(w, n)``
with ``w`` an argument), the replay records whether one was, as the store's loop starts
(``<array>_wrapped``). A negative index counts from the end, so two stores may share an
element, and only the last one into it (the first the sweep reverses) takes its seed,
at the element's index counted from zero: flags, one per element (``<array>_seeded``,
allocated only then), mark the elements given. The sweep reverses each loop holding
such stores twice in the text, with no test where no store had a negative index
(:mod:`.loop_versions`).
"""
from ..plan.read_seeds import uses_of_array
from ..generated_source.code import expr, fill, sum_of


def linear_expr(form, r):
    """The expression of a linear form ``({name: coefficient}, constant)`` of integers
    (:func:`..plan.read_seeds.linear`); ``r`` renders a name."""
    bases, c = form
    out = None
    for b, k in sorted(bases.items()):
        if out is None:
            out = expr("{}", r(b)) if k == 1 else expr("-{}", r(b)) if k == -1 else \
                expr("{} * {}", k, r(b))
        else:
            term = r(b) if abs(k) == 1 else expr("{} * {}", abs(k), r(b))
            out = expr("{} - {}" if k < 0 else "{} + {}", out, term)
    if c or out is None:
        out = expr("{}", c) if out is None else \
            expr("{} - {}" if c < 0 else "{} + {}", out, abs(c))
    return out


class IndexedSeeds:
    def __init__(self, cx):
        self.cx = cx
        self.facts = cx.facts
        self._loops = None          # wrapped array -> headers of the loops storing into it

    # ------------------------------------------------------------------ the sweep
    def store(self, L, stmt, bar):
        """``bar += `` the element's seed, for the store ``stmt``."""
        root = self.facts.array_root(stmt.target.name)
        seed = self.cx.plan.element_seeds[root][1]
        given = self._indexed(seed[1], self._index(stmt))
        if not seed[2] or self.cx.versions.fast:
            L.code("{} += {}", bar, given)  # (no store had a negative index: loop_versions.py)
            return
        with L.block("if {}:", self.names(root)[0]):
            self._flagged_store(L, stmt, bar, root, seed)
        with L.block("else:"):
            L.code("{} += {}", bar, given)

    def _flagged_store(self, L, stmt, bar, root, seed):
        cx = self.cx
        k = cx.names.fresh("k")
        L.code("{} = {} % len({})", k, self._index(stmt), cx.adjoints.ref(root))
        seeded = self.names(root)[1]
        with L.block("if not {}[{}]:", seeded, k):
            L.code("{}[{}] = True", seeded, k)
            L.code("{} += {}", bar, self._indexed(seed[1], k))

    def _index(self, stmt):
        return self.cx.src.store_index(stmt, self.cx.adjoints.ref)

    def flags_stored_in(self, lp):
        """The records of negative indices of the arrays ``lp`` stores into."""
        if self._loops is None:
            self._loops = {}
            for root in self.wrapped_arrays():
                _, stores, _ = uses_of_array(self.facts, root)
                self._loops[root] = {loops[0].header for loops in (
                    self.facts.s.enclosing(label) for label, _ in stores) if loops}
        return [self.names(root)[0] for root, headers in sorted(self._loops.items())
                if lp.header in headers]

    # ------------------------------------------------------------------ the replay
    def reading_loop(self, L, lp):
        """Before the loop that reads the arrays (every store into them ran): the flags
        of the elements given, where a store had a negative index."""
        for root in self.wrapped_arrays():
            if self.cx.plan.element_seeds[root][0] is lp:
                wrapped, seeded = self.names(root)
                L.code("{} = np.zeros(len({}) if {} else 0, np.bool_)", seeded,
                       self.cx.adjoints.ref(root), wrapped)

    def check_stores(self, L, where, r):
        """Record whether stores the plan could not prove free of negative indices have
        one: those of the loop whose header is ``where``, as it starts (when it runs at
        all, its lowest index), or the store ``("store", label, position)`` outside
        loops, before it runs."""
        for root in self.wrapped_arrays():
            for at, lo, hi in self.cx.plan.element_seeds[root][1][2]:
                if at != where:
                    continue
                low = linear_expr(lo, r)
                test = expr("{} < 0", low) if lo == hi else \
                    expr("{} <= {} and {} < 0", low, linear_expr(hi, r), low)
                with L.block("if {}:", test):
                    L.code("{} = True", self.names(root)[0])

    # ------------------------------------------------------------------ names
    def names(self, root):
        """The names of the record that a store into ``root`` had a negative index, and
        of the flags of the elements whose seed the sweep gave."""
        return self.cx.names.n(root + ".wrapped"), self.cx.names.n(root + ".seeded")

    def wrapped_arrays(self):
        """The arrays whose stores the replay checks for negative indices."""
        return sorted(root for root, (_, seed) in self.cx.plan.element_seeds.items()
                      if seed[0] == "indexed" and seed[2])

    # ------------------------------------------------------------------ the seed tree
    def _indexed(self, t, k):
        """The expression of the seed tree ``t`` at index ``k``."""
        kind = t[0]
        if kind == "fused":
            return self.cx.fused.seed_name(t[1])
        if kind == "neg":
            return expr("-{}", self._indexed(t[1], k))
        if kind == "sum":
            return sum_of([self._indexed(x, k) for x in t[1]])
        if kind == "rule":      # a scalar rule's terms, its operands factors at k
            tpls, hs, hy = t[2], t[3], t[4]
            values = {str(j): self._factor(h, k) for j, h in hs.items()}
            if hy is not None:
                values["y"] = self._factor(hy, k)
            values["g"] = self._indexed(t[1], k)
            return sum_of([fill(tpl.tree, values) for tpl in tpls])
        return expr("{} * {}" if kind == "mul" else "{} / {}", self._indexed(t[1], k),
                    self._factor(t[2], k))

    def _factor(self, h, k):
        """The expression of factor ``h`` at index ``k``."""
        if h[0] == "index":
            return k
        if h[0] == "at":
            return expr("{}[{}]", self.cx.adjoints.ref(h[1]), k)
        if h[0] == "expr":
            return self.cx.src.expr(h[1], lambda x: self._factor(h[2][x.name], k))
        return self.cx.src.hoisted(h)
