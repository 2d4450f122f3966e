"""Argument adjoints assigned by the first loop the sweep reverses (plan/sweep_assigned.py,
emit/loop_versions.py): an argument read only at ``i + c`` by a counted loop the sweep
reverses (and before it), whose smallest offset ``c`` is below the others, gets its
adjoint from ``np.empty_like``; the elements that offset does not reach are set to zero
before the loop's reverse, which assigns the others. Where the order of the offsets (or
the sign of the first element) is not proved, it is checked where the sweep reaches the
loop, and the loop is reversed the general way when the check fails.

Checked on the plan, on the text and against central finite differences of the
pure-Python function, where it applies (offsets proved or checked, the check failing,
empty loops) and where it must not (the argument read after the loop, under a branch,
written, a loop that may not run, a checkpointed loop).
"""
import numpy as np
import pytest
from numba import typeof

import numba_adstack as nad
from numba_adstack.ad.capture.pipeline import typed_ir
from numba_adstack.ad.dispatch.rewrite import Options, build_backward

from benchmarks.workloads_library import move_mean_loss
from conftest import check_fd

RNG = np.random.default_rng(83)


def swept(fn, *args, checkpoint="auto"):
    typed = typed_ir(fn, tuple(typeof(a) for a in args))
    plan = build_backward(typed, fn, Options(None, "auto", checkpoint=checkpoint)).plan
    return sorted(root.split(".")[0] for root in plan.sweep_assigned)


# ------------------------------------------------------------------ assigned
def moving_sum(a, w):
    n = len(a)
    out = np.empty(n)
    s = 0.0
    for i in range(w):
        s += a[i]
        out[i] = s
    for i in range(w, n):
        s += a[i] - a[i - w]
        out[i] = s
    total = 0.0
    for i in range(n):
        total += (i + 1) * out[i] * out[i]
    return total


def decayed_pairs(a, lo, hi, d):
    s = 0.0
    for i in range(lo, hi):
        s = 0.9 * s + a[i + d] * a[i]
    return s * s


def differences(x):
    # offsets 1 and 0, proved ordered: no check
    s = 0.0
    for i in range(len(x) - 1):
        s = 0.5 * s + (x[i + 1] - x[i]) ** 2
    return s


def read_twice_at_the_index(x):
    s = 1.0
    for i in range(x.shape[0]):
        s = s * 0.5 + x[i] * x[i]
    return s


@pytest.mark.parametrize("w", [3, 1, 9, 0])
def test_moving_sum(w):
    a = RNG.standard_normal(9)
    assert swept(moving_sum, a, w) == ["a"]
    f = nad.grad_jit(moving_sum)
    src = f.inspect_adjoint(a, w)
    assert "a_bar = np.empty_like(a)" in src and "window" not in src, src
    check_fd(f, a, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("lo, hi, d", [(0, 8, 1), (1, 9, -1), (2, 5, 3), (3, 3, 1),
                                       (0, 9, 0), (4, 2, 1), (0, 4, 5), (-3, 8, 1)])
def test_offsets_checked_where_the_sweep_reaches_the_loop(lo, hi, d):
    a = RNG.standard_normal(9)
    assert swept(decayed_pairs, a, lo, hi, d) == ["a"]
    f = nad.grad_jit(decayed_pairs)
    assert "_fast" in f.inspect_adjoint(a, lo, hi, d)
    check_fd(f, a, lo, hi, d, rtol=1e-6, atol=1e-8)


def read_before(x):
    # the first loop's reads are reversed after the second's
    t = 0.0
    for i in range(len(x)):
        t = t * 0.9 + x[i]
    s = t
    for i in range(1, len(x)):
        s = 0.5 * s + x[i] * x[i - 1]
    return s


def summed_before(x):
    # a loop of sums before: run again by the sweep after the second loop's reverse
    t = 0.0
    for i in range(len(x)):
        t += x[i] * x[i]
    s = 0.0
    for i in range(1, len(x)):
        s = 0.5 * s + x[i] * x[i - 1]
    return s + t


@pytest.mark.parametrize("fn", [differences, read_twice_at_the_index, read_before,
                                summed_before],
                         ids=lambda f: f.__name__)
def test_offsets_proved(fn):
    x = RNG.standard_normal(8)
    assert swept(fn, x) == ["x"]
    f = nad.grad_jit(fn)
    src = f.inspect_adjoint(x)
    assert "x_bar = np.empty_like(x)" in src and "_fast" not in src, src
    # (a loop over every element at offset 0 leaves no element to zero)
    assert ("x_bar[max(" in src) == (fn is not read_twice_at_the_index), src
    check_fd(f, x, rtol=1e-6, atol=1e-8)
    check_fd(f, x[:1], rtol=1e-6, atol=1e-8)       # (differences: an empty loop)


def test_move_mean():
    a = RNG.standard_normal(30)
    assert swept(move_mean_loss, a, 4) == ["a"]
    f = nad.grad_jit(move_mean_loss)
    src = f.inspect_adjoint(a, 4)
    assert "a_bar = np.empty_like(a)" in src and "a_bar[:] = 0.0" in src, src
    for window in (4, 1, 30):
        check_fd(f, a, window)


# ------------------------------------------------------------------ left alone
def read_after(x):
    s = 0.0
    for i in range(1, len(x)):
        s = 0.5 * s + x[i] * x[i - 1]
    return s * x[2]             # reversed first


def under_a_branch(x):
    s = 0.0
    for i in range(1, len(x)):
        if x[i] > 0.0:
            s = 0.5 * s + x[i] * x[i - 1]
    return s


def written(x):
    s = 0.0
    for i in range(1, len(x)):
        s = 0.5 * s + x[i] * x[i - 1]
    x[0] = 2.0 * s
    return s + x[0] * x[1]


def returns_before(x, c):
    if c > 1.0:
        return c * x[0]
    s = 0.0
    for i in range(1, len(x)):
        s = 0.5 * s + x[i] * x[i - 1]
    return s


LEFT_ALONE = [read_after, under_a_branch, written, returns_before]


@pytest.mark.parametrize("fn", LEFT_ALONE, ids=lambda f: f.__name__)
def test_nearby_forms_are_zeroed_and_added_into(fn):
    x = RNG.standard_normal(8)
    args = (x, 0.5) if fn is returns_before else (x,)
    assert swept(fn, *args) == []
    check_fd(nad.grad_jit(fn), *args, rtol=1e-6, atol=1e-8)
    if fn is returns_before:
        check_fd(nad.grad_jit(fn), x, 2.0, rtol=1e-6, atol=1e-8)


def test_not_when_the_loop_is_checkpointed():
    a = RNG.standard_normal(9)
    assert swept(decayed_pairs, a, 0, 8, 1, checkpoint="revolve") == []
    f = nad.grad_jit(decayed_pairs, checkpoint="revolve")
    check_fd(f, a, 0, 8, 1, rtol=1e-6, atol=1e-8)
