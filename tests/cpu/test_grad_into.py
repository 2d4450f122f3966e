"""``f.grad_into(out, *args)``: the gradient added into the caller's buffers, from Python
and from jitted code, against central finite differences of the Python function. Each
buffer starts with values of its own, which must stay under what is added: the forms
whose ordinary backward assigns an argument's adjoint (a loop reading each element once)
or clears it (an argument the function writes into) add here."""
import math

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

import numba_adstack as nad

from conftest import fd_grad

RNG = np.random.default_rng(34)


def _cosine(x, y):
    # pynndescent's cosine distance, as its authors write it
    result = 0.0
    norm_x = 0.0
    norm_y = 0.0
    for i in range(x.shape[0]):
        result += x[i] * y[i]
        norm_x += x[i] ** 2
        norm_y += y[i] ** 2
    if norm_x == 0.0 and norm_y == 0.0:
        return 0.0
    elif norm_x == 0.0 or norm_y == 0.0:
        return 1.0
    else:
        return 1.0 - (result / np.sqrt(norm_x * norm_y))


cosine = nad.grad_jit(_cosine, wrt="x", fastmath=True)
cosine_both = nad.grad_jit(_cosine)


@nad.grad_jit
def weighted(w, x):
    # each element read once in a loop of sums: grad assigns w's adjoint
    total = 0.0
    for i in range(w.shape[0]):
        total += w[i] * x[i] * x[i]
    return total


@nad.grad_jit
def whole(x, y):
    return np.sum(np.sin(x) * y) + np.dot(x, y)


@nad.grad_jit
def writes_arg(x):
    # the sweep clears the adjoint of the element it overwrites
    x[0] = x[1] * 2.0
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


@nad.grad_jit
def matrix(a, v):
    return np.sum(np.tanh(a @ v))


@nad.grad_jit(parallel=True)
def par(x):
    s = 0.0
    for i in numba.prange(x.shape[0]):
        s += math.exp(0.1 * x[i]) * x[i]
    return s


@nad.grad_jit(checkpoint="revolve", snapshots=3)
def stepped(u, k):
    for _ in range(20):
        u = u + 0.01 * k * (np.roll(u, 1) - 2.0 * u + np.roll(u, -1)) - 0.01 * u ** 3
    return np.sum(u * u)


def _add_check(f, out, args, which, rtol=1e-6, atol=1e-8):
    """``f.grad_into(out, *args)`` returns f's value and adds the finite-difference
    gradient of the arguments ``which`` into ``out``'s buffers."""
    buffers = out if isinstance(out, tuple) else (out,)
    before = [b.copy() for b in buffers]
    kept = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    value = f.grad_into(out, *args)
    np.testing.assert_allclose(value, f.py_func(*[a.copy() if isinstance(a, np.ndarray)
                                                  else a for a in args]), rtol=1e-12)
    want = fd_grad(f.py_func, args)
    for b, b0, k in zip(buffers, before, which):
        np.testing.assert_allclose(b, b0 + want[k], rtol=rtol, atol=atol)
    for a, a0 in zip(args, kept):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, a0)


def test_one_buffer_added_into():
    x, y = RNG.standard_normal(16), RNG.standard_normal(16)
    _add_check(cosine, RNG.standard_normal(16), (x, y), [0], atol=1e-7)


def test_every_array_differentiated_takes_a_tuple():
    x, y = RNG.standard_normal(9), RNG.standard_normal(9)
    _add_check(cosine_both, (RNG.standard_normal(9), RNG.standard_normal(9)), (x, y), [0, 1])
    _add_check(whole, (RNG.standard_normal(7), RNG.standard_normal(7)),
               (RNG.standard_normal(7), RNG.standard_normal(7)), [0, 1])


def test_assigned_adjoint_adds_instead():
    w, x = RNG.standard_normal(11), RNG.standard_normal(11)
    _add_check(weighted, (RNG.standard_normal(11), RNG.standard_normal(11)), (w, x), [0, 1])


def test_argument_written_into():
    _add_check(writes_arg, RNG.standard_normal(6), (RNG.standard_normal(6),), [0])


def test_matrix_float32_and_parallel():
    a, v = RNG.standard_normal((4, 3)), RNG.standard_normal(3)
    _add_check(matrix, (RNG.standard_normal((4, 3)), RNG.standard_normal(3)), (a, v), [0, 1])
    x = RNG.standard_normal(50)
    _add_check(par, RNG.standard_normal(50), (x,), [0])
    x32 = RNG.standard_normal(8).astype(np.float32)
    g = np.ones(8, np.float32)
    value = cosine.grad_into(g, x32, RNG.standard_normal(8).astype(np.float32))
    assert g.dtype == np.float32 and isinstance(value, float)


def test_checkpointed_loop():
    u, k = RNG.standard_normal(12), 1.0 + RNG.random(12)
    _add_check(stepped, (RNG.standard_normal(12), RNG.standard_normal(12)), (u, k), [0, 1],
               rtol=1e-5, atol=1e-7)


@numba.njit
def _pairs(X, Y, heads, tails):
    G = np.zeros_like(X)
    total = 0.0
    for k in range(heads.shape[0]):
        total += cosine.grad_into(G[heads[k]], X[heads[k]], Y[tails[k]])
    return total, G


@numba.njit
def _pairs_both(X, Y, heads, tails):
    GX, GY = np.zeros_like(X), np.zeros_like(Y)
    for k in range(heads.shape[0]):
        cosine_both.grad_into((GX[heads[k]], GY[tails[k]]), X[heads[k]], Y[tails[k]])
    return GX, GY


def test_from_jitted_loop():
    X, Y = RNG.standard_normal((5, 8)), RNG.standard_normal((5, 8))
    heads, tails = RNG.integers(0, 5, 30), RNG.integers(0, 5, 30)
    total, G = _pairs(X, Y, heads, tails)
    want_G, want_total = np.zeros_like(X), 0.0
    for h, t in zip(heads, tails):
        want_G[h] += fd_grad(_cosine, (X[h], Y[t]))[0]
        want_total += _cosine(X[h], Y[t])
    np.testing.assert_allclose(G, want_G, rtol=1e-6, atol=1e-7)
    assert abs(total - want_total) < 1e-10
    GX, GY = _pairs_both(X, Y, heads, tails)
    want_Y = np.zeros_like(Y)
    for h, t in zip(heads, tails):
        want_Y[t] += fd_grad(_cosine, (X[h], Y[t]))[1]
    np.testing.assert_allclose(GX, want_G, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(GY, want_Y, rtol=1e-6, atol=1e-7)


@numba.njit
def _into_wrong_shape(x, y):
    g = np.zeros(x.shape[0] + 1)
    return cosine.grad_into(g, x, y)


@numba.njit
def _into_wrong_dtype(x, y):
    g = np.zeros(x.shape[0], np.int64)
    return cosine.grad_into(g, x, y)


def test_errors_name_the_function_and_the_fix():
    x, y = RNG.standard_normal(4), RNG.standard_normal(4)
    with pytest.raises(ValueError, match="_cosine.grad_into: the buffer of 'x'.*shape"):
        cosine.grad_into(np.zeros(5), x, y)
    with pytest.raises(ValueError, match="read-only"):
        g = np.zeros(4)
        g.flags.writeable = False
        cosine.grad_into(g, x, y)
    with pytest.raises(TypeError, match="a tuple of 2 arrays"):
        cosine_both.grad_into(np.zeros(4), x, y)
    scaled = nad.grad_jit(lambda x, a: a * np.sum(x * x))
    with pytest.raises(TypeError, match="float argument 'a'.*wrt=.*value_and_grad"):
        scaled.grad_into(np.zeros(4), x, 2.0)
    with pytest.raises(ValueError, match="does not have its argument's shape"):
        _into_wrong_shape(x, y)
    with pytest.raises(TypingError, match="grad_into: the buffer of argument 0"):
        _into_wrong_dtype(x, y)


@numba.njit(parallel=True)
def _rows_in_prange(X, Y):
    GX, GY = np.zeros_like(X), np.zeros_like(Y)
    for k in numba.prange(X.shape[0]):
        cosine_both.grad_into((GX[k], GY[k]), X[k], Y[k])
    return GX, GY


def test_from_a_prange_body():
    X, Y = RNG.standard_normal((16, 5)), RNG.standard_normal((16, 5))
    GX, GY = _rows_in_prange(X, Y)
    for k in range(16):
        want = fd_grad(_cosine, (X[k], Y[k]))
        np.testing.assert_allclose(GX[k], want[0], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(GY[k], want[1], rtol=1e-6, atol=1e-7)
