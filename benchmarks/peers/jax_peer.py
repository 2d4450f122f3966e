"""JAX on the CPU: jax.jit(jax.grad(loss)), loops as lax.fori_loop with static
trip counts (which JAX lowers to a scan it can reverse), float64 enabled."""
import numpy as np

from . import module_available

NAME = "jax"
REQUIRES = "jax[cpu]"


def available():
    return module_available("jax")


def build(workload, args):
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax import lax

    name = workload.name
    if name == "sin_recurrence":
        x, steps = args

        def loss(x):
            v = lax.fori_loop(0, steps, lambda _, v: jnp.sin(v) * 1.01, x)
            return jnp.sum(v)

        g = jax.jit(jax.grad(loss))
        return lambda: (np.asarray(g(x)), None)

    if name == "long_recurrence":
        x, w, steps = args

        def loss(x, w):
            return lax.fori_loop(0, steps, lambda _, v: jnp.sin(v) * 1.01 + 0.1 * w, x[0])

        g = jax.jit(jax.grad(loss, argnums=(0, 1)))

        def grad():
            gx, gw = g(x, w)
            return np.asarray(gx), float(gw), None
        return grad

    if name == "newton_sqrt":
        (a,) = args

        def loss(a):
            def not_converged(x):
                return jnp.any(jnp.abs(x * x - a) >= 1e-12 * a)

            def step(x):
                return jnp.where(jnp.abs(x * x - a) >= 1e-12 * a, 0.5 * (x + a / x), x)
            return jnp.sum(lax.while_loop(not_converged, step, a))

        g = jax.jit(jax.grad(loss))
        return lambda: (np.asarray(g(a)),)

    if name == "mass_spring":
        x0, v0, k, rest, mass, dt, steps = args

        def loss(v0, k):
            def step(_, state):
                x, v = state
                s = k * (x[1:] - x[:-1] - rest)
                f = jnp.zeros_like(x).at[:-1].add(s).at[1:].add(-s)
                v = v + dt * f / mass
                return x + dt * v, v
            x, _ = lax.fori_loop(0, steps, step, (jnp.asarray(x0), v0))
            return jnp.sum(x * x)

        g = jax.jit(jax.grad(loss, argnums=(0, 1)))

        def grad():
            gv, gk = g(v0, k)
            return None, np.asarray(gv), float(gk), None, None, None, None
        return grad

    if name == "mc_option":
        S0, sigma, r, K, T, Z = args
        n_paths, n_steps = Z.shape
        Zj = jnp.asarray(Z)

        def loss(S0, sigma, r):
            dt = T / n_steps
            drift = (r - 0.5 * sigma * sigma) * dt
            vol = sigma * jnp.sqrt(dt)
            s = lax.fori_loop(0, n_steps, lambda t, s: s * jnp.exp(drift + vol * Zj[:, t]),
                              jnp.full(n_paths, S0))
            return jnp.exp(-r * T) * jnp.mean(jnp.maximum(s - K, 0.0))

        g = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))

        def grad():
            return tuple(float(v) for v in g(S0, sigma, r)) + (None, None, None)
        return grad

    if name == "logistic_regression":
        X, y, w0, lr, epochs = args
        n = X.shape[0]

        def loss(X, w0):
            def epoch(_, w):
                p = 1.0 / (1.0 + jnp.exp(-jnp.dot(X, w)))
                return w - lr * jnp.dot(X.T, p - y) / n
            w = lax.fori_loop(0, epochs, epoch, w0)
            z = jnp.dot(X, w)
            return jnp.sum(jnp.log(1.0 + jnp.exp(z)) - y * z) / n

        g = jax.jit(jax.grad(loss, argnums=(0, 1)))

        def grad():
            gX, gw = g(X, w0)
            return np.asarray(gX), None, np.asarray(gw), None, None
        return grad

    raise NotImplementedError(name)
