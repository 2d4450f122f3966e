"""The vjp of an array-returning time-stepping function: ``f.vjp`` and ``f.vjp_call``
against JAX's ``jax.vjp`` of the same program (``lax.scan``, ``jax.jit``-ed, float64).

    python -m benchmarks.bench_vjp [--quick] [--out DIR]

The program is a chain of ``n`` masses joined by springs with a cubic restoring force,
stepped ``steps`` times; it returns the positions at every step, a ``(steps, n)`` array.
Each size is timed as one call that gives the trajectory and the input cotangents for a
fixed cotangent: ``value, pullback = f.vjp(...); pullback(ct)`` for ours, a jitted
``jax.vjp`` and its pullback for JAX; ``f.vjp_call`` (the input cotangents alone) and the
Numba primal are timed too. Each time is the fastest of the repeated calls. The
cotangents of the two are compared before anything is timed. Writes vjp.json and vjp.md
(default docs/; build/benchmarks-quick/ with --quick).
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
    restoring force) at each of ``steps`` semi-implicit Euler steps. Written as JAX's is:
    the cubic force, then each spring's force on its two masses, then the positions."""
    n = x0.shape[0]
    x = x0.copy()
    v = v0.copy()
    out = np.empty((steps, n))
    for t in range(steps):
        for i in range(n):
            xi = x[i]
            v[i] += DT * (-0.1 * xi * xi * xi)
        for i in range(n - 1):
            s = k[i] * (x[i + 1] - x[i])
            v[i] += DT * s
            v[i + 1] -= DT * s
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


def _best(fn, repeat):
    """The fastest of ``repeat`` calls after a warm-up: on a shared machine the median
    also counts the calls another process preempted."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.min(times))


def _args(n, steps):
    rng = np.random.default_rng(n)
    x0 = 0.5 * rng.standard_normal(n)
    v0 = 0.1 * rng.standard_normal(n)
    k = 1.0 + rng.random(max(n - 1, 1))[:n - 1]
    ct = rng.standard_normal((steps, n))
    return x0, v0, k, ct


def measure_ours(n, steps, repeat):
    """Seconds per call of the Numba primal, ``f.vjp`` + pullback and ``f.vjp_call``."""
    x0, v0, k, ct = _args(n, steps)

    def ours():
        value, pullback = chain.vjp(x0, v0, k, steps)
        return value, pullback(ct)
    return {"masses": n, "steps": steps,
            "primal_s": _best(lambda: chain(x0, v0, k, steps), repeat),
            "ours_vjp_s": _best(ours, repeat),
            "ours_vjp_call_s": _best(lambda: chain.vjp_call(x0, v0, k, steps, ct), repeat)}


def measure_jax(row, repeat):
    """JAX's jitted vjp for the size of ``row``, after checking its value and cotangents
    against ours; adds its time and the ratio to ``row``."""
    import jax
    n, steps = row["masses"], row["steps"]
    x0, v0, k, ct = _args(n, steps)
    value, pullback = chain.vjp(x0, v0, k, steps)
    cts = pullback(ct)
    with jax.enable_x64(True):
        program = jax_chain(steps)

        @jax.jit
        def jax_vjp(x0, v0, k, ct):
            value, pullback = jax.vjp(program, x0, v0, k)
            return value, pullback(ct)

        def theirs():
            value, cts = jax_vjp(x0, v0, k, ct)
            return np.asarray(value), tuple(np.asarray(c) for c in cts)
        jvalue, jcts = theirs()
        np.testing.assert_allclose(value, jvalue, rtol=1e-10, atol=1e-12)
        for a, b in zip(cts[:3], jcts):
            np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10 * np.abs(b).max())
        row["jax_vjp_s"] = _best(theirs, repeat)
    row["jax_over_ours"] = row["jax_vjp_s"] / row["ours_vjp_s"]


def run(sizes=SIZES, repeat=50):
    """Every size with ours, then with JAX (whose threads would otherwise still be busy
    while ours is timed)."""
    rows = [measure_ours(n, steps, repeat) for n, steps in sizes]
    try:
        import jax  # noqa: F401
    except ImportError:
        for row in rows:
            row["jax"] = "not installed"
        return rows
    for row in rows:
        measure_jax(row, repeat)
    return rows


def markdown(rows):
    # A section of docs/interop.md, which includes this file.
    lines = ["## Speed: the vjp of a trajectory against JAX", "",
             "`python -m benchmarks.bench_vjp` (also run by `python -m benchmarks`): a chain "
             "of masses stepped in time, returning a `(steps, masses)` array of positions; "
             "the trajectory and the input cotangents for one cotangent, in one call; the "
             "fastest of 50 calls each (see benchmarks/bench_vjp.py).", "",
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
