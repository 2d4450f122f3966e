"""An unbinned maximum-likelihood fit to convergence: ``scipy.optimize.minimize`` with
``jac=True`` on numba-stats' likelihood (``benchmarks/workloads_library.py``,
``numba_stats_nll``), its value and gradient from ``grad_jit``'s ``value_and_grad``, from
the hand-written gradient, and from JAX (``jax.scipy.stats``, ``jax.value_and_grad``).

    python -m benchmarks.bench_fit [--events N] [--repeat R]

Each fit starts from the same point and uses L-BFGS-B; the wall time of a whole fit is
the median over the repeats (the functions are compiled before). The fits must end at
the same minimum. Large arrays come from the heap, as in ``bench_real``
(``--fresh-pages`` leaves glibc's allocator as it is: each 8 MB temporary is then mapped
afresh and its page faults paid on every call).
"""
import argparse
import time

import numpy as np
from scipy.optimize import minimize

from .workloads_library import numba_stats_nll, numba_stats_nll_grad, _nll_args

START = np.array([1.2, 0.5, 1.5, 0.5])
BOUNDS = [(0.5, 3.0), (0.05, 2.0), (0.2, 10.0), (0.01, 0.99)]


def fitters(x):
    import numba
    import numba_adstack as nad
    ours = nad.grad_jit(numba_stats_nll, wrt=(1, 2, 3, 4))
    primal = numba.njit(numba_stats_nll)
    hand = numba.njit(numba_stats_nll_grad)

    def ours_fun(p):
        value, grads = ours.value_and_grad(x, *p)
        return value, np.array(grads[1:])

    def hand_fun(p):
        return primal(x, *p), np.array(hand(x, *p)[1:])

    out = {"grad_jit": ours_fun, "hand-written": hand_fun}
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        from jax.scipy import stats
        xj = jnp.asarray(x)

        def loss(p):
            ls = stats.norm.logpdf(xj, p[0], p[1])
            lb = stats.expon.logpdf(xj, 0.0, p[2])
            return -jnp.sum(jnp.log(p[3] * jnp.exp(ls) + (1.0 - p[3]) * jnp.exp(lb)))
        vg = jax.jit(jax.value_and_grad(loss))

        def jax_fun(p):
            value, g = vg(jnp.asarray(p))
            return float(value), np.asarray(g)
        out["JAX"] = jax_fun
    except ImportError:
        pass
    return out


def run(events, repeat, log=print, steady=True):
    if steady:
        from .bench_real import steady_allocator
        steady_allocator()
    x = _nll_args(False)[0]
    if events:                          # a sample of both components
        x = np.random.default_rng(0).permutation(x)[:events]
    rows = {}
    for name, fun in fitters(x).items():
        fun(START)                      # compiled before it is timed
        times, res = [], None
        for _ in range(repeat):
            t0 = time.perf_counter()
            res = minimize(fun, START, jac=True, method="L-BFGS-B", bounds=BOUNDS)
            times.append(time.perf_counter() - t0)
        rows[name] = {"seconds": float(np.median(times)), "calls": int(res.nfev),
                      "x": res.x.tolist(), "fun": float(res.fun)}
        log("%-13s %8.3f s  %3d calls  minimum %.6f at %s"
            % (name, rows[name]["seconds"], res.nfev, res.fun, np.round(res.x, 5)))
    ref = rows["hand-written"]
    for name, row in rows.items():
        if not np.allclose(row["x"], ref["x"], rtol=1e-3, atol=1e-4):
            log("%s: another minimum than the hand-written gradient's" % name)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=0, help="events (default 1M)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fresh-pages", action="store_true",
                        help="leave the allocator's settings alone")
    opts = parser.parse_args(argv)
    run(opts.events, opts.repeat, steady=not opts.fresh_pages)


if __name__ == "__main__":
    main()
