"""Map loops folded into the sum that reads them (plan/map_sums.py).

``r = (x - a) * c`` then ``for i in range(len(r)): r[i] = g(r[i])`` then ``np.sum(r)``
(numba-stats' ``logpdf`` under a loss) becomes one loop of sums before the rewrite reads
the IR: the backward is one pass over the elements with no array made, whose sums are
added in any order (``radd``, emit/reassoc.py) so that the loop vectorises. Each folded
form is checked against central finite differences and its value against the primal's;
the forms that must not fold are checked to be left alone and still right.
"""
import math

import numba
import numpy as np
import pytest

import numba_adstack as nad
from conftest import backward_of, check_fd
from numba_adstack.ad.plan import map_sums

map_sums._STRICT = True         # what the fold meets is raised here, not passed over


def _x(n=7, seed=3):
    return np.random.default_rng(seed).normal(0.4, 0.8, n)


def _folded(f, *args):
    return "fold" in backward_of(f, *args).source


def _source(f, *args):
    return backward_of(f, *args).source


@numba.njit(inline="always")
def _trans(x, loc, scale):
    inv = 1.0 / scale
    return (x - loc) * inv


@numba.njit(inline="always")
def _logpdf(x, loc, scale):
    r = _trans(x, loc, scale)
    for i in numba.prange(len(r)):
        z = r[i]
        r[i] = -0.5 * (z * z + math.log(2 * math.pi)) - np.log(scale)
    return r


@nad.grad_jit
def library_form(x, mu, sigma):
    return -np.sum(_logpdf(x, mu, sigma))


@nad.grad_jit
def in_place(x, a, b):
    r = -(x - a) * (1.0 / b) + 2.0
    for i in range(len(r)):
        v = r[i]
        r[i] = math.sin(v) * v - math.log(b) * a
    return 3.0 * np.sum(r) + a


@nad.grad_jit
def fresh(x, a, b):
    r = np.empty_like(x)
    for i in range(len(r)):
        r[i] = math.exp(-b * x[i]) * a
    return np.sum(r) / len(x)


@nad.grad_jit
def method_sum(x, a, b):
    r = x * a - b
    for i in range(len(r)):
        r[i] = math.exp(-r[i] * r[i])
    return r.sum() * 2.0


@nad.grad_jit
def in_time_loop(x, a, b):
    total = 0.0
    c = a
    for t in range(3):
        r = x * c - b
        for i in range(len(r)):
            r[i] = math.tanh(r[i])
        total += np.sum(r)
        c = c * 0.9 + total * 0.01
    return total


def test_library_form_folds_and_is_right():
    x = _x()
    args = (x, 0.3, 1.7)
    assert _folded(library_form, *args)
    src = _source(library_form, *args)
    assert "np.sum" not in src and "zeros_like" not in src
    check_fd(library_form, *args)
    value, _ = library_form.value_and_grad(*args)
    np.testing.assert_allclose(value, library_form(*args), rtol=1e-13)
    assert "radd(" in src


def test_numba_stats_norm_logpdf_folds():
    pytest.importorskip("numba_stats")
    from numba_stats import norm

    @nad.grad_jit
    def nll(x, mu, sigma):
        return -np.sum(norm.logpdf(x, mu, sigma))

    x = _x(9)
    assert _folded(nll, x, 0.2, 0.9)
    check_fd(nll, x, 0.2, 0.9)


@pytest.mark.parametrize("f", [in_place, fresh, method_sum, in_time_loop])
def test_folded_forms_are_right(f):
    args = (_x(), 0.6, 1.3)
    assert _folded(f, *args)
    check_fd(f, *args)
    value, _ = f.value_and_grad(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-13)


@nad.grad_jit(parallel=True)
def parallel_form(x, mu, sigma):
    return -np.sum(_logpdf(x, mu, sigma))


def test_parallel_prange_folds_and_is_right():
    args = (_x(40), 0.3, 1.7)
    assert _folded(parallel_form, *args)
    check_fd(parallel_form, *args)


# -- forms that must stay as they are -----------------------------------------------
@nad.grad_jit
def read_after(x, a, b):
    r = (x - a) * b
    for i in range(len(r)):
        r[i] = math.sin(r[i])
    return np.sum(r) + r[0] * r[1]


@nad.grad_jit
def reads_neighbour(x, a, b):
    r = (x - a) * b
    for i in range(len(r) - 1):
        r[i] = math.sin(r[i + 1])
    return np.sum(r)


@nad.grad_jit
def under_branch(x, a, b):
    r = (x - a) * b
    for i in range(len(r)):
        if x[i] > 0.0:
            r[i] = math.sin(r[i])
    return np.sum(r)


@nad.grad_jit
def read_after_store(x, a, b):
    r = (x - a) * b
    for i in range(len(r)):
        r[i] = math.sin(r[i])
        r[i] = r[i] * a
    return np.sum(r)


@nad.grad_jit
def source_written_between(x, a, b):
    y = x.copy()
    r = (y - a) * b
    y[0] = 5.0
    for i in range(len(r)):
        r[i] = math.sin(r[i]) + y[i]
    return np.sum(r)


@nad.grad_jit
def two_arrays(x, a, b):
    r = (x - a) * x
    for i in range(len(r)):
        r[i] = math.sin(r[i])
    return np.sum(r)


@nad.grad_jit
def temporary_read_elsewhere(x, a, b):
    t = x - a
    r = t * b
    for i in range(len(r)):
        r[i] = math.sin(r[i])
    return np.sum(r) + t[0]


@pytest.mark.parametrize("f", [read_after, reads_neighbour, under_branch, read_after_store,
                               source_written_between, temporary_read_elsewhere])
def test_unfoldable_forms_are_left_alone(f):
    args = (_x(), 0.6, 1.3)
    assert not _folded(f, *args)
    check_fd(f, *args)


def test_two_operand_arrays_stay_right():
    # x * x is element-wise of one array: folded, and right.
    args = (_x(), 0.6, 1.3)
    assert _folded(two_arrays, *args)
    check_fd(two_arrays, *args)


def test_float32_is_left_alone():
    x = _x().astype(np.float32)
    assert not _folded(library_form, x, np.float32(0.3), np.float32(1.7))


@nad.grad_jit
def plain_sum_loop(x, a, b):
    s = 0.0
    for i in range(len(x)):
        s += math.sin(x[i] * a) * b
    return s


def test_only_folded_sums_are_reassociated():
    args = (_x(), 0.6, 1.3)
    assert "radd(" not in _source(plain_sum_loop, *args)
    assert "radd(" not in _source(read_after, *args)


def test_large_folded_sum_matches_the_primal():
    # Long enough for the vectorised loop's lanes (compiled at -O0 here, where nothing
    # is reordered; the bound is the one np.sum's order allows either way).
    x = np.random.default_rng(5).normal(1.0, 0.5, 10_001)
    value, g = library_form.value_and_grad(x, 0.3, 1.7)
    np.testing.assert_allclose(value, library_form(x, 0.3, 1.7), rtol=1e-12)
    z = (x - 0.3) / 1.7
    np.testing.assert_allclose(g[1], -np.sum(z) / 1.7, rtol=1e-10)
    np.testing.assert_allclose(g[2], -np.sum(z * z - 1.0) / 1.7, rtol=1e-10)
    np.testing.assert_allclose(g[0], z / 1.7, rtol=1e-12)


def test_hvp_through_a_folded_sum():
    args = (_x(), 0.6, 1.3)
    v = (np.ones_like(args[0]) * 0.1, 0.2, -0.3)
    got = in_place.hvp(args, v)
    eps = 1e-6
    plus = in_place.grad(*(a + eps * t for a, t in zip(args, v)))
    minus = in_place.grad(*(a - eps * t for a, t in zip(args, v)))
    for g, p, m in zip(got, plus, minus):
        np.testing.assert_allclose(g, (np.asarray(p) - np.asarray(m)) / (2 * eps),
                                   rtol=1e-5, atol=1e-7)


# -- element-wise arrays read element by element: computed at each read ---------------
@numba.njit(inline="always")
def _expon_logpdf(x, loc, scale):
    z = _trans(x, loc, scale)
    r = np.empty_like(z)
    for i in numba.prange(len(r)):
        r[i] = -np.inf if z[i] < 0 else -z[i] - np.log(scale)
    return r


@nad.grad_jit
def expon_form(x, a, b):
    return -np.sum(_expon_logpdf(x, a, b))


@nad.grad_jit
def read_by_a_loop_of_sums(x, a, b):
    z = (x - a) * b
    s = 0.0
    for i in range(len(z)):
        s += math.sin(z[i]) * z[(i + 1) % len(z)]
    return s


@nad.grad_jit
def source_written_later(x, a, b):
    y = x.copy()
    z = (y - a) * b
    y[0] = 4.0
    s = 0.0
    for i in range(len(z)):
        s += z[i] * y[i]
    return s


@nad.grad_jit
def read_whole(x, a, b):
    z = (x - a) * b
    s = 0.0
    for i in range(len(z)):
        s += z[i] * z[i]
    return s + np.sum(z)


def test_expon_form_is_one_pass():
    x = np.abs(_x()) + 0.05
    args = (x, 0.0, 1.3)
    src = _source(expon_form, *args)
    assert "sunk" in src and "fold" in src and "empty_like" not in src
    check_fd(expon_form, *args)
    x[2] = -0.3                     # one event below loc: the value -inf, no slope there
    gx, ga, gb = expon_form.grad(x, 0.0, 1.3)
    want = np.where(x >= 0.0, 1.0 / 1.3, 0.0)
    np.testing.assert_allclose(gx, want, rtol=1e-14)
    np.testing.assert_allclose(ga, -np.sum(want), rtol=1e-14)
    kept = x >= 0.0
    np.testing.assert_allclose(gb, np.sum(1.0 / 1.3 - x[kept] / 1.3 ** 2), rtol=1e-12)


def test_elementwise_read_by_element_is_computed_there():
    args = (_x(), 0.6, 1.3)
    assert "sunk" in _source(read_by_a_loop_of_sums, *args)
    check_fd(read_by_a_loop_of_sums, *args)


@pytest.mark.parametrize("f", [source_written_later, read_whole])
def test_elementwise_arrays_kept_where_needed(f):
    args = (_x(), 0.6, 1.3)
    assert "sunk" not in _source(f, *args)
    check_fd(f, *args)


# -- an element-wise array overwritten in place, then read whole: made empty -----------
@nad.grad_jit
def in_place_then_exp(x, a, b):
    return np.sum(np.exp(_logpdf(x, a, b))) + _logpdf(x, b, a)[3]


@nad.grad_jit
def mixture(x, mu, sigma, tau, f):
    ls = _logpdf(x, mu, sigma)
    lb = _expon_logpdf(x, 0.0, tau)
    return -np.sum(np.log(f * np.exp(ls) + (1.0 - f) * np.exp(lb)))


def test_in_place_loop_fills_an_empty_array():
    args = (_x(), 0.6, 1.3)
    src = _source(in_place_then_exp, *args)
    assert "filled" in src and "np.empty_like(x)" in src
    check_fd(in_place_then_exp, *args)


def test_mixture_of_library_forms():
    x = np.abs(_x(9)) + 0.05
    args = (x, 0.4, 0.8, 1.5, 0.3)
    src = _source(mixture, *args)
    assert "filled" in src and "sunk" in src and "push(" not in src
    check_fd(mixture, *args)


@nad.grad_jit
def source_filled_by_a_method(x, a, b):
    y = x.copy()
    z = (y - a) * b
    y.fill(2.0)
    s = 0.0
    for i in range(len(z)):
        s += z[i] * y[i]
    return s


def test_a_method_writing_the_source_keeps_the_array():
    args = (_x(), 0.6, 1.3)
    assert "sunk" not in _source(source_filled_by_a_method, *args)
    check_fd(source_filled_by_a_method, *args)
