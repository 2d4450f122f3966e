"""GradBench's problems, in loop style and NumPy style, against JAX: one process,
interleaved medians.

    python -m benchmarks.gradbench [--problems lse,llsq,ode,kmeans,gmm] [--rounds 7] [--small]

For each problem (a module of this folder: ``STYLES`` of Numba code as a user writes it,
``JAX`` the same in JAX, GradBench's ``SIZES``, ``GRAD_OPTIONS`` of ``grad_jit`` where
GradBench asks for some gradients only) and size: the Numba primal
(``numba.njit``), our gradient (``grad_jit(f).grad``) and JAX's ``jit(grad(f))``. Reported:
the gradient over its own primal, ours over JAX, the first calls (compilation included:
ours, the primal's, JAX's), and the largest relative difference of the gradients. The
table goes to docs/benchmarks_gradbench.md, the figures to benchmarks/gradbench/results.json.
"""
import argparse
import importlib
import json
import os
import statistics
import time
import warnings
from pathlib import Path

import numpy as np

PROBLEMS = ["lse", "llsq", "ode", "kmeans", "gmm"]
ROOT = Path(__file__).resolve().parents[2]


def _timed(f):
    """Seconds of one call of ``f`` (the calls repeated until 20 ms have passed)."""
    reps, start = 0, time.perf_counter()
    while True:
        f()
        reps += 1
        took = time.perf_counter() - start
        if took > 0.02:
            return took / reps


def _first(f):
    start = time.perf_counter()
    out = f()
    return time.perf_counter() - start, out


def run_problem(name, rounds, small):
    import jax
    import numba
    import numba_adstack as nad
    jax.config.update("jax_enable_x64", True)
    mod = importlib.import_module("benchmarks.gradbench." + name)
    rows = []
    for size in (mod.SIZES[:1] if small else mod.SIZES):
        args = mod.inputs(**size)
        static = getattr(mod, "STATIC", ())
        jgrad = jax.jit(jax.grad(mod.JAX, argnums=mod.WRT), static_argnums=static)
        jax_first, want = _first(lambda: jgrad(*args))
        want = [np.asarray(w) for w in want]
        for style, fn in mod.STYLES.items():
            primal = numba.njit(fn)
            ours = nad.grad_jit(fn, **getattr(mod, "GRAD_OPTIONS", {}))
            primal_first, _ = _first(lambda: primal(*args))
            ours_first, got = _first(lambda: ours.grad(*args))
            got = [got[k] for k in mod.WRT]
            err = max(float(np.max(np.abs(g - w)) / max(1e-300, np.max(np.abs(w))))
                      for g, w in zip(got, want))
            times = {"primal": [], "ours": [], "jax": []}
            calls = {"primal": lambda: primal(*args), "ours": lambda: ours.grad(*args),
                     "jax": lambda: jax.block_until_ready(jgrad(*args))}
            for _ in range(rounds):
                for k in times:
                    times[k].append(_timed(calls[k]))
            med = {k: statistics.median(v) for k, v in times.items()}
            rows.append({"problem": name, "size": size, "style": style,
                         "primal_s": med["primal"], "grad_s": med["ours"],
                         "jax_grad_s": med["jax"],
                         "grad_over_primal": med["ours"] / med["primal"],
                         "ours_over_jax": med["ours"] / med["jax"],
                         "first_call_s": ours_first, "primal_first_call_s": primal_first,
                         "jax_first_call_s": jax_first, "relative_difference": err})
            print(_row_text(rows[-1]), flush=True)
    return rows


def _row_text(r):
    size = ", ".join("%s=%s" % kv for kv in r["size"].items())
    met = r["grad_over_primal"] <= 3.0 and r["ours_over_jax"] <= 1.0
    return ("| %s | %s | %s | %.2f | %.2f | %.2f s (primal %.2f s; JAX %.2f s) | %.0e | %s |"
            % (r["problem"], size, r["style"], r["grad_over_primal"], r["ours_over_jax"],
               r["first_call_s"], r["primal_first_call_s"], r["jax_first_call_s"],
               r["relative_difference"], "yes" if met else "no"))


HEADER = """# GradBench's problems: gradient against primal and against JAX

`python -m benchmarks.gradbench` writes this page. Each problem of
[GradBench](https://github.com/gradbench/gradbench) is written twice as a Numba user
writes it (benchmarks/gradbench/: loops as ADBench's C++ references write them, and
NumPy style), differentiated by `grad_jit` with default options, and compared in one
process, interleaved (medians of %d rounds), with the Numba primal and with JAX's
`jit(grad(f))` in float64 on the same machine. First calls include compilation (ours
after other problems of the same run have compiled the helpers they share). The
difference is the largest of our gradient from JAX's, relative to its largest entry. The
goal is a gradient within 3x its own primal and no slower than JAX (last column).

| problem | size | style | gradient / primal | ours / JAX | first gradient call | difference from JAX | goal met |
|---|---|---|---:|---:|---|---:|---|
"""


FOOTER = """
Where the rows that miss spend their time (read from `inspect_adjoint`):
- gmm with loops: each inner iteration of the triangular loop pushes the element of
  `xcentered` it reads (the same for the whole inner loop) and the counter `lparam` (an
  induction variable): values the sweep could recompute instead of keeping.
  `Qxcentered[j] * Qxcentered[j]` keeps the same element twice. (`Qdiags[ik, j]`, filled
  before the loop and written by nothing after, is read again from the array.)
- ode with loops: each step keeps the 4n elements of `y` and `tmp` its four stages read
  (both arrays are overwritten within the step); the sweep's arithmetic is light, so the
  pushes and pops are most of the gradient's time.
- NumPy style (ode, gmm, kmeans): a temporary per operation forward and backward, and
  whole arrays kept per iteration of the loop around them; nothing fuses them.
- First calls: NumPy style compiles a rule helper per call site; see compile.md.
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--small", action="store_true", help="the first size of each only")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    for name in a.problems.split(","):
        rows.extend(run_problem(name, a.rounds, a.small))
    if a.no_write:
        return rows
    (ROOT / "benchmarks" / "gradbench" / "results.json").write_text(
        json.dumps({"cpu_count": os.cpu_count(), "rows": rows}, indent=1))
    text = HEADER % a.rounds + "\n".join(_row_text(r) for r in rows) + "\n" + FOOTER
    (ROOT / "docs" / "benchmarks_gradbench.md").write_text(text)
    return rows


if __name__ == "__main__":
    main()
