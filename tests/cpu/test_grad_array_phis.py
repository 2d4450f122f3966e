"""Arrays rebound in loops: values computed from the last one, buffers swapped whole
(``A, B = B, A``, Jacobi relaxation), fresh arrays written each iteration, against finite
differences; two names for one written array at once are refused."""
import math

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError
from numba_adstack.ad.runtime import acc

from conftest import check_fd

GRID = np.random.default_rng(3).uniform(0.0, 1.0, (5, 5))
X3 = np.linspace(0.2, 1.0, 3)


@nad.grad_jit
def rebound_by_arithmetic(x, n):
    A = x.copy()
    for _ in range(n):
        A = A * 1.5 + 0.1
    return A[0] + A[2]


@numba.njit
def relax(A, Anew):
    """One nonlinear Jacobi sweep into Anew's interior; the largest change."""
    error = 0.0
    n, m = A.shape
    for j in range(1, n - 1):
        for i in range(1, m - 1):
            Anew[j, i] = 0.25 * (A[j, i + 1] * A[j, i - 1] + math.sin(A[j - 1, i])
                                 + A[j + 1, i])
            error = max(error, abs(Anew[j, i] - A[j, i]))
    return error


@nad.grad_jit
def swapped_for(A0, n):
    A = A0.copy()
    B = np.zeros_like(A0)         # its boundary stays 0: the two buffers differ
    for _ in range(n):
        relax(A, B)
        A, B = B, A
    s = 0.0
    for v in A.flat:
        s += v * v
    return s


@nad.grad_jit
def swapped_while(A0, tol, iter_max):
    A = A0.copy()
    Anew = np.zeros_like(A0)
    error = 1.0
    it = 0
    while error > tol and it < iter_max:
        error = relax(A, Anew)
        A, Anew = Anew, A
        it += 1
    return np.sum(A * A) + np.sum(Anew)


@nad.grad_jit
def rotated_three(A0, n):
    A = A0.copy()
    B = A0 * 0.5
    C = np.zeros_like(A0)
    s = 0.0
    for _ in range(n):
        relax(A, C)
        s += B[1, 1] * C[2, 2]
        A, B, C = C, A, B
    return s + np.sum(A) + 2.0 * np.sum(B * B)


@nad.grad_jit
def fresh_each_iteration(A0, tol, iter_max):
    A = A0.copy()
    error = 1.0
    it = 0
    while error > tol and it < iter_max:
        Anew = np.zeros_like(A)
        error = relax(A, Anew)
        A = Anew
        it += 1
    return np.sum(A * A)


@pytest.mark.parametrize("f,args", [
    (swapped_for, (GRID, 1)), (swapped_for, (GRID, 3)),
    (swapped_while, (GRID, 1e-12, 4)),
    (rotated_three, (GRID, 4)),
    (fresh_each_iteration, (GRID, 1e-12, 3)),
], ids=["swap-1", "swap-3", "swap-while", "rotate-3", "fresh"])
def test_arrays_passed_around_a_loop_match_finite_differences(f, args):
    check_fd(f, *[a.copy() if isinstance(a, np.ndarray) else a for a in args])


def test_array_rebound_by_arithmetic():
    gx, = [g for g in rebound_by_arithmetic.grad(X3.copy(), 3) if g is not None]
    np.testing.assert_allclose(gx, [1.5 ** 3, 0.0, 1.5 ** 3], rtol=1e-13)
    check_fd(rebound_by_arithmetic, X3.copy(), 3)


def _two_names_for_one_array(x, n):
    A = x.copy()
    B = x.copy()
    s = 0.0
    for _ in range(n):
        B[0] = A[0] * 2.0 + B[1] * A[1]
        s += A[0] * A[2]
        A = B                      # from now on A and B name one array
    return s


def test_two_names_for_one_written_array_are_refused():
    with pytest.raises(NonDifferentiableError) as ei:
        nad.grad_jit(_two_names_for_one_array).grad(X3.copy(), 3)
    msg = str(ei.value)
    assert "_two_names_for_one_array" in msg and "writing into 'B' while 'A'" in msg
    assert "B[0] = A[0] * 2.0 + B[1] * A[1]" in msg and "`.copy()`" in msg


def _two_arrays(x, n):             # the fix the message gives
    A = x.copy()
    B = x.copy()
    s = 0.0
    for _ in range(n):
        B[0] = A[0] * 2.0 + B[1] * A[1]
        s += A[0] * A[2]
        A = B.copy()
    return s


def test_the_fix_for_two_names_is_differentiated():
    check_fd(nad.grad_jit(_two_arrays), X3.copy(), 3)


def _kept_alias(A0, n):
    A = A0.copy()
    C = A
    B = np.zeros_like(A0)
    for _ in range(n):
        relax(A, B)
        A, B = B, A
    return C[1, 1] + C[2, 2] * A[1, 2]     # C names what the loop writes into


def test_a_swapped_array_read_under_another_name_is_refused():
    with pytest.raises(NonDifferentiableError) as ei:
        nad.grad_jit(_kept_alias).grad(GRID.copy(), 3)
    msg = str(ei.value)
    assert "_kept_alias" in msg and "'Anew' (in relax)" in msg and "while 'C'" in msg


@numba.njit
def _acc(a, c, like):
    return acc(a, c, like)


def test_an_adjoint_with_nothing_in_it_yet_adds_nothing():
    # A swapped buffer's adjoint before anything reached it: size 0, another shape.
    # (Numba's ``out += c`` broadcasts it and reads past its end: the gradient of
    # swapped_for came out as garbage in some runs.)
    nothing = np.empty((0, 0))
    like = np.ones((5, 5))
    np.testing.assert_array_equal(_acc(nothing, nothing, like), np.zeros((5, 5)))
    given = np.full((5, 5), 2.0)
    assert _acc(given, nothing, like) is given
    np.testing.assert_array_equal(given, 2.0)
    np.testing.assert_array_equal(_acc(np.empty(0), np.empty(0), (3,)), np.zeros(3))
    # a value of size 0 itself: its adjoint is of its shape, and added as usual
    np.testing.assert_array_equal(_acc(np.empty(0), np.empty(0), np.empty(0)), np.empty(0))
