"""Data models of AdStackType on the CPU.

Frame storage: two entry-block allocas, an ``i64`` count and the ``[capacity x T]`` data;
the value is the pair of pointers ``{i64*, [capacity x T]*}``. That is 8 bytes of header
plus ``capacity * sizeof(T)`` bytes (T is the element's in-memory type; bool is i8, 1 byte).
The count has an alloca of its own so that LLVM keeps it in a register: in one alloca with
the data, every dynamically indexed store to the data pins the count in memory.

Heap storage: the value is ``{i8* header, meminfo*}``. ``header`` points to an entry-block
alloca ``{i64 count, i64 capacity, T* data}`` (kept out of memory by LLVM when it does not
escape); the meminfo owns the growable data buffer, so Numba's reference counting frees it
when the last reference dies, on normal and error returns alike.
"""
from llvmlite import ir
from numba.core import types
from numba.core.datamodel import models
from numba.extending import register_model

from ..typing.types import AdStackType

HEADER_BYTES = 8


def element_data_type(context, dtype):
    return context.get_data_type(dtype)


def frame_data_type(context, fe_type):
    return ir.ArrayType(element_data_type(context, fe_type.dtype), fe_type.capacity)


def _frame_value_type(data_type):
    return ir.LiteralStructType([ir.IntType(64).as_pointer(), data_type.as_pointer()])


def heap_header_type(context, fe_type):
    elt = element_data_type(context, fe_type.dtype)
    return ir.LiteralStructType([ir.IntType(64), ir.IntType(64), elt.as_pointer()])


class _FrameModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        data = ir.ArrayType(dmm[fe_type.dtype].get_data_type(), fe_type.capacity)
        super().__init__(dmm, fe_type, _frame_value_type(data))


class _HeapModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("header", types.voidptr),
                   ("meminfo", types.MemInfoPointer(types.voidptr))]
        super().__init__(dmm, fe_type, members)


@register_model(AdStackType)
class AdStackModel(models.DataModel):
    """Dispatches to the frame or heap model by the type's storage."""

    def __new__(cls, dmm, fe_type):
        if fe_type.storage == "heap":
            return _HeapModel(dmm, fe_type)
        return _FrameModel(dmm, fe_type)


def frame_bytes(context, fe_type):
    """Bytes of the entry-block allocas of a frame stack of type ``fe_type``."""
    return HEADER_BYTES + context.get_abi_sizeof(frame_data_type(context, fe_type))
