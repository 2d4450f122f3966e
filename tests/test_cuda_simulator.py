"""Gradients, overflow and recovery of hand-written adstack kernels in the CUDA simulator.

The simulator must be chosen before numba.cuda is imported, so the cases
(tests/_cuda_sim_cases.py) run together in one subprocess with NUMBA_ENABLE_CUDASIM=1 and
report each case's outcome; each test below checks one of them.
"""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba_cuda",
                    reason="numba-cuda is not installed (pip install \"numba-cuda[cu12]\")")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


@pytest.fixture(scope="module")
def sim_results():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, os.path.join(HERE, "_cuda_sim_cases.py")],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


CASES = ["recurrence_gradient", "device_arrays", "overflow_then_recover",
         "empty_pop_sets_flag", "branch_flags_on_a_bool_stack", "device_function",
         "kernel_from_source"]


@pytest.mark.parametrize("case", CASES)
def test_simulator_case(sim_results, case):
    assert case in sim_results, "case %s did not run" % case
    tb = sim_results[case]
    if tb is not None:
        pytest.fail("simulator case %s failed:\n%s" % (case, tb), pytrace=False)


def test_every_case_is_listed(sim_results):
    assert sorted(sim_results) == sorted(CASES)
