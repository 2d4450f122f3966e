"""Adjoints and tangents of ``np.polynomial.polynomial``'s functions: ``polyval``,
``polyint``, ``polydiv`` (its items as functions of their own: capture rewrites
``polydiv(c1, c2)[0]`` as ``polydiv_quotient(c1, c2)``, ad/capture/numpy_items.py), and
``leading_part``, the adjoint of the coefficients ``polyadd``, ``polysub`` and ``polymul``
padded and trimmed (``vector_of``: a number given for coefficients, as NumPy reads it).

Each helper returns one operand's contribution, shaped like that operand (a float for a
float operand), following Numba's implementation of the primitive where it differs from
NumPy's documentation.
"""
import numpy as np
from numba import types

from .helper_jit import helper_jit
from .vjp_core import by_type, public


# -------------------------------------------------------------------- leading_part
@by_type
def vector_of(c):
    """``c`` as the 1-d array NumPy's functions of coefficients take a number for (one
    coefficient); an array as it is."""
    if isinstance(c, types.Array):
        return lambda c: c
    return lambda c: np.full(1, c)


@public
def leading_part(g, n):
    """The first ``n`` items of ``g``, zeros past its end: the adjoint of coefficients that
    ``np.polynomial.polynomial``'s sums padded and trimmed (trimmed zeros get none)."""
    out = np.zeros(n)
    m = min(n, g.size)
    out[:m] = g[:m]
    return out


# ------------------------------------------------------------------------- polyval
@public
def _coefficients(c):
    if c.ndim != 1:
        raise ValueError("the gradient of np.polynomial.polynomial.polyval takes 1-d "
                         "coefficients: evaluate each column of c on its own")
    return np.ascontiguousarray(c).astype(np.float64)


@public
def _horner(x, c):
    acc = c[c.size - 1] + 0.0 * x
    for k in range(c.size - 2, -1, -1):
        acc = acc * x + c[k]
    return acc


@public
def _slope(x, c):
    """The polynomial's derivative at ``x`` (``sum_k k c_k x^(k-1)``)."""
    n = c.size
    if n < 2:
        return 0.0 * x
    acc = (n - 1) * c[n - 1] + 0.0 * x
    for k in range(n - 2, 0, -1):
        acc = acc * x + k * c[k]
    return acc


_NOT_TENSOR = ("the gradient of np.polynomial.polynomial.polyval with tensor=False takes "
               "1-d coefficients: evaluate each column of c on its own")


@public
def _points(x):
    """The evaluation points, flat (one for a float)."""
    return np.ravel(np.asarray(x)).astype(np.float64)


@public
def _polynomials(c):
    """The coefficients as an (n, R) array: one polynomial per column."""
    n = c.shape[0]
    return np.ascontiguousarray(c).reshape((n, c.size // max(n, 1))).astype(np.float64)


@public
def _column_slopes(x, c):
    """``y_r'(x[s])`` for each column ``r`` of ``c`` and each point ``s``: an (R, S) array."""
    C, X = _polynomials(c), _points(x)
    out = np.empty((C.shape[1], X.size))
    for r in range(C.shape[1]):
        out[r] = _slope(X, np.ascontiguousarray(C[:, r]))
    return out


@public
def _slopes(x, c, g, tensor):
    """``sum_r g[r, s] y_r'(x[s])`` (``g`` of the result's shape: the columns' first)."""
    if not tensor:
        raise ValueError(_NOT_TENSOR)
    S = _column_slopes(x, c)
    return np.sum(np.ascontiguousarray(g).reshape(S.shape) * S, axis=0)


@by_type
def polyval_vjp_x(g, x, c, tensor):
    """``y = sum_k c_k x^k`` element-wise in ``x``: ``g y'(x)``; with ``c`` of several
    dimensions (``tensor=True``), one polynomial per column of ``c`` at every ``x``, their
    contributions summed."""
    if c.ndim == 1:
        return lambda g, x, c, tensor: g * _slope(x, _coefficients(c))
    if isinstance(x, types.Array):
        return lambda g, x, c, tensor: _slopes(x, c, g, tensor).reshape(x.shape)
    return lambda g, x, c, tensor: _slopes(x, c, g, tensor)[0]


@by_type
def polyval_vjp_c(g, x, c, tensor):
    """Coefficient ``k`` gets the sum of ``g x^k`` (per column of ``c``)."""
    if c.ndim == 1:
        def impl(g, x, c, tensor):
            cs = _coefficients(c)
            out = np.empty(cs.size)
            pw = 1.0 + 0.0 * x
            for k in range(cs.size):
                out[k] = np.sum(g * pw)
                pw = pw * x
            return out.reshape(c.shape)
        return impl

    def impl_columns(g, x, c, tensor):
        if not tensor:
            raise ValueError(_NOT_TENSOR)
        C, X = _polynomials(c), _points(x)
        G = np.ascontiguousarray(g).reshape((C.shape[1], X.size))
        out = np.empty(C.shape)
        pw = np.ones(X.size)
        for k in range(C.shape[0]):
            for r in range(C.shape[1]):
                out[k, r] = np.sum(G[r] * pw)
            pw = pw * X
        return out.reshape(c.shape)
    return impl_columns


@by_type
def polyval_jvp_x(d, x, c, tensor):
    """The tangent along ``x``'s: ``y'(x) d`` (per column of ``c``, at every ``x``)."""
    if c.ndim == 1:
        return lambda d, x, c, tensor: d * _slope(x, _coefficients(c))
    if isinstance(x, types.Array):
        def impl(d, x, c, tensor):
            return _tangents(d, x, c, tensor).reshape(c.shape[1:] + x.shape)
        return impl
    return lambda d, x, c, tensor: _tangents(d, x, c, tensor).reshape(c.shape[1:])


@public
def _tangents(d, x, c, tensor):
    if not tensor:
        raise ValueError(_NOT_TENSOR)
    return _column_slopes(x, c) * _points(d)


@by_type
def polyval_jvp_c(x, d, tensor):
    """``polyval`` is linear in its coefficients: the tangent is the polynomial of ``d``."""
    if d.ndim == 1:
        return lambda x, d, tensor: _horner(x, _coefficients(d))
    return lambda x, d, tensor: np.polynomial.polynomial.polyval(x, d, tensor)


# ----------------------------------------------------------------------- polyint
# Numba's np.polynomial.polynomial.polyint(c, m): m times, the coefficients move up one
# place and coefficient j is divided by j + 1; the integration constants are 0; a 1-d
# result has its trailing zeros trimmed (they get no gradient).
@public
def polyint_weights(n, m):
    """Coefficient ``j`` of ``c`` (``n`` of them) lands at ``j + m``, times this weight:
    ``j! / (j + m)!``."""
    w = np.ones(n)
    for j in range(n):
        for i in range(1, m + 1):
            w[j] /= j + i
    return w


@public
def polyint_vjp(g, c, m):
    """``c``'s adjoint: ``g``'s item ``j + m`` times the weight (zeros past ``g``'s end)."""
    n = c.shape[0]
    rest = c.size // n if n else 0
    gf = np.ascontiguousarray(g).reshape((g.shape[0], rest))
    out = np.zeros((n, rest))
    w = polyint_weights(n, m)
    for j in range(min(n, g.shape[0] - m)):
        out[j] = gf[j + m] * w[j]
    return out.reshape(c.shape)


@public
def polyint_jvp(d, m, size):
    """The tangent: ``d`` integrated ``m`` times, untrimmed, then cut to the result's
    ``size`` rows (what trimming the primal's zeros left)."""
    n = d.shape[0]
    rest = d.size // n if n else 0
    df = np.ascontiguousarray(d).reshape((n, rest))
    out = np.zeros((size, rest))
    w = polyint_weights(n, m)
    for j in range(min(n, size - m)):
        out[j + m] = df[j] * w[j]
    return out.reshape((size,) + d.shape[1:])


# ---------------------------------------------------------------------- polydiv items
@helper_jit(error_model="numpy")
def polydiv_quotient(c1, c2):
    """``np.polynomial.polynomial.polydiv(c1, c2)[0]``."""
    return np.polynomial.polynomial.polydiv(c1, c2)[0]


@helper_jit(error_model="numpy")
def polydiv_remainder(c1, c2):
    """``np.polynomial.polynomial.polydiv(c1, c2)[1]``."""
    return np.polynomial.polynomial.polydiv(c1, c2)[1]


# ----------------------------------------------------------------------- polydiv
# Numba's np.polynomial.polynomial.polydiv(c1, c2) (1-d, no trailing zeros): c1 = q c2 + r
# with r shorter than c2 (trimmed). For fixed c2, (q, r) is linear in c1: c1 = M [q; r],
# M = [the convolution by c2 | the first len(c2) - 1 unit vectors]; a change of c2 moves
# (q, r) as c1 = -q dc2 does. (When c1 is shorter than c2: q = 0, r = c1.)
@public
def _polydiv_solve(w, v, nq):
    """``[q; r]`` with ``w = conv(q, v) + r`` (``q`` of ``nq`` items, ``r`` of
    ``len(v) - 1``): the long division, on a copy of ``w``."""
    l1, l2 = w.size, v.size
    arr = w.astype(np.float64)
    q = np.zeros(nq)
    if l1 < l2:
        return q, arr
    for i in range(l1 - l2, -1, -1):
        q[i] = arr[i + l2 - 1] / v[l2 - 1]
        arr[i:i + l2] -= q[i] * v
    return q, arr[:max(l2 - 1, 1)] * (1.0 if l2 > 1 else 0.0)


@public
def polydiv_vjp(gq, gr, c1, c2, of_c1):
    """``c1``'s (``of_c1``) or ``c2``'s adjoint from the quotient's ``gq`` and the
    remainder's ``gr`` (either may be empty): ``x = M^-T [gq; gr]``, and
    ``c2_bar[j] = -sum_i q_i x_{i+j}``."""
    l1, l2 = c1.size, c2.size
    x = np.zeros(l1)
    if l1 < l2:
        m = min(l1, gr.size)
        x[:m] = gr[:m]
    else:
        m = min(l2 - 1, gr.size)
        x[:m] = gr[:m]
        for i in range(l1 - l2 + 1):
            s = gq[i] if i < gq.size else 0.0
            for k in range(l2 - 1):
                s -= c2[k] * x[i + k]
            x[i + l2 - 1] = s / c2[l2 - 1]
    if of_c1:
        return x
    out = np.zeros(l2)
    if l1 >= l2:
        q = np.polynomial.polynomial.polydiv(c1, c2)[0]
        for j in range(l2):
            for i in range(q.size):
                out[j] -= q[i] * x[i + j]
    return out


@public
def polydiv_jvp(c1, c2, d1, d2, size, quotient):
    """The quotient's (``quotient``) or the remainder's tangent, cut to the result's
    ``size`` (the remainder's trimmed zeros)."""
    l1, l2 = c1.size, c2.size
    q = np.polynomial.polynomial.polydiv(c1, c2)[0]
    w = d1.astype(np.float64)
    if l1 >= l2:
        w = w - np.convolve(q, d2)[:l1]
    dq, dr = _polydiv_solve(w, c2.astype(np.float64), max(l1 - l2 + 1, 1))
    out = np.zeros(size)
    part = dq if quotient else dr
    m = min(size, part.size)
    out[:m] = part[:m]
    return out
