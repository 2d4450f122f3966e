"""The adstack intrinsics for the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``).

The simulator runs kernels as Python code, one Python thread per CUDA thread, so
``@intrinsic`` lowering never runs there and the pure-Python implementations are called
instead. Those of :mod:`numba_adstack.intrinsics` follow the CPU: an overflow or underflow
raises. A GPU thread cannot raise, so on CUDA the stack keeps a sticky flag in its header
and the kernel reports it through a global flag after the fact. The functions below give
the simulator that same behaviour, so a kernel behaves alike on the device and in the
simulator:

- ``push`` on a full stack stores nothing and sets the flag;
- ``pop``/``top`` on an empty stack return 0 (False for bool) and set the flag;
- ``overflowed`` reads the flag.

They are what :mod:`numba_adstack.cuda` exports as ``adstack, push, pop, top, size,
overflowed`` when the simulator is on (on a real target it exports the
:mod:`numba_adstack.intrinsics` functions themselves).
"""
import numpy as np

from .. import intrinsics as _intrinsics


class SimAdStack(_intrinsics.PyAdStack):
    """A per-thread adstack of the simulator, with the CUDA overflow flag."""

    __slots__ = ("flag",)

    def __init__(self, dtype, capacity, storage="frame"):
        super().__init__(dtype, capacity, storage)
        if self.storage != "frame":
            raise ValueError("adstack(): storage=%r is not supported on CUDA; every stack "
                             "lives in local memory (storage='frame')" % (storage,))
        self.flag = False

    def __repr__(self):
        return "SimAdStack(%s, %d, size=%d, overflowed=%s)" % (
            self.kind, self.capacity, len(self.items), self.flag)


def adstack(dtype, capacity, storage="frame"):
    """A new empty per-thread stack (see :func:`numba_adstack.adstack`)."""
    return SimAdStack(dtype, capacity, storage)


def push(st, value):
    """Push ``value``; on a full stack store nothing and set the overflow flag."""
    if len(st.items) >= st.capacity:
        st.flag = True
        return
    if st.kind.startswith("int") and isinstance(value, (float, np.floating)):
        raise TypeError("cannot push a float onto an %s adstack" % st.kind)
    st.items.append(st._cast(value))


def _zero(st):
    return st._cast(0)


def pop(st):
    """Remove and return the top element; on an empty stack return 0 and set the flag."""
    if not st.items:
        st.flag = True
        return _zero(st)
    return st.items.pop()


def top(st):
    """The top element; on an empty stack return 0 and set the flag."""
    if not st.items:
        st.flag = True
        return _zero(st)
    return st.items[-1]


def size(st):
    """Number of elements on the stack."""
    return len(st.items)


def clear(st):
    """Empty the stack; the overflow flag stays."""
    del st.items[:]


def reserve(st, n):
    """A per-thread stack has the room it has: nothing to do."""
    return None


def overflowed(st):
    """True once a push was dropped or an empty stack was read."""
    return st.flag
