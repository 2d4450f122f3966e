"""Powers with a literal operand: right gradients, and no libm ``pow`` in the backward
where the primal has none (``x ** 6``, ``x ** 0.5``, ``x ** -1``, ``(1. / r) ** 6``)."""
import math
import re

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack.ad.rules import powers

from conftest import check_fd

# (reads optimised LLVM IR or PTX: compiled at -O1 while the suite runs at -O0)
pytestmark = pytest.mark.optimised

EXPONENTS = [0, 1, 2, 3, 6, 11, -1, -2, -3, 0.5, -0.5, 1.5, 2.5, -1.5, 2.0, 3.0, 2.7, -0.3]


def _power_fn(k, form):
    expr = {"op": "v ** K", "pow": "math.pow(v, K)", "np": "np.power(v, K)",
            "inplace": None}[form]
    body = ["def f(x, n):", "    s = 0.0", "    for i in range(n):",
            "        v = x[i % x.shape[0]]"]
    if expr is None:
        body += ["        v **= K"]
    else:
        body += ["        v = " + expr]
    body += ["        s += v * (i + 1)", "    return s"]
    ns = {"math": math, "np": np}
    exec("\n".join(body).replace("K", repr(k)) + "\n", ns)
    return ns["f"]


def _backward_asm(f, *args):
    f.grad(*args)
    bw = f._backward(args)
    return "".join(bw.njit_fn.inspect_asm().values())


def _pow_calls(asm):
    return len(re.findall(r"\bpow\b", asm))


@pytest.mark.parametrize("k", EXPONENTS)
def test_literal_exponent_gradients(k):
    x = np.array([0.7, 1.3, 2.1])
    f = nad.grad_jit(_power_fn(k, "op"))
    check_fd(f, x, 5, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("form", ["pow", "np", "inplace"])
@pytest.mark.parametrize("k", [2, -1, 0.5, 2.7])
def test_literal_exponent_in_every_spelling(form, k):
    f = nad.grad_jit(_power_fn(k, form))
    check_fd(f, np.array([0.6, 1.4]), 4, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_integer_powers_of_negative_and_zero_bases(k):
    f = nad.grad_jit(_power_fn(k, "op"))
    got = f.grad(np.array([-1.5, 0.0]), 2)[0]
    np.testing.assert_allclose(got, [k * (-1.5) ** (k - 1), 2 * k * 0.0 ** (k - 1)])


@pytest.mark.parametrize("k", [6, 2, 3, -1, -2, 0.5])
def test_no_pow_in_the_backward_where_the_primal_has_none(k):
    src = _power_fn(k, "op")
    primal = numba.njit(src)
    args = (np.array([0.7, 1.3]), 3)
    primal(*args)
    assert _pow_calls("".join(primal.inspect_asm().values())) == 0
    assert _pow_calls(_backward_asm(nad.grad_jit(src), *args)) == 0


def test_lennard_jones_helpers_call_no_pow():
    from benchmarks import workloads_real as wr
    f = nad.grad_jit(wr.lj_energy)
    pos = wr._lj_args(quick=True)[0]
    assert _pow_calls(_backward_asm(f, pos)) == 0
    check_fd(f, pos, rtol=1e-5, atol=1e-8)
    src = f.inspect_adjoint(pos)
    # d(1/r) reuses 1/r; the distance loop's reverse is not guarded by a zero test (the
    # pair's adjoint is never zero: the test would cost a branch per pair).
    assert "1.0 / (lj_pair" not in src and "!= 0.0" not in src


def test_literal_base():
    @nad.grad_jit
    def f(x):
        return 2.0 ** x[0] + 10.0 ** x[1]
    gx, = check_fd(f, np.array([0.5, 0.2]))
    np.testing.assert_allclose(gx, [math.log(2.0) * 2.0 ** 0.5, math.log(10.0) * 10.0 ** 0.2],
                               rtol=1e-14)


def test_rules_read_as_written():
    assert powers.power_rule([None, 6]) == ("{g} * (6.0 * {0} ** 5)", None)
    # (infinite at 0: zero where the adjoint is, rules/template.py)
    assert powers.power_rule([None, 0.5]) == ("zmul({g}, 0.5 / {y})", None)
    assert powers.power_rule([None, -1]) == ("zmul({g}, -({y} * {y}))", None)
    assert powers.power_rule([None, 1.5]) == ("zmul({g}, 1.5 * math.sqrt({0}))", None)
    assert powers.power_rule([None, 0]) == (None, None)
    assert powers.power_rule([None, None]) is None
    assert powers.specialise(math.sin, [None]) is None


def _quotient_fn(expr):
    body = ["def f(x, w, n):", "    s = 0.0", "    for i in range(n):",
            "        v = x[i % x.shape[0]]", "        q = " + expr,
            "        s += q * w[i % w.shape[0]]", "    return s"]
    ns = {"math": math, "np": np}
    exec("\n".join(body) + "\n", ns)
    return nad.grad_jit(ns["f"])


LITERAL_NUMERATORS = ["1.0 / v", "3.0 / v", "-2.5 / v", "np.divide(1.0, v)",
                      "np.true_divide(0.5, v)"]
OTHER_QUOTIENTS = ["w[0] / v", "v / 3.0", "0.0 / v"]


@pytest.mark.parametrize("expr", LITERAL_NUMERATORS + OTHER_QUOTIENTS)
def test_quotients_reuse_the_quotient_only_with_a_literal_numerator(expr):
    f = _quotient_fn(expr)
    args = (np.array([0.7, -1.3, 2.1]), np.array([0.4, 1.1]), 5)
    check_fd(f, *args, rtol=1e-6, atol=1e-9)
    # d(c / v)/dv = -q * q / c: no division in the sweep (the replay's one is the
    # primal's); a numerator that is not a literal keeps the quotient rule's division.
    adjoint_lines = [ln for ln in f.inspect_adjoint(*args).splitlines() if "_bar" in ln]
    divides = any("/" in ln for ln in adjoint_lines)
    assert divides == (expr in OTHER_QUOTIENTS), adjoint_lines


def test_quotient_rules_read_as_written():
    assert powers.quotient_rule([1.0, None]) == (None, "zmul({g}, -({y} * {y}))")
    assert powers.quotient_rule([2, None]) == (None, "zmul({g}, -({y} * {y}) * 0.5)")
    assert powers.quotient_rule([0.0, None]) is None
    # a literal divisor: the numerator's partial is a number (no guard)
    assert powers.quotient_rule([None, 2.0]) == ("{g} * (1.0 / 2.0)", None)
    assert powers.quotient_rule([None, 0.0]) is None
    assert powers.product_rule([None, -0.5]) == ("{g} * -0.5", None)
    assert powers.product_rule([3, None]) == (None, "{g} * 3.0")


# A rule dividing by v multiplies by q instead where the primal computed q = 1. / v, on
# every path, once per reversal unit (plan/reciprocals.py).
@nad.grad_jit
def root_then_reciprocal(x):
    total = 0.0
    for i in range(x.shape[0]):
        r = (x[i] * x[i] + 1.0) ** 0.5
        ir = 1.0 / r
        total += 3.0 * ir + r
    return total


@nad.grad_jit
def reciprocal_under_a_branch(x):
    total = 0.0
    for i in range(x.shape[0]):
        r = (x[i] * x[i] + 1.0) ** 0.5
        if x[i] > 0.0:
            ir = 1.0 / r
        else:
            ir = 0.5 * r
        total += 3.0 * ir + r
    return total


@nad.grad_jit
def reciprocal_in_a_recurrence(x):
    v = x[0] * x[0] + 4.0
    for _ in range(5):
        r = v ** 0.5
        ir = 1.0 / r
        v = v + 0.3 * ir + 0.1 * x[1] * x[1] * r
    return v


@pytest.mark.parametrize("f", [root_then_reciprocal, reciprocal_under_a_branch,
                               reciprocal_in_a_recurrence], ids=lambda f: f.py_func.__name__)
def test_root_derivative_reuses_the_reciprocal_only_where_it_holds(f):
    x = np.array([0.7, -1.3, 2.1])
    check_fd(f, x, rtol=1e-6, atol=1e-9)
    src = f.inspect_adjoint(x)
    assert ("0.5 * " in src and "0.5 / " not in src) == (f is root_then_reciprocal), src
