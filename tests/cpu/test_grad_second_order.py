"""Gradients of functions that call ``h.grad`` or ``h.value_and_grad`` (second order):
against central finite differences of the pure-Python function, and analytic derivatives;
the derivative calls the rewrite cannot differentiate refused by name and line; a
``cache=True`` second-order gradient and a ``cache=True`` jitted caller of a cached
gradient loaded in a new process."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

from conftest import assert_grads_close, check_fd, fd_grad, subprocess_opt

ROOT = Path(nad.__file__).resolve().parent.parent
RNG = np.random.default_rng(2022)


# ---------------------------------------------------------------- inner functions
@nad.grad_jit
def dist(x, y, p=1.5):
    """Non-quadratic, so that its Hessian depends on x, y and p."""
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - y[i]
        s += d * d * (1.0 + x[i] * x[i])
    return s ** p


@nad.grad_jit
def energy(pos, k):
    """Springs of rest length 1 between every pair of 2-d points."""
    e = 0.0
    n = pos.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            r = math.sqrt(dx * dx + dy * dy)
            e += k * (r - 1.0) ** 2
    return e


@nad.grad_jit(wrt="pos")
def energy_pos(pos, k):
    e = 0.0
    n = pos.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            e += k * math.log(1.0 + dx * dx + dy * dy)
    return e


@nad.grad_jit
def cubic(x, p):
    return x * x * x + p * x - 1.0


# ---------------------------------------------------------------- second-order functions
@nad.grad_jit
def penalty(x, y):
    """|grad_y dist(x, y)|^2: only the second item of the gradient is computed."""
    g = dist.grad(x, y)[1]
    return np.sum(g * g)


@nad.grad_jit
def penalty_kw(x, y, p):
    gx, gy, gp = dist.grad(x, y=y, p=p)
    return np.sum(gx * gy) + gp * gp


@nad.grad_jit
def force_loss(pos, k, target):
    """A physics loss on the force field -grad energy."""
    f = -energy.grad(pos, k)[0]
    return np.sum((f - target) ** 2)


@nad.grad_jit
def force_loss_wrt(pos, k, target):
    """energy_pos differentiates pos only; d/dk needs its mixed second derivative."""
    f = -energy_pos.grad(pos, k)[0]
    return np.sum((f - target) ** 2)


@nad.grad_jit
def relax(pos, k, n):
    """n gradient steps on the energy, differentiated through the loop."""
    for t in range(n):
        pos = pos - 0.02 * energy.grad(pos, k)[0]
    return np.sum(pos * pos) + pos[0, 0]


@nad.grad_jit
def newton_root(p, x0, n):
    """Newton's method on cubic(x, p) = 0, the slope from cubic.value_and_grad."""
    x = x0
    for it in range(n):
        v, g = cubic.value_and_grad(x, p)
        x = x - v / g[0]
    return x


@nad.grad_jit
def through_argument(x, y, fg):
    return np.sum(fg(x, y)[0] ** 2)


@nad.grad_jit
def value_and_slope(x, y):
    v, (gx, gy, gp) = dist.value_and_grad(x, y, 2.0)
    return v * np.sum(gx) + gp


# ---------------------------------------------------------------- tests
def test_penalty_on_the_gradient_of_the_second_argument():
    x, y = RNG.uniform(0.5, 1.5, 5), RNG.uniform(-0.5, 0.5, 5)
    check_fd(penalty, x, y, rtol=1e-6)
    src = penalty.inspect_adjoint(x, y)
    # Only dist.grad(x, y)[1] is computed; its adjoint is a Hessian-vector product.
    assert src.count("gradient_item") == 1 and "second_order_hvp" in src


def test_keywords_defaults_and_a_float_argument():
    x, y = RNG.uniform(0.5, 1.5, 4), RNG.uniform(-0.5, 0.5, 4)
    check_fd(penalty_kw, x, y, 1.7, rtol=1e-6)


def test_force_field_loss():
    pos = RNG.uniform(0.0, 2.0, (5, 2))
    target = RNG.standard_normal((5, 2))
    check_fd(force_loss, pos, 0.7, target, rtol=1e-6)


def test_mixed_second_derivative_of_a_function_with_wrt():
    pos = RNG.uniform(0.0, 2.0, (4, 2))
    target = RNG.standard_normal((4, 2))
    got = check_fd(force_loss_wrt, pos, 0.7, target, rtol=1e-6)
    assert got[1] != 0.0


def test_gradient_steps_in_a_differentiated_loop():
    pos = RNG.uniform(0.0, 2.0, (4, 2))
    check_fd(relax, pos, 0.7, 6, rtol=1e-6)


def test_newton_steps_with_value_and_grad():
    p, x0 = 0.5, 1.3
    root = newton_root(p, 1.3, 30)
    assert abs(cubic.py_func(root, p)) < 1e-12
    dp, dx0, dn = newton_root.grad(p, x0, 30)
    # Implicit function theorem at the converged root: dx/dp = -x / (3x^2 + p).
    np.testing.assert_allclose(dp, -root / (3.0 * root * root + p), rtol=1e-12)
    assert abs(dx0) < 1e-12 and dn is None
    # Before convergence, as finite differences of the iteration say.
    assert_grads_close(newton_root.grad(p, x0, 3), fd_grad(newton_root.py_func, (p, x0, 3)),
                       (p, x0, 3), rtol=1e-6)


def test_value_and_grad_and_a_gradient_passed_as_a_function():
    x, y = RNG.uniform(0.5, 1.5, 4), RNG.uniform(-0.5, 0.5, 4)
    check_fd(value_and_slope, x, y, rtol=1e-6)
    got = through_argument.grad(x, y, dist.grad)
    want = fd_grad(lambda a, b: through_argument.py_func(a, b, dist.grad), (x, y))
    assert_grads_close(got[:2], want, (x, y), rtol=1e-6)


@nad.grad_jit
def mixed(a, p, x):
    return a * p[0] * np.sum(x) + math.sin(p[1])


def test_what_cannot_be_differentiated_is_refused_by_name_and_line():
    @nad.grad_jit
    def calls_vjp(x, y):
        g = dist.vjp_call(x, y, 1.5, 1.0)[0]
        return np.sum(g)

    @nad.grad_jit
    def tuple_argument(x):
        g = mixed.grad(1.0, (x[0], 2.0), x)[2]
        return np.sum(g)

    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    with pytest.raises(NonDifferentiableError, match=r"calls_vjp.*call to dist\.vjp_call.*"
                       r"dist\.grad or dist\.value_and_grad") as info:
        calls_vjp.grad(x, y)
    assert "g = dist.vjp_call(x, y, 1.5, 1.0)[0]" in str(info.value)
    with pytest.raises(NonDifferentiableError, match=r"tuple_argument.*mixed\.grad with a "
                       r"tuple or function argument") as info:
        tuple_argument.grad(x)
    assert "g = mixed.grad(1.0, (x[0], 2.0), x)[2]" in str(info.value)


# ---------------------------------------------------------------- cache=True
MODULE = '''
import numba
import numpy as np
import numba_adstack as nad

@nad.grad_jit(cache=True)
def dist(x, y):
    return np.sum((x - y) ** 2 * (1.0 + x * x))

@nad.grad_jit(cache=True)
def penalty(x, y):
    g = dist.grad(x, y)[1]
    return np.sum(g * g)

@numba.njit(cache=True)
def caller(x, y):
    return dist.grad(x, y)[0]
'''

RUN = '''
import json, warnings
import numpy as np
warnings.simplefilter("error")
import second_order_model as m
x = np.linspace(0.5, 1.5, 5)
y = np.cos(x)
gx, gy = m.penalty.grad(x, y)
c = m.caller(x, y)
bw = next(iter(m.penalty._backwards.values()))
print(json.dumps({"gx": gx.tolist(), "gy": gy.tolist(), "caller": c.tolist(),
                  "from_disk": bw.from_disk, "hits": sum(m.caller.stats.cache_hits.values())}))
'''


def test_cached_second_order_gradient_and_jitted_caller_in_a_new_process(tmp_path):
    (tmp_path / "second_order_model.py").write_text(MODULE)
    (tmp_path / "run.py").write_text(RUN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]),
               NUMBA_CACHE_DIR=str(tmp_path / "cache"), NUMBA_OPT=subprocess_opt())

    def run():
        out = subprocess.run([sys.executable, str(tmp_path / "run.py")], env=env,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])
    first = run()
    second = run()
    assert not first["from_disk"] and first["hits"] == 0
    assert second["from_disk"] and second["hits"] == 1
    x = np.linspace(0.5, 1.5, 5)
    y = np.cos(x)
    # dist's gradient in y, written out: -2 (x - y) (1 + x^2).
    want = fd_grad(lambda a, b: np.sum((2.0 * (a - b) * (1.0 + a * a)) ** 2), (x, y))
    for run_out in (first, second):
        np.testing.assert_allclose(run_out["gx"], want[0], rtol=1e-6)
        np.testing.assert_allclose(run_out["gy"], want[1], rtol=1e-6)
        np.testing.assert_allclose(run_out["caller"], 2 * (x - y) * (1 + x * x)
                                   + 2 * x * (x - y) ** 2, rtol=1e-12)
