"""Layout of an adstack on CUDA (shared by the lowering, the helpers and the tests).

One stack is three per-thread allocas in the entry block of the kernel or device function:
an ``i32`` count and an ``i32`` overflow flag, which NVVM keeps in registers, and the
``[capacity x T]`` entries, 16-byte aligned (NVVM gives larger local arrays that alignment
anyway), which it places in local memory (``__local_depot`` in the PTX).
"""

#: Bytes of local memory a CUDA thread can address; more adstack storage than this in
#: one function is refused at compile time.
LOCAL_MEMORY_LIMIT_BYTES = 512 * 1024

_ITEMSIZE = {"float32": 4, "float64": 8, "int32": 4, "int64": 8, "bool": 1}
#: Alignment of the entries of a stack in local memory.
DATA_ALIGN = 16


def stack_bytes(fe_type):
    """Bytes of local memory per thread of one stack of Numba type ``fe_type``:
    ``capacity * sizeof(T)`` (bool: 1 byte), padded to DATA_ALIGN."""
    nbytes = fe_type.capacity * _ITEMSIZE[str(fe_type.dtype)]
    return (nbytes + DATA_ALIGN - 1) // DATA_ALIGN * DATA_ALIGN
