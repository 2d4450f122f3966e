"""grad_jit on the CPU: gradients through loops, branches, while, break/continue and calls.

Every gradient is compared with central finite differences of the pure-Python function
(``f.py_func``) or with analytic values. Compiled functions are defined once at module level
and shared between tests: compilation dominates the run time.
"""
import math
import re

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import AdStackBudgetError, AdStackOverflowError, NonDifferentiableError

from conftest import assert_grads_close, check_fd, fd_grad

RNG = np.random.default_rng(1234)
X8 = RNG.uniform(0.1, 0.9, 8)
W8 = RNG.uniform(0.1, 0.9, 8)


# ---------------------------------------------------------------------------------------
# Recurrences and sums
# ---------------------------------------------------------------------------------------
@nad.grad_jit
def decay(x, n):
    v = x[0]
    for _ in range(n):
        v = v * 0.9 + 0.1 * x[1]
    return v


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


@nad.grad_jit
def sinrec(x, n):
    s = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        for j in range(n):
            v = math.sin(v) * 1.01
        s += v
    return s


def _sinrec_analytic(x, n):
    g = np.ones_like(x, dtype=np.float64)
    v = x.astype(np.float64)
    for _ in range(n):
        g = g * 1.01 * np.cos(v)
        v = np.sin(v) * 1.01
    return g


def test_sin_recurrence_many_elements():
    x = RNG.uniform(-1.5, 1.5, 200)
    n = 30
    (gx, gn) = sinrec.grad(x, n)
    assert gn is None
    np.testing.assert_allclose(gx, _sinrec_analytic(x, n), rtol=1e-12)
    check_fd(sinrec, x[:5].copy(), n)


def test_sin_recurrence_float32():
    x = RNG.uniform(-1.5, 1.5, 16).astype(np.float32)
    n = 12
    gx, _ = sinrec.grad(x, n)
    assert gx.dtype == np.float32 and gx.shape == x.shape
    np.testing.assert_allclose(gx, _sinrec_analytic(x, n), rtol=2e-4, atol=1e-5)
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
@nad.grad_jit
def branch_carried(x, n):
    v = x[0]
    for i in range(n):
        if v > 1.0:
            v = v * 0.5 + x[1]
        elif v > 0.5:
            v = v * v + 0.3
        else:
            v = v + x[1] * x[1]
    return v


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


@nad.grad_jit
def newton_sqrt(x):
    s = 0.0
    for i in range(x.shape[0]):
        a = x[i]
        y = a
        k = 0
        while abs(y * y - a) > 1e-14 * a and k < 100:
            y = 0.5 * (y + a / y)
            k += 1
        s += y
    return s


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
# Calls to plain njit helpers
# ---------------------------------------------------------------------------------------
@numba.njit
def _helper(a, b):
    return math.sin(a) * b + a * a


@numba.njit
def _loop_helper(x, n, c):
    t = 0.0
    for i in range(n):
        t = t * c + math.cos(x[i])
    return t


@nad.grad_jit
def calls_helper(x, n):
    s = 0.0
    for i in range(n):
        s += _helper(x[i], x[(i + 1) % n])
    return s


@nad.grad_jit
def calls_loop_helper(x, c, n):
    s = 0.0
    for k in range(2):
        s += _loop_helper(x, n, c) * x[k]
    return s


def test_call_plain_njit_helper():
    check_fd(calls_helper, X8.copy(), 8)


def test_call_njit_helper_with_loop():
    check_fd(calls_loop_helper, X8.copy(), 0.7, 6)


# ---------------------------------------------------------------------------------------
# Mass-spring simulation with in-place state updates
# ---------------------------------------------------------------------------------------
@nad.grad_jit
def spring_copy(x0, v0, k, steps):
    n = x0.shape[0]
    x = np.empty_like(x0)
    v = np.empty_like(v0)
    for i in range(n):
        x[i] = x0[i]
        v[i] = v0[i]
    dt = 0.01
    for t in range(steps):
        for i in range(n):
            left = x[i - 1] if i > 0 else 0.0
            right = x[i + 1] if i < n - 1 else 0.0
            a = -k * (2.0 * x[i] - left - right) - 0.1 * v[i]
            v[i] += dt * a
        for i in range(n):
            x[i] += dt * v[i]
    e = 0.0
    for i in range(n):
        e += (i + 1.0) * x[i] + 0.5 * v[i] * v[i]
    return e


@nad.grad_jit
def spring_inplace(x, v, k, steps):
    n = x.shape[0]
    dt = 0.01
    for t in range(steps):
        for i in range(n):
            left = x[i - 1] if i > 0 else 0.0
            right = x[i + 1] if i < n - 1 else 0.0
            a = -k * (2.0 * x[i] - left - right) - 0.1 * v[i]
            v[i] += dt * a
        for i in range(n):
            x[i] += dt * v[i]
    e = 0.0
    for i in range(n):
        e += (i + 1.0) * x[i] + 0.5 * v[i] * v[i]
    return e


X0S = np.array([0.1, -0.2, 0.3, 0.05])
V0S = np.array([0.5, 0.0, -0.4, 0.2])


@pytest.mark.parametrize("f", [spring_copy, spring_inplace], ids=["copy", "inplace"])
def test_mass_spring_simulation(f):
    x, v = X0S.copy(), V0S.copy()
    steps = 300
    g = check_fd(f, x, v, 3.0, steps, rtol=1e-5, atol=1e-7)
    # f.grad left the caller's arrays as they were (checked by check_fd); so did value_and_grad.
    val, g2 = f.value_and_grad(x, v, 3.0, steps)
    np.testing.assert_array_equal(x, X0S)
    np.testing.assert_array_equal(v, V0S)
    assert val == f.py_func(X0S.copy(), V0S.copy(), 3.0, steps)
    assert isinstance(g[2], float) and g[3] is None
    for a, b in zip(g[:3], g2[:3]):
        np.testing.assert_array_equal(a, b)


def test_mass_spring_inplace_primal_updates_arguments():
    x, v = X0S.copy(), V0S.copy()
    spring_inplace(x, v, 3.0, 10)
    xr, vr = X0S.copy(), V0S.copy()
    spring_inplace.py_func(xr, vr, 3.0, 10)
    np.testing.assert_array_equal(x, xr)
    np.testing.assert_array_equal(v, vr)
    assert not np.array_equal(x, X0S)


def _spring_short(x, v, k, steps):
    n = x.shape[0]
    for t in range(steps):
        for i in range(n):
            v[i] += 0.01 * (-k * x[i])
        for i in range(n):
            x[i] += 0.01 * v[i]
    return x[0] + 2.0 * x[1]


spring_frame = nad.grad_jit(_spring_short)
spring_heap = nad.grad_jit(storage="heap")(_spring_short)


def test_mass_spring_longer_than_ad_stack_size():
    # The history of values read inside nested run-time loops goes on growable heap
    # stacks by itself, so a simulation longer than ad_stack_size needs no option.
    x, v = np.array([0.9, 1.1]), np.array([0.1, 0.2])
    steps = 1100  # more than the default ad_stack_size of 1024
    src = spring_frame.inspect_adjoint(x, v, 2.0, steps)
    assert "'heap')" in src
    check_fd(spring_frame, x, v, 2.0, steps, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(x, [0.9, 1.1])
    check_fd(spring_heap, x, v, 2.0, steps, rtol=1e-5, atol=1e-7)
    check_fd(spring_frame, x, v, 2.0, 50)


@nad.grad_jit
def augmented(x, n):
    s = 1.0
    y = np.ones(3)
    for i in range(n):
        s *= x[i]
        s /= 1.0 + x[i]
        s -= 0.01 * x[i]
        s **= 1.1
        s += -x[i] + 2.0 * x[i]
        y[i % 3] *= x[i]
        y[(i + 1) % 3] += 0.1 * y[i % 3]
    return s + y[0] + 2.0 * y[1] + 3.0 * y[2]


def test_augmented_assignment_scalars_and_arrays():
    check_fd(augmented, np.array([0.9, 1.5, 1.2, 0.7]), 4)


@nad.grad_jit
def raises_on_negative(x, n):
    s = 0.0
    for i in range(n):
        if x[i] < 0.0:
            raise ValueError("negative input")
        s += x[i] * x[i]
    return s


def test_exception_in_function_propagates_from_grad():
    check_fd(raises_on_negative, np.array([0.9, 1.1]), 2)
    with pytest.raises(ValueError, match="negative input"):
        raises_on_negative.grad(np.array([0.9, -1.1]), 2)
    # Nothing is left behind: the next call is right.
    np.testing.assert_allclose(raises_on_negative.grad(np.array([0.5, 0.25]), 2)[0],
                               [1.0, 0.5], rtol=1e-14)


# ---------------------------------------------------------------------------------------
# Math functions through a dynamic loop
# ---------------------------------------------------------------------------------------
_NS = {"math": math, "np": np, "nad": nad}


def _through_loop(expr):
    """grad_jit of s = 0.5 * s + EXPR over a dynamic loop; EXPR sees a = x[i], b = w[i]."""
    src = ("def f(x, w, n):\n"
           "    s = 0.0\n"
           "    for i in range(n):\n"
           "        a = x[i]\n"
           "        b = w[i]\n"
           "        s = 0.5 * s + (%s)\n"
           "    return s\n" % expr)
    ns = dict(_NS)
    exec(src, ns)
    return nad.grad_jit(ns["f"])


# Each group is one compiled function summing its expressions (compiles dominate run time);
# every function of issue 3 appears, math.* and np.* twins alike.
MATH_GROUPS = [
    "math.sin(a) + math.cos(b) * a + math.tan(a) * b",
    "math.asin(a) * b + math.acos(b) * a + math.atan(a * b)",
    "math.atan2(a, b) + math.hypot(a, b) * a",
    "math.sinh(a) * b + math.cosh(b) * a + math.tanh(a * b)",
    "math.exp(a) * b + math.expm1(b) * a + math.exp2(a * b)",
    "math.asinh(a) * b + math.acosh(b + 1.5) * a + math.atanh(a * b)",
    "math.erf(a) * b + math.erfc(b) * a + math.radians(a) * b + math.degrees(b) * 0.01",
    "math.log(a) * b + math.log1p(b) * a + math.log10(a + b) + math.log2(b) * b",
    "math.sqrt(a) * b + math.pow(a, b) + math.fabs(a - 0.5) * b",
    "math.copysign(a, b - 0.5) + math.copysign(b, 0.5 - a) * a",
    "np.sin(a) + np.cos(b) * a + np.tan(a) * b",
    "np.arcsin(a) * b + np.arccos(b) * a + np.arctan(a * b)",
    "np.arctan2(a, b) + np.hypot(a, b) * a",
    "np.sinh(a) * b + np.cosh(b) * a + np.tanh(a * b)",
    "np.exp(a) * b + np.expm1(b) * a + np.exp2(a * b)",
    "np.arcsinh(a) * b + np.arccosh(b + 1.5) * a + np.arctanh(a * b)",
    "np.radians(a) * b + np.degrees(b) * 0.01 + np.deg2rad(b) * a + np.rad2deg(a) * 0.01",
    "np.log(a) * b + np.log1p(b) * a + np.log10(a + b) + np.log2(b) * b",
    "np.sqrt(a) * b + np.power(a, b) + np.fabs(a - 0.5) * b",
    "np.copysign(a, b - 0.5) + np.abs(a - 0.5) * b + np.absolute(b - 0.5)",
    "np.minimum(a, b) * a + np.maximum(a, b) * b",
    "min(a, b) * a + max(a, b) * b + abs(a - 0.5) * b + abs(0.5 - b)",
    "a ** b + a ** 2 + b ** 2.5 * a + (a * b) ** 3",
    "-a * b + a / b - b / (a + 1.0) + float(a) * b",
    "a % 0.3 + (a + 1.0) % b * a + a // 0.3 + (a * 7.0) // b * b",
]
_FUNCS = {}


def _get(expr):
    if expr not in _FUNCS:
        _FUNCS[expr] = _through_loop(expr)
    return _FUNCS[expr]


# Inputs inside every function's domain, away from kinks (a == b, a == 0.5, a % 0.3 == 0).
XM = np.array([0.13, 0.27, 0.42, 0.66, 0.71, 0.88])
WM = np.array([0.57, 0.19, 0.83, 0.36, 0.94, 0.48])


@pytest.mark.parametrize("expr", MATH_GROUPS)
def test_math_functions_through_dynamic_loop(expr):
    check_fd(_get(expr), XM.copy(), WM.copy(), 6, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("expr", ["math.floor(3.0 * a) * b", "math.ceil(3.0 * a) * b",
                                  "np.floor(3.0 * a) * b", "np.ceil(3.0 * a) * b",
                                  "(7.0 * a) // b", "int(a * 10.0) * b"])
def test_floor_ceil_floordiv_zero_gradient(expr):
    f = _get(expr)
    gx, gw, _ = f.grad(XM.copy(), WM.copy(), 6)
    np.testing.assert_array_equal(gx, np.zeros(6))
    if "//" in expr:
        np.testing.assert_array_equal(gw, np.zeros(6))
    elif "int(" in expr:
        want = np.floor(10.0 * XM) * 0.5 ** (5 - np.arange(6))
        np.testing.assert_allclose(gw, want, rtol=1e-14)
    else:
        # d/db of floor(3a)*b is floor(3a), weighted by 0.5 ** (n-1-i).
        fl = np.floor(3.0 * XM) if "floor" in expr else np.ceil(3.0 * XM)
        np.testing.assert_allclose(gw, fl * 0.5 ** (5 - np.arange(6)), rtol=1e-14)


# ---------------------------------------------------------------------------------------
# Arguments, ranges, arrays
# ---------------------------------------------------------------------------------------
@nad.grad_jit
def scalar_args(x, a, b, n):
    v = a
    for i in range(n):
        v = math.sin(v) * b + x[i] * a
    return v * b


def test_float_scalar_arguments():
    g = check_fd(scalar_args, X8.copy(), 0.4, 1.3, 7)
    assert isinstance(g[1], float) and isinstance(g[2], float) and g[3] is None


@nad.grad_jit
def scalar_only(a, b):
    v = a
    for _ in range(5):
        v = v * b + a
    return v


@nad.grad_jit
def int_and_bool_args(x, idx, flag, n):
    s = 0.0
    for k in range(n):
        s = s * 0.8 + x[idx[k]] * x[idx[k]]
    if flag:
        s = 2.0 * s
    return s


def test_int_array_and_bool_arguments_get_none():
    idx = np.array([3, 0, 3, 5, 1], dtype=np.int64)
    for flag in (True, False):
        g = check_fd(int_and_bool_args, X8.copy(), idx, flag, 5)
        assert g[1] is None and g[2] is None and g[3] is None


def test_scalar_only_arguments():
    check_fd(scalar_only, 0.3, 0.9)


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


# ---------------------------------------------------------------------------------------
# Dispatcher behaviour
# ---------------------------------------------------------------------------------------
PRIMAL_CASES = [
    (sinrec, lambda: (RNG.uniform(-1, 1, 20), 9)),
    (branch_carried, lambda: (np.array([0.21, 0.37]), 12)),
    (spring_copy, lambda: (X0S.copy(), V0S.copy(), 3.0, 50)),
    (newton_sqrt, lambda: (np.array([0.5, 2.0, 9.0]),)),
]


@pytest.mark.parametrize("f,make", PRIMAL_CASES,
                         ids=[f.py_func.__name__ for f, _ in PRIMAL_CASES])
def test_primal_equals_njit_and_value_and_grad(f, make):
    args = make()
    ref = numba.njit(f.py_func)(*args)
    assert f(*args) == ref
    val, g = f.value_and_grad(*args)
    assert val == ref
    g2 = f.grad(*args)
    for a, b in zip(g, g2):
        if a is None:
            assert b is None
        else:
            np.testing.assert_array_equal(a, b)


def test_second_call_compiles_nothing():
    x = np.array([2.0, 0.5])
    decay.grad(x, 3)
    n_back = len(decay._backwards)
    back = decay._backward((x, 3))
    sigs = list(decay.signatures)
    g1 = decay.grad(x, 5)
    decay.grad(np.array([1.0, 1.0]), 7)
    decay.value_and_grad(x, 9)
    assert len(decay._backwards) == n_back
    assert decay._backward((x, 3)) is back
    assert len(back.njit_fn.signatures) == 1
    assert list(decay.signatures) == sigs
    np.testing.assert_allclose(g1[0], [0.9 ** 5, 1 - 0.9 ** 5], rtol=1e-12)


def test_new_argument_types_get_their_own_backward():
    f = nad.grad_jit(decay.py_func)
    f.grad(np.array([2.0, 0.5]), 3)
    f.grad(np.array([2.0, 0.5], dtype=np.float32), 3)
    assert len(f._backwards) == 2
    g32 = f.grad(np.array([2.0, 0.5], dtype=np.float32), 4)[0]
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, [0.9 ** 4, 1 - 0.9 ** 4], rtol=1e-5)


def _plain_decay(x, n):
    v = x[0]
    for _ in range(n):
        v = v * 0.9 + 0.1 * x[1]
    return v


def test_grad_jit_of_existing_njit_dispatcher():
    d = numba.njit(fastmath=False)(_plain_decay)
    f = nad.grad_jit(d)
    assert isinstance(f, nad.GradDispatcher)
    assert f.py_func is _plain_decay
    x = np.array([2.0, 0.5])
    assert f(x, 6) == d(x, 6)
    np.testing.assert_allclose(f.grad(x, 6)[0], [0.9 ** 6, 1 - 0.9 ** 6], rtol=1e-12)


@nad.grad_jit
def _callee(x, n):
    v = x[0]
    for _ in range(n):
        v = math.sin(v) * 1.01
    return v


@numba.njit
def _caller(x, n):
    return 2.0 * _callee(x, n) + 1.0


def test_njit_function_calls_grad_jit_function():
    x = np.array([0.4])
    assert _caller(x, 7) == 2.0 * _callee(x, 7) + 1.0
    assert len(_caller.nopython_signatures) == 1
    # The callee still differentiates after being called from njit code.
    np.testing.assert_allclose(_callee.grad(x, 7)[0], _sinrec_analytic(x, 7), rtol=1e-12)


def test_inspect_adjoint_shows_stack_pushes():
    src = sinrec.inspect_adjoint(X8.copy(), 4)
    assert isinstance(src, str)
    assert "push(" in src and "pop(" in src
    compile(src, "<adjoint>", "exec")


# ---------------------------------------------------------------------------------------
# Stacks: overflow, heap storage, frame budget
# ---------------------------------------------------------------------------------------
def _long_loop(x, n):
    v = x[0]
    for _ in range(n):
        v = math.sin(v) * 1.01
    return v


small_stack = nad.grad_jit(ad_stack_size=16)(_long_loop)
heap_stack = nad.grad_jit(ad_stack_size=16, storage="heap")(_long_loop)


def test_overflow_then_fitting_call():
    x = np.array([0.4])
    with pytest.raises(AdStackOverflowError, match="ad_stack_size"):
        small_stack.grad(x, 100)
    (g, _) = small_stack.grad(x, 12)
    np.testing.assert_allclose(g, _sinrec_analytic(x, 12), rtol=1e-12)
    with pytest.raises(AdStackOverflowError):
        small_stack.value_and_grad(x, 17)
    (g, _) = small_stack.grad(x, 16)
    np.testing.assert_allclose(g, _sinrec_analytic(x, 16), rtol=1e-12)


def test_heap_storage_long_loop():
    x = np.array([0.4])
    (g, _) = heap_stack.grad(x, 2000)
    np.testing.assert_allclose(g, _sinrec_analytic(x, 2000), rtol=1e-10)
    src = heap_stack.inspect_adjoint(x, 2000)
    assert "push(" in src


def _ten_carried_src(*loops):
    names = ["c%d" % k for k in range(10)]
    lines = ["def f(x, n):"]
    lines += ["    %s = x[%d]" % (c, k) for k, c in enumerate(names)]
    for depth, loop in enumerate(loops):
        lines.append("    " * (depth + 1) + "for _ in %s:" % loop)
    rhs = ["math.sin(%s) * 0.9 + 0.1 * %s" % (names[k], names[(k + 1) % 10])
           for k in range(10)]
    lines.append("    " * (len(loops) + 1) + "%s = %s" % (", ".join(names), ", ".join(rhs)))
    lines.append("    return %s" % " + ".join(names))
    ns = dict(_NS)
    exec("\n".join(lines) + "\n", ns)
    return ns["f"]


@pytest.mark.parametrize("loops", [("range(3)",), ("range(3)", "range(4)")],
                         ids=["range3", "range3x4"])
def test_budget_constant_trip_count_sized_exactly(loops):
    # Sized by ad_stack_size, ten float64 stacks would take 320 KiB, over the 256 KiB budget;
    # constant trip counts (nested ones multiply) need only 3 or 12 slots each.
    f = nad.grad_jit(ad_stack_size=4096)(_ten_carried_src(*loops))
    x = RNG.uniform(-1, 1, 10)
    check_fd(f, x, 0)


def test_budget_error_dynamic_loop_then_process_goes_on():
    f = nad.grad_jit(ad_stack_size=8192)(_ten_carried_src("range(n)"))
    x = RNG.uniform(-1, 1, 10)
    with pytest.raises(AdStackBudgetError):
        f.grad(x, 3)
    # Another gradient still works.
    np.testing.assert_allclose(decay.grad(np.array([2.0, 0.5]), 2)[0], [0.81, 0.19])
    # Heap storage has no frame budget.
    h = nad.grad_jit(ad_stack_size=8192, storage="heap")(f.py_func)
    check_fd(h, x, 3)


# ---------------------------------------------------------------------------------------
# Constructs that cannot be differentiated
# ---------------------------------------------------------------------------------------
def uses_ldexp(x, n):
    s = 0.0
    for i in range(n):
        s += math.ldexp(x[i], 2)
    return s


def _line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return first + k
    raise AssertionError(text)


@pytest.mark.parametrize("fn,args,what,line", [
    (uses_ldexp, (X8, 4), "ldexp", "math.ldexp"),
])
def test_non_differentiable_construct_raises(fn, args, what, line):
    f = nad.grad_jit(fn)
    with pytest.raises(NonDifferentiableError) as ei:
        f.grad(*args)
    msg = str(ei.value)
    assert fn.__name__ in msg
    assert what in msg
    assert re.search(r"(:|line )%d\b" % _line_of(fn, line), msg), msg
    # The primal is unaffected.
    assert f(*args) == pytest.approx(fn(*args), rel=1e-12)


def test_no_rule_off_the_gradient_path_is_fine():
    def f(x, n):
        s = 0.0
        for i in range(n):
            s += x[i] * math.gamma(float(i) + 0.5)
        return s
    g = nad.grad_jit(f)
    gx, _ = g.grad(X8.copy(), 4)
    want = np.zeros(8)
    want[:4] = [math.gamma(float(i) + 0.5) for i in range(4)]
    np.testing.assert_allclose(gx, want, rtol=1e-14)


# ---------------------------------------------------------------------------------------
# prange: the primal runs in parallel as Numba runs it; the backward replays it serially.
# ---------------------------------------------------------------------------------------
@nad.grad_jit(parallel=True)
def prange_paths(x, w, n):
    out = np.empty(x.shape[0])
    for i in numba.prange(x.shape[0]):
        v = x[i]
        for _ in range(n):
            v = math.sin(v) * w[i % 2]
        out[i] = v
    s = 0.0
    for i in numba.prange(x.shape[0]):
        s += out[i] * out[i]
    return s


def test_prange_loops_differentiate():
    x = RNG.uniform(0.1, 1.0, 9)
    w = np.array([1.01, 0.97])
    assert prange_paths(x, w, 7) == pytest.approx(prange_paths.py_func(x, w, 7), rel=1e-12)
    check_fd(prange_paths, x, w, 7)


def _paths(S0, sigma, Z, w):
    # Independent paths summed: with parallel=True the backward runs them in parallel.
    total = 0.0
    for p in numba.prange(Z.shape[0]):
        s = S0
        row = Z[p]
        for t in range(Z.shape[1]):
            s = s * math.exp(sigma * row[t] - 0.5 * sigma * sigma) + w[p] * Z[p, t]
        total += s * s + np.sum(row) * w[p]
    return total / Z.shape[0]


def _shared_weight(x, w, n):
    # Every iteration reads w[0]: its adjoint is shared, so each thread adds into a copy.
    total = 0.0
    for p in numba.prange(x.shape[0]):
        v = x[p]
        for _ in range(n):
            v = math.sin(v) * w[0]
        total += v
    return total


paths_parallel = nad.grad_jit(parallel=True, ad_stack_size=16)(_paths)
paths_serial = nad.grad_jit(ad_stack_size=16)(_paths)
shared_parallel = nad.grad_jit(parallel=True, ad_stack_size=16)(_shared_weight)


def test_parallel_backward_of_independent_iterations():
    Z = RNG.standard_normal((12, 6))
    w = RNG.uniform(0.1, 0.3, 12)
    args = (1.3, 0.2, Z, w)
    src = paths_parallel.inspect_adjoint(*args)
    assert "numba.prange(" in src and "def _paths_iteration" in src, src
    assert "numba.prange(" not in paths_serial.inspect_adjoint(*args)
    got = check_fd(paths_parallel, *args)
    want = paths_serial.grad(*args)
    for g, s in zip(got, want):
        np.testing.assert_allclose(g, s, rtol=1e-12, atol=1e-15)


@nad.grad_jit(parallel=True)
def branching_iterations(x, a):
    # Found by the random parallel programs: an iteration that branches, its helper
    # inlined into the prange body, gave a wrong gradient.
    total = 0.0
    for p in numba.prange(x.shape[0]):
        f0 = x[p]
        f1 = x[(p + 1) % x.shape[0]]
        f2 = a * x[p]
        if f0 < f2:
            f0 = 0.5 * f0 + 0.4 * math.tanh(f2 + f0)
            f2 = 0.6 * math.tanh(f1 + f2)
            f1 = 0.6 * math.sin(f0)
        f1 = 0.5 * f1 + 0.4 * math.cos(f2)
        total += f0 + 0.7 * f1 - 0.3 * f2
    return total


def test_parallel_iterations_that_branch():
    rng = np.random.default_rng(1)
    check_fd(branching_iterations, rng.uniform(-1.0, 1.0, 5), float(rng.uniform(0.5, 1.5)))


def test_parallel_loop_with_a_shared_adjoint_uses_per_thread_copies():
    x = RNG.uniform(0.1, 1.0, 10)
    w = np.array([1.05])
    src = shared_parallel.inspect_adjoint(x, w, 4)
    assert "numba.prange(" in src and "_t_w_bar" in src and "_t_x_bar" not in src, src
    check_fd(shared_parallel, x, w, 4)


def test_parallel_loop_past_the_copy_limit_runs_serially(monkeypatch):
    from numba_adstack.ad.emit import parallel
    monkeypatch.setattr(parallel, "SHARED_COPY_LIMIT", 1)
    f = nad.grad_jit(parallel=True, ad_stack_size=16)(_shared_weight)
    x = RNG.uniform(0.1, 1.0, 10)
    w = np.array([1.05])
    assert "raise MemoryError" in f.inspect_adjoint(x, w, 4)
    check_fd(f, x, w, 4)


def test_parallel_backward_overflow_is_the_real_error():
    Z = RNG.standard_normal((4, 40))      # 40 steps > ad_stack_size=16
    w = np.full(4, 0.1)
    with pytest.raises(AdStackOverflowError, match="ad_stack_size=16"):
        paths_parallel.grad(1.0, 0.2, Z, w)
    check_fd(paths_parallel, 1.0, 0.2, Z[:, :6].copy(), w)
