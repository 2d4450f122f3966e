"""Matrix decompositions: the items of ``np.linalg.eigh``, ``eig``, ``svd`` and ``slogdet``,
as functions of their own (capture rewrites ``np.linalg.eigh(a)[0]`` as ``eigh_values(a)``:
ad/capture/numpy_items.py), and the adjoints and tangents of those and of ``np.linalg.cholesky``
and ``np.linalg.pinv``; and, read the same way, the pieces of ``np.split``,
``np.array_split``, ``np.hsplit``, ``vsplit`` and ``dsplit`` (``split_item``...).

``eigh`` and ``cholesky`` read the lower triangle of ``a`` only: their adjoint is the
gradient with respect to those entries (``lower_of``), which is also what reaches ``b``
through ``a = b + b.T``; forward mode reads the tangent's lower triangle alike
(``symmetric_from_lower``).
"""
import numpy as np
from .helper_jit import helper_jit


# ---------------------------------------------------------------------- the items
@helper_jit(error_model="numpy")
def eigh_values(a):
    """``np.linalg.eigh(a)[0]``: the eigenvalues of the symmetric ``a``, ascending."""
    return np.linalg.eigh(a)[0]


@helper_jit(error_model="numpy")
def eigh_vectors(a):
    """``np.linalg.eigh(a)[1]``: the eigenvectors, one per column."""
    return np.linalg.eigh(a)[1]


@helper_jit(error_model="numpy")
def svd_values(a, full_matrices=True):
    """``np.linalg.svd(a)[1]``: the singular values, descending."""
    return np.linalg.svd(a, full_matrices)[1]


@helper_jit(error_model="numpy")
def svd_u(a, full_matrices=True):
    """``np.linalg.svd(a, full_matrices)[0]``: the left singular vectors, one per column."""
    return np.linalg.svd(a, full_matrices)[0]


@helper_jit(error_model="numpy")
def svd_vh(a, full_matrices=True):
    """``np.linalg.svd(a, full_matrices)[2]``: the right singular vectors, one per row."""
    return np.linalg.svd(a, full_matrices)[2]


@helper_jit(error_model="numpy")
def eig_values(a):
    """``np.linalg.eig(a)[0]`` of a real ``a`` with real eigenvalues (Numba raises
    otherwise): the eigenvalues in LAPACK's order."""
    return np.linalg.eig(a)[0]


@helper_jit(error_model="numpy")
def eig_vectors(a):
    """``np.linalg.eig(a)[1]``: the eigenvectors, of unit length, one per column."""
    return np.linalg.eig(a)[1]


@helper_jit(error_model="numpy")
def slogdet_sign(a):
    """``np.linalg.slogdet(a)[0]``."""
    return np.linalg.slogdet(a)[0]


@helper_jit(error_model="numpy")
def slogdet_logabs(a):
    """``np.linalg.slogdet(a)[1]``: log |det a|."""
    return np.linalg.slogdet(a)[1]


# ---------------------------------------------------------------------- triangles
@helper_jit(error_model="numpy")
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


@helper_jit(error_model="numpy")
def symmetric_from_lower(d):
    n = d.shape[0]
    out = np.empty((n, n))
    for i in range(n):
        for j in range(i + 1):
            out[i, j] = d[i, j]
            out[j, i] = d[i, j]
    return out


@helper_jit(error_model="numpy")
def _phi(x):
    """The lower triangle of ``x`` with its diagonal halved (Murray 2016)."""
    n = x.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        out[i, i] = 0.5 * x[i, i]
        for j in range(i):
            out[i, j] = x[i, j]
    return out


@helper_jit(error_model="numpy")
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
@helper_jit(error_model="numpy")
def eigh_values_vjp(g, a):
    _, v = np.linalg.eigh(a)
    return lower_of(np.dot(v * np.ascontiguousarray(g), v.T))


@helper_jit(error_model="numpy")
def eigh_values_jvp(a, d):
    _, v = np.linalg.eigh(a)
    return np.sum(v * np.dot(symmetric_from_lower(np.ascontiguousarray(d)), v), axis=0)


@helper_jit(error_model="numpy")
def eigh_vectors_vjp(g, a):
    """Distinct eigenvalues: A_bar = V (F o (V^T V_bar)) V^T, F the inverse gaps."""
    w, v = np.linalg.eigh(a)
    inner = _gaps(w) * np.dot(v.T, np.ascontiguousarray(g))
    return lower_of(np.dot(np.dot(v, inner), v.T))


@helper_jit(error_model="numpy")
def eigh_vectors_jvp(a, d):
    w, v = np.linalg.eigh(a)
    dd = symmetric_from_lower(np.ascontiguousarray(d))
    return np.dot(v, _gaps(w) * np.dot(np.dot(v.T, dd), v))


# ---------------------------------------------------------------------- svd, slogdet
@helper_jit(error_model="numpy")
def svd_values_vjp(g, a, full_matrices=True):
    """Distinct non-zero singular values: A_bar = U diag(s_bar) V^T (thin factors)."""
    u, _, vh = np.linalg.svd(np.ascontiguousarray(a), full_matrices=False)
    return np.dot(u * np.ascontiguousarray(g), vh)


@helper_jit(error_model="numpy")
def svd_values_jvp(a, d, full_matrices=True):
    u, _, vh = np.linalg.svd(np.ascontiguousarray(a), full_matrices=False)
    return np.sum(u * np.dot(np.ascontiguousarray(d), vh.T), axis=0)


@helper_jit(error_model="numpy")
def slogdet_vjp(g, a):
    return g * np.ascontiguousarray(np.linalg.inv(np.ascontiguousarray(a)).T)


@helper_jit(error_model="numpy")
def slogdet_jvp(a, d):
    return np.sum(np.linalg.inv(np.ascontiguousarray(a)).T * d)


# ---------------------------------------------------------------------- svd vectors
# Thin factors A = U diag(s) V^T, k = min(m, n) singular values, distinct and non-zero;
# F[i, j] = 1 / (s[j]^2 - s[i]^2) off the diagonal (Townsend 2016). With full_matrices
# and a non-square a, the vectors past k span the complement in any basis LAPACK picks:
# they have no derivative.
_FULL = ("np.linalg.svd: the derivative of the singular vectors past min(m, n), which "
         "full_matrices=True adds for a non-square matrix, is not defined (any basis of "
         "the complement); pass full_matrices=False")


@helper_jit(error_model="numpy")
def _svd_thin(a, full_matrices, left):
    m, n = a.shape
    if full_matrices and ((left and m > n) or (not left and n > m)):
        raise ValueError(_FULL)
    return np.linalg.svd(np.ascontiguousarray(a), full_matrices=False)


@helper_jit(error_model="numpy")
def _svd_gaps(s):
    k = s.shape[0]
    f = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            if i != j:
                f[i, j] = 1.0 / (s[j] * s[j] - s[i] * s[i])
    return f


@helper_jit(error_model="numpy")
def svd_u_vjp(g, a, full_matrices):
    """A_bar = U (F o (U^T U_bar - U_bar^T U)) S V^T + (I - U U^T) U_bar S^-1 V^T."""
    u, s, vh = _svd_thin(a, full_matrices, True)
    g = np.ascontiguousarray(g)
    utg = np.dot(u.T, g)
    inner = _svd_gaps(s) * (utg - utg.T) * s.reshape((1, s.size))
    out = np.dot(np.dot(u, inner), vh)
    return out + np.dot((g - np.dot(u, utg)) / s.reshape((1, s.size)), vh)


@helper_jit(error_model="numpy")
def svd_vh_vjp(g, a, full_matrices):
    """With V_bar = Vh_bar^T: A_bar = U S (F o (V^T V_bar - V_bar^T V)) V^T
    + U S^-1 V_bar^T (I - V V^T)."""
    u, s, vh = _svd_thin(a, full_matrices, False)
    g = np.ascontiguousarray(g)                          # Vh_bar = V_bar^T
    vtgv = np.dot(vh, np.ascontiguousarray(g.T))         # V^T V_bar
    inner = s.reshape((s.size, 1)) * (_svd_gaps(s) * (vtgv - vtgv.T))
    out = np.dot(np.dot(u, inner), vh)
    rest = g - np.dot(np.dot(g, np.ascontiguousarray(vh.T)), vh)
    return out + np.dot(u / s.reshape((1, s.size)), rest)


@helper_jit(error_model="numpy")
def svd_u_jvp(a, d, full_matrices):
    """dU = U (F o (dP S + S dP^T)) + (I - U U^T) dA V S^-1, dP = U^T dA V."""
    u, s, vh = _svd_thin(a, full_matrices, True)
    dv = np.dot(np.ascontiguousarray(d), np.ascontiguousarray(vh.T))      # dA V
    dp = np.dot(u.T, dv)
    sr = s.reshape((1, s.size))
    du = np.dot(u, _svd_gaps(s) * (dp * sr + sr.T * dp.T))
    return du + (dv - np.dot(u, dp)) / sr


@helper_jit(error_model="numpy")
def svd_vh_jvp(a, d, full_matrices):
    """dV = V (F o (S dP + dP^T S)) + (I - V V^T) dA^T U S^-1; the tangent is dV^T."""
    u, s, vh = _svd_thin(a, full_matrices, False)
    d = np.ascontiguousarray(d)
    v = np.ascontiguousarray(vh.T)
    dtu = np.dot(np.ascontiguousarray(d.T), u)                            # dA^T U
    dp = np.dot(np.dot(u.T, d), v)
    sr = s.reshape((1, s.size))
    dvv = np.dot(v, _svd_gaps(s) * (sr.T * dp + dp.T * sr))
    dvv += (dtu - np.dot(v, np.dot(v.T, dtu))) / sr
    return np.ascontiguousarray(dvv.T)


# ---------------------------------------------------------------------- eig
# A = V diag(w) V^-1 with real, distinct eigenvalues; dA maps to M = V^-1 dA V: dw is its
# diagonal, and the columns of V (of unit length) move by V (F o M), F[i, j] =
# 1 / (w[j] - w[i]), less their component along themselves.
@helper_jit(error_model="numpy")
def _eig(a):
    w, v = np.linalg.eig(np.ascontiguousarray(a))
    return w, v, np.linalg.inv(v)


@helper_jit(error_model="numpy")
def eig_values_vjp(g, a):
    """A_bar = V^-T diag(w_bar) V^T."""
    _, v, vinv = _eig(a)
    g = np.ascontiguousarray(g)
    return np.dot(np.ascontiguousarray(vinv.T) * g.reshape((1, g.size)),
                  np.ascontiguousarray(v.T))


@helper_jit(error_model="numpy")
def eig_values_jvp(a, d):
    _, v, vinv = _eig(a)
    return np.sum(vinv.T * np.dot(np.ascontiguousarray(d), v), axis=0)


@helper_jit(error_model="numpy")
def eig_vectors_vjp(g, a):
    w, v, vinv = _eig(a)
    g = np.ascontiguousarray(g)
    along = np.sum(g * v, axis=0)
    pbar = g - v * along.reshape((1, along.size))
    mbar = _gaps(w) * np.dot(np.ascontiguousarray(v.T), pbar)
    return np.dot(np.dot(np.ascontiguousarray(vinv.T), mbar), np.ascontiguousarray(v.T))


@helper_jit(error_model="numpy")
def eig_vectors_jvp(a, d):
    w, v, vinv = _eig(a)
    m = np.dot(np.dot(vinv, np.ascontiguousarray(d)), v)
    p = np.dot(v, _gaps(w) * m)
    along = np.sum(v * p, axis=0)
    return p - v * along.reshape((1, along.size))


# ---------------------------------------------------------------------- cholesky, pinv
@helper_jit(error_model="numpy")
def cholesky_vjp(g, l):
    """Murray (2016): S = L^-T Phi(L^T L_bar) L^-1, on the lower triangle read."""
    lt = np.ascontiguousarray(l.T)
    p = _phi(np.dot(lt, np.ascontiguousarray(g)))
    x = np.linalg.solve(lt, p)                           # L^-T P
    return lower_of(np.linalg.solve(lt, np.ascontiguousarray(x.T)).T)


@helper_jit(error_model="numpy")
def cholesky_jvp(l, d):
    """dL = L Phi(L^-1 dA L^-T)."""
    dd = symmetric_from_lower(np.ascontiguousarray(d))
    x = np.linalg.solve(l, dd)                           # L^-1 dA
    m = np.linalg.solve(l, np.ascontiguousarray(x.T))    # L^-1 dA L^-T
    return np.dot(l, _phi(m))


@helper_jit(error_model="numpy")
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


@helper_jit(error_model="numpy")
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
@helper_jit(error_model="numpy")
def split_item(ary, sections, index, axis=0):
    """``np.split(ary, sections, axis)[index]``."""
    return np.split(ary, sections, axis)[index]


@helper_jit(error_model="numpy")
def array_split_item(ary, sections, index, axis=0):
    """``np.array_split(ary, sections, axis)[index]``."""
    return np.array_split(ary, sections, axis)[index]


@helper_jit(error_model="numpy")
def hsplit_item(ary, sections, index):
    """``np.hsplit(ary, sections)[index]``: along the columns (the elements of a 1-d
    ``ary``)."""
    return np.hsplit(ary, sections)[index]


@helper_jit(error_model="numpy")
def vsplit_item(ary, sections, index):
    """``np.vsplit(ary, sections)[index]``: along the rows."""
    return np.vsplit(ary, sections)[index]


@helper_jit(error_model="numpy")
def dsplit_item(ary, sections, index):
    """``np.dsplit(ary, sections)[index]``: along the third axis."""
    return np.dsplit(ary, sections)[index]


@helper_jit(error_model="numpy")
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


@helper_jit(error_model="numpy")
def hsplit_item_vjp(g, ary, sections, index):
    return split_item_vjp(g, ary, sections, index, 1 if ary.ndim > 1 else 0, False)
