"""``np.polynomial.polynomial.polyint`` and ``polydiv``, ``np.linalg.qr``, ``np.linalg.lstsq``
and ``np.linalg.cond`` through ``grad_jit``, against central finite differences of the
pure-Python function, in reverse and forward mode (and, in the full sweep, float32,
Fortran order and hvp); each also as Numba's own tests
(test_polynomial.py, test_linalg.py) write it: an ``njit`` function returning the call's
result, its items summed against fixed weights by the differentiated caller."""
import os

import numba
import numpy as np
import numpy.polynomial.polynomial as P
import pytest

import numba_adstack as nad

from conftest import check_fd

RNG = np.random.default_rng(31)
# The layouts, float32 and forward over reverse through all five: the full sweep only
# (NUMBA_ADSTACK_ARRAY_RULES_FULL=1), with the other shapes: about 70 s of compiles.
FULL = pytest.mark.skipif(os.environ.get("NUMBA_ADSTACK_ARRAY_RULES_FULL") != "1",
                          reason="full sweep (NUMBA_ADSTACK_ARRAY_RULES_FULL=1)")


def rand(*shape):
    return RNG.uniform(-1.0, 1.0, shape)


def check_both(f, args, tangents, rtol=1e-6):
    """Reverse mode against finite differences, and forward mode's tangent against the
    gradient along ``tangents`` (None for an argument not varied)."""
    g = check_fd(f, *args, rtol=rtol)
    _, t = f.jvp(tuple(args), tuple(tangents))
    want = sum(float(np.sum(gk * tk)) for gk, tk in zip(g, tangents) if tk is not None)
    assert t == pytest.approx(want, rel=rtol, abs=1e-9)
    return g


# ------------------------------------------------------------------------------ polyint
@nad.grad_jit
def integrals(c, w):
    return (np.sum(P.polyint(c, 2) * w) + np.sum(P.polyint(c) ** 2)
            + np.sum(P.polyint(c, 0) * c) + np.sum(np.sin(P.polyint(c, 3))))


@nad.grad_jit
def integrals_by_column(c, w):
    return np.sum(P.polyint(c, 2) * w)


def test_polyint_reverse_and_forward():
    c, w = rand(4), rand(6)
    check_both(integrals, (c, w), (rand(4), rand(6)))
    # a 2-d c: one polynomial per column, nothing trimmed
    c = rand(3, 2)
    check_both(integrals_by_column, (c, rand(5, 2)), (rand(3, 2), rand(5, 2)))


# ------------------------------------------------------------------------------ polydiv
@nad.grad_jit
def division(u, v, wq, wr):
    q, r = P.polydiv(u, v)
    return np.sum(q * wq) + np.sum(np.sin(r) * wr)


@nad.grad_jit
def quotient_only(u, v):
    return np.sum(P.polydiv(u, v)[0] ** 2)


@pytest.mark.parametrize("nu, nv", [(5, 2), (4, 1), pytest.param(6, 3, marks=FULL),
                                     pytest.param(4, 4, marks=FULL),
                                     pytest.param(2, 3, marks=FULL)])
def test_polydiv_reverse_and_forward(nu, nv):
    u, v = rand(nu), rand(nv) + np.where(np.arange(nv) == nv - 1, 1.5, 0.0)
    nq = max(nu - nv + 1, 1)
    nr = nu if nu < nv else max(nv - 1, 1)
    args = (u, v, rand(nq), rand(nr))
    check_both(division, args, (rand(nu), rand(nv), None, None), rtol=1e-5)
    check_both(quotient_only, (u, v), (rand(nu), rand(nv)), rtol=1e-5)


# ------------------------------------------------------------------------------ qr
@nad.grad_jit
def qr_both(a, wq, wr):
    q, r = np.linalg.qr(a)
    return np.sum(q * wq) + np.sum(r * r * wr)


@nad.grad_jit
def qr_items(a):
    return np.sum(np.linalg.qr(a)[0] * a) + np.sum(np.linalg.qr(a)[1] ** 3)


@pytest.mark.parametrize("shape", [(5, 3), pytest.param((3, 3), marks=FULL),
                                   pytest.param((4, 1), marks=FULL)])
def test_qr_reverse_and_forward(shape):
    a = rand(*shape)
    n = shape[1]
    check_both(qr_both, (a, rand(*shape), rand(n, n)), (rand(*shape), None, None),
               rtol=1e-5)
    check_both(qr_items, (a,), (rand(*shape),), rtol=1e-5)


@nad.grad_jit
def qr_factor(a):
    return np.sum(np.linalg.qr(a)[1] ** 2)


def test_qr_of_a_wide_matrix_raises_naming_the_function():
    with pytest.raises(ValueError, match=r"np\.linalg\.qr.*transpose"):
        qr_factor.grad(rand(3, 5))


# ------------------------------------------------------------------------------ lstsq
@nad.grad_jit
def least_squares(a, b, w, v):
    x, res, rank, sv = np.linalg.lstsq(a, b)
    return np.sum(x * w) + np.sum(res) + np.sum(sv * v) + 0.0 * rank


@nad.grad_jit
def solution_only(a, b):
    return np.sum(np.linalg.lstsq(a, b, -1.0)[0] ** 2)


@pytest.mark.parametrize("a_shape, b_shape", [
    ((6, 3), (6, 2)), ((3, 5), (3,)), pytest.param((6, 3), (6,), marks=FULL),
    pytest.param((3, 3), (3,), marks=FULL), pytest.param((3, 5), (3, 2), marks=FULL)])
def test_lstsq_reverse_and_forward(a_shape, b_shape):
    a, b = rand(*a_shape), rand(*b_shape)
    x_shape = (a_shape[1],) + b_shape[1:]
    args = (a, b, rand(*x_shape), rand(min(a_shape)))
    check_both(least_squares, args, (rand(*a_shape), rand(*b_shape), None, None),
               rtol=1e-5)
    check_both(solution_only, (a, b), (rand(*a_shape), rand(*b_shape)), rtol=1e-5)


# ------------------------------------------------------------------------------ cond
@nad.grad_jit
def conditions(a):
    return (np.linalg.cond(a) + np.linalg.cond(a, 2) + 2.0 * np.linalg.cond(a, -2)
            + np.linalg.cond(a, 1) + np.linalg.cond(a, -1) + np.linalg.cond(a, np.inf)
            + np.linalg.cond(a, -np.inf))


@nad.grad_jit
def condition_of_tall(a):
    return np.linalg.cond(a) ** 2


def test_cond_reverse_and_forward():
    a = rand(4, 4) + 2.0 * np.eye(4)
    check_both(conditions, (a,), (rand(4, 4),), rtol=1e-5)
    check_both(condition_of_tall, (rand(5, 3),), (rand(5, 3),), rtol=1e-5)


# ---------------------------------------------------- as Numba's test_linalg / polynomial
# Plain functions, compiled apart (as Numba's tests and the corpus do), and called by the
# differentiated loss.
def qr_matrix(a):
    return np.linalg.qr(a)


def lstsq_system(A, B, rcond=-1):
    return np.linalg.lstsq(A, B, rcond)


def cond_matrix(a, p=None):
    return np.linalg.cond(a, p)


def polydiv(c1, c2):
    res = P.polydiv(c1, c2)
    return res


def polyint(c, m=1):
    res = P.polyint(c, m)
    return res


qr_jit, lstsq_jit, cond_jit, polydiv_jit, polyint_jit = (
    numba.njit(f) for f in (qr_matrix, lstsq_system, cond_matrix, polydiv, polyint))
W = RNG.standard_normal(12)


@nad.grad_jit
def loss_qr(a):
    r = qr_jit(a)
    return np.sum(r[0] * W[:12].reshape(4, 3)) + np.sum(r[1] * W[:9].reshape(3, 3))


@nad.grad_jit
def loss_lstsq(A, B):
    r = lstsq_jit(A, B)
    return np.sum(r[0] * W[:3]) + np.sum(r[1] * W[3]) + np.sum(r[3] * W[4:7])


@nad.grad_jit
def loss_cond(a):
    return cond_jit(a)


@nad.grad_jit
def loss_polydiv(c1, c2):
    r = polydiv_jit(c1, c2)
    return np.sum(r[0] * W[:4]) + np.sum(r[1] * W[4])


@nad.grad_jit
def loss_polyint(c):
    return np.sum(polyint_jit(c, 2) * W[:6])


@FULL      # (the corpus runs them too: benchmarks/corpus, numba_tests.np)
def test_as_numba_tests_write_them():
    check_fd(loss_qr, rand(4, 3), rtol=1e-5)
    check_fd(loss_lstsq, rand(6, 3), rand(6), rtol=1e-5)
    m = rand(4, 4)
    check_fd(loss_cond, np.dot(m, m.T) + np.eye(4), rtol=1e-5)
    check_fd(loss_polydiv, rand(5), np.array([1.0, 0.5]) + 0.1 * rand(2), rtol=1e-5)
    check_fd(loss_polyint, rand(4), rtol=1e-5)


# ------------------------------------------------------------------ float32, layouts
@nad.grad_jit
def all_five(a, b, c, v):
    q, r = np.linalg.qr(a)
    x = np.linalg.lstsq(a, b)[0]
    quo, rem = P.polydiv(c, v)
    return (np.sum(q * q * a) + np.sum(r) + np.sum(x) + np.linalg.cond(a)
            + np.sum(P.polyint(c, 2)) + np.sum(quo) + np.sum(rem))


@FULL
def test_float32_and_fortran_order_operands():
    a, b, c, v = rand(5, 3), rand(5), rand(4), np.array([0.3, 1.2])
    want = check_fd(all_five, a, b, c, v, rtol=1e-5)
    got = all_five.grad(np.asfortranarray(a), b, c, v)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    got = all_five.grad(*(x.astype(np.float32) for x in (a, b, c, v)))
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-3 * np.max(np.abs(w)))


# ------------------------------------------------------------------ forward over reverse
@nad.grad_jit
def curved(a, c):
    q, r = np.linalg.qr(a)
    x, res, rank, sv = np.linalg.lstsq(a, a[:, 0] ** 2)
    quo, rem = P.polydiv(c, c[:2] ** 2)
    return (np.sum(r ** 3) + np.sum(q * q * q) + np.sum(x ** 3) + np.sum(res)
            + np.sum(sv ** 2) + np.linalg.cond(a) ** 2 + np.sum(P.polyint(c, 2) ** 2)
            + np.sum(quo ** 2) + np.sum(rem ** 3))


@FULL
def test_hvp_against_differences_of_the_gradient():
    a, c = rand(5, 3), rand(5)
    va, vc = rand(5, 3), rand(5)
    ha, hc = curved.hvp((a, c), (va, vc))
    e = 1e-5
    plus, minus = curved.grad(a + e * va, c + e * vc), curved.grad(a - e * va, c - e * vc)
    for h, p, m in zip((ha, hc), plus, minus):
        np.testing.assert_allclose(h, (p - m) / (2 * e), rtol=1e-5,
                                   atol=1e-6 * np.max(np.abs(p - m) / (2 * e)))
