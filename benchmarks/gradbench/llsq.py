"""GradBench's ``llsq``: a linear least-squares fit of the sign function by a polynomial,
``0.5 * sum_i (sign(t_i) - sum_j x_j t_i^j)^2`` with ``t_i = -1 + 2 i / (n - 1)``
(gradbench/gradbench, tools/jax/llsq.py). Sizes: GradBench's m = 128 and n up to 16392."""
import math

import numpy as np

SIZES = [{"m": 128, "n": 1024}, {"m": 128, "n": 16392}]


def inputs(m, n):
    rng = np.random.default_rng(2)
    return (rng.random(m), n)


def llsq_loops(x, n):
    m = x.shape[0]
    s = 0.0
    for i in range(n):
        ti = -1.0 + (i * 2.0) / (n - 1.0)
        acc = 0.0
        mul = 1.0
        for j in range(m):
            acc -= x[j] * mul
            mul *= ti
        r = math.copysign(1.0, ti) if ti != 0.0 else 0.0
        s += (r + acc) ** 2
    return s / 2.0


def llsq_numpy(x, n):
    m = x.shape[0]
    t = -1.0 + np.arange(n) * 2.0 / (n - 1.0)
    powers = np.ones((n, m))
    for j in range(1, m):
        powers[:, j] = powers[:, j - 1] * t
    r = np.sign(t) - powers @ x
    return np.sum(r * r) / 2.0


def llsq_jax(x, n):
    import jax
    import jax.numpy as jnp
    m = x.shape[0]

    def f(i):
        ti = -1.0 + (i * 2.0) / (n - 1.0)
        muls = jnp.cumprod(jnp.full(m, ti).at[0].set(1))
        return (jnp.sign(ti) + jnp.sum(-x * muls)) ** 2
    return jnp.sum(jax.vmap(f)(jnp.arange(n))) / 2.0


STYLES = {"loops": llsq_loops, "numpy": llsq_numpy}
JAX = llsq_jax
WRT = (0,)
STATIC = (1,)       # n: a size, static for JAX
