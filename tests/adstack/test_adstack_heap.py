"""Heap-storage adstacks: growth, memory returned, error paths; the benchmark's smoke run."""
import numba
import numpy as np
import pytest
from numba.core.runtime import _nrt_python, rtsys

from numba_adstack import adstack, push, pop, top, size, AdStackUnderflowError


@numba.njit
def _million(n):
    st = adstack(np.float64, 16, "heap")       # grows by doubling from 16
    flags = adstack(np.bool_, 1, "heap")
    for i in range(n):
        push(st, i)
        push(flags, i % 3 == 0)
    peak = size(st)
    s = 0.0
    k = 0
    ok = True
    for i in range(n - 1, -1, -1):
        ok = ok and top(st) == i
        s += pop(st)
        k += pop(flags)
    return peak, s, k, ok, size(st)


@numba.njit
def _underflow(n):
    st = adstack(np.int64, 4, "heap")
    for i in range(n):
        push(st, i)
    s = 0
    for i in range(n + 1):
        s += pop(st)
    return s


@pytest.fixture
def nrt_stats():
    _million(1)  # compiled and the runtime initialised before counting
    was = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()

    def live():
        st = rtsys.get_allocation_stats()
        return st.alloc - st.free, st.mi_alloc - st.mi_free
    yield live
    if not was:
        _nrt_python.memsys_disable_stats()


def test_million_pushes_and_pops_round_trip():
    n = 1_000_000
    peak, s, k, ok, after = _million(n)
    assert (peak, after, ok) == (n, 0, True)
    assert s == n * (n - 1) / 2
    assert k == len(range(0, n, 3))


def test_repeated_calls_return_their_memory(nrt_stats):
    before = nrt_stats()
    for _ in range(20):
        _million(100_000)
    assert nrt_stats() == before


def test_error_path_does_not_leak(nrt_stats):
    with pytest.raises(AdStackUnderflowError, match="_underflow.*pop on an empty"):
        _underflow(10)
    before = nrt_stats()
    for _ in range(5):
        with pytest.raises(AdStackUnderflowError):
            _underflow(100)
    assert nrt_stats() == before


def test_heap_stack_in_a_loop_is_fresh_each_iteration():
    @numba.njit
    def f(m):
        tot = 0
        for j in range(m):
            st = adstack(np.int32, 2, "heap")
            for i in range(j):
                push(st, i)
            tot += size(st)
        return tot
    assert f(50) == sum(range(50))


def test_benchmark_smoke():
    from benchmarks.bench_adstack import run
    r = run(100, 1)
    assert r["n"] == 100
    for k in ("frame_ratio", "heap_ratio", "heap_presized_ratio"):
        assert r[k] > 0
