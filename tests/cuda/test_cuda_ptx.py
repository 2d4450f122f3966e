"""The CUDA lowering of the adstack intrinsics, checked in PTX without a GPU
(numba.cuda.compile_ptx with cc=(8, 0) and a pip-installed libNVVM)."""
import math
import re
import sys

import numpy as np
import pytest

pytest.importorskip("numba_cuda",
                    reason="numba-cuda is not installed (pip install \"numba-cuda[cu12]\")")
from numba import cuda, njit, float64, int32  # noqa: E402
from numba.core.errors import TypingError  # noqa: E402

import numba_adstack.cuda as nadc  # noqa: E402
from numba_adstack import AdStackBudgetError, adstack, push, pop  # noqa: E402
from numba_adstack.cuda import AdStackLocalMemoryError, AdStackCudaError  # noqa: E402
from numba_adstack.cuda.testing import fake_current_device, nvvm_available  # noqa: E402
from numba_adstack.typing.types import AdStackType  # noqa: E402
from numba.core import types  # noqa: E402

if nadc.SIMULATOR:
    pytest.skip("PTX checks need the real numba.cuda target, not the simulator",
                allow_module_level=True)

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import cuda_kernels as K  # noqa: E402


pytestmark = [pytest.mark.optimised,
              pytest.mark.skipif(not nvvm_available(),
                                 reason="libNVVM not found: pip install \"numba-cuda[cu12]\"")]

A = float64[:]
FLAG = int32[:]


def ptx_of(fn, sig):
    ptx, _ = cuda.compile_ptx(fn, sig, cc=(8, 0))
    return ptx


def depot_of(ptx, name):
    """Local depot bytes of the PTX function whose (mangled) name contains ``name``."""
    depots = nadc.ptx_local_depots(ptx)
    found = [v for k, v in depots.items() if k and name in k]
    assert len(found) == 1, depots
    return found[0]


def test_stack_bytes_layout():
    # the entries, padded to 16 bytes (the count and the flag live in registers)
    assert nadc.stack_bytes(AdStackType(types.float64, 16)) == 16 * 8
    assert nadc.stack_bytes(AdStackType(types.float32, 5)) == 32  # 20, padded to 16
    assert nadc.stack_bytes(AdStackType(types.int64, 3)) == 32
    assert nadc.stack_bytes(AdStackType(types.boolean, 7)) == 16


def test_recurrence_backward_depot_and_atomics():
    ptx = ptx_of(K.recurrence_backward, (A, A, A, int32, A, A, A, FLAG))
    # One float64 stack of 16 per thread: 16 * 8 bytes of local memory; its count is
    # in a register, so the only local accesses are to the entries.
    assert depot_of(ptx, "recurrence_backward") == K.CAP * 8 == 128
    assert re.search(r"\.local \.align 16 \.b8\s+__local_depot\d+\[128\];", ptx)
    assert not re.search(r"\b(st|ld)\.local\.[us]32\b", ptx)
    assert re.search(r"\b(st|ld)\.local\.f64\b", ptx)  # the entries are in local memory
    # w_bar[0] accumulates every thread's contribution atomically.
    assert re.search(r"\b(atom|red)\.global\.add\.f64\b", ptx)


def test_two_stacks_depot():
    ptx = ptx_of(K.two_stacks, (A, int32, A, FLAG))
    f64 = nadc.stack_bytes(AdStackType(types.float64, K.CAP))
    bools = nadc.stack_bytes(AdStackType(types.boolean, 7))
    assert depot_of(ptx, "two_stacks") == f64 + bools == 144


def test_forward_has_no_depot_and_no_atomics():
    ptx = ptx_of(K.recurrence_forward, (A, A, A, int32))
    assert not any(k and "recurrence_forward" in k for k in nadc.ptx_local_depots(ptx))
    assert not re.search(r"\b(atom|red)\.global", ptx)


def test_no_frame_budget_on_cuda():
    # 40000 float64 entries: 320000 bytes, past the CPU frame budget of 256 KiB ...
    cap = 40000
    kern = K.make_big_stack_kernel(cap)

    def cpu_version(x, n):
        s0 = adstack(np.float64, 40000)
        v = x[0]
        for _ in range(n):
            push(s0, v)
            v = math.sin(v)
        for _ in range(n):
            v += pop(s0)
        return v
    with pytest.raises(AdStackBudgetError):
        njit(cpu_version)(np.zeros(1), 1)
    # ... but a GPU thread has 512 KiB of local memory: it compiles for CUDA.
    ptx = ptx_of(kern, (A, int32, FLAG))
    assert depot_of(ptx, "big_stacks") == 8 * cap


def test_over_512_kib_per_thread_is_refused():
    kern = K.make_big_stack_kernel(33000, nstacks=2)  # 2 * 264000 bytes > 512 KiB
    with pytest.raises(AdStackLocalMemoryError) as info:
        ptx_of(kern, (A, int32, FLAG))
    msg = str(info.value)
    assert "big_stacks" in msg
    assert "528000 bytes" in msg and "524288" in msg and "ad_stack_size" in msg
    assert isinstance(info.value, AdStackBudgetError)
    # Exactly at the limit is fine: two stacks of 32768 entries, 2 * 262144 bytes.
    ptx = ptx_of(K.make_big_stack_kernel(32768, nstacks=2), (A, int32, FLAG))
    assert depot_of(ptx, "big_stacks") == 512 * 1024


def test_heap_storage_is_refused_on_cuda():
    def heap_kernel(x):
        st = adstack(np.float64, 8, "heap")
        push(st, x[0])
        x[0] = pop(st)
    with pytest.raises(AdStackCudaError, match="heap_kernel.*storage='frame'"):
        ptx_of(heap_kernel, (A,))


def test_cuda_typing_errors_are_clear():
    def bad_element(x):
        st = adstack(np.float16, 8)
        push(st, x[0])
    with pytest.raises(TypingError, match="element type must be"):
        ptx_of(bad_element, (A,))

    def bad_push(x):
        st = adstack(np.int32, 8)
        push(st, x[0])
    with pytest.raises(TypingError, match="cannot push a value of type float64"):
        ptx_of(bad_push, (A,))


def test_kernel_calling_a_device_function_compiles_with_fake_device():
    with fake_current_device() as dev:
        assert dev.compute_capability == (8, 0)
        ptx = ptx_of(K.calls_device, (A, A, A, int32))
    assert ".entry" in ptx


def test_kernel_from_source_compiles_to_ptx():
    src = ("def from_source(x, n, flag):\n"
           "    st = adstack(np.float32, 10)\n"
           "    v = x[cuda.grid(1)]\n"
           "    for _ in range(n):\n"
           "        push(st, v)\n"
           "        v = v * v\n"
           "    for _ in range(n):\n"
           "        v += pop(st)\n"
           "    x[cuda.grid(1)] = v\n"
           "    if overflowed(st):\n"
           "        flag[0] = 1\n")
    disp = nadc.compile_kernel_source(src, "from_source")
    assert disp.py_func.__name__ == "from_source"
    ptx = ptx_of(disp.py_func, (cuda.float32[:], int32, FLAG))
    assert depot_of(ptx, "from_source") == 48  # 10 * 4, padded to 16
