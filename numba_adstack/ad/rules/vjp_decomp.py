"""Matrix decompositions: the items of ``np.linalg.eigh``, ``eig``, ``svd``, ``slogdet``
and ``qr``, as functions of their own (capture rewrites ``np.linalg.eigh(a)[0]`` as
``eigh_values(a)``: ad/capture/numpy_items.py), and the adjoints and tangents of those and
of ``np.linalg.cholesky``, ``np.linalg.pinv`` and ``np.linalg.cond``. ``np.linalg.lstsq``'s
items are in ``vjp_lstsq``, the pieces of ``np.split``... in ``vjp_split``, the items of
``np.polynomial.polynomial.polydiv`` in ``vjp_poly``.

``eigh`` and ``cholesky`` read the lower triangle of ``a`` only: their adjoint is the
gradient with respect to those entries (``lower_of``), which is also what reaches ``b``
through ``a = b + b.T``; forward mode reads the tangent's lower triangle alike
(``symmetric_from_lower``).
"""
import numpy as np
from .helper_jit import helper_jit
from .vjp_reduce import norm_vjp

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


# ---------------------------------------------------------------------- qr
# Reduced QR of a square or tall a (m >= n, full column rank): A = Q R, Q m x n with
# orthonormal columns, R n x n upper triangular. With M = R R_bar^T - Q_bar^T Q,
# A_bar = (Q_bar + Q copyltu(M)) R^-T (copyltu: the lower triangle mirrored upwards,
# ``symmetric_from_lower``); each item's rule is this with the other item's adjoint zero.
_WIDE = ("np.linalg.qr: the derivative is implemented for a square or tall matrix "
         "(rows >= columns); for a wide one, differentiate the QR of its transpose")


@helper_jit(error_model="numpy")
def as_float64(x):
    """``x`` as a new C-contiguous float64 array (a float32 one promoted by the product,
    a form forward mode differentiates, as ``hvp`` needs: ``.astype`` is not one)."""
    return x * 1.0


@helper_jit(error_model="numpy")
def qr_q(a):
    """``np.linalg.qr(a)[0]``: the orthonormal factor."""
    return np.linalg.qr(a)[0]


@helper_jit(error_model="numpy")
def qr_r(a):
    """``np.linalg.qr(a)[1]``: the upper triangular factor."""
    return np.linalg.qr(a)[1]


@helper_jit(error_model="numpy")
def _qr(a):
    m, n = a.shape
    if m < n:
        raise ValueError(_WIDE)
    q, r = np.linalg.qr(as_float64(a))
    return np.ascontiguousarray(q), np.ascontiguousarray(r)


@helper_jit(error_model="numpy")
def _times_r_inv_t(x, r):
    """``x R^-T``: the solution ``z`` of ``z R^T = x``, i.e. ``R z^T = x^T``."""
    return np.ascontiguousarray(np.linalg.solve(r, np.ascontiguousarray(x.T)).T)


@helper_jit(error_model="numpy")
def qr_q_vjp(g, a):
    q, r = _qr(a)
    g = as_float64(g)
    m = -np.dot(np.ascontiguousarray(g.T), q)
    return _times_r_inv_t(g + np.dot(q, symmetric_from_lower(m)), r)


@helper_jit(error_model="numpy")
def qr_r_vjp(g, a):
    q, r = _qr(a)
    gt = np.ascontiguousarray(as_float64(g).T)
    m = np.dot(r, gt)
    return _times_r_inv_t(np.dot(q, symmetric_from_lower(m)), r)


@helper_jit(error_model="numpy")
def _qr_jvp(a, d):
    """C = Q^T dA R^-1, Omega = tril(C, -1) - tril(C, -1)^T:
    dQ = Q (Omega - C) + dA R^-1, dR = (C - Omega) R."""
    q, r = _qr(a)
    dt = as_float64(d).T
    dr_inv = np.ascontiguousarray(np.linalg.solve(np.ascontiguousarray(r.T), dt).T)
    c = np.dot(q.T, dr_inv)
    low = np.tril(c, -1)
    omega = low - low.T
    return q, r, c, omega, dr_inv


@helper_jit(error_model="numpy")
def qr_q_jvp(a, d):
    q, r, c, omega, dr_inv = _qr_jvp(a, d)
    return np.dot(q, omega - c) + dr_inv


@helper_jit(error_model="numpy")
def qr_r_jvp(a, d):
    q, r, c, omega, dr_inv = _qr_jvp(a, d)
    return np.dot(c - omega, r)


# ---------------------------------------------------------------------- cond
# The 2-norm condition number s_max / s_min (p None or 2; s_min / s_max for p -2) moves
# with the two singular values: ds = u^T dA v. Other p: norm(a, p) norm(inv(a), p).
@helper_jit(error_model="numpy")
def _cond_svd(a, lower):
    """The gradient of ``np.linalg.cond(a, p)`` for p None or 2, or -2 (``lower``):
    distinct extreme singular values, non-zero."""
    u, s, vh = np.linalg.svd(as_float64(a), full_matrices=False)
    k = s.size - 1
    big = np.outer(u[:, 0], vh[0])
    small = np.outer(u[:, k], vh[k])
    c = s[0] / s[k]
    if lower:
        return (small - big / c) / s[0]
    return (big - c * small) / s[k]


@helper_jit(error_model="numpy")
def _cond_norms(a, p):
    """norm(a, p) norm(inv(a), p) (p 1, -1, inf, -inf): the gradient, through
    ``norm_vjp`` of both and inv's adjoint ``-B^T B_bar B^T``."""
    a = as_float64(a)
    b = np.linalg.inv(a)
    na = np.linalg.norm(a, p)
    nb = np.linalg.norm(b, p)
    bt = np.ascontiguousarray(b.T)
    bbar = na * norm_vjp(1.0, nb, b, p)
    return nb * norm_vjp(1.0, na, a, p) - np.dot(np.dot(bt, bbar), bt)


@helper_jit(error_model="numpy")
def cond_grad(a, p=None):
    """The gradient of ``np.linalg.cond(a, p)`` (a matrix of ``a``'s shape). With ``p``
    None the other branch is pruned at compile time: forward mode (``hvp``) then reads
    only the singular values' part."""
    if p is None:
        return _cond_svd(a, False)
    if p == 2:
        return _cond_svd(a, False)
    if p == -2:
        return _cond_svd(a, True)
    return _cond_norms(a, p)
