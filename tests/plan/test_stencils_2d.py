"""2-d whole-array stencil updates in loops made one primitive (capture/stencils.py,
capture/stencils_2d.py).

A 2-d heat equation or a Gray-Scott step shifts slices in both dimensions
(``u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 u[1:-1, 1:-1]``); in a time
loop the expression becomes a call of a generated primitive whose pullback is one loop
nest over the cells. Each form is checked against central finite differences and its
value against the primal's (bit for bit); the forms that must be left alone (bounds
known at run time only, steps, arrays of other numbers of dimensions, float32) are
checked to be left alone and still right. The full sweep (NUMBA_ADSTACK_TESTS_FULL=1) adds
more forms of each kind.
"""
import numba
import numpy as np
import pytest

import numba_adstack as nad
from conftest import backward_of, check_fd, full_sweep


def _grid(shape=(6, 7), seed=2):
    return np.random.default_rng(seed).uniform(0.2, 0.8, shape)


def _pullback_calls(f, *args):
    return backward_of(f, *args).source.count("_stencil_vjp_")


def _check(f, *args, rtol=1e-6, atol=1e-8, calls=1, value=True):
    got = check_fd(f, *args, rtol=rtol, atol=atol)
    if value:
        assert f.value_and_grad(*args)[0] == numba.njit(f.py_func)(*args)
    assert _pullback_calls(f, *args) == calls
    return got


@nad.grad_jit
def heat(u0, D, dx, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + dt * D * lap / dx ** 2
    return np.sum(u * u)


def test_heat_with_a_laplacian_temporary():
    _check(heat, _grid(), 0.3, 1.0, 0.2, 4)


def test_heat_keeps_one_state_per_step():
    args = (_grid(), 0.3, 1.0, 0.2, 4)
    assert "and 1 arrays per iteration" in heat.inspect_adjoint(*args)     # the state


def test_heat_no_step_and_one_cell_grids():
    got = _check(heat, _grid(), 0.3, 1.0, 0.2, 0)
    np.testing.assert_allclose(got[0], 2.0 * _grid())
    for shape in ((3, 3), (2, 5), (5, 2), (1, 4)):
        _check(heat, _grid(shape), 0.3, 1.0, 0.2, 3)


@nad.grad_jit
def heat_inline(u0, D, dx, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + dt * D * (
            u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
            - 4.0 * u[1:-1, 1:-1]) / dx ** 2
    return np.sum(u * u * u)


@full_sweep
def test_heat_in_one_expression():
    _check(heat_inline, _grid((5, 8)), 0.3, 1.0, 0.2, 3)


@nad.grad_jit
def gray_scott(u0, v0, Du, Dv, F, k, dt, steps):
    u = u0.copy()
    v = v0.copy()
    for _ in range(steps):
        uvv = u[1:-1, 1:-1] * v[1:-1, 1:-1] ** 2
        lap_u = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        lap_v = v[2:, 1:-1] + v[:-2, 1:-1] + v[1:-1, 2:] + v[1:-1, :-2] - 4.0 * v[1:-1, 1:-1]
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + dt * (Du * lap_u - uvv + F * (1.0 - u[1:-1, 1:-1]))
        v[1:-1, 1:-1] = v[1:-1, 1:-1] + dt * (Dv * lap_v + uvv - (F + k) * v[1:-1, 1:-1])
    return np.sum(u * v) + np.sum(v * v)


def test_gray_scott_two_fields():
    # uvv, read by both updates, is a primitive of its own and an operand of both
    _check(gray_scott, _grid(), _grid(seed=5), 0.2, 0.1, 0.04, 0.06, 0.5, 3, calls=3)


@nad.grad_jit
def coupled(u0, v0, a, b, steps):
    u = u0.copy()
    v = v0.copy()
    for _ in range(steps):
        # the update of v reads u after it was written
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + a * (u[2:, 1:-1] - 2.0 * u[1:-1, 1:-1]
                                             + u[:-2, 1:-1]) - b * u[1:-1, 1:-1] * v[1:-1, 1:-1]
        v[1:-1, 1:-1] = v[1:-1, 1:-1] + a * (v[1:-1, 2:] - 2.0 * v[1:-1, 1:-1]
                                             + v[1:-1, :-2]) + b * u[1:-1, 1:-1] * v[1:-1, 1:-1]
    return np.sum(u * v) + np.sum(v)


@full_sweep
def test_two_fields_written_in_turn():
    _check(coupled, _grid(), _grid(seed=5), 0.2, 0.7, 4, calls=2)


@nad.grad_jit
def rows_only(u0, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        # u[1:-1] of a 2-d u: every column, a stencil along the first axis
        u[1:-1] = u[1:-1] + dt * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u * u)


@full_sweep
def test_slices_of_the_first_axis_only():
    _check(rows_only, _grid((6, 4)), 0.2, 3)


@nad.grad_jit
def divided_powers(u0, c, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.5 * u[1:-1, 1:-1] + c * (u[2:, 2:] - u[:-2, :-2]) / (
            1.0 + u[1:-1, 1:-1] ** 2) - 0.1 * (-u[1:-1, 2:]) ** 3
    return np.sum(u ** 3)


def test_division_powers_negation_and_diagonal_shifts():
    _check(divided_powers, _grid(), 0.1, 3)


@nad.grad_jit
def negative_starts(u0, c, steps):
    u = u0.copy()
    for _ in range(steps):
        u[-4:-1, 1:-1] = u[-4:-1, 1:-1] + c * u[-5:-2, 2:] * u[-3:, :-2]
    return np.sum(u * u)


@full_sweep
def test_starts_from_the_end():
    _check(negative_starts, _grid((7, 6)), 0.3, 3)


@nad.grad_jit
def computed_operand(u0, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        r = np.exp(-u[1:-1, 1:-1])      # a whole array computed before: an operand
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + dt * (u[2:, 1:-1] - u[1:-1, :-2] + r * u[1:-1, 1:-1])
    return np.sum(u * u)


@full_sweep
def test_array_computed_before_is_an_operand():
    _check(computed_operand, _grid(), 0.1, 3)


@nad.grad_jit
def broadcast_row(u0, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        # u[:1, 1:-1] has one row and u[1:-1, :1] one column: NumPy broadcasts them
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + dt * (u[:1, 1:-1] * u[2:, 1:-1]
                                              - u[1:-1, :1] * u[1:-1, 1:-1])
    return np.sum(u * u)


def test_broadcast_one_row_and_one_column():
    _check(broadcast_row, _grid(), 0.1, 3)


@nad.grad_jit
def mismatched(u0, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * u[2:, 1:-1] * u[:-3, 1:-1]
    return np.sum(u * u)


def test_mismatched_shapes_raise_as_numpy_does():
    u = _grid()
    with pytest.raises(ValueError):
        numba.njit(mismatched.py_func)(u, 2)
    with pytest.raises(ValueError):
        mismatched.grad(u, 2)


@nad.grad_jit
def one_and_two_dimensional(u0, w0, dt, steps):
    u = u0.copy()
    w = w0.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + dt * (u[2:, 1:-1] - 2.0 * u[1:-1, 1:-1] + u[:-2, 1:-1])
        w[1:-1] = w[1:-1] + dt * (w[2:] - 2.0 * w[1:-1] + w[:-2])
    return np.sum(u * u) + np.sum(w * w)


@full_sweep
def test_one_and_two_dimensional_stencils_in_one_loop():
    _check(one_and_two_dimensional, _grid(), _grid((7,), seed=3), 0.2, 3, calls=2)


def test_hvp():
    # forward over reverse differentiates a backward whose stencils are reversed
    # operation by operation
    args = (_grid((5, 5)), 0.3, 1.0, 0.2, 2)
    v = (np.linspace(-1.0, 1.0, 25).reshape(5, 5), 0.5, 0.0, 0.0, 0)
    hv = heat.hvp(args, v)
    e = 1e-6

    def shifted(s):
        return tuple(a + s * b if isinstance(a, (float, np.ndarray)) else a
                     for a, b in zip(args, v))
    plus, minus = heat.grad(*shifted(e)), heat.grad(*shifted(-e))
    for h, p, m in zip(hv[:2], plus[:2], minus[:2]):
        np.testing.assert_allclose(h, (np.asarray(p) - np.asarray(m)) / (2 * e),
                                   rtol=1e-5, atol=1e-7)


@nad.grad_jit
def written_between(u0, D, steps):
    u = u0.copy()
    for _ in range(steps):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] - 2.0 * u[1:-1, 1:-1]
        u[0, :] = 0.5 * u[1, :]         # u, which lap reads, written before the update
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + D * lap * u[1:-1, 1:-1]
    return np.sum(u * u)


@full_sweep
def test_write_between_into_an_array_read_keeps_the_expression_apart():
    # lap is a primitive of its own, computed where it was; the update, which would
    # read u's slices after the write, is left to the operations' reverse
    _check(written_between, _grid(), 0.2, 3, calls=1)


@full_sweep
def test_fortran_ordered_and_sliced_grids():
    _check(heat, np.asfortranarray(_grid()), 0.3, 1.0, 0.2, 3)
    _check(heat, _grid((8, 9))[1:-1, ::2], 0.3, 1.0, 0.2, 3)


# ---- forms left alone -------------------------------------------------------------

@nad.grad_jit
def run_time_bounds(u0, dt, steps):
    u = u0.copy()
    n, m = u.shape
    for _ in range(steps):
        u[1:n - 1, 1:m - 1] = u[1:n - 1, 1:m - 1] + dt * (
            u[2:n, 1:m - 1] - 2.0 * u[1:n - 1, 1:m - 1] + u[0:n - 2, 1:m - 1])
    return np.sum(u * u)


def test_bounds_known_at_run_time_left_alone():
    _check(run_time_bounds, _grid(), 0.2, 3, calls=0)


@nad.grad_jit
def stepped(u0, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1:2, 1:-1] = u[1:-1:2, 1:-1] + dt * (
            u[2::2, 1:-1] - 2.0 * u[1:-1:2, 1:-1] + u[:-2:2, 1:-1])
    return np.sum(u * u)


def test_slices_with_steps_left_alone():
    _check(stepped, _grid((7, 5)), 0.2, 3, calls=0)


@nad.grad_jit
def row_broadcast(u0, w, steps):
    u = u0.copy()
    for _ in range(steps):
        # w (1-d) broadcast against the rows: arrays of two numbers of dimensions
        u[1:-1, 1:-1] = u[1:-1, 1:-1] * w[1:-1] + u[2:, 1:-1]
    return np.sum(u * u)


def test_one_dimensional_operand_of_a_two_dimensional_expression_left_alone():
    _check(row_broadcast, _grid(), np.linspace(0.5, 1.0, 7), 3, calls=0)


@nad.grad_jit
def float32_grid(u0, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + dt * (u[2:, 1:-1] - 2.0 * u[1:-1, 1:-1]
                                              + u[:-2, 1:-1])
    return np.sum(u * u)


@full_sweep
def test_float32_left_alone():
    u = _grid().astype(np.float32)
    got = float32_grid.grad(u, np.float32(0.2), 3)
    assert _pullback_calls(float32_grid, u, np.float32(0.2), 3) == 0
    want = nad.grad_jit(float32_grid.py_func).grad(u.astype(np.float64), 0.2, 3)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4)


@nad.grad_jit
def three_dimensional(u0, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1, 1:-1, 1:-1] = u[1:-1, 1:-1, 1:-1] + dt * (
            u[2:, 1:-1, 1:-1] - 2.0 * u[1:-1, 1:-1, 1:-1] + u[:-2, 1:-1, 1:-1])
    return np.sum(u * u)


@full_sweep
def test_three_dimensional_left_alone():
    _check(three_dimensional, _grid((4, 4, 3)), 0.2, 2, calls=0)


@nad.grad_jit
def gray_scott_in_place(U0, V0, Du, Dv, F, k, steps):
    U = U0.copy()
    V = V0.copy()
    for _ in range(steps):
        Lu = U[0:-2, 1:-1] + U[1:-1, 0:-2] - 4 * U[1:-1, 1:-1] + U[1:-1, 2:] + U[2:, 1:-1]
        Lv = V[0:-2, 1:-1] + V[1:-1, 0:-2] - 4 * V[1:-1, 1:-1] + V[1:-1, 2:] + V[2:, 1:-1]
        uvv = U[1:-1, 1:-1] * V[1:-1, 1:-1] * V[1:-1, 1:-1]
        U[1:-1, 1:-1] += Du * Lu - uvv + F * (1 - U[1:-1, 1:-1])
        # Lv was computed before U was written: U and V are copies, apart
        V[1:-1, 1:-1] += Dv * Lv + uvv - (F + k) * V[1:-1, 1:-1]
    return np.sum(U * V)


@full_sweep
def test_gray_scott_updated_in_place():
    _check(gray_scott_in_place, _grid(), _grid(seed=5), 0.2, 0.1, 0.04, 0.06, 3, calls=3)


@nad.grad_jit
def fields_may_alias(U, V, D, steps):
    for _ in range(steps):
        Lv = V[:-2, 1:-1] + V[2:, 1:-1] - 2.0 * V[1:-1, 1:-1]
        U[1:-1, 1:-1] = U[1:-1, 1:-1] + D * U[2:, 1:-1] * U[:-2, 1:-1]
        # V may be U (the arguments are any arrays): Lv is read where it was computed
        V[1:-1, 1:-1] = V[1:-1, 1:-1] + D * Lv * V[1:-1, 1:-1]
    return np.sum(U * V)


def test_write_between_into_an_argument_keeps_the_expression_apart():
    _check(fields_may_alias, _grid(), _grid(seed=5), 0.1, 2, calls=2)
    # Lv is a primitive of its own, read by the update of V as an operand
    src = backward_of(fields_may_alias, _grid(), _grid(seed=5), 0.1, 2).source
    assert "Lv_bar" in src
