"""Loops over zip, enumerate, np.ndindex, x.flat and the rows of 2-d arrays (ad/capture/loopforms.py)
against finite differences of the pure-Python function, and their forward results against
numba.njit."""
import math

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

from conftest import check_fd

X6 = np.linspace(0.1, 1.2, 6)
Y4 = np.linspace(1.0, 2.0, 4)
M34 = np.linspace(-0.8, 1.1, 12).reshape(3, 4)


@nad.grad_jit
def discounted(rewards, gamma):
    total = 0.0
    for t, r in enumerate(rewards):
        total += gamma ** t * r
    return total


@nad.grad_jit
def weighted_from(x, start):
    s = 0.0
    for i, v in enumerate(x, start):
        s += i * v * v
    return s


@nad.grad_jit
def zip_products(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s += math.sin(a) * b
    return s


@nad.grad_jit
def kde_log_density(points, x, w, h):
    total = 0.0
    for p in points:
        dens = 0.0
        for xi, wi in zip(x, w):
            z = (p - xi) / h
            dens += wi * math.exp(-0.5 * z * z)
        total += math.log(dens / (h * math.sqrt(2.0 * math.pi)))
    return total


@nad.grad_jit
def zip_with_ranges(x, n):
    s = 0.0
    for i, v in zip(range(n), x):
        s += (i + 1) * v ** 2
    for j, v in zip(range(10, 1, -3), x):
        s += j * v
    return s


@nad.grad_jit
def enumerate_of_zip(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y), 1):
        s += i * a * b
    return s


@nad.grad_jit
def ndindex_forms(X):
    s = 0.0
    for idx in np.ndindex(X.shape):
        s += X[idx] ** 3
    for i, j in np.ndindex(*X.shape):
        s += math.exp(X[i, j]) * (i - j)
    for i, j in np.ndindex(2, X.shape[1]):
        s += X[i + 1, j] * X[i, j]
    return s


@nad.grad_jit(parallel=True)
def pndindex_copy(A):
    # Numba's test_parfors.test_partial_sum_1d_parallel, weighted: numba.pndindex runs the
    # primal's loop in parallel; the gradient reads it as np.ndindex
    result = np.zeros(A.shape, dtype=A.dtype)
    for idx in numba.pndindex(A.shape):
        result[idx] = A[idx] * A[idx]
    return np.sum(result * np.arange(A.size).reshape(A.shape))


@nad.grad_jit
def logsumexp_flat(A):
    m = -np.inf
    for v in A.flat:
        if v > m:
            m = v
    s = 0.0
    for v in A.T.flat:
        s += math.exp(v - m)
    return m + math.log(s)


@numba.njit
def squared_distance(a, b):
    s = 0.0
    for k in range(a.shape[0]):
        d = a[k] - b[k]
        s += d * d
    return s


@nad.grad_jit
def pair_potential(X):
    e = 0.0
    for i, xi in enumerate(X):
        for j, xj in enumerate(X):
            if j <= i:
                continue
            e += 1.0 / squared_distance(xi, xj)
    return e


@nad.grad_jit
def row_sums(X, w):
    s = 0.0
    for row in X:
        t = 0.0
        for v, wk in zip(row, w):
            t += v * wk
        s += math.tanh(t)
    return s


@numba.njit
def weighted_dot(a, w):
    s = 0.0
    for ai, wi in zip(a, w):
        s += ai * wi
    return s


@nad.grad_jit
def rows_through_a_helper(X, w):
    s = 0.0
    for row in X:
        s += math.sin(weighted_dot(row, w))
    return s


@nad.grad_jit
def scratch_grid(x):
    G = np.zeros((2, 3))
    for i, j in np.ndindex(G.shape):
        G[i, j] = x[i] * x[j + 1]
    s = 0.0
    for v in G.flat:
        s += v * v
    for row in G:
        s += row[2] * row[0]
    return s


@nad.grad_jit
def enumerate_break_continue(x, limit):
    s = 0.0
    for i, v in enumerate(x):
        if v < 0.3:
            continue
        s += v * v * i
        if s > limit:
            break
    return s


@nad.grad_jit
def ranges_zips_and_1d_ndindex(x, y, z):
    s = 0.0
    for i, j in enumerate(range(2, 9, 3)):
        s += i * j * x[i]
    for a, b, c in zip(x, y, z):
        s += a * b - c
    for k, (i, v) in enumerate(zip(range(5, 0, -2), x), 1):
        s += k * i * v
    for t in np.ndindex(3):
        s += x[t[0]] ** 2
    return s


@nad.grad_jit
def three_dimensions(T):
    s = 0.0
    for i, j, k in np.ndindex(T.shape):
        s += T[i, j, k] * (i + 2 * j + 3 * k)
    for v in T.flat:
        s += v * v
    for i, plane in enumerate(T):
        for row in plane:
            s += row[1] * row[2] * i
    return s


@nad.grad_jit
def computed_arrays_of_dimensions_known_once_typed(x):
    """The rows, and .flat, of arrays NumPy functions make (np.ravel(A)[k] for .flat)."""
    s = 0.0
    for row in np.outer(x, x):
        s += row[0] * row[2]
    for v in np.outer(x, x[:3]).flat:
        s += math.sin(v)
    for v in np.sin(x):
        s += v * v
    return s


@nad.grad_jit
def loops_over_written_tuples_and_lists(a, b, n):
    """Tuples and lists written in the function, looped over or read at an index known
    at run time (ad/capture/literal_items.py); the items are read as they were when built."""
    s = 0.0
    for v in (a, b, a * b):
        s += v * v
    for i, v in enumerate([a, b, 2.0]):
        s += i * v * v
    for u, w in zip((a, b), (b, a)):
        s += u * w * w
    t = (a, math.sin(b), a * b)
    a = 0.0                                 # t keeps the a it was built with
    for k in range(n):
        s += t[k % 3] ** 2 + t[-1 - k % 2]
    return s


@nad.grad_jit
def loops_over_written_tuples_of_arrays(x, y):
    s = 0.0
    for z in (x, y, x * y):
        s += np.sum(z ** 2)
    for k, z in enumerate([np.sin(x), y]):
        s += k * z[1] + z[0]
    return s


@numba.njit
def _squares(x):
    for i in range(len(x)):
        yield x[i] * x[i]


@numba.njit
def _signed_then_last(x, c):
    for v in x:
        if v > c:
            yield v
        else:
            yield -v * c
    yield c * c


@nad.grad_jit
def loops_over_generators(x, c):
    """Loops over @njit generators (ad/capture/generators.py): several yields, code between the
    generator's call and its loop, continue and break."""
    s = 0.0
    for v in _squares(x):
        s += math.sin(v)
    k = 0
    gen = _signed_then_last(x, c)
    t = 1.0
    for v in gen:
        k += 1
        if k == 3:
            continue
        s += v * t
        t *= 1.1
        if k > 5:
            break
    return s


PLANE = np.array([[0.0, 0.1], [1.1, 0.3], [0.4, 1.2], [1.3, 1.4]])
CASES = [
    (loops_over_generators, (X6, 0.5)),
    (loops_over_generators, (X6[:3], 2.0)),
    (loops_over_written_tuples_and_lists, (1.5, 0.7, 5)),
    (loops_over_written_tuples_of_arrays, (X6, X6[::-1].copy())),
    (discounted, (X6, 0.9)),
    (weighted_from, (X6, 3)),
    (zip_products, (X6, Y4)),
    (kde_log_density, (np.array([0.2, 0.7, 1.5]), X6, np.linspace(0.5, 1.0, 6), 0.4)),
    (zip_with_ranges, (X6, 4)),
    (enumerate_of_zip, (Y4, X6)),
    (ndindex_forms, (M34,)),
    (pndindex_copy, (M34,)),
    (logsumexp_flat, (M34,)),
    (pair_potential, (PLANE,)),
    (row_sums, (M34, Y4)),
    (rows_through_a_helper, (M34, Y4)),
    (scratch_grid, (X6,)),
    (ranges_zips_and_1d_ndindex, (X6[:5], Y4, np.linspace(-1.0, 0.0, 6))),
    (three_dimensions, (np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4),)),
    (enumerate_break_continue, (X6, 1.5)),
    (enumerate_break_continue, (X6, 100.0)),
    (computed_arrays_of_dimensions_known_once_typed, (X6,)),
]
IDS = ["%s-%d" % (f.py_func.__name__, k) for k, (f, _) in enumerate(CASES)]


@pytest.mark.parametrize("f,args", CASES, ids=IDS)
def test_gradient_matches_finite_differences(f, args):
    check_fd(f, *[a.copy() if isinstance(a, np.ndarray) else a for a in args])


@pytest.mark.parametrize("f,args", CASES, ids=IDS)
def test_forward_is_what_numba_computes(f, args):
    value, _ = f.value_and_grad(*args)
    assert value == numba.njit(f.py_func)(*args)


def test_analytic_gradients():
    # d/dr_t = gamma^t, d/dgamma = sum t gamma^(t-1) r_t
    t = np.arange(6)
    g_r, g_gamma = discounted.grad(X6, 0.9)
    np.testing.assert_allclose(g_r, 0.9 ** t, rtol=1e-13)
    assert g_gamma == pytest.approx(np.sum(t * 0.9 ** (t - 1.0) * X6), rel=1e-13)
    # zip stops at the shorter array: the tail of x gets no gradient.
    g_x, g_y = zip_products.grad(X6, Y4)
    np.testing.assert_allclose(g_x, np.r_[np.cos(X6[:4]) * Y4, 0.0, 0.0], rtol=1e-13)
    np.testing.assert_allclose(g_y, np.sin(X6[:4]), rtol=1e-13)


@nad.grad_jit
def ndindex_of_ranks_known_once_typed(x, y):
    """np.ndindex(Y.shape) and np.ndenumerate(Y) of arrays whose rank is known only once
    typed: the index is computed from the shape as typed."""
    Y = np.diag(x)
    s = 0.0
    for idx in np.ndindex(Y.shape):
        s += Y[idx] ** 2 * (idx[0] + 1)
    for idx, v in np.ndenumerate(np.outer(x, y)):
        i, j = idx
        s += np.sin(v) * j
    # numba-examples' Lennard-Jones: the index is read again by the reverse sweep (kept
    # as the count it is computed from).
    M = np.outer(x, y) ** 2
    out = np.empty(M.shape)
    for k in np.ndindex(out.shape):
        out[k] = math.sin(M[k]) * M[k]
    return s + np.sum(out * out)


@nad.grad_jit
def enumerate_of_a_dict(x):
    d = {1: 2.0, 2: 3.0}
    s = 0.0
    for i, (k, v) in enumerate(d.items()):
        s += v * x[i]
    return s


def test_enumerate_of_a_dict_is_refused_with_the_line():
    with pytest.raises(NonDifferentiableError) as ei:
        enumerate_of_a_dict.grad(X6)
    msg = str(ei.value)
    assert "enumerate_of_a_dict" in msg and "a dict, a set or an iterator" in msg
    assert "for i, (k, v) in enumerate(d.items())" in msg


def test_ndindex_and_ndenumerate_of_ranks_known_once_typed():
    check_fd(ndindex_of_ranks_known_once_typed, X6[:3].copy(), Y4.copy())
    assert ndindex_of_ranks_known_once_typed(X6[:3], Y4) == pytest.approx(
        ndindex_of_ranks_known_once_typed.py_func(X6[:3], Y4), rel=1e-13)


@nad.grad_jit
def over_ndenumerate(X, x, w):
    s = 0.0
    for (i, j), v in np.ndenumerate(X):
        s += v * v * (i + 2 * j) * w
    for (k,), v in np.ndenumerate(x):
        s += v * k
    A = np.outer(x, x)                  # its rank comes from its maker's name
    for idx in np.ndindex(A.shape):
        s += A[idx] * (idx[0] + 1)
    return s


def test_ndenumerate_and_ndindex_of_a_made_shape():
    check_fd(over_ndenumerate, np.arange(6.0).reshape(2, 3) / 7, np.array([0.3, 0.5]), 1.3)


def test_generators_in_forward_mode():
    x, c = X6.copy(), 0.5
    tx = np.linspace(-1.0, 1.0, 6)
    value, tangent = loops_over_generators.jvp((x, c), (tx, 0.3))
    g = loops_over_generators.grad(x, c)
    assert value == pytest.approx(loops_over_generators.py_func(x, c), rel=1e-12)
    assert tangent == pytest.approx(np.dot(g[0], tx) + g[1] * 0.3, rel=1e-10)


def test_generator_used_other_than_by_a_loop_is_refused_with_the_fix():
    @nad.grad_jit
    def summed(x):
        return sum(_squares(x))
    with pytest.raises(NonDifferentiableError, match=r"(?s)a generator used other than by "
                       r"one for loop.*loop over it with for.*_squares.*line"):
        summed.grad(X6)
