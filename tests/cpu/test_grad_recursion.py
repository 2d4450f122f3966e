"""Recursive functions: a call of a Numba function that calls itself is differentiated
through the function's own gradient, which calls itself (numba_adstack/ad/calls/recursion.py).
Each gradient is checked against central finite differences of the pure-Python function.
"""
import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack.errors import NonDifferentiableError

from lib_helpers import same_name


def central(f, x, eps=1e-6):
    """Central finite differences of the float function ``f`` at the float or array
    ``x``."""
    if np.ndim(x) == 0:
        return (f(x + eps) - f(x - eps)) / (2 * eps)
    out = np.zeros_like(x)
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        out.flat[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return out


# ---------------------------------------------------------------------- fib-style
@numba.njit
def fib(x, n):
    if n < 2:
        return x * (n + 1.0)
    return 0.5 * fib(x, n - 1) + np.sin(fib(x, n - 2))


@nad.grad_jit
def fib_loss(x, n):
    return fib(x, n) * x


@pytest.mark.parametrize("n", [0, 1, 2, 9])
def test_fib_two_recursive_calls(n):
    g, gn = fib_loss.grad(0.7, n)
    assert gn is None
    want = central(lambda x: fib.py_func(x, n) * x, 0.7)
    assert g == pytest.approx(want, rel=1e-7, abs=1e-9)
    assert fib_loss(0.7, n) == pytest.approx(fib.py_func(0.7, n) * 0.7, rel=1e-15)


# ---------------------------------------------------------------------- factorial-style
@numba.njit
def power(x, n):
    if n <= 0:
        return 1.0
    return x * power(x, n - 1)


@nad.grad_jit
def power_loss(x, n):
    return np.log(power(x, n))


@pytest.mark.parametrize("n", [0, 1, 5, 300])
def test_factorial_one_recursive_call(n):
    x = 1.01
    g, _ = power_loss.grad(x, n)
    # log(x ** n) = n log x.
    assert g == pytest.approx(n / x, rel=1e-12, abs=1e-15)
    assert g == pytest.approx(central(lambda v: np.log(power.py_func(v, n)), x),
                              rel=1e-6, abs=1e-9)


@numba.njit
def rise(a, b, n):
    """Two float arguments, swapped at each call."""
    if n == 0:
        return a * b
    return rise(b, a * 1.1, n - 1) + np.cos(a)


@nad.grad_jit
def rise_loss(a, b, n):
    return rise(a, b, n)


def test_several_float_arguments():
    ga, gb, gn = rise_loss.grad(0.3, 0.8, 6)
    assert gn is None
    assert ga == pytest.approx(central(lambda a: rise.py_func(a, 0.8, 6), 0.3), rel=1e-7)
    assert gb == pytest.approx(central(lambda b: rise.py_func(0.3, b, 6), 0.8), rel=1e-7)


# ---------------------------------------------------------------------- tree-walk-style
@numba.njit
def tree_sum(x, lo, hi):
    """Sum of f(x[i]) over [lo, hi), halving the range."""
    if hi - lo == 1:
        return np.sin(x[lo]) * x[lo]
    mid = (lo + hi) // 2
    return tree_sum(x, lo, mid) + tree_sum(x, mid, hi) * (1.0 + 0.1 * x[lo])


@nad.grad_jit
def tree_loss(x, w):
    return w * tree_sum(x, 0, x.shape[0])


@pytest.mark.parametrize("size", [1, 2, 7, 64])
def test_tree_walk_over_an_index_range(size):
    x = np.linspace(0.1, 1.3, size)
    gx, gw = tree_loss.grad(x, 0.5)
    np.testing.assert_allclose(
        gx, central(lambda v: 0.5 * tree_sum.py_func(v, 0, size), x), rtol=1e-6, atol=1e-9)
    assert gw == pytest.approx(tree_sum.py_func(x, 0, size), rel=1e-12)


@numba.njit
def halves(x):
    """Recursion over slices of the array (which keep its type)."""
    if x.shape[0] == 1:
        return x[0] * x[0] * x[0]
    h = x.shape[0] // 2
    return halves(x[:h]) * halves(x[h:])


@nad.grad_jit
def halves_loss(x):
    return halves(x)


def test_recursion_over_slices():
    x = np.array([0.9, 1.1, 1.2, 0.8, 1.05])
    np.testing.assert_allclose(halves_loss.grad(x)[0], central(halves.py_func, x),
                               rtol=1e-6)


# ---------------------------------------------------------------------- entry points
@nad.grad_jit
def self_fib(x, n):
    """A grad_jit function that calls itself."""
    if n < 2:
        return x
    return 0.9 * self_fib(x, n - 1) + np.cos(self_fib(x, n - 2))


def test_grad_jit_function_calling_itself():
    g, _ = self_fib.grad(0.4, 10)
    assert g == pytest.approx(central(lambda x: self_fib.py_func(x, 10), 0.4), rel=1e-7)
    value, (g2, _) = self_fib.value_and_grad(0.4, 10)
    assert value == pytest.approx(self_fib.py_func(0.4, 10), rel=1e-14)
    assert g2 == g
    _, pullback = self_fib.vjp(0.4, 10)
    assert pullback(2.0)[0] == pytest.approx(2 * g, rel=1e-14)


@nad.grad_jit(wrt=(0,))
def swap_wrt(a, b, n):
    """Only ``a`` is differentiated, but the recursive call passes ``a`` as ``b``."""
    if n == 0:
        return a * b
    return swap_wrt(b, a, n - 1) * a


def test_wrt_subset_of_a_function_calling_itself():
    g = swap_wrt.grad(0.4, 0.7, 5)
    assert g[1] is None and g[2] is None
    assert g[0] == pytest.approx(central(lambda a: swap_wrt.py_func(a, 0.7, 5), 0.4),
                                 rel=1e-7)


@numba.njit
def grad_from_jitted_code(x, n):
    return self_fib.grad(x, n)


@numba.njit
def loss_gradient_from_jitted_code(x, n):
    return fib_loss.grad(x, n)


def test_from_jitted_callers():
    assert grad_from_jitted_code(0.4, 10)[0] == pytest.approx(self_fib.grad(0.4, 10)[0],
                                                             rel=1e-14)
    assert loss_gradient_from_jitted_code(0.7, 6)[0] == pytest.approx(
        fib_loss.grad(0.7, 6)[0], rel=1e-14)


@numba.njit
def chain(x, n):
    if n == 0:
        return x
    return np.sin(chain(x, n - 1)) + 0.01 * x


@nad.grad_jit
def deep_loss(x, n):
    return chain(x, n)


def test_deep_recursion():
    g, _ = deep_loss.grad(0.5, 1000)
    assert g == pytest.approx(central(lambda x: chain.py_func(x, 1000), 0.5), rel=1e-6)


@numba.njit
def helper_calling_recursion(x, n):
    return power(x, n) + 1.0


@nad.grad_jit
def through_a_helper(x, n):
    return helper_calling_recursion(x, n) * 2.0


def test_recursive_call_inside_an_inlined_helper():
    g, _ = through_a_helper.grad(1.3, 4)
    assert g == pytest.approx(2 * 4 * 1.3 ** 3, rel=1e-12)


# ---------------------------------------------------------------------- refused
@numba.njit
def ping(x, n):
    if n <= 0:
        return x
    return pong(x * 1.1, n - 1)


@numba.njit
def pong(x, n):
    if n <= 0:
        return x
    return np.sin(ping(x, n - 1))


@nad.grad_jit
def mutual(x, n):
    return ping(x, n)


def test_mutual_recursion_refused_naming_the_functions():
    with pytest.raises(NonDifferentiableError,
                       match=r"ping and pong call each other \(mutual recursion\).*merge "
                             r"them into one function that calls itself"):
        mutual.grad(0.3, 4)


@numba.njit
def doubling(x, n):
    if n == 0:
        return x.copy()
    return doubling(x, n - 1) * 2.0


@nad.grad_jit
def array_result(x):
    return np.sum(doubling(x, 3))


def test_array_result_refused():
    with pytest.raises(NonDifferentiableError,
                       match=r"recursive call to doubling, which returns array.*returns a "
                             r"float"):
        array_result.grad(np.arange(4.0))


@numba.njit
def bump(x, n):
    if n == 0:
        return x[0]
    x[0] += 1.0
    return bump(x, n - 1) * x[1]


@nad.grad_jit
def writes_argument(x):
    return bump(x, 3)


@nad.grad_jit
def bump_self(x, n):
    if n == 0:
        return x[0]
    x[0] += 1.0
    return bump_self(x, n - 1) * x[1]


def test_writes_into_argument_refused():
    with pytest.raises(NonDifferentiableError,
                       match=r"'writes_argument'.*bump, which writes into its array "
                             r"argument\(s\) x.*must not change its arguments"):
        writes_argument.grad(np.arange(4.0))
    with pytest.raises(NonDifferentiableError,
                       match=r"'bump_self': it calls itself and writes into its array "
                             r"argument\(s\) x"):
        bump_self.grad(np.arange(4.0), 2)


@numba.njit
def narrowing(x, n):
    if n <= 0:
        return x
    return narrowing(np.float32(x), n - 1) * 1.5


@nad.grad_jit
def changes_types(x, n):
    return narrowing(x, n)


def test_recursive_call_changing_float_precision_refused():
    with pytest.raises(NonDifferentiableError,
                       match=r"passes arguments of types \(float32, int64\), where narrowing "
                             r"was called with \(float64, int64\).*floats of another "
                             r"precision are not.*same types"):
        changes_types.grad(0.5, 3)


@numba.njit
def walk(x, left, right, node):
    """A binary tree stored as int32 child indices (-1: none): the recursive calls pass
    int32 nodes where the first call passes an int64."""
    v = np.sin(x[node]) + 0.5 * x[node] * x[node]
    if left[node] >= 0:
        v += 0.8 * walk(x, left, right, left[node])
    if right[node] >= 0:
        v *= 1.0 + 0.1 * walk(x, left, right, right[node])
    return v


@nad.grad_jit
def walk_loss(x, left, right):
    return walk(x, left, right, 0)


def test_tree_walk_over_int32_child_indices():
    left = np.array([1, 3, 5, -1, -1, -1, -1], dtype=np.int32)
    right = np.array([2, 4, 6, -1, -1, -1, -1], dtype=np.int32)
    x = np.linspace(-0.7, 0.9, 7)
    gx = walk_loss.grad(x, left, right)[0]
    np.testing.assert_allclose(gx, central(lambda v: walk.py_func(v, left, right, 0), x),
                               rtol=1e-6, atol=1e-9)


@nad.grad_jit
def two_widths(x, n):
    return narrowing_free(x, np.int32(n)) + narrowing_free(x, n)


@numba.njit
def narrowing_free(x, n):
    if n <= 0:
        return x
    return np.sin(narrowing_free(x, n - 1))


def test_first_call_of_another_integer_width():
    g, _ = two_widths.grad(0.7, 4)
    assert g == pytest.approx(
        central(lambda x: 2 * narrowing_free.py_func(x, 4), 0.7), rel=1e-7)


def test_forward_mode():
    # The tangent of a recursive call is the dot product of the function's gradient with
    # the operands' tangents.
    value, tangent = fib_loss.jvp((0.7, 5), (1.0, None))
    assert value == pytest.approx(fib_loss(0.7, 5), rel=1e-15)
    assert tangent == pytest.approx(fib_loss.grad(0.7, 5)[0], rel=1e-13)
    assert self_fib.jvp((0.4, 6), (1.0, None))[1] == pytest.approx(
        self_fib.grad(0.4, 6)[0], rel=1e-13)
    ga, gb, _ = rise_loss.grad(0.3, 0.8, 6)
    assert rise_loss.jvp((0.3, 0.8, 6), (1.0, 2.0, None))[1] == pytest.approx(
        ga + 2.0 * gb, rel=1e-13)
    x, t = np.linspace(0.1, 1.3, 7), np.linspace(1.0, 2.0, 7)
    gx, gw = tree_loss.grad(x, 0.5)
    assert tree_loss.jvp((x, 0.5), (t, 1.0))[1] == pytest.approx(np.dot(gx, t) + gw,
                                                                 rel=1e-13)


@nad.grad_jit
def calls_a_gradient(x):
    return fib_loss.grad(x, 4)[0] * x


def test_second_order_refused():
    # (Met while Numba types the backward of calls_a_gradient: its TypingError carries it.)
    for call in (lambda: fib_loss.hvp((0.7, 5), (1.0, None)),
                 lambda: self_fib.hvp((0.4, 6), (1.0, None)),
                 lambda: calls_a_gradient.grad(0.7)):
        with pytest.raises(numba.core.errors.NumbaError,
                           match=r"a second derivative \(hvp, or the gradient of a "
                                 r"function calling .grad\) through a recursive call is "
                                 r"not generated"):
            call()


def test_code_calling_the_recursion_stays_out_of_numba_cache():
    # Reloaded from Numba's disk cache, machine code calling a recursive function can
    # crash (numba issue 6061): the code holding a recursive call is marked so that
    # Numba's cache refuses it, as it refuses dynamic globals.
    loss_gradient_from_jitted_code(0.7, 3)
    for cres in loss_gradient_from_jitted_code.overloads.values():
        assert cres.library.has_dynamic_globals


@numba.njit
def scaled(x, p, n):
    if n == 0:
        return x * p[0]
    return scaled(x * p[1], p, n - 1)


@nad.grad_jit
def tuple_argument(x, n):
    return scaled(x, (1.5, 0.9), n)


@nad.grad_jit
def scaled_self(x, p, n):
    if n == 0:
        return x * p[0]
    return scaled_self(x * p[1], p, n - 1)


def test_tuple_arguments_refused():
    with pytest.raises(NonDifferentiableError,
                       match=r"recursive call to scaled, with an argument of type "
                             r"UniTuple\(float64 x 2\).*items of a tuple"):
        tuple_argument.grad(0.5, 3)
    with pytest.raises(NonDifferentiableError,
                       match=r"recursive call to scaled_self: scaled_self takes a tuple or "
                             r"a function.*items of a tuple"):
        scaled_self.grad(0.5, (1.5, 0.9), 3)


@numba.njit
def square(x):
    return same_name.square(x) + 1.0          # the library's square: not this one


@nad.grad_jit
def square_loss(x):
    return square(x[0]) * x[1]


def test_a_wrapper_named_as_the_function_it_calls_is_no_recursion():
    x = np.array([0.3, 2.0])
    assert "recursive" not in square_loss.inspect_adjoint(x)
    np.testing.assert_allclose(square_loss.grad(x)[0], [2 * 0.3 * 2.0, 0.3 ** 2 + 1.0])
