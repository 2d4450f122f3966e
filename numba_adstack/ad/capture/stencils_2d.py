"""The sources of the primitives of 2-d stencil expressions (:mod:`.stencils`).

A 2-d heat equation or a Gray-Scott step in whole-array NumPy shifts slices in both
dimensions::

    lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
    u[1:-1, 1:-1] = u[1:-1, 1:-1] + dt * D * lap / dx ** 2

The primitive's forward is one loop nest over the cells, row by row, where every slice
has the result's shape (the same operations per element as the whole-array expression:
the same values), else the expression as written. Its pullback is one loop nest over the
cells: per row, the operands' rows read at their offsets, each cell's value recomputed
and its adjoint taken back (:class:`.CellAdjoint`), the first slice's share of each
array added into its adjoint there, each other slice's share written into a row of its
own, then added into the operand's adjoint at the slice's offset, one plain loop per
slice. Each loop reads and writes rows indexed from 0 (views of C-contiguous rows where
the arrays are): LLVM sees consecutive accesses. Where an operand of length 1 on an axis
is broadcast, a scalar loop nest adds into the adjoints directly.
"""
from .stencil_cells import CellAdjoint, bound_lines, sources

_AXES = (0, 1)


def _slices(tree):
    return {k: i for i, k in enumerate(k for k in tree.nodes if k[0] == "slice")}


def _bounds(sl, arr):
    """``lo<i>_<d>``, ``len<i>_<d>``: where slice ``i`` starts on axis ``d`` and how
    many elements it takes there."""
    L = []
    for k, i in sl.items():
        for d in _AXES:
            L.extend(bound_lines("%d_%d" % (i, d), arr[k[1]], d, k[2][d]))
    return L


def _same_shape(sl):
    return " and ".join("len%d_%d == m%d" % (i, d, d) for i in sl.values() for d in _AXES)


def _row(i, a):
    """Row ``i`` of the cells of slice ``i`` in array ``a``, from its first column."""
    return "%s[lo%d_0 + i, lo%d_1:lo%d_1 + m1]" % (a, i, i, i)


def primal_source(name, tree, root):
    """The primitive: one loop nest computing the expression element by element where
    every slice has the result's shape, else the expression on the arrays as written
    (NumPy's broadcasting, its errors)."""
    expr, arr, num = sources(tree, root)
    params = [arr[n] for n in tree.arrays] + [num[n] for n in tree.numbers]
    sl = _slices(tree)
    element, _, _ = sources(tree, root, lambda k: "A%d[j]" % sl[k])
    L = ["def %s(%s):" % (name, ", ".join(params))]
    L.extend(_bounds(sl, arr))
    for d in _AXES:
        lens = ["len%d_%d" % (i, d) for i in sl.values()]
        L.append("    m%d = %s" % (d, "max(%s)" % ", ".join(lens) if len(lens) > 1
                                   else lens[0]))
    L.append("    if %s:" % _same_shape(sl))
    L.append("        out = np.empty((m0, m1))")
    L.append("        for i in range(m0):")
    for k, i in sl.items():
        L.append("            A%d = %s" % (i, _row(i, arr[k[1]])))
    L.append("            row = out[i]")
    L.append("            for j in range(m1):")
    L.append("                row[j] = %s" % element)
    L.append("        return out")
    L.append("    return %s" % expr)
    return "\n".join(L) + "\n"


def pullback_source(fname, tree, root, arr, num):
    """One loop nest over the cells, row by row: the value recomputed, the adjoint
    taken back to the operands (the first share of each array into its adjoint, each
    other share of the row into a row of its own, added at the slice's offset after the
    row), the numbers' adjoints summed."""
    params = [arr[n] for n in tree.arrays] + [num[n] for n in tree.numbers]
    sl = _slices(tree)
    cell = CellAdjoint(tree, root, arr, num, sl)
    L = ["def %s(%s, g):" % (fname, ", ".join(params)),
         "    m0 = g.shape[0]",
         "    m1 = g.shape[1]"]
    L.extend(_bounds(sl, arr))
    for i in sl.values():
        for d in _AXES:
            L.append("    if len%d_%d != m%d and len%d_%d != 1:" % (i, d, d, i, d))
            L.append("        raise ValueError('operands could not be broadcast together')")
    L.extend(cell.prelude())
    for n in tree.arrays:
        L.append("    %s_b = np.zeros_like(%s)" % (arr[n], arr[n]))
    for o in cell.summed:
        L.append("    %s = 0.0" % cell.total[o])
    L.append("    if %s:" % _same_shape(sl))
    # (the first share of each array is added into its adjoint in the loop over the
    # row; the others, whose cells a share before them may reach, after it)
    direct, seen = set(), set()
    for k, i in sl.items():
        if k[1] not in seen:
            seen.add(k[1])
            direct.add(i)
        else:
            L.append("        B%d = np.empty(m1)" % i)
    L.append("        for i in range(m0):")
    for k, i in sl.items():
        L.append("            A%d = %s" % (i, _row(i, arr[k[1]])))
        if i in direct:
            L.append("            Z%d = %s" % (i, _row(i, arr[k[1]] + "_b")))
    L.append("            G = g[i]")
    L.append("            for j in range(m1):")
    L.extend(cell.body(lambda i, a: "A%d[j]" % i, 4,
                       lambda k, i, b: ("Z%d[j] += %s" if i in direct else "B%d[j] = %s")
                       % (i, b), "G[j]"))
    for k, i in sl.items():
        if i not in direct:
            L.append("            Z = %s" % _row(i, arr[k[1]] + "_b"))
            L.append("            for j in range(m1):")
            L.append("                Z[j] += B%d[j]" % i)
    L.append("    else:")

    def at(i, a):
        return "%s[lo%d_0 + (i if len%d_0 == m0 else 0), lo%d_1 + (j if len%d_1 == m1 " \
               "else 0)]" % (a, i, i, i, i)
    L.append("        for i in range(m0):")
    L.append("            for j in range(m1):")
    L.extend(cell.body(at, 4, lambda k, i, b: "%s += %s" % (at(i, arr[k[1]] + "_b"), b),
                       "g[i, j]"))
    L.extend(cell.epilogue())
    L.append("    return (%s,)" % ", ".join("%s_b" % p for p in params))
    return "\n".join(L) + "\n"
