"""The per-function frame budget: in-process errors, the setting, parfor bodies as tasks."""
import numba
import numpy as np
import pytest

from numba_adstack import adstack, push, pop, size, config, AdStackBudgetError

HEADER = 8                     # i64 count
F64 = 8                        # bytes per float64 entry
BUDGET = 256 * 1024


def frame_bytes(capacity, entry_bytes):
    """The documented layout: header + capacity * bytes per entry."""
    return HEADER + capacity * entry_bytes


def _two_stacks(cap):
    @numba.njit
    def two_stacks(n):
        a = adstack(np.float64, cap)
        b = adstack(np.float64, cap)
        for i in range(n):
            push(a, i)
            push(b, 2 * i)
        s = 0.0
        while size(a) > 0:
            s += pop(a) + pop(b)
        return s
    return two_stacks


def test_default_budget_is_256_kib():
    assert config.FRAME_BUDGET_BYTES == BUDGET  # the test environment does not override it
    assert config.get_frame_budget() == BUDGET


def test_over_budget_raises_in_process_and_names_function_bytes_budget_fixes():
    cap = 20000                                    # 2 * 160008 bytes > 256 KiB
    f = _two_stacks(cap)
    with pytest.raises(AdStackBudgetError) as exc:
        f(3)
    msg = str(exc.value)
    assert "two_stacks" in msg
    assert "need %d bytes" % (2 * frame_bytes(cap, F64)) in msg
    assert "budget of %d bytes" % BUDGET in msg
    for fix in ("smaller capacities", 'heap storage ("heap")', "NUMBA_ADSTACK_FRAME_BUDGET"):
        assert msg.count(fix) == 1, (fix, msg)
    # The process goes on, and a later compile of a fitting function is unaffected.
    assert _two_stacks(100)(3) == 9.0


def test_just_under_budget_compiles_and_runs():
    cap = (BUDGET // 2 - HEADER) // F64            # 2 stacks of exactly BUDGET / 2 bytes
    assert 2 * frame_bytes(cap, F64) == BUDGET
    assert _two_stacks(cap)(cap) == 3 * sum(range(cap))
    with pytest.raises(AdStackBudgetError):
        _two_stacks(cap + 1)(1)


def test_budget_setting_moves_the_line():
    cap = 20000
    with config.frame_budget(2 * frame_bytes(cap, F64)):
        assert _two_stacks(cap)(4) == 18.0
    with config.frame_budget(2 * frame_bytes(100, F64) - 1):
        with pytest.raises(AdStackBudgetError, match="budget of %d bytes"
                           % (2 * frame_bytes(100, F64) - 1)):
            _two_stacks(100)(1)
    old = config.FRAME_BUDGET_BYTES
    try:
        config.FRAME_BUDGET_BYTES = 1000
        with pytest.raises(AdStackBudgetError):
            _two_stacks(100)(1)
    finally:
        config.FRAME_BUDGET_BYTES = old
    assert config.get_frame_budget() == BUDGET


def test_heap_stacks_are_outside_the_budget():
    @numba.njit
    def heap_big(n):
        a = adstack(np.float64, 1 << 20, "heap")
        b = adstack(np.float64, 1 << 20, "heap")
        push(a, n)
        push(b, n)
        return pop(a) + pop(b)
    assert heap_big(2) == 4.0


def test_prange_body_is_its_own_task():
    cap = 20000                                    # 160008 bytes: one per task fits

    @numba.njit(parallel=True)
    def outer_and_body(n):
        out = np.zeros(n)
        for i in numba.prange(n):
            st = adstack(np.float64, cap)
            for j in range(i + 1):
                push(st, j)
            s = 0.0
            while size(st) > 0:
                s += pop(st)
            out[i] = s
        mine = adstack(np.float64, cap)
        push(mine, 1.0)
        return out.sum() + pop(mine)
    assert outer_and_body(4) == 0 + 1 + 3 + 6 + 1.0

    @numba.njit(parallel=True)
    def body_over(n):
        out = np.zeros(n)
        for i in numba.prange(n):
            a = adstack(np.float64, cap)
            b = adstack(np.float64, cap)
            push(a, i)
            push(b, i)
            out[i] = pop(a) + pop(b)
        return out.sum()
    with pytest.raises(AdStackBudgetError, match="prange body of .*body_over"):
        body_over(4)


def test_environment_variable_sets_the_budget():
    import subprocess
    import sys
    code = ("import numba_adstack.config as c; print(c.FRAME_BUDGET_BYTES, c.get_frame_budget())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "NUMBA_ADSTACK_FRAME_BUDGET": "4096"},
                         check=True).stdout.split()
    assert out == ["4096", "4096"]
