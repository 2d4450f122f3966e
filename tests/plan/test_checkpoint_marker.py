"""numba_adstack.checkpoint on a helper: the call keeps only its arguments for the
backward, which runs the helper's own gradient from them. Gradients through a marked step
of a time loop against the unmarked step (same function, its history stored) and finite
differences; the backward keeps no stack for the helper's inner loop; refusals."""
import math

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

from conftest import assert_grads_close, fd_grad


@numba.njit
def relax(x, p, m):
    """A scalar step with an inner loop of run-time length ``m``."""
    y = x
    for _ in range(m):
        y = np.sin(y) * p + 0.1 * y
    return y


@numba.njit
def diffuse(u, k, m):
    """An array step: ``m`` explicit diffusion sub-steps, each a new array."""
    v = u
    for _ in range(m):
        inner = v[1:-1] + k * (v[:-2] - 2.0 * v[1:-1] + v[2:]) - 0.01 * v[1:-1] ** 3
        v = np.concatenate((v[:1], inner, v[-1:]))
    return v


relax_ck = nad.checkpoint(relax)
diffuse_ck = nad.checkpoint(diffuse)


def scalar_loop(x, p, n, m):
    for _ in range(n):
        x = relax_ck(x, p, m) + 0.05 * x
    return x


def scalar_loop_plain(x, p, n, m):
    for _ in range(n):
        x = relax(x, p, m) + 0.05 * x
    return x


def array_loop(u, k, n, m):
    s = 0.0
    for _ in range(n):
        u = diffuse_ck(u, k, m)
        s += np.sum(u * u)
    return s


def array_loop_plain(u, k, n, m):
    s = 0.0
    for _ in range(n):
        u = diffuse(u, k, m)
        s += np.sum(u * u)
    return s


scalar_ck = nad.grad_jit(scalar_loop)
scalar_plain = nad.grad_jit(scalar_loop_plain)
array_ck = nad.grad_jit(array_loop)
array_plain = nad.grad_jit(array_loop_plain)

U0 = np.sin(np.linspace(0.0, 3.0, 9))


def test_marked_helper_runs_as_its_function():
    assert relax_ck(0.3, 0.9, 7) == relax(0.3, 0.9, 7)
    assert scalar_ck(0.3, 0.9, 6, 7) == scalar_plain(0.3, 0.9, 6, 7)


def test_scalar_step_gradient_equals_the_stored_history_and_finite_differences():
    args = (0.3, 0.9, 6, 7)
    got = scalar_ck.grad(*args)
    assert got[:2] == scalar_plain.grad(*args)[:2]      # bit for bit
    assert_grads_close(got, fd_grad(scalar_loop_plain, args), args, rtol=1e-6)


def test_array_step_gradient_equals_the_stored_history_and_finite_differences():
    u = U0.copy()
    args = (u, 0.2, 4, 5)
    value, got = array_ck.value_and_grad(*args)
    assert value == array_plain(*args)
    np.testing.assert_array_equal(u, U0)          # the argument is left as it was
    assert_grads_close(got, array_plain.grad(*args), args, rtol=1e-12, atol=1e-14)
    assert_grads_close(got, fd_grad(array_loop_plain, args), args, rtol=1e-6, atol=1e-8)


def test_the_backward_keeps_no_history_of_the_helper():
    args = (0.3, 0.9, 6, 7)
    plain = scalar_plain.inspect_adjoint(*args)
    marked = scalar_ck.inspect_adjoint(*args)
    # Stored: the inner loop's values, a stack reserved per run of the inner loop.
    assert "len(range(m))" in plain and "relax_" in plain
    # Marked: only the call's argument x is kept per time step; the inner loop of relax is
    # neither replayed nor reversed in the caller's backward, and m sizes no stack.
    assert "relax_" not in marked and "len(range(m))" not in marked
    assert marked.count("push(") == 1
    # One backward of the helper per call, for both of its float arguments x and p.
    assert marked.count("checkpoint_vjp_packed(") == 1 and "checkpoint_vjp(" not in marked


@numba.njit
def couple(u, w, k):
    """Two arrays of different shapes and a float, all differentiated."""
    return np.tanh(u * k + w.sum(axis=1)) + 0.5 * w[:, 0] * u


couple_ck = nad.checkpoint(couple)


def coupled_loop(u, w, k, n):
    s = 0.0
    for _ in range(n):
        u = couple_ck(u, w, k)
        s += np.sum(u * u)
    return s


def coupled_loop_plain(u, w, k, n):
    s = 0.0
    for _ in range(n):
        u = couple(u, w, k)
        s += np.sum(u * u)
    return s


def test_one_backward_of_the_helper_for_all_its_arguments():
    ck, plain = nad.grad_jit(coupled_loop), nad.grad_jit(coupled_loop_plain)
    u = np.linspace(-0.4, 0.5, 5)
    w = np.cos(np.arange(15.0)).reshape(5, 3) * 0.3
    args = (u, w, 0.7, 4)
    got = ck.grad(*args)
    # The helper's own backward sums its contributions before the caller adds them:
    # equal to the stored history's gradient to rounding.
    assert_grads_close(got, plain.grad(*args), args, rtol=1e-13, atol=1e-15)
    assert_grads_close(got, fd_grad(coupled_loop_plain, args), args, rtol=1e-6, atol=1e-8)
    src = ck.inspect_adjoint(*args)
    assert src.count("checkpoint_vjp_packed(") == 1 and "checkpoint_vjp(" not in src
    # A float32 array beside float64 ones: packed in float64, its cotangent converted back.
    args32 = (u, w.astype(np.float32), 0.7, 4)
    got32 = ck.grad(*args32)
    assert got32[1].dtype == np.float32
    assert_grads_close(got32, plain.grad(*args32), args32, rtol=1e-5, atol=1e-6)


@numba.njit
def scale_in_place(u, c):
    u *= c
    return u


@numba.njit
def pair(x, p):
    return x * p, x + p


@numba.njit
def with_tuple(x, t):
    return x * t[0]


scale_ck = nad.checkpoint(scale_in_place)
pair_ck = nad.checkpoint(pair)
tuple_ck = nad.checkpoint(with_tuple)


def test_refused_helpers_name_the_call_and_the_line():
    @nad.grad_jit
    def writes(u, c):
        v = scale_ck(u, c)
        return np.sum(v)

    @nad.grad_jit
    def returns_tuple(x, p):
        a, b = pair_ck(x, p)
        return a * b

    @nad.grad_jit
    def takes_tuple(x, p):
        return tuple_ck(x, (p, 2.0))

    cases = [(writes, (U0.copy(), 2.0), "writes into its array argument"),
             (returns_tuple, (0.5, 1.5), "returns a float or a float array"),
             (takes_tuple, (0.5, 1.5), "takes floats, float arrays and integers")]
    for f, args, why in cases:
        with pytest.raises(NonDifferentiableError) as info:
            f.grad(*args)
        msg = str(info.value)
        assert why in msg and "checkpoint(" in msg and "line" in msg, msg


@numba.njit
def uses_spacing(x):
    return np.spacing(x) * x


spacing_ck = nad.checkpoint(uses_spacing)


def test_a_helper_that_cannot_be_differentiated_is_refused_as_itself():
    @nad.grad_jit
    def f(x):
        return spacing_ck(x) * 2.0

    with pytest.raises(NonDifferentiableError, match="'uses_spacing': the call to spacing"):
        f.grad(1.5)


def test_checkpoint_takes_functions_only():
    with pytest.raises(TypeError):
        nad.checkpoint(3.0)
