"""``np.linalg.lstsq``: its items as functions of their own (capture rewrites
``np.linalg.lstsq(a, b)[0]`` as ``lstsq_solution(a, b)``: ad/capture/numpy_items.py), and
their adjoints and tangents.
"""
import numpy as np
from .helper_jit import helper_jit
from .vjp_decomp import as_float64


# ---------------------------------------------------------------------- lstsq
# x = A+ b (the least-squares solution of least norm), of constant rank: with r = b - A x,
# dx = -A+ dA x + A+ A+^T dA^T r + (I - A+ A) dA^T A+^T x + A+ db (Golub and Pereyra).
# The residuals (sums of squared r per column of b, when A has full column rank and more
# rows than columns; empty otherwise) move by -2 r^T dA x + 2 r^T db (A^T r = 0); the
# singular values as np.linalg.svd's.
@helper_jit(error_model="numpy")
def lstsq_solution(a, b, rcond=-1.0):
    """``np.linalg.lstsq(a, b, rcond)[0]``."""
    return np.linalg.lstsq(a, b, rcond)[0]


@helper_jit(error_model="numpy")
def lstsq_residuals(a, b, rcond=-1.0):
    """``np.linalg.lstsq(a, b, rcond)[1]``."""
    return np.linalg.lstsq(a, b, rcond)[1]


@helper_jit(error_model="numpy")
def lstsq_rank(a, b, rcond=-1.0):
    """``np.linalg.lstsq(a, b, rcond)[2]`` (an integer: no gradient)."""
    return np.linalg.lstsq(a, b, rcond)[2]


@helper_jit(error_model="numpy")
def lstsq_sv(a, b, rcond=-1.0):
    """``np.linalg.lstsq(a, b, rcond)[3]``: the singular values of ``a``."""
    return np.linalg.lstsq(a, b, rcond)[3]


@helper_jit(error_model="numpy")
def _columns(v):
    """A 1-d ``v`` as one column, a 2-d one as it is (C-contiguous float64)."""
    v = as_float64(v)
    return v.reshape((v.shape[0], v.size // v.shape[0]))


@helper_jit(error_model="numpy")
def _lstsq(a, b, rcond):
    a = as_float64(a)
    b = as_float64(b)
    x = np.linalg.lstsq(a, b, rcond)[0]
    p = np.linalg.pinv(a)
    xc = _columns(x)
    return a, p, xc, _columns(b) - np.dot(a, xc)


@helper_jit(error_model="numpy")
def lstsq_solution_vjp_a(g, a, b, rcond=-1.0):
    """-z x^T + r (A+ z)^T + (A+^T x) ((I - A+ A) x_bar)^T, z = A+^T x_bar."""
    a, p, x, r = _lstsq(a, b, rcond)
    gc = _columns(g)
    pt = np.ascontiguousarray(p.T)
    z = np.dot(pt, gc)
    out = -np.dot(z, x.T) + np.dot(r, np.dot(p, z).T)
    return out + np.dot(np.dot(pt, x), (gc - np.dot(p, np.dot(a, gc))).T)


@helper_jit(error_model="numpy")
def lstsq_solution_vjp_b(g, a, b, rcond=-1.0):
    """A+^T x_bar, in ``b``'s shape."""
    p = np.linalg.pinv(as_float64(a))
    return np.dot(np.ascontiguousarray(p.T), _columns(g)).reshape(b.shape)


@helper_jit(error_model="numpy")
def lstsq_solution_jvp_a(a, b, rcond, d):
    a, p, x, r = _lstsq(a, b, rcond)
    d = as_float64(d)
    dt = np.ascontiguousarray(d.T)
    out = -np.dot(p, np.dot(d, x)) + np.dot(p, np.dot(np.ascontiguousarray(p.T),
                                                      np.dot(dt, r)))
    px = np.dot(dt, np.dot(np.ascontiguousarray(p.T), x))
    out += px - np.dot(p, np.dot(a, px))
    if b.ndim == 1:
        return out.reshape(out.shape[0])
    return out


@helper_jit(error_model="numpy")
def lstsq_solution_jvp_b(a, b, rcond, d):
    p = np.linalg.pinv(as_float64(a))
    return np.dot(p, as_float64(d))


@helper_jit(error_model="numpy")
def lstsq_residuals_vjp_a(g, a, b, rcond=-1.0):
    """-2 (r g) x^T; none where the residuals are empty."""
    if g.size == 0:
        return np.zeros(a.shape)
    _, _, x, r = _lstsq(a, b, rcond)
    rg = r * np.ascontiguousarray(g).reshape((1, g.size))
    return -2.0 * np.dot(rg, x.T)


@helper_jit(error_model="numpy")
def lstsq_residuals_vjp_b(g, a, b, rcond=-1.0):
    if g.size == 0:
        return np.zeros(b.shape)
    _, _, x, r = _lstsq(a, b, rcond)
    return (2.0 * r * np.ascontiguousarray(g).reshape((1, g.size))).reshape(b.shape)


@helper_jit(error_model="numpy")
def lstsq_residuals_jvp(a, b, rcond, da, db):
    """-2 r^T (dA x - db), per column; empty with the residuals."""
    y = np.linalg.lstsq(as_float64(a), as_float64(b), rcond)[1]
    if y.size == 0:
        return np.zeros(0)
    _, _, x, r = _lstsq(a, b, rcond)
    v = np.dot(as_float64(da), x) - _columns(db)
    return -2.0 * np.sum(r * v, axis=0)
