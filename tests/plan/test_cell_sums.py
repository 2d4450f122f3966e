"""Adjoint cells summed in a local (plan/cell_sums.py): the reverse of an element read at an
index a loop does not change (the Gini coefficient's ``y[i]`` in its loop over ``j``) adds
into a local, and the local into the cell after the loop.

Checked on the plan and the generated source (no add into ``y_bar[i]`` per iteration), and
on every program on the gradient against central finite differences of the pure-Python
function: where it applies (``y_bar[j]`` is ``y_bar[i]`` when ``j == i``, a view of the
same array, a constant index, a loop left by ``break``, a read under a branch that never
runs, serial and ``prange`` outer loops) and where it must not (the index changes in the
loop, the element is written in the loop, the array is written through a view in it).
Compiled functions are made once per module.
"""
import numba
import numpy as np
from numba import typeof

import numba_adstack as nad
from numba_adstack.ad.capture.pipeline import typed_ir
from numba_adstack.ad.dispatch.rewrite import Options, build_backward

from conftest import check_fd

RNG = np.random.default_rng(24)


def plan_of(fn, *args):
    typed = typed_ir(fn, tuple(typeof(a) for a in args))
    rw = build_backward(typed, fn, Options(None, "auto"))
    return rw.facts, rw.plan


def summed_reads(fn, *args):
    """``{source line of the read: depth of the loop its adjoint is summed over}``."""
    facts, plan = plan_of(fn, *args)
    return {facts.def_loc(name).line - fn.__code__.co_firstlineno:
            (None if lp is None else lp.depth) for name, lp in plan.cell_sums.items()}


# ------------------------------------------------------------------ where it applies
def gini(y):
    n = len(y)
    i_sum = np.zeros(n)
    for i in numba.prange(n):
        for j in range(n):
            i_sum[i] += abs(y[i] - y[j])
    return np.sum(i_sum) / (2 * n * np.sum(y))


def pair_products(x, w):
    # x[i] in the inner loop, x[j] beside it (the same cell when j == i); a serial loop
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            s += x[i] * x[j] * w[j] + np.sin(x[i])
    return s


def through_view(x):
    v = x[1:]                       # v[j] is x[j + 1]: the cell x[i] when j == i - 1
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(v.shape[0]):
            s += x[i] * v[j] * v[j]
    return s


def constant_index(x, n):
    s = 0.0
    for k in range(n):
        for j in range(x.shape[0]):
            s += x[0] * x[j] + x[1] * k
    return s


def left_by_break(x, stop):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            if x[j] > stop:
                break
            s += x[i] * x[j]
    return s


def never_read(x, far):
    # x[far] is out of bounds, and the branch that reads it never runs
    s = 0.0
    for j in range(x.shape[0]):
        if j > 1000:
            s += x[far]
        s += x[j] * x[j]
    return s


def while_loop(x, c):
    s = 0.0
    for i in range(x.shape[0]):
        t = 1.0
        while t < c:
            t = t * 1.5 + x[i] * x[i]
            s += t
    return s


def computed_array(x):
    t = np.sin(x) * 2.0             # an array the function computes: its adjoint is made
    s = 0.0
    for i in range(t.shape[0]):
        for j in range(x.shape[0]):
            s += t[i] * x[j] * t[j]
    return s


def row_view(a):
    s = 0.0
    for i in range(a.shape[0]):
        row = a[i]                  # a view of a, made outside the inner loop
        for j in range(a.shape[0]):
            s += row[0] * a[j, 1] * row[1]
    return s


# ------------------------------------------------------------------ where it must not
def varying_index(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            k = (i + j) % x.shape[0]   # changes with j
            s += x[k] * x[j]
    return s


def written_in_loop(x, w):
    t = x.copy()
    s = 0.0
    for i in range(t.shape[0]):
        for j in range(w.shape[0]):
            s += t[i] * w[j]
            t[i] = t[i] * 0.5 + w[j]
    return s


def written_through_view(x, w):
    t = x.copy()
    v = t[1:]
    s = 0.0
    for i in range(t.shape[0]):
        for j in range(v.shape[0]):
            s += t[i] * w[j]
            v[j] = v[j] * 0.5 + w[j]    # t[i] itself when j == i - 1
    return s


GRAD = {f.__name__: nad.grad_jit(f) for f in (
    pair_products, through_view, constant_index, left_by_break, never_read, while_loop,
    computed_array, row_view, varying_index, written_in_loop, written_through_view)}
GRAD["gini"] = nad.grad_jit(gini, parallel=True)
GRAD["gini_serial"] = nad.grad_jit(gini)


def test_gini_sums_the_cell_of_y_i_in_a_local():
    y = RNG.lognormal(0.0, 0.8, 11)
    assert summed_reads(gini, y) == {5: 2}     # y[i], over the loop over j
    src = GRAD["gini"].inspect_adjoint(y)
    # no add into y_bar[i] per pair: one after the loop, from the local
    adds = [ln.strip() for ln in src.splitlines() if ln.strip().startswith("y_bar[i] +=")]
    assert adds and all("_acc_y_bar" in a for a in adds), src
    check_fd(GRAD["gini"], y)
    check_fd(GRAD["gini_serial"], y)


def test_cell_shared_with_the_varying_read():
    x, w = RNG.standard_normal(7), RNG.standard_normal(7)
    assert summed_reads(pair_products, x, w) == {5: 2}
    check_fd(GRAD["pair_products"], x, w)


def test_cell_shared_through_a_view():
    x = RNG.standard_normal(8)
    assert summed_reads(through_view, x) == {5: 2}
    check_fd(GRAD["through_view"], x)


def test_constant_index_sums_over_both_loops():
    x = RNG.standard_normal(6)
    assert summed_reads(constant_index, x, 4) == {4: 1}
    check_fd(GRAD["constant_index"], x, 4)


def test_loop_left_by_break():
    x = np.linspace(-1.0, 1.0, 9)
    assert summed_reads(left_by_break, x, 0.4) == {6: 2}
    check_fd(GRAD["left_by_break"], x, 0.4)
    check_fd(GRAD["left_by_break"], x, -2.0)       # every inner loop ends at once


def test_read_that_never_runs_adds_nothing():
    x = RNG.standard_normal(9)
    assert summed_reads(never_read, x, 10 ** 9) == {5: 1}
    check_fd(GRAD["never_read"], x, 10 ** 9)


def test_while_loop():
    x = RNG.uniform(0.1, 0.5, 5)
    assert summed_reads(while_loop, x, 20.0) == {5: 2}
    check_fd(GRAD["while_loop"], x, 20.0)


def test_computed_array():
    x = RNG.standard_normal(6)
    assert summed_reads(computed_array, x) == {5: 2}
    check_fd(GRAD["computed_array"], x)


def test_row_view_made_outside_the_loop():
    a = RNG.standard_normal((5, 3))
    assert summed_reads(row_view, a) == {5: 2}
    check_fd(GRAD["row_view"], a)


def test_not_when_the_index_changes_in_the_loop():
    x = RNG.standard_normal(6)
    assert summed_reads(varying_index, x) == {}
    check_fd(GRAD["varying_index"], x)


def test_not_when_the_element_is_written_in_the_loop():
    x, w = RNG.standard_normal(5), RNG.standard_normal(4)
    assert summed_reads(written_in_loop, x, w) == {}
    check_fd(GRAD["written_in_loop"], x, w)


def test_not_when_the_array_is_written_through_a_view_in_the_loop():
    x, w = RNG.standard_normal(5), RNG.standard_normal(4)
    assert summed_reads(written_through_view, x, w) == {}
    check_fd(GRAD["written_through_view"], x, w)
