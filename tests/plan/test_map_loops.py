"""Map loops: iterations that write only their own elements keep no history.

A loop whose outputs' adjoint is known before it runs (``w * out.sum()`` after it) is
reversed in the replay, iteration by iteration; otherwise the sweep runs it again and
reverses each iteration right after it. Either way the backward keeps no stack for it.
"""
import math

import numba
import numpy as np
import pytest

import numba_adstack as nad
from conftest import backward_of, check_fd, fd_grad


@nad.grad_jit
def priced(s, k, vol):
    n = s.shape[0]
    call = np.empty(n)
    put = np.empty(n)
    for i in range(n):
        d = (math.log(s[i] / k[i]) + 0.5 * vol * vol) / vol
        call[i] = s[i] * math.erf(d) - k[i] * math.exp(-d * d)
        put[i] = k[i] * (1.0 - math.tanh(d)) + s[i]
    return 2.0 * call.sum() - np.sum(put) / 3.0


@numba.njit
def _pair(s, k, vol):
    n = s.shape[0]
    a = np.empty(n)
    b = np.zeros(n)
    for i in range(n):
        t = math.sin(s[i] * vol) + k[i]
        a[i] = t * t
        b[i] = math.cos(t)
    return a, b


@nad.grad_jit
def priced_tuple(s, k, vol):
    a, b = _pair(s, k, vol)
    return 0.5 * a.sum() + b.sum()


@nad.grad_jit
def nonlinear_use(s, k, vol):
    n = s.shape[0]
    out = np.empty(n)
    for i in range(n):
        out[i] = math.exp(-vol * s[i]) * k[i]
    total = 0.0
    for i in range(n):
        total += out[i] * out[(i + 1) % n]
    return total


@nad.grad_jit
def written_after(s, k, vol):
    n = s.shape[0]
    out = np.empty(n)
    for i in range(n):
        out[i] = math.sin(s[i]) * vol
    out *= k
    return out.sum()


@nad.grad_jit
def reads_what_is_written_later(s, k, vol):
    n = s.shape[0]
    x = s.copy()
    out = np.empty(n)
    for i in range(n):
        out[i] = math.sin(x[i]) * vol
    for i in range(n):
        x[i] = out[i] * k[i]
    return np.sum(x) + np.sum(out * out)


@nad.grad_jit
def into_given_array(s, k, vol, out):
    for i in range(s.shape[0]):
        out[i, 0] = math.sqrt(s[i]) * vol
        out[i, 1] = k[i] * vol
    return np.sum(out * out)


@nad.grad_jit
def stored_twice(s, k, vol):
    n = s.shape[0]
    out = np.empty(n)
    for i in range(n):
        out[i] = s[i] * vol
        out[i] = math.sin(k[i] * vol)       # the first value is lost
    return out.sum()


@nad.grad_jit
def counter_carried(s, k, vol):
    n = s.shape[0]
    out = np.empty(n)
    c = 0
    for i in range(n):
        out[i] = s[i] * vol * c + k[i]
        c += 1
    return np.sum(out * out)


# Map loops below the top level, and loops inside map loops.
@nad.grad_jit
def grid_nonlinear(s, k, vol):
    n, m = s.shape[0], k.shape[0] - 2
    out = np.empty((m, n))
    for i in range(n):
        si = math.sin(s[i] * vol)
        for j in range(m):
            out[j, i] = si * math.exp(-k[j] * vol / 100.0)   # own column of i, row of j
    total = 0.0
    for i in range(n):
        for j in range(m):
            total += out[j, i] * out[j, i]
    return total


@nad.grad_jit
def row_sums(s, k, vol):
    # The atoms loop fills one energy per atom; the pairs loop inside it only sums.
    n = s.shape[0]
    e = np.empty(n)
    for i in range(n):
        acc = 0.0
        for j in range(n):
            if j != i:
                d = (s[i] - s[j]) / 10.0
                acc += math.exp(-vol * d * d) * k[j]
        e[i] = acc
    return 0.5 * e.sum()


@nad.grad_jit
def rows_then_squares(s, k, vol):
    # A map loop over rows whose iteration runs another map loop over columns.
    n, m = s.shape[0], 3
    out = np.empty((n, m))
    for i in range(n):
        base = math.log(s[i]) * vol
        for j in range(m):
            out[i, j] = base * k[j] + math.cos(base + j)
    return np.sum(out * out)


@nad.grad_jit
def norm_of_sum(s, k, vol):
    # A loop of sums whose adjoint is known only after it (the square root).
    acc = 0.0
    for i in range(s.shape[0]):
        acc += math.sin(vol * s[i]) ** 2 * k[i]
    return math.sqrt(acc) * vol


@nad.grad_jit
def inside_time_loop(s, k, vol):
    # A map loop inside a loop that carries a value: the sweep gets back what the map
    # loop reads from the time step (c, t) and runs it again; it keeps no history.
    n = s.shape[0]
    out = np.empty(n)
    total = 0.0
    for t in range(3):
        c = vol * (t + 1.0) + total * 1e-4
        for i in range(n):
            out[i] = math.sin(c * s[i] / 100.0) * k[i] * t
        for i in range(n):
            total += out[i] * out[i]
        total += np.sum(out * out) * c
    return total


@nad.grad_jit
def paths_squared(s, k, vol):
    # A map loop run again by the sweep, holding a loop that carries a value: the replay
    # keeps nothing of it; the sweep keeps one path's history at a time.
    n = s.shape[0]
    out = np.empty(n)
    for i in range(n):
        v = s[i] / 100.0
        for _ in range(4):
            v = math.sin(v) * (vol + k[i % 2] / 100.0)
        out[i] = v
    return np.sum(out * out)


@nad.grad_jit
def grid_then_overwrite(s, k, vol):
    # The outer iteration stores over an element its inner loop stored: the inner loop
    # is no map loop, and keeps the history of one row on a stack.
    n, m = s.shape[0], 3
    out = np.empty((n, m + 1))
    for i in range(n):
        si = math.sin(s[i] * vol)
        for j in range(m + 1):
            out[i, j] = si * math.exp(-k[j] * vol / 100.0)
        out[i, m] = si * k[i] / 100.0
    return np.sum(out * out)


@nad.grad_jit
def tuple_per_step(s, k, vol):
    # The map loop reads a tuple the time step builds, which the sweep cannot get back:
    # it is reversed from stacks instead.
    n = s.shape[0]
    out = np.empty(n)
    total = 0.0
    for t in range(3):
        pair = (vol * (t + 1.0), t * 0.5 + total * 1e-4)
        for i in range(n):
            out[i] = math.sin(pair[0] * s[i] / 100.0) * k[i] + pair[1]
        total += np.sum(out * out)
    return total


FUNCS = [priced, priced_tuple, nonlinear_use, written_after, reads_what_is_written_later,
         stored_twice, counter_carried, grid_nonlinear, row_sums, rows_then_squares,
         norm_of_sum, inside_time_loop, paths_squared, tuple_per_step,
         grid_then_overwrite]
NO_HISTORY = [priced, priced_tuple, nonlinear_use, counter_carried, grid_nonlinear,
              row_sums, rows_then_squares, norm_of_sum]
RNG = np.random.default_rng(7)
S = RNG.uniform(80.0, 120.0, 6)
K = RNG.uniform(90.0, 110.0, 6)


@pytest.mark.parametrize("f", FUNCS, ids=lambda f: f.py_func.__name__)
def test_gradient_matches_finite_differences(f):
    args = (S, K, 0.3)
    assert f.value_and_grad(*args)[0] == pytest.approx(f.py_func(*args), rel=1e-12)
    check_fd(f, *args, rtol=1e-5, atol=1e-6)


def test_given_output_array():
    out = np.zeros((6, 2))
    grads = into_given_array.grad(S, K, 0.3, out.copy())
    want = fd_grad(into_given_array.py_func, (S, K, 0.3, out))
    for i in range(3):
        np.testing.assert_allclose(grads[i], want[i], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", NO_HISTORY, ids=lambda f: f.py_func.__name__)
def test_map_loops_keep_no_history(f):
    assert "adstack(" not in f.inspect_adjoint(S, K, 0.3)


def test_outputs_summed_after_the_loop_are_not_run_again():
    # One forward pass over the options: the loop appears once in the backward.
    src = priced.inspect_adjoint(S, K, 0.3)
    assert src.count("math.erf(") == 1
    # The elements got their adjoints before the loop: no adjoint array for the outputs
    # (nor a copy of them) after it.
    for f in (priced, priced_tuple):
        src = f.inspect_adjoint(S, K, 0.3)
        assert "zeros_like" not in src.replace("np.zeros_like(s)", "").replace(
            "np.zeros_like(k)", "") and ".copy()" not in src, src
    src = nonlinear_use.inspect_adjoint(S, K, 0.3)
    assert src.count("math.exp(") >= 2        # run again by the sweep


def test_nested_map_loops_run_once_or_again_as_their_outputs_need():
    # Summed energies: the atoms loop is reversed in the replay, one pass.
    assert row_sums.inspect_adjoint(S, K, 0.3).count("math.exp(") == 1
    # Squared outputs: the sweep runs the outer loop again, and the inner loop's
    # iterations are reversed as they run there.
    assert grid_nonlinear.inspect_adjoint(S, K, 0.3).count("math.exp(") == 2
    src = grid_then_overwrite.inspect_adjoint(S, K, 0.3)
    assert src.count("math.exp(") == 2 and "adstack(" in src
    # An element stored twice in one iteration: its seed would go to both values, so
    # the loop is run again by the sweep instead; a top-level loop, whose stores the
    # replay made already: the sweep leaves them out, and the sine with them.
    src = stored_twice.inspect_adjoint(S, K, 0.3)
    assert src.count("math.sin(") == 1 and src.count("math.cos(") == 1
    check_fd(stored_twice, S, K, 0.3)
    # Inside a time loop: run again by the sweep at each step, not reversed from stacks.
    assert inside_time_loop.inspect_adjoint(S, K, 0.3).count("math.sin(") == 2
    assert tuple_per_step.inspect_adjoint(S, K, 0.3).count("math.sin(") == 1


# With parallel=True, prange map loops run in parallel in the backward too: reversed in
# the replay (element seeds), or run again in parallel by the sweep.
def _priced_prange(s, k, vol):
    n = s.shape[0]
    call = np.empty(n)
    put = np.empty(n)
    for i in numba.prange(n):
        d = (math.log(s[i] / k[i]) + 0.5 * vol * vol) / vol
        call[i] = s[i] * math.erf(d) - k[i] * math.exp(-d * d)
        put[i] = k[i] * (1.0 - math.tanh(d)) + s[i] * k[i % 3]   # k[i % 3]: shared
    return 2.0 * call.sum() - np.sum(put) / 3.0


def _squared_prange(s, k, vol):
    n = s.shape[0]
    out = np.empty(n)
    for i in numba.prange(n):
        out[i] = math.exp(-vol * s[i] / 100.0) * k[i]
    total = 0.0
    for i in range(n):
        total += out[i] * out[(i + 1) % n]
    return total


def _norm_prange(s, k, vol):
    acc = 0.0
    for i in numba.prange(s.shape[0]):
        acc += math.sin(vol * s[i]) ** 2 * k[i]
    return math.sqrt(acc) * vol


def _row_sums_prange(s, k, vol):
    n = s.shape[0]
    e = np.empty(n)
    for i in numba.prange(n):
        acc = 0.0
        for j in range(n):
            d = (s[i] - s[j]) / 10.0
            acc += math.exp(-vol * d * d) * k[j]
        e[i] = acc
    return 0.5 * e.sum()


def _grid_prange(s, k, vol):
    # Run again by the sweep in parallel, reversing the inner map loop as it runs.
    n, m = s.shape[0], 3
    out = np.empty((n, m))
    for i in numba.prange(n):
        si = math.sin(s[i] * vol)
        for j in range(m):
            out[i, j] = si * math.exp(-k[j] * vol / 100.0)
    return np.sum(out * out)


PRANGE = [(nad.grad_jit(parallel=True)(f), nad.grad_jit(f))
          for f in (_priced_prange, _squared_prange, _norm_prange, _row_sums_prange,
                    _grid_prange)]


@pytest.mark.parametrize("pair", PRANGE, ids=lambda p: p[0].py_func.__name__)
def test_parallel_map_loops(pair):
    parallel, serial = pair
    args = (S, K, 0.3)
    assert backward_of(parallel, *args).parallel and not backward_of(serial, *args).parallel
    assert "adstack(" not in parallel.inspect_adjoint(*args)
    got = check_fd(parallel, *args, rtol=1e-5, atol=1e-6)
    for g, want in zip(got, serial.grad(*args)):
        np.testing.assert_allclose(g, want, rtol=1e-12)


def test_a_loop_run_again_keeps_nothing_in_the_replay():
    src = paths_squared.inspect_adjoint(S, K, 0.3)
    assert src.count("math.sin(") == 2
    assert src.count("push(") == src.count("pop(") > 0      # every push is popped


# Element seeds across two loops (plan/read_seeds.py): an array filled before a fused loop
# of sums that reads its elements only at its index, into the sums (linearly or not,
# once or more), gets each store's adjoint from that loop's seed and partials evaluated
# at the store's index; no adjoint array is made for it.
@numba.njit
def _running_mean(x, window):
    n = x.shape[0]
    avg = np.empty(n - window + 1)
    s = 0.0
    for i in range(window):
        s += x[i]
    avg[0] = s / window
    for i in range(window, n):
        s += x[i] - x[i - window]
        avg[i - window + 1] = s / window
    return avg


@nad.grad_jit
def weighted_running_mean(x, w, window):
    avg = _running_mean(x, window)
    total = 0.0
    for i in range(avg.shape[0]):
        total += w[i] * avg[i]
    return total


@nad.grad_jit
def scaled_quotients(x, w, c):
    # Filled by a map loop whose outputs are read, not summed: its stores are seeded by
    # the later loop (negated, divided by an argument array's element, times 2c).
    n = x.shape[0]
    a = np.empty(n)
    for i in range(n):
        a[i] = math.sin(c * x[i]) + x[i] * x[i]
    total = 1.0
    for i in range(len(a)):
        total -= (2.0 * c) * (a[i] / (1.0 + w[i] * w[i]))
    return total * 3.0


@nad.grad_jit
def read_squared(x, w, window):
    avg = _running_mean(x, window)
    total = 0.0
    for i in range(avg.shape[0]):
        total += w[i] * avg[i] * avg[i]
    return total


@nad.grad_jit
def read_twice(x, w, window):
    avg = _running_mean(x, window)
    total = 0.0
    for i in range(avg.shape[0]):
        total += w[i] * avg[i] + avg[i]
    return total


@nad.grad_jit
def written_twice(x, w, window):
    n = x.shape[0]
    avg = np.empty(n - window + 1)
    avg[1] = x[0] * x[1]
    for i in range(window - 1, n):
        avg[i - window + 1] = x[i] * x[i - 1]     # overwrites avg[1]
    total = 0.0
    for i in range(avg.shape[0]):
        total += w[i] * avg[i]
    return total


@nad.grad_jit
def read_under_a_branch(x, w, window):
    avg = _running_mean(x, window)
    total = 0.0
    for i in range(avg.shape[0]):
        if w[i] > 0.5:
            total += avg[i]
    return total


@nad.grad_jit
def factor_at_another_index(x, w, window):
    avg = _running_mean(x, window)
    total = 0.0
    for i in range(avg.shape[0]):
        total += w[avg.shape[0] - 1 - i] * avg[i]
    return total


@nad.grad_jit
def part_read(x, w, window):
    avg = _running_mean(x, window)
    total = 0.0
    for i in range(avg.shape[0] - 1):
        total += w[i] * avg[i]
    return total


READ_SEEDED = [weighted_running_mean, scaled_quotients, read_squared, read_twice]
NOT_READ_SEEDED = [written_twice, read_under_a_branch, factor_at_another_index, part_read]
XS = RNG.standard_normal(12)
WS = RNG.uniform(0.0, 1.0, 12)


@pytest.mark.parametrize("f", READ_SEEDED + NOT_READ_SEEDED, ids=lambda f: f.py_func.__name__)
def test_arrays_read_by_a_later_loop_match_finite_differences(f):
    args = (XS, WS, 3) if f is not scaled_quotients else (XS, WS, 0.7)
    assert f.value_and_grad(*args)[0] == pytest.approx(f.py_func(*args), rel=1e-12)
    check_fd(f, *args, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", READ_SEEDED + NOT_READ_SEEDED, ids=lambda f: f.py_func.__name__)
def test_stores_take_the_reading_loops_seed_only_where_it_holds(f):
    args = (XS, WS, 3) if f is not scaled_quotients else (XS, WS, 0.7)
    src = f.inspect_adjoint(*args)
    array = "a_bar" if f is scaled_quotients else "avg_bar"
    assert (array not in src) == (f in READ_SEEDED), src


# An argument array read only at the index of one loop without branches, and nowhere
# else, gets its adjoint assigned element by element (plan/assigned.py): np.empty_like,
# the elements past the loop's range zeroed, no pass that zeroes it all first.
@nad.grad_jit
def weights_read_twice(x, w, window):
    avg = _running_mean(x, window)
    total = 0.0
    for i in range(avg.shape[0]):
        total += w[i] * avg[i] + w[i] * w[i]
    return total


@nad.grad_jit
def weights_in_two_loops(x, w, window):
    avg = _running_mean(x, window)
    total = 0.0
    for i in range(avg.shape[0]):
        total += w[i] * avg[i]
    for i in range(3):
        total += w[i]
    return total


ASSIGNED = [weighted_running_mean, part_read, read_twice, read_squared, written_twice,
            weights_read_twice, scaled_quotients]
NOT_ASSIGNED = [weights_in_two_loops, read_under_a_branch, factor_at_another_index]


@pytest.mark.parametrize("f", ASSIGNED + NOT_ASSIGNED, ids=lambda f: f.py_func.__name__)
def test_argument_adjoints_assigned_only_where_one_loop_reaches_each_element(f):
    args = (XS, WS, 3) if f is not scaled_quotients else (XS, WS, 0.7)
    if f in (weights_read_twice, weights_in_two_loops):
        check_fd(f, *args, rtol=1e-5, atol=1e-6)
    src = f.inspect_adjoint(*args)
    assert ("w_bar = np.empty_like(w)" in src) == (f in ASSIGNED), src
    # x is read by the two loops of the running sum: the second, reversed first by the
    # sweep, assigns the elements it reaches at its lower offset (plan/sweep_assigned.py;
    # written_twice reads x outside them too, by constant indices); the map loop of
    # scaled_quotients reads it three times, at its index, and nothing else does.
    assert ("x_bar = np.empty_like(x)" in src) == (f is not written_twice), src
    assert ("x_bar[max(" in src) == (f not in (written_twice, scaled_quotients)), src
