"""numba_adstack on the numba.cuda target.

Importing this module registers the CUDA lowering of the adstack intrinsics (per-thread
stacks in local memory, a sticky overflow flag instead of an exception) and gives the
helpers that differentiated kernels are built from. It needs numba-cuda
(``pip install ".[cuda]"`` from the repository's root).

``adstack, push, pop, top, size, overflowed`` below are the intrinsics for kernels of the
current target: :mod:`numba_adstack`'s own functions on a real target, their simulator
versions (same overflow behaviour as on the device) under ``NUMBA_ENABLE_CUDASIM=1``.
See docs/cuda.md.
"""
try:
    from numba import cuda as _cuda  # noqa: F401
    from numba.cuda.core import errors as _cuda_errors  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError("numba_adstack.cuda needs numba-cuda: pip install "
                      "\"numba-cuda[cu12]>=0.30,<0.31\" (or, from the repository's root, "
                      "\".[cuda]\")") from exc

from .. import typing as _typing  # noqa: F401  (typing templates, shared with the CPU)
from ..ad.capture.library_calls import add_numba_package

# numba-cuda's overloads are Numba's implementations, not a library's code to inline.
add_numba_package("numba_cuda")
from .errors import AdStackLocalMemoryError, AdStackCudaError
from .kernels import (SIMULATOR, OverflowCheckedKernel, array_meta, check_adjoint_args,
                      compile_kernel_source, have_gpu, intrinsic_functions,
                      kernel_namespace, local_memory_per_thread, overflow_message,
                      ptx_local_depots)

from .layout import LOCAL_MEMORY_LIMIT_BYTES, stack_bytes

if not SIMULATOR:
    from . import lowering as _lowering  # noqa: F401  (registers the CUDA lowering)
    from .cpu_first import compile_cpu_allocations as _compile_cpu_allocations
    _compile_cpu_allocations()

globals().update(intrinsic_functions())

__all__ = ["adstack", "push", "pop", "top", "size", "overflowed", "SIMULATOR",
           "LOCAL_MEMORY_LIMIT_BYTES", "AdStackLocalMemoryError",
           "AdStackCudaError",
           "OverflowCheckedKernel", "array_meta", "check_adjoint_args",
           "compile_kernel_source", "have_gpu", "intrinsic_functions", "kernel_namespace",
           "local_memory_per_thread", "overflow_message", "ptx_local_depots", "stack_bytes"]

from .grad import grad_jit, GradKernel  # noqa: E402,F401
__all__ += ["grad_jit", "GradKernel"]
