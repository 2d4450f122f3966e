"""Times the workloads of ``benchmarks/workloads_real.py``: the numba primal, the
hand-written numba gradient, ``numba_adstack.grad_jit`` (or why it refuses) and JAX
where it is importable; for the array-returning workload also the program itself, the
hand-written VJP and JVP and JAX's ``jax.vjp`` / ``jax.jvp``.

    python -m benchmarks.bench_real [--quick] [--workload NAME ...] [--repeat N]
                                    [--no-ours] [--no-jax] [--json PATH]

JAX is taken from the running interpreter: ``python -m benchmarks --install-peers``
installs it into ``.venv-bench/``, so ``.venv-bench/bin/python -m benchmarks.bench_real``
includes it.

Method: in one process, every timed call of a workload is warmed up and checked first
(the hand gradient against central finite differences of the primal on a few entries at
the quick sizes, every other gradient against the hand gradient at the timed size);
``grad_jit`` runs with its default options; then the calls are timed in
interleaved rounds (one call of each per round, so that a change of machine load hits
them all alike) and each gets the median over the rounds; JAX's calls have rounds of
their own after those (its worker threads spin on after a call, and slowed the numba call
that followed by up to two times on a two-core machine).  Ratios are taken within the
run.  Large NumPy arrays are served from the heap rather than freshly mapped memory
(glibc's ``M_MMAP_MAX = 0``, no trimming): otherwise whether a call pays page faults
for its output arrays depends on the allocation history, which moved single timings by
up to six times.
"""
import argparse
import ctypes
import json
import sys
import time

import numpy as np

from .measure import compare
from .peers import jax_real
from .workloads import finite_difference_check
from .workloads_real import REAL_WORKLOADS, ArrayWorkload


def steady_allocator():
    """glibc: serve every block from the heap and never trim it (see the docstring)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(-4, 0) and libc.mallopt(-1, 1 << 30))  # M_MMAP_MAX, M_TRIM
    except (OSError, AttributeError):
        return False


def _first_line(exc):
    text = str(exc).strip()
    return "%s: %s" % (type(exc).__name__, text.splitlines()[0] if text else "")


def time_interleaved(calls, repeat, budget_s):
    """Median seconds of each call in ``calls`` (name -> function of no arguments), over
    at most ``repeat`` rounds, fewer when a round costs more than ``budget_s / repeat``
    (at least 3)."""
    times = {name: [] for name in calls}
    start = time.perf_counter()
    for r in range(repeat):
        for name, call in calls.items():
            t0 = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - t0)
        if r >= 2 and time.perf_counter() - start > budget_s:
            break
    return {name: float(np.median(ts)) for name, ts in times.items()}


def _try_ours(workload, args, reference):
    """``grad_jit`` on the unchanged primal: (call or None, status dict)."""
    try:
        import numba_adstack as nad
        from numba_adstack import NonDifferentiableError
    except ImportError as exc:
        return None, {"status": "missing", "message": _first_line(exc)}
    build = getattr(workload, "ours", None)
    options = getattr(workload, "jit_options", {})
    try:
        t0 = time.perf_counter()
        if build is not None:           # a jitted loop calling f.grad
            call = build()
        else:                           # default options (parallel=True if the primal has it)
            f = nad.grad_jit(workload.primal, wrt=workload.wrt, **options)
            call = f.grad
        got = call(*args)
        first = time.perf_counter() - t0
    except NonDifferentiableError as exc:
        return None, {"status": "refused", "message": str(exc).strip().splitlines()[0]}
    except Exception as exc:  # reported, whatever it is
        return None, {"status": "error", "message": _first_line(exc)}
    problem = compare(got, reference, workload.wrt)
    if problem:
        return None, {"status": "wrong", "message": problem}
    return (lambda: call(*args)), {"status": "ok", "first_call_s": first}


def _try_jax(build, reference_check):
    try:
        call = build()
        t0 = time.perf_counter()
        got = call()
        first = time.perf_counter() - t0
    except Exception as exc:  # reported, whatever it is
        return None, {"status": "error", "message": _first_line(exc)}
    problem = reference_check(got)
    if problem:
        return None, {"status": "wrong", "message": problem}
    return call, {"status": "ok", "first_call_s": first}


def _array_calls(workload, args, calls, status, use_jax):
    """The program, the hand VJP and JVP and JAX's, for an ``ArrayWorkload``."""
    program = workload.program
    prog_args = args[:-1]
    tangents = workload.make_tangents(args)
    vjp_ref = workload.vjp(*args)
    jvp_ref = workload.jvp(*prog_args, *tangents)
    program(*prog_args)
    calls["program"] = lambda: program(*prog_args)
    calls["hand_vjp"] = lambda: workload.vjp(*args)
    calls["hand_jvp"] = lambda: workload.jvp(*prog_args, *tangents)
    if not use_jax:
        return
    call, status["jax_vjp"] = _try_jax(
        lambda: jax_real.build_vjp(workload, args),
        lambda got: compare(got, vjp_ref, range(len(vjp_ref))))
    if call:
        calls["jax_vjp"] = call
    call, status["jax_jvp"] = _try_jax(
        lambda: jax_real.build_jvp(workload, args, tangents),
        lambda got: compare((got,), (jvp_ref,), (0,)))
    if call:
        calls["jax_jvp"] = call


def run_workload(workload, quick, repeat, budget_s, use_ours, use_jax, log=print):
    args = workload.make_args(quick)
    primal = workload.primal_jit
    hand = workload.hand_grad_jit
    primal(*args)
    reference = hand(*args)
    # at the quick sizes: differences of a sum over millions of terms lose the digits
    small = workload.make_args(True)
    fd = finite_difference_check(workload, small, hand(*small))
    log("%s: hand-written gradient vs finite differences (quick sizes): %s"
        % (workload.title, "ok" if not fd else fd))
    calls = {"primal": lambda: primal(*args), "hand": lambda: hand(*args)}
    status = {}
    if use_ours:
        call, status["ours"] = _try_ours(workload, args, reference)
        if call:
            calls["ours"] = call
    if use_jax:
        call, status["jax"] = _try_jax(
            lambda: jax_real.build(workload, args),
            lambda got: compare(got, reference, workload.wrt))
        if call:
            calls["jax"] = call
    if isinstance(workload, ArrayWorkload):
        _array_calls(workload, args, calls, status, use_jax)
    # JAX's worker threads keep spinning for a while after a call: timed in their own
    # rounds, after the numba ones, so that they do not slow the calls that follow
    numba_calls = {k: v for k, v in calls.items() if not k.startswith("jax")}
    jax_calls = {k: v for k, v in calls.items() if k.startswith("jax")}
    seconds = time_interleaved(numba_calls, repeat, budget_s)
    if jax_calls:
        seconds.update(time_interleaved(jax_calls, repeat, budget_s))
    ratios = {name: seconds[name] / seconds["primal"] for name in seconds
              if name != "primal"}
    for name in ("hand_vjp", "hand_jvp", "jax_vjp", "jax_jvp"):
        if name in seconds:
            ratios[name + "/program"] = seconds[name] / seconds["program"]
    for name in ("ours", "jax"):
        if name in seconds:
            ratios[name + "/hand"] = seconds[name] / seconds["hand"]
    if "ours" in seconds and "jax" in seconds:
        ratios["ours/jax"] = seconds["ours"] / seconds["jax"]
    if "jax_vjp" in seconds:
        ratios["jax_vjp/hand_vjp"] = seconds["jax_vjp"] / seconds["hand_vjp"]
    if "jax_jvp" in seconds:
        ratios["jax_jvp/hand_jvp"] = seconds["jax_jvp"] / seconds["hand_jvp"]
    return {"title": workload.title, "finite_difference_check": fd or "ok",
            "seconds": seconds, "over_primal": ratios, "status": status}


def run(names=None, quick=False, repeat=None, use_ours=True, use_jax=True, log=print,
        steady=True):
    """Time the workloads ``names`` (default: all); returns the results document.
    ``steady=False`` leaves the allocator's settings alone (they last for the process)."""
    steady = steady and steady_allocator()
    ok, why = jax_real.available()
    if use_jax and not ok:
        log("jax: not importable here (%s); python -m benchmarks --install-peers puts it "
            "in .venv-bench/" % why)
    use_jax = use_jax and ok
    repeat = repeat or (5 if quick else 31)
    budget_s = 1.0 if quick else 8.0
    doc = {"quick": quick, "steady_allocator": steady, "workloads": {}}
    for name in names or REAL_WORKLOADS:
        doc["workloads"][name] = entry = run_workload(
            REAL_WORKLOADS[name], quick, repeat, budget_s, use_ours, use_jax, log)
        log(describe(entry))
    return doc


def describe(entry):
    s = entry["seconds"]
    r = entry["over_primal"]
    lines = ["  %-8s %10.3f ms" % ("primal", 1e3 * s["primal"])]
    for name in s:
        if name == "primal":
            continue
        ratio = r.get(name + "/program", r[name])
        base = "program" if name + "/program" in r else "primal"
        extra = "".join("   %s %.2f" % (key, r[key]) for key in
                        (name + "/hand", name + "/jax", name + "/hand_vjp",
                         name + "/hand_jvp")
                        if key in r)
        lines.append("  %-8s %10.3f ms   / %s %.2f%s"
                     % (name, 1e3 * s[name], base, ratio, extra))
    for name, st in entry["status"].items():
        if st["status"] != "ok":
            lines.append("  %-8s %s: %s" % (name, st["status"], st.get("message", "")))
        if "note" in st:
            lines.append("  %-8s %s" % (name, st["note"]))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description="time the real-program workloads")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke run)")
    parser.add_argument("--workload", action="append", choices=list(REAL_WORKLOADS),
                        help="only this workload (repeatable)")
    parser.add_argument("--repeat", type=int, help="rounds of timing (median)")
    parser.add_argument("--no-ours", action="store_true", help="skip numba_adstack")
    parser.add_argument("--no-jax", action="store_true", help="skip JAX")
    parser.add_argument("--json", help="write the results to this path")
    opts = parser.parse_args(argv)
    doc = run(opts.workload, opts.quick, opts.repeat, not opts.no_ours, not opts.no_jax)
    if opts.json:
        with open(opts.json, "w") as out:
            json.dump(doc, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
