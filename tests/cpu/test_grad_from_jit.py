"""``f.grad``, ``f.value_and_grad``, ``f.vjp_call`` and ``f.jvp`` called from jitted code:
the same results as the Python calls (themselves checked against finite differences), in
``prange`` loops, as function values, from a ``cache=True`` caller in a new process; errors
of the backward raised from the caller; a jvp inside a differentiated function refused
(grad inside one: test_grad_second_order.py)."""
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import AdjointArgumentError, AdStackOverflowError, NonDifferentiableError

from conftest import assert_grads_close, check_fd, fd_grad, subprocess_opt

ROOT = Path(nad.__file__).resolve().parent.parent
RNG = np.random.default_rng(22)


# ---------------------------------------------------------------- differentiated functions
@nad.grad_jit
def dist(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - y[i]
        s += d * d
    return math.sqrt(s)


@nad.grad_jit
def mixed(a, p, x, n=2):
    """A float, a tuple of floats, an array and an integer with a default."""
    s = 0.0
    for i in range(n):
        s += a * p[0] * x[i] + math.sin(p[1] * x[i])
    return s


@nad.grad_jit
def two_outputs(x, c):
    """A tuple output: a float and an array (for vjp_call)."""
    return np.sum(x * x) * c, np.sin(x) * c


@nad.grad_jit(wrt="y")
def weighted(x, y):
    return np.sum(x * np.exp(y))


@nad.grad_jit(storage="frame", ad_stack_size=4)
def fixed_stacks(x, n):
    s = 0.0
    for i in range(n):
        s += math.sin(x[i % x.shape[0]] * s + 1.0)
    return s


@nad.grad_jit
def nested(x, n, m):
    s = 0.0
    for i in range(n):
        v = x[i % x.shape[0]]
        for j in range(m):
            v = math.sin(v) * 1.01 + 0.001 * j
        s = s * 0.5 + v
    return s


# ---------------------------------------------------------------- jitted callers
@numba.njit
def rows_grad(X, Y):
    out = np.empty_like(X)
    for k in range(X.shape[0]):
        gx, gy = dist.grad(X[k], Y[k])
        out[k] = gx - gy
    return out


@numba.njit(parallel=True, nogil=True)
def rows_grad_prange(X, Y):
    out = np.empty_like(X)
    for k in numba.prange(X.shape[0]):
        gx, gy = dist.grad(X[k], Y[k])
        out[k] = gx - gy
    return out


@numba.njit
def call_mixed(a, p, x):
    return mixed.value_and_grad(a, p, x), mixed.grad(a, p, x, n=3)


@numba.njit
def call_vjp(x, c, ct):
    return two_outputs.vjp_call(x, c, ct)


@numba.njit
def call_jvp(a, p, x, ta, tx):
    return mixed.jvp((a, p, x, 3), (ta, (None, 1.0), tx, None))


@numba.njit
def call_grad(f, *args):
    return f.grad(*args)


@numba.njit
def descend(fun_and_grad, x0, y, lr, steps):
    """A solver written once for any function of (x, y) given with its gradient."""
    x = x0.copy()
    for _ in range(steps):
        value, (gx, gy) = fun_and_grad(x, y)
        x -= lr * gx
    return x


@numba.njit
def descend_dist(x0, y, lr, steps):
    return descend(dist.value_and_grad, x0, y, lr, steps)


@numba.njit
def call_weighted(x, y):
    return weighted.grad(x, y)


@numba.njit
def call_fixed(x, n):
    return fixed_stacks.grad(x, n)


@numba.njit
def call_nested(x, n, m):
    return nested.grad(x, n, m)


@numba.njit
def call_primal(x, y):
    return dist(x, y)


def _pairs():
    X = RNG.standard_normal((40, 16))
    Y = RNG.standard_normal((40, 16))
    return X, Y


# ---------------------------------------------------------------- the four calls
def test_grad_from_a_jitted_loop_matches_python():
    X, Y = _pairs()
    got = rows_grad(X, Y)
    for k in (0, 17, 39):
        gx, gy = check_fd(dist, X[k], Y[k])
        np.testing.assert_allclose(got[k], gx - gy, rtol=1e-13, atol=1e-14)
    # The primal call is still the primal.
    assert call_primal(X[0], Y[0]) == dist(X[0], Y[0])


def _assert_same(got, want, rtol=1e-14):
    """Equal structure (tuples, None, arrays, floats) and values."""
    if want is None:
        assert got is None
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w, rtol)
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-15)
    else:
        assert isinstance(got, float) and got == pytest.approx(want, rel=rtol)


def _fd_mixed(a, p, x, n, eps=1e-6):
    """Central differences of mixed.py_func, shaped as mixed.grad."""
    def d(fn):
        return (fn(eps) - fn(-eps)) / (2 * eps)
    f = mixed.py_func
    gx = np.array([d(lambda t: f(a, p, x + t * np.eye(x.size)[i], n)) for i in range(x.size)])
    return (d(lambda t: f(a + t, p, x, n)),
            (d(lambda t: f(a, (p[0] + t, p[1]), x, n)),
             d(lambda t: f(a, (p[0], p[1] + t), x, n))), gx, None)


def test_value_and_grad_with_tuples_keywords_and_defaults():
    a, p, x = 0.7, (1.3, -0.4), RNG.standard_normal(4)
    (value, grads), grads3 = call_mixed(a, p, x)
    assert value == mixed(a, p, x)
    _assert_same(grads, mixed.grad(a, p, x))
    _assert_same(grads, _fd_mixed(a, p, x, 2), rtol=1e-6)
    # n=3 by keyword, as from Python; the integer's entry is None.
    _assert_same(grads3, mixed.grad(a, p, x, n=3))
    _assert_same(grads3, _fd_mixed(a, p, x, 3), rtol=1e-6)


def test_vjp_call_of_a_tuple_output():
    x, c = RNG.standard_normal(5), 1.7
    ct = (0.3, RNG.standard_normal(5))
    got = call_vjp(x, c, ct)
    want = two_outputs.vjp_call(x, c, ct)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-14)
    assert got[1] == pytest.approx(want[1], rel=1e-14)

    def pairing(x, c):                        # <ct, f(x, c)>, differenced
        v, w = two_outputs.py_func(x, c)
        return ct[0] * v + np.sum(ct[1] * w)
    fd = fd_grad(pairing, (x, c))
    np.testing.assert_allclose(got[0], fd[0], rtol=1e-6)
    assert got[1] == pytest.approx(fd[1], rel=1e-6)


def test_vjp_call_with_a_cotangent_of_the_wrong_dtype_is_refused_at_compile_time():
    x = RNG.standard_normal(3)
    with pytest.raises(Exception, match="cotangent for output 1 of two_outputs"):
        call_vjp(x, 1.0, (1.0, x.astype(np.float32)))


def test_jvp_with_tuple_tangents():
    a, p, x = 0.7, (1.3, -0.4), RNG.standard_normal(4)
    ta, tx = 0.5, RNG.standard_normal(4)
    value, tangent = call_jvp(a, p, x, ta, tx)
    want = mixed.jvp((a, p, x, 3), (ta, (None, 1.0), tx, None))
    assert value == want[0]
    assert tangent == pytest.approx(want[1], rel=1e-13)
    eps = 1e-6

    def at(t):
        return mixed.py_func(a + t * ta, (p[0], p[1] + t), x + t * tx, 3)
    assert tangent == pytest.approx((at(eps) - at(-eps)) / (2 * eps), rel=1e-6)


def test_wrt_is_respected():
    x, y = RNG.standard_normal(4), RNG.standard_normal(4)
    got = call_weighted(x, y)
    _assert_same(got, weighted.grad(x, y))
    assert got[0] is None
    np.testing.assert_allclose(got[1], fd_grad(weighted.py_func, (x, y))[1], rtol=1e-6)


# ---------------------------------------------------------------- where it is called
def test_prange_caller():
    X, Y = _pairs()
    np.testing.assert_allclose(rows_grad_prange(X, Y), rows_grad(X, Y), rtol=1e-14)


def test_gradient_as_a_function_value():
    x0, y = RNG.standard_normal(16), RNG.standard_normal(16)
    want = x0.copy()
    for _ in range(5):
        want -= 0.1 * dist.grad(want, y)[0]
    # Passed from Python (the bound method) and from jitted code.
    np.testing.assert_allclose(descend(dist.value_and_grad, x0, y, 0.1, 5), want, rtol=1e-13)
    np.testing.assert_allclose(descend_dist(x0, y, 0.1, 5), want, rtol=1e-13)
    _assert_same(call_grad(dist, x0, y), dist.grad(x0, y))


# ---------------------------------------------------------------- errors
def test_overflow_under_fixed_capacity_raises_from_the_caller():
    x = RNG.uniform(0.1, 0.9, 4)
    assert_grads_close(call_fixed(x, 3), check_fd(fixed_stacks, x, 3), (x, 3), rtol=1e-14)
    with pytest.raises(AdStackOverflowError, match="capacity of"):
        call_fixed(x, 10)
    with pytest.raises(AdStackOverflowError):
        fixed_stacks.grad(x, 10)
    assert_grads_close(call_fixed(x, 3), fixed_stacks.grad(x, 3), (x, 3))


def test_history_past_memory_raises_memory_error_from_the_caller():
    x = RNG.uniform(0.1, 0.9, 3)
    with pytest.raises(MemoryError, match="does not fit in memory"):
        call_nested(x, 2, 10 ** 15)
    assert_grads_close(call_nested(x, 4, 3), check_fd(nested, x, 4, 3), (x, 4, 3),
                       rtol=1e-14)


def test_a_jvp_inside_a_differentiated_function_is_refused():
    # (grad and value_and_grad inside one are differentiated: test_grad_second_order.py)
    @nad.grad_jit
    def tangent_norm(x, y):
        v, t = dist.jvp((x, y), (x, None))
        return t * t

    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    with pytest.raises(NonDifferentiableError, match=r"tangent_norm.*call to dist\.jvp.*"
                       r"dist\.grad or dist\.value_and_grad") as info:
        tangent_norm.grad(x, y)
    assert "v, t = dist.jvp((x, y), (x, None))" in str(info.value)


# ---------------------------------------------------------------- cache=True callers
MODULE = '''
import math
import numba
import numpy as np
import numba_adstack as nad

@nad.grad_jit
def dist(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - y[i]
        s += d * d
    return math.sqrt(s)

@numba.njit(cache=True)
def rows(X, Y):
    out = np.empty_like(X)
    for k in range(X.shape[0]):
        out[k] = dist.grad(X[k], Y[k])[0]
    return out
'''

RUN = '''
import json, sys
import numpy as np
import jitcache_model as m
X = np.linspace(-1.0, 2.0, 24).reshape(3, 8)
Y = np.cos(X)
got = m.rows(X, Y)
generated = len(m.dist._backwards)
want = np.array([m.dist.grad(X[k], Y[k])[0] for k in range(3)])
print(json.dumps({"hits": sum(m.rows.stats.cache_hits.values()), "generated": generated,
                  "error": float(np.abs(got - want).max())}))
'''


def test_cache_true_caller_loads_the_backward_in_a_new_process(tmp_path):
    (tmp_path / "jitcache_model.py").write_text(MODULE)
    (tmp_path / "run.py").write_text(RUN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]),
               NUMBA_CACHE_DIR=str(tmp_path / "cache"), NUMBA_OPT=subprocess_opt())

    def run():
        out = subprocess.run([sys.executable, str(tmp_path / "run.py")], env=env,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        import json
        return json.loads(out.stdout.strip().splitlines()[-1])
    first = run()
    assert first["hits"] == 0 and first["error"] < 1e-14
    second = run()
    # Loaded with the backward's machine code: nothing generated or compiled for it.
    assert second["hits"] == 1 and second["generated"] == 0 and second["error"] < 1e-14


@nad.grad_jit(parallel=True)
def parallel_sum(x, w):
    s = 0.0
    for i in numba.prange(x.shape[0]):
        s += math.sin(x[i] * w)
    return s


@numba.njit
def call_parallel_sum(x, w):
    return parallel_sum.value_and_grad(x, w)


def test_parallel_function_called_from_jitted_code():
    """Its serial backward from jitted code, its parallel one from Python: one result."""
    x = np.linspace(0.0, 1.0, 500)
    value, grads = call_parallel_sum(x, 1.3)
    want = parallel_sum.value_and_grad(x, 1.3)
    assert value == pytest.approx(want[0], rel=1e-13)
    _assert_same(grads, want[1], rtol=1e-12)
    np.testing.assert_allclose(grads[0], 1.3 * np.cos(1.3 * x), rtol=1e-13)
    assert grads[1] == pytest.approx(np.sum(x * np.cos(1.3 * x)), rel=1e-12)
