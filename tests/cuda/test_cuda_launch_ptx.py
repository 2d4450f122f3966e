"""CUDA backward kernels whose stacks are sized at each launch (``numba_adstack.cuda.grad_jit``
with default options), checked without a GPU: the capacities computed from the kernel's
arguments, the variant chosen (local memory within the per-thread budget, else a global
buffer of threads x capacity), and the PTX of both variants."""
import math
import re
import sys

import numpy as np
import pytest

pytest.importorskip("numba_cuda",
                    reason="numba-cuda is not installed (pip install \"numba-cuda[cu12]\")")
from numba import cuda, float64, int32, int64, uint8  # noqa: E402
from numba.core import types  # noqa: E402

import numba_adstack.cuda as nadc  # noqa: E402
from numba_adstack import config  # noqa: E402
from numba_adstack.cuda.launch import threads_of  # noqa: E402
from numba_adstack.cuda.sizing import round_up  # noqa: E402
from numba_adstack.cuda.testing import nvvm_available  # noqa: E402

if nadc.SIMULATOR:
    pytest.skip("PTX checks need the real numba.cuda target, not the simulator",
                allow_module_level=True)

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import cuda_grad_kernels as G  # noqa: E402

# (reads optimised LLVM IR or PTX: compiled at -O1 while the suite runs at -O0)
pytestmark = pytest.mark.optimised

A = types.Array(float64, 1, "C")
A2 = types.Array(float64, 2, "C")
N = types.int64
EXTRA = (int32[:], types.Array(uint8, 1, "C"), types.Array(int64, 1, "C"))


def backward_sig(sig):
    return tuple(sig) + tuple(t for t in sig if isinstance(t, types.Array)) + EXTRA


@nadc.grad_jit
def interior(x, y, n):
    """A loop bounded by an array's shape and a scalar: both known at launch."""
    i = cuda.grid(1)
    if i < y.shape[0]:
        v = x[i]
        for k in range(1, x.shape[0] - 1):
            for _ in range(n // 2):
                v = math.sin(v) * 0.9 + 0.001 * k
        y[i] = v


@nadc.grad_jit
def per_thread_length(x, y):
    """A range depending on the thread: not known at launch, it counts as while_cap."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for _ in range(i):
            v = math.sin(v)
        y[i] = v


def test_capacities_come_from_the_launch_arguments():
    x, y = np.zeros(32), np.zeros(32)
    bw = G.recurrence_auto._build((A, A, A, N))
    for n in (0, 1, 40, 5000):
        caps, capped = bw.sizing.capacities((x, np.ones(1), y, n))
        assert set(caps.values()) == {max(n, 1)} and not capped
    bw = G.nested_auto._build((A, A, N, N))
    caps, _ = bw.sizing.capacities((x, y, 3, 5))
    assert max(caps.values()) == 12
    bw = interior._build((A, A, N))
    caps, capped = bw.sizing.capacities((np.zeros(10), y, 7))
    assert max(caps.values()) == 8 * 3 and not capped
    bw = per_thread_length._build((A, A))
    caps, capped = bw.sizing.capacities((x, y))
    assert capped and max(caps.values()) == config.DEFAULT_WHILE_CAP


def test_local_within_the_budget_global_past_it():
    bw = G.recurrence_auto._build((A, A, A, N))
    x = np.zeros(64)
    ks, meta, nbytes = bw.plan_launch((x, np.ones(1), x, 40), 64)
    assert nbytes == 0 and set(ks.values()) == {64}           # rounded up: one variant
    ks33, _, _ = bw.plan_launch((x, np.ones(1), x, 33), 64)
    assert ks33 == ks
    big = config.CUDA_LOCAL_BUDGET_BYTES // 8 + 1
    ks, meta, nbytes = bw.plan_launch((x, np.ones(1), x, big), 1000)
    assert set(ks.values()) == {0}
    nstacks = len(ks)
    assert nbytes == nstacks * ((big * 1000 * 8 + 15) // 16 * 16)
    assert list(meta[1::2]) == [big] * nstacks                  # the exact capacities
    assert list(meta[0::2]) == [k * nbytes // nstacks for k in range(nstacks)]


def test_threads_of_a_launch():
    assert threads_of((4, 32)) == 128
    assert threads_of(((2, 3), (4, 4, 2))) == 192


@pytest.mark.skipif(not nvvm_available(), reason="libNVVM not found")
def test_both_variants_compile_local_depot_or_global_accesses():
    bw = G.recurrence_auto._build((A, A, A, N))
    sig = backward_sig((A, A, A, N))
    ks = {i: 0 for i in bw.sizing.itemsizes()}
    ptx, _ = cuda.compile_ptx(bw.variant(ks).py_func, sig, cc=(8, 0))
    assert not any(k and "recurrence_auto_backward" in k
                   for k in nadc.ptx_local_depots(ptx)), nadc.ptx_local_depots(ptx)
    assert re.search(r"\bst\.global\.f64\b", ptx) and re.search(r"\bld\.global\.f64\b", ptx)
    assert not re.search(r"\bst\.local\.f64\b", ptx)
    ks = {i: 64 for i in ks}
    ptx, _ = cuda.compile_ptx(bw.variant(ks).py_func, sig, cc=(8, 0))
    depot = [v for k, v in nadc.ptx_local_depots(ptx).items()
             if k and "recurrence_auto_backward" in k]
    assert depot == [len(ks) * 64 * 8]
    assert re.search(r"\bst\.local\.f64\b", ptx)


def test_kernel_without_stacks_keeps_its_signature():
    bw = G.shared_params._build((A, A, A))
    assert bw.source.startswith("def shared_params_backward(x, w, y, x_bar, w_bar, y_bar, "
                                "_flag):"), bw.source.splitlines()[0]


def test_round_up():
    assert [round_up(n) for n in (0, 1, 2, 3, 64, 65)] == [1, 1, 2, 4, 64, 128]
