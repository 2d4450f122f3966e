"""Runs the cases of cuda_cases.py in the CUDA simulator, for test_cuda_simulator.py, in a
process of its own: NUMBA_ENABLE_CUDASIM must be set before numba.cuda is imported.

``python tests/cuda/_cuda_sim_cases.py [case ...]`` prints one JSON object: for each case, null
when it passed, else the traceback.
"""
import json
import os
import sys
import traceback

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numba_adstack.cuda as nadc  # noqa: E402
import cuda_cases  # noqa: E402


def main(names):
    assert nadc.SIMULATOR, "numba.cuda was imported before NUMBA_ENABLE_CUDASIM was set"
    results = {}
    for name in names or sorted(cuda_cases.CASES):
        try:
            cuda_cases.CASES[name]()
        except BaseException:
            results[name] = traceback.format_exc()
        else:
            results[name] = None
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
