"""What the plan recomputes rather than keeps (plan/recompute.py), checked on the plan the
rewrite makes and on the gradient against finite differences.

* A value that does not change within its reversal unit (``-k`` in a time loop,
  numba-stats' ``-T(0.5)`` with ``T = type(z)``) is recomputed by the sweep: no stack.
* A float of one or two operations on loads from arrays nothing writes and loop indices,
  whose history would grow with nested or top-level loops (the Gini coefficient's
  ``y[i] - y[j]``), is recomputed: no stack.
* Not when an operand changes in the loop (a carried value), when the array is written
  through an alias, nor inside a fused loop's short inner loop (a distance's three
  differences keep their stack).
"""
import math
import operator

import numba
import numpy as np
import pytest
from numba import typeof

import numba_adstack as nad
from numba_adstack.ad.capture.pipeline import typed_ir
from numba_adstack.ad.dispatch.rewrite import Options, build_backward

from conftest import backward_of, check_fd


def plan_of(fn, *args):
    typed = typed_ir(fn, tuple(typeof(a) for a in args))
    rw = build_backward(typed, fn, Options(None, "auto"))
    return rw.facts, rw.plan


def stacked_exprs(fn, *args):
    """``(op, fn or None)`` of the definition of every value the plan keeps on a stack
    (``("phi", None)`` for a loop-carried value)."""
    facts, plan = plan_of(fn, *args)
    out = []
    for name in plan.value_stacks:
        name = plan.sites.aliases.get(name, name)
        if name in facts.phis:
            out.append(("phi", None))
            continue
        e = facts.def_expr(name)
        op = getattr(e, "op", type(e).__name__)
        out.append((op, e.fn if op in ("binop", "unary") else None))
    return out


# ------------------------------------------------------------------ loop invariants
def oscillator(x0, k, c, n):
    x = x0
    v = 0.0
    for _ in range(n):
        a = -k * x - c * v          # -k: the same value in every iteration
        v = v + a * 0.01
        x = x + v * 0.01
    return x + v


@numba.njit(inline="always")
def _logpdf1(z):
    T = type(z)                     # numba-stats' spelling of its float constants
    return -T(0.5) * (z * z + T(np.log(2 * np.pi)))


def inplace_logpdf(x, mu, sigma):
    r = (x - mu) / sigma
    for i in range(len(r)):
        r[i] = _logpdf1(r[i]) - np.log(sigma)
    return np.sum(r * r)


def test_invariant_of_a_time_loop_is_recomputed():
    kept = stacked_exprs(oscillator, 1.0, 4.0, 0.3, 50)
    assert ("unary", None) not in [(op, None) for op, _ in kept], kept
    assert all(op == "phi" for op, _ in kept), kept      # x and v only
    check_fd(GRAD['oscillator'], 1.0, 4.0, 0.3, 50)


def test_numba_stats_constant_is_not_kept():
    x = np.random.default_rng(0).normal(1.0, 0.5, 40)
    kept = stacked_exprs(inplace_logpdf, x, 0.9, 0.6)
    # nothing: the loop computes each element from x[i] (plan/map_sums.py) instead of
    # reading the element it overwrites, and np.log(sigma) is not kept per element
    assert kept == [], kept
    check_fd(GRAD['inplace_logpdf'], x, 0.9, 0.6, rtol=1e-5)


def stencil_steps(u0, nu, dt, dx, steps):
    # the advection-diffusion benchmark's scheme: ``nu * dt / dx ** 2`` is the same for
    # every element and every step
    u = u0.copy()
    un = np.empty(u.shape[0])
    for _ in range(steps):
        un[:] = u
        for i in range(1, u.shape[0] - 1):
            u[i] = un[i] + nu * dt / dx ** 2 * (un[i + 1] - 2 * un[i] + un[i - 1])
    return np.sum(u * u)


def test_invariant_with_a_power_is_recomputed():
    u0 = np.sin(np.linspace(0.0, 3.0, 12))
    kept = stacked_exprs(stencil_steps, u0, 0.1, 0.01, 0.1, 5)
    # only the stencil's sum of neighbours, which reads ``un`` (rewritten every step)
    assert [fn for _, fn in kept] == [operator.add], kept
    check_fd(GRAD['stencil_steps'], u0, 0.1, 0.01, 0.1, 5)


# ------------------------------------------------------------------ cheap recompute
def gini_serial(y):
    n = len(y)
    i_sum = np.zeros(n)
    for i in range(n):
        for j in range(n):
            i_sum[i] += abs(y[i] - y[j])
    return np.sum(i_sum) / (2 * n * np.sum(y))


def damped_sines(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - y[i]             # loads from arrays nothing writes
        s = 0.5 * s + math.sin(d)
    return s


def damped_sines_break(x, y, stop):
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - y[i]
        if d > stop:
            break
        s = 0.5 * s + math.sin(d)
    return s


def test_gini_keeps_no_history():
    y = np.random.default_rng(1).lognormal(0.0, 0.8, 9)
    assert stacked_exprs(gini_serial, y) == []
    check_fd(GRAD['gini_serial'], y)


def test_difference_of_loads_in_a_top_level_loop_is_recomputed():
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal(12), rng.standard_normal(12)
    assert stacked_exprs(damped_sines, x, y) == []
    check_fd(GRAD['damped_sines'], x, y)


def test_recompute_in_a_loop_left_by_break():
    x = np.linspace(-1.0, 1.0, 12)
    y = np.zeros(12)
    assert 0.5 < x[-1] and x[5] < 0.5               # leaves at i = 9
    check_fd(GRAD['damped_sines_break'], x, y, 0.5)


# ------------------------------------------------------------------ where it must not apply
def carried_operand(x0, n):
    v = x0
    for _ in range(n):
        w = -v                      # changes every iteration
        v = math.sin(w) * 1.01
    return v


def written_through_alias(x, y):
    view = x[:]
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - y[i]
        s = 0.5 * s + math.sin(d)
        view[i] = 2.0 * d           # x[i] changes after d is computed
    return s + np.sum(x)


def pair_energy(pos):
    e = 0.0
    for i in range(pos.shape[0]):
        for j in range(i + 1, pos.shape[0]):
            s = 0.0
            for k in range(pos.shape[1]):
                d = pos[i, k] - pos[j, k]
                s += d * d
            e += 1.0 / math.sqrt(s)
    return e


def read_after_inner_loop(y):
    s = 0.0
    for i in range(y.shape[0]):
        d = 0.0
        for j in range(i + 1):
            d = y[i] - y[j]
            s = 0.5 * s + math.sin(d)
        s = s * math.cos(d)         # the inner loop's last d, after it
    return s


def test_value_read_after_its_loop():
    # The sweep sets j as it reverses each iteration: after the inner loop it holds
    # another index than the forward's last, so the d read there (the loop's exit phi)
    # is kept; only the reads inside the loop recompute it.
    y = np.random.default_rng(7).standard_normal(6)
    assert stacked_exprs(read_after_inner_loop, y) != []
    check_fd(GRAD["read_after_inner_loop"], y)


def test_carried_operand_keeps_its_stack():
    kept = stacked_exprs(carried_operand, 0.7, 20)
    assert kept, "a value of a carried operand must be kept"
    check_fd(GRAD['carried_operand'], 0.7, 20)


def test_array_written_through_an_alias_keeps_the_difference():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(10), rng.standard_normal(10)
    # d, or the derivative cos(d) the replay keeps in its place (damped_sines, the same
    # loop without the alias, keeps nothing)
    assert stacked_exprs(written_through_alias, x, y) in (
        [("binop", operator.sub)], [("call", None)])
    check_fd(GRAD['written_through_alias'], x, y)


def test_short_inner_loop_of_a_fused_loop_keeps_its_stack():
    pos = np.random.default_rng(4).uniform(0.0, 3.0, (6, 3))
    kept = stacked_exprs(pair_energy, pos)
    assert ("binop", operator.sub) in kept, kept
    check_fd(GRAD['pair_energy'], pos, rtol=1e-5)


@pytest.mark.parametrize("n", [0, 1])
def test_loops_of_no_or_one_iteration(n):
    check_fd(GRAD['oscillator'], 1.0, 4.0, 0.3, n)
    x = np.random.default_rng(5).standard_normal(n)
    check_fd(GRAD['damped_sines'], x, x * 0.5)


# ------------------------------------------------------------------ ensure out of loops
def computed_in_place(x, c):
    r = (x - c) * 2.0               # a computed array, its adjoint written in the loop
    for i in range(len(r)):
        r[i] = -0.5 * r[i] * r[i]
    return np.sum(np.exp(r))


def _loop_lines(source, word):
    """Lines holding ``word`` inside a loop of the backward (indented past its body)."""
    return [ln for ln in source.splitlines() if word in ln and ln.startswith(" " * 8)]


def test_adjoint_array_is_made_before_the_loop():
    f = GRAD["computed_in_place"]
    x = np.random.default_rng(6).standard_normal(15)
    src = f.inspect_adjoint(x, 0.3)
    # (r is filled by the loop from x[i], plan/map_sums.py: its adjoint is made once)
    assert "r_bar = np.zeros_like(r)" in src, src
    assert _loop_lines(src, "ensure(") == [] and _loop_lines(src, "zeros_like(") == [], src
    check_fd(f, x, 0.3)
    check_fd(f, x[:0], 0.3)         # no iteration: the adjoint is zeros, as before


HOIST_CASES = '''
def made_before(a_bar, x, n):
    for i in range(n):
        a_bar = ensure(a_bar, x)
        a_bar[i] += 1.0
    return a_bar

def like_rebound(a_bar, x, n):
    for i in range(n):
        a_bar = ensure(a_bar, x)
        a_bar[i] += 1.0
        x = x * 2.0
    return a_bar

def adjoint_rebound(a_bar, x, n):
    for i in range(n):
        a_bar = ensure(a_bar, x)
        a_bar[i] += 1.0
        a_bar = x
    return a_bar

def like_made_in_loop(a_bar, n):
    for i in range(n):
        y = np.ones(3)
        a_bar = ensure(a_bar, y)
        a_bar[i] += 1.0
    return a_bar
'''


def test_hoist_applies_only_where_nothing_is_rebound():
    import ast
    from numba_adstack.ad.emit.hoist import hoist_ensures
    tree = ast.parse(HOIST_CASES)
    hoisted = {}
    for fn in tree.body:
        hoist_ensures(fn)
        hoisted[fn.name] = isinstance(fn.body[0], ast.Assign)   # the call moved first
    assert hoisted == {"made_before": True, "like_rebound": False,
                       "adjoint_rebound": False, "like_made_in_loop": False}
    # the hoisted one keeps its value: every iteration sees the same array
    from numba_adstack.ad.runtime import ensure
    ns = {"ensure": ensure, "np": np}
    exec(compile(ast.unparse(tree), "<hoisted>", "exec"), ns)
    got = numba.njit(ns["made_before"])(np.empty(0), np.zeros(4), 3)
    np.testing.assert_array_equal(got, [1.0, 1.0, 1.0, 0.0])


GRAD = {f.__name__: nad.grad_jit(f) for f in (
    oscillator, inplace_logpdf, gini_serial, damped_sines, damped_sines_break,
    carried_operand, written_through_alias, pair_energy, computed_in_place,
    read_after_inner_loop, stencil_steps)}


# ------------------------------------------------------------------ parallel replay
def gini_parallel(y):
    n = len(y)
    i_sum = np.zeros(n)
    for i in numba.prange(n):
        for j in range(n):
            i_sum[i] += abs(y[i] - y[j])
    return np.sum(i_sum) / (2 * n * np.sum(y))


def prange_with_history(x, n):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        v = x[i]
        for _ in range(n):
            v = math.sin(v) * 1.01      # pushed: the replay keeps it
        out[i] += v
    return np.sum(out * out)


def _replay_loops(source):
    return [ln for ln in source.splitlines() if "numba.prange(" in ln]


def test_prange_loop_without_history_replays_in_parallel():
    f = PARALLEL["gini_parallel"]
    y = np.random.default_rng(8).lognormal(0.0, 0.8, 11)
    assert len(_replay_loops(f.inspect_adjoint(y))) == 1
    check_fd(f, y)


def test_prange_loop_with_history_replays_serially():
    f = PARALLEL["prange_with_history"]
    x = np.random.default_rng(9).standard_normal(7)
    src = f.inspect_adjoint(x, 4)
    # its iterations push onto one stack (the kept derivative of sin): not in parallel
    assert "push(" in src and _replay_loops(src) == [], src
    check_fd(f, x, 4)


# ------------------------------------------------------------------ element accumulators
def gini_serial_acc(y):
    n = len(y)
    i_sum = np.zeros(n)
    for i in range(n):
        for j in range(n):
            i_sum[i] += abs(y[i] - y[j])
    return np.sum(i_sum * i_sum)


def accumulator_read_twice(y):
    n = len(y)
    i_sum = np.zeros(n)
    for i in range(n):
        for j in range(n):
            i_sum[i] += abs(y[i] - y[j]) * (1.0 + 0.1 * i_sum[i])    # a second read
    return np.sum(i_sum * i_sum)


def accumulator_with_break(y):
    n = len(y)
    i_sum = np.zeros(n)
    for i in range(n):
        for j in range(n):
            if y[j] > 1.5:
                break
            i_sum[i] += math.sin(y[i] - y[j])
    return np.sum(i_sum * i_sum)


def accumulator_not_fresh(y):
    n = len(y)
    i_sum = y.copy()                    # starts from y, not from zeros
    for i in range(n):
        for j in range(n):
            i_sum[i] += math.sin(y[i] - y[j])
    return np.sum(i_sum * i_sum)


def accumulator_set_before(y):
    n = len(y)
    i_sum = np.zeros(n)
    i_sum[0] = 2.0                      # an element that does not start at zero
    for i in range(n):
        for j in range(n):
            i_sum[i] += math.sin(y[i] - y[j])
    return np.sum(i_sum * i_sum)


def _accumulates_in_a_local(fn, *args):
    """Is the outer loop a map loop (reversed an iteration at a time)? Adding into
    ``i_sum[i]`` in memory, it reads an element it writes, which a map loop may not."""
    facts, plan = plan_of(fn, *args)
    return any(lp.depth == 1 for lp in plan.fused)


def test_element_accumulator_is_a_sum():
    y = np.random.default_rng(10).lognormal(0.0, 0.8, 7)
    assert _accumulates_in_a_local(gini_serial_acc, y)
    check_fd(ACC["gini_serial_acc"], y)


@pytest.mark.parametrize("name", ["accumulator_read_twice", "accumulator_with_break",
                                  "accumulator_not_fresh", "accumulator_set_before"])
def test_element_accumulator_left_alone(name):
    y = np.random.default_rng(11).uniform(0.0, 2.0, 6)
    fn = ACC[name]
    assert not _accumulates_in_a_local(fn.py_func, y)
    check_fd(fn, y, rtol=1e-5)


def test_parallel_gini_is_one_parallel_pass():
    # QuantEcon's form: reversed an iteration at a time in a prange loop, with a copy of
    # the adjoint of y per thread, and no serial sweep
    f = PARALLEL["gini_parallel"]
    y = np.random.default_rng(8).lognormal(0.0, 0.8, 11)
    assert backward_of(f, y).parallel
    src = f.inspect_adjoint(y)
    assert "pop(" not in src and "get_thread_id" in src, src
    check_fd(f, y)


ACC = {f.__name__: nad.grad_jit(f) for f in (
    gini_serial_acc, accumulator_read_twice, accumulator_with_break, accumulator_not_fresh,
    accumulator_set_before)}


PARALLEL = {f.__name__: nad.grad_jit(f, parallel=True)
            for f in (gini_parallel, prange_with_history)}


def accumulator_other_length(y, m):
    n = len(y)
    i_sum = np.zeros(n)
    for i in range(m):                  # another count than the array's length
        for j in range(n):
            i_sum[i] += math.sin(y[i] - y[j])
    return np.sum(i_sum * i_sum)


def test_element_accumulator_needs_the_arrays_own_length():
    y = np.random.default_rng(12).uniform(0.0, 2.0, 6)
    assert not _accumulates_in_a_local(accumulator_other_length, y, 4)
    check_fd(nad.grad_jit(accumulator_other_length), y, 4)
