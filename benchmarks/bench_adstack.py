"""Push n values and pop them back (summing), through the adstack intrinsics, against the
same loop writing and reading a preallocated NumPy array.

    python -m benchmarks.bench_adstack [n] [repeat]
    python benchmarks/bench_adstack.py [n] [repeat]

``run(n, repeat)`` returns the timings and ratios as a dict.
"""
import sys
import time

import numba
import numpy as np

from numba_adstack import adstack, push, pop

#: Capacity of the frame stack: 256,008 bytes, just under the default 256 KiB budget.
FRAME_CAP = 32000
#: Initial capacity of the growing heap stack (doubles up to n).
HEAP_INITIAL = 16


@numba.njit
def array_version(x, buf):
    n = x.shape[0]
    for i in range(n):
        buf[i] = x[i] * 1.0001
    s = 0.0
    for i in range(n - 1, -1, -1):
        s += buf[i] * 0.5
    return s


@numba.njit
def frame_version(x, buf):
    st = adstack(np.float64, FRAME_CAP)
    n = x.shape[0]
    for i in range(n):
        push(st, x[i] * 1.0001)
    s = 0.0
    for i in range(n):
        s += pop(st) * 0.5
    return s


@numba.njit
def heap_version(x, buf):
    st = adstack(np.float64, HEAP_INITIAL, "heap")
    n = x.shape[0]
    for i in range(n):
        push(st, x[i] * 1.0001)
    s = 0.0
    for i in range(n):
        s += pop(st) * 0.5
    return s


@numba.njit
def heap_presized_version(x, buf):
    st = adstack(np.float64, FRAME_CAP, "heap")
    n = x.shape[0]
    for i in range(n):
        push(st, x[i] * 1.0001)
    s = 0.0
    for i in range(n):
        s += pop(st) * 0.5
    return s


def _best(fn, x, buf, repeat, inner):
    fn(x, buf)  # compile and warm up
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn(x, buf)
        best = min(best, (time.perf_counter() - t0) / inner)
    return best


def run(n=FRAME_CAP, repeat=20):
    """Time the four versions on n values (n <= FRAME_CAP); return seconds per call and the
    ratios to the array version."""
    if not 1 <= n <= FRAME_CAP:
        raise ValueError("n must be in [1, %d] (the frame stack's capacity)" % FRAME_CAP)
    x = np.random.default_rng(0).random(n)
    buf = np.empty(n)
    expect = array_version(x, buf)
    for fn in (frame_version, heap_version, heap_presized_version):
        got = fn(x, buf)
        if not np.isclose(got, expect, rtol=1e-12):
            raise AssertionError("%s gave %r, expected %r" % (fn.__name__, got, expect))
    inner = max(1, 200000 // n)
    times = {name: _best(fn, x, buf, repeat, inner) for name, fn in (
        ("array", array_version), ("frame", frame_version), ("heap", heap_version),
        ("heap_presized", heap_presized_version))}
    res = {"n": n, "repeat": repeat, "seconds": times}
    for k in ("frame", "heap", "heap_presized"):
        res[k + "_ratio"] = times[k] / times["array"]
    return res


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    n = int(argv[0]) if argv else FRAME_CAP
    repeat = int(argv[1]) if len(argv) > 1 else 20
    r = run(n, repeat)
    print("push %d float64 values, pop them back and sum (best of %d)" % (n, repeat))
    for k in ("array", "frame", "heap", "heap_presized"):
        ratio = "" if k == "array" else "   %.2fx the array" % r[k + "_ratio"]
        print("  %-14s %9.2f us%s" % (k, r["seconds"][k] * 1e6, ratio))
    print("goal: within 1.5x of the array version")
    return r


if __name__ == "__main__":
    main()
