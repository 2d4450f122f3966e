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


#: Check every backward as ``boundscheck=True`` does (emit/checked.py): no adjoint read
#: before it is written, and every in-place accumulation between arrays of shapes that
#: broadcast (Numba's in-place operators do not check, and read past a smaller operand).
CHECKED_BACKWARDS = os.environ.get("NUMBA_ADSTACK_CHECKED", "0") not in ("", "0")


def checked_backwards():
    """Are backwards compiled now on this thread checked (NUMBA_ADSTACK_CHECKED=1, or
    inside :func:`checking`)?"""
    stack = getattr(_override, "checked", None)
    return stack[-1] if stack else CHECKED_BACKWARDS


@contextlib.contextmanager
def checking(on=True):
    """Compile checked backwards inside the ``with`` block (this thread), as
    NUMBA_ADSTACK_CHECKED=1 does for the whole process."""
    stack = getattr(_override, "checked", None)
    if stack is None:
        stack = _override.checked = []
    stack.append(bool(on))
    try:
        yield
    finally:
        stack.pop()


#: Fraction of the memory the process may still take, when a backward is compiled, that
#: the history of a loop may take before it is checkpointed (``grad_jit(memory_budget=...)``
#: overrides it).
MEMORY_BUDGET_FRACTION = float(os.environ.get("NUMBA_ADSTACK_MEMORY_FRACTION", 0.5))

#: The most history a loop keeps by default before it is checkpointed, however much memory
#: there is: past it, recomputing segments costs less time than page faults and cache misses
#: on a larger history (measured in docs/grad_jit.md, "Choosing the budget").
MEMORY_BUDGET_CAP = int(os.environ.get("NUMBA_ADSTACK_MEMORY_CAP", 1 << 30))

# Where the limits are read; memory_sources() points them elsewhere (tests simulate a
# cgroup or an address-space limit with files and functions of their own).
_sources = {"proc": "/proc", "cgroup": "/sys/fs/cgroup", "getrlimit": None}
_UNLIMITED = 1 << 60


@contextlib.contextmanager
def memory_sources(proc=None, cgroup=None, getrlimit=None):
    """Read the memory limits from other places inside the ``with`` block: ``proc``, a
    folder standing for ``/proc`` (``meminfo``, ``self/status``, ``self/cgroup``);
    ``cgroup``, one standing for ``/sys/fs/cgroup``; ``getrlimit``, a function standing
    for ``resource.getrlimit``."""
    saved = dict(_sources)
    for key, value in (("proc", proc), ("cgroup", cgroup), ("getrlimit", getrlimit)):
        if value is not None:
            _sources[key] = value
    try:
        yield
    finally:
        _sources.clear()
        _sources.update(saved)


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _kib_field(text, name):
    """``name:  123 kB`` of /proc/meminfo or /proc/self/status, in bytes."""
    for line in (text or "").splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1]) * 1024
    return None


def _meminfo_available():
    got = _kib_field(_read(os.path.join(_sources["proc"], "meminfo")), "MemAvailable")
    if got is not None:
        return got
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _rlimit_room():
    """``{name: bytes}`` left under ``RLIMIT_AS`` (against VmSize) and ``RLIMIT_DATA``
    (against VmData), for those that are set."""
    try:
        import resource
    except ImportError:             # not on this platform
        return {}
    getrlimit = _sources["getrlimit"] or resource.getrlimit
    status = _read(os.path.join(_sources["proc"], "self", "status"))
    out = {}
    for name, field in (("RLIMIT_AS", "VmSize"), ("RLIMIT_DATA", "VmData")):
        try:
            soft = getrlimit(getattr(resource, name))[0]
        except (AttributeError, ValueError, OSError):
            continue
        if soft == resource.RLIM_INFINITY or soft < 0 or soft >= _UNLIMITED:
            continue
        used = _kib_field(status, field) or 0
        out[name] = max(soft - used, 0)
    return out


def _cgroup_room():
    """``{name: bytes}`` left under the memory limit of this process's cgroup and of the
    cgroups above it (v2 ``memory.max``, v1 ``memory.limit_in_bytes``), counting the
    usage less the inactive page cache (which the kernel reclaims before failing)."""
    text = _read(os.path.join(_sources["proc"], "self", "cgroup")) or ""
    root = _sources["cgroup"]
    best = None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            base, files = root, ("memory.max", "memory.current", "inactive_file")
        elif "memory" in parts[1].split(","):
            base = os.path.join(root, "memory")
            files = ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")
        else:
            continue
        # From the process's cgroup up to the root of the mount (inside a container's
        # namespace the path may not exist below it: the root then stands for it).
        rel = parts[2].strip().strip("/")
        seen = set()
        while True:
            folder = os.path.join(base, rel) if rel else base
            if folder not in seen:
                seen.add(folder)
                room = _cgroup_level(folder, *files)
                if room is not None and (best is None or room < best[1]):
                    best = (os.path.join(folder, files[0]), room)
            if not rel:
                break
            rel = os.path.dirname(rel)
    return {} if best is None else {"cgroup %s" % best[0]: best[1]}


def _cgroup_level(folder, max_file, current_file, inactive_name):
    limit = (_read(os.path.join(folder, max_file)) or "").strip()
    if not limit or limit == "max":
        return None
    try:
        limit = int(limit)
        current = int((_read(os.path.join(folder, current_file)) or "0").strip())
    except ValueError:
        return None
    if limit >= _UNLIMITED:
        return None
    inactive = 0
    for line in (_read(os.path.join(folder, "memory.stat")) or "").splitlines():
        key, _, value = line.partition(" ")
        if key == inactive_name:
            inactive = int(value)
    return max(limit - max(current - inactive, 0), 0)


def memory_limits():
    """The memory this process may still take, in bytes, by what limits it:
    ``"MemAvailable"`` (the machine's available memory), ``"RLIMIT_AS"`` and
    ``"RLIMIT_DATA"`` (less VmSize and VmData), and the cgroup's limit less its usage,
    named by its file. Sources that set no limit are left out."""
    out = {}
    avail = _meminfo_available()
    if avail is not None:
        out["MemAvailable"] = avail
    out.update(_rlimit_room())
    out.update(_cgroup_room())
    return out


def available_memory():
    """Bytes of memory this process may still take: the least of :func:`memory_limits`."""
    limits = memory_limits()
    return min(limits.values()) if limits else 8 << 30


def default_memory_budget():
    """The memory budget of a loop's history, in bytes, when none is given: a fraction of
    :func:`available_memory`, at most :data:`MEMORY_BUDGET_CAP`."""
    return min(int(available_memory() * MEMORY_BUDGET_FRACTION), MEMORY_BUDGET_CAP)


# NUMBA_ADSTACK_VERBOSE=1: the phases of each gradient compile and their times, on stderr
# (the logger "numba_adstack" at INFO; configure it with logging as any other).
if os.environ.get("NUMBA_ADSTACK_VERBOSE", "0") not in ("", "0"):
    import logging as _logging
    _log = _logging.getLogger("numba_adstack")
    _log.setLevel(_logging.INFO)
    if not _log.handlers:
        _handler = _logging.StreamHandler()
        _handler.setFormatter(_logging.Formatter("numba_adstack: %(message)s"))
        _log.addHandler(_handler)
