"""The text of a stencil expression and of its adjoint at one cell, shared by the
sources of the 1-d primitives (:mod:`.stencils`) and of the 2-d ones
(:mod:`.stencils_2d`).

A tree's nodes are keys: ``("const", text)``, ``("num", name)``, ``("slice", array,
bounds)`` (``bounds``: ``(start, stop)`` in 1-d, one such pair per dimension in 2-d),
``("op", "+", (a, b), name)``, ``("pow", c, (a,), name)``, ``("neg", None, (a,), name)``.
"""


def slice_text(bounds):
    """``1:-1`` for ``(1, -1)``; ``1:-1, 2:`` for ``((1, -1), (2, None))``."""
    if bounds and isinstance(bounds[0], tuple):
        return ", ".join(slice_text(b) for b in bounds)
    a, b = bounds
    return "%s:%s" % ("" if a is None else a, "" if b is None else b)


def bound_lines(tag, a, axis, bounds):
    """Lines computing ``lo<tag>``, ``hi<tag>`` and ``len<tag>``: where the slice
    ``bounds`` of array ``a`` starts and ends on ``axis`` and how many elements it takes
    (Python's rules for slices)."""
    lo, hi = bounds
    n = "n" + tag
    return ["    %s = %s.shape[%d]" % (n, a, axis),
            "    lo%s = %s" % (tag, "0" if lo is None else
                               "min(max(%d + %s, 0), %s)" % (lo, n, n) if lo < 0
                               else "min(%d, %s)" % (lo, n)),
            "    hi%s = %s" % (tag, n if hi is None else
                               "min(max(%d + %s, 0), %s)" % (hi, n, n) if hi < 0
                               else "min(%d, %s)" % (hi, n)),
            "    len%s = max(hi%s - lo%s, 0)" % (tag, tag, tag)]


def sources(tree, root, leaf=None):
    """``(expression source, array names, number names)`` of the tree, with parameter
    names ``a0..`` for the arrays and ``s0..`` for the numbers; ``leaf(key)``: the text
    of a slice (default: the slice of the whole array)."""
    arr = {n: "a%d" % i for i, n in enumerate(tree.arrays)}
    num = {n: "s%d" % i for i, n in enumerate(tree.numbers)}

    def expr(key):
        kind = key[0]
        if kind == "const":
            return key[1]
        if kind == "num":
            return num[key[1]]
        if kind == "slice":
            if leaf is not None:
                return leaf(key)
            return "%s[%s]" % (arr[key[1]], slice_text(key[2]))
        if kind == "op":
            return "(%s %s %s)" % (expr(key[2][0]), key[1], expr(key[2][1]))
        if kind == "pow":
            return "(%s ** %r)" % (expr(key[2][0]), key[1])
        return "(-%s)" % expr(key[2][0])
    return expr(root), arr, num


def node_text(k, val):
    if k[0] == "op":
        return "%s %s %s" % (val(k[2][0]), k[1], val(k[2][1]))
    if k[0] == "pow":
        return "%s ** %r" % (val(k[2][0]), k[1])
    return "-%s" % val(k[2][0])


def adjoint_terms(k, b, val, add, recip):
    """Add the adjoint ``b`` of node ``k`` into its operands (``add(key, term)``);
    ``recip``: the name of the reciprocal of its divisor, if computed."""
    if k[0] == "neg":
        add(k[2][0], "-%s" % b)
    elif k[0] == "pow":
        c, x = k[1], val(k[2][0])
        add(k[2][0], b if c == 1 else "%s * 2.0 * %s" % (b, x) if c == 2
            else "%s * %r * %s ** %r" % (b, c, x, c - 1))
    else:
        l, r = k[2]
        op = k[1]
        if op == "+":
            add(l, b)
            add(r, b)
        elif op == "-":
            add(l, b)
            add(r, "-%s" % b)
        elif op == "*":
            add(l, "%s * %s" % (b, val(r)))
            add(r, "%s * %s" % (b, val(l)))
        elif recip is not None:
            add(l, "%s * %s" % (b, recip))
            add(r, "-%s * %s * %s" % (b, val(k), recip))
        else:
            add(l, "%s / %s" % (b, val(r)))
            add(r, "-%s * %s / %s" % (b, val(k), val(r)))


class CellAdjoint:
    """The adjoint of the expression at one cell. What depends on numbers only
    (``D / dx ** 2``) is computed once before the loop over the cells (``prelude``), a
    division by it is a product by its reciprocal, and its adjoint is summed in the loop
    (``S_<j>``, with ``radd``) and taken back to the numbers once, after it
    (``epilogue``). ``arr``, ``num``: the parameter names of the arrays and numbers;
    ``sl``: the index of each slice key."""

    def __init__(self, tree, root, arr, num, sl):
        self.tree, self.root, self.arr, self.num, self.sl = tree, root, arr, num, sl
        invariant = set()
        for k in tree.nodes:
            if k[0] in ("op", "pow", "neg") and all(
                    o[0] in ("const", "num") or o in invariant for o in k[2]):
                invariant.add(k)
        self.invariant = invariant
        self.varying = [k for k in tree.nodes if k not in invariant]
        self.name = {k: ("x%d" % sl[k] if k[0] == "slice" else "v_%d" % j)
                     for j, k in enumerate(tree.nodes)}
        self.recip = {}
        for j, k in enumerate(tree.nodes):
            if k not in invariant and k[0] == "op" and k[1] == "/" and \
                    (self.is_invariant(k[2][1]) or k[2][1][0] == "const"):
                self.recip[k] = "r_%d" % j
        # invariant operands of varying nodes: their adjoint is summed in the loop
        summed = []
        for k in self.varying:
            if k[0] in ("op", "pow", "neg"):
                for o in k[2]:
                    if self.is_invariant(o) and o not in summed:
                        summed.append(o)
        self.summed = summed
        self.total = {o: "S_%d" % j for j, o in enumerate(summed)}

    def val(self, key):
        if key[0] == "const":
            return key[1]
        if key[0] == "num":
            return self.num[key[1]]
        return self.name[key]

    def is_invariant(self, key):
        return key[0] == "num" or key in self.invariant

    def prelude(self):
        """Lines computing the invariant nodes and the reciprocals, before the loop."""
        out = []
        for k in self.tree.nodes:
            if k in self.invariant:
                out.append("    %s = %s" % (self.name[k], node_text(k, self.val)))
            elif k in self.recip:
                out.append("    %s = 1.0 / %s" % (self.recip[k], self.val(k[2][1])))
        return out

    def body(self, index_of, level, share, g):
        """The lines of one cell at indentation ``level``: slice ``i`` of array ``a``
        read as ``index_of(i, a)``, the result's adjoint ``g``, slice ``k``'s adjoint
        ``b`` taken away by the line ``share(k, i, b)``."""
        pad = "    " * level
        out = []
        name, val = self.name, self.val
        for k in self.varying:
            if k[0] == "slice":
                out.append("%s%s = %s" % (pad, name[k], index_of(self.sl[k],
                                                                 self.arr[k[1]])))
            elif k in self.recip:
                out.append("%s%s = %s * %s" % (pad, name[k], val(k[2][0]), self.recip[k]))
            else:
                out.append("%s%s = %s" % (pad, name[k], node_text(k, val)))
        bars = {k: "b_%d" % j for j, k in enumerate(self.tree.nodes) if k in self.varying}
        for k in self.varying:
            if k != self.root:
                out.append("%s%s = 0.0" % (pad, bars[k]))
        out.append("%s%s = %s" % (pad, bars[self.root], g))
        total = self.total

        def add(key, term):
            if key in bars:
                out.append("%s%s += %s" % (pad, bars[key], term))
            elif key in total:
                out.append("%s%s = radd(%s, %s)" % (pad, total[key], total[key], term))
        for k in reversed(self.varying):
            if k[0] in ("op", "pow", "neg"):
                adjoint_terms(k, bars[k], val, add, self.recip.get(k))
        for k, i in self.sl.items():
            out.append(pad + share(k, i, bars[k]))
        return out

    def epilogue(self):
        """Lines taking the sums of the invariant nodes' adjoints back to the numbers
        (``s<i>_b``)."""
        cbar = {}
        for j, k in enumerate(self.tree.nodes):
            if k in self.invariant:
                cbar[k] = "c_%d" % j
        for n in self.tree.numbers:
            cbar[("num", n)] = "%s_b" % self.num[n]
        out = []
        for key, c in cbar.items():
            out.append("    %s = %s" % (c, self.total.get(key, "0.0")))

        def cadd(key, term):
            if key in cbar:
                out.append("    %s += %s" % (cbar[key], term))
        for k in reversed(self.tree.nodes):
            if k in self.invariant:
                adjoint_terms(k, cbar[k], self.val, cadd, None)
        return out
