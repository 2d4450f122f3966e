"""The backward kernels that ``numba_adstack.cuda.grad_jit`` generates, checked in PTX without
a GPU (numba.cuda.compile_ptx with cc=(8, 0) and a pip-installed libNVVM): per-thread stacks
in the local depot, atomics only where an adjoint is shared by threads, no CPU frame budget,
and the 512 KiB refusal."""
import math
import os
import re
import sys

import numpy as np
import pytest

pytest.importorskip("numba_cuda",
                    reason="numba-cuda is not installed (pip install \"numba-cuda[cu12]\")")
from numba import cuda, float64, int32  # noqa: E402
from numba.core import types  # noqa: E402

import numba_adstack.cuda as nadc  # noqa: E402
from numba_adstack import AdStackBudgetError  # noqa: E402
from numba_adstack.cuda import AdStackLocalMemoryError  # noqa: E402
from numba_adstack.cuda.testing import fake_current_device, nvvm_available  # noqa: E402
from numba_adstack.typing.types import AdStackType  # noqa: E402

if nadc.SIMULATOR:
    pytest.skip("PTX checks need the real numba.cuda target, not the simulator",
                allow_module_level=True)

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import cuda_grad_kernels as G  # noqa: E402


pytestmark = [pytest.mark.optimised,
              pytest.mark.skipif(not nvvm_available(),
                                 reason="libNVVM not found: pip install \"numba-cuda[cu12]\"")]

A = types.Array(float64, 1, "C")
N = types.int64
FLAG = int32[:]
ATOMIC = re.compile(r"\b(?:atom|red)\.global\.add\.f64\b")
_STACK = re.compile(r"adstack\(np\.(\w+), (\d+)\)")


def backward_sig(sig):
    """The backward kernel's signature: the arguments, one adjoint per array, the flag."""
    return tuple(sig) + tuple(t for t in sig if isinstance(t, types.Array)) + (FLAG,)


def backward_ptx(kernel, sig):
    """(launcher, PTX) of the backward kernel grad_jit builds for ``sig``."""
    bw = kernel._build(tuple(sig))
    with fake_current_device():  # for kernels that call device functions
        ptx, _ = cuda.compile_ptx(bw.dispatcher.py_func, backward_sig(sig), cc=(8, 0))
    return bw, ptx


def kernel_depot(ptx, name):
    depots = nadc.ptx_local_depots(ptx)
    found = [v for k, v in depots.items() if k and name + "_backward" in k]
    assert len(found) == 1, depots
    return found[0]


def source_stack_bytes(source):
    """Bytes of the adstacks the generated source declares, by the CUDA layout."""
    stacks = _STACK.findall(source)
    assert stacks, source
    return sum(nadc.stack_bytes(AdStackType(getattr(types, dt), int(cap)))
               for dt, cap in stacks)


def test_recurrence_depot_holds_the_stacks_of_ad_stack_size():
    bw, ptx = backward_ptx(G.recurrence, (A, A, A, N))
    stacks = _STACK.findall(bw.source)
    # sin(v) and its kept derivative cos(v), pushed once per step each, share one float64
    # stack of 2 * ad_stack_size entries
    assert stacks == [("float64", str(2 * G.SIZE))], stacks
    depot = kernel_depot(ptx, "recurrence")
    assert depot == source_stack_bytes(bw.source) == 2 * 8 * G.SIZE
    assert re.search(r"\.local \.align 16 \.b8\s+__local_depot\d+\[%d\];" % depot, ptx)
    assert re.search(r"\bst\.local\.f64\b", ptx) and re.search(r"\bld\.local\.f64\b", ptx)


@pytest.mark.parametrize("size", [5, 100])
def test_depot_follows_ad_stack_size(size):
    bw, ptx = backward_ptx(G.make_recurrence(size), (A, A, A, N))
    assert _STACK.findall(bw.source) == [("float64", str(2 * size))]
    padded = (8 * 2 * size + 15) // 16 * 16
    assert kernel_depot(ptx, "recurrence") == padded == source_stack_bytes(bw.source)


def test_shared_parameter_adjoint_is_atomic():
    bw, ptx = backward_ptx(G.recurrence, (A, A, A, N))
    # w[0] is read by every thread: its adjoint is added atomically ...
    assert ATOMIC.search(ptx)
    assert "cuda.atomic.add(w_bar, 0," in bw.source
    # ... x[i] with i = cuda.grid(1) by one thread only: a plain +=.
    assert "x_bar[i] += " in bw.source
    assert "atomic.add(x_bar" not in bw.source


def test_thread_private_adjoints_have_no_atomics():
    bw, ptx = backward_ptx(G.private_recurrence, (A, A, N))
    assert "x_bar[i] += " in bw.source and "atomic" not in bw.source
    assert not re.search(r"\b(?:atom|red)\.", ptx)
    assert kernel_depot(ptx, "private_recurrence") == 8 * G.SIZE


def test_element_read_by_two_threads_is_atomic():
    bw, ptx = backward_ptx(G.shared_pair, (A, A, N))
    assert re.search(r"cuda\.atomic\.add\(x_bar, ", bw.source), bw.source
    assert not re.search(r"x_bar\[[^\]]*\] \+=", bw.source), bw.source
    assert ATOMIC.search(ptx)


def test_local_array_adjoint_is_per_thread():
    bw, ptx = backward_ptx(G.local_state, (A, A, A, N))
    # the adjoint of the cuda.local.array is a local array of its own, zeroed by hand ...
    assert re.search(r"s_bar = \w+\.local\.array\(3, ", bw.source), bw.source
    # ... accumulated with plain adds; only w (read by every thread) gets atomics
    assert not re.search(r"atomic\.add\(s_bar", bw.source), bw.source
    assert re.search(r"cuda\.atomic\.add\(w_bar, ", bw.source), bw.source
    assert ATOMIC.search(ptx)


def test_every_shared_parameter_gets_an_atomic():
    bw, ptx = backward_ptx(G.shared_params, (A, A, A))
    for k in range(3):
        assert re.search(r"cuda\.atomic\.add\(w_bar, %d," % k, bw.source), bw.source
    assert len(ATOMIC.findall(ptx)) == 3
    # no loop with a run-time trip count: no adstack, no depot for the kernel
    assert "adstack(" not in bw.source
    assert not any(k and "shared_params_backward" in k for k in nadc.ptx_local_depots(ptx))


def test_branch_and_while_backward_compiles():
    bw, ptx = backward_ptx(G.branch_while, (A, A))
    assert kernel_depot(ptx, "branch_while") == source_stack_bytes(bw.source)
    # the branch taken at each step is kept on a stack of integers or bools
    assert any(not dt.startswith("float") for dt, _ in _STACK.findall(bw.source)), bw.source


def test_zero_safe_products_are_branches_in_a_kernel():
    # (a kernel's backward calls no zmul: its guarded products are conditional
    # expressions, which NVVM compiles)
    bw, ptx = backward_ptx(G.root_where_large, (A, A))
    assert "zmul" not in bw.source and "!= 0.0 else 0.0" in bw.source, bw.source
    assert "sqrt" in ptx


def test_device_function_is_inlined_and_differentiated():
    bw, ptx = backward_ptx(G.calls_device, (A, A, A, N))
    # the rewrite inlines damped_sin: no call is left, its body and its adjoint (cos) are in
    assert "damped_sin(" not in bw.source
    assert re.search(r"\bdamped_sin_\w+ = ", bw.source), bw.source
    assert "math.cos(" in bw.source
    assert "cuda.atomic.add(w_bar" in bw.source
    assert kernel_depot(ptx, "calls_device") == source_stack_bytes(bw.source)
    assert ATOMIC.search(ptx)


def test_no_frame_budget_for_cuda_backward():
    # ad_stack_size=20000: 160008 bytes per float64 stack, at least two stacks, past the
    # CPU frame budget of 256 KiB; a GPU thread has 512 KiB of local memory.
    big = 20000
    bw, ptx = backward_ptx(G.make_recurrence(big), (A, A, A, N))
    depot = kernel_depot(ptx, "recurrence")
    assert depot == source_stack_bytes(bw.source) > 256 * 1024


def test_over_512_kib_is_refused_through_grad_jit():
    k = G.make_recurrence(40000)  # two float64 stacks of 40000: 640016 bytes per thread
    bw = k._build((A, A, A, N))
    sig = backward_sig((A, A, A, N))
    with pytest.raises(AdStackLocalMemoryError) as info:
        cuda.compile_ptx(bw.dispatcher.py_func, sig, cc=(8, 0))
    msg = str(info.value)
    assert "recurrence_backward" in msg and "524288" in msg and "ad_stack_size" in msg
    assert "%d bytes" % source_stack_bytes(bw.source) in msg
    assert isinstance(info.value, AdStackBudgetError)
    # The launcher's own compilation (what k.grad[grid, block](...) does) refuses the same.
    with fake_current_device(), pytest.raises(AdStackLocalMemoryError):
        bw.dispatcher.compile(sig)


@nadc.grad_jit(ad_stack_size=G.SIZE)
def manual_index_recurrence(x, y, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < x.shape[0]:
        v = x[i]
        for _ in range(n):
            v = math.sin(v) * 1.1 + 0.1
        y[i] = v


def test_index_built_from_thread_and_block_is_thread_private():
    # blockIdx.x * blockDim.x + threadIdx.x is cuda.grid(1) by hand: no atomics either.
    bw, ptx = backward_ptx(manual_index_recurrence, (A, A, N))
    assert "x_bar[i] += " in bw.source and "atomic" not in bw.source
    assert not ATOMIC.search(ptx)


# ---------------------------------------------------------------- a device function's grad
DEVICE_SIG = (float64, float64, A, N)        # pair_energy(x, k, w, n)


def test_device_function_grad_in_a_kernel_keeps_its_stacks_in_the_depot():
    with fake_current_device():
        ptx, _ = cuda.compile_ptx(G.pair_forces.py_func, (A, float64, A, N, A, A),
                                  cc=(8, 0))
    bw = G.pair_energy._numba_adstack_gradient.backward_for_types(DEVICE_SIG)
    # fixed per-thread capacities in local memory, checked into the NaN flag; no arrays
    # allocated, no atomics (arrays are read, not differentiated)
    assert _STACK.findall(bw.source) and "overflowed(" in bw.source, bw.source
    assert "np.zeros" not in bw.source and "np.empty" not in bw.source, bw.source
    assert kernel_depot_of(ptx, "pair_forces") == source_stack_bytes(bw.source)
    assert not ATOMIC.search(ptx)


def kernel_depot_of(ptx, name):
    found = [v for k, v in nadc.ptx_local_depots(ptx).items() if k and name in k]
    assert len(found) == 1, nadc.ptx_local_depots(ptx)
    return found[0]


def test_device_function_grad_types_as_on_the_cpu():
    def grad_of_pair(x, k, w, n):
        return G.pair_energy.grad(x, k, w, n)

    def value_and_grad_of_pair(x, k, w, n):
        return G.pair_energy.value_and_grad(x, k, w, n)
    with fake_current_device():
        _, resty = cuda.compile_ptx(grad_of_pair, DEVICE_SIG, device=True, cc=(8, 0))
        _, both = cuda.compile_ptx(value_and_grad_of_pair, DEVICE_SIG, device=True,
                                   cc=(8, 0))
    # a float per float scalar, None (typed none) for the array and the integer
    grads = types.Tuple([float64, float64, types.none, types.none])
    assert resty == grads, resty
    assert both == types.Tuple([float64, grads]), both


def test_device_function_grad_from_the_host_is_refused():
    with pytest.raises(TypeError, match="call it inside a kernel"):
        G.pair_energy.grad(0.5, 1.0, None, 3)


def test_device_function_writing_into_its_argument_is_refused():
    @nadc.grad_jit(device=True)
    def writes(x, out):
        out[0] = x * x
        return out[0]

    def kernel(x, out):
        out[1] = writes.grad(x[0], out)[0]
    with fake_current_device(), pytest.raises(Exception, match="writes into its argument"):
        cuda.compile_ptx(kernel, (A, A), cc=(8, 0))


def test_cpu_compiles_still_allocate_after_a_kernel_that_calls_a_device_grad():
    """Building d.grad's backward while a kernel is typed must leave Numba's CPU pipeline
    whole: np.zeros_like compiled for the CPU afterwards (a fresh process: the state is
    per process, and the first allocation must come after the kernel)."""
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    code = "\n".join([
        "import numpy as np, numba",
        "from numba import cuda, float64",
        "from numba.core import types",
        "from numba_adstack.cuda.testing import fake_current_device",
        "import cuda_grad_kernels as G",
        "A = types.Array(float64, 1, 'C')",
        "with fake_current_device():",
        "    cuda.compile_ptx(G.pair_forces.py_func, (A, float64, A, types.int64, A, A),",
        "                     cc=(8, 0))",
        "print(numba.njit(lambda a: np.zeros_like(a).sum() + a.sum())(np.ones(3)))",
        "print(G.pair_energy_cpu.grad(0.3, 0.9, np.array([0.1, -0.2]), 3)[0])",
    ])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, os.path.dirname(os.path.dirname(here)),
                                                    env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout.split()
    assert float(out[0]) == 3.0
    want = G.fd_scalar(lambda a: G.pair_energy_python(a, 0.9, np.array([0.1, -0.2]), 3), 0.3)
    assert abs(float(out[1]) - want) < 1e-7
