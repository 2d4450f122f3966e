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


def linear_src(form, r):
    """Source of a linear form ``({name: coefficient}, constant)`` of integers
    (:func:`..plan.read_seeds.linear`); ``r`` renders a name."""
    bases, c = form
    text = ""
    for b, k in sorted(bases.items()):
        term = r(b) if abs(k) == 1 else "%d * %s" % (abs(k), r(b))
        text += ("-" if k < 0 else "") + term if not text else \
            (" - " if k < 0 else " + ") + term
    if c or not text:
        text += "%d" % c if not text else (" - %d" % -c if c < 0 else " + %d" % c)
    return "(%s)" % text


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
        plain = "%s += %s" % (bar, self._indexed(seed[1], self._index(stmt)))
        if not seed[2] or self.cx.versions.fast:
            L(plain)        # (no store had a negative index: emit/loop_versions.py)
            return
        L("if %s:" % self.names(root)[0])
        with L.indent():
            self._flagged_store(L, stmt, bar, root, seed)
        L("else:")
        L("    " + plain)

    def _flagged_store(self, L, stmt, bar, root, seed):
        cx = self.cx
        k = cx.names.fresh("k")
        L("%s = %s %% len(%s)" % (k, self._index(stmt), cx.adjoints.ref(root)))
        seeded = self.names(root)[1]
        L("if not %s[%s]:" % (seeded, k))
        L("    %s[%s] = True" % (seeded, k))
        L("    %s += %s" % (bar, self._indexed(seed[1], k)))

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
                L("%s = np.zeros(len(%s) if %s else 0, np.bool_)"
                  % (seeded, self.cx.adjoints.ref(root), wrapped))

    def check_stores(self, L, where, r):
        """Record whether stores the plan could not prove free of negative indices have
        one: those of the loop whose header is ``where``, as it starts (when it runs at
        all, its lowest index), or the store ``("store", label, position)`` outside
        loops, before it runs."""
        for root in self.wrapped_arrays():
            for at, lo, hi in self.cx.plan.element_seeds[root][1][2]:
                if at != where:
                    continue
                lo_src, hi_src = linear_src(lo, r), linear_src(hi, r)
                test = "%s < 0" % lo_src if lo == hi else \
                    "%s <= %s and %s < 0" % (lo_src, hi_src, lo_src)
                L("if %s:" % test)
                L("    %s = True" % self.names(root)[0])

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
        kind = t[0]
        if kind == "fused":
            return self.cx.fused.seed_name(t[1])
        if kind == "neg":
            return "(-(%s))" % self._indexed(t[1], k)
        if kind == "sum":
            return "(%s)" % " + ".join(self._indexed(x, k) for x in t[1])
        if kind == "rule":      # a scalar rule's terms, its operands factors at k
            tpls, hs, hy = t[2], t[3], t[4]
            pos = [self._factor(hs[j], k) if j in hs else ""
                   for j in range(max(hs, default=-1) + 1)]
            y = self._factor(hy, k) if hy is not None else ""
            g = "(%s)" % self._indexed(t[1], k)
            return "(%s)" % " + ".join("(%s)" % tpl.format(*pos, g=g, y=y) for tpl in tpls)
        op = " * " if kind == "mul" else " / "
        return "(%s)%s%s" % (self._indexed(t[1], k), op, self._factor(t[2], k))

    def _factor(self, h, k):
        if h[0] == "index":
            return "(%s)" % k
        if h[0] == "at":
            return "%s[%s]" % (self.cx.adjoints.ref(h[1]), k)
        if h[0] == "expr":
            return "(%s)" % self.cx.src.expr(h[1], lambda x: self._factor(h[2][x.name], k))
        return self.cx.src.hoisted(h)
