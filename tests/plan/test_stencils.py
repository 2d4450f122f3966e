"""Whole-array stencil updates in loops made one primitive (capture/stencils.py).

``u[1:-1] = u[1:-1] + dt * (D * (u[2:] - 2 u[1:-1] + u[:-2]) / dx ** 2 + ...)`` in a
time loop becomes a call of a generated primitive whose pullback is one loop over the
cells: the backward keeps one state per step and reverses each step in one pass. Each
form is checked against central finite differences and its value against the primal's
(bit for bit: the primitive computes the expression as written); the forms that must be
left alone are checked to be left alone and still right. The pullback calls of one step
are shared (emit/common_calls.py).
"""
import ast

import numba
import pytest
import numpy as np

import numba_adstack as nad
from conftest import backward_of, check_fd, full_sweep
from numba_adstack.ad.emit.common_calls import share_pullback_calls
from numba_adstack.ad import runtime


def _u(n=9, seed=2):
    return np.random.default_rng(seed).uniform(0.2, 0.8, n)


def _stencilled(f, *args):
    return "_stencil_vjp_" in backward_of(f, *args).source


def _check(f, *args, rtol=1e-6, atol=1e-8, stencil=True, value=True):
    got = check_fd(f, *args, rtol=rtol, atol=atol)
    if value:
        assert f.value_and_grad(*args)[0] == numba.njit(f.py_func)(*args)
    assert _stencilled(f, *args) is stencil
    return got


@nad.grad_jit
def reaction_diffusion(u0, D, k, dx, dt, steps):
    u = u0.copy()
    for step in range(steps):
        u[1:-1] = u[1:-1] + dt * (D * (u[2:] - 2.0 * u[1:-1] + u[:-2]) / dx ** 2
                                  + k * u[1:-1] * (1.0 - u[1:-1]))
    return np.sum(u * u)


def test_reaction_diffusion():
    _check(reaction_diffusion, _u(), 0.3, 2.0, 1.0, 0.2, 5)


def test_reaction_diffusion_no_step():
    got = _check(reaction_diffusion, _u(), 0.3, 2.0, 1.0, 0.2, 0, stencil=True)
    np.testing.assert_allclose(got[0], 2.0 * _u())


def test_reaction_diffusion_keeps_one_state_per_step():
    f, args = reaction_diffusion, (_u(), 0.3, 2.0, 1.0, 0.2, 5)
    assert "and 1 arrays per iteration" in f.inspect_adjoint(*args)     # the state
    src = backward_of(f, *args).source
    assert src.count("_stencil_vjp_") == 1      # one call per step for u, D and k


@nad.grad_jit
def divided(u0, c, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + c * (u[2:] - u[:-2]) / (1.0 + u[1:-1] * u[1:-1])
    return np.sum(u ** 3)


def test_division_by_cells_and_powers():
    _check(divided, _u(), 0.1, 4)


@nad.grad_jit
def powers_and_negation(u0, a, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = 0.5 * u[1:-1] + 0.1 * u[:-2] ** 0.5 / a - 0.2 * (-u[2:]) ** 2 \
            + (0.1 * u[1:-1]) ** 3
    return np.sum(u)


def test_powers_and_negation():
    _check(powers_and_negation, _u(), 1.3, 3)


@nad.grad_jit
def two_species(u0, v0, a, b, steps):
    u = u0.copy()
    v = v0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + a * (u[2:] - 2.0 * u[1:-1] + u[:-2]) - b * u[1:-1] * v[1:-1]
        v[1:-1] = v[1:-1] + a * (v[2:] - 2.0 * v[1:-1] + v[:-2]) + b * u[1:-1] * v[1:-1]
    return np.sum(u * v) + np.sum(v)


def test_two_arrays_coupled():
    _check(two_species, _u(), _u(seed=5), 0.2, 0.7, 4)


@nad.grad_jit
def computed_operand(u0, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        r = np.exp(-u[1:-1])            # a whole array computed before: an operand
        u[1:-1] = u[1:-1] + dt * (u[2:] - 2.0 * u[1:-1] + u[:-2] + r * u[1:-1])
    return np.sum(u * u)


def test_array_computed_before_is_an_operand():
    _check(computed_operand, _u(), 0.1, 3)


@nad.grad_jit
def broadcast_cell(u0, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        # u[:1] has one element: NumPy broadcasts it against the interior
        u[1:-1] = u[1:-1] + dt * (u[:1] * u[2:] - u[1:-1])
    return np.sum(u * u)


def test_broadcast_one_element_slice():
    _check(broadcast_cell, _u(), 0.1, 3)


@nad.grad_jit
def rebound(u0, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        u = np.concatenate((u[:1], u[1:-1] + dt * (u[2:] - 2.0 * u[1:-1] + u[:-2]),
                            u[-1:]))
    return np.sum(u * u)


def test_rebound_state_through_concatenate():
    _check(rebound, _u(), 0.2, 3)


# ---- forms left alone -------------------------------------------------------------

@nad.grad_jit
def top_level(u, dt):
    w = u[1:-1] + dt * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(w * w)


def test_top_level_left_to_the_elementwise_runs():
    _check(top_level, _u(), 0.2, stencil=False)


@nad.grad_jit
def no_slices(u0, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        u = u + dt * u * (1.0 - u)
    return np.sum(u)


def test_whole_arrays_without_slices_left_alone():
    _check(no_slices, _u(), 0.2, 3, stencil=False)


@nad.grad_jit
def one_operation(u0, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[2:] * 0.5
    return np.sum(u * u)


def test_one_operation_left_alone():
    _check(one_operation, _u(), 3, stencil=False)


@nad.grad_jit
def named_before_write(u0, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        left = u[:-2]                   # a view, read after the write below
        d = u[2:] - u[:-2]              # an array computed before the write
        u[0] = u[1] * 0.5
        u[1:-1] = u[1:-1] + dt * (u[2:] - 2.0 * u[1:-1] + left + d * u[1:-1])
    return np.sum(u * u)


def test_named_operands_read_where_the_expression_reads_them():
    _check(named_before_write, _u(), 0.2, 3)


@numba.njit
def _bump(u):
    u[0] += 0.1
    return 0.5


@nad.grad_jit
def written_inside(u0, steps):
    u = u0.copy()
    for _ in range(steps):
        # u[:-2] is read before _bump writes u[0]: the expression is left as it is
        u[1:-1] = u[:-2] * u[2:] + _bump(u) * u[1:-1]
    return np.sum(u * u)


def test_write_inside_the_expression_left_alone():
    # (njit's fused array expression calls _bump before it reads the slices; the
    # gradient follows Python's order, as the finite differences do)
    _check(written_inside, _u(), 3, stencil=False, value=False)


@nad.grad_jit
def float32_state(u0, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + dt * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u * u)


def test_float32_left_alone():
    u = _u().astype(np.float32)
    f = float32_state
    got = f.grad(u, np.float32(0.2), 3)
    assert not _stencilled(f, u, np.float32(0.2), 3)
    want = nad.grad_jit(float32_state.py_func).grad(u.astype(np.float64), 0.2, 3)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4)


# ---- one call of a pullback for all its operands -----------------------------------

def test_shared_pullback_call():
    runtime.ONE_CALL.add("pb")
    try:
        fn = ast.parse("def f(x, g, a_bar, c_bar):\n"
                       "    v = a_bar\n"
                       "    v += pb(x, g)[0]\n"
                       "    c_bar += pb(x, g)[1]\n"
                       "    g = g * 2.0\n"
                       "    c_bar += pb(x, g)[2]\n").body[0]
        assert share_pullback_calls(fn) == 1
        text = ast.unparse(fn)
        assert text.count("pb(x, g)") == 2          # the call after g changed stays
        assert "_pb0 = pb(x, g)" in text
        fn = ast.parse("def f(x, g, c_bar):\n"
                       "    v = x\n"
                       "    v += pb(x, g)[0]\n"
                       "    c_bar += pb(x, g)[1]\n").body[0]
        assert share_pullback_calls(fn) == 0        # x written through its alias v
        fn = ast.parse("def f(x, g, x_bar, c_bar):\n"
                       "    x_bar = acc(x_bar, pb(x, g)[0], x)\n"
                       "    c_bar += pb(x, g)[1]\n").body[0]
        assert share_pullback_calls(fn) == 1        # x_bar bound anew: x unchanged
    finally:
        runtime.ONE_CALL.discard("pb")


@nad.grad_jit
def mismatched(u0, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + 0.1 * u[2:] * u[:-3]
    return np.sum(u * u)


def test_mismatched_lengths_raise_as_numpy_does():
    u = _u()
    with pytest.raises(ValueError):
        numba.njit(mismatched.py_func)(u, 2)
    with pytest.raises(ValueError):
        mismatched.grad(u, 2)


@nad.grad_jit
def divided_by_zero(u0, c, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + (u[2:] - u[:-2]) / (c * u[1:-1])
    return np.sum(u)


def test_division_by_zero_as_on_arrays():
    # no ZeroDivisionError: the element loop divides as the arrays do (inf, nan)
    value, _ = divided_by_zero.value_and_grad(_u(), 0.0, 1)
    np.testing.assert_equal(value, numba.njit(divided_by_zero.py_func)(_u(), 0.0, 1))
    assert not np.isfinite(value)


def test_hvp_and_jvp():
    # forward over reverse differentiates a backward whose stencils are reversed
    # operation by operation (the pullbacks have no tangent rule)
    f, args = reaction_diffusion, (_u(), 0.3, 2.0, 1.0, 0.2, 3)
    v = (np.linspace(-1.0, 1.0, 9), 0.5, -0.25, 0.0, 0.0, 0)
    hv = f.hvp(args, v)
    e = 1e-6

    def shifted(s):
        return tuple(a + s * b if isinstance(a, (float, np.ndarray)) else a
                     for a, b in zip(args, v))
    plus, minus = f.grad(*shifted(e)), f.grad(*shifted(-e))
    for h, p, m in zip(hv[:3], plus[:3], minus[:3]):
        np.testing.assert_allclose(h, (np.asarray(p) - np.asarray(m)) / (2 * e),
                                   rtol=1e-5, atol=1e-7)
    g = f.grad(*args)
    _, tangent = f.jvp(args, v)
    np.testing.assert_allclose(tangent, np.dot(g[0], v[0]) + g[1] * v[1] + g[2] * v[2],
                               rtol=1e-10)


@nad.grad_jit
def _heat(u0, k, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k * (u[:-2] - 2.0 * u[1:-1] + u[2:]) * u[1:-1]
    return np.sum(u * u)


@nad.grad_jit
def _gradient_norm(u0, k, n):
    g = _heat.grad(u0, k, n)[0]
    return np.sum(g * g)


@full_sweep
def test_gradient_of_a_gradient_called_in_the_function():
    check_fd(_gradient_norm, _u(), 0.2, 3, rtol=1e-5, atol=1e-7)
    assert _heat.grad(_u(), 0.2, 3)[0] is not None


@nad.grad_jit(parallel=True)
def rows_in_prange(U, dt, steps):
    total = 0.0
    for j in numba.prange(U.shape[0]):
        u = U[j].copy()
        for s in range(steps):
            u[1:-1] = u[1:-1] + dt * (u[2:] - 2.0 * u[1:-1] + u[:-2]) * u[1:-1]
        total += np.sum(u * u)
    return total


def test_time_loop_in_a_prange_body():
    U = np.random.default_rng(0).uniform(0.2, 0.8, (3, 9))
    check_fd(rows_in_prange, U, 0.1, 3)
    assert _stencilled(rows_in_prange, U, 0.1, 3)


@nad.grad_jit
def while_time(u0, dt, T):
    u = u0.copy()
    t = 0.0
    while t < T:
        u[1:-1] = u[1:-1] + dt * (u[2:] - 2.0 * u[1:-1] + u[:-2]) * u[1:-1]
        t += dt
    return np.sum(u * u)


def test_while_time_loop():
    _check(while_time, _u(), 0.1, 0.35)
