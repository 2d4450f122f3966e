"""The public adstack intrinsics.

``adstack``, ``push``, ``pop``, ``top``, ``size``, ``overflowed``, ``clear`` and ``reserve``
are plain Python functions: called from compiled code they are typed by
:mod:`numba_adstack.typing` and lowered per target (:mod:`numba_adstack.lowering` for the CPU); called from the
interpreter (or the CUDA simulator) they run the pure-Python implementation below, with
the same semantics as the compiled one.
"""
import numpy as np

from .errors import AdStackOverflowError, AdStackUnderflowError

#: Storage kinds accepted by ``adstack``.
STORAGES = ("frame", "heap")

_ELEMENT_NAMES = ("float32", "float64", "int32", "int64", "bool")


def _element_name(dtype):
    """Normalise a NumPy class, NumPy dtype or Numba type to one of ``_ELEMENT_NAMES``."""
    name = getattr(dtype, "name", None)
    if name is None:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = str(dtype)
    name = {"boolean": "bool", "bool_": "bool"}.get(str(name), str(name))
    if name not in _ELEMENT_NAMES:
        raise TypeError("adstack element type must be one of %s, got %r"
                        % (", ".join(_ELEMENT_NAMES), dtype))
    return name


class PyAdStack:
    """Interpreter implementation of an adstack (also used by the CUDA simulator)."""

    __slots__ = ("kind", "capacity", "storage", "items", "_cast")

    def __init__(self, dtype, capacity, storage="frame"):
        self.kind = _element_name(dtype)
        if not isinstance(capacity, (int, np.integer)) or capacity < 1:
            raise ValueError("adstack capacity must be a positive integer, got %r"
                             % (capacity,))
        if storage not in STORAGES:
            raise ValueError("adstack storage must be 'frame' or 'heap', got %r"
                             % (storage,))
        self.capacity = int(capacity)
        self.storage = storage
        self.items = []
        self._cast = bool if self.kind == "bool" else getattr(np, self.kind)

    def __repr__(self):
        return "PyAdStack(%s, %d, %r, size=%d)" % (self.kind, self.capacity,
                                                    self.storage, len(self.items))


def adstack(dtype, capacity, storage="frame"):
    """A new empty stack of ``capacity`` elements of ``dtype``.

    ``dtype``: float32, float64, int32, int64 or bool (NumPy class or Numba type);
    ``capacity``: a positive compile-time constant; ``storage``: ``"frame"`` (fixed size,
    in the function's stack frame) or ``"heap"`` (growable, NRT-managed).
    """
    return PyAdStack(dtype, capacity, storage)


def push(st, value):
    """Push ``value`` (cast to the element type). Raises AdStackOverflowError when a
    frame stack is full; heap stacks grow."""
    if st.storage == "frame" and len(st.items) >= st.capacity:
        raise AdStackOverflowError(
            "adstack overflow: push past capacity %d (%s); pass ad_stack_size=N with a "
            "larger N, or use storage=\"heap\"" % (st.capacity, st.kind))
    if st.kind.startswith("int") and isinstance(value, (float, np.floating)):
        raise TypeError("cannot push a float onto an %s adstack" % st.kind)
    st.items.append(st._cast(value))


def pop(st):
    """Remove and return the top element. Raises AdStackUnderflowError when empty."""
    if not st.items:
        raise AdStackUnderflowError("adstack underflow: pop on an empty adstack")
    return st.items.pop()


def top(st):
    """Return the top element without removing it. Raises AdStackUnderflowError when empty."""
    if not st.items:
        raise AdStackUnderflowError("adstack underflow: top on an empty adstack")
    return st.items[-1]


def size(st):
    """Number of elements on the stack (int64)."""
    return len(st.items)


def clear(st):
    """Empty the stack (its overflow flag, where the target keeps one, stays)."""
    del st.items[:]


def reserve(st, n):
    """Make room for ``n`` more pushes: a heap stack grows once now rather than while they
    run; a frame stack keeps its capacity (a push past it still raises). Returns None."""
    return None


def launch_stack(dtype, k, index, gstack, gmeta):
    """A stack sized at launch (CUDA ``grad_jit``): ``k > 0`` elements of this thread's own,
    else entry ``index`` of the launch's global-memory stacks. In the interpreter, a stack
    of capacity ``k`` (or of the capacity ``gmeta`` gives)."""
    cap = k if k > 0 else int(gmeta[2 * index + 1])
    return PyAdStack(dtype, max(cap, 1))


def overflowed(st):
    """True if a push was dropped for lack of room. Always False on the CPU, where an
    overflow raises instead; targets that cannot raise keep a sticky flag."""
    return False
