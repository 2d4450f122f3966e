"""A prange Monte Carlo (the option workload with ``numba.prange`` over paths) and a
prange map loop (Black-Scholes pricing over options, ``call[i]``, ``put[i]`` per
iteration), compiled with and without ``parallel=True``: primal and gradient times, their
ratios, and the speed-up of the parallel backward.

    python -m benchmarks.bench_parallel [paths] [steps] [repeat] [options]

``run(paths, steps, repeat)`` and ``run_map(options, repeat)`` return the timings and
ratios as a dict. The gradients of the two versions are checked against each other before
anything is timed.
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
from .workloads_real import (CALL_WEIGHT, PUT_WEIGHT, _black_scholes_args, black_scholes,
                             cnd)


def _prange_version(fn, loop="range(n_paths)", replace=(), name=None):
    """``fn`` (a Python or njit function) with its top-level ``for ... in <loop>`` written
    as ``numba.prange``; ``replace`` holds further ``(old, new)`` source edits."""
    fn = getattr(fn, "py_func", fn)
    src = textwrap.dedent(inspect.getsource(fn))
    src = src[src.index("def "):].replace(loop, "numba." + loop.replace("range", "prange", 1))
    for old, new in replace:
        src = src.replace(old, new)
    if name:
        src = src.replace("def %s(" % fn.__name__, "def %s(" % name, 1)
    ns = {}
    exec(compile(src, "<%s with prange>" % fn.__name__, "exec"),
         {"math": math, "np": np, "numba": numba, "cnd": cnd,
          "CALL_WEIGHT": CALL_WEIGHT, "PUT_WEIGHT": PUT_WEIGHT}, ns)
    return ns[name or fn.__name__]


#: The Monte Carlo workload of ``python -m benchmarks`` with prange over its paths.
mc_option_prange = _prange_version(mc_option)

#: ``workloads_real.black_scholes_loss`` as one function (the pricing loop and the
#: weighted sums), its loop over the options a prange.
black_scholes_prange = _prange_version(
    black_scholes, loop="range(n)", name="black_scholes_prange",
    replace=[("return call, put",
              "return CALL_WEIGHT * call.sum() + PUT_WEIGHT * put.sum()")])


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


def _timed(serial, parallel, args, repeat):
    gs, gp = serial.grad(*args), parallel.grad(*args)
    for a, b in zip(gs, gp):
        if not np.allclose(a, b, rtol=1e-10, atol=0.0):
            raise AssertionError("parallel gradient differs from the serial one")
    t = {
        "primal_serial": _median(lambda: serial(*args), repeat),
        "primal_parallel": _median(lambda: parallel(*args), repeat),
        "grad_serial": _median(lambda: serial.grad(*args), repeat),
        "grad_parallel": _median(lambda: parallel.grad(*args), repeat),
    }
    return {"threads": numba.get_num_threads(), "seconds": t,
            "grad_over_primal_serial": t["grad_serial"] / t["primal_serial"],
            "grad_over_primal_parallel": t["grad_parallel"] / t["primal_parallel"],
            "backward_speedup": t["grad_serial"] / t["grad_parallel"]}


def run_map(options=200_000, repeat=30):
    """The prange map loop: Black-Scholes over ``options`` options, default options."""
    serial = nad.grad_jit(black_scholes_prange)
    parallel = nad.grad_jit(parallel=True)(black_scholes_prange)
    res = _timed(serial, parallel, _black_scholes_args(options), repeat)
    res["options"] = options
    return res


def _report(title, res):
    t = res["seconds"]
    print(title)
    print("  primal   serial %8.3f ms   parallel %8.3f ms"
          % (1e3 * t["primal_serial"], 1e3 * t["primal_parallel"]))
    print("  gradient serial %8.3f ms   parallel %8.3f ms"
          % (1e3 * t["grad_serial"], 1e3 * t["grad_parallel"]))
    print("  gradient / primal: serial %.2f, parallel %.2f; parallel backward speed-up %.2f"
          % (res["grad_over_primal_serial"], res["grad_over_primal_parallel"],
             res["backward_speedup"]))


def main(argv):
    nums = [int(a) for a in argv[:3]]
    options = int(argv[3]) if len(argv) > 3 else 200_000
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
    res = run_map(options, nums[2] if len(nums) > 2 else 30)
    _report("Black-Scholes map loop with prange: %d options, %d threads"
            % (res["options"], res["threads"]), res)


if __name__ == "__main__":
    main(sys.argv[1:])
