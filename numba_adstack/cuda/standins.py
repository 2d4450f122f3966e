"""CPU-typable stand-ins for the ``numba.cuda`` kernel API.

The reverse-mode rewrite reads a kernel's typed Numba IR. Numba's CPU pipeline produces it
the same way on every machine (a GPU, the simulator or neither) once ``cuda.grid``,
``cuda.threadIdx.x``, ``cuda.atomic.add``... are typed; this module types them for the CPU
with the types they have on the device. They are only ever typed, never lowered: the
generated backward kernel names the real ``numba.cuda`` again and is compiled by it.
"""
import sys
import types as pytypes

import numpy as np
from numba import types
from numba.core.extending import overload, typeof_impl, type_callable
from numba.core.typing.templates import AttributeTemplate, infer_getattr



class _Dim3:
    """``threadIdx``, ``blockIdx``, ``blockDim``, ``gridDim``: typed as three int32s."""


class Dim3Type(types.Type):
    def __init__(self):
        super().__init__(name="StandinDim3")


dim3_type = Dim3Type()


@typeof_impl.register(_Dim3)
def _typeof_dim3(val, c):
    return dim3_type


@infer_getattr
class _Dim3Attrs(AttributeTemplate):
    key = Dim3Type

    def generic_resolve(self, typ, attr):
        if attr in ("x", "y", "z"):
            return types.int32


def grid(ndim):
    raise NotImplementedError


def gridsize(ndim):
    raise NotImplementedError


def syncthreads():
    raise NotImplementedError


def _grid_overload(ndim):
    if isinstance(ndim, types.IntegerLiteral):
        n = ndim.literal_value
        if n == 1:
            return lambda ndim: np.int64(0)
        if n == 2:
            return lambda ndim: (np.int64(0), np.int64(0))
        if n == 3:
            return lambda ndim: (np.int64(0), np.int64(0), np.int64(0))


overload(grid)(_grid_overload)
overload(gridsize)(_grid_overload)


@type_callable(syncthreads)
def _type_syncthreads(context):
    def typer():
        return types.none
    return typer


def _atomic(arr, idx, val):
    raise NotImplementedError


@type_callable(_atomic)
def _type_atomic(context):
    def typer(arr, idx, val):
        if isinstance(arr, types.Array):
            return arr.dtype
    return typer


def _local_array(shape, dtype):
    raise NotImplementedError


def _shared_array(shape, dtype):
    raise NotImplementedError


@overload(_local_array)
def _ov_local_array(shape, dtype):
    return lambda shape, dtype: np.empty(shape, dtype)


@overload(_shared_array)
def _ov_shared_array(shape, dtype):
    return lambda shape, dtype: np.empty(shape, dtype)


#: What the kernel's ``cuda.local.array`` / ``cuda.shared.array`` are typed as.
local_array_standin = _local_array
shared_array_standin = _shared_array


def _namespace(**attrs):
    ns = pytypes.ModuleType("numba_adstack_cuda_standin")
    ns.__dict__.update(attrs)
    return ns


def make_standin():
    """A module object that stands for ``numba.cuda`` while a kernel is typed on the CPU."""
    atomic = _namespace(**{op: _atomic for op in ("add", "sub", "max", "min", "exch",
                                                  "and_", "or_", "xor", "inc", "dec",
                                                  "nanmax", "nanmin")})
    local = _namespace(array=_local_array)
    shared = _namespace(array=_shared_array)
    return _namespace(grid=grid, gridsize=gridsize, syncthreads=syncthreads,
                      threadIdx=_Dim3(), blockIdx=_Dim3(), blockDim=_Dim3(),
                      gridDim=_Dim3(), atomic=atomic, local=local, shared=shared,
                      warpsize=32, laneid=0)


STANDIN = make_standin()


def cuda_module():
    """The ``numba.cuda`` module in use (the simulator's under NUMBA_ENABLE_CUDASIM=1)."""
    return sys.modules.get("numba.cuda")


def with_standin_globals(py_func):
    """A copy of ``py_func`` whose globals name :data:`STANDIN` wherever they named
    ``numba.cuda``; other functions unchanged."""
    real = cuda_module()
    g = py_func.__globals__
    swap = {k: STANDIN for k, v in g.items() if real is not None and v is real}
    if not swap:
        return py_func
    new_globals = dict(g)
    new_globals.update(swap)
    fn = pytypes.FunctionType(py_func.__code__, new_globals, py_func.__name__,
                              py_func.__defaults__, py_func.__closure__)
    fn.__kwdefaults__ = py_func.__kwdefaults__
    fn.__qualname__ = py_func.__qualname__
    fn.__module__ = py_func.__module__
    return fn


def simulator_device_function(value):
    """The Python function of a device function in the CUDA simulator, else None."""
    if type(value).__name__ == "FakeCUDAKernel":
        return getattr(value, "fn", None)
    return None
