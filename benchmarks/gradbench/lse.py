"""GradBench's ``lse``: log-sum-exp of a vector, ``log(sum(exp(x - max(x)))) + max(x)``
(gradbench/gradbench, tools/jax/lse.py). Sizes: GradBench's n up to 2^20 or so; here
n = 10^4 and 10^6."""
import math

import numpy as np

SIZES = [{"n": 10_000}, {"n": 1_000_000}]


def inputs(n):
    rng = np.random.default_rng(1)
    return (rng.random(n),)


def lse_loops(x):
    mx = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > mx:
            mx = x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s += math.exp(x[i] - mx)
    return math.log(s) + mx


def lse_numpy(x):
    mx = np.max(x)
    return np.log(np.sum(np.exp(x - mx))) + mx


def lse_jax(x):
    import jax.numpy as jnp
    mx = jnp.max(x)
    return jnp.log(jnp.sum(jnp.exp(x - mx))) + mx


STYLES = {"loops": lse_loops, "numpy": lse_numpy}
JAX = lse_jax
WRT = (0,)
