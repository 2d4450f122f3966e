"""Run the generated surface cases (tests/surface_cases.py: every ufunc Numba types, in
every call form that writes, the NumPy functions with out and the writing methods, and
the augmented operators, for float64, float32 and int64, and on complex128 intermediates)
and print the counts per class and the cases that are not RIGHT, as markdown.

    python scripts/surface_report.py [--processes 2] [--dtypes float64,float32,int64,complex128]
"""
import argparse
import collections
import multiprocessing
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import surface_cases  # noqa: E402


def _run(index_and_dtypes):
    k, dtypes = index_and_dtypes
    case = surface_cases.cases(dtypes)[k]
    return case.name, surface_cases.classify(case)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--dtypes", default="float64,float32,int64,complex128")
    a = ap.parse_args()
    dtypes = tuple(a.dtypes.split(","))
    n = len(surface_cases.cases(dtypes))
    with multiprocessing.get_context("spawn").Pool(a.processes) as pool:
        results = pool.map(_run, [(k, dtypes) for k in range(n)], chunksize=8)
    counts = collections.Counter(cls for _, (cls, _) in results)
    print("| class | cases |\n|---|---:|")
    for cls in ("RIGHT", "REFUSED", "WRONG", "CRASH", "UNCHECKED", "NOT_NUMBA"):
        print("| %s | %d |" % (cls, counts.get(cls, 0)))
    print("\n| case | class | detail |\n|---|---|---|")
    for name, (cls, detail) in results:
        if cls not in ("RIGHT", "NOT_NUMBA"):
            print("| `%s` | %s | %s |" % (name, cls, detail.replace("|", "/")))
    return 1 if counts.get("WRONG") or counts.get("CRASH") else 0


if __name__ == "__main__":
    sys.exit(main())
