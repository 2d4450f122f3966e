"""Gradients, overflow and recovery of adstack kernels in the CUDA simulator: hand-written
kernels and the backward kernels of ``numba_adstack.cuda.grad_jit``.

The simulator must be chosen before numba.cuda is imported, so the cases
(tests/cuda/_cuda_sim_cases.py) run together in one subprocess with NUMBA_ENABLE_CUDASIM=1 and
report each case's outcome; each test below checks one of them.
"""
import ast
import json
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("numba_cuda",
                    reason="numba-cuda is not installed (pip install \"numba-cuda[cu12]\")")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The case list, read without importing numba.cuda in this process (cuda_cases.py imports
# it, and the simulator must be chosen first).
_CASES_SRC = open(os.path.join(HERE, "cuda_cases.py")).read()


@pytest.fixture(scope="module")
def sim_results():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, os.path.join(HERE, "_cuda_sim_cases.py")],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


CASES = sorted(re.findall(r"^def case_(\w+)\(", _CASES_SRC, re.M))


def _xfail_simulator():
    """cuda_cases.XFAIL entries that apply in the simulator, read from its source."""
    tree = ast.parse(_CASES_SRC)
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "XFAIL"):
            table = ast.literal_eval(node.value)
            return {k: reason for k, (where, reason) in table.items()
                    if where in ("simulator", "everywhere")}
    return {}


XFAIL = _xfail_simulator()


def _param(case):
    if case in XFAIL:
        return pytest.param(case, marks=pytest.mark.xfail(strict=True, reason=XFAIL[case]))
    return case


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_simulator_case(sim_results, case):
    assert case in sim_results, "case %s did not run" % case
    tb = sim_results[case]
    if tb is not None:
        pytest.fail("simulator case %s failed:\n%s" % (case, tb), pytrace=False)


def test_every_case_is_listed(sim_results):
    assert sorted(sim_results) == sorted(CASES)
    assert set(XFAIL) <= set(CASES)


def test_gpu_benchmark_runs_in_the_simulator():
    # benchmarks/gpu/recurrence.py with a handful of threads: the script works and its
    # grad_jit gradient matches the analytic one it computes in NumPy.
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    script = os.path.join(ROOT, "benchmarks", "gpu", "recurrence.py")
    proc = subprocess.run([sys.executable, script, "--threads", "40", "--steps", "4",
                           "--block", "32", "--repeat", "1"],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    assert report["device"] == "simulator" and report["threads"] == 40
    assert report["max_abs_err_x_bar"] < 1e-12 and report["rel_err_w_bar"] < 1e-12
    assert report["stack_bytes_per_thread"] >= 8 * 4
    assert report["local_bytes_per_thread"] is None  # a driver figure: none without a GPU
