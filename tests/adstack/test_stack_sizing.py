"""Stacks that size themselves (the default, storage="auto"): no overflow and no budget
error with default options, heap stacks reserved at loop entry or grown, a clean
MemoryError when the history does not fit; the explicit fixed-capacity modes unchanged."""
import math

import numba
import numpy as np
import pytest
from numba.core.runtime import _nrt_python, rtsys

import numba_adstack as nad
from numba_adstack import AdStackBudgetError, AdStackOverflowError
from numba_adstack.ad.plan import stacks
from benchmarks import workloads_real as wr

from conftest import backward_of, check_fd, fd_grad

RNG = np.random.default_rng(7)


def _declarations(src):
    return [line.strip() for line in src.splitlines() if "adstack(" in line]


# ---------------------------------------------------------------------------------------
# Default options: long loops of every kind
# ---------------------------------------------------------------------------------------
oscillator = nad.grad_jit(wr.damped_oscillator)


def test_while_loop_of_200k_steps_with_default_options():
    args = wr._oscillator_args(quick=False)             # 200,000 steps
    got = oscillator.grad(*args)
    want = numba.njit(wr.damped_oscillator_grad)(*args)
    for g, w in zip(got[:4], want[:4]):
        assert g == pytest.approx(w, rel=1e-9, abs=1e-12)
    assert got[4:] == (None, None) or all(isinstance(g, float) for g in got[4:])
    decl = _declarations(oscillator.inspect_adjoint(*args))
    assert decl and all("'heap'" in d for d in decl), decl   # a while loop: growable
    check_fd(oscillator, *wr._oscillator_args(quick=True), rtol=1e-5, atol=1e-8)


black_scholes = nad.grad_jit(wr.black_scholes_loss)


def test_pricing_two_million_options_with_default_options():
    args = wr._black_scholes_args(2_000_000)
    got = black_scholes.grad(*args)
    want = numba.njit(wr.black_scholes_grad)(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    small = wr._black_scholes_args(64)
    check_fd(black_scholes, *small, rtol=1e-5, atol=1e-7)


def _nested(x, n, m):
    s = 0.0
    for i in range(n):
        v = x[i % x.shape[0]]
        for j in range(m):
            v = math.sin(v) * 1.01 + 0.001 * j
        s = s * 0.5 + v
    return s


def _triangular(x, n):
    s = 0.0
    for i in range(n):
        v = x[i % x.shape[0]]
        for j in range(i):
            v = math.cos(v) * 0.9
        s = math.sin(s) + v
    return s


def _while_in_for(x, n, tol):
    s = 0.0
    for i in range(n):
        v = x[i % x.shape[0]]
        k = 0
        while abs(v) > tol and k < 50:
            v = 0.5 * v + 0.01 * math.sin(v)
            k += 1
        s = s * 0.9 + v * v
    return s


def _break_loop(x, n):
    v = x[0]
    for i in range(n):
        v = math.sin(v) * 1.1
        if v > 0.9:
            break
    return v


nested = nad.grad_jit(_nested)
triangular = nad.grad_jit(_triangular)
while_in_for = nad.grad_jit(_while_in_for)
break_loop = nad.grad_jit(_break_loop)


@pytest.mark.parametrize("n,m", [(0, 3), (1, 1), (3, 2000), (2000, 3), (60, 60)])
def test_nested_run_time_trip_counts_at_several_sizes(n, m):
    x = RNG.uniform(0.1, 0.9, 5)
    src = nested.inspect_adjoint(x, n, m)
    assert "reserve(" in src, src             # sized when the loops start
    assert all("'heap'" in d for d in _declarations(src))
    got = nested.grad(x, n, m)
    want = fd_grad(_nested, (x, n, m))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("n", [0, 1, 7, 300])
def test_triangular_and_while_in_for_at_several_sizes(n):
    x = RNG.uniform(0.2, 0.8, 4)
    check_fd(triangular, x, n, rtol=1e-5, atol=1e-8)
    check_fd(while_in_for, x, n, 1e-3, rtol=1e-5, atol=1e-8)


def test_loop_left_by_break_grows_instead_of_reserving():
    src = break_loop.inspect_adjoint(np.array([0.3]), 10)
    assert "reserve(" not in src and "'heap'" in src, src
    for n in (0, 3, 10_000):
        check_fd(break_loop, np.array([0.3]), n, rtol=1e-5, atol=1e-8)


def test_constant_trip_counts_use_exact_frame_stacks():
    @nad.grad_jit
    def f(x):
        v = x[0]
        for _ in range(3):
            for _ in range(4):
                v = math.sin(v) * 1.01
        return v
    decl = _declarations(f.inspect_adjoint(np.array([0.5])))
    assert decl and all(d.endswith(", 12)") for d in decl), decl
    check_fd(f, np.array([0.5]))


def test_constant_stacks_past_the_budget_go_to_the_heap():
    @nad.grad_jit
    def f(x):
        a = x[0]
        b = x[1]
        for _ in range(20000):          # two stacks of 160,008 bytes: over 256 KiB
            a, b = math.sin(b) * 0.5 + 0.1, math.cos(a) * 0.5
        return a + b
    decl = _declarations(f.inspect_adjoint(np.array([0.3, 0.4])))
    heap = [d for d in decl if "'heap'" in d]
    frame = [d for d in decl if "'heap'" not in d]
    assert heap and frame, decl                       # the largest moved, the rest stayed
    assert all("20000" in d or "20064" in d for d in decl), decl
    check_fd(f, np.array([0.3, 0.4]), rtol=1e-5)


def test_fused_loop_inner_stacks_hold_one_iteration():
    @nad.grad_jit
    def f(x, n):
        s = 0.0
        for i in range(x.shape[0]):
            v = x[i]
            for _ in range(n):
                v = math.sin(v) * 1.01
            s += v
        return s
    src = f.inspect_adjoint(np.ones(3), 5)
    assert "reserve(" in src
    check_fd(f, RNG.uniform(0.1, 1.0, 200), 500, rtol=1e-5)


# ---------------------------------------------------------------------------------------
# When the history does not fit: a MemoryError, nothing leaked
# ---------------------------------------------------------------------------------------
@pytest.fixture
def nrt_live():
    was = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()

    def live():
        st = rtsys.get_allocation_stats()
        return st.alloc - st.free, st.mi_alloc - st.mi_free
    yield live
    if not was:
        _nrt_python.memsys_disable_stats()


def test_history_past_memory_is_a_memory_error():
    x = np.array([0.3, 0.2])
    for _ in range(2):
        with pytest.raises(MemoryError, match="_nested.*does not fit in memory"):
            nested.grad(x, 2, 10 ** 15)                # 8 PB of history
    check_fd(nested, x, 3, 4)                          # and the next call works


@numba.njit
def _two_growing(n, big):
    a = nad.adstack(np.float64, 4, "heap")
    b = nad.adstack(np.int64, 4, "heap")
    for i in range(n):
        nad.push(a, i)
        nad.push(b, i)
    nad.reserve(a, big)
    s = 0.0
    while nad.size(a) > 0:
        s += nad.pop(a) + nad.pop(b)
    return s


def test_failed_growth_frees_every_heap_stack_of_the_function(nrt_live):
    assert _two_growing(100, 10) == 2 * sum(range(100))
    before = nrt_live()
    for big in (10 ** 15, 2 ** 62):                    # too much; past int64 bytes
        with pytest.raises(MemoryError, match="_two_growing"):
            _two_growing(10_000, big)
    assert nrt_live() == before


# ---------------------------------------------------------------------------------------
# Explicit options: fixed capacities, overflow with recovery, the budget guard
# ---------------------------------------------------------------------------------------
def test_explicit_capacity_overflows_once_per_fix_then_recovers():
    f = nad.grad_jit(ad_stack_size=16)(_break_loop)
    x = np.array([0.3])
    with pytest.raises(AdStackOverflowError) as exc:
        f.grad(x, 100)
    msg = str(exc.value)
    assert "'_break_loop'" in msg and "ad_stack_size=16" in msg, msg
    for fix in ("leave ad_stack_size and storage unset", "pass a larger ad_stack_size"):
        assert msg.count(fix) == 1, msg
    assert msg.count("ad_stack_size=64") == 1, msg     # one suggestion, once
    check_fd(f, x, 16)


def _pair(x, n):
    a = x[0]
    b = x[1]
    for _ in range(n):
        a, b = math.sin(b) * 0.5 + 0.1, math.cos(a) * 0.5
    return a + b


def test_explicit_frame_budget_error_names_the_stacks_before_compiling():
    f = nad.grad_jit(ad_stack_size=20000)(_pair)
    with pytest.raises(AdStackBudgetError) as exc:
        f.grad(np.array([0.3, 0.4]), 3)
    msg = str(exc.value)
    assert "'_pair'" in msg and "over the budget of 262144 bytes" in msg, msg
    assert "kept for the call at line" in msg, msg
    assert "160008 bytes (float64 x 20000)" in msg, msg
    assert "lowering" not in msg and "During:" not in msg, msg   # not Numba's trace
    assert msg.count("Fixes:") == 1 and msg.count("frame_budget=N") == 1, msg


def test_storage_frame_keeps_the_default_capacity():
    f = nad.grad_jit(storage="frame")(_break_loop)
    decl = _declarations(f.inspect_adjoint(np.array([0.3]), 5))
    assert decl and all(d.endswith(", 1024)") for d in decl), decl


def test_options_are_checked():
    with pytest.raises(ValueError, match="'auto', 'frame' or 'heap'"):
        nad.grad_jit(storage="stack")


def test_site_need():
    class L:                                        # a loop as the plan sees it
        def __init__(self, header, tc=None, counted=True):
            self.header, self.tc, self.counted = header, tc, counted
            self.range = type("R", (), {"trip_count": lambda s: self.tc})()

    class F:
        def counted(self, lp):
            return lp.counted
    f = F()
    assert stacks.site_need(f, [L(1, 3), L(2, 4)]) == (12, None, False)
    assert stacks.site_need(f, [L(1, 3), L(2)]) == (None, (2, 3), False)
    assert stacks.site_need(f, [L(1), L(2, 5)]) == (None, (1, 1), False)
    assert stacks.site_need(f, [L(1, counted=False), L(2)]) == (None, None, True)


def test_parallel_loop_with_default_options():
    @nad.grad_jit(parallel=True)
    def paths(x, n):
        total = 0.0
        for p in numba.prange(x.shape[0]):
            v = x[p]
            for _ in range(n):
                v = math.sin(v) * 1.02
            total += v
        return total
    x = RNG.uniform(0.1, 1.0, 16)
    assert backward_of(paths, x, 30).parallel
    assert "reserve(" in paths.inspect_adjoint(x, 30)
    check_fd(paths, x, 30, rtol=1e-5)
    check_fd(paths, x, 3000, rtol=1e-5)
