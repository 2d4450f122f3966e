"""Checkpointing of a long time loop: a 2-d heat equation, its gradient keeping the whole
history against the gradient checkpointed within a memory budget, and against JAX.

    python -m benchmarks.bench_checkpoint [--grid 128] [--steps 600] [--budget-mib 32]
    python -m benchmarks.bench_checkpoint --grid 10000 --steps 100000 \
        --crossover 0,4096,1024,256,64,16      # time against the budget, 1-d heat
    python -m benchmarks.bench_checkpoint --grid 512 --steps 2000 --modes \
        primal,default,jax_primal,jax --repeats 1        # the issue's grid, fewer steps

Each configuration runs in a fresh process (``--one MODE``): the primal (``numba.njit``),
the gradient keeping its history (``checkpoint="off"``), the default gradient with
``memory_budget`` set (it checkpoints once the projected history is past the budget), the
default gradient with the default budget (``default``: a fraction of the available
memory), ``checkpoint="revolve", snapshots=...`` (segments of one step), and JAX: the
same step in a ``lax.scan`` over segments of about ``sqrt(steps)`` steps, each segment an
inner ``lax.scan`` wrapped in ``jax.checkpoint`` (placed by hand: the outer scan keeps
the state at each segment's start, the inner one's residuals are recomputed), and its
primal (``jax_primal``). Reported: the median and minimum time of a call, the peak
resident memory a call adds (``peak_memory_of``), the ratio to the primal, and whether
the gradient equals the one keeping the whole history to the last bit (JAX's: its
largest relative difference from ours). ``--schedule-only`` prints, without running
anything heavy, the schedule the default budget gives at a size (forward runs per step).
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


def heat1d(u0, k, n):
    u = u0.copy()
    for t in range(n):
        lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u[1:-1] = u[1:-1] + k * lap
    return np.sum(u * u)


def _crossover_one(cells, steps, budget_mib):
    """One gradient of the 1-d heat equation with ``memory_budget`` (``0``: the whole
    history, ``checkpoint="off"``), after a call that compiles what it needs."""
    import numba_adstack as nad
    u0 = np.sin(np.linspace(0.0, 3.0, cells)) ** 2
    if budget_mib == 0:
        g, warm = nad.grad_jit(checkpoint="off")(heat1d), 2
    else:
        budget = int(budget_mib * 2 ** 20)
        g = nad.grad_jit(memory_budget=budget)(heat1d)
        # past the budget: the checkpointed variant is compiled too
        warm = min(steps, int(1.1 * budget / ((cells - 2) * 8)) + 2)
    g.grad(u0, 0.1, warm)
    import resource
    t, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    out = g.grad(u0, 0.1, steps)[0]
    end = resource.getrusage(resource.RUSAGE_SELF)
    res = {"budget_mib": budget_mib, "s": time.perf_counter() - t,
           "user_s": end.ru_utime - cpu.ru_utime, "sys_s": end.ru_stime - cpu.ru_stime,
           "checksum": float(np.sum(out * np.arange(cells)))}
    print("RESULT " + json.dumps(res))


def _crossover(cells, steps, budgets):
    """The time of a gradient against the memory budget, each in a fresh process."""
    hist = (cells - 2) * 8 * steps
    print("1-d heat equation, %d cells, %d steps: history %.2f GiB" % (cells, steps,
                                                                       hist / 2 ** 30))
    # CPU time (user + system: page faults are system time) is steadier than wall time
    # on a machine others share.
    print("| memory budget | gradient, wall (s) | CPU user (s) | CPU system (s) | "
          "same gradient as the whole history |")
    print("|---:|---:|---:|---:|---|")
    ref = None
    for b in budgets:
        p = subprocess.run([sys.executable, "-m", "benchmarks.bench_checkpoint",
                            "--crossover-one", str(b), "--grid", str(cells),
                            "--steps", str(steps)], capture_output=True, text=True)
        line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
        if not line:
            print(p.stdout, p.stderr)
            continue
        r = json.loads(line[0][7:])
        ref = r["checksum"] if ref is None else ref
        print("| %s | %.2f | %.2f | %.2f | %s |" % (
            "whole history" if b == 0 else "%g MiB" % b, r["s"], r["user_s"], r["sys_s"],
            "yes" if r["checksum"] == ref else "NO"), flush=True)


def _inputs(grid):
    x = np.linspace(0.0, 1.0, grid)
    return np.sin(3.0 * x)[:, None] * np.cos(2.0 * x)[None, :]


def _jax_functions(steps, segment):
    """JAX's loss and its jitted value and gradient: ``steps`` steps as an outer scan of
    segments, each an inner scan under ``jax.checkpoint``, then the remainder."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    jax.config.update("jax_enable_x64", True)

    def loss(u0, k):
        def step(u, _):
            lap = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                   - 4.0 * u[1:-1, 1:-1])
            return u.at[1:-1, 1:-1].set(u[1:-1, 1:-1] + k * lap), None

        @jax.checkpoint
        def run_segment(u, _):
            return lax.scan(step, u, None, length=segment)[0], None

        u = lax.scan(run_segment, u0, None, length=steps // segment)[0]
        u = lax.scan(step, u, None, length=steps % segment)[0]
        return jnp.sum(u * u)
    return jax, jax.jit(loss), jax.jit(jax.grad(loss, argnums=(0, 1)))


def _one(mode, grid, steps, budget, snapshots, repeats, segment):
    u0 = _inputs(grid)
    args = (u0, 0.2, steps)
    if mode in ("jax", "jax_primal"):
        jax, primal, grad = _jax_functions(steps, segment)
        f = grad if mode == "jax" else primal
        call = lambda: jax.block_until_ready(f(u0, 0.2))   # noqa: E731
    elif mode == "primal":
        import numba
        f = numba.njit(heat2d)
        call = lambda: f(*args)        # noqa: E731
    else:
        import numba_adstack as nad
        opts = {"off": dict(checkpoint="off"),
                "auto": dict(memory_budget=budget),
                "default": dict(),
                "revolve": dict(checkpoint="revolve", snapshots=snapshots)}[mode]
        g = nad.grad_jit(**opts)(heat2d)
        call = lambda: g.grad(*args)   # noqa: E731
    if repeats == 0:
        # One call only (the full-size run takes minutes per call): compiled first on two
        # steps, then timed and its peak memory read in the same call.
        t0 = time.perf_counter()
        if mode not in ("jax", "jax_primal"):
            (g.grad if mode != "primal" else f)(u0, 0.2, 2)
        first = time.perf_counter() - t0
        box = {}

        def timed():
            t = time.perf_counter()
            box["out"] = call()
            box["s"] = time.perf_counter() - t
        mem = peak_memory_of(timed, fixed_threshold=False)
        out, times = box["out"], [box["s"]]
    else:
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
    if mode not in ("primal", "jax_primal"):
        np.save(os.environ["BENCH_CKPT_OUT"] + "_%s.npy" % mode, np.asarray(out[0]))
    print("RESULT " + json.dumps(res))


def _interleaved(grid, steps, rounds, modes, budget):
    """Rounds of the primal then each gradient mode in one process; each round's ratios."""
    import numba
    import numba_adstack as nad
    u0 = _inputs(grid)
    primal = numba.njit(heat2d)
    options = {"off": dict(checkpoint="off"), "auto": dict(memory_budget=budget),
               "default": dict()}
    grads = {m: nad.grad_jit(**options[m])(heat2d) for m in modes}
    primal(u0, 0.2, 2)
    for g in grads.values():
        g.grad(u0, 0.2, 2)
    ratios = {m: [] for m in modes}
    for r in range(rounds):
        t0 = time.perf_counter()
        primal(u0, 0.2, steps)
        tp = time.perf_counter() - t0
        line = "round %d: primal %.2f s" % (r, tp)
        for m, g in grads.items():
            t0 = time.perf_counter()
            g.grad(u0, 0.2, steps)
            t = time.perf_counter() - t0
            ratios[m].append(t / tp)
            line += ", %s %.2f s (%.2fx)" % (m, t, t / tp)
        print(line, flush=True)
    for m in modes:
        print("%s: median ratio %.2f (min %.2f, max %.2f)" % (
            m, statistics.median(ratios[m]), min(ratios[m]), max(ratios[m])))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", type=int, default=128)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--budget-mib", type=float, default=32.0)
    ap.add_argument("--snapshots", type=int, default=12)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--modes", default="primal,off,auto,revolve")
    ap.add_argument("--jax-segment", type=int, default=None,
                    help="steps per jax.checkpoint segment (default: about sqrt(steps))")
    ap.add_argument("--schedule-only", action="store_true")
    ap.add_argument("--one", default=None)
    ap.add_argument("--crossover", default=None, metavar="MIB,MIB,...",
                    help="the 1-d heat equation of --grid cells over --steps steps, its "
                         "gradient's time at each memory budget (0: the whole history)")
    ap.add_argument("--crossover-one", type=float, default=None)
    ap.add_argument("--interleave", type=int, default=0, metavar="ROUNDS",
                    help="in one process, ROUNDS rounds of the primal then the gradient "
                         "of each of --modes (default, off, auto), each round's ratios printed (steadier on a loaded "
                         "machine than ratios of separate processes)")
    a = ap.parse_args(argv)
    budget = int(a.budget_mib * 2 ** 20)
    segment = a.jax_segment or max(1, int(round(a.steps ** 0.5)))
    if a.crossover_one is not None:
        _crossover_one(a.grid, a.steps, a.crossover_one)
        return
    if a.crossover:
        _crossover(a.grid, a.steps, [float(b) for b in a.crossover.split(",")])
        return
    if a.schedule_only:
        _schedule(a.grid, a.steps)
        return
    if a.interleave:
        _interleaved(a.grid, a.steps, a.interleave, a.modes.split(","), budget)
        return
    if a.one:
        _one(a.one, a.grid, a.steps, budget, a.snapshots, a.repeats, segment)
        return
    out_base = "/tmp/bench_ckpt_%d" % os.getpid()
    env = dict(os.environ, BENCH_CKPT_OUT=out_base)
    rows = []
    for mode in a.modes.split(","):
        cmd = [sys.executable, "-m", "benchmarks.bench_checkpoint", "--one", mode,
               "--grid", str(a.grid), "--steps", str(a.steps), "--budget-mib",
               str(a.budget_mib), "--snapshots", str(a.snapshots), "--repeats", str(a.repeats),
               "--jax-segment", str(segment)]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
        if not line:
            print(p.stdout, p.stderr)
            continue
        rows.append(json.loads(line[0][7:]))
    primal = next((r for r in rows if r["mode"] == "primal"), None)
    ref = out_base + "_off.npy"
    ours = next((out_base + "_%s.npy" % m for m in ("off", "default", "auto", "revolve")
                 if os.path.exists(out_base + "_%s.npy" % m)), None)
    print("2-d heat equation, %dx%d grid (%.1f MiB), %d steps, memory budget of auto "
          "%.0f MiB, JAX segments of %d steps" % (a.grid, a.grid, a.grid ** 2 * 8 / 2 ** 20,
                                                  a.steps, a.budget_mib, segment))
    print("| configuration | first call (s) | median (s) | min (s) | / primal (median) | "
          "peak memory of a call (MiB) | gradient equal to full history |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        ratio = r["median_s"] / primal["median_s"] if primal else float("nan")
        same = ""
        if r["mode"] == "jax" and ours is not None:
            a_, b_ = np.load(out_base + "_jax.npy"), np.load(ours)
            same = "JAX: max relative difference %.1e" % (
                np.max(np.abs(a_ - b_)) / np.max(np.abs(b_)))
        elif r["mode"] not in ("primal", "off", "jax_primal") and os.path.exists(ref):
            same = "bit for bit" if np.array_equal(
                np.load(out_base + "_%s.npy" % r["mode"]), np.load(ref)) else "NO"
        print("| %s | %.2f | %.4f | %.4f | %.2f | %.1f | %s |" % (
            r["mode"], r["first_s"], r["median_s"], r["min_s"], ratio, r["peak_mib"], same))


def _schedule(grid, steps):
    """The schedule the default budget gives the loop at this size: its segments,
    snapshots and forward runs per step (from the projection the backward makes: the
    bytes one step keeps, measured at a small size and scaled to the grid)."""
    import numba_adstack as nad
    from numba_adstack import config
    from numba_adstack.ad.plan import checkpoint_schedule as CS
    small = 64
    g = nad.grad_jit(checkpoint="revolve", snapshots=2)(heat2d)
    src = g.inspect_adjoint(_inputs(small), 0.2, 3)
    note = src.splitlines()[0]
    arrays = int(note.split(" arrays per iteration")[0].rsplit(" ", 1)[1])
    state = grid * grid * 8
    per_step = arrays * state
    budget = config.default_memory_budget()
    acts = CS.plan_schedule(steps, per_step, state, budget, -1)
    half = budget // 2
    seg = max(1, half // per_step)
    print("grid %d, %d steps: one step keeps %d arrays (%.1f MiB); history %.1f GiB; "
          "default budget %.2f GiB: segments of %d steps, %d snapshots, %.2f forward runs "
          "per step" % (grid, steps, arrays, per_step / 2 ** 20, per_step * steps / 2 ** 30,
                        budget / 2 ** 30, seg, CS.slot_count(acts),
                        CS.forward_steps(acts) / steps))


if __name__ == "__main__":
    main()
