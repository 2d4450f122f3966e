"""The memory model of arrays (facts/memory.py) and what rests on it: no placeholder
adjoint ever added into another, the symplectic Euler step in a while loop, arguments
that share memory, the memory guard of loops whose inner lengths are not known when they
start, and the reproducers of the rules it touched (np.unwrap's period, np.interp's
knots). Gradients against central differences of the Python function."""
import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import config
from numba_adstack.ad.runtime import RUNTIME
from conftest import check_fd


@numba.njit
def _scaled(y, p):
    return p * y


@nad.grad_jit
def copied_each_step(y0, p):
    f = _scaled(y0, p)
    s = 0.0
    for k in range(3):
        fnew = _scaled(f, p)
        s += fnew[0]
        f = fnew.copy()
    return s


def test_a_phi_with_no_adjoint_yet_adds_nothing():
    x = np.linspace(0.5, 1.5, 6)
    gx, gp = copied_each_step.grad(x, 1.1)
    np.testing.assert_array_equal(gx[1:], 0.0)       # exactly: nothing reads them
    np.testing.assert_allclose(gx[0], 1.1 ** 2 + 1.1 ** 3 + 1.1 ** 4, rtol=1e-14)
    check_fd(copied_each_step, x, 1.1)


@nad.grad_jit
def read_in_a_branch(x, c):
    y = x * 2.0
    z = y + x[0]
    s = 1.0
    if c > 0:
        s = np.sum(z * z)
    return s + x[1]


def test_an_array_value_read_only_in_a_branch_not_taken():
    x = np.linspace(0.1, 0.6, 6)
    gx, _ = read_in_a_branch.grad(x, -1.0)
    np.testing.assert_array_equal(gx, [0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    check_fd(read_in_a_branch, x, 1.0)


def _euler_while(x, p, n):
    u = x.copy()
    v = x.copy()
    t = 0
    while t < n:
        u = u + v
        v -= p[0] * u
        t += 1
    return np.sum(u)


def _euler_rebound(x, p, n):
    u = x.copy()
    v = np.zeros_like(x)
    t = 0
    while t < n:
        u = u + v
        v = v - 0.3 * u
        t += 1
    return np.sum(u * u)


def _euler_two_states_for(x, p, n):
    u = x.copy()
    v = x * 0.5
    w = x * 0.1
    for t in range(n):
        u = u + v
        v -= p[0] * u + p[1] * w
        w = w + 0.1 * v
    return np.sum(u) + np.sum(w * w)


@pytest.mark.parametrize("fn", [_euler_while, _euler_rebound, _euler_two_states_for])
def test_symplectic_euler(fn):
    args = (np.linspace(0.1, 0.6, 6), np.array([0.3, 0.2, 0.1]), 3)
    check_fd(nad.grad_jit(fn), *args)
    check_fd(nad.grad_jit(fn), args[0], args[1], 0)


def _writes_its_argument(x, y):
    y[:] = x * 2.0
    return np.sum(y * x)


def test_arguments_sharing_memory_with_one_written_are_refused_when_called():
    f = nad.grad_jit(_writes_its_argument)
    a = np.linspace(0.1, 0.6, 6)
    with pytest.raises(ValueError, match="writes into its argument 'y', and 'x' shares"):
        f.grad(a, a)
    with pytest.raises(ValueError, match="shares memory"):
        f.grad(a[1:], a[:-1])
    check_fd(f, a, a.copy())
    check_fd(f, a[::2].copy(), a[1::2].copy())
    got = f.grad(a[::2], a[1::2].copy())         # apart: every other element
    np.testing.assert_allclose(got[0], 4.0 * a[::2])


def _triangle(x, n):
    s = 0.0
    for t in range(n):
        for i in range(x.shape[0]):
            for j in range(i):           # at most x.shape[0] long
                s = np.sin(s + x[i] * x[j])
    return s


def _lengths_from_data(x, m, n):
    s = 0.0
    for t in range(n):
        for i in range(x.shape[0]):
            for j in range(m[i]):        # not known when the outer loop starts
                s = np.sin(s + x[i] * x[j])
    return s


def test_a_history_whose_inner_lengths_are_bounded_or_measured():
    x = np.linspace(0.1, 0.9, 9)
    f = nad.grad_jit(_triangle, memory_budget=4000)
    assert "(at most: a bound" in f.inspect_adjoint(x, 30).splitlines()[0]
    check_fd(f, x, 30)
    assert set(f._backward([x, 30])._checkpointed) == {"revolve"}  # 30 * 36 values
    check_fd(f, x, 2)
    g = nad.grad_jit(_lengths_from_data, memory_budget=4000)
    m = np.arange(9)
    assert "counted once" in g.inspect_adjoint(x, m, 30).splitlines()[0]
    check_fd(g, x, m, 30)                        # measured as it runs: past the budget
    assert set(g._backward([x, m, 30])._checkpointed) == {"revolve"}
    check_fd(g, x, m, 2)


def test_a_checked_accumulation_raises_on_shapes_that_do_not_broadcast():
    checked_add = RUNTIME["checked_add"]

    @numba.njit
    def add(a, b):
        return checked_add(a, b, 1.0)
    np.testing.assert_array_equal(add(np.zeros(3), np.ones(1)), np.ones(3))
    with pytest.raises(ValueError, match="another shape into an adjoint"):
        add(np.zeros(3), np.ones(0))


def test_checked_backwards_run_every_accumulation_checked():
    f = nad.grad_jit(_euler_two_states_for)
    args = (np.linspace(0.1, 0.6, 6), np.array([0.3, 0.2, 0.1]), 3)
    with config.checking():
        check_fd(f, *args)
    assert "checked_add" in f.inspect_adjoint(*args)


@nad.grad_jit
def unwrapped(p, period, discont):
    return np.sum(np.unwrap(p, discont=discont, period=period) * np.arange(5.0))


def test_unwrap_in_its_period():
    p = np.array([0.1, 2.9, 5.8, 0.2, 3.1])
    got = check_fd(unwrapped, p, 3.0, 1.7)
    assert got[1] == pytest.approx(-9.0)
    assert unwrapped.jvp((p, 3.0, 1.7), (None, 1.0, None))[1] == pytest.approx(-9.0)


@nad.grad_jit
def interpolated(x, xp, fp):
    return np.sum(np.interp(x, xp, fp) ** 2)


def test_interp_with_knots_that_do_not_increase_is_refused():
    x, fp = np.array([0.2, 0.45, 0.7]), np.array([1.0, 2.0, 0.5])
    check_fd(interpolated, x, np.array([0.0, 0.5, 1.0]), fp)
    with pytest.raises(ValueError, match="knots xp that do not increase"):
        interpolated.grad(x, np.array([0.0, 1.0, 0.5]), fp)


def _slices_and_products(x, A, n):
    y = x.copy(); B = A.copy(); s = 0.1
    w = np.sin(x) + A @ x
    y[4] += 0.2 * np.tanh(np.sum(np.sin(B)) * 0.1)
    if np.sum((A + 0.1 * B)) * 0.1 > 0.30:
        B[:, 0] += 0.1 * (0.5 * (B.T @ A[:, 4]) + 0.5 * np.sqrt(1.0 + w * w))
    else:
        y = y + 0.1 * (B @ y)
    B[:, 1] += 0.1 * (0.5 * (A @ A[3]))
    B[1:, :] = 0.5 * B[1:, :] + 0.1 * B[:-1, :]
    B = 0.9 * B + 0.1 * np.tanh(np.sin(B))
    return np.dot(y, x) + s


def test_a_value_read_only_in_the_branch_not_taken_of_a_whole_array_program():
    # (its adjoint was added into another's before anything reached it: sum_to failed)
    f = nad.grad_jit(_slices_and_products)
    rng = np.random.default_rng(4341033)
    x, A = rng.uniform(-0.8, 0.8, 5), rng.uniform(-0.5, 0.5, (5, 5))
    check_fd(f, x, A, 4)
    check_fd(f, x, A + 0.5, 4)


# ---------------------------------------------------------------- lists of arrays
@nad.grad_jit
def history_appended(x, k, steps):
    hist = []
    u = x.copy()
    for t in range(steps):
        hist.append(u.copy())           # a copy: the list keeps each step's values
        u[0] = u[0] * 2.0 + np.sin(u[1])
        u[1:] += k * u[:-1]
    s = 0.0
    for h in hist:
        s += np.sum(h * h)
    return s + np.sum(u)


@nad.grad_jit
def history_of_the_same_array(x, k, steps):
    hist = []
    u = x.copy()
    for t in range(steps):
        hist.append(u)                  # one array, put in again and again
        u[0] = u[0] * 2.0 + np.sin(u[1])
    s = 0.0
    for h in hist:
        s += np.sum(h * h)
    return s + k


def _typed_list_states(x, k, steps):
    L = numba.typed.List()
    L.append(x * 1.0)
    for t in range(steps):
        L.append(np.cos(L[t]) * k + L[t])
    return np.sum(L[-1]) + np.sum(L[1] * L[0])


typed_list_states = nad.grad_jit(_typed_list_states)


@nad.grad_jit
def pair_stored_into(x, k, steps):
    a = x * 2.0
    L = [a, np.sin(x)]
    for t in range(steps):
        L[t % 2] = L[0] * k + L[1]      # a store: the item before it gets no adjoint
    return np.sum(L[0] * L[1])


@nad.grad_jit
def item_replaced_by_another_shape(x, k, steps):
    L = [x * 2.0, np.sin(x)]
    s = np.sum(L[0] * L[0])
    L[0] = x[:2] * k                    # the item before had five elements
    return s + np.sum(L[0] * L[1][:2]) * steps


def test_lists_of_arrays_appended_read_and_stored():
    x = np.linspace(0.1, 0.9, 5)
    with config.checking():
        for f in (history_appended, typed_list_states, pair_stored_into,
                  item_replaced_by_another_shape):
            check_fd(f, x, 0.3, 4)


def test_an_array_written_after_it_was_put_into_a_list_is_refused():
    x = np.linspace(0.1, 0.9, 5)
    with pytest.raises(nad.NonDifferentiableError,
                       match=r"writing into 'u' after it was put into the list 'hist'"
                             r".*put a copy in"):
        history_of_the_same_array.grad(x, 0.3, 3)


def test_forward_mode_and_hvp_through_a_list_of_arrays():
    x, v = np.linspace(0.1, 0.9, 5), np.linspace(1.0, 2.0, 5)
    _, tangent = pair_stored_into.jvp((x, 0.3, 4), (v, 0.0, 0))
    np.testing.assert_allclose(tangent, np.dot(pair_stored_into.grad(x, 0.3, 4)[0], v),
                               rtol=1e-12)
    hv = pair_stored_into.hvp((x, 0.3, 4), (v, 0.0, 0))[0]
    h = 1e-5
    fd = (pair_stored_into.grad(x + h * v, 0.3, 4)[0] -
          pair_stored_into.grad(x - h * v, 0.3, 4)[0]) / (2 * h)
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-8)
