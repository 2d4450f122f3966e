"""The CUDA cases on a real GPU (skipped without one): the lowered intrinsics must behave as
the simulator does, and the local memory the driver reports must hold the stacks."""
import os
import sys

import numpy as np
import pytest

pytest.importorskip("numba_cuda",
                    reason="numba-cuda is not installed (pip install \"numba-cuda[cu12]\")")
import numba_adstack.cuda as nadc  # noqa: E402

if not nadc.have_gpu():
    pytest.skip("no CUDA GPU", allow_module_level=True)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuda_cases  # noqa: E402
import cuda_kernels as K  # noqa: E402
from numba import cuda, float64, int32  # noqa: E402


def _param(case):
    where, reason = cuda_cases.XFAIL.get(case, (None, None))
    if where == "everywhere":
        return pytest.param(case, marks=pytest.mark.xfail(strict=True, reason=reason))
    return case


@pytest.mark.parametrize("case", [_param(c) for c in sorted(cuda_cases.CASES)])
def test_device_case(case):
    cuda_cases.CASES[case]()


def test_local_memory_per_thread_holds_the_stack():
    disp = cuda.jit((float64[:], float64[:], float64[:], int32, float64[:], float64[:],
                     float64[:], int32[:]))(K.recurrence_backward)
    nbytes = nadc.local_memory_per_thread(disp)  # an int: the kernel is specialized
    if isinstance(nbytes, dict):
        (nbytes,) = nbytes.values()
    assert nbytes >= 8 + K.CAP * 8


def test_large_stacks_run_on_device():
    # 320008 bytes per thread: past the CPU frame budget, fine on a GPU.
    kern = cuda.jit(K.make_big_stack_kernel(40000))
    k = nadc.OverflowCheckedKernel(kern, "big_stacks", 40000)
    x = np.linspace(0.0, 1.0, 64)
    try:
        k[2, 32](x, 100)
    except cuda.cudadrv.driver.CudaAPIError as e:
        # The driver reserves local memory for every resident thread: tens of GB here.
        if "OUT_OF_MEMORY" in str(e) or "out of memory" in str(e).lower():
            pytest.skip("not enough device memory for 320 KB of local memory per thread")
        raise
    assert np.all(np.isfinite(x))


def test_tangent_kernel_on_device():
    """k.jvp[grid, block] on the GPU (tests/_jvp_cuda_sim.py with the simulator off),
    against central finite differences of the kernel itself."""
    import json
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(here)),
                                                    env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, os.path.join(here, "..", "_jvp_cuda_sim.py")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    errors = json.loads(proc.stdout.strip().splitlines()[-1])
    assert errors["value"] == 0.0
    assert errors["out"] < 1e-6 and errors["total"] < 1e-6, errors
