"""The vjp of an array-returning time-stepping function: ``f.vjp`` and ``f.vjp_call``
against JAX's ``jax.vjp`` of the same program (``lax.scan``, ``jax.jit``-ed, float64).

    python -m benchmarks.bench_vjp [--quick] [--out DIR]

The program is a chain of ``n`` masses joined by springs with a cubic restoring force,
stepped ``steps`` times; it returns the positions at every step, a ``(steps, n)`` array.
Each size is timed as one call that gives the trajectory and the input cotangents for a
fixed cotangent: ``value, pullback = f.vjp(...); pullback(ct)`` for ours, a jitted
``jax.vjp`` and its pullback for JAX; ``f.vjp_call`` (the input cotangents alone) and the
Numba primal are timed too. The cotangents of the two are compared before anything is
timed. Writes vjp.json and vjp.md (default docs/; build/benchmarks-quick/ with --quick).
"""
import argparse
import json
import time
from pathlib import Path

import numpy as np

import numba_adstack as nad

REPO = Path(__file__).resolve().parent.parent
DT = 0.01
#: (masses, steps): a small state over many steps, and a wide state over fewer.
SIZES = [(8, 2000), (64, 1000), (512, 200)]
QUICK_SIZES = [(4, 20)]


@nad.grad_jit
def chain(x0, v0, k, steps):
    """Positions of a chain of unit masses (springs ``k`` between neighbours, a cubic
    restoring force) at each of ``steps`` semi-implicit Euler steps."""
    n = x0.shape[0]
    x = x0.copy()
    v = v0.copy()
    out = np.empty((steps, n))
    for t in range(steps):
        for i in range(n):
            f = -0.1 * x[i] * x[i] * x[i]
            if i > 0:
                f += k[i - 1] * (x[i - 1] - x[i])
            if i < n - 1:
                f += k[i] * (x[i + 1] - x[i])
            v[i] += DT * f
        for i in range(n):
            x[i] += DT * v[i]
            out[t, i] = x[i]
    return out


def jax_chain(steps):
    """The same program in JAX: a ``lax.scan`` over the steps, stacking the positions."""
    import jax.numpy as jnp
    from jax import lax

    def run(x0, v0, k):
        def step(state, _):
            x, v = state
            s = k * (x[1:] - x[:-1])
            f = -0.1 * x * x * x + jnp.zeros_like(x).at[:-1].add(s).at[1:].add(-s)
            v = v + DT * f
            x = x + DT * v
            return (x, v), x
        return lax.scan(step, (x0, v0), None, length=steps)[1]
    return run


def _median(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _args(n, steps):
    rng = np.random.default_rng(n)
    x0 = 0.5 * rng.standard_normal(n)
    v0 = 0.1 * rng.standard_normal(n)
    k = 1.0 + rng.random(max(n - 1, 1))[:n - 1]
    ct = rng.standard_normal((steps, n))
    return x0, v0, k, ct


def measure(n, steps, repeat):
    """Seconds per call of each variant for one size, after checking the cotangents."""
    x0, v0, k, ct = _args(n, steps)

    def ours():
        value, pullback = chain.vjp(x0, v0, k, steps)
        return value, pullback(ct)
    value, cts = ours()
    row = {"masses": n, "steps": steps,
           "primal_s": _median(lambda: chain(x0, v0, k, steps), repeat),
           "ours_vjp_s": _median(ours, repeat),
           "ours_vjp_call_s": _median(lambda: chain.vjp_call(x0, v0, k, steps, ct), repeat)}
    try:
        import jax
    except ImportError:
        row["jax"] = "not installed"
        return row
    with jax.enable_x64(True):
        run = jax_chain(steps)

        @jax.jit
        def jax_vjp(x0, v0, k, ct):
            value, pullback = jax.vjp(run, x0, v0, k)
            return value, pullback(ct)

        def theirs():
            value, cts = jax_vjp(x0, v0, k, ct)
            return np.asarray(value), tuple(np.asarray(c) for c in cts)
        jvalue, jcts = theirs()
        np.testing.assert_allclose(value, jvalue, rtol=1e-10, atol=1e-12)
        for a, b in zip(cts[:3], jcts):
            np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10 * np.abs(b).max())
        row["jax_vjp_s"] = _median(theirs, repeat)
    row["jax_over_ours"] = row["jax_vjp_s"] / row["ours_vjp_s"]
    return row


def run(sizes=SIZES, repeat=20):
    return [measure(n, steps, repeat) for n, steps in sizes]


def markdown(rows):
    # A section of docs/interop.md, which includes this file.
    lines = ["## Speed: the vjp of a trajectory against JAX", "",
             "`python -m benchmarks.bench_vjp` (also run by `python -m benchmarks`): a chain "
             "of masses stepped in time, returning a `(steps, masses)` array of positions; "
             "the trajectory and the input cotangents for one cotangent, in one call, "
             "medians of repeated calls (see benchmarks/bench_vjp.py).", "",
             "| masses | steps | Numba primal (ms) | `f.vjp` + pullback (ms) | `f.vjp_call` (ms) "
             "| JAX `jit(vjp)` (ms) | JAX / ours |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        jax_ms = "%.3f" % (1e3 * r["jax_vjp_s"]) if "jax_vjp_s" in r else r.get("jax", "")
        ratio = "%.1f" % r["jax_over_ours"] if "jax_over_ours" in r else ""
        lines.append("| %d | %d | %.3f | %.3f | %.3f | %s | %s |" % (
            r["masses"], r["steps"], 1e3 * r["primal_s"], 1e3 * r["ours_vjp_s"],
            1e3 * r["ours_vjp_call_s"], jax_ms, ratio))
    return "\n".join(lines) + "\n"


def write_all(rows, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "vjp.json").write_text(json.dumps(rows, indent=1))
    (out / "vjp.md").write_text(markdown(rows))
    return [out / "vjp.json", out / "vjp.md"]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_vjp", description=__doc__)
    p.add_argument("--quick", action="store_true", help="tiny sizes, few repeats")
    p.add_argument("--out", default=None, help="folder (default docs/, or build/ with --quick)")
    a = p.parse_args(argv)
    rows = run(QUICK_SIZES, 2) if a.quick else run()
    out = a.out or (REPO / ("build/benchmarks-quick" if a.quick else "docs"))
    print(markdown(rows))
    for path in write_all(rows, out):
        print("wrote", path)


if __name__ == "__main__":
    main()
