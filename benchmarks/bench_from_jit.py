"""Gradients called from jitted code, against hand-written gradients.

    python -m benchmarks.bench_from_jit [--quick] [--out DIR]

1. A UMAP-style SGD layout epoch: an embedding of 2,000 points of dimension 16 and 60,000
   edges; per edge, a jitted loop takes the gradient of the Euclidean distance between the
   two ends and moves both. Ours calls ``dist.grad`` (``dist`` a ``grad_jit`` function);
   the twin calls a hand-written ``euclidean_grad``, as UMAP keeps one beside each of its
   distances. Both loops are the same ``numba.njit`` code; both gradients return two new
   arrays. The layouts are compared before anything is timed.
2. The cost of one call from Python: ``dist.grad(x, y)`` on 16-element arrays against a
   call of the hand-written twin (an ``njit`` function) with the same arguments.
3. An HMC sampler in Numba on a 100-dimensional banana (:mod:`.bench_hmc`), with
   ``logp.value_and_grad`` against a hand-written gradient, and its effective samples per
   second beside JAX's.

Reported: medians of the runs, and ours over the twin. ``run(quick)`` returns the rows;
``write_all(rows, out)`` writes ``from_jit.{json,md}``.
"""
import argparse
import json
import math
import time
from pathlib import Path

import numba
import numpy as np

import numba_adstack as nad

POINTS, DIM, EDGES = 2_000, 16, 60_000
QUICK = (200, 16, 2_000)


@nad.grad_jit
def dist(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - y[i]
        s += d * d
    return math.sqrt(s)


@numba.njit
def euclidean_grad(x, y):
    """The hand-written gradient of ``dist`` with respect to both arguments."""
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - y[i]
        s += d * d
    r = math.sqrt(s)
    gx = np.empty_like(x)
    gy = np.empty_like(y)
    for i in range(x.shape[0]):
        g = (x[i] - y[i]) / r
        gx[i] = g
        gy[i] = -g
    return gx, gy


@numba.njit
def epoch_ours(E0, heads, tails, lr):
    E = E0.copy()
    for k in range(heads.shape[0]):
        gx, gy = dist.grad(E[heads[k]], E[tails[k]])
        E[heads[k]] -= lr * gx
        E[tails[k]] -= lr * gy
    return E


@numba.njit
def epoch_hand(E0, heads, tails, lr):
    E = E0.copy()
    for k in range(heads.shape[0]):
        gx, gy = euclidean_grad(E[heads[k]], E[tails[k]])
        E[heads[k]] -= lr * gx
        E[tails[k]] -= lr * gy
    return E


def _median(call, repeat, number=1):
    """Median seconds of one call, over ``repeat`` runs of ``number`` calls after a
    warm-up."""
    call()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            call()
        times.append((time.perf_counter() - t0) / number)
    return float(np.median(times))


def _medians_interleaved(calls, repeat, number):
    """Median seconds of one call of each of ``calls``, their runs of ``number`` calls
    taken in turn (a load on the machine falls on all of them alike)."""
    for call in calls:
        call()
    times = [[] for _ in calls]
    for _ in range(repeat):
        for call, out in zip(calls, times):
            t0 = time.perf_counter()
            for _ in range(number):
                call()
            out.append((time.perf_counter() - t0) / number)
    return [float(np.median(t)) for t in times]


def layout_epoch(points, dim, edges, repeat):
    rng = np.random.default_rng(7)
    E = rng.standard_normal((points, dim))
    heads = rng.integers(0, points, edges)
    tails = (heads + rng.integers(1, points, edges)) % points     # no edge to itself
    lr = 1e-3
    ours, hand = epoch_ours(E, heads, tails, lr), epoch_hand(E, heads, tails, lr)
    if not np.allclose(ours, hand, rtol=1e-12, atol=1e-12):
        raise AssertionError("the two layouts differ")
    row = {"case": "UMAP-style layout epoch (%d points, dim %d, %d edges)"
                   % (points, dim, edges),
           "ours_s": _median(lambda: epoch_ours(E, heads, tails, lr), repeat),
           "hand_s": _median(lambda: epoch_hand(E, heads, tails, lr), repeat)}
    row["ours_over_hand"] = row["ours_s"] / row["hand_s"]
    row["ours_per_edge_ns"] = 1e9 * row["ours_s"] / edges
    return row


def python_call(dim, repeat, number):
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal(dim), rng.standard_normal(dim)
    got, want = dist.grad(x, y), euclidean_grad(x, y)
    if not all(np.allclose(g, w, rtol=1e-13) for g, w in zip(got, want)):
        raise AssertionError("dist.grad differs from euclidean_grad")
    ours_s, hand_s = _medians_interleaved(
        [lambda: dist.grad(x, y), lambda: euclidean_grad(x, y)], repeat, number)
    row = {"case": "one call from Python (%d-element distance)" % dim,
           "ours_s": ours_s, "hand_s": hand_s}
    row["ours_over_hand"] = row["ours_s"] / row["hand_s"]
    return row


def run(quick=False):
    from .bench_hmc import run as hmc
    points, dim, edges = QUICK if quick else (POINTS, DIM, EDGES)
    repeat = 3 if quick else 15
    return [layout_epoch(points, dim, edges, repeat),
            python_call(DIM, repeat, 200 if quick else 20_000),
            hmc(quick)]


def _time(s):
    return "%.3g ms" % (1e3 * s) if s >= 1e-4 else "%.3g us" % (1e6 * s)


def write_all(rows, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "from_jit.json", out / "from_jit.md"]
    paths[0].write_text(json.dumps(rows, indent=1) + "\n")
    lines = ["# Gradients from jitted code", "",
             "Written by `python -m benchmarks.bench_from_jit`: `dist.grad` of a `grad_jit` "
             "Euclidean distance against a hand-written `euclidean_grad` (`numba.njit`), "
             "called per edge from a jitted SGD layout loop and once from Python; an HMC "
             "sampler in `numba.njit` calling a log-density's `value_and_grad` against the "
             "same sampler with a hand-written one, and beside JAX. Medians of the runs (15; "
             "one call from Python: the median of 15 runs of 20,000 calls, ours and the "
             "twin in turn; a chain: 7); lower ratios are better.", "",
             "| case | ours (`f.grad`) | hand-written | ours / hand-written | JAX |",
             "|---|---|---|---|---|"]
    for r in rows:
        if "min_ess" in r:          # a sampler: its effective samples per second too
            cells = ["%s (%.0f ESS/s)" % (_time(r[k + "_s"]), r[k + "_ess_per_s"])
                     if k + "_s" in r else "not run" for k in ("ours", "hand", "jax")]
        else:
            cells = [_time(r["ours_s"]), _time(r["hand_s"]), "-"]
        lines.append("| %s | %s | %s | %.2f | %s |" % (r["case"], cells[0], cells[1],
                                                       r["ours_over_hand"], cells[2]))
    epoch, call, sampler = rows
    lines += ["", "Goals: the layout epoch within 1.2x of the hand-written gradient: %s "
              "(%.2f); one call from Python within 1.2x of the `njit` call of the twin: %s "
              "(%.2f); the HMC sampler within 1.3x of the hand-written gradient: %s (%.2f)."
              % ("met" if epoch["ours_over_hand"] <= 1.2 else "**missed**",
                 epoch["ours_over_hand"],
                 "met" if call["ours_over_hand"] <= 1.2 else "**missed**",
                 call["ours_over_hand"],
                 "met" if sampler["ours_over_hand"] <= 1.3 else "**missed**",
                 sampler["ours_over_hand"]),
              "",
              "In the jitted loop the call is the backward's own: the attribute's function "
              "and the per-signature call are inlined into the loop, which calls the "
              "generated backward directly (%.0f ns per edge, two gradients of 16 elements "
              "and the update); both gradients run two loops over the elements, and both "
              "allocate their two result arrays." % epoch["ours_per_edge_ns"],
              "",
              "From Python, `dist.grad(x, y)` is one Python frame (`GradDispatcher.grad`: "
              "it adds the seed, takes the gradients from `(value, gradients)`, and names "
              "the function when a fixed-size stack overflows) around one Numba dispatch: "
              "a table of the compiled backwards of every signature, a Numba dispatcher, "
              "types the arguments and finds the backward in C as the `njit` call of the "
              "twin does (`numba_adstack/ad/dispatch/signatures.py`). What is left over the twin is "
              "that frame: %.2f us a call here." % (1e6 * (call["ours_s"] - call["hand_s"])),
              "",
              "The HMC sampler (`benchmarks/bench_hmc.py`) is one `numba.njit` function "
              "taking the log-density's `value_and_grad` as a function value: "
              "`banana_logp.value_and_grad` of a `grad_jit` log-density (`wrt=\"x\"`), or a "
              "hand-written twin. The target is a banana in pairs (`u ~ N(0, 100)`, "
              "`v + 0.03 (u^2 - 100) ~ N(0, 1)`), unit mass matrix, step 0.3, acceptance "
              "%.2f; both runs draw the same chain. JAX runs the same algorithm "
              "(`jax.lax.fori_loop` leapfrog steps with `jax.value_and_grad` of the "
              "vectorised log-density, `jax.lax.scan` over the transitions, one `jax.jit`, "
              "compile not timed). ESS is the smallest effective sample size over the "
              "coordinates (Geyer's initial positive sequence), %.0f for our chain%s; ESS/s "
              "divides it by the median time of a chain." % (
                  sampler["accept"], sampler["min_ess"],
                  " and %.0f for JAX's" % sampler["jax_min_ess"] if "jax_min_ess" in sampler
                  else "")]
    paths[1].write_text("\n".join(lines) + "\n")
    return paths


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_from_jit",
                                description=__doc__)
    p.add_argument("--quick", action="store_true", help="a small epoch, few repeats")
    p.add_argument("--out", default=None, help="folder (default: docs/ or build/)")
    a = p.parse_args(argv)
    rows = run(a.quick)
    out = a.out or ("build/benchmarks-quick" if a.quick else "docs")
    for path in write_all(rows, out):
        print("wrote", path)
    for r in rows:
        print(r)


if __name__ == "__main__":
    main()
