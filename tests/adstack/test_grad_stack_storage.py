"""grad_jit on the CPU, where loop histories are kept: fixed-size stacks that overflow (and
the next call that fits), heap stacks, constant trip counts sized exactly under the frame
budget, and the budget error.

Every gradient is compared with central finite differences of the pure-Python function
(``f.py_func``) or with analytic values. Compiled functions are defined once at module level
and shared between tests: compilation dominates the run time.
"""
import math

import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import AdStackBudgetError, AdStackOverflowError

from conftest import check_fd
from cpu_programs import decay, sinrec_analytic

RNG = np.random.default_rng(1234)


# ---------------------------------------------------------------------------------------
# Stacks: overflow, heap storage, frame budget
# ---------------------------------------------------------------------------------------
def _long_loop(x, n):
    v = x[0]
    for _ in range(n):
        v = math.sin(v) * 1.01
    return v


small_stack = nad.grad_jit(ad_stack_size=16)(_long_loop)
heap_stack = nad.grad_jit(ad_stack_size=16, storage="heap")(_long_loop)


def test_overflow_then_fitting_call():
    x = np.array([0.4])
    with pytest.raises(AdStackOverflowError, match="ad_stack_size"):
        small_stack.grad(x, 100)
    (g, _) = small_stack.grad(x, 12)
    np.testing.assert_allclose(g, sinrec_analytic(x, 12), rtol=1e-12)
    with pytest.raises(AdStackOverflowError):
        small_stack.value_and_grad(x, 17)
    (g, _) = small_stack.grad(x, 16)
    np.testing.assert_allclose(g, sinrec_analytic(x, 16), rtol=1e-12)


def test_heap_storage_long_loop():
    x = np.array([0.4])
    (g, _) = heap_stack.grad(x, 2000)
    np.testing.assert_allclose(g, sinrec_analytic(x, 2000), rtol=1e-10)
    src = heap_stack.inspect_adjoint(x, 2000)
    assert "push(" in src


_NS = {"math": math, "np": np, "nad": nad}


def _ten_carried_src(*loops):
    names = ["c%d" % k for k in range(10)]
    lines = ["def f(x, n):"]
    lines += ["    %s = x[%d]" % (c, k) for k, c in enumerate(names)]
    for depth, loop in enumerate(loops):
        lines.append("    " * (depth + 1) + "for _ in %s:" % loop)
    rhs = ["math.sin(%s) * 0.9 + 0.1 * %s" % (names[k], names[(k + 1) % 10])
           for k in range(10)]
    lines.append("    " * (len(loops) + 1) + "%s = %s" % (", ".join(names), ", ".join(rhs)))
    lines.append("    return %s" % " + ".join(names))
    ns = dict(_NS)
    exec("\n".join(lines) + "\n", ns)
    return ns["f"]


@pytest.mark.parametrize("loops", [("range(3)",), ("range(3)", "range(4)")],
                         ids=["range3", "range3x4"])
def test_budget_constant_trip_count_sized_exactly(loops):
    # Sized by ad_stack_size, ten float64 stacks would take 320 KiB, over the 256 KiB budget;
    # constant trip counts (nested ones multiply) need only 3 or 12 slots each.
    f = nad.grad_jit(ad_stack_size=4096)(_ten_carried_src(*loops))
    x = RNG.uniform(-1, 1, 10)
    check_fd(f, x, 0)


def test_budget_error_dynamic_loop_then_process_goes_on():
    f = nad.grad_jit(ad_stack_size=8192)(_ten_carried_src("range(n)"))
    x = RNG.uniform(-1, 1, 10)
    with pytest.raises(AdStackBudgetError):
        f.grad(x, 3)
    # Another gradient still works.
    np.testing.assert_allclose(decay.grad(np.array([2.0, 0.5]), 2)[0], [0.81, 0.19])
    # Heap storage has no frame budget.
    h = nad.grad_jit(ad_stack_size=8192, storage="heap")(f.py_func)
    check_fd(h, x, 3)
