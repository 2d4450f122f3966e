"""Assigned adjoints of fresh arrays (plan/assigned.py): the adjoint of an array the
function makes and fills, then reads in a loop of sums reversed in the replay, is made
with ``np.empty_like`` and assigned element by element by that loop's reverse (where the
stores cannot take each element's adjoint from that loop directly, plan/read_seeds.py:
the numba-examples' ``move_mean`` into ``out`` and its loss loop).

Checked on the plan and on the gradient against central finite differences of the
pure-Python function, where it applies and where it must not (the loop is run again by
the sweep, the array is read by another loop too or at another index, a branch in the
loop), and on a store into the array after the loop. An assigned adjoint whose loop runs
over every element of the array has nothing past the trip count to zero.
"""
import math

import numpy as np
from numba import typeof

import numba_adstack as nad
from numba_adstack.ad.capture.pipeline import typed_ir
from numba_adstack.ad.dispatch.rewrite import Options, build_backward

from benchmarks.workloads_library import move_mean_loss  # the numba-examples' move_mean
from conftest import check_fd

RNG = np.random.default_rng(25)


def assigned(fn, *args):
    typed = typed_ir(fn, tuple(typeof(a) for a in args))
    rw = build_backward(typed, fn, Options(None, "auto"))
    return sorted(name.split(".")[0] for name in rw.plan.assigned_adjoints)


def filled_then_summed(a, w):
    out = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = math.sin(a[i]) * w[i]
    total = 0.0
    for i in range(out.shape[0]):
        total += out[i] * out[i] * w[i]
    return total


def decayed_squares(a):
    # the factor d is carried by the loop: the sweep could not evaluate it at an element
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * 3.0
    total = 0.0
    d = 1.0
    for i in range(out.shape[0]):
        total += out[i] * out[i] * d
        d *= 0.9
    return total


def run_again(a):
    # sqrt of the sum: the sweep runs the loop again, after the stores' reverses? no:
    # before them; the loop is not reversed in the replay, so it is not assigned
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * a[i]
    total = 0.0
    for i in range(out.shape[0]):
        total += out[i] * out[i]
    return math.sqrt(total)


def read_twice(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * 3.0
    total = 0.0
    for i in range(out.shape[0]):
        total += out[i] * out[i]
    for i in range(out.shape[0]):
        total += out[i] * a[i]
    return total


def other_index(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * 3.0
    total = 0.0
    for i in range(1, out.shape[0]):
        total += out[i] * out[i - 1]
    return total


def branch_in_loop(a, c):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * 3.0
    total = 0.0
    for i in range(out.shape[0]):
        if out[i] > c:
            total += out[i] * out[i]
    return total


def store_after(a):
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * 2.0
    total = 0.0
    for i in range(out.shape[0]):
        total += out[i] * out[i]
    out[0] = a[1] * 3.0
    return total + out[0] * out[0]


def argument_stored_after(x):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * x[i]
    x[0] = x[1] * 3.0           # the loop read the old x[0]
    return total + x[0] * x[0]


def zeroed_tails(src):
    """The adjoints whose elements past a loop's trip count the backward sets to zero."""
    return {line.split("[")[0].strip() for line in src.splitlines()
            if line.rstrip().endswith(":] = 0.0")}


def weighted_dot(x, w):
    # a loop over every element of x: its adjoint has nothing past the trip count
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * w[i]
    return total * total


def weighted_dot_but_last(x, w):
    total = 0.0
    for i in range(len(x) - 1):
        total += x[i] * w[i]
    return total * total


GRAD = {f.__name__: nad.grad_jit(f) for f in (
    move_mean_loss, filled_then_summed, decayed_squares, run_again, read_twice, other_index,
    branch_in_loop, store_after, argument_stored_after, weighted_dot,
    weighted_dot_but_last)}


def test_move_mean_out_has_no_adjoint_array():
    # Its loss reads out[i] twice, at its index, into the sum: each store takes the
    # element's adjoint from the loss (plan/read_seeds.py), which comes before the
    # assigned adjoint of this module.
    a = RNG.standard_normal(30)
    assert "out" not in assigned(move_mean_loss, a, 5)
    src = GRAD["move_mean_loss"].inspect_adjoint(a, 5)
    assert "out_bar" not in src, src
    check_fd(GRAD["move_mean_loss"], a, 5)
    check_fd(GRAD["move_mean_loss"], a[:5], 5)     # one window: the second loop never runs


def test_fresh_array_with_two_reads_per_iteration():
    a = RNG.standard_normal(9)
    assert "out" in assigned(decayed_squares, a)
    check_fd(GRAD["decayed_squares"], a)


def test_fresh_array_read_into_the_sum_by_partials_of_its_index_has_no_adjoint():
    # out[i] * out[i] * w[i]: each store takes its element's adjoint from the loss
    # (plan/read_seeds.py) rather than an adjoint array assigned by the loss's reverse
    a, w = RNG.standard_normal(9), RNG.standard_normal(9)
    assert "out" not in assigned(filled_then_summed, a, w)
    assert "out_bar" not in GRAD["filled_then_summed"].inspect_adjoint(a, w)
    check_fd(GRAD["filled_then_summed"], a, w)


def test_not_when_the_sweep_runs_the_loop_again():
    a = RNG.standard_normal(8)
    assert "out" not in assigned(run_again, a)
    check_fd(GRAD["run_again"], a)


def test_not_when_another_loop_reads_it():
    a = RNG.standard_normal(8)
    assert "out" not in assigned(read_twice, a)
    check_fd(GRAD["read_twice"], a)


def test_not_at_another_index():
    a = RNG.standard_normal(8)
    assert "out" not in assigned(other_index, a)
    check_fd(GRAD["other_index"], a)


def test_not_with_a_branch():
    a = RNG.standard_normal(8)
    assert "out" not in assigned(branch_in_loop, a, 0.1)
    check_fd(GRAD["branch_in_loop"], a, 0.1)


def test_store_after_the_loop():
    # The loop of sums reads out[0], stored into again after it: its reverse must not
    # run before the sweep reverses that store (plan/fusion.py), and out's adjoint is not
    # assigned by it.
    a = RNG.standard_normal(8)
    assert "out" not in assigned(store_after, a)
    check_fd(GRAD["store_after"], a)
    check_fd(GRAD["argument_stored_after"], a)


def test_no_zeroing_past_the_trip_count_of_a_loop_over_every_element():
    x, w = RNG.standard_normal(7), RNG.standard_normal(7)
    # (w may be longer than x: its adjoint's tail is still zeroed)
    assert zeroed_tails(GRAD["weighted_dot"].inspect_adjoint(x, w)) == {"w_bar"}
    check_fd(GRAD["weighted_dot"], x, w)
    # one element short of the array: the last element of each adjoint is zeroed
    got = check_fd(GRAD["weighted_dot_but_last"], x, w)
    assert got[0][-1] == 0.0 and got[1][-1] == 0.0
    assert zeroed_tails(GRAD["weighted_dot_but_last"].inspect_adjoint(x, w)) == {"x_bar",
                                                                                "w_bar"}
