"""grad_jit on the CPU: gradients through loops (recurrences, sums, nested and sibling
loops), branches, ``while``, ``break``, ``continue`` and ``return`` in loops, ranges with
negative steps, 2-D and scratch arrays.

Every gradient is compared with central finite differences of the pure-Python function
(``f.py_func``) or with analytic values. Compiled functions are defined once at module level
and shared between tests: compilation dominates the run time.
"""
import math
import re

import numpy as np
import pytest

import numba_adstack as nad

from conftest import check_fd, fd_grad
from cpu_programs import branch_carried, decay, newton_sqrt, sinrec, sinrec_analytic

RNG = np.random.default_rng(1234)
X8 = RNG.uniform(0.1, 0.9, 8)
W8 = RNG.uniform(0.1, 0.9, 8)


# ---------------------------------------------------------------------------------------
# Recurrences and sums
# ---------------------------------------------------------------------------------------
def test_decay_recurrence_dynamic_range_analytic():
    x = np.array([2.0, 0.5])
    n = 37
    g = decay.grad(x, n)
    assert g[1] is None
    np.testing.assert_allclose(g[0], [0.9 ** n, 1.0 - 0.9 ** n], rtol=1e-12)
    check_fd(decay, x, n)


@nad.grad_jit
def sum_static(x):
    s = 0.0
    for i in range(4):
        s += x[i] * x[i]
    return s


@nad.grad_jit
def sum_dynamic(x, w, n):
    s = 0.0
    for i in range(n):
        s += w[i] * x[i] * x[i]
    return s


def test_sum_static_loop():
    x = X8[:4].copy()
    (gx,) = sum_static.grad(x)
    np.testing.assert_allclose(gx, 2.0 * x, rtol=1e-14)


def test_sum_dynamic_loop():
    n = 6
    gx, gw, gn = sum_dynamic.grad(X8, W8, n)
    assert gn is None
    want_x = np.zeros(8)
    want_x[:n] = 2.0 * W8[:n] * X8[:n]
    want_w = np.zeros(8)
    want_w[:n] = X8[:n] ** 2
    np.testing.assert_allclose(gx, want_x, rtol=1e-14)
    np.testing.assert_allclose(gw, want_w, rtol=1e-14)


@nad.grad_jit
def scaled_sum(x, a, n):
    s = 0.0
    for i in range(n):
        s += a * x[i]
    return s


def test_untouched_adjoints_are_positive_zero():
    # Scalar adjoints are reset to -0.0 inside the backward (so LLVM can fold the first
    # accumulation); what the user gets back is the ordinary 0.0.
    gx, ga, gn = scaled_sum.grad(X8, 1.5, 0)
    assert ga == 0.0 and not math.copysign(1.0, ga) < 0
    assert not np.signbit(gx).any() and not gx.any()
    gx, ga, _ = scaled_sum.grad(X8, 1.5, 3)
    assert ga == pytest.approx(X8[:3].sum(), rel=1e-14)
    np.testing.assert_allclose(gx, np.r_[np.full(3, 1.5), np.zeros(5)], rtol=1e-14)


# Kept derivatives: for y = sin(x) in a loop, the replay pushes cos(x) instead of x when the
# sweep needs x for nothing else.
@nad.grad_jit
def sin_drive(x, w, n):
    v = x[0]
    for _ in range(n):
        v = math.sin(v) * 1.01 + 0.1 * w
    return v


@nad.grad_jit
def sin_and_square(x, n):
    v = x[0]
    for _ in range(n):
        v = math.sin(v) + 0.1 * v * v      # v is needed for the product too
    return v


@nad.grad_jit
def sin_times_cos(x, n):
    v = x[0]
    for _ in range(n):
        v = math.sin(v) * math.cos(v) + 0.5  # two calls read v
    return v


@nad.grad_jit
def branch_calls(x, n):
    v = x[0]
    for i in range(n):
        if v > 0.3:
            v = math.asin(0.9 * v) * 0.8
        else:
            v = math.cosh(v) - 0.6
        v += 0.01 * i
    return v


def _forward_and_sweep(src):
    """The generated source split at the start of the reverse sweep."""
    i = src.index("while _m")
    return src[:i], src[i:]


def test_sin_keeps_its_derivative_not_its_operand():
    x, w, n = np.array([0.7]), 0.3, 25
    src = sin_drive.inspect_adjoint(x, w, n)
    fwd, sweep = _forward_and_sweep(src)
    assert re.search(r"= math\.cos\(", fwd) and "math.cos" not in sweep, src
    assert len(re.findall(r"adstack\(", src)) == 1, src
    # d v_n / d x and d v_n / d w by the chain rule, step by step.
    v, dx, dw = x[0], 1.0, 0.0
    for _ in range(n):
        dx, dw = 1.01 * math.cos(v) * dx, 1.01 * math.cos(v) * dw + 0.1
        v = math.sin(v) * 1.01 + 0.1 * w
    gx, gw, _ = sin_drive.grad(x, w, n)
    np.testing.assert_allclose(gx, [dx], rtol=1e-12)
    assert gw == pytest.approx(dw, rel=1e-12)


@pytest.mark.parametrize("f", [sin_and_square, sin_times_cos, branch_calls])
def test_operands_needed_elsewhere_stay_on_the_stack(f):
    x = np.array([0.45])
    src = f.inspect_adjoint(x, 12)
    _, sweep = _forward_and_sweep(src)
    if f is not branch_calls:
        assert "math.cos" in sweep, src    # the operand is kept; the sweep calls cos
    check_fd(f, x, 12)


def test_sin_recurrence_many_elements():
    x = RNG.uniform(-1.5, 1.5, 200)
    n = 30
    (gx, gn) = sinrec.grad(x, n)
    assert gn is None
    np.testing.assert_allclose(gx, sinrec_analytic(x, n), rtol=1e-12)
    check_fd(sinrec, x[:5].copy(), n)


def test_sin_recurrence_float32():
    x = RNG.uniform(-1.5, 1.5, 16).astype(np.float32)
    n = 12
    gx, _ = sinrec.grad(x, n)
    assert gx.dtype == np.float32 and gx.shape == x.shape
    np.testing.assert_allclose(gx, sinrec_analytic(x, n), rtol=2e-4, atol=1e-5)
    want = fd_grad(sinrec.py_func, (x, n))
    np.testing.assert_allclose(gx, want[0], rtol=1e-3, atol=1e-4)


@nad.grad_jit
def product(x, n):
    p = 1.0
    for _ in range(n):
        p = p * x[0]
    return p


def test_product_over_n_steps():
    x = np.array([1.1])
    for n in (1, 5, 13):
        (gx, _) = product.grad(x, n)
        np.testing.assert_allclose(gx, [n * 1.1 ** (n - 1)], rtol=1e-12)
    (gx, _) = product.grad(x, 0)
    np.testing.assert_array_equal(gx, [0.0])


@nad.grad_jit
def fib(x, n):
    p = x[0]
    q = x[1]
    for _ in range(n):
        p, q = q, p + q
    return p


def test_fibonacci_swap():
    x = np.array([0.3, 0.7])
    n = 10
    # p_n = F(n-1) x0 + F(n) x1 with F(0)=0, F(1)=1, F(-1)=1.
    F = [0, 1]
    for _ in range(n):
        F.append(F[-1] + F[-2])
    (gx, _) = fib.grad(x, n)
    np.testing.assert_allclose(gx, [F[n - 1], F[n]], rtol=1e-14)
    assert fib(x, n) == pytest.approx(F[n - 1] * 0.3 + F[n] * 0.7)


@nad.grad_jit
def int_index(x, n):
    j = 0
    s = 0.0
    for _ in range(n):
        s = s * 0.5 + x[j] * x[j]
        j = (j + 3) % len(x)
    return s


def test_integer_carried_index():
    check_fd(int_index, X8.copy(), 11)


@nad.grad_jit
def triangular(x, n):
    s = 0.0
    for i in range(n):
        for j in range(i, n):
            s += x[i] * math.sin(x[j])
    return s


def test_triangular_nested_loop():
    check_fd(triangular, X8.copy(), 7)


@nad.grad_jit
def five_carried(x, n):
    a = x[0]
    b = x[1]
    c = x[2]
    d = x[3]
    e = x[4]
    for _ in range(n):
        a, b, c, d, e = (0.5 * math.sin(b) + 0.1 * e, 0.9 * c + 0.1 * a,
                         math.cos(d) * 0.3, d * 0.8 + 0.2 * a * b, math.tanh(e + c))
    return a + 2.0 * b + 3.0 * c + 4.0 * d + 5.0 * e


def test_five_carried_variables():
    check_fd(five_carried, X8[:5].copy(), 9)


@nad.grad_jit
def siblings(x, n, m):
    v = x[0]
    for _ in range(n):
        v = math.sin(v) + x[1]
    u = v
    for i in range(m):
        u = u * x[2] + math.cos(v) * x[i % 3]
    s = 0.0
    for i in range(3):
        s += u * x[i]
    return s


def test_sibling_loops():
    check_fd(siblings, np.array([0.4, 0.3, 0.8]), 5, 6)


# ---------------------------------------------------------------------------------------
# Branches
# ---------------------------------------------------------------------------------------
def test_branch_on_carried_state():
    x = np.array([0.21, 0.37])
    # All three branches are taken along the way.
    taken = set()
    v = x[0]
    for _ in range(12):
        taken.add(0 if v > 1.0 else 1 if v > 0.5 else 2)
        v = v * 0.5 + x[1] if v > 1.0 else v * v + 0.3 if v > 0.5 else v + x[1] * x[1]
    assert taken == {0, 1, 2}
    check_fd(branch_carried, x, 12)


@nad.grad_jit
def cond_expr(x, n):
    s = 0.0
    for i in range(n):
        s += x[i] * x[i] if x[i] > 0.5 else 3.0 * x[i]
        s = s if s < 2.0 else 0.5 * s
    return s


def test_conditional_expressions():
    check_fd(cond_expr, X8.copy(), 8)


# ---------------------------------------------------------------------------------------
# while, break, continue, return in loops
# ---------------------------------------------------------------------------------------
@nad.grad_jit
def growth(x):
    v = x[0]
    k = 0
    while v < 10.0:
        v = v * 1.5 + x[1]
        k += 1
    return v * k


def test_while_growth_loop():
    x = np.array([0.3, 0.2])
    check_fd(growth, x)


def test_while_newton_sqrt_to_convergence():
    x = np.array([0.5, 2.0, 9.0, 123.4, 1e-3])
    assert newton_sqrt(x) == pytest.approx(np.sqrt(x).sum(), rel=1e-13)
    (gx,) = newton_sqrt.grad(x)
    np.testing.assert_allclose(gx, 0.5 / np.sqrt(x), rtol=1e-8)


@nad.grad_jit
def with_break(x, n):
    s = 0.0
    for i in range(n):
        if s > 1.5:
            break
        s += x[i] * x[i] + math.sin(s)
    return s * x[0]


def test_break():
    x = X8.copy()
    # The loop stops before n.
    s, i = 0.0, 0
    while i < 8 and s <= 1.5:
        s += x[i] * x[i] + math.sin(s)
        i += 1
    assert i < 8
    check_fd(with_break, x, 8)


@nad.grad_jit
def with_continue(x, n):
    s = 0.0
    for i in range(n):
        if i % 3 == 0:
            continue
        if x[i] < 0.3:
            continue
        s = s * 0.9 + math.sin(x[i]) * x[(i + 1) % n]
    return s


def test_continue():
    x = X8.copy()
    assert (x < 0.3).any()
    check_fd(with_continue, x, 8)


@nad.grad_jit
def return_in_loop(x, n):
    s = 0.0
    for i in range(n):
        s += x[i] * x[i]
        if s > 1.0:
            return s * x[i]
    return -s


@nad.grad_jit
def return_in_loop_simple(x, n):
    s = 0.0
    for i in range(n):
        s = s * 0.9 + x[i] * x[i]
        if s > 1.0:
            return 2.0 * s
    return -s


def test_return_inside_loop_simple():
    x = X8.copy()
    check_fd(return_in_loop_simple, x, 8)
    check_fd(return_in_loop_simple, x * 0.1, 8)
    assert return_in_loop_simple(x * 0.1, 8) < 0.0 < return_in_loop_simple(x, 8)


def test_return_inside_loop():
    x = X8.copy()
    check_fd(return_in_loop, x, 8)      # returns from inside the loop
    check_fd(return_in_loop, x * 0.1, 8)  # falls through to the final return
    assert return_in_loop(x * 0.1, 8) < 0.0 < return_in_loop(x, 8)


@nad.grad_jit
def while_break_continue(x, n):
    s = 0.0
    i = 0
    while True:
        i += 1
        if i >= n:
            break
        if x[i] > 0.6:
            continue
        s = s * math.cos(x[i]) + x[i - 1]
    return s


def test_while_true_with_break_and_continue():
    check_fd(while_break_continue, X8.copy(), 8)


# ---------------------------------------------------------------------------------------
# Ranges and arrays
# ---------------------------------------------------------------------------------------
@nad.grad_jit
def neg_step(x, n):
    s = 0.0
    for i in range(n - 1, -1, -1):
        s = s * 0.7 + math.sin(x[i])
    t = 0.0
    for i in range(n, 0, -3):
        t = t * x[i - 1] + 1.0
    return s * t


def test_negative_step_ranges():
    check_fd(neg_step, X8.copy(), 8)


@nad.grad_jit
def two_d(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        r = 0.0
        for j in range(x.shape[1]):
            r = r * 0.5 + x[i, j] * w[j]
        s += math.tanh(r)
    return s


def test_two_d_array_reads():
    x = RNG.uniform(-1, 1, (3, 4))
    check_fd(two_d, x, W8[:4].copy())


@nad.grad_jit
def scratch(x, n):
    z = np.zeros(n)
    e = np.empty(n)
    o = np.ones(n)
    l = np.empty_like(x)
    for i in range(n):
        e[i] = math.sin(x[i])
        l[i] = x[i] * x[i]
    for i in range(1, n):
        z[i] = z[i - 1] * 0.5 + e[i] * o[i]
        o[i] = o[i - 1] * l[i]
    s = 0.0
    for i in range(n):
        s += z[i] + o[i] + l[i] * e[i]
    return s


def test_scratch_arrays_written_and_read():
    check_fd(scratch, X8.copy(), 8)
