"""Errors of the CUDA target. They derive from the package's errors (so ``except
AdStackBudgetError`` sees them) and from numba-cuda's ``NumbaError`` (so numba-cuda's
compiler passes them through with their source location, as it does its own errors)."""
from numba.cuda.core import errors as _cuda_errors

from ..errors import AdStackBudgetError, AdStackError


class AdStackLocalMemoryError(AdStackBudgetError, _cuda_errors.NumbaError):
    """Compile time (CUDA): the adstacks of one kernel or device function need more local
    memory per thread than a GPU thread can address (512 KiB)."""


class AdStackCudaError(AdStackError, _cuda_errors.NumbaError):
    """Compile time (CUDA): an adstack feature the CUDA target does not support (heap
    storage)."""
