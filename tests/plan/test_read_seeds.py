"""Element seeds across two loops (plan/read_seeds.py, emit/indexed_seeds.py): an array the
function fills, then reads only at the index of a later loop of sums, has no adjoint
array; each store takes its element's adjoint from that loop, evaluated at its index.

Checked on the plan and against central finite differences of the pure-Python function:
reads that are not linear (a product of two reads, a power, a call), the loop's index as
a factor, stores whose indices may be negative (the replay checks them: a negative index
counts from the end, so two stores may share an element), and the nearby forms that
must keep the adjoint array (the array read twice on the way to the sum, read at a
shifted index, read by two loops, written again after the reading loop, a factor the
loop carries, a read under a branch).
"""
import math

import numpy as np
import pytest
from numba import typeof

import numba_adstack as nad
from numba_adstack.ad.capture.pipeline import typed_ir
from numba_adstack.ad.dispatch.rewrite import Options, build_backward

from benchmarks.workloads_library import move_mean_loss
from conftest import check_fd

RNG = np.random.default_rng(71)


def seeded(fn, *args):
    """The arrays whose stores take their elements' adjoints from a later loop."""
    typed = typed_ir(fn, tuple(typeof(a) for a in args))
    plan = build_backward(typed, fn, Options(None, "auto")).plan
    return sorted(root.split(".")[0] for root, (_, seed) in plan.element_seeds.items()
                  if seed[0] == "indexed")


# ------------------------------------------------------------------ transformed
def index_weighted_squares(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * 3.0 - 1.0
    total = 0.0
    for i in range(out.shape[0]):
        total += (i + 1) * out[i] * out[i]
    return total


def literal_power(a, w):
    out = np.empty(len(a))
    s = 0.0
    for i in range(len(a)):
        s = 0.5 * s + a[i]
        out[i] = s
    total = 0.0
    for i in range(len(out)):
        total += w[i] * out[i] ** 3
    return total


def call_of_read(a, w):
    out = np.empty_like(a)
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
        out[i] = s
    total = 0.0
    for i in range(out.shape[0]):
        total -= math.sin(out[i]) / (1.0 + w[i] * w[i])
    return 2.0 * total


def quotient_of_reads(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * a[i] + 1.0
    total = 0.0
    for i in range(out.shape[0]):
        total += out[i] / (out[i] + i)
    return total


def from_offset(a, s):
    # range(s, n): s may be negative, and out[-1] is out[n - 1]
    n = len(a)
    out = np.empty(n)
    acc = 0.0
    for i in range(s, n):
        acc = acc * 0.5 + a[i]
        out[i] = acc
    total = 0.0
    for i in range(n):
        total += (i + 1) * out[i] * out[i]
    return total


def two_loops_from_offset(a, w):
    # move_mean's shape: stores at [0, w) and [w, n); a negative w stores out[w..-1]
    # first (the elements at the end), then every element again
    n = len(a)
    out = np.zeros(n)
    acc = 0.0
    for i in range(w):
        acc += a[i]
        out[i] = acc
    for i in range(w, n):
        acc = 0.9 * acc + a[i]
        out[i] = acc * a[i]
    total = 0.0
    for i in range(n):
        total += out[i] * out[i] * (i + 2)
    return total


def point_store(a, m):
    # a store outside loops at an argument index, which may count from the end, before
    # a loop from the next index on: proved apart, but out[-1] is out[n - 1]
    n = len(a)
    out = np.zeros(n)
    out[m] = a[0] * a[1]
    acc = 0.0
    for i in range(m + 1, n):
        acc += a[i]
        out[i] = acc
    total = 0.0
    for i in range(n):
        total += out[i] * out[i]
    return total


TRANSFORMED = [index_weighted_squares, literal_power, call_of_read, quotient_of_reads]


def _args(fn):
    a = RNG.uniform(0.5, 1.5, 9)
    if fn in (literal_power, call_of_read):
        return (a, RNG.standard_normal(9))
    return (a,)


@pytest.mark.parametrize("fn", TRANSFORMED, ids=lambda f: f.__name__)
def test_stores_take_the_adjoint_of_reads_that_are_not_linear(fn):
    args = _args(fn)
    assert seeded(fn, *args) == ["out"]
    f = nad.grad_jit(fn)
    assert "out_bar" not in f.inspect_adjoint(*args)
    assert f.value_and_grad(*args)[0] == pytest.approx(fn(*args), rel=1e-12)
    check_fd(f, *args, rtol=1e-6, atol=1e-8)


def test_move_mean():
    a = RNG.standard_normal(40)
    assert seeded(move_mean_loss, a, 5) == ["out"]
    f = nad.grad_jit(move_mean_loss)
    src = f.inspect_adjoint(a, 5)
    assert "out_bar" not in src and "out_wrapped = True" in src, src
    for window in (5, 1, 40):
        check_fd(f, a, window)


@pytest.mark.parametrize("s", [0, 3, -3, -9, 12])
def test_store_indices_that_may_be_negative(s):
    a = RNG.uniform(0.5, 1.5, 9)
    assert seeded(from_offset, a, s) == ["out"]
    f = nad.grad_jit(from_offset)
    check_fd(f, a, s, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("w", [0, 4, 9, -2, -9])
def test_two_loops_whose_stores_may_share_elements(w):
    a = RNG.uniform(0.5, 1.5, 9)
    assert seeded(two_loops_from_offset, a, w) == ["out"]
    check_fd(nad.grad_jit(two_loops_from_offset), a, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("m", [0, 4, -1, -3, -9])
def test_a_store_outside_loops_at_an_index_that_may_be_negative(m):
    a = RNG.uniform(0.5, 1.5, 9)
    assert seeded(point_store, a, m) == ["out"]
    check_fd(nad.grad_jit(point_store), a, m, rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------ left alone
def value_used_twice(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * 3.0
    total = 0.0
    for i in range(out.shape[0]):
        t = out[i] * 2.0
        total += t * t + t
    return total


def shifted_read(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * 3.0
    total = 0.0
    for i in range(1, out.shape[0]):
        total += out[i] * out[i - 1]
    return total


def read_by_two_loops(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * 3.0
    total = 0.0
    for i in range(out.shape[0]):
        total += out[i] * out[i]
    for i in range(out.shape[0]):
        total += out[i] * a[i]
    return total


def written_after(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * 2.0
    total = 0.0
    for i in range(out.shape[0]):
        total += out[i] * out[i]
    out[0] = a[1] * 3.0
    return total + out[0] * out[0]


def carried_factor(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * 3.0
    total = 0.0
    d = 1.0
    for i in range(out.shape[0]):
        total += out[i] * out[i] * d
        d *= 0.9
    return total


def under_a_branch(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * 3.0
    total = 0.0
    for i in range(out.shape[0]):
        if out[i] > 2.0:
            total += out[i] * out[i]
    return total


def written_twice_by_one_loop(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i]
        out[i] = out[i] * a[i]      # (a read of out outside the reading loop, too)
    total = 0.0
    for i in range(out.shape[0]):
        total += out[i] * out[i]
    return total


LEFT_ALONE = [value_used_twice, shifted_read, read_by_two_loops, written_after,
              carried_factor, under_a_branch, written_twice_by_one_loop]


@pytest.mark.parametrize("fn", LEFT_ALONE, ids=lambda f: f.__name__)
def test_nearby_forms_keep_the_adjoint_array(fn):
    a = RNG.uniform(0.5, 1.5, 9)
    assert seeded(fn, a) == []
    check_fd(nad.grad_jit(fn), a, rtol=1e-6, atol=1e-8)
