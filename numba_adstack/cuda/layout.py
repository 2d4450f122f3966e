"""Layout of an adstack on CUDA (shared by the lowering, the helpers and the tests).

One stack is a per-thread struct ``{i32 count, i32 overflowed, [capacity x T] data}``,
allocated in the entry block of the kernel or device function; NVVM places it in local
memory (``__local_depot`` in the PTX).
"""

#: Bytes of the header (count, overflowed) in front of the entries.
HEADER_BYTES = 8

#: Bytes of local memory a CUDA thread can address; more adstack storage than this in
#: one function is refused at compile time.
LOCAL_MEMORY_LIMIT_BYTES = 512 * 1024

_ITEMSIZE = {"float32": 4, "float64": 8, "int32": 4, "int64": 8, "bool": 1}


def stack_bytes(fe_type):
    """Bytes of local memory per thread of one stack of Numba type ``fe_type``: the header,
    ``capacity * sizeof(T)`` (bool: 1 byte), padded to the struct's alignment
    (4 bytes, or 8 for 8-byte elements)."""
    itemsize = _ITEMSIZE[str(fe_type.dtype)]
    align = max(4, itemsize)
    return (HEADER_BYTES + fe_type.capacity * itemsize + align - 1) // align * align
