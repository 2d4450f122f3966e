"""Run the realistic-program corpus (tests/realistic_programs.py) through
``numba_adstack.grad_jit`` and print where each case stands.

    python scripts/realistic_report.py [--case NAME ...] [--json PATH]

For every case: ``f.grad`` of the case's scalar loss (``grad_jit(loss, wrt=case.wrt)``,
default options) against central finite differences of the pure-Python loss. Status:

  ok                  the gradient agrees (normwise relative error <= the case's rtol)
  refused: ...        NonDifferentiableError, its first line
  wrong gradient ...  the largest normwise relative error, or an argument changed
  crash: ...          any other exception: its type and first line

with the compile time of the first ``grad`` call, that of the primal under ``numba.njit``
(both on fresh dispatchers, callees included), and the line count of the generated
backward (``inspect_adjoint``).
"""
import argparse
import collections
import json
import os
import platform
import re
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import numba  # noqa: E402
import numpy as np  # noqa: E402

import numba_adstack as nad  # noqa: E402
from numba_adstack import NonDifferentiableError  # noqa: E402
from realistic_programs import (all_cases, copy_args, fd_grad, fresh_jit,  # noqa: E402
                                gradient_error, pure_python)


def _first_line(exc):
    """The first line of the message; for Numba's "Failed in ... pipeline" wrapper, the
    line that says what failed, with the pipeline step after it."""
    lines = [line.strip() for line in re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        return ""
    if lines[0].startswith("Failed in") and len(lines) > 1:
        return "%s [%s]" % (lines[1], lines[0])
    return lines[0]


def run_case(case):
    """One row of the report, as a dict."""
    args = case.make_args()
    row = {"case": case.name, "description": case.description, "status": None,
           "detail": "", "grad_compile_s": None, "primal_compile_s": None,
           "backward_lines": None, "max_rel_error": None}

    primal = fresh_jit(case.target)
    t0 = time.perf_counter()
    primal(*copy_args(args))
    row["primal_compile_s"] = time.perf_counter() - t0

    f = fresh_jit(case.target, decorator=lambda fn: nad.grad_jit(fn, wrt=case.wrt))
    call_args = copy_args(args)
    try:
        t0 = time.perf_counter()
        got = f.grad(*call_args)
        row["grad_compile_s"] = time.perf_counter() - t0
        row["backward_lines"] = len(f.inspect_adjoint(*args).splitlines())
    except NonDifferentiableError as exc:
        row["status"], row["detail"] = "refused", _first_line(exc)
        return row
    except Exception as exc:  # the report records every failure, whatever it is
        row["status"] = "crash"
        row["detail"] = "%s: %s" % (type(exc).__name__, _first_line(exc))
        return row

    changed = [k for k, (a, b) in enumerate(zip(call_args, args))
               if isinstance(a, np.ndarray) and not np.array_equal(a, b)]
    want = fd_grad(pure_python(case.target), args, case.wrt)
    err = gradient_error(got, want, case.wrt)
    row["max_rel_error"] = err
    if changed:
        row["status"] = "wrong"
        row["detail"] = "f.grad changed argument(s) %s" % changed
    elif err <= case.rtol:
        row["status"] = "ok"
    else:
        row["status"] = "wrong"
        row["detail"] = "max rel error %.3g" % err
    return row


def status_text(row):
    if row["status"] == "ok":
        return "ok"
    if row["status"] == "wrong":
        return "wrong gradient: " + row["detail"]
    return "%s: %s" % (row["status"], row["detail"])


def _seconds(v):
    return "-" if v is None else "%.2f" % v


def format_table(rows):
    lines = ["%-28s %8s %8s %7s  %s" % ("case", "grad s", "njit s", "bw lines", "status"),
             "-" * 100]
    for r in rows:
        lines.append("%-28s %8s %8s %7s  %s" % (
            r["case"], _seconds(r["grad_compile_s"]), _seconds(r["primal_compile_s"]),
            "-" if r["backward_lines"] is None else r["backward_lines"], status_text(r)))
    return "\n".join(lines)


def _reason(detail):
    """A refusal message without the function, the variable names, the types and the
    advice: what groups alike refusals."""
    reason = re.sub(r"^cannot differentiate '[^']*':\s*", "", detail)
    reason = re.sub(r"\s*\[Failed in .*\]$", "", reason)
    reason = re.sub(r"'[^']*'", "'...'", reason)
    reason = re.sub(r"array\(\w+, \d+d, \w+\)", "array", reason)
    reason = re.sub(r"\s*\(`.*", "", reason)                  # (`*`), (`-=` on ...)
    reason = re.sub(r"^(`for` over [\w.]+)\(.*", r"\1", reason)  # zip(...) -> zip
    reason = re.split(r",? assigned to|,? producing|; |(?<!Error): ", reason)[0]
    return reason.strip(" .:")


def format_summary(rows):
    counts = collections.Counter(r["status"] for r in rows)
    lines = ["", "%d cases: %s" % (len(rows), ", ".join(
        "%d %s" % (counts[s], s) for s in ("ok", "refused", "wrong", "crash")))]
    reasons = collections.Counter(_reason(r["detail"]) for r in rows
                                  if r["status"] in ("refused", "crash"))
    if reasons:
        lines.append("refusal / crash reasons, most frequent first:")
        for reason, n in reasons.most_common():
            lines.append("  %2d  %s" % (n, reason))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", default=[],
                        help="run only this case (repeatable)")
    parser.add_argument("--json", help="also write the rows as JSON to this path")
    opts = parser.parse_args(argv)
    cases = all_cases()
    if opts.case:
        unknown = set(opts.case) - {c.name for c in cases}
        if unknown:
            parser.error("unknown case(s): %s" % ", ".join(sorted(unknown)))
        cases = [c for c in cases if c.name in opts.case]
    rows = []
    print("%-28s %8s %8s %7s  %s" % ("case", "grad s", "njit s", "bw lines", "status"),
          file=sys.stderr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            row = run_case(case)
            rows.append(row)
            print(format_table([row]).splitlines()[-1], file=sys.stderr, flush=True)
    print("grad_jit on the realistic-program corpus (numba %s, Python %s); times in seconds: "
          "first f.grad call, first numba.njit call; bw lines: lines of the generated "
          "backward" % (numba.__version__, platform.python_version()))
    print(format_table(rows))
    print(format_summary(rows))
    if opts.json:
        with open(opts.json, "w") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
