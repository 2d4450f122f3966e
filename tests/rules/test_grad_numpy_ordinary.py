"""The NumPy of ordinary Numba code: the NaN-skipping reductions and scans, np.ptp,
np.trapezoid, np.convolve, np.correlate, np.cov, np.corrcoef, np.ediff1d, np.unwrap,
np.vander, np.diagflat, polyval, float np.arange, np.logspace and np.geomspace, against
central finite differences of the pure-Python function, in reverse and forward mode.
Several primitives share one compiled function; Numba's own compile of these functions is
slow (seconds each), so the less common forms and the forward mode of the larger functions
run in the full sweep only (NUMBA_ADSTACK_ARRAY_RULES_FULL=1)."""
import os

import numpy as np
import numpy.polynomial.polynomial as P
import pytest

import numba_adstack as nad

from conftest import check_fd, fd_grad

RNG = np.random.default_rng(31)
FULL = os.environ.get("NUMBA_ADSTACK_ARRAY_RULES_FULL") == "1"
full_only = pytest.mark.skipif(not FULL, reason="the full sweep: NUMBA_ADSTACK_ARRAY_RULES_FULL=1")
W7 = RNG.uniform(-1.0, 1.0, 7)


def rand(*shape):
    return RNG.uniform(-1.0, 1.0, shape)


def fd_jvp(f, args, tangents):
    grads = fd_grad(f.py_func, args)
    return sum(float(np.sum(g * t)) for g, t in zip(grads, tangents) if g is not None)


@nad.grad_jit
def nan_reductions(x, q):
    # NaN elements are skipped: they get no gradient.
    s = np.nansum(x) + 2.0 * np.nanmean(x) + np.nanstd(x) + np.nanvar(x, ddof=1)
    s += 0.5 * np.nanmax(x) - 0.25 * np.nanmin(x) + np.nanprod(x)
    s += q * np.nanmean(x)
    return s + np.sum(np.nancumsum(x) * W7) + np.sum(np.nancumprod(x) * W7)


def with_nans():
    x = rand(7)
    x[[1, 4]] = np.nan
    return x


def test_nan_reductions_against_finite_differences():
    x = with_nans()
    g, _ = check_fd(nan_reductions, x, 37.0, rtol=1e-5, atol=1e-7)
    assert g[1] == 0.0 and g[4] == 0.0


def test_nan_reductions_of_all_nan_get_no_gradient():
    # NumPy's results: 0 (nansum), 1 (nanprod), NaN (the rest); no gradient anywhere.
    x = np.full(7, np.nan)
    g, gq = nan_reductions.grad(x, 40.0)
    np.testing.assert_array_equal(g, np.zeros(7))
    assert np.isnan(gq)             # q's factor, np.nanmean(x), is NaN


def test_nan_reductions_forward_mode():
    x = with_nans()
    tangents = (rand(7), 0.7)
    _, t = nan_reductions.jvp((x, 37.0), tangents)
    assert np.isclose(t, fd_jvp(nan_reductions, (x, 37.0), tangents), rtol=1e-5)


@nad.grad_jit
def sequences(y, x, dx, a, v):
    s = np.trapezoid(y, x) + np.trapezoid(y * y, dx=dx) + np.ptp(y * x)
    return s + np.sum(np.convolve(a, v) * np.arange(6.0))


def sequence_args():
    x = np.cumsum(RNG.uniform(0.1, 1.0, 7))
    return rand(7), x, 0.3, rand(4), rand(3)


def test_sequences_against_finite_differences():
    check_fd(sequences, *sequence_args(), rtol=1e-5, atol=1e-7)


@nad.grad_jit
def statistics(m, v, c, x):
    w = np.arange(1.0, 10.0).reshape(3, 3)
    s = np.sum(np.cov(m) * w)
    s += np.sum(np.vander(v) * np.arange(16.0).reshape(4, 4))
    s += np.sum(np.diagflat(v, 1) * np.arange(25.0).reshape(5, 5))
    return s + np.sum(P.polyval(x, c) ** 2) + P.polyval(0.7, c * v)


def statistics_args():
    return rand(3, 6), rand(4), rand(4), rand(5)


def test_statistics_against_finite_differences():
    check_fd(statistics, *statistics_args(), rtol=1e-5, atol=1e-7)


@nad.grad_jit
def ranges(start, stop, step, lo, hi):
    # np.arange(start, stop, step) is start + i step; the length is piecewise constant.
    s = np.sum(np.sin(np.arange(start, stop, step))) + np.sum(np.arange(stop) * stop)
    return s + np.sum(np.logspace(lo, hi, 5) ** 0.5) + np.sum(np.geomspace(lo, hi, 4) ** 2)


def test_ranges_against_finite_differences():
    g = check_fd(ranges, 0.3, 2.1, 0.35, 0.5, 1.7, rtol=1e-5, atol=1e-7)
    # np.arange(stop)'s values do not move with stop: only the factor stop does.
    assert np.isclose(g[1], np.sum(np.arange(2.1)))
    _, t = ranges.jvp((0.3, 2.1, 0.35, 0.5, 1.7), (0.2, -0.1, 0.3, 0.5, -0.4))
    want = fd_jvp(ranges, (0.3, 2.1, 0.35, 0.5, 1.7), (0.2, -0.1, 0.3, 0.5, -0.4))
    assert np.isclose(t, want, rtol=1e-5)


# ------------------------------------------------------------------------ the full sweep
@nad.grad_jit
def other_forms(y, x, a, v, p, m, u, q, z):
    w = np.arange(1.0, 10.0).reshape(3, 3)
    s = np.sum(np.trapezoid(np.outer(a, y), x))          # along the last axis, per row
    s += np.sum(np.convolve(v, a, "same") * np.arange(4.0))
    s += np.sum(np.correlate(a, v) * np.arange(2.0))
    s += np.sum(np.correlate(v, a, "full") * np.arange(6.0))
    s += np.sum(np.ediff1d(a, q, a) ** 2)
    s += np.sum(np.unwrap(p) * np.arange(6.0))           # piecewise the identity
    s += np.nanpercentile(z, 100.0 * q) + np.nanquantile(z, q) + np.nanmedian(z)
    # The shorter operand first: Numba swaps them and reverses the result.
    s += np.sum(np.correlate(v, a, "same") * np.arange(4.0)) + np.sum(np.ediff1d(y) ** 2)
    s += np.sum(np.corrcoef(m) * w)
    s += np.sum(np.cov(u, m[0], bias=True) * w[:2, :2]) + np.corrcoef(u, m[1])[0, 1]
    s += np.sum(np.cov(m.T, rowvar=False, ddof=2) * w)
    return s + np.sum(np.vander(v, 3, True) * np.arange(9.0).reshape(3, 3))


def other_args():
    x = np.cumsum(RNG.uniform(0.1, 1.0, 7))
    p = np.array([0.1, 3.0, 6.0, -2.9, 0.5, 3.5])      # jumps that unwrap removes
    z = rand(7)
    z[3] = np.nan
    return rand(7), x, rand(4), rand(3), p, rand(3, 6), rand(6), 0.3, z


@full_only
def test_other_forms_against_finite_differences():
    args = other_args()
    # Six values kept: the median gives half to each middle one.
    g = check_fd(other_forms, *args, rtol=1e-5, atol=1e-7)
    assert g[-1][3] == 0.0
    # Five kept.
    z = np.array([0.3, np.nan, -0.2, 0.9, 0.1, np.nan, 0.5])
    check_fd(other_forms, *args[:-1], z, rtol=1e-5, atol=1e-7)


@full_only
@pytest.mark.parametrize("f, make", [(sequences, sequence_args),
                                     (statistics, statistics_args)])
def test_forward_mode(f, make):
    args = make()
    tangents = tuple(rand(*np.shape(a)) if np.ndim(a) else 0.4 for a in args)
    _, t = f.jvp(args, tangents)
    assert np.isclose(t, fd_jvp(f, args, tangents), rtol=1e-5)


@nad.grad_jit
def takes_and_broadcasts(a, w):
    """np.take and a.take (flat positions, repeated and negative), np.broadcast_to, and
    np.nan_to_num with every keyword, as Numba's tests spell it, np.ldexp of arrays."""
    t = np.take(a, np.array([0, 3, 3, 5, -1])) + np.sum(a.take(np.array([[1, 2], [2, 0]])) ** 2)
    b = np.broadcast_to(a[1], (4, 3))
    n = np.nan_to_num(np.log(a - 0.5), copy=True, nan=0.0, posinf=None, neginf=-3.0)
    e = np.ldexp(a, np.array([[1, -2, 0], [3, 1, -1]]))
    return np.sum(t * w) + np.sum(np.sin(b) * np.arange(12.0).reshape(4, 3)) + \
        np.sum(n * a) + np.sum(e * e)


def test_take_and_broadcast_to_reverse_and_forward():
    a, w = np.linspace(0.1, 1.2, 6).reshape(2, 3), np.linspace(-1.0, 1.0, 5)
    g = check_fd(takes_and_broadcasts, a, w)
    _, tangent = takes_and_broadcasts.jvp((a, w), (np.ones((2, 3)), np.ones(5)))
    assert tangent == pytest.approx(np.sum(g[0]) + np.sum(g[1]), rel=1e-10)


@nad.grad_jit
def polynomial_arithmetic(a, b, w):
    """np.polynomial.polynomial's polyadd, polysub and polymul (padded, trimmed)."""
    return np.sum(P.polyadd(a, b) * w[:4]) + np.sum(P.polysub(b, a) ** 2) + \
        np.sum(P.polymul(a, b) * w)


def test_polynomial_arithmetic_reverse_and_forward():
    a, b = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3, -0.7, 0.2])
    w = np.linspace(-1.0, 1.0, 6)
    g = check_fd(polynomial_arithmetic, a, b, w)
    t = (np.ones(3), np.linspace(0.0, 1.0, 4), np.ones(6))
    _, tangent = polynomial_arithmetic.jvp((a, b, w), t)
    assert tangent == pytest.approx(sum(np.sum(x * y) for x, y in zip(g, t)), rel=1e-10)


@nad.grad_jit
def polynomials_by_column(x, C, a):
    """polyval of 2-d coefficients (one polynomial per column, at every x), as Numba's
    test_polynomial calls it (polyval(x, c, True)), at an array and at a float."""
    return (np.sum(P.polyval(x, C, True) ** 2) + np.sum(np.sin(P.polyval(a, C)))
            + np.sum(P.polyval(x, C[:, 0]) * x))


def test_polyval_of_2d_coefficients_reverse_and_forward():
    args = (np.linspace(-1.0, 1.0, 5), rand(4, 2), 0.7)
    g = check_fd(polynomials_by_column, *args)
    t = (rand(5), rand(4, 2), 0.3)
    _, tangent = polynomials_by_column.jvp(args, t)
    assert tangent == pytest.approx(sum(np.sum(x * y) for x, y in zip(g, t)), rel=1e-10)
