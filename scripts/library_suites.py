"""Real libraries' own test suites with ``numba.njit`` and ``numba.jit`` replaced by
``numba_adstack.grad_jit``: the evidence that ``grad_jit`` is a drop-in.

For each library, its sdist is fetched from PyPI (``pip download --no-binary``, the
installed version when there is one), unpacked, and its tests run twice in a fresh
process each, importing the library from the sdist: once under plain Numba, once with
``numba.njit`` and ``numba.jit`` swapped for ``grad_jit`` before anything imports the
library. Both runs' counts are printed side by side; the swap passes when they are equal.

Slow (minutes per suite) and outside CI::

    python scripts/library_suites.py                       # all four
    python scripts/library_suites.py numba-stats -k norm   # one, a subset of its tests
    python scripts/library_suites.py --swap-only pynndescent

Libraries whose dependencies are missing (pynndescent needs scikit-learn) get them
installed with ``pip install --target`` into the work directory, not into the
environment.
"""
import argparse
import importlib.metadata as md
import json
import os
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: name on PyPI -> (directory of the importable package within the sdist, tests
#: directory within the sdist, extra packages the tests need)
LIBRARIES = {
    "numba-stats": ("src", "tests", []),
    "pynndescent": (".", "pynndescent/tests", ["scikit-learn", "joblib", "threadpoolctl",
                                          "narwhals"]),
    "quantecon": (".", "quantecon", []),
    "interpolation": (".", "interpolation/tests", []),
}

# Run in the child process: the swap, then pytest.
_CHILD = r"""
import sys
if {swap!r}:
    import numba, numba_adstack
    numba.njit = numba_adstack.grad_jit
    numba.jit = numba_adstack.grad_jit
import pytest
sys.exit(pytest.main({args!r}))
"""


def _sdist(name, workdir):
    """The unpacked sdist of ``name`` (downloaded once)."""
    try:
        spec = "%s==%s" % (name, md.version(name))
    except md.PackageNotFoundError:
        spec = name
    key = name.replace("-", "_").lower()
    found = [f for f in os.listdir(workdir) if f.endswith(".tar.gz")
             and f.replace("-", "_").lower().startswith(key + "_")]
    if not found:
        # Only the library itself from source: its build backend may come as a wheel.
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                        "--no-binary", name, "-d", workdir, spec], check=True,
                       stdout=subprocess.DEVNULL)
        found = [f for f in os.listdir(workdir) if f.endswith(".tar.gz")
                 and f.replace("-", "_").lower().startswith(key + "_")]
    archive = os.path.join(workdir, sorted(found)[-1])
    top = archive[:-len(".tar.gz")]
    if not os.path.isdir(top):
        with tarfile.open(archive) as tar:
            tar.extractall(workdir, filter="data")
    return top


def _deps(packages, workdir):
    """A directory holding ``packages`` that the environment lacks (without their own
    dependencies, which the environment has: NumPy, SciPy, Numba)."""
    target = os.path.join(workdir, "deps")
    missing = []
    for p in packages:
        try:
            md.version(p)
        except md.PackageNotFoundError:
            missing.append(p)
    have = os.listdir(target) if os.path.isdir(target) else []
    todo = [p for p in missing if not any(
        f.lower().startswith(p.replace("-", "_").lower() + "-") for f in have)]
    if todo:
        subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--target",
                        target] + todo, check=True, stdout=subprocess.DEVNULL)
    return target if missing else None


def _config(top):
    """The library's own pytest configuration, or an empty one (never a file above it)."""
    for name, section in (("pytest.ini", "[pytest]"), ("pyproject.toml", "[tool.pytest"),
                          ("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]")):
        path = os.path.join(top, name)
        if os.path.exists(path) and section in open(path).read():
            return path
    path = os.path.join(top, "pytest.ini")
    with open(path, "w") as f:
        f.write("[pytest]\n")
    return path


def run_suite(name, workdir, swap, extra, timeout):
    """``{"passed", "failed", "errors", "skipped", "seconds"}`` of one run."""
    src_dir, tests, packages = LIBRARIES[name]
    top = _sdist(name, workdir)
    report = os.path.join(workdir, "%s-%s.xml" % (name, "swap" if swap else "numba"))
    args = [os.path.join(top, tests), "-q", "-c", _config(top),
            "--rootdir", top, "--junitxml", report] + list(extra)
    path = [os.path.join(top, src_dir), ROOT]
    dep = _deps(packages, workdir)
    if dep:
        path.append(dep)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        path + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    start = time.time()
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD.format(swap=swap, args=args)],
                              cwd=top, env=env, timeout=timeout, capture_output=True,
                              text=True)
        tail = (proc.stdout + proc.stderr)[-3000:]
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    out = {"seconds": round(time.time() - start, 1)}
    if not os.path.exists(report):
        out["no report"] = tail
        return out
    counts = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    root = ET.parse(report).getroot()
    for suite in ([root] if root.tag == "testsuite" else root.iter("testsuite")):
        for k in counts:
            counts[k] += int(suite.get(k, 0))
    out.update(passed=counts["tests"] - counts["failures"] - counts["errors"]
               - counts["skipped"], failed=counts["failures"], errors=counts["errors"],
               skipped=counts["skipped"])
    bad = [tc.get("classname", "") + "::" + tc.get("name", "")
           for tc in root.iter("testcase")
           if tc.find("failure") is not None or tc.find("error") is not None]
    if bad:
        out["not passed"] = bad[:30]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("libraries", nargs="*", default=list(LIBRARIES),
                    help="of: " + ", ".join(LIBRARIES))
    ap.add_argument("--workdir", default=os.path.join(ROOT, "build", "library_suites"))
    ap.add_argument("--swap-only", action="store_true",
                    help="skip the run under plain Numba")
    ap.add_argument("-k", help="pytest -k expression: a subset of the tests")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per run")
    ns = ap.parse_args(argv)
    ns.workdir = os.path.abspath(ns.workdir)    # the runs' working directory is the sdist's
    os.makedirs(ns.workdir, exist_ok=True)
    extra = ["-k", ns.k] if ns.k else []
    results = {}
    for name in ns.libraries:
        runs = {}
        for swap in ((True,) if ns.swap_only else (False, True)):
            label = "grad_jit" if swap else "numba"
            runs[label] = run_suite(name, ns.workdir, swap, extra, ns.timeout)
            print(name, label, json.dumps(runs[label]), flush=True)
        results[name] = runs
    print(json.dumps(results, indent=1))
    same = all(len(r) < 2 or {k: v for k, v in r["numba"].items() if k != "seconds"}
               == {k: v for k, v in r["grad_jit"].items() if k != "seconds"}
               for r in results.values())
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
