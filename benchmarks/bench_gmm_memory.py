"""Peak memory of the gradient of GradBench's GMM written with loops
(benchmarks/gradbench/gmm_loops.py), with default options, against its primal's.

    python -m benchmarks.bench_gmm_memory [--d 64] [--k 200] [--n 1000]

Each of the primal (``numba.njit``) and the gradient runs in a fresh process: a first call
(compilation), then a timed one; reported are the time of the second call and the peak
resident memory of the process. The gradient's history (about 7 GB at the default sizes,
whose triangular inner loop has a length known only inside the loop) is past the default
memory budget, so the call checkpoints; the figure to read is the gradient's peak against
the primal's plus the budget. A few entries of the gradient are compared with central
differences of the primal.
"""
import argparse
import json
import resource
import subprocess
import sys
import time
import warnings


def _inputs(d, k, n):
    import numpy as np
    rng = np.random.default_rng(0)
    return (rng.standard_normal(k), rng.standard_normal((k, d)),
            rng.standard_normal((k, d + d * (d - 1) // 2)) * 0.1,
            rng.standard_normal((n, d)), 1.0, 0)


def one(mode, d, k, n):
    """Run ``mode`` (primal or grad) in this process; a dict of what it measured."""
    warnings.simplefilter("ignore")
    import numba
    import numba_adstack as nad
    from benchmarks.gradbench.gmm_loops import gmm_objective
    args = _inputs(d, k, n)
    out = {"mode": mode}
    if mode == "primal":
        f = numba.njit(gmm_objective)
        f(*args)
        t = time.perf_counter()
        f(*args)
    else:
        f = nad.grad_jit(gmm_objective)
        f.grad(*args)
        t = time.perf_counter()
        g = f.grad(*args)
        out["seconds"] = time.perf_counter() - t
        out["checkpointed"] = sorted(f._backward(list(args))._checkpointed)
        primal, h, worst = numba.njit(gmm_objective), 1e-6, 0.0
        for which, idx in [(0, 3), (1, (5, min(7, d - 1))), (2, (k // 2, d + 1))]:
            a = [x.copy() for x in args[:3]]
            a[which][idx] += h
            fp = primal(*a, *args[3:])
            a[which][idx] -= 2 * h
            fm = primal(*a, *args[3:])
            fd = (fp - fm) / (2 * h)
            worst = max(worst, abs(g[which][idx] - fd) / max(1.0, abs(fd)))
        out["fd_relative_error"] = worst
    if mode == "primal":
        out["seconds"] = time.perf_counter() - t
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--k", type=int, default=200)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--one", choices=["primal", "grad"])
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(one(a.one, a.d, a.k, a.n)))
        return
    results = {}
    for mode in ("primal", "grad"):
        r = subprocess.run([sys.executable, "-m", "benchmarks.bench_gmm_memory", "--one",
                            mode, "--d", str(a.d), "--k", str(a.k), "--n", str(a.n)],
                           capture_output=True, text=True, check=True)
        results[mode] = json.loads(r.stdout.strip().splitlines()[-1])
        print(results[mode])
    p, g = results["primal"], results["grad"]
    print("d=%d K=%d n=%d: primal %.2f s, peak %.0f MiB; gradient %.2f s, peak %.0f MiB "
          "(%s); largest relative error against central differences %.1e"
          % (a.d, a.k, a.n, p["seconds"], p["peak_rss_mib"], g["seconds"], g["peak_rss_mib"],
             "checkpointed" if g["checkpointed"] else "whole history",
             g["fd_relative_error"]))


if __name__ == "__main__":
    main()
