"""Element-wise runs of whole-array statements fused into one loop (emit/elementwise.py),
the value computed only when it is asked for, and the stores of a top-level map loop left
out of the sweep that runs it again (emit/fused.py, ``stored_already``).

Where the fusion applies, the backward makes no array for its temporaries: counted with
Numba's allocation statistics. Where it must not (operands broadcast, 2-d or float32
arrays, a scalar made from a sum and read by the run), the statements run as written.
Every gradient is checked against central finite differences of the pure-Python function.
"""
import math

import numba
import numpy as np
import pytest
from numba.core.runtime import _nrt_python, rtsys

import numba_adstack as nad
from numba_adstack.ad.runtime import apart, length_is

from conftest import check_fd, fd_grad


@pytest.fixture
def allocations():
    """``allocations(call)``: the arrays Numba's runtime allocates during ``call()``."""
    was = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()

    def count(call):
        before = rtsys.get_allocation_stats().alloc
        call()
        return rtsys.get_allocation_stats().alloc - before
    yield count
    if not was:
        _nrt_python.memsys_disable_stats()


# ------------------------------------------------------------------ programs
def mixture(a, b, f):
    # numba-stats' unbinned likelihood: two densities given by their logs, mixed
    return -np.sum(np.log(f * np.exp(a) + (1.0 - f) * np.exp(b)))


def scaled_logs(x, s, t):
    z = (x - s) / t
    return np.sum(z * z) + np.sum(np.log(t + np.exp(z)))


def centred(x):
    # the sum's result is read by the next array statement: the run ends before it
    m = np.sum(x) / x.shape[0]
    d = x - m
    return np.sum(d * d * np.exp(-d))


def reciprocal_sum(x, w):
    return np.sum(w / x) + np.sum(np.sqrt(x) * w)


def expon_logpdf(x, scale):
    # numba-stats' ``expon._logpdf``, as published: a map loop with a branch, then the
    # array it fills read by a whole-array sum
    z = x * (1.0 / scale)
    r = np.empty_like(z)
    for i in range(len(r)):
        if z[i] < 0:
            r[i] = -np.inf
        else:
            r[i] = -z[i] - np.log(scale)
    return -np.sum(np.log(0.5 + np.exp(r)))


def logistic_loss(z, y):
    # the loss summed in a loop beside its reverse: its logarithms are for the value only
    loss = 0.0
    for i in range(z.shape[0]):
        loss += math.log(1.0 + math.exp(z[i])) - y[i] * z[i]
    return loss / z.shape[0]


def steps_of_map_loop(x, steps):
    # the same map loop inside a time loop: its stores are run again by the sweep
    y = x.copy()
    out = np.empty_like(x)
    for k in range(steps):
        for i in range(len(y)):
            if y[i] > 0.1:
                out[i] = np.sin(y[i]) * 0.9
            else:
                out[i] = y[i] * y[i]
        y = out * 1.0
    return np.sum(y * y)


_JIT = {}


def jitted(fn):
    if fn not in _JIT:
        _JIT[fn] = nad.grad_jit(fn)
    return _JIT[fn]


def _vectors(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), rng.standard_normal(n)


# ------------------------------------------------------------------ it applies
def test_mixture_fuses_into_one_pass_with_no_temporary_array(allocations):
    a, b = _vectors()
    f = jitted(mixture)
    check_fd(f, a, b, 0.3)
    # the two adjoint arrays returned, and the runtime's own: no array per temporary
    # (written as whole-array statements, the backward makes one for each of the ten)
    assert allocations(lambda: f.grad(a, b, 0.3)) <= 4


def test_value_and_grad_gives_the_value_grad_leaves_out():
    a, b = _vectors(seed=1)
    f = jitted(mixture)
    value, grads = f.value_and_grad(a, b, 0.3)
    assert value == pytest.approx(mixture(a, b, 0.3), rel=1e-13)
    want = f.grad(a, b, 0.3)
    for g, w in zip(grads, want):
        np.testing.assert_array_equal(g, w)


def test_value_from_jitted_code_with_the_gradient():
    a, b = _vectors(seed=2)
    f = jitted(mixture)

    @numba.njit
    def both(a, b):
        v, g = f.value_and_grad(a, b, 0.25)
        return v, f.grad(a, b, 0.25)[0], g[0]

    v, g1, g2 = both(a, b)
    assert v == pytest.approx(mixture(a, b, 0.25), rel=1e-13)
    np.testing.assert_array_equal(g1, g2)
    np.testing.assert_allclose(g1, fd_grad(mixture, (a, b, 0.25))[0], rtol=1e-6, atol=1e-8)


def test_value_summed_in_a_loop_is_made_only_for_value_and_grad():
    z, _ = _vectors(n=30, seed=16)
    y = (np.random.default_rng(17).random(30) < 0.5).astype(np.float64)
    f = jitted(logistic_loss)
    value, grads = f.value_and_grad(z, y)
    assert value == pytest.approx(logistic_loss(z, y), rel=1e-13)
    got = check_fd(f, z, y)
    for g, w in zip(got, grads):
        np.testing.assert_array_equal(g, w)


def test_division_and_sqrt_of_arrays():
    x = np.random.default_rng(3).uniform(0.5, 2.0, 30)
    w = np.random.default_rng(4).standard_normal(30)
    check_fd(jitted(reciprocal_sum), x, w)


def test_division_by_a_zero_element_gives_infinities_not_an_exception():
    x = np.array([1.0, 0.0, 2.0])
    w = np.array([1.0, 1.0, 1.0])
    gx, gw = jitted(reciprocal_sum).grad(x, w)
    # (-w / x**2 + 0.5 w / sqrt(x) at x = 0: -inf + inf)
    assert np.isnan(gx[1]) and gw[1] == np.inf
    np.testing.assert_allclose(gx[[0, 2]], -1.0 / x[[0, 2]] ** 2 + 0.5 / np.sqrt(x[[0, 2]]))


def test_scalar_statements_before_and_after_the_loop():
    x = np.random.default_rng(5).standard_normal(25)
    check_fd(jitted(scaled_logs), x, 0.3, 1.7)


def test_a_sum_read_by_the_next_array_statement_ends_the_run():
    x = np.random.default_rng(6).standard_normal(25)
    check_fd(jitted(centred), x)


def test_top_level_map_loop_with_a_branch_then_a_whole_array_sum():
    x = np.concatenate([np.random.default_rng(7).exponential(2.0, 30), [-1.0, -0.5]])
    f = jitted(expon_logpdf)
    got = f.grad(x, 1.8)
    want = fd_grad(expon_logpdf, (x, 1.8))
    # (the elements below zero have a density of zero: no gradient)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-8)
    assert got[1] == pytest.approx(want[1], rel=1e-6)
    assert f.value_and_grad(x, 1.8)[0] == pytest.approx(expon_logpdf(x, 1.8), rel=1e-13)


def test_map_loop_inside_a_time_loop_stores_again_in_the_sweep():
    x = np.random.default_rng(8).uniform(-0.5, 1.0, 20)
    check_fd(jitted(steps_of_map_loop), x, 4)


# ------------------------------------------------------------------ it must not apply
def test_broadcast_operand_runs_as_written():
    a, _ = _vectors(seed=9)
    f = jitted(mixture)
    check_fd(f, a, np.array([0.4]), 0.3)        # b broadcast: the check fails
    check_fd(f, np.array([0.2]), a, 0.6)


def test_two_dimensional_and_float32_arrays_run_as_written():
    rng = np.random.default_rng(10)
    a, b = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    f = jitted(mixture)
    check_fd(f, a, b, 0.3)
    a32, b32 = a.ravel().astype(np.float32), b.ravel().astype(np.float32)
    got = f.grad(a32, b32, 0.3)
    want = fd_grad(mixture, (a32.astype(np.float64), b32.astype(np.float64), 0.3))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-5)


def test_views_of_one_array_as_operands():
    x = np.random.default_rng(11).standard_normal(41)

    def shifted(x):
        a, b = x[1:], x[:-1]
        return -np.sum(np.log(0.4 * np.exp(a) + 0.6 * np.exp(b)))
    check_fd(nad.grad_jit(shifted), x)


# ------------------------------------------------------------------ the run-time checks
@numba.njit
def _apart(a, b):
    return apart(a, b)


@numba.njit
def _length_is(a, n):
    return length_is(a, n)


def test_apart_tells_overlapping_views():
    x = np.arange(10.0)
    assert _apart(x, x)                     # the same elements in the same order
    assert _apart(x[:5], x[5:])             # disjoint
    assert not _apart(x[1:], x[:-1])        # overlapping, shifted
    assert not _apart(x[::-1], x)           # the same elements, reversed
    assert not _apart(x[::2], x[1::2])      # interleaved: taken as overlapping
    assert _apart(np.empty(0), x)


def test_length_is_takes_arrays_and_shapes():
    assert _length_is(np.zeros(3), 3)
    assert not _length_is(np.zeros(3), 4)
    assert not _length_is(np.zeros((3, 1)), 3)
    assert _length_is((3,), 3)
    assert not _length_is((3, 1), 3)


def test_hvp_differentiates_the_fused_backward():
    a, b = _vectors(n=12, seed=12)
    v = np.random.default_rng(13).standard_normal(12)
    f = jitted(mixture)
    hv = f.hvp((a, b, 0.3), (v, np.zeros(12), 0.0))
    eps = 1e-5
    plus, minus = f.grad(a + eps * v, b, 0.3), f.grad(a - eps * v, b, 0.3)
    for got, p, m in zip(hv, plus, minus):
        np.testing.assert_allclose(got, (np.asarray(p) - np.asarray(m)) / (2 * eps),
                                   rtol=1e-5, atol=1e-7)


def test_map_loop_hvp_with_its_stores_left_out_of_the_sweep():
    x = np.concatenate([np.random.default_rng(14).exponential(2.0, 10), [-1.0]])
    v = np.random.default_rng(15).standard_normal(11)
    f = jitted(expon_logpdf)
    hv = f.hvp((x, 1.8), (v, 0.0))
    eps = 1e-5
    plus, minus = f.grad(x + eps * v, 1.8), f.grad(x - eps * v, 1.8)
    np.testing.assert_allclose(hv[0], (plus[0] - minus[0]) / (2 * eps), rtol=1e-5, atol=1e-7)


def squared_distance(x, y):
    # the power's rule and the whole sum's adjoint (``unreduce``) in the run too
    return np.sum((x - y) ** 2 * (1.0 + x * x))


def test_powers_and_the_adjoint_of_a_whole_sum_fuse(allocations):
    x, y = _vectors(n=30, seed=18)
    f = jitted(squared_distance)
    check_fd(f, x, y)
    # the two adjoints returned: every temporary of the backward is a number in its loop
    assert allocations(lambda: f.grad(x, y)) <= 4
    assert f.value_and_grad(x, y)[0] == pytest.approx(squared_distance(x, y), rel=1e-13)
    check_fd(f, x, np.array([0.5]))         # y broadcast: as written
