"""Data models of AdStackType on the CPU.

Frame storage: the value is a pointer to one entry-block alloca laid out as the packed
struct ``<{i64 count, [capacity x T] data}>``: 8 bytes of header plus ``capacity *
sizeof(T)`` bytes (T is the element's in-memory type; bool is i8, 1 byte).

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


def frame_struct_type(context, fe_type):
    elt = element_data_type(context, fe_type.dtype)
    return ir.LiteralStructType([ir.IntType(64), ir.ArrayType(elt, fe_type.capacity)],
                                packed=True)


def heap_header_type(context, fe_type):
    elt = element_data_type(context, fe_type.dtype)
    return ir.LiteralStructType([ir.IntType(64), ir.IntType(64), elt.as_pointer()])


class _FrameModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        elt = dmm[fe_type.dtype].get_data_type()
        be = ir.LiteralStructType([ir.IntType(64), ir.ArrayType(elt, fe_type.capacity)],
                                  packed=True).as_pointer()
        super().__init__(dmm, fe_type, be)


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
    """Bytes of the entry-block alloca of a frame stack of type ``fe_type``."""
    return context.get_abi_sizeof(frame_struct_type(context, fe_type))
