"""Loops nested in fused loops fuse too: a pairs loop inside an atoms loop whose
iterations meet only in the energy sum is reversed pair by pair, keeping no history."""
import math

import numpy as np
import pytest

import numba_adstack as nad
from conftest import check_fd


@nad.grad_jit
def pair_energy(x, eps):
    n = x.shape[0]
    e = 0.0
    for i in range(n):
        xi = x[i]
        for j in range(i + 1, n):
            r = abs(xi - x[j]) + 0.5
            ir3 = (1.0 / r) ** 3
            e += eps * (ir3 * ir3 - ir3)
    return 2.0 * e


@nad.grad_jit
def pair_energy_inner_nonlinear(x):
    # The inner sum feeds a nonlinear function: the inner loop is not part of the
    # outer sum, so it keeps its history; the gradient is the same either way.
    n = x.shape[0]
    e = 0.0
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += x[i] * x[j]
        e += math.sin(s)
    return e


@nad.grad_jit
def triple_sum(x):
    n = x.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(n):
            for k in range(j):
                e += math.cos(x[i] - x[j] * x[k])
            e -= x[j] * 0.1
    return e


X = np.random.default_rng(3).uniform(0.0, 3.0, 9)


@pytest.mark.parametrize("f", [pair_energy, pair_energy_inner_nonlinear, triple_sum],
                         ids=lambda f: f.py_func.__name__)
def test_gradient_matches_finite_differences(f):
    args = (X, 1.5) if f is pair_energy else (X,)
    assert f.value_and_grad(*args)[0] == pytest.approx(f.py_func(*args))
    check_fd(f, *args, rtol=1e-6, atol=1e-7)


def test_eps_gradient():
    value, (gx, geps) = pair_energy.value_and_grad(X, 1.5)
    assert geps == pytest.approx(value / 1.5)


def test_nested_fused_loops_keep_no_history():
    assert "adstack(" not in pair_energy.inspect_adjoint(X, 1.5)
    assert "adstack(" not in triple_sum.inspect_adjoint(X)


# The reverse of a loop inside a fused loop is skipped when the adjoint flowing into it is
# zero, only where that can happen: a payoff max(s - k, 0) or a branch on the value.
@nad.grad_jit
def payoff_paths(z, k):
    total = 0.0
    for p in range(z.shape[0]):
        s = 1.0
        for t in range(z.shape[1]):
            s = s * math.exp(0.1 * z[p, t])
        total += max(s - k, 0.0)
    return total


@nad.grad_jit
def branch_paths(z, k):
    total = 0.0
    for p in range(z.shape[0]):
        s = 1.0
        for t in range(z.shape[1]):
            s = s * math.exp(0.1 * z[p, t])
        if s > k:
            total += s - k
    return total


@nad.grad_jit
def smooth_paths(z, k):
    total = 0.0
    for p in range(z.shape[0]):
        s = 1.0
        for t in range(z.shape[1]):
            s = s * math.exp(0.1 * z[p, t])
        total += k * math.log(s)
    return total


Z = np.random.default_rng(4).standard_normal((6, 4))


@pytest.mark.parametrize("f", [payoff_paths, branch_paths, smooth_paths],
                         ids=lambda f: f.py_func.__name__)
def test_reverse_skipped_only_where_the_adjoint_can_be_zero(f):
    check_fd(f, Z, 1.02, rtol=1e-6, atol=1e-8)
    tested = "!= 0.0" in f.inspect_adjoint(Z, 1.02)
    assert tested == (f is not smooth_paths)
