"""Map loops: iterations that write only their own elements keep no history.

A loop whose outputs' adjoint is known before it runs (``w * out.sum()`` after it) is
reversed in the replay, iteration by iteration; otherwise the sweep runs it again and
reverses each iteration right after it. Either way the backward keeps no stack for it.
"""
import math

import numba
import numpy as np
import pytest

import numba_adstack as nad
from conftest import check_fd, fd_grad


@nad.grad_jit
def priced(s, k, vol):
    n = s.shape[0]
    call = np.empty(n)
    put = np.empty(n)
    for i in range(n):
        d = (math.log(s[i] / k[i]) + 0.5 * vol * vol) / vol
        call[i] = s[i] * math.erf(d) - k[i] * math.exp(-d * d)
        put[i] = k[i] * (1.0 - math.tanh(d)) + s[i]
    return 2.0 * call.sum() - np.sum(put) / 3.0


@numba.njit
def _pair(s, k, vol):
    n = s.shape[0]
    a = np.empty(n)
    b = np.zeros(n)
    for i in range(n):
        t = math.sin(s[i] * vol) + k[i]
        a[i] = t * t
        b[i] = math.cos(t)
    return a, b


@nad.grad_jit
def priced_tuple(s, k, vol):
    a, b = _pair(s, k, vol)
    return 0.5 * a.sum() + b.sum()


@nad.grad_jit
def nonlinear_use(s, k, vol):
    n = s.shape[0]
    out = np.empty(n)
    for i in range(n):
        out[i] = math.exp(-vol * s[i]) * k[i]
    total = 0.0
    for i in range(n):
        total += out[i] * out[(i + 1) % n]
    return total


@nad.grad_jit
def written_after(s, k, vol):
    n = s.shape[0]
    out = np.empty(n)
    for i in range(n):
        out[i] = math.sin(s[i]) * vol
    out *= k
    return out.sum()


@nad.grad_jit
def reads_what_is_written_later(s, k, vol):
    n = s.shape[0]
    x = s.copy()
    out = np.empty(n)
    for i in range(n):
        out[i] = math.sin(x[i]) * vol
    for i in range(n):
        x[i] = out[i] * k[i]
    return np.sum(x) + np.sum(out * out)


@nad.grad_jit
def into_given_array(s, k, vol, out):
    for i in range(s.shape[0]):
        out[i, 0] = math.sqrt(s[i]) * vol
        out[i, 1] = k[i] * vol
    return np.sum(out * out)


FUNCS = [priced, priced_tuple, nonlinear_use, written_after, reads_what_is_written_later]
RNG = np.random.default_rng(7)
S = RNG.uniform(80.0, 120.0, 6)
K = RNG.uniform(90.0, 110.0, 6)


@pytest.mark.parametrize("f", FUNCS, ids=lambda f: f.py_func.__name__)
def test_gradient_matches_finite_differences(f):
    args = (S, K, 0.3)
    assert f.value_and_grad(*args)[0] == pytest.approx(f.py_func(*args), rel=1e-12)
    check_fd(f, *args, rtol=1e-5, atol=1e-6)


def test_given_output_array():
    out = np.zeros((6, 2))
    grads = into_given_array.grad(S, K, 0.3, out.copy())
    want = fd_grad(into_given_array.py_func, (S, K, 0.3, out))
    for i in range(3):
        np.testing.assert_allclose(grads[i], want[i], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", [priced, priced_tuple, nonlinear_use],
                         ids=lambda f: f.py_func.__name__)
def test_map_loops_keep_no_history(f):
    assert "adstack(" not in f.inspect_adjoint(S, K, 0.3)


def test_outputs_summed_after_the_loop_are_not_run_again():
    # One forward pass over the options: the loop appears once in the backward.
    src = priced.inspect_adjoint(S, K, 0.3)
    assert src.count("math.erf(") == 1
    src = nonlinear_use.inspect_adjoint(S, K, 0.3)
    assert src.count("math.exp(") >= 2        # run again by the sweep
