"""JAX versions of the workloads of ``benchmarks/workloads_real.py``, written the way one
writes them in JAX (whole-array expressions, ``lax.fori_loop`` for time stepping),
float64, on the CPU.

``build(workload, args)`` returns a function of no arguments computing the gradient
(``jax.jit(jax.grad(loss, argnums=wrt))``) as a tuple shaped like the workload's
``hand_grad``; for an ``ArrayWorkload``, ``build_vjp`` and ``build_jvp`` return the
``jax.vjp`` / ``jax.jvp`` of the array-returning program, jitted.  Arguments are passed
as NumPy arrays on every call and the results converted back, as a NumPy user would.

JAX cannot reverse a ``while_loop``: the damped oscillator's step count is computed
beforehand (the same float additions as the loop's ``t += dt``) and the loop is a
``fori_loop`` of that many steps.
"""
import numpy as np

from . import module_available

NAME = "jax"
REQUIRES = "jax[cpu]"


def available():
    return module_available("jax")


def _jax():
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def _pad(grads, wrt, nargs):
    out = [None] * nargs
    for index, g in zip(wrt, grads):
        g = np.asarray(g)
        out[index] = float(g) if g.ndim == 0 else g
    return tuple(out)


def _loss(workload, args):
    """The JAX loss, a function of the differentiated arguments."""
    _jax()
    import jax.numpy as jnp
    from jax import lax
    from jax.scipy.special import erf

    name = workload.name
    if name == "lj_energy":
        (pos,) = args
        iu = np.triu_indices(pos.shape[0], 1)

        def loss(pos):
            d = pos[:, None, :] - pos[None, :, :]
            r = jnp.sum(d * d, axis=-1)[iu] ** 0.5
            ir6 = (1.0 / r) ** 6
            return jnp.sum(4.0 * (ir6 * ir6 - ir6))
        return loss

    if name in ("black_scholes", "black_scholes_2m"):
        from ..workloads_real import CALL_WEIGHT, PUT_WEIGHT

        def cnd(d):
            return 0.5 * (1.0 + erf(d / jnp.sqrt(2.0)))

        def loss(S, K, T, r, sigma):
            sqrt_t = jnp.sqrt(T)
            d1 = (jnp.log(S / K) + (r + 0.5 * sigma * sigma) * T) / (sigma * sqrt_t)
            d2 = d1 - sigma * sqrt_t
            exp_rt = jnp.exp(-r * T)
            call = S * cnd(d1) - K * exp_rt * cnd(d2)
            put = K * exp_rt * (1.0 - cnd(d2)) - S * (1.0 - cnd(d1))
            return CALL_WEIGHT * jnp.sum(call) + PUT_WEIGHT * jnp.sum(put)
        return loss

    if name == "moving_average":
        window = args[2]

        def loss(x, weights):
            c = jnp.concatenate([jnp.zeros(1), jnp.cumsum(x)])
            avg = (c[window:] - c[:-window]) / window
            return jnp.sum(weights * avg)
        return loss

    if name == "damped_oscillator":
        dt, T = args[4], args[5]
        steps, t = 0, 0.0
        while t < T:
            t += dt
            steps += 1

        def loss(x0, v0, k, c):
            def step(_, state):
                x, v, work = state
                v = v + (-k * x - c * v) * dt
                x = x + v * dt
                return x, v, work + c * v * v * dt
            x, _, work = lax.fori_loop(0, steps, step, (x0, v0, 0.0 * x0))
            return x + work
        return loss

    if name == "logistic_regression":
        from ..workloads_real import LOGREG_ALPHA, LOGREG_STEPS

        def loss(X, y, w0):
            n = X.shape[0]
            w = w0
            for _ in range(LOGREG_STEPS):
                p = 1.0 / (1.0 + jnp.exp(-jnp.dot(X, w)))
                w = w - LOGREG_ALPHA * jnp.dot(X.T, p - y) / n
            z = jnp.dot(X, w)
            return jnp.sum(jnp.log(1.0 + jnp.exp(z)) - y * z) / n
        return loss

    if name == "advection_diffusion":
        program = _advection_program(args)

        def loss(u0, vel, nu):
            return jnp.dot(args[6], program(u0, vel, nu))
        return loss

    if name == "reaction_diffusion":
        dx, dt, steps = args[3], args[4], args[5]

        def loss(u0, D, k):
            def step(_, u):
                c = u[1:-1]
                lap = (u[2:] - 2.0 * c + u[:-2]) / dx ** 2
                return u.at[1:-1].set(c + dt * (D * lap + k * c * (1.0 - c)))
            u = lax.fori_loop(0, steps, step, u0)
            return jnp.sum(u * u)
        return loss

    if name == "heat_2d":
        dx, dt, steps = args[2], args[3], args[4]

        def loss(u0, D):
            def step(_, u):
                lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] \
                    - 4.0 * u[1:-1, 1:-1]
                return u.at[1:-1, 1:-1].set(u[1:-1, 1:-1] + dt * D * lap / dx ** 2)
            u = lax.fori_loop(0, steps, step, u0)
            return jnp.sum(u * u)
        return loss

    if name == "numba_stats_nll":
        from jax.scipy import stats
        x = jnp.asarray(args[0])

        def loss(mu, sigma, tau, f):
            ls = stats.norm.logpdf(x, mu, sigma)
            lb = stats.expon.logpdf(x, 0.0, tau)
            return -jnp.sum(jnp.log(f * jnp.exp(ls) + (1.0 - f) * jnp.exp(lb)))
        return loss

    if name == "numba_stats_norm":
        from jax.scipy import stats

        def loss(x, mu, sigma):
            return -jnp.sum(stats.norm.logpdf(x, mu, sigma))
        return loss

    if name == "numba_stats_norm_params":
        from jax.scipy import stats
        x = jnp.asarray(args[0])

        def loss(mu, sigma):
            return -jnp.sum(stats.norm.logpdf(x, mu, sigma))
        return loss

    if name == "move_mean":
        window = args[1]

        def loss(a):
            c = jnp.concatenate([jnp.zeros(1), jnp.cumsum(a)])
            n = a.shape[0]
            idx = jnp.arange(n)
            lo = jnp.maximum(idx + 1 - window, 0)
            out = (c[idx + 1] - c[lo]) / jnp.minimum(idx + 1, window)
            return jnp.sum((idx + 1) * out * out)
        return loss

    if name.startswith("cosine_"):
        Y, heads, tails = jnp.asarray(args[1]), args[2], args[3]

        def loss(X):
            a, b = X[heads], Y[tails]
            r = jnp.sum(a * b, axis=1)
            return jnp.sum(1.0 - r / jnp.sqrt(jnp.sum(a * a, axis=1) * jnp.sum(b * b, axis=1)))
        return loss

    if name == "gini":
        def loss(y):
            n = y.shape[0]
            return jnp.sum(jnp.abs(y[:, None] - y[None, :])) / (2 * n * jnp.sum(y))
        return loss

    raise NotImplementedError(name)


def _advection_program(args):
    _jax()
    from jax import lax
    dx, dt, steps = args[3], args[4], args[5]

    def program(u0, vel, nu):
        a = vel * dt / dx
        b = nu * dt / dx ** 2

        def step(_, u):
            inner = u[1:-1] - a * (u[1:-1] - u[:-2]) + b * (u[2:] - 2.0 * u[1:-1] + u[:-2])
            return u.at[1:-1].set(inner)
        return lax.fori_loop(0, steps, step, u0)
    return program


def build(workload, args):
    jax = _jax()
    loss = _loss(workload, args)
    wrt = tuple(workload.wrt)
    g = jax.jit(jax.grad(loss, argnums=tuple(range(len(wrt)))))
    inputs = [args[i] for i in wrt]
    return lambda: _pad(g(*inputs), wrt, len(args))


def build_vjp(workload, args):
    """The cotangents of (u0, vel, nu) for the cotangent args[-1], by jax.vjp."""
    jax = _jax()
    program = _advection_program(args)

    @jax.jit
    def vjp(u0, vel, nu, ubar):
        return jax.vjp(program, u0, vel, nu)[1](ubar)
    u0, vel, nu, ubar = args[0], args[1], args[2], args[6]
    return lambda: tuple(np.asarray(g) for g in vjp(u0, vel, nu, ubar))


def build_jvp(workload, args, tangents):
    """The tangent of the final state for ``tangents`` of (u0, vel, nu), by jax.jvp."""
    jax = _jax()
    program = _advection_program(args)

    @jax.jit
    def jvp(u0, vel, nu, t0, t1, t2):
        return jax.jvp(program, (u0, vel, nu), (t0, t1, t2))[1]
    u0, vel, nu = args[0], args[1], args[2]
    return lambda: np.asarray(jvp(u0, vel, nu, *tangents))
