"""The Numba type of an adstack."""
from numba.core import types

#: Element types an adstack may hold, by Numba type.
ELEMENT_TYPES = (types.float32, types.float64, types.int32, types.int64, types.boolean,
                 types.complex64, types.complex128)

STORAGES = ("frame", "heap")
#: Storage kinds of the type: those ``adstack()`` accepts, and "global", a CUDA stack whose
#: entries are a strided slice of a global-memory buffer (see ``launch_stack``).
TYPE_STORAGES = STORAGES + ("global",)


class AdStackType(types.Type):
    """A stack of ``capacity`` elements of ``dtype``, kept in ``storage``.

    ``storage`` is ``"frame"`` (a fixed-size buffer in the stack frame of the function that
    created it), ``"heap"`` (a growable NRT-managed buffer) or, on CUDA, ``"global"`` (this
    thread's entries of a buffer in global memory, its capacity known at run time). The
    type is mutable: push and pop act on the storage the value refers to, so copies alias.
    """
    mutable = True

    def __init__(self, dtype, capacity, storage="frame"):
        if dtype not in ELEMENT_TYPES:
            raise TypeError("unsupported adstack element type %s" % (dtype,))
        if storage not in TYPE_STORAGES:
            raise ValueError("unsupported adstack storage %r" % (storage,))
        self.dtype = dtype
        self.capacity = int(capacity)
        self.storage = storage
        super().__init__(name="AdStack(%s, %d, %s)" % (dtype, self.capacity, storage))

    @property
    def key(self):
        return self.dtype, self.capacity, self.storage
