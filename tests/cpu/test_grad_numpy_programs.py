"""Whole-array NumPy programs as Numba users write them (least squares, softmax and
cross-entropy, a k-means step, a heat equation on slices, power iteration, Gauss-Seidel,
stacking and sorting), and float32 programs, through ``grad_jit`` against central finite
differences of the pure-Python function (in float64 for the float32 programs, at float32
tolerances; their gradients come back in float32)."""
import math

import numpy as np
import pytest

import numba_adstack as nad

from conftest import check_fd, fd_grad

RNG = np.random.default_rng(41)


def normal(*shape):
    return RNG.standard_normal(shape)


# ----------------------------------------------------------------------------- programs
@nad.grad_jit
def least_squares(X, y, w):
    r = X @ w - y
    return r @ r / X.shape[0] + 0.1 * np.linalg.norm(w) ** 2


@nad.grad_jit
def softmax_cross_entropy(X, W, labels):
    """The probabilities of the labels picked by two index arrays: p[rows, labels]."""
    z = X @ W
    z = z - z.max()
    e = np.exp(z)
    p = e / e.sum(axis=1).reshape(-1, 1)
    return -np.mean(np.log(p[np.arange(X.shape[0]), labels]))


@nad.grad_jit
def kmeans_step(X, C):
    d = ((X[:, np.newaxis, :] - C[np.newaxis, :, :]) ** 2).sum(axis=2)
    a = np.argmin(d, axis=1)
    s = 0.0
    for k in range(C.shape[0]):
        m = a == k
        if m.any():
            s += np.sum((X[m] - C[k]) ** 2)
    return s


@nad.grad_jit
def heat_slices(u0, dt):
    u = u0.copy()
    for t in range(10):
        u[1:-1] = u[1:-1] + dt * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


@nad.grad_jit
def power_iteration(A, v0):
    B = A + A.T
    v = v0 / np.linalg.norm(v0)
    for it in range(8):
        v = B @ v
        v = v / np.linalg.norm(v)
    return v @ B @ v


@nad.grad_jit
def gauss_seidel(A, b):
    n = b.shape[0]
    x = np.zeros(n)
    for sweep in range(6):
        for i in range(n):
            s = b[i]
            for j in range(n):
                if j != i:
                    s -= A[i, j] * x[j]
            x[i] = s / A[i, i]
    return np.sum(x * x)


@nad.grad_jit
def masks_and_cumsums(x, A):
    a = np.where(x > 0.0, x, 0.01 * x) * np.maximum(x, 0.0) + np.clip(x, -0.5, 0.5)
    m = x > 0.2
    z = x.copy()
    z[z < -0.5] = 0.0
    c = np.cumsum(x)
    return (np.sum(a) + x[m].sum() + (x[~m] ** 2).sum() + np.sum(z ** 3) + np.sum(c * c)
            + np.sum(np.sin(A.cumsum(axis=1))))


@nad.grad_jit
def stacked(a, b):
    """A copy of a slice of a computed array, taken after another use of it."""
    h = np.hstack((a, b))
    v = np.vstack((a, b))
    return np.sum(h ** 2) + np.sum(np.tanh(v)) + np.sum(np.dot(v, h[:, :4].T.copy()))


@nad.grad_jit
def shapes_and_orders(x, A, w):
    """Stacks of mixed ranks, flips, rolls, triangles, append, sort, median, average."""
    C = np.column_stack((x, A.T))
    V = np.vstack((x, np.sin(x))) + np.vstack((A, A * 2.0))[1:3]
    s = np.sum(C ** 3) + np.sum(np.tanh(V)) + np.sum(np.hstack((x, x * 2.0)) ** 2)
    s += np.sum(np.flip(A) * A) + np.sum(np.roll(x, 3) * x) + np.sum(np.swapaxes(A, 0, 1) ** 2)
    s += np.sum(np.triu(np.outer(x[:3], A[0, :3]), 1) ** 2) + np.sum(np.tril(x[:4]))
    s += np.sum(np.append(x, A[0]) ** 2) + np.sum(np.append(x, 2.0 * x[1]) ** 3)
    s += np.sum(np.sort(x) * np.arange(8.0)) + np.sum(np.sort(A) * np.arange(8.0))
    s += np.median(x) + np.median(A[:, :3]) + np.vdot(x, A[1])
    return s + np.average(x) + 3.0 * np.average(x, weights=w) + np.sum(np.fliplr(A) * A)


@nad.grad_jit
def newton_logistic(X, w, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    loss = -np.mean(y * np.log(p + 1e-9) + (1 - y) * np.log(1 - p + 1e-9))
    H = X.T @ (X * (p * (1 - p)).reshape(-1, 1))
    step = np.linalg.solve(H + np.eye(3), X.T @ (p - y))
    return loss + np.sum((w - step) ** 2)


@nad.grad_jit
def stores_by_index_arrays(X, idx, v):
    """Stores through an index array beside an integer or a slice; idx repeats a row:
    NumPy keeps the last write, so the earlier value gets no gradient."""
    Y = X * 1.0
    Y[idx, 1] = v
    Y[:, idx[:2]] = 2.0 * X[:, :2]
    return np.sum(Y ** 2)


def _well_conditioned(n):
    return 0.1 * normal(n, n) + 5.0 * np.eye(n)


PROGRAMS = {
    "least_squares": (least_squares, lambda: (normal(8, 3), normal(8), normal(3))),
    "softmax_cross_entropy": (softmax_cross_entropy, lambda: (
        normal(5, 4), normal(4, 3), np.array([0, 2, 1, 1, 0]))),
    "kmeans_step": (kmeans_step, lambda: (normal(7, 2), normal(3, 2))),
    "heat_slices": (heat_slices, lambda: (np.sin(np.linspace(0.0, 3.0, 12)), 0.2)),
    "power_iteration": (power_iteration, lambda: (normal(4, 4), np.ones(4))),
    "gauss_seidel": (gauss_seidel, lambda: (_well_conditioned(5), normal(5))),
    "masks_and_cumsums": (masks_and_cumsums, lambda: (normal(10), normal(3, 4))),
    "stacked": (stacked, lambda: (normal(3, 4), normal(3, 4))),
    "shapes_and_orders": (shapes_and_orders, lambda: (
        normal(8), normal(3, 8), RNG.uniform(0.5, 1.5, 8))),
    "newton_logistic": (newton_logistic, lambda: (
        normal(5, 3), normal(3), RNG.uniform(0.0, 1.0, 5))),
    "stores_by_index_arrays": (stores_by_index_arrays, lambda: (
        normal(5, 4), np.array([0, 3, 3, 1]), normal(4))),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_numpy_program_against_finite_differences(name):
    f, make_args = PROGRAMS[name]
    check_fd(f, *make_args(), rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------- float32
@nad.grad_jit
def mlp32(X, W1, w2):
    h = np.tanh(X @ W1)
    p = h @ w2
    return np.mean((p - 0.5) ** 2) + 0.01 * np.sum(W1 * W1) + np.dot(w2, w2)


@nad.grad_jit
def softmax_and_reductions(x, y):
    z = np.exp(x - x.max())
    s = z / z.sum()
    return (np.sum(s * y) + np.sum(np.sqrt(x * x + 1.0)) + np.prod(np.cos(y * 0.1))
            + np.std(x) + np.max(y) + np.linalg.norm(x) + np.sum(np.cumsum(x) * y))


@nad.grad_jit
def loops32(x, A):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(A.shape[1]):
            s += A[i, j] * math.sin(x[i]) * x[j % x.shape[0]]
    return s


@nad.grad_jit
def mixed_precision(x32, y64, A32):
    """float32 and float64 arrays in one program (np.dot on float32 operands only, as
    Numba's np.dot takes one dtype)."""
    z = x32 * y64 + np.sin(x32)
    return np.sum(z * z) + np.dot(A32 @ x32, x32) * y64[0]


@nad.grad_jit
def linalg32(A, b):
    x = np.linalg.solve(A, b)
    return np.sum(x * x) + np.sum(np.linalg.inv(A)) + np.linalg.det(A) + np.trace(A @ A.T)


def _f32(*arrays):
    return tuple(a.astype(np.float32) for a in arrays)


FLOAT32 = {
    "mlp": (mlp32, lambda: _f32(normal(5, 3), normal(3, 4), normal(4))),
    "softmax_and_reductions": (softmax_and_reductions, lambda: _f32(normal(6), normal(6))),
    "loops": (loops32, lambda: _f32(normal(4), normal(4, 3))),
    "mixed_precision": (mixed_precision, lambda: (
        normal(4).astype(np.float32), normal(4), normal(4, 4).astype(np.float32))),
    "linalg": (linalg32, lambda: _f32(_well_conditioned(4), normal(4))),
}


@pytest.mark.parametrize("name", sorted(FLOAT32))
def test_float32_program_against_finite_differences_in_float64(name):
    f, make_args = FLOAT32[name]
    args = make_args()
    got = f.grad(*args)
    want = fd_grad(f.py_func, args)
    for g, w, a in zip(got, want, args):
        assert g.dtype == a.dtype, (g.dtype, a.dtype)
        # float32 rounding of values of order one, carried through a few operations.
        np.testing.assert_allclose(g, w, rtol=2e-3 if a.dtype == np.float32 else 1e-6,
                                   atol=2e-3 if a.dtype == np.float32 else 1e-8)
