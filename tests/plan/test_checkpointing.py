"""Checkpointed time loops (plan/checkpoint.py, emit/checkpoint.py): the gradient with a
binomial schedule equals the gradient keeping the whole history, and finite differences."""
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack.ad.plan import checkpoint_schedule as CS
from conftest import assert_grads_close, backward_of, fd_grad


def stepper(x, n):
    """Scalar state, a branch and a nested loop in each step."""
    v = x[0]
    w = x[1]
    for t in range(n):
        if v > 0.5:
            v = np.sin(v) * 1.01 + w
        else:
            v = v * v + 0.3
        for j in range(2):
            w = w * 0.9 + 0.05 * v
    return v + w


def heat(u0, k, n):
    """Array state written in place: a copy made before the loop."""
    u = u0.copy()
    for t in range(n):
        lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u[1:-1] = u[1:-1] + k * lap
    return np.sum(u * u)


def logistic(u0, k, n):
    """Array state rebound each step (a phi of arrays)."""
    u = u0 * 1.0
    for t in range(n):
        u = u + k * np.roll(u, 1) - k * u * u
    return np.sum(u * u)


def inner_loops(x, n):
    """Loops of each kind inside the checkpointed loop: a map loop (run again by the
    sweep), a loop of sums (reversed an iteration at a time) and a ``while`` loop."""
    u = x.copy()
    e = 0.0
    for t in range(n):
        un = np.empty_like(u)
        for i in range(u.shape[0]):
            un[i] = np.sin(u[i]) * 0.9 + 0.1 * u[i - 1]
        s = 0.0
        for i in range(un.shape[0]):
            s += un[i] * un[i]
        e = e * 0.5 + s
        k = 0
        while k < 2:
            e = e * 1.01
            k += 1
        u = un + 0.0
    return e + np.sum(u)


FUNCS = {"stepper": stepper, "heat": heat, "logistic": logistic,
         "inner_loops": inner_loops}
_compiled = {}


def compiled(name, **options):
    key = (name, tuple(sorted(options.items())))
    if key not in _compiled:
        _compiled[key] = nad.grad_jit(**options)(FUNCS[name])
    return _compiled[key]


def args_of(name, n):
    x = np.linspace(0.1, 0.9, 8)
    if name == "stepper":
        return (np.array([0.7, 0.2]), n)
    if name == "inner_loops":
        return (x[:5], n)
    return (x, 0.05, n)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_revolve_equals_full_history(name):
    full = compiled(name, checkpoint="off")
    ck = compiled(name, checkpoint="revolve", snapshots=3)
    for n in (0, 1, 10, 17, 50):
        args = args_of(name, n)
        want = full.grad(*args)
        got = ck.grad(*args)
        for g, w in zip(got, want):
            if w is None:
                assert g is None
            else:
                assert np.array_equal(g, w), (name, n, g, w)     # to the last bit
        assert ck(*args) == full(*args)
    args = args_of(name, 17)
    assert_grads_close(ck.grad(*args), fd_grad(ck.py_func, args), args, rtol=1e-5,
                       atol=1e-8)


def test_two_snapshots():
    full = compiled("stepper", checkpoint="off")
    ck = compiled("stepper", checkpoint="revolve", snapshots=2)
    for n in (3, 30):
        args = args_of("stepper", n)
        assert np.array_equal(ck.grad(*args)[0], full.grad(*args)[0])
    assert backward_of(ck, *args).checkpoint_note and not backward_of(full, *args).checkpoint_note


def test_budget_checkpoints_automatically():
    # 8 cells, 50 steps: the history (one state of 64 bytes a step, the stencil's
    # primitive keeping its operand) is 3.6 kB, past a budget of 2 kB; two snapshots of
    # the state fit.
    auto = compiled("heat", memory_budget=2048)
    full = compiled("heat", checkpoint="off")
    args = args_of("heat", 50)
    got = auto.grad(*args)
    want = full.grad(*args)
    for g, w in zip(got, want):
        assert (g is None and w is None) or np.array_equal(g, w)
    bw = auto._backward(list(args))
    assert bw._checkpointed is not None        # the guard asked for the checkpointed one
    assert "checkpointed past" in auto.inspect_adjoint(*args)
    # A call whose history fits keeps it: the same backward, no checkpointing.
    small = args_of("heat", 2)
    assert np.array_equal(auto.grad(*small)[0], full.grad(*small)[0])


def test_snapshots_past_the_budget_raise():
    tiny = compiled("heat", memory_budget=100)
    with pytest.raises(MemoryError, match="snapshots of the loop's state do not fit"):
        tiny.grad(*args_of("heat", 50))


@pytest.mark.parametrize("n,c", [(1, 1), (7, 1), (10, 2), (50, 3), (1000, 4), (1000, 12)])
def test_schedule_reverses_every_step_once(n, c):
    acts = CS.schedule(n, 1, c)
    pos, slots, taped, reversed_ = 0, {}, None, []
    for op, f, e, s in acts:
        assert s < c
        if op == CS.STORE:
            assert pos == f
            slots[s] = f
        elif op == CS.RESTORE:
            assert slots[s] == f
            pos = f
        elif op in (CS.ADVANCE, CS.TAPE):
            assert pos == f
            pos = e
            taped = (f, e) if op == CS.TAPE else None
        else:
            assert taped == (f, e)
            reversed_.append((f, e))
            pos = None
    assert [e for _, e in reversed_] == list(range(n, 0, -1))
    # Griewank's bound: with c snapshots, r repetitions cover C(c + r, c) steps.
    r = 0
    while CS._beta(c, r) < n:
        r += 1
    assert CS.forward_steps(acts) <= (r + 1) * n


def test_options_are_checked():
    with pytest.raises(ValueError, match="checkpoint must be"):
        nad.grad_jit(checkpoint="yes")
    with pytest.raises(ValueError, match="snapshots must be a positive integer"):
        nad.grad_jit(checkpoint="revolve", snapshots=0)
    with pytest.raises(ValueError, match="memory_budget must be a positive integer"):
        nad.grad_jit(memory_budget=-5)


# ---------------------------------------------------------------- unknown trip counts
def converge(x, tol):
    """A while loop left by a convergence test (its trip count depends on the data)."""
    v = x[0]
    w = x[1]
    k = 0
    while abs(v - w) > tol:
        v = np.sin(v) * 0.9 + 0.1 * w
        if v > 0.5:
            w = w * 0.8 + 0.05
        else:
            w = w * 0.9 + 0.02 * v
        k += 1
    return v * w + k


def until_break(x, n):
    """A range loop left by ``break``: two exits."""
    v = x[0]
    s = 0.0
    for t in range(n):
        v = np.cos(v) * 1.1 + 0.01 * t
        s += v * v
        if s > x[1]:
            break
    return s + v


def diffuse_until(u0, k, tol):
    """A while loop over array state written in place, a nested loop in each step."""
    u = u0.copy()
    r = 1.0
    while r > tol:
        r = 0.0
        for i in range(1, u.shape[0] - 1):
            d = k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
            u[i] = u[i] + d
            r += d * d
    return np.sum(u * u)


FUNCS.update({"converge": converge, "until_break": until_break,
              "diffuse_until": diffuse_until})
ONLINE_ARGS = {
    "converge": [(np.array([0.9, 0.3]), t) for t in (1.0, 0.3, 1e-3, 1e-9)],
    "until_break": [(np.array([0.4, s]), n) for n, s in ((0, 5.0), (3, 5.0), (50, 5.0),
                                                          (500, 50.0), (500, 1e9))],
    "diffuse_until": [(np.linspace(0.0, 1.0, 6) ** 2, 0.2, t) for t in (1.0, 1e-4, 1e-9)],
}


@pytest.mark.parametrize("name", sorted(ONLINE_ARGS))
@pytest.mark.parametrize("c", [2, 3, 6])
def test_online_equals_full_history(name, c):
    full = compiled(name, checkpoint="off")
    ck = compiled(name, checkpoint="revolve", snapshots=c)
    for args in ONLINE_ARGS[name]:
        want = full.grad(*args)
        got = ck.grad(*args)
        for g, w in zip(got, want):
            if w is None:
                assert g is None
            else:
                assert np.array_equal(g, w), (name, args, g, w)     # to the last bit
        assert ck(*args) == full(*args)
    assert "online schedule" in ck.inspect_adjoint(*args)
    if c == 3:
        args = ONLINE_ARGS[name][-2]
        assert_grads_close(ck.grad(*args), fd_grad(ck.py_func, args), args, rtol=1e-5,
                           atol=1e-7)


def test_online_budget_checkpoints_automatically():
    auto = compiled("until_break", memory_budget=2048)
    full = compiled("until_break", checkpoint="off")
    args = (np.array([0.4, 1e9]), 2000)          # 2000 iterations keep ~32 kB
    assert np.array_equal(auto.grad(*args)[0], full.grad(*args)[0])
    assert auto._backward(list(args))._checkpointed is not None
    small = (np.array([0.4, 1e9]), 5)
    assert np.array_equal(auto.grad(*small)[0], full.grad(*small)[0])


def test_jitted_caller_checkpoints_past_the_budget():
    # A jitted caller cannot make the call again when the guard fires: it links the
    # checkpointed backward, whose segments are as long as the budget allows.
    from numba import njit
    auto = nad.grad_jit(memory_budget=2048)(heat)
    wauto = nad.grad_jit(memory_budget=2048)(until_break)
    full, wfull = compiled("heat", checkpoint="off"), compiled("until_break", checkpoint="off")

    @njit
    def both(u0, k, n, x, m):
        return auto.grad(u0, k, n)[0], wauto.grad(x, m)[0]

    for n, m in ((3, 5), (300, 2000)):     # fits; past the budget (a for and a while loop)
        hargs, wargs = args_of("heat", n), (np.array([0.4, 1e9]), m)
        gh, gw = both(*hargs, *wargs)
        assert np.array_equal(gh, full.grad(*hargs)[0])
        assert np.array_equal(gw, wfull.grad(*wargs)[0])
    assert_grads_close((gh,), fd_grad(lambda u0: heat(u0, 0.05, 300), (hargs[0],)),
                       (hargs[0],), rtol=1e-5, atol=1e-8)


def continue_and_break(x, n):
    """A while loop with ``continue`` (two back edges), ``break`` and array state rebound."""
    u = x * 1.0
    k = 0
    e = 0.0
    while k < n:
        k += 1
        u = np.sin(u) * 0.9 + 0.05
        if k % 3 == 0:
            continue
        e += np.sum(u * u)
        if e > x[0] * 40.0:
            break
    return e + np.sum(u)


def test_online_continue_and_break():
    full = nad.grad_jit(checkpoint="off")(continue_and_break)
    ck = nad.grad_jit(checkpoint="revolve", snapshots=2)(continue_and_break)
    for n in (0, 1, 4, 37, 400):
        args = (np.linspace(0.1, 0.9, 4), n)
        assert np.array_equal(ck.grad(*args)[0], full.grad(*args)[0]), n
    args = (np.linspace(0.1, 0.9, 4), 37)
    assert_grads_close(ck.grad(*args), fd_grad(continue_and_break, args), args, rtol=1e-5,
                       atol=1e-7)


def test_jitted_caller_keeps_the_history_of_a_while_loop_that_fits():
    # The "fit" variant a jitted caller links keeps a while loop's history until it would
    # pass the budget (32 iterations here), then drops it and goes on by the online
    # schedule; a loop that ended within the budget is reversed with no second run.
    from numba import njit
    full = nad.grad_jit(checkpoint="off")(continue_and_break)
    auto = nad.grad_jit(memory_budget=4096)(continue_and_break)

    @njit
    def call(x, n):
        return auto.grad(x, n)[0]

    x = np.linspace(0.1, 0.5, 4)
    for args in ((x, 7), (x, 40), (x * 100.0, 400)):     # fits, fits, past the budget
        np.testing.assert_array_equal(call(*args), full.grad(*args)[0])
    fit = auto._backward([x, 7]).checkpointed("fit")
    assert "keeps its history" in fit.checkpoint_note and "drops it" in fit.checkpoint_note
    assert "if _ckT" in fit.source                  # the sweep of a loop that fits
    args = (x * 100.0, 400)
    assert_grads_close((call(*args),), fd_grad(lambda x: continue_and_break(x, 400),
                                               (args[0],)), (args[0],), rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- nested run-time loops
def heat_cells(u0, k, n):
    """All of a step's history is kept by a loop of run-time length inside it."""
    u = u0.copy()
    m = u.shape[0]
    for t in range(n):
        for i in range(1, m - 1):
            u[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1]) - 0.01 * u[i] ** 3
    return np.sum(u * u)


def test_the_history_of_nested_loops_is_projected():
    FUNCS["heat_cells"] = heat_cells
    full = compiled("heat_cells", checkpoint="off")
    ck = compiled("heat_cells", checkpoint="revolve", snapshots=3)
    # 40 cells keep 16 bytes each per step: 50 steps keep ~30 kB, past 8 kB.
    auto = compiled("heat_cells", memory_budget=8192)
    args = (np.sin(np.linspace(0.0, 3.0, 40)), 0.2, 50)
    want = full.grad(*args)
    for f in (ck, auto):
        got = f.grad(*args)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1]
    assert auto._backward(list(args))._checkpointed is not None     # the guard fired
    note = ck.inspect_adjoint(*args).splitlines()[0]
    assert "3 snapshots" in note and "projected peak: 3 copies of the state" in note
    assert "16 bytes and 0 arrays per iteration of the loop at line" in note
    assert "times len(range(1, m - 1))" in note, note
    small = (args[0], 0.2, 3)                # fits: the history kept, no checkpointing
    assert np.array_equal(auto.grad(*small)[0], full.grad(*small)[0])
    assert_grads_close(ck.grad(*args), fd_grad(heat_cells, args), args, rtol=1e-5,
                       atol=1e-8)
    # A while loop around one: the nested loop's length is known before it starts.
    online = compiled("diffuse_until", checkpoint="revolve", snapshots=3)
    note = online.inspect_adjoint(*ONLINE_ARGS["diffuse_until"][0]).splitlines()[0]
    assert "times len(range(1, u.shape[0] - 1))" in note, note
