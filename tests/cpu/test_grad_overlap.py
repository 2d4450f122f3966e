"""A store or an in-place operator between overlapping views of one array: the gradient
of what Numba computes. A store copies as through a temporary (NumPy's semantics); an
in-place operator is Numba's element loop, which may read what it wrote (``u[1:] +=
u[:-1]`` is a running sum there): both against central differences of the function run
by Numba itself."""
import numpy as np
import numba
import pytest

import numba_adstack as nad
from conftest import assert_grads_close, fd_grad


def shift(x):
    u = x.copy(); u[1:] = u[:-1]; return u[2] + 0.5 * u[4]


def flip(x):
    u = x.copy(); u[::-1] = u; return u[0] + 0.25 * u[3]


def reverse_copy(x):
    u = x.copy(); u[:] = u[::-1]; return 2.0 * u[0] + u[1]


def second_name(x):
    u = x.copy(); w = u[1:]; w[:] = u[:-1]; return u[2] + u[5]


def add_next(x):
    u = x.copy(); u[:-1] += u[1:]; return u[0] + 0.1 * np.sum(u * u)


def add_previous(x):                 # Numba's loop reads what it wrote: a running sum
    u = x.copy(); u[1:] += u[:-1]; return np.sum(u * u)


def mul_next(x):
    u = x.copy(); u[:-1] *= u[1:]; return u[0] + np.sum(u)


def strided_updates(x):
    u = x.copy()
    u[::2] -= u[1::2]
    u[1:] /= u[:-1] + 2.0 * (u[:-1] == 0.0)     # a new array on the right: no overlap
    u[::-2] *= u[::2]
    return np.sum(u * u)


def grid(x):
    A = x.reshape(3, 4).copy()
    A[1:, :] = A[:-1, :]
    A[:, 1:] *= A[:, :-1]
    A[:, :-1] -= A[:, 1:]
    B = A[:, ::-1]
    B[1:, :] = A[:-1, :]
    return np.sum(A * A) + A[2, 1]


def transposed(x):
    A = x.reshape(3, 3).copy()
    A += A.T                     # Numba: element by element, reading written elements
    return np.sum(A * np.arange(9.0).reshape(3, 3))


def broadcast_row(x):
    A = x.reshape(3, 4).copy()
    A *= A[1]
    return np.sum(A * A)


def upwind(x, c, steps):
    u = x.copy()
    for t in range(steps):
        u[1:] -= c * (u[1:] - u[:-1])           # a new array on the right
        u[:-1] += c * u[1:]                     # a view on the right, in a loop
        u[1:] = u[:-1]
        u[:-1] *= u[1:]
    return np.sum(u * u)


def delay_line(x, steps):
    u = x.copy()
    s = 0.0
    k = 0
    while k < steps:
        s += u[-1] * u[0]
        u[1:] = u[:-1]
        u[0] = np.sin(s)
        k += 1
    return s + np.sum(u)


def shifted_by(x, k, m):
    """Overlap known only at run time: the shift and the length are arguments."""
    u = x.copy()
    u[k:k + m] = u[:m]
    u[:m] *= u[k:k + m]
    u[k:] += 0.5 * u[:-k]
    return np.sum(u * u)


X6 = np.array([.1, .2, .3, .4, .5, .6])
X12 = np.linspace(0.3, 1.4, 12)
X9 = np.linspace(0.2, 1.0, 9)

CASES = [(shift, (X6,)), (flip, (X6,)), (reverse_copy, (X6,)), (second_name, (X6,)),
         (add_next, (X6,)), (add_previous, (X6,)), (mul_next, (X6,)),
         (strided_updates, (X12,)), (grid, (X12,)), (transposed, (X9,)),
         (broadcast_row, (X12,)), (upwind, (X12, 0.3, 3)), (delay_line, (X6, 5)),
         (shifted_by, (X12, 2, 6)), (shifted_by, (X12, 7, 4))]


@pytest.mark.parametrize("fn,args", CASES,
                         ids=["%s%s" % (f.__name__, a[1:]) for f, a in CASES])
def test_overlapping_views(fn, args):
    primal = numba.njit(fn)      # the differences of what Numba computes
    g = nad.grad_jit(fn)
    value, grads = g.value_and_grad(*args)
    assert value == primal(*args)
    assert_grads_close(grads, fd_grad(primal, args), args, rtol=1e-6, atol=1e-7)


def _direction(a):
    return np.linspace(0.3, -0.2, a.size).reshape(a.shape)


@pytest.mark.parametrize("fn,args", [c for c in CASES if c[0] in (
    add_previous, mul_next, grid, transposed, broadcast_row)],
    ids=lambda c: getattr(c, "__name__", ""))
def test_overlapping_views_forward_mode(fn, args):
    primal = numba.njit(fn)
    t = _direction(args[0])
    value, tangent = nad.grad_jit(fn).jvp(args, (t,) + (None,) * (len(args) - 1))
    h = 1e-6
    rest = args[1:]
    want = (primal(args[0] + h * t, *rest) - primal(args[0] - h * t, *rest)) / (2 * h)
    assert value == primal(*args)
    np.testing.assert_allclose(tangent, want, rtol=1e-6)


def running_sums(x):
    u = x.copy(); u[1:] += u[:-1]; u[:-1] -= u[1:]; return np.sum(u * u * u)


def test_overlapping_sums_second_order():
    g = nad.grad_jit(running_sums)
    v = _direction(X6)
    (hv,) = g.hvp((X6,), (v,))
    h = 1e-5
    want = (g.grad(X6 + h * v)[0] - g.grad(X6 - h * v)[0]) / (2 * h)
    np.testing.assert_allclose(hv, want, rtol=1e-6, atol=1e-8)


def test_overlapping_products_second_order_refused():
    with pytest.raises(nad.NonDifferentiableError, match="between two views of one array"):
        nad.grad_jit(mul_next).hvp((X6,), (_direction(X6),))
