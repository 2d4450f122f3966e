"""Matrix decompositions: the items of ``np.linalg.eigh``, ``svd`` and ``slogdet`` that have
a derivative, as functions of their own (capture rewrites ``np.linalg.eigh(a)[0]`` as
``eigh_values(a)``: ad/numpy_items.py), and the adjoints and tangents of those and of
``np.linalg.cholesky`` and ``np.linalg.pinv``; and, read the same way, the pieces of
``np.split`` and ``np.array_split`` (``split_item``).

``eigh`` and ``cholesky`` read the lower triangle of ``a`` only: their adjoint is the
gradient with respect to those entries (``lower_of``), which is also what reaches ``b``
through ``a = b + b.T``; forward mode reads the tangent's lower triangle alike
(``symmetric_from_lower``).
"""
import numpy as np
from numba import njit


# ---------------------------------------------------------------------- the items
@njit(cache=False)
def eigh_values(a):
    """``np.linalg.eigh(a)[0]``: the eigenvalues of the symmetric ``a``, ascending."""
    return np.linalg.eigh(a)[0]


@njit(cache=False)
def eigh_vectors(a):
    """``np.linalg.eigh(a)[1]``: the eigenvectors, one per column."""
    return np.linalg.eigh(a)[1]


@njit(cache=False)
def svd_values(a):
    """``np.linalg.svd(a)[1]``: the singular values, descending."""
    return np.linalg.svd(a)[1]


@njit(cache=False)
def slogdet_sign(a):
    """``np.linalg.slogdet(a)[0]``."""
    return np.linalg.slogdet(a)[0]


@njit(cache=False)
def slogdet_logabs(a):
    """``np.linalg.slogdet(a)[1]``: log |det a|."""
    return np.linalg.slogdet(a)[1]


# ---------------------------------------------------------------------- triangles
@njit(cache=False)
def lower_of(s):
    """The gradient on the lower triangle of a matrix read as symmetric, from ``s``, the
    gradient along a perturbation of any of its entries: an entry below the diagonal
    stands for itself and its mirror."""
    n = s.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        out[i, i] = s[i, i]
        for j in range(i):
            out[i, j] = s[i, j] + s[j, i]
    return out


@njit(cache=False)
def symmetric_from_lower(d):
    n = d.shape[0]
    out = np.empty((n, n))
    for i in range(n):
        for j in range(i + 1):
            out[i, j] = d[i, j]
            out[j, i] = d[i, j]
    return out


@njit(cache=False)
def _phi(x):
    """The lower triangle of ``x`` with its diagonal halved (Murray 2016)."""
    n = x.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        out[i, i] = 0.5 * x[i, i]
        for j in range(i):
            out[i, j] = x[i, j]
    return out


@njit(cache=False)
def _gaps(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it."""
    n = w.shape[0]
    f = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                f[i, j] = 1.0 / (w[j] - w[i])
    return f


# ---------------------------------------------------------------------- eigh
@njit(cache=False)
def eigh_values_vjp(g, a):
    _, v = np.linalg.eigh(a)
    return lower_of(np.dot(v * np.ascontiguousarray(g), v.T))


@njit(cache=False)
def eigh_values_jvp(a, d):
    _, v = np.linalg.eigh(a)
    return np.sum(v * np.dot(symmetric_from_lower(np.ascontiguousarray(d)), v), axis=0)


@njit(cache=False)
def eigh_vectors_vjp(g, a):
    """Distinct eigenvalues: A_bar = V (F o (V^T V_bar)) V^T, F the inverse gaps."""
    w, v = np.linalg.eigh(a)
    inner = _gaps(w) * np.dot(v.T, np.ascontiguousarray(g))
    return lower_of(np.dot(np.dot(v, inner), v.T))


@njit(cache=False)
def eigh_vectors_jvp(a, d):
    w, v = np.linalg.eigh(a)
    dd = symmetric_from_lower(np.ascontiguousarray(d))
    return np.dot(v, _gaps(w) * np.dot(np.dot(v.T, dd), v))


# ---------------------------------------------------------------------- svd, slogdet
@njit(cache=False)
def svd_values_vjp(g, a):
    """Distinct non-zero singular values: A_bar = U diag(s_bar) V^T (thin factors)."""
    u, _, vh = np.linalg.svd(np.ascontiguousarray(a), full_matrices=False)
    return np.dot(u * np.ascontiguousarray(g), vh)


@njit(cache=False)
def svd_values_jvp(a, d):
    u, _, vh = np.linalg.svd(np.ascontiguousarray(a), full_matrices=False)
    return np.sum(u * np.dot(np.ascontiguousarray(d), vh.T), axis=0)


@njit(cache=False)
def slogdet_vjp(g, a):
    return g * np.ascontiguousarray(np.linalg.inv(np.ascontiguousarray(a)).T)


@njit(cache=False)
def slogdet_jvp(a, d):
    return np.sum(np.linalg.inv(np.ascontiguousarray(a)).T * d)


# ---------------------------------------------------------------------- cholesky, pinv
@njit(cache=False)
def cholesky_vjp(g, l):
    """Murray (2016): S = L^-T Phi(L^T L_bar) L^-1, on the lower triangle read."""
    lt = np.ascontiguousarray(l.T)
    p = _phi(np.dot(lt, np.ascontiguousarray(g)))
    x = np.linalg.solve(lt, p)                           # L^-T P
    return lower_of(np.linalg.solve(lt, np.ascontiguousarray(x.T)).T)


@njit(cache=False)
def cholesky_jvp(l, d):
    """dL = L Phi(L^-1 dA L^-T)."""
    dd = symmetric_from_lower(np.ascontiguousarray(d))
    x = np.linalg.solve(l, dd)                           # L^-1 dA
    m = np.linalg.solve(l, np.ascontiguousarray(x.T))    # L^-1 dA L^-T
    return np.dot(l, _phi(m))


@njit(cache=False)
def pinv_vjp(g, y, a):
    """Constant rank (Golub and Pereyra): the adjoint of
    dA+ = -A+ dA A+ + A+ A+^T dA^T (I - A A+) + (I - A+ A) dA^T A+^T A+."""
    g = np.ascontiguousarray(g)
    a = np.ascontiguousarray(a)
    yt = np.ascontiguousarray(y.T)
    m, n = a.shape
    left = np.eye(m) - np.dot(a, y)                      # I - A A+
    right = np.eye(n) - np.dot(y, a)                     # I - A+ A
    out = -np.dot(np.dot(yt, g), yt)
    out += np.dot(np.dot(left, g.T), np.dot(y, yt))
    out += np.dot(np.dot(np.dot(yt, y), g.T), right)
    return out


@njit(cache=False)
def pinv_jvp(y, a, d):
    d = np.ascontiguousarray(d)
    a = np.ascontiguousarray(a)
    yt = np.ascontiguousarray(y.T)
    m, n = a.shape
    left = np.eye(m) - np.dot(a, y)
    right = np.eye(n) - np.dot(y, a)
    out = -np.dot(np.dot(y, d), y)
    out += np.dot(np.dot(np.dot(y, yt), d.T), left)
    out += np.dot(np.dot(right, d.T), np.dot(yt, y))
    return out


# ---------------------------------------------------------------------- split items
@njit(cache=False)
def split_item(ary, sections, index, axis=0):
    """``np.split(ary, sections, axis)[index]``."""
    return np.split(ary, sections, axis)[index]


@njit(cache=False)
def array_split_item(ary, sections, index, axis=0):
    """``np.array_split(ary, sections, axis)[index]``."""
    return np.array_split(ary, sections, axis)[index]


@njit(cache=False)
def hsplit_item(ary, sections, index):
    """``np.hsplit(ary, sections)[index]``: along the columns (the elements of a 1-d
    ``ary``)."""
    return np.hsplit(ary, sections)[index]


@njit(cache=False)
def vsplit_item(ary, sections, index):
    """``np.vsplit(ary, sections)[index]``: along the rows."""
    return np.vsplit(ary, sections)[index]


@njit(cache=False)
def dsplit_item(ary, sections, index):
    """``np.dsplit(ary, sections)[index]``: along the third axis."""
    return np.dsplit(ary, sections)[index]


@njit(cache=False)
def split_item_vjp(g, ary, sections, index, axis, unequal):
    """``g`` in the slab along ``axis`` of ``ary`` that piece ``index`` holds, zeros
    elsewhere."""
    ax = axis + ary.ndim if axis < 0 else axis
    rows = np.arange(ary.shape[ax])
    pieces = np.array_split(rows, sections) if unequal else np.split(rows, sections)
    out = np.zeros(ary.shape)
    piece = pieces[index]
    if piece.size:
        np.moveaxis(out, ax, 0)[piece[0]:piece[0] + piece.size] += np.moveaxis(g, ax, 0)
    return out


@njit(cache=False)
def hsplit_item_vjp(g, ary, sections, index):
    return split_item_vjp(g, ary, sections, index, 1 if ary.ndim > 1 else 0, False)
