"""An HMC sampler written in Numba, calling the log-density's gradient from jitted code.

    python -m benchmarks.bench_hmc [--quick]

The target is a 100-dimensional banana (Haario's twisted Gaussian, in 50 independent
pairs): ``u ~ N(0, 100)``, ``v + b (u^2 - 100) ~ N(0, 1)``. One sampler, ``hmc``, written
once in ``numba.njit`` and taking the log-density's ``value_and_grad`` as a function value
(unit mass matrix, fixed step size and number of leapfrog steps, one Metropolis test per
trajectory). Ours passes ``logp.value_and_grad`` of a ``grad_jit`` log-density; the twin
passes a hand-written ``value_and_grad``. Both runs use the same seed, so they draw the same
chain (checked before timing). JAX runs the same algorithm: ``jax.lax.fori_loop`` leapfrog
steps with ``jax.value_and_grad`` of the vectorised log-density, ``jax.lax.scan`` over the
trajectories, all under one ``jax.jit`` (its compile is not timed).

Reported: seconds per chain (median of the runs), and effective samples per second: the
smallest effective sample size over the coordinates (Geyer's initial positive sequence on
the autocorrelations) over the median time.
"""
import argparse
import math
import time

import numba
import numpy as np

import numba_adstack as nad

DIM, SAMPLES, LEAPFROG, STEP, CURVATURE = 100, 4_000, 50, 0.3, 0.03
QUICK = (10, 60, 5)


@nad.grad_jit(wrt="x")
def banana_logp(x, b):
    s = 0.0
    for j in range(x.shape[0] // 2):
        u = x[2 * j]
        v = x[2 * j + 1] + b * (u * u - 100.0)
        s -= u * u / 200.0 + 0.5 * v * v
    return s


@numba.njit
def banana_value_and_grad(x, b):
    """The hand-written twin of ``banana_logp.value_and_grad`` (same result structure)."""
    g = np.empty_like(x)
    s = 0.0
    for j in range(x.shape[0] // 2):
        u = x[2 * j]
        v = x[2 * j + 1] + b * (u * u - 100.0)
        s -= u * u / 200.0 + 0.5 * v * v
        g[2 * j] = -u / 100.0 - 2.0 * b * u * v
        g[2 * j + 1] = -v
    return s, (g, None)


@numba.njit
def hmc(value_and_grad, x0, b, n, eps, steps, seed):
    """``n`` HMC transitions from ``x0``; ``value_and_grad(x, b)`` gives ``(log p, (grad,
    _))``. Returns the chain and the acceptance rate."""
    np.random.seed(seed)
    d = x0.shape[0]
    x = x0.copy()
    lp, grads = value_and_grad(x, b)
    g = grads[0]
    chain = np.empty((n, d))
    accepted = 0
    for it in range(n):
        p = np.random.standard_normal(d)
        h0 = 0.5 * np.sum(p * p) - lp
        xn, gn, lpn = x, g, lp
        pn = p + 0.5 * eps * gn
        for k in range(steps):
            xn = xn + eps * pn
            lpn, grads = value_and_grad(xn, b)
            gn = grads[0]
            if k < steps - 1:
                pn = pn + eps * gn
        pn = pn + 0.5 * eps * gn
        h1 = 0.5 * np.sum(pn * pn) - lpn
        if math.log(np.random.random()) < h0 - h1:
            x, g, lp = xn, gn, lpn
            accepted += 1
        chain[it] = x
    return chain, accepted / n


# ---------------------------------------------------------------- effective sample size
def effective_sizes(chain):
    """Effective sample size of each coordinate of ``chain`` (n, d): Geyer's initial
    positive sequence of sums of pairs of autocorrelations."""
    n = chain.shape[0]
    c = chain - chain.mean(axis=0)
    f = np.fft.rfft(c, n=2 * n, axis=0)
    acov = np.fft.irfft(f * np.conj(f), axis=0)[:n] / n
    out = np.empty(chain.shape[1])
    for j in range(chain.shape[1]):
        rho = acov[:, j] / acov[0, j] if acov[0, j] > 0 else np.zeros(n)
        total = -1.0
        for t in range(0, n - 1, 2):
            pair = rho[t] + rho[t + 1]
            if pair <= 0:
                break
            total += 2.0 * pair
        out[j] = n / max(total, 1.0 / n)
    return out


# ---------------------------------------------------------------- JAX
def jax_sampler(dim, n, eps, steps, b):
    """The same sampler in JAX, jitted; None when JAX is not installed."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def logp(x):
        u, w = x[0::2], x[1::2]
        v = w + b * (u * u - 100.0)
        return -(jnp.sum(u * u) / 200.0 + 0.5 * jnp.sum(v * v))
    vg = jax.value_and_grad(logp)

    def transition(state, key):
        x, lp, g = state
        kp, ku = jax.random.split(key)
        p = jax.random.normal(kp, (dim,))
        h0 = 0.5 * jnp.sum(p * p) - lp

        def leapfrog(k, s):
            xn, pn, _, _ = s
            xn = xn + eps * pn
            lpn, gn = vg(xn)
            pn = pn + jnp.where(k < steps - 1, eps, 0.5 * eps) * gn
            return xn, pn, lpn, gn
        xn, pn, lpn, gn = jax.lax.fori_loop(0, steps, leapfrog,
                                            (x, p + 0.5 * eps * g, lp, g))
        h1 = 0.5 * jnp.sum(pn * pn) - lpn
        accept = jnp.log(jax.random.uniform(ku)) < h0 - h1
        state = jax.tree_util.tree_map(lambda a, c: jnp.where(accept, a, c),
                                       (xn, lpn, gn), (x, lp, g))
        return state, (state[0], accept)

    @jax.jit
    def chain(x0, key):
        lp, g = vg(x0)
        _, (xs, acc) = jax.lax.scan(transition, (x0, lp, g), jax.random.split(key, n))
        return xs, jnp.mean(acc)

    def run(x0, seed):
        xs, acc = chain(jnp.asarray(x0), jax.random.PRNGKey(seed))
        xs.block_until_ready()
        return np.asarray(xs), float(acc)
    return run


# ---------------------------------------------------------------- the run
def _median(call, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def run(quick=False, repeat=None, with_jax=True):
    dim, n, steps = QUICK if quick else (DIM, SAMPLES, LEAPFROG)
    repeat = repeat or (2 if quick else 7)
    b, eps = CURVATURE, STEP
    rng = np.random.default_rng(11)
    x0 = rng.standard_normal(dim)
    lp, (g, none) = banana_logp.value_and_grad(x0, b)
    hl, (hg, _) = banana_value_and_grad(x0, b)
    if none is not None or not (np.isclose(lp, hl, rtol=1e-13)
                                and np.allclose(g, hg, rtol=1e-12, atol=1e-14)):
        raise AssertionError("banana_logp.value_and_grad differs from the hand-written one")
    ours_fn, hand_fn = banana_logp.value_and_grad, banana_value_and_grad
    ours = hmc(ours_fn, x0, b, n, eps, steps, 5)        # compiled here, not timed
    hand = hmc(hand_fn, x0, b, n, eps, steps, 5)
    if not np.allclose(ours[0], hand[0], rtol=1e-9, atol=1e-9):
        raise AssertionError("the two chains differ")
    row = {"case": "HMC sampler, %d-d banana, %d transitions of %d leapfrog steps"
                   % (dim, n, steps), "accept": ours[1]}
    row["ours_s"], (chain, _) = _median(lambda: hmc(ours_fn, x0, b, n, eps, steps, 5),
                                        repeat)
    row["hand_s"], _ = _median(lambda: hmc(hand_fn, x0, b, n, eps, steps, 5), repeat)
    row["ours_over_hand"] = row["ours_s"] / row["hand_s"]
    ess = float(effective_sizes(chain).min())
    row["min_ess"] = ess
    row["ours_ess_per_s"] = ess / row["ours_s"]
    row["hand_ess_per_s"] = ess / row["hand_s"]
    sampler = jax_sampler(dim, n, eps, steps, b) if with_jax else None
    if sampler is not None:
        sampler(x0, 5)                                  # compiled here, not timed
        row["jax_s"], (jchain, jacc) = _median(lambda: sampler(x0, 5), repeat)
        row["jax_accept"] = jacc
        row["jax_min_ess"] = float(effective_sizes(jchain).min())
        row["jax_ess_per_s"] = row["jax_min_ess"] / row["jax_s"]
    return row


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_hmc", description=__doc__)
    p.add_argument("--quick", action="store_true", help="a small chain, few repeats")
    print(run(p.parse_args(argv).quick))


if __name__ == "__main__":
    main()
