"""Numba's CPU array allocation, compiled once before any kernel.

On a GPU (numba 0.68.0, numba-cuda 0.30.4 on an H200), once kernels built by
``numba_adstack.cuda`` had been compiled and launched, the first CPU function of the
process that allocated an array (``np.empty``, ``np.zeros_like``, ...) could not be
compiled: its lowering was not found (``No definition for lowering
numpy_empty_like_nd``). A plain kernel launched alone does not do this, and which step of
those compiles does was not isolated. Every CPU gradient allocates its adjoints and the
kernel rewrite types kernels with Numba's CPU pipeline, so both failed after the first
launch. Compiling the allocations on the CPU first, when ``numba_adstack.cuda`` is
imported, keeps them whole (tests/cuda/test_cuda_device.py on a GPU).
"""
import numba
import numpy as np

_done = []


def _allocations(n):
    a = np.empty(n)
    b = np.zeros_like(a)
    c = np.empty_like(a)
    d = np.zeros(n)
    e = np.ones((n, 2))
    return a.size + b.size + c.size + d.size + e.size


def compile_cpu_allocations():
    """Compile :func:`_allocations` for the CPU (once per process)."""
    if not _done:
        numba.njit("int64(int64)")(_allocations)
        _done.append(True)
