"""Adjoints of np.dot and @ added in place into an adjoint array that exists already
(``add_dot_vjp_a(X_bar, g, X, w)``: the outer product goes straight into ``X_bar``), against
finite differences: into argument adjoints, their transposes and views, computed arrays'
own adjoints and their views, with an operand that is the other's transpose."""
import numpy as np
import pytest

import numba_adstack as nad

from conftest import check_fd


@nad.grad_jit
def descent(X, y, w0, lr):
    """Logistic regression, three steps of gradient descent (benchmark workload 6)."""
    n = X.shape[0]
    w = w0.copy()
    for _ in range(3):
        p = 1.0 / (1.0 + np.exp(-np.dot(X, w)))
        w -= lr * np.dot(X.T, p - y) / n
    z = X @ w
    return np.sum(np.log(1.0 + np.exp(z)) - y * z) / n


@nad.grad_jit
def gram(A, C):
    """The operands of A @ A.T are one array and its transpose: both contributions add
    into A's adjoint, once through its transpose."""
    G = np.dot(A, A.T)
    return np.sum(G * C) + np.sum((A.T @ A) ** 2)


@nad.grad_jit
def views(X, u, v, M):
    """Into views of an argument's adjoint (rows, every other row, a transposed block),
    and into a computed array's own adjoint and a view of it."""
    s = np.sum(np.dot(X[1:4], u) ** 2) + np.sum(np.dot(X, u) * np.dot(X[::2].T, v[:3]).sum())
    Z = X * M
    s += np.sum(np.dot(Z[:, 1:3], u[:2]) ** 2) + np.dot(np.dot(Z, u), v)
    s += np.sum(v @ X[:, ::-1])
    return s


@nad.grad_jit
def shared_product(A, B, x):
    """A computed matrix read by three products: its adjoint accumulates in place."""
    W = A @ B
    return np.sum(np.dot(W, x) ** 2) + np.sum(np.dot(x, W) * x) + np.sum(W @ W.T)


def _logistic_args(n=9, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (rng.uniform(0.0, 1.0, n) < 0.5).astype(np.float64)
    return X, y, 0.3 * rng.standard_normal(d), 0.7


def test_gradient_descent_against_finite_differences():
    check_fd(descent, *_logistic_args(), rtol=1e-6, atol=1e-9)


def test_matrix_vector_adjoints_are_added_in_place():
    src = descent.inspect_adjoint(*_logistic_args())
    # X's adjoint takes the outer products of both dots in place, one through X_bar.T.
    assert "add_dot_vjp_a(X_bar," in src and "add_dot_vjp_a(X_bar.T," in src
    assert "+= dot_vjp_a(" not in src


def test_an_operand_and_its_transpose_against_finite_differences():
    rng = np.random.default_rng(1)
    check_fd(gram, rng.standard_normal((4, 3)), rng.standard_normal((4, 4)))


@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaPerformanceWarning")
def test_views_and_computed_adjoints_against_finite_differences():
    rng = np.random.default_rng(2)
    X, M = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    check_fd(views, X, rng.standard_normal(3), rng.standard_normal(5), M)


@pytest.mark.parametrize("order", ["C", "F"])
def test_accumulated_product_adjoints_against_finite_differences(order):
    rng = np.random.default_rng(3)
    A = np.asarray(rng.standard_normal((4, 4)), order=order)
    check_fd(shared_product, A, rng.standard_normal((4, 4)), rng.standard_normal(4))


def _hvp_cases():
    rng = np.random.default_rng(4)
    X, y, w0, lr = _logistic_args(seed=4)
    A, B, x = (rng.standard_normal((4, 4)), rng.standard_normal((4, 4)),
               rng.standard_normal(4))
    return [
        (descent, (X, y, w0, lr), (rng.standard_normal(X.shape), None,
                                   rng.standard_normal(w0.shape), None)),
        (shared_product, (A, B, x), (rng.standard_normal((4, 4)),
                                     rng.standard_normal((4, 4)), rng.standard_normal(4))),
    ]


@pytest.mark.parametrize("f, args, v", _hvp_cases(), ids=["descent", "shared_product"])
def test_hvp_through_the_in_place_adjoints_against_finite_differences_of_the_gradient(
        f, args, v):
    got = f.hvp(args, v)

    def along(h):
        return f.grad(*[a if d is None else a + h * d for a, d in zip(args, v)])
    h = 1e-6
    plus, minus = along(h), along(-h)
    for k in range(len(args)):      # every component of H v, directions or not
        np.testing.assert_allclose(got[k], (plus[k] - minus[k]) / (2 * h), rtol=1e-5,
                                   atol=1e-7)
