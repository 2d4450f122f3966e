"""In-place operators on views: ``x[1:] += y``, ``A[i, :] -= v``, ``A[:, j] *= w``,
``x[::2] /= y``, in loops and inside helpers that take the view, on fresh, computed and
copied arrays, against central finite differences of the pure-Python function.

Python writes ``x[s] op= y`` as a load of the view ``x[s]``, the in-place operator on it,
and a store of the result back into ``x[s]``; the store writes the view onto itself and
adds nothing to the adjoint (the in-place operator on the view does it all).
"""
import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

from conftest import check_fd

RNG = np.random.default_rng(1414)


def rand(*shape):
    return RNG.uniform(-1.0, 1.0, shape)


@nad.grad_jit
def slices_1d(u, v):
    """Every operator on a slice, of a fresh array, a computed one and a copy."""
    q = np.zeros(u.shape[0])
    q[1:] += u[1:]
    q[:-1] -= 0.5 * v[1:]
    p = u * 2.0
    p[1:] *= 0.9 + 0.1 * v[:-1]
    p[::2] /= 2.0 + v[::2] * v[::2]
    c = v.copy()
    c[2:] += np.sin(u[:-2])
    return np.sum(q * q) + np.sum(p * q) + np.sum(c ** 3)


@pytest.mark.parametrize("n", [4, 7])
def test_operators_on_slices(n):
    check_fd(slices_1d, rand(n), rand(n))


def test_operators_on_slices_of_views():
    check_fd(slices_1d, rand(10)[::2], rand(5, 2)[:, 1])


def test_augmented_assignment_to_a_slice_has_the_analytic_gradient():
    # sum((q[1:] += u[1:])**2) on zeros: d/du = 2 u off the first element.
    @nad.grad_jit
    def augmented(u):
        q = np.zeros(4)
        q[1:] += u[1:]
        return np.sum(q * q)
    u = np.array([0.3, -0.5, 0.8, 1.1])
    np.testing.assert_allclose(augmented.grad(u)[0], np.r_[0.0, 2.0 * u[1:]], rtol=1e-12)


@nad.grad_jit
def rows_and_columns(a, v, w, n):
    """Rows and columns of a matrix updated in place, in loops (n passes)."""
    b = a * 1.0
    z = np.zeros((a.shape[0], a.shape[1]))
    for _ in range(n):
        for i in range(b.shape[0]):
            b[i, :] += v * b[i, 0]
            z[i] -= 0.3 * np.tanh(b[i])
        for j in range(b.shape[1]):
            b[:, j] *= 1.0 + 0.1 * w
            z[1:, j] /= 2.0 + w[1:] * w[1:]
    b[0, 1:3] -= v[:2]
    return np.sum(np.sin(b)) + np.sum(z * b)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_rows_and_columns_in_loops(n):
    check_fd(rows_and_columns, rand(3, 4), rand(4), rand(3), n)


def test_rows_and_columns_of_views():
    check_fd(rows_and_columns, rand(4, 8)[::-1, ::2][:3], rand(8)[1::2], rand(3), 2)


@numba.njit
def add_scaled(dst, src, c):
    dst += c * src


@numba.njit
def scale(dst, c):
    dst *= c


@nad.grad_jit
def helpers_on_views(a, v):
    """Helpers that update the view they are given."""
    b = np.zeros((a.shape[0], v.shape[0]))
    for i in range(a.shape[0]):
        add_scaled(b[i], v, a[i, 0])
        add_scaled(b[i, 1:], v[:-1], 0.5)
    for j in range(v.shape[0]):
        scale(b[:, j], 1.0 + 0.1 * a[0, j % a.shape[1]])
    return np.sum(np.sin(b)) + np.sum(b * b)


def test_helpers_updating_views():
    check_fd(helpers_on_views, rand(3, 4), rand(4))
    check_fd(helpers_on_views, rand(6, 4)[::2], rand(10)[::2])


@nad.grad_jit
def through_names(u, v):
    """Views taken under a name first, also of a computed array and of a transpose."""
    p = u * 1.5
    r = p[1:]
    r += v[1:]
    m = np.outer(u, v)
    mt = m.T
    mt[1] -= u
    return np.sum(p * p) + np.sum(m * m)


def test_updates_through_named_views():
    check_fd(through_names, rand(4), rand(4))


@nad.grad_jit
def gathered_update(u, idx):
    """x[idx] op= y with an index array: a gather, the operator, a scatter."""
    q = np.zeros(u.shape[0])
    q[idx] += u[:2]
    p = u * 1.0
    p[idx] *= u[2:4]
    return np.sum(q * q) + np.sum(p * p)


def test_updates_through_index_arrays():
    check_fd(gathered_update, rand(5), np.array([3, 1]))
    check_fd(gathered_update, rand(10)[::2], np.array([-1, 0]))
    check_fd(gathered_update, rand(4), np.array([2, 2]))       # the last write stays


@nad.grad_jit
def stores_by_index_array(u, idx, s):
    """a[idx] = v and a[idx] = s with repeated indices: the last write stays."""
    q = np.zeros(u.shape[0])
    q[idx] = u[:3] * 2.0
    p = u * 1.0
    p[idx] = s
    return np.sum(q * q * q) + np.sum(p * p * p)


def test_stores_through_index_arrays_keep_the_last_write():
    check_fd(stores_by_index_array, rand(5), np.array([1, 3, 1]), 0.7)
    check_fd(stores_by_index_array, rand(10)[::-2], np.array([-1, 0, 4]), -0.4)


def _read_under_the_first_name(w0, x, n):
    w = w0
    for _ in range(n):
        w -= 0.1 * np.sin(w) * x
    return np.sum(w * w) + np.sum(w0)


def test_an_array_read_after_a_loop_updated_it_under_another_name():
    # w names w0's memory all along (the loop's phi is an alias of it): one adjoint.
    check_fd(nad.grad_jit(_read_under_the_first_name), rand(3), rand(3), 2)


@nad.grad_jit
def whole_and_slice_updates(x, n):
    """B -= e; B[1:] += f in a loop, on a computed array and on a fresh one."""
    b = x * 1.0
    c = np.ones(x.shape[0])
    for _ in range(n):
        b -= 0.1 * x * b
        b[1:] += 0.2 * b[:-1]
        c *= 1.0 + 0.1 * x
        c[:-1] -= 0.3 * np.sin(c[1:]) * x[1:]
    return np.sum(b * b) + np.sum(c ** 3)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_whole_array_and_slice_updates_in_one_loop(n):
    check_fd(whole_and_slice_updates, rand(4), n)


@nad.grad_jit
def scaled_by_its_own_sum(u, v):
    """``u *= c(u)``: the reverse reads the adjoint of ``u`` for ``c`` before scaling it
    in place, so nothing may move that read past the scaling."""
    p = 0.5 * u
    u *= 1.0 + 0.3 * np.tanh(np.sum(0.5 * u))
    return np.dot(p, u) + 0.3 * np.sum(u) + np.sum(v * u[:3])


def test_in_place_scaling_by_a_function_of_the_array():
    u, v = rand(4), rand(3)
    check_fd(scaled_by_its_own_sum, u, v)
