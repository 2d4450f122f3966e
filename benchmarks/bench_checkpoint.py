"""Checkpointing of a long time loop: a 2-d heat equation, its gradient keeping the whole
history against the gradient checkpointed within a memory budget.

    python -m benchmarks.bench_checkpoint [--grid 128] [--steps 600] [--budget-mib 32]

Each configuration runs in a fresh process (``--one MODE``): the primal (``numba.njit``),
the gradient keeping its history (``checkpoint="off"``), the default gradient with
``memory_budget`` set (it checkpoints once the projected history is past the budget) and
``checkpoint="revolve", snapshots=...`` (segments of one step). Reported: the median and
minimum time of a call, the peak resident memory a call adds (``peak_memory_of``), the
ratio to the primal, and whether the gradient equals the one keeping the whole history
to the last bit.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from .measure import peak_memory_of


def heat2d(u0, k, n):
    u = u0.copy()
    for t in range(n):
        lap = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
               - 4.0 * u[1:-1, 1:-1])
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + k * lap
    return np.sum(u * u)


def _inputs(grid):
    x = np.linspace(0.0, 1.0, grid)
    return np.sin(3.0 * x)[:, None] * np.cos(2.0 * x)[None, :]


def _one(mode, grid, steps, budget, snapshots, repeats):
    import numba
    import numba_adstack as nad
    u0 = _inputs(grid)
    args = (u0, 0.2, steps)
    if mode == "primal":
        f = numba.njit(heat2d)
        call = lambda: f(*args)        # noqa: E731
    else:
        opts = {"off": dict(checkpoint="off"),
                "auto": dict(memory_budget=budget),
                "revolve": dict(checkpoint="revolve", snapshots=snapshots)}[mode]
        g = nad.grad_jit(**opts)(heat2d)
        call = lambda: g.grad(*args)   # noqa: E731
    t0 = time.perf_counter()
    out = call()
    first = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    mem = peak_memory_of(call)
    res = {"mode": mode, "first_s": first, "median_s": statistics.median(times),
           "min_s": min(times), "peak_mib": mem["peak_mib"]}
    if mode != "primal":
        np.save(os.environ["BENCH_CKPT_OUT"] + "_%s.npy" % mode, out[0])
    print("RESULT " + json.dumps(res))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", type=int, default=128)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--budget-mib", type=float, default=32.0)
    ap.add_argument("--snapshots", type=int, default=12)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--modes", default="primal,off,auto,revolve")
    ap.add_argument("--one", default=None)
    a = ap.parse_args(argv)
    budget = int(a.budget_mib * 2 ** 20)
    if a.one:
        _one(a.one, a.grid, a.steps, budget, a.snapshots, a.repeats)
        return
    out_base = "/tmp/bench_ckpt_%d" % os.getpid()
    env = dict(os.environ, BENCH_CKPT_OUT=out_base)
    rows = []
    for mode in a.modes.split(","):
        cmd = [sys.executable, "-m", "benchmarks.bench_checkpoint", "--one", mode,
               "--grid", str(a.grid), "--steps", str(a.steps), "--budget-mib",
               str(a.budget_mib), "--snapshots", str(a.snapshots), "--repeats", str(a.repeats)]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
        if not line:
            print(p.stdout, p.stderr)
            continue
        rows.append(json.loads(line[0][7:]))
    primal = next((r for r in rows if r["mode"] == "primal"), None)
    ref = out_base + "_off.npy"
    history = (a.grid - 2) ** 2 * 8 * a.steps / 2 ** 20
    print("2-d heat equation, %dx%d grid, %d steps (one array of the interior kept per "
          "step: %.0f MiB), memory budget %.0f MiB" % (a.grid, a.grid, a.steps, history,
                                                      a.budget_mib))
    print("| configuration | first call (s) | median (s) | min (s) | / primal (median) | "
          "peak memory of a call (MiB) | gradient equal to full history |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        ratio = r["median_s"] / primal["median_s"] if primal else float("nan")
        same = ""
        if r["mode"] not in ("primal", "off") and os.path.exists(ref):
            same = "bit for bit" if np.array_equal(
                np.load(out_base + "_%s.npy" % r["mode"]), np.load(ref)) else "NO"
        print("| %s | %.2f | %.4f | %.4f | %.2f | %.1f | %s |" % (
            r["mode"], r["first_s"], r["median_s"], r["min_s"], ratio, r["peak_mib"], same))


if __name__ == "__main__":
    main()
