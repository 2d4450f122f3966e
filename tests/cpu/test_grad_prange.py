"""grad_jit on the CPU, ``prange`` loops: the primal runs in parallel as Numba runs it; the
backward of independent iterations runs in parallel (per-thread copies of a shared
adjoint), otherwise serially; errors inside a parallel backward are the real ones.

Every gradient is compared with central finite differences of the pure-Python function
(``f.py_func``) or with analytic values. Compiled functions are defined once at module level
and shared between tests: compilation dominates the run time.
"""
import math

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import AdStackOverflowError

from conftest import backward_of, check_fd

RNG = np.random.default_rng(1234)


# ---------------------------------------------------------------------------------------
# prange: the primal runs in parallel as Numba runs it; the backward replays it serially.
# ---------------------------------------------------------------------------------------
@nad.grad_jit(parallel=True)
def prange_paths(x, w, n):
    out = np.empty(x.shape[0])
    for i in numba.prange(x.shape[0]):
        v = x[i]
        for _ in range(n):
            v = math.sin(v) * w[i % 2]
        out[i] = v
    s = 0.0
    for i in numba.prange(x.shape[0]):
        s += out[i] * out[i]
    return s


def test_prange_loops_differentiate():
    x = RNG.uniform(0.1, 1.0, 9)
    w = np.array([1.01, 0.97])
    assert prange_paths(x, w, 7) == pytest.approx(prange_paths.py_func(x, w, 7), rel=1e-12)
    check_fd(prange_paths, x, w, 7)


def _paths(S0, sigma, Z, w):
    # Independent paths summed: with parallel=True the backward runs them in parallel.
    total = 0.0
    for p in numba.prange(Z.shape[0]):
        s = S0
        row = Z[p]
        for t in range(Z.shape[1]):
            s = s * math.exp(sigma * row[t] - 0.5 * sigma * sigma) + w[p] * Z[p, t]
        total += s * s + np.sum(row) * w[p]
    return total / Z.shape[0]


def _shared_weight(x, w, n):
    # Every iteration reads w[0]: its adjoint is shared, so each thread adds into a copy.
    total = 0.0
    for p in numba.prange(x.shape[0]):
        v = x[p]
        for _ in range(n):
            v = math.sin(v) * w[0]
        total += v
    return total


paths_parallel = nad.grad_jit(parallel=True, ad_stack_size=16)(_paths)
paths_serial = nad.grad_jit(ad_stack_size=16)(_paths)
shared_parallel = nad.grad_jit(parallel=True, ad_stack_size=16)(_shared_weight)


def test_parallel_backward_of_independent_iterations():
    Z = RNG.standard_normal((12, 6))
    w = RNG.uniform(0.1, 0.3, 12)
    args = (1.3, 0.2, Z, w)
    assert backward_of(paths_parallel, *args).parallel
    assert not backward_of(paths_serial, *args).parallel
    got = check_fd(paths_parallel, *args)
    want = paths_serial.grad(*args)
    for g, s in zip(got, want):
        np.testing.assert_allclose(g, s, rtol=1e-12, atol=1e-15)


@nad.grad_jit(parallel=True)
def branching_iterations(x, a):
    # Found by the random parallel programs: an iteration that branches, its helper
    # inlined into the prange body, gave a wrong gradient.
    total = 0.0
    for p in numba.prange(x.shape[0]):
        f0 = x[p]
        f1 = x[(p + 1) % x.shape[0]]
        f2 = a * x[p]
        if f0 < f2:
            f0 = 0.5 * f0 + 0.4 * math.tanh(f2 + f0)
            f2 = 0.6 * math.tanh(f1 + f2)
            f1 = 0.6 * math.sin(f0)
        f1 = 0.5 * f1 + 0.4 * math.cos(f2)
        total += f0 + 0.7 * f1 - 0.3 * f2
    return total


def test_parallel_iterations_that_branch():
    rng = np.random.default_rng(1)
    check_fd(branching_iterations, rng.uniform(-1.0, 1.0, 5), float(rng.uniform(0.5, 1.5)))


def test_parallel_loop_with_a_shared_adjoint_uses_per_thread_copies():
    x = RNG.uniform(0.1, 1.0, 10)
    w = np.array([1.05])
    assert backward_of(shared_parallel, x, w, 4).parallel
    src = shared_parallel.inspect_adjoint(x, w, 4)
    assert "_t_w_bar" in src and "_t_x_bar" not in src, src
    check_fd(shared_parallel, x, w, 4)


def test_parallel_loop_past_the_copy_limit_runs_serially(monkeypatch):
    from numba_adstack.ad.emit import parallel
    monkeypatch.setattr(parallel, "SHARED_COPY_LIMIT", 1)
    f = nad.grad_jit(parallel=True, ad_stack_size=16)(_shared_weight)
    x = RNG.uniform(0.1, 1.0, 10)
    w = np.array([1.05])
    assert "raise MemoryError" in f.inspect_adjoint(x, w, 4)
    check_fd(f, x, w, 4)


def test_parallel_backward_overflow_is_the_real_error():
    Z = RNG.standard_normal((4, 40))      # 40 steps > ad_stack_size=16
    w = np.full(4, 0.1)
    with pytest.raises(AdStackOverflowError, match="ad_stack_size=16"):
        paths_parallel.grad(1.0, 0.2, Z, w)
    check_fd(paths_parallel, 1.0, 0.2, Z[:, :6].copy(), w)
