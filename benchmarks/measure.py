"""Measuring one (workload, peer) pair: build, first call, check, time, memory.

``measure`` runs in the current process; ``python -m benchmarks.measure SPEC``
runs it in a fresh process (the harness does this for every pair so that one
peer's runtime, its threads and its memory do not disturb another's, and so
that a peer which crashes takes only its own measurement down).  The result
is printed as one JSON line prefixed with ``RESULT``.
"""
import ctypes
import dataclasses
import gc
import json
import os
import resource
import statistics
import sys
import time
import traceback

import numpy as np

from . import peers
from .workloads import WORKLOADS

# Tolerance of the check against the hand-written gradient.
RTOL = 1e-6
ATOL_RELATIVE = 1e-9  # times the largest magnitude of the reference entry


def _status_kib(key):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak_rss():
    """Reset the kernel's resident-set high-water mark (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _release_free_heap():
    """Make the C allocator return freed memory to the system and serve every
    block of 64 KiB or more with its own mapping from now on, so that memory a
    call uses shows up in the resident set even when an earlier call freed
    the same amount (glibc; a no-op elsewhere)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 64 * 1024)  # M_MMAP_THRESHOLD, which also stops its adaptation
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass


def peak_memory_of(call, fixed_threshold=True):
    """Peak resident memory added by one call of ``call``, in MiB.

    On Linux the high-water mark of the process is reset just before the call
    and read just after, so this sees every allocation (NumPy, numba, XLA,
    PyTorch and Taichi runtimes alike), not only Python's.  Elsewhere the
    process-wide peak (getrusage maxrss) is reported instead.  Runs after
    the timings: it changes the allocator's settings (``fixed_threshold=False`` leaves
    them, for a call that is also timed: every block of 64 KiB or more mapped apart
    would fault in fresh pages at each allocation)."""
    gc.collect()
    if fixed_threshold:
        _release_free_heap()
    if _reset_peak_rss():
        before = _status_kib("VmRSS")
        call()
        peak = _status_kib("VmHWM")
        return {"peak_mib": (peak - before) / 1024.0, "process_peak_mib": peak / 1024.0,
                "memory_method": "VmHWM-VmRSS"}
    call()
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if sys.platform == "darwin":
        maxrss /= 1024
    return {"peak_mib": None, "process_peak_mib": maxrss / 1024.0, "memory_method": "maxrss"}


def compare(result, reference, wrt):
    """None when ``result`` matches the reference gradient on ``wrt``, else a message."""
    if not isinstance(result, (tuple, list)):
        return f"returned {type(result).__name__}, expected a tuple of gradients"
    for index in wrt:
        got = result[index]
        want = reference[index]
        if got is None:
            return f"no gradient for argument {index}"
        got = np.asarray(got, dtype=np.float64)
        want = np.asarray(want, dtype=np.float64)
        if got.shape != want.shape:
            return f"argument {index}: shape {got.shape}, expected {want.shape}"
        atol = ATOL_RELATIVE * max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
        if not np.allclose(got, want, rtol=RTOL, atol=atol):
            err = np.max(np.abs(got - want) / (np.abs(want) + atol))
            return (f"wrong gradient for argument {index}: max relative error {err:.3g} "
                    f"(got {np.ravel(got)[:3]}, hand-written {np.ravel(want)[:3]})")
    return None


def _timed_repeats(call, budget_s, min_repeats, max_repeats):
    times = []
    start = time.perf_counter()
    while len(times) < max_repeats:
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
        if len(times) >= min_repeats and time.perf_counter() - start >= budget_s:
            break
    return times


def _version(peer_name):
    module = {"numba": "numba", "hand": "numba", "ours": "numba_adstack", "jax": "jax",
              "torch": "torch", "autograd": "autograd", "taichi": "taichi",
              "quadrants": "quadrants"}[peer_name]
    try:
        from importlib.metadata import version
        return version(module)
    except Exception:
        mod = sys.modules.get(module)
        return getattr(mod, "__version__", None)


def measure(workload_name, peer_name, quick=False, reference=None, ad_stack_size=None):
    """Measure one pair in this process.  ``reference`` is the hand-written
    gradient (computed here when omitted); ``ad_stack_size`` overrides the
    workload's stack capacity."""
    workload = WORKLOADS[workload_name]
    if ad_stack_size:
        workload = dataclasses.replace(workload, ad_stack_size=lambda args: ad_stack_size)
    peer = peers.load(peer_name)
    out = {"workload": workload_name, "peer": peer_name, "quick": quick}
    ok, message = peer.available()
    if not ok:
        out.update(status="missing", message=message)
        return out
    args = workload.make_args(quick)
    try:
        t0 = time.perf_counter()
        call = peer.build(workload, args)
        result = call()
        out["first_call_s"] = time.perf_counter() - t0
    except Exception as exc:
        out.update(status="unsupported" if isinstance(exc, peers.Unsupported) else "error",
                   message=f"{type(exc).__name__}: {exc}".strip(),
                   traceback=traceback.format_exc(limit=4))
        return out
    out["version"] = _version(peer_name)
    if not getattr(peer, "IS_PRIMAL", False):
        if reference is None:
            reference = workload.hand_grad_jit(*args)
        problem = compare(result, reference, workload.wrt)
        if problem:
            out.update(status="wrong", message=problem)
            return out
    call()  # warm-up
    budget, min_repeats, max_repeats = (0.02, 2, 3) if quick else (2.0, 5, 1000)
    times = _timed_repeats(call, budget, min_repeats, max_repeats)
    out.update(status="ok", repeats=len(times), median_s=statistics.median(times),
               min_s=min(times))
    out.update(peak_memory_of(call))
    return out


def main(argv):
    spec = json.loads(argv[0])
    reference = None
    if spec.get("reference"):
        with np.load(spec["reference"], allow_pickle=False) as data:
            reference = {int(k[1:]): (data[k] if data[k].ndim else float(data[k]))
                         for k in data.files}
    try:
        result = measure(spec["workload"], spec["peer"], spec.get("quick", False), reference,
                         spec.get("ad_stack_size"))
    except Exception as exc:  # a harness bug: report it rather than die silently
        result = {"workload": spec["workload"], "peer": spec["peer"], "status": "error",
                  "message": f"{type(exc).__name__}: {exc}",
                  "traceback": traceback.format_exc()}
    sys.stdout.flush()
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main(sys.argv[1:])
