"""Forward mode: the JVP of an array-returning time-stepping program, against JAX.

    python -m benchmarks.bench_jvp [--quick] [--out DIR]

The program is an explicit reaction-diffusion solver (a stencil and a nonlinear source,
two buffers swapped each step) returning its last state; the tangent is along the initial
state and the diffusion coefficient. Ours is ``f.jvp`` of the loop program; JAX's is
``jax.jit`` of ``jax.jvp`` of the same program written the way JAX wants it (array slices
in a ``lax.fori_loop``), float64. Both are checked against each other before anything is
timed. Reported: the fastest of the runs, each JVP over its own primal, and ours over JAX's.
``run(quick)`` returns the rows; ``write_all(rows, out)`` writes
``benchmarks_jvp.{json,md}``.
"""
import argparse
import json
import time
from pathlib import Path

import numpy as np

import numba_adstack as nad

#: (cells, steps) of each size measured.
SIZES = [(1_000, 200), (10_000, 200), (100_000, 50)]
QUICK_SIZES = [(200, 20)]


@nad.grad_jit
def reaction_diffusion(u, k, dt, steps):
    n = u.shape[0]
    v = u.copy()
    w = np.empty(n)
    for t in range(steps):
        for i in range(1, n - 1):
            lap = v[i - 1] - 2.0 * v[i] + v[i + 1]
            w[i] = v[i] + dt * (k * lap + v[i] * (1.0 - v[i]))
        w[0] = v[0]
        w[n - 1] = v[n - 1]
        v, w = w, v
    return v


def jax_version(steps, dt):
    """``(primal, jvp)`` of the same program, jitted by JAX; None without JAX."""
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    from jax import lax

    def program(u, k):
        def step(_, v):
            c = v[1:-1]
            lap = v[:-2] - 2.0 * c + v[2:]
            return v.at[1:-1].set(c + dt * (k * lap + c * (1.0 - c)))
        return lax.fori_loop(0, steps, step, u)

    primal = jax.jit(program)
    jvp = jax.jit(lambda u, k, du, dk: jax.jvp(program, (u, k), (du, dk)))

    def run_primal(u, k):
        return np.asarray(primal(u, k).block_until_ready())

    def run_jvp(u, k, du, dk):
        value, tangent = jvp(u, k, du, dk)
        return np.asarray(value), np.asarray(tangent.block_until_ready())
    return run_primal, run_jvp


def _best(call, repeat):
    """The fastest of ``repeat`` runs after a warm-up: on a shared machine the other
    runs measure the machine's load more than the code."""
    call()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return float(np.min(times))


def measure(cells, steps, repeat):
    rng = np.random.default_rng(3)
    u = rng.uniform(0.1, 0.9, cells)
    du = rng.standard_normal(cells)
    k, dk, dt = 0.2, 1.0, 0.1
    args, tangents = (u, k, dt, steps), (du, dk, None, None)
    value, tangent = reaction_diffusion.jvp(args, tangents)
    row = {"cells": cells, "steps": steps,
           "numba_primal_s": _best(lambda: reaction_diffusion(*args), repeat),
           "ours_jvp_s": _best(lambda: reaction_diffusion.jvp(args, tangents), repeat)}
    row["ours_jvp_over_primal"] = row["ours_jvp_s"] / row["numba_primal_s"]
    jx = jax_version(steps, dt)
    if jx is not None:
        run_primal, run_jvp = jx
        jv, jt = run_jvp(u, k, du, dk)
        if not (np.allclose(jv, value, rtol=1e-10) and np.allclose(jt, tangent, rtol=1e-8,
                                                                   atol=1e-10)):
            raise AssertionError("JAX's JVP differs from ours at %d cells" % cells)
        row["jax_primal_s"] = _best(lambda: run_primal(u, k), repeat)
        row["jax_jvp_s"] = _best(lambda: run_jvp(u, k, du, dk), repeat)
        row["jax_jvp_over_primal"] = row["jax_jvp_s"] / row["jax_primal_s"]
        row["ours_over_jax_jvp"] = row["ours_jvp_s"] / row["jax_jvp_s"]
    return row


def run(sizes=SIZES, repeat=15):
    return [measure(cells, steps, repeat) for cells, steps in sizes]


def _fmt(row, key, ratio=False):
    if key not in row:
        return "n/a"
    return "%.2fx" % row[key] if ratio else "%.3g ms" % (1e3 * row[key])


def write_all(rows, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "benchmarks_jvp.json", out / "benchmarks_jvp.md"]
    paths[0].write_text(json.dumps(rows, indent=1) + "\n")
    lines = ["# Forward mode against JAX", "",
             "Written by `python -m benchmarks.bench_jvp` (also run by "
             "`python -m benchmarks`): the JVP of an explicit reaction-diffusion solver "
             "returning its last state, along the initial state and the diffusion "
             "coefficient. Fastest of 15 runs each (the machine is shared); lower ratios are better.", "",
             "| cells | steps | numba primal | ours jvp | jvp / primal | JAX primal "
             "| JAX jvp | JAX jvp / primal | ours / JAX |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %d | %d | %s | %s | %s | %s | %s | %s | %s |" % (
            r["cells"], r["steps"], _fmt(r, "numba_primal_s"), _fmt(r, "ours_jvp_s"),
            _fmt(r, "ours_jvp_over_primal", True), _fmt(r, "jax_primal_s"),
            _fmt(r, "jax_jvp_s"), _fmt(r, "jax_jvp_over_primal", True),
            _fmt(r, "ours_over_jax_jvp", True)))
    paths[1].write_text("\n".join(lines) + "\n")
    return paths


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_jvp", description=__doc__)
    p.add_argument("--quick", action="store_true", help="one tiny size, few repeats")
    p.add_argument("--out", default=None, help="folder (default: docs/ or build/)")
    a = p.parse_args(argv)
    rows = run(QUICK_SIZES, 3) if a.quick else run()
    out = a.out or ("build/benchmarks-quick" if a.quick else "docs")
    for path in write_all(rows, out):
        print("wrote", path)
    for r in rows:
        print(r)


if __name__ == "__main__":
    main()
