"""GradBench's ``ode``: RK4 with ``s`` steps to ``t = 2`` of ``y' = f(y)``,
``f(y)_0 = x_0``, ``f(y)_i = x_i y_{i-1}``, from ``y = 0``; the gradient of the last
component of the final state (gradbench/gradbench, tools/jax/ode.py). Sizes: GradBench's
n = 1000, 10000 with s = 10."""
import numba
import numpy as np

SIZES = [{"n": 1000, "s": 10}, {"n": 10000, "s": 10}]


def inputs(n, s):
    rng = np.random.default_rng(3)
    return (rng.random(n), s)


def ode_loops(x, s):
    n = x.shape[0]
    h = 2.0 / s
    y = np.zeros(n)
    k1 = np.empty(n)
    k2 = np.empty(n)
    k3 = np.empty(n)
    k4 = np.empty(n)
    tmp = np.empty(n)
    for _ in range(s):
        k1[0] = x[0]
        for i in range(1, n):
            k1[i] = x[i] * y[i - 1]
        for i in range(n):
            tmp[i] = y[i] + h / 2 * k1[i]
        k2[0] = x[0]
        for i in range(1, n):
            k2[i] = x[i] * tmp[i - 1]
        for i in range(n):
            tmp[i] = y[i] + h / 2 * k2[i]
        k3[0] = x[0]
        for i in range(1, n):
            k3[i] = x[i] * tmp[i - 1]
        for i in range(n):
            tmp[i] = y[i] + h * k3[i]
        k4[0] = x[0]
        for i in range(1, n):
            k4[i] = x[i] * tmp[i - 1]
        for i in range(n):
            y[i] = y[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i])
    return y[n - 1]


@numba.njit
def ode_fun(x, y):
    out = x * np.roll(y, 1)
    out[0] = x[0]
    return out


def ode_numpy(x, s):
    h = 2.0 / s
    y = np.zeros_like(x)
    for _ in range(s):
        k1 = ode_fun(x, y)
        k2 = ode_fun(x, y + h / 2 * k1)
        k3 = ode_fun(x, y + h / 2 * k2)
        k4 = ode_fun(x, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y[-1]


def ode_jax(x, s):
    import jax
    import jax.numpy as jnp
    h = 2.0 / s

    def f(y):
        return jnp.where(jnp.arange(x.shape[0]) == 0, x, x * jnp.roll(y, 1))

    def body(y, _):
        k1 = f(y)
        k2 = f(y + h / 2 * k1)
        k3 = f(y + h / 2 * k2)
        k4 = f(y + h * k3)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), None
    y, _ = jax.lax.scan(body, jnp.zeros_like(x), None, length=s)
    return y[-1]


STYLES = {"loops": ode_loops, "numpy": ode_numpy}
JAX = ode_jax
WRT = (0,)
STATIC = (1,)
