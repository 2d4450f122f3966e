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


class SimGlobalStack(SimAdStack):
    """A stack in the launch's global buffer, laid out as on the device: entry k of thread
    t is element ``k * nthreads + t`` after the stack's byte offset (see
    :func:`numba_adstack.cuda.lowering.cuda_launch_stack`)."""

    __slots__ = ("cells", "first", "stride")

    def __init__(self, dtype, gstack, gmeta, index):
        offset, cap = int(gmeta[2 * index]), int(gmeta[2 * index + 1])
        super().__init__(dtype, max(cap, 1))
        self.capacity = cap
        raw = np.asarray(getattr(gstack, "_ary", gstack)).view(np.uint8)
        self.cells = raw.view(np.dtype(self.kind if self.kind != "bool" else "bool"))
        tid, self.stride = _linear_thread()
        self.first = offset // self.cells.itemsize + tid

    def _cell(self, k):
        return self.first + k * self.stride


def _linear_thread():
    """This simulated thread's index in the launch, and the launch's number of threads."""
    import threading
    t = threading.current_thread()
    grid, block = t._manager._grid_dim, t._manager._block_dim
    g = tuple(grid) + (1,) * (3 - len(grid))
    b = tuple(block) + (1,) * (3 - len(block))
    cta = (t.blockIdx.z * g[1] + t.blockIdx.y) * g[0] + t.blockIdx.x
    inner = (t.threadIdx.z * b[1] + t.threadIdx.y) * b[0] + t.threadIdx.x
    return cta * b[0] * b[1] * b[2] + inner, g[0] * g[1] * g[2] * b[0] * b[1] * b[2]


def launch_stack(dtype, k, index, gstack, gmeta):
    """A stack sized at launch: ``k`` local entries, or (``k <= 0``) entry ``index`` of the
    launch's global stacks."""
    if k > 0:
        return SimAdStack(dtype, k)
    return SimGlobalStack(dtype, gstack, gmeta, index)


def push(st, value):
    """Push ``value``; on a full stack store nothing and set the overflow flag."""
    if len(st.items) >= st.capacity:
        st.flag = True
        return
    if st.kind.startswith("int") and isinstance(value, (float, np.floating)):
        raise TypeError("cannot push a float onto an %s adstack" % st.kind)
    value = st._cast(value)
    if isinstance(st, SimGlobalStack):
        st.cells[st._cell(len(st.items))] = value     # written where the device writes it
    st.items.append(value)


def _zero(st):
    return st._cast(0)


def pop(st):
    """Remove and return the top element; on an empty stack return 0 and set the flag."""
    if not st.items:
        st.flag = True
        return _zero(st)
    value = st.items.pop()
    if isinstance(st, SimGlobalStack):
        value = st.cells[st._cell(len(st.items))]     # read back from where it was written
    return value


def top(st):
    """The top element; on an empty stack return 0 and set the flag."""
    if not st.items:
        st.flag = True
        return _zero(st)
    if isinstance(st, SimGlobalStack):
        return st.cells[st._cell(len(st.items) - 1)]
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
