"""A prange Monte Carlo (the option workload with ``numba.prange`` over paths), compiled
with and without ``parallel=True``: primal and gradient times, their ratios, and the
speed-up of the parallel backward.

    python -m benchmarks.bench_parallel [paths] [steps] [repeat]

``run(paths, steps, repeat)`` returns the timings and ratios as a dict. The gradients of
the two versions are checked against each other before anything is timed.
"""
import inspect
import math
import sys
import textwrap
import time

import numba
import numpy as np

import numba_adstack as nad

from .workloads import mc_option


def _prange_version(fn):
    """``fn`` with its top-level ``for p in range(n_paths)`` written as ``numba.prange``."""
    src = textwrap.dedent(inspect.getsource(fn)).replace(
        "range(n_paths)", "numba.prange(n_paths)")
    ns = {}
    exec(compile(src, "<%s with prange>" % fn.__name__, "exec"),
         {"math": math, "np": np, "numba": numba}, ns)
    return ns[fn.__name__]


#: The Monte Carlo workload of ``python -m benchmarks`` with prange over its paths.
mc_option_prange = _prange_version(mc_option)


def _median(fn, repeat):
    fn()  # warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def run(paths=10_000, steps=50, repeat=30):
    Z = np.random.default_rng(5).standard_normal((paths, steps))
    args = (100.0, 0.2, 0.05, 105.0, 1.0, Z)
    size = steps + 8
    serial = nad.grad_jit(ad_stack_size=size, wrt=(0, 1, 2))(mc_option_prange)
    parallel = nad.grad_jit(ad_stack_size=size, wrt=(0, 1, 2), parallel=True)(
        mc_option_prange)
    gs, gp = serial.grad(*args), parallel.grad(*args)
    for a, b in zip(gs[:3], gp[:3]):
        if not np.isclose(a, b, rtol=1e-10):
            raise AssertionError("parallel gradient %r differs from serial %r" % (gp, gs))
    t = {
        "primal_serial": _median(lambda: serial(*args), repeat),
        "primal_parallel": _median(lambda: parallel(*args), repeat),
        "grad_serial": _median(lambda: serial.grad(*args), repeat),
        "grad_parallel": _median(lambda: parallel.grad(*args), repeat),
    }
    return {"paths": paths, "steps": steps, "threads": numba.get_num_threads(),
            "seconds": t,
            "grad_over_primal_serial": t["grad_serial"] / t["primal_serial"],
            "grad_over_primal_parallel": t["grad_parallel"] / t["primal_parallel"],
            "backward_speedup": t["grad_serial"] / t["grad_parallel"]}


def main(argv):
    nums = [int(a) for a in argv[:3]]
    res = run(*nums)
    t = res["seconds"]
    print("Monte Carlo with prange: %d paths x %d steps, %d threads"
          % (res["paths"], res["steps"], res["threads"]))
    print("  primal   serial %8.3f ms   parallel %8.3f ms"
          % (1e3 * t["primal_serial"], 1e3 * t["primal_parallel"]))
    print("  gradient serial %8.3f ms   parallel %8.3f ms"
          % (1e3 * t["grad_serial"], 1e3 * t["grad_parallel"]))
    print("  gradient / primal: serial %.2f, parallel %.2f; parallel backward speed-up %.2f"
          % (res["grad_over_primal_serial"], res["grad_over_primal_parallel"],
             res["backward_speedup"]))


if __name__ == "__main__":
    main(sys.argv[1:])
