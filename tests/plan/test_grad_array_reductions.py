"""Whole-array expressions whose only use is a reduction, made without the array
(emit/peephole.py, ``whole_array_forms``; the helpers in ad/runtime):

* ``np.sum(a * b)``, the adjoint of a float operand of an array rule, is
  ``sum_of_product(a, b)``: one pass, no array for the product;
* ``unreduce(g, x, None, False) * e``, the adjoint of a sum of all of ``x`` times ``e``, is
  ``broadcast_like(g * e, x)``: no array of the one number ``g``;
* ``acc(a, e, x)`` of an operator's result ``e`` is ``acc_new(a, e, x)``: the first
  contribution is the new array ``e`` itself, not zeros plus ``e``.

Each is exact: where the single pass does not apply (operands broadcast, a layout that
is not C, another dtype) the helpers compute the expression as written. The gradients
are checked against central finite differences of the pure-Python function, on programs
where the rewrite applies and on programs where its fast path must not (broadcasting,
views, transposes, arrays written in place after the sum, a sum along an axis).
"""
import ast

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack.ad.runtime import broadcast_like, sum_of_negated_product, sum_of_product

from conftest import assert_grads_close, check_fd, fd_grad


def sums_of_products(src):
    """The ``np.sum`` calls of ``src`` whose argument is a product (or its negation)."""
    out = []
    for n in ast.walk(ast.parse(src)):
        if isinstance(n, ast.Call) and ast.unparse(n.func) == "np.sum" and n.args:
            arg = n.args[0]
            if isinstance(arg, ast.UnaryOp) and isinstance(arg.op, ast.USub):
                arg = arg.operand
            if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Mult):
                out.append(ast.unparse(n))
    return out


# ------------------------------------------------------------------ the helpers, exactly
@numba.njit
def _sop(a, b):
    return sum_of_product(a, b), sum_of_negated_product(a, b)


@numba.njit
def _spread(p, x):
    return broadcast_like(p, x)


def _operands():
    rng = np.random.default_rng(3)
    m = rng.standard_normal((5, 4))
    v = rng.standard_normal(4)
    yield rng.standard_normal(7), rng.standard_normal(7)          # the single pass
    yield m, rng.standard_normal((5, 4))                          # 2-d, C
    yield m.T, rng.standard_normal((4, 5))                        # a transposed view
    yield m[:, ::2], rng.standard_normal((5, 2))                  # a strided view
    yield m, v                                                    # broadcast, 2-d by 1-d
    yield m[:, :1], m[:1, :]                                      # both broadcast
    yield m, 1.5                                                  # a float
    yield -0.5, v                                                 # a float on the left
    yield m.astype(np.float32), m.astype(np.float32)              # another dtype
    yield np.zeros(0), np.zeros(0)                                # empty


@pytest.mark.parametrize("a, b", list(_operands()))
def test_sum_of_product_is_the_sum_as_written(a, b):
    got, neg = _sop(a, b)
    product = np.asarray(a * b)
    if product.dtype != np.float64:
        np.testing.assert_allclose([got, neg], [np.sum(product), -np.sum(product)],
                                   rtol=1e-5)
        return
    # The same products added in the same order, from 0.0, as Numba's np.sum of the
    # product array (NumPy's own adds pairwise): bit for bit.
    want = 0.0
    for p in product.ravel():
        want += p
    assert got == want and neg == -want


@pytest.mark.parametrize("p, x", [
    (np.arange(6.0), np.zeros(6)),                      # its shape already: itself
    (np.arange(3.0), np.zeros((2, 3))),                 # broadcast up to x
    (np.arange(6.0).reshape(2, 3), np.zeros((1, 3))),   # x broadcasts up to p
    (2.5, np.zeros((2, 2))),                            # a number
    (np.arange(3, dtype=np.float32), np.zeros((2, 3))),  # float32 stays float32
])
def test_broadcast_like_is_the_broadcast_product(p, x):
    got = _spread(p, x)
    want = np.full(x.shape, 1.0, np.asarray(p).dtype) * p
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_broadcast_like_returns_the_array_of_the_right_shape_itself():
    p = np.arange(5.0)
    assert _spread(p, np.zeros(5)) is p or np.shares_memory(_spread(p, np.zeros(5)), p)


# ------------------------------------------------------------------ where it applies
def mixture_nll(x, mu, sigma, f):
    # an unbinned mixture likelihood in whole-array expressions: the scalars' adjoints are
    # sums of products, the log's adjoint the adjoint of a full sum
    z = (x - mu) / sigma
    ls = -0.5 * z * z - np.log(sigma)
    lb = -x
    return -np.sum(np.log(f * np.exp(ls) + (1.0 - f) * np.exp(lb)))


def _events(n=40, seed=5):
    rng = np.random.default_rng(seed)
    return np.abs(rng.normal(1.0, 0.8, n))


def test_mixture_likelihood_sums_products_in_one_pass():
    f = nad.grad_jit(mixture_nll)
    args = (_events(), 0.9, 0.6, 0.3)
    src = f.inspect_adjoint(*args)
    # (the products of a value's partial are guarded on arrays: rules/template.py)
    assert "sum_of_guarded_product(" in src and "broadcast_like(" in src
    assert "unreduce(" not in src and sums_of_products(src) == []
    check_fd(f, *args, rtol=1e-5, atol=1e-6)


def test_numba_stats_likelihood_as_published():
    pytest.importorskip("numba_stats")
    from benchmarks.workloads_library import numba_stats_nll
    f = nad.grad_jit(numba_stats_nll, wrt=(1, 2, 3, 4))
    x = np.concatenate([np.random.default_rng(1).normal(1.5, 0.3, 30), _events(50)])
    args = (x, 1.4, 0.35, 1.8, 0.3)
    src = f.inspect_adjoint(*args)
    # One element loop over the events, forward and reverse together, and nothing kept
    # per element (the library's loops fill their arrays from x[i]: plan/map_sums.py)
    assert "for _ew0i in range(" in src and "push(" not in src, src
    assert sums_of_products(src) == []
    want = fd_grad(numba_stats_nll, args)
    assert_grads_close(f.grad(*args), (None,) + want[1:], args, rtol=1e-5, atol=1e-6)


def squared_in_place(x, s):
    z = x * s
    for i in range(z.shape[0]):
        z[i] = z[i] * z[i]
    return np.sum(s * np.exp(z))


def test_checked_mode_lets_acc_new_take_an_adjoint_with_none_yet():
    # boundscheck=True checks every read of an adjoint array; acc_new's first argument
    # has no contribution yet here (z's adjoint starts as the exp rule's product), as
    # acc's may
    f = nad.grad_jit(boundscheck=True)(squared_in_place)
    args = (np.linspace(0.1, 0.9, 6), 0.7)
    src = f.inspect_adjoint(*args)
    assert any(ln.strip().startswith("z_bar = acc_new_checked(z_bar, ") and "written(" in ln
               for ln in src.splitlines()), src
    check_fd(f, *args)


def test_hvp_differentiates_the_helpers():
    # hvp runs forward mode over the backward: each helper has its tangent
    f = nad.grad_jit(mixture_nll)
    x = _events(12)
    args = (x, 0.9, 0.6, 0.3)
    v = (np.random.default_rng(2).standard_normal(x.shape) * 0.1, 0.3, -0.2, 0.5)
    got = f.hvp(args, v)

    def along(h):
        return f.grad(*[a + h * d for a, d in zip(args, v)])
    h = 1e-6
    plus, minus = along(h), along(-h)
    for k in range(len(args)):
        np.testing.assert_allclose(got[k], (plus[k] - minus[k]) / (2 * h), rtol=1e-5,
                                   atol=1e-6)


# ------------------------------------------------------ where the fast path must not apply
def broadcast_sum(u, v, s):
    # u (m, n) times v (n,): the sum's adjoint times v has v's shape, not u's
    return np.sum(s * np.sin(u * v))


def test_broadcast_operands_of_a_full_sum():
    f = nad.grad_jit(broadcast_sum)
    rng = np.random.default_rng(7)
    args = (rng.standard_normal((3, 4)), rng.standard_normal(4), 0.7)
    check_fd(f, *args)


def transposed_scale(a, s):
    # s's adjoint sums the sum's adjoint times a transposed view (not C-contiguous)
    return np.sum(np.cos(s * a.T) * np.arange(a.shape[0]))


def test_transposed_view_operand():
    f = nad.grad_jit(transposed_scale)
    args = (np.random.default_rng(8).standard_normal((4, 3)), 0.8)
    check_fd(f, *args)


def written_after_the_sum(x, s):
    # the array the sum reads is written in place afterwards, then summed again
    y = s * np.exp(x)
    t = np.sum(y)
    y *= s
    y += x
    return t * t + np.sum(y * x)


def test_array_written_in_place_after_the_sum():
    f = nad.grad_jit(written_after_the_sum)
    args = (np.random.default_rng(9).standard_normal(6) * 0.3, 1.2)
    check_fd(f, *args)


def views_of_one_array(x, s):
    # two overlapping views of one array, and the sum read twice
    a = x[1:]
    b = x[:-1]
    t = np.sum(s * a * b)
    return t + t * np.sum(np.tanh(s * b))


def test_overlapping_views_and_a_sum_read_twice():
    f = nad.grad_jit(views_of_one_array)
    args = (np.random.default_rng(10).standard_normal(7), 0.6)
    check_fd(f, *args)


def sum_along_axis(m, s):
    # np.sum along an axis: its adjoint is an array (unreduce with an axis stays)
    r = np.sum(np.exp(s * m), axis=0)
    return np.sum(np.log(r) * s)


def test_sum_along_an_axis():
    f = nad.grad_jit(sum_along_axis)
    args = (np.random.default_rng(11).standard_normal((3, 5)) * 0.5, 0.9)
    src = f.inspect_adjoint(*args)
    assert "unreduce(" in src       # the sum along axis 0 keeps its rule
    check_fd(f, *args)
