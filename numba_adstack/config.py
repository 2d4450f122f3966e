"""Settings, read once from the environment and changeable at run time."""
import os

#: Bytes of adstack storage one compiled CPU function may keep in its frame.
FRAME_BUDGET_BYTES = int(os.environ.get("NUMBA_ADSTACK_FRAME_BUDGET", 256 * 1024))

#: Capacity of stacks whose loop trip count is only known at run time, in the explicit
#: fixed-capacity modes (``storage="frame"`` without ``ad_stack_size``); by default stacks
#: size themselves.
DEFAULT_AD_STACK_SIZE = int(os.environ.get("NUMBA_ADSTACK_SIZE", 1024))

#: CUDA kernels sized at launch: bytes of stacks per thread kept in local memory; past it
#: the launch's stacks go in a global-memory buffer.
CUDA_LOCAL_BUDGET_BYTES = int(os.environ.get("NUMBA_ADSTACK_CUDA_LOCAL_BUDGET", 8192))

#: CUDA kernels sized at launch: iterations a ``while`` loop (or a loop whose length
#: depends on the thread) is given; past it the launch reports an overflow.
DEFAULT_WHILE_CAP = int(os.environ.get("NUMBA_ADSTACK_WHILE_CAP", 1024))

import contextlib
import threading

_override = threading.local()


def get_frame_budget():
    """The frame budget in bytes for a compilation starting now on this thread."""
    stack = getattr(_override, "stack", None)
    return stack[-1] if stack else FRAME_BUDGET_BYTES


@contextlib.contextmanager
def frame_budget(nbytes):
    """Compile with a frame budget of ``nbytes`` inside the ``with`` block (this thread).

    Only compilations that happen inside the block see it: a function already compiled
    for the same argument types keeps the code it has.
    """
    nbytes = int(nbytes)
    if nbytes < 0:
        raise ValueError("frame budget must be >= 0 bytes, got %d" % nbytes)
    stack = getattr(_override, "stack", None)
    if stack is None:
        stack = _override.stack = []
    stack.append(nbytes)
    try:
        yield nbytes
    finally:
        stack.pop()


#: Fraction of the memory available when a backward is compiled that the history of a
#: loop may take before it is checkpointed (``grad_jit(memory_budget=...)`` overrides it).
MEMORY_BUDGET_FRACTION = float(os.environ.get("NUMBA_ADSTACK_MEMORY_FRACTION", 0.5))


def available_memory():
    """Bytes of memory available now (``MemAvailable`` on Linux, else free pages)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def default_memory_budget():
    """The memory budget of a loop's history, in bytes, when none is given."""
    return int(available_memory() * MEMORY_BUDGET_FRACTION)
