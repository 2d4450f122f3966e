"""Whole-array reductions (np.sum, np.mean, np.dot and their methods), array copies,
wrt=, and skipped reverses of loops that receive no adjoint, against finite differences."""
import math

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

from conftest import check_fd

X5 = np.linspace(0.1, 1.2, 5)
Y5 = np.linspace(2.0, 3.0, 5)


@nad.grad_jit
def reductions(x, y, w):
    return np.sum(x) * w + x.sum() + np.mean(y) * 2.0 + np.dot(x, y) + x.dot(x)


def test_sum_mean_dot_functions_and_methods():
    gx, gy, gw = check_fd(reductions, X5.copy(), Y5.copy(), 0.7)
    # Analytic: d/dx = w + 1 + y + 2x, d/dy = 2/n + x, d/dw = sum(x).
    np.testing.assert_allclose(gx, 0.7 + 1.0 + Y5 + 2.0 * X5, rtol=1e-12)
    np.testing.assert_allclose(gy, 2.0 / 5 + X5, rtol=1e-12)
    assert gw == pytest.approx(X5.sum(), rel=1e-12)


@nad.grad_jit
def row_sums(X, n):
    s = 0.0
    for i in range(X.shape[0]):
        r = np.sum(X[i])
        for _ in range(n):
            r = math.sin(r) + 0.5
        s += r
    return s


def test_sum_of_rows_inside_loops():
    check_fd(row_sums, np.linspace(0.1, 1.2, 6).reshape(3, 2), 4)


@nad.grad_jit
def scratch_then_sum(x, n):
    y = np.zeros(x.shape[0])
    for t in range(n):
        for i in range(x.shape[0]):
            y[i] = y[i] * 0.5 + x[i] * x[i]
    return np.sum(y)


def test_sum_of_a_scratch_array_written_in_loops():
    check_fd(scratch_then_sum, X5.copy(), 3)


@nad.grad_jit
def copies_as_state(x0, v0, k, steps):
    x = x0.copy()
    v = np.copy(v0)
    for t in range(steps):
        for i in range(x.shape[0]):
            v[i] += 0.01 * (-k * math.sin(x[i]))
            x[i] += 0.01 * v[i]
    return x[0] * x[0] + x[1] + np.sum(v)


def test_state_copied_from_arguments():
    check_fd(copies_as_state, np.array([0.3, 0.9, 1.2]), np.array([0.1, -0.2, 0.3]), 2.0, 60)


def test_dot_of_an_array_the_function_writes_reads_it_as_it_was():
    # np.dot reads y, which is written afterwards: the sweep reads a copy made before.
    def f(x):
        y = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            y[i] = x[i] * 2.0
        d = np.dot(y, x)
        for i in range(x.shape[0]):
            y[i] = 0.0
        return d + y[0]
    g = nad.grad_jit(f)
    gx, = check_fd(g, X5.copy())
    np.testing.assert_allclose(gx, 4.0 * X5, rtol=1e-14)      # d = 2 * sum(x * x)


def test_wrt_restricts_the_gradient():
    def f(x, w, k):
        s = 0.0
        for i in range(x.shape[0]):
            s += math.sin(x[i] * w) * k
        return s
    full = nad.grad_jit(f)
    part = nad.grad_jit(wrt=("x", 2))(f)
    gx, gw, gk = full.grad(X5.copy(), 0.8, 1.5)
    px, pw, pk = part.grad(X5.copy(), 0.8, 1.5)
    assert pw is None
    np.testing.assert_allclose(px, gx, rtol=1e-14)
    assert pk == pytest.approx(gk, rel=1e-14)
    with pytest.raises(ValueError, match="not an argument"):
        nad.grad_jit(wrt="nope")(f).grad(X5.copy(), 0.8, 1.5)


@nad.grad_jit
def option_payoff(S0, K, Z):
    total = 0.0
    for p in range(Z.shape[0]):
        s = S0
        for t in range(Z.shape[1]):
            s = s * math.exp(0.01 + 0.2 * Z[p, t])
        total += max(s - K, 0.0)
    return total / Z.shape[0]


def test_paths_with_zero_adjoint_skip_their_reverse():
    Z = np.random.default_rng(1).standard_normal((40, 8))
    src = option_payoff.inspect_adjoint(1.0, 1.05, Z)
    assert "clear(" in src          # out-of-the-money paths drop their history
    gS0, gK, _ = check_fd(option_payoff, 1.0, 1.05, Z)
    # Pathwise: dS_T/dS0 = S_T/S0 on paths that end in the money.
    ST = np.exp(np.cumsum(0.01 + 0.2 * Z, axis=1))[:, -1]
    assert gS0 == pytest.approx(np.mean(np.where(ST > 1.05, ST, 0.0)), rel=1e-10)
    assert gK == pytest.approx(-np.mean(ST > 1.05), rel=1e-10)
    # Many calls in a row: no history is left behind on the stacks.
    for _ in range(3):
        assert option_payoff.grad(1.0, 1.05, Z)[0] == pytest.approx(gS0, rel=1e-14)


@nad.grad_jit
def accumulate_into_elements(x, n):
    y = np.zeros(3)
    for t in range(n):
        for i in range(x.shape[0]):
            y[i % 3] += x[i] * math.sin(y[(i + 1) % 3] + t)
            y[i % 3] -= 0.1 * y[i % 3]
    return y[0] + 2.0 * y[1] * y[2]


@nad.grad_jit
def square_into(x):
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y[i] += x[i] * x[i]
    return y[0] + 3.0 * y[1]


def test_in_place_element_updates():
    # y[j] += e and y[j] -= e pass y[j]'s adjoint through unchanged: the backward reads
    # it into e's adjoint without clearing and restoring the element.
    assert "] = 0.0" not in square_into.inspect_adjoint(X5.copy())
    gx, = check_fd(square_into, X5.copy())
    np.testing.assert_allclose(gx, [2 * X5[0], 6 * X5[1], 0, 0, 0], rtol=1e-14)
    check_fd(accumulate_into_elements, X5.copy(), 4)


@nad.grad_jit
def iterate_values(x, n):
    s = 0.0
    for v in x:                       # iteration over the array itself
        w = v
        for _ in range(n):
            w = math.sin(w) * 1.1
        s = s * 0.5 + w
    return s


@nad.grad_jit
def iterate_written(x):
    y = x.copy()
    s = 0.0
    for t in range(3):
        for i in range(y.shape[0]):
            y[i] = y[i] * 0.5 + 0.1
        for v in y:
            s += v * v * (t + 1)
    return s


def test_for_over_array_values():
    check_fd(iterate_values, X5.copy(), 4)
    check_fd(iterate_values, X5[:0].copy(), 4)        # no iteration at all
    check_fd(iterate_written, X5.copy())


# ---------------------------------------------------------------------------------------
# Whole-array expressions on the gradient path are refused, never treated as constants.
# ---------------------------------------------------------------------------------------
def _sin_read_in_loop(x):
    y = np.sin(x)
    s = 0.0
    for i in range(x.shape[0]):
        s += y[i]
    return s


def _scaled_element(x):
    y = x * 2.0
    return y[1]


def _mean_of_exp(x):
    return np.mean(np.exp(x * 0.5))


def _sum_of_products(x):
    return np.sum(x[1:] * x[:-1])


def _transposed(x):
    y = x.T
    return y[0]


def _sorted(x):
    y = np.sort(x)
    return y[2]


def _differences(x):
    y = np.diff(x)
    return y[3]


def _array_of_list(x):
    y = np.array([x[0], x[1] * 2.0])
    return y[0] + y[1]


def _list_of_floats(x):
    values = [x[0], x[1]]
    return values[0] * values[1]


def _list_extended(x):
    values = [x[0]]
    values.extend([x[1]])
    return values[0] * values[1]


def _inplace_array(x):
    y = np.zeros(5)
    y += x
    return y[0]


def _complex_numbers(x):
    z = complex(x[0], x[1])
    return (z * z).real


def _array_methods(x):
    return x.argmax() + np.median(x)


def _cumulative_product(x):
    return np.sum(np.cumprod(x) * x)


def _nan_cumulative_product(x):
    return np.sum(np.nancumprod(x) * x)


def _item_method(x):
    return x[0] * x[1].item()


def _flat_iterator(x):
    s = 0.0
    for i in range(x.size):
        s += x.flat[i]
    return s


@pytest.mark.parametrize("fn", [_sin_read_in_loop, _scaled_element, _mean_of_exp,
                                _sum_of_products, _transposed, _inplace_array,
                                _differences, _array_of_list, _sorted, _array_methods,
                                _cumulative_product, _item_method, _flat_iterator,
                                _nan_cumulative_product, _complex_numbers])
def test_whole_array_expressions_differentiate(fn):
    check_fd(nad.grad_jit(fn), X5.copy())


def test_a_list_of_floats_made_in_the_function_differentiates():
    check_fd(nad.grad_jit(_list_of_floats), X5.copy())


@pytest.mark.parametrize("fn,what,line", [
    (_list_extended, "calling .extend on the list 'values'", "values.extend([x[1]])"),
])
def test_whole_array_expressions_are_refused(fn, what, line):
    f = nad.grad_jit(fn)
    with pytest.raises(NonDifferentiableError) as ei:
        f.grad(X5.copy())
    msg = str(ei.value)
    assert fn.__name__ in msg and what in msg and line in msg, msg


@nad.grad_jit
def tuple_of_arrays(x, y):
    pair = (x, y)
    a = pair[0]
    b = pair[1]
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i] * b[i]
    return s


def test_arrays_read_through_a_tuple():
    gx, gy = check_fd(tuple_of_arrays, X5.copy(), Y5.copy())
    np.testing.assert_allclose(gx, Y5 ** 2, rtol=1e-12)
    np.testing.assert_allclose(gy, 2.0 * X5 * Y5, rtol=1e-12)


@numba.njit
def _square_and_next(v):
    return v * v, v + 1.0


@nad.grad_jit
def tuple_from_a_call(x):
    s = 0.0
    for i in range(x.shape[0]):
        p, q = _square_and_next(x[i])
        s += p * q
    return s


def test_tuple_returned_by_a_called_function():
    (gx,) = check_fd(tuple_from_a_call, X5.copy())
    np.testing.assert_allclose(gx, 3.0 * X5 ** 2 + 2.0 * X5, rtol=1e-12)


# ---------------------------------------------------------------------------------------
# Filling arrays: np.full with a differentiated value, a scalar stored into a slice; calls
# that write into arrays the gradient reads are refused.
# ---------------------------------------------------------------------------------------
@nad.grad_jit
def filled(x, c):
    y = np.full(4, c * 2.0)
    z = np.full_like(x, x[0])
    s = 0.0
    for i in range(4):
        s += y[i] * x[i] + z[i] * z[i]
    return s


@nad.grad_jit
def scalar_into_slices(x, c):
    y = np.zeros((3, 5))
    y[1:, :] = c
    y[0, ::2] = x[1]
    y[2, 3] = x[0] * c
    s = 0.0
    for i in range(3):
        for j in range(5):
            s += y[i, j] * x[j]
    return s


def test_full_and_slice_stores_differentiate():
    x = X5.copy()
    gx, gc = check_fd(filled, x, 0.7)
    assert gc == pytest.approx(2.0 * x[:4].sum(), rel=1e-12)
    gx, gc = check_fd(scalar_into_slices, x, 0.7)
    # s = c * (sum(x) for row 1) + c * sum(x) over row 2 but y[2,3] = x0 c, + x1 (x0+x2+x4)
    want_c = x.sum() + (x.sum() - x[3]) + x[0] * x[3]
    assert gc == pytest.approx(want_c, rel=1e-12)


def _fills_in_place(x):
    y = np.empty(3)
    y.fill(x[0])
    return y[1] * 2.0


def _sorts_in_place(x):
    y = x.copy()
    y.sort()
    return y[0]


@pytest.mark.parametrize("fn", [_fills_in_place, _sorts_in_place])
def test_methods_writing_into_read_arrays_are_stores(fn):
    # (rewritten as y[:] = x[0] and y[:] = np.sort(y): tests/cpu/test_grad_writes.py)
    check_fd(nad.grad_jit(fn), X5.copy())


@nad.grad_jit
def sorts_its_argument_off_the_path(x, w):
    x.sort()
    return w * 3.0


def test_grad_leaves_an_argument_sorted_in_place_unchanged():
    x = X5[::-1].copy()
    before = x.copy()
    gx, gw = sorts_its_argument_off_the_path.grad(x, 0.5)
    np.testing.assert_array_equal(x, before)
    assert gw == 3.0 and not gx.any()
