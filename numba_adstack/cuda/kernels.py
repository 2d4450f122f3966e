"""Building blocks of differentiated CUDA kernels: compiling a kernel from Python source,
launching it with an overflow flag, checking adjoint arguments, reporting local memory.

A kernel that uses adstacks takes one extra, last argument: ``flag``, a global int32 array
of one element, and ends with ``if overflowed(st): flag[0] = 1`` for each of its stacks.
:class:`OverflowCheckedKernel` supplies that argument, launches, reads the flag back and
raises :class:`numba_adstack.AdStackOverflowError` naming the kernel; it resets the flag
first, so the next launch that fits is right.
"""
import math
import re
import threading

import numpy as np
from numba import config as _numba_config
from numba import cuda, typeof
from numba.core import types

from .. import intrinsics
from ..ad.generated_source import exec_source
from ..errors import AdjointArgumentError, AdStackOverflowError
from . import simulator

#: True when numba.cuda is the CUDA simulator (NUMBA_ENABLE_CUDASIM=1).
SIMULATOR = bool(_numba_config.ENABLE_CUDASIM)

_INTRINSIC_NAMES = ("adstack", "push", "pop", "top", "size", "overflowed", "clear",
                    "reserve", "launch_stack")


def intrinsic_functions():
    """The adstack intrinsics for kernels of the current numba.cuda target, by name.

    On a real target they are the functions of :mod:`numba_adstack.intrinsics` (typed and
    lowered for CUDA); in the simulator, those of :mod:`numba_adstack.cuda.simulator`, which
    keep the CUDA overflow flag instead of raising.
    """
    impl = simulator if SIMULATOR else intrinsics
    return {name: getattr(impl, name) for name in _INTRINSIC_NAMES}


def kernel_namespace():
    """Globals for kernel source text: the intrinsics, ``cuda``, ``math`` and ``np``."""
    ns = {"cuda": cuda, "math": math, "np": np}
    ns.update(intrinsic_functions())
    return ns


def argument_type(a):
    """Numba type of a kernel argument (host, device or simulator array, or scalar)."""
    try:
        t = typeof(a)
        if isinstance(t, types.Array):
            return types.Array(t.dtype, t.ndim, "A" if t.layout == "A" else t.layout)
        return t
    except Exception:
        meta = array_meta(a)
        if meta is None:
            raise
        from numba.np.numpy_support import from_dtype
        return types.Array(from_dtype(meta[1]), len(meta[0]), "A")


def compile_kernel_source(source, name, namespace=None, *, device=False, **jit_options):
    """Compile the function ``name`` defined in Python ``source`` with ``numba.cuda.jit``.

    ``source`` runs with :func:`kernel_namespace` updated with ``namespace``. The text is
    registered with :mod:`linecache` under a unique file name, so Numba's error messages,
    tracebacks and the simulator show the generated lines. Returns the CUDA dispatcher
    (the Python function is its ``py_func``).
    """
    ns = kernel_namespace()
    if namespace:
        ns.update(namespace)
    try:
        fn = exec_source(name, source, ns, "cuda " + name)
    except KeyError:
        raise ValueError("the kernel source defines no function named %r" % (name,)) from None
    return cuda.jit(device=device, **jit_options)(fn)


# ---------------------------------------------------------------- arrays and adjoints

def array_meta(obj):
    """``(shape, dtype)`` of a host or device array, or None for anything else (scalars)."""
    if isinstance(obj, np.ndarray):
        return obj.shape, obj.dtype
    if isinstance(obj, np.generic):
        return None
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return tuple(cai["shape"]), np.dtype(cai["typestr"])
    shape, dtype = getattr(obj, "shape", None), getattr(obj, "dtype", None)
    if shape is not None and isinstance(dtype, np.dtype):  # device arrays, simulator arrays
        return tuple(shape), dtype
    return None


def _describe(obj):
    meta = array_meta(obj)
    if meta is None:
        return type(obj).__name__
    return "array of shape %s and dtype %s" % (meta[0], meta[1])


def check_adjoint_args(kernel_name, args, adjoints, arg_names=None, adjoint_positions=None):
    """Check ``adjoints`` against the array arguments of ``args`` before a backward launch.

    One adjoint per array argument (or per argument at ``adjoint_positions``, when given),
    in argument order, with the same shape and dtype. Raises
    :class:`numba_adstack.AdjointArgumentError` naming the kernel and the argument.
    """
    if arg_names is None:
        arg_names = ["argument %d" % i for i in range(len(args))]
    if adjoint_positions is None:
        arrays = [(name, a) for name, a in zip(arg_names, args) if array_meta(a) is not None]
    else:
        arrays = [(arg_names[i], args[i]) for i in adjoint_positions]
    names = [name for name, _ in arrays]
    if len(adjoints) != len(arrays):
        raise AdjointArgumentError(
            "%s.grad takes one adjoint array per array argument, in argument order (%s): "
            "expected %d adjoint(s), got %d. Call it as %s.grad[grid, block](*args, %s)."
            % (kernel_name, ", ".join(names) or "none", len(arrays), len(adjoints),
               kernel_name, ", ".join(n + "_bar" for n in names)))
    for (name, arr), adj in zip(arrays, adjoints):
        shape, dtype = array_meta(arr)
        ameta = array_meta(adj)
        if ameta is None:
            raise AdjointArgumentError(
                "%s.grad: the adjoint of %s must be an array of shape %s and dtype %s, got %s"
                % (kernel_name, name, shape, dtype, _describe(adj)))
        if ameta != (shape, dtype):
            raise AdjointArgumentError(
                "%s.grad: the adjoint of %s must have the shape and dtype of %s (%s, %s), "
                "got %s" % (kernel_name, name, name, shape, dtype, _describe(adj)))


# ---------------------------------------------------------------- launching

def overflow_message(kernel_name, ad_stack_size):
    size = "" if ad_stack_size is None else " (ad_stack_size=%d)" % ad_stack_size
    hint = ("pass a larger ad_stack_size=N" if ad_stack_size is None else
            "pass ad_stack_size=N with N > %d" % ad_stack_size)
    return ("adstack overflow in CUDA kernel '%s'%s: a thread pushed past the capacity of "
            "one of its adstacks (or read an empty one), so the results of this launch are "
            "wrong, and adjoint arrays accumulated into may hold partial sums. %s and "
            "launch again with fresh adjoints." % (kernel_name, size, hint))


class _Configured:
    """``kernel[config]``: call it with the kernel's arguments."""

    def __init__(self, kernel, config):
        self._kernel, self._config = kernel, config

    def __call__(self, *args):
        return self._kernel.launch(self._config, args)


class OverflowCheckedKernel:
    """Launch ``dispatcher`` as ``k[grid, block](*args)`` with the overflow flag appended.

    The flag is one int32 in device memory, allocated at the first launch and kept. After
    each launch it is read back (this synchronises); when a thread raised it, it is reset
    to 0 and :class:`numba_adstack.AdStackOverflowError` names the kernel and
    ``ad_stack_size``.

    ``n_args`` (optional) splits the arguments into the kernel's own and its adjoints:
    ``k[grid, block](*args, *adjoints)`` then checks the adjoints with
    :func:`check_adjoint_args` before launching (``adjoint_positions``: the indices of the
    arguments that take an adjoint; by default every array argument).
    """

    def __init__(self, dispatcher, name=None, ad_stack_size=None, *, n_args=None,
                 arg_names=None, adjoint_positions=None):
        self.dispatcher = dispatcher
        self.name = name or getattr(getattr(dispatcher, "py_func", None), "__name__",
                                    "kernel")
        self.ad_stack_size = ad_stack_size
        self.n_args = n_args
        self.arg_names = arg_names
        self.adjoint_positions = adjoint_positions
        self._flag = None
        self._lock = threading.Lock()

    def __getitem__(self, config):
        if not isinstance(config, tuple):
            config = (config,)
        return _Configured(self, config)

    def __repr__(self):
        return "<OverflowCheckedKernel %s ad_stack_size=%s>" % (self.name, self.ad_stack_size)

    def check_args(self, args):
        """Check the adjoint arguments (when ``n_args`` is set); raise before any launch."""
        if self.n_args is None:
            return
        if len(args) < self.n_args:
            raise AdjointArgumentError(
                "%s.grad takes the kernel's %d argument(s) and then their adjoints, got "
                "%d argument(s) in all" % (self.name, self.n_args, len(args)))
        check_adjoint_args(self.name, args[:self.n_args], args[self.n_args:],
                           self.arg_names, self.adjoint_positions)

    def new_flag(self):
        """The overflow flag: one int32 0 in device memory."""
        return cuda.to_device(np.zeros(1, np.int32))

    def prepare(self, config, args):
        """The dispatcher to launch and the arguments it takes after the flag."""
        return self.dispatcher, ()

    def overflow_message(self):
        return overflow_message(self.name, self.ad_stack_size)

    def launch(self, config, args):
        self.check_args(args)
        stream = config[2] if len(config) > 2 and config[2] else 0
        with self._lock:
            if self._flag is None:
                self._flag = self.new_flag()
            dispatcher, extra = self.prepare(config, args)
            dispatcher[config](*args, self._flag, *extra)
            raised = self._flag.copy_to_host(stream=stream)
            if stream:
                stream.synchronize()
            if raised[0]:
                self._flag.copy_to_device(np.zeros(1, np.int32), stream=stream)
                if stream:
                    stream.synchronize()
                raise AdStackOverflowError(self.overflow_message())


# ---------------------------------------------------------------- local memory

def have_gpu():
    """True when a real CUDA device can be used (not the simulator)."""
    if SIMULATOR:
        return False
    try:
        return bool(cuda.is_available())
    except Exception:
        return False


def local_memory_per_thread(kernel, signature=None):
    """Local memory per thread in bytes of a compiled kernel (numba-cuda's
    ``get_local_mem_per_thread``): an int for ``signature``, or a dict by signature of the
    compiled overloads. None when there is no GPU (the figure comes from the driver)."""
    if not have_gpu():
        return None
    disp = getattr(kernel, "dispatcher", kernel)
    return disp.get_local_mem_per_thread(signature)


_DEPOT = re.compile(r"\.local\s+\.align\s+\d+\s+\.b8\s+(__local_depot\d+)\[(\d+)\]")
_FUNC = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?"
                   r"([A-Za-z_$][\w$]*)", re.M)


def ptx_local_depots(ptx):
    """``{function name: local depot bytes}`` of the PTX functions that have a depot.

    The depot is the per-thread local memory a function reserves for its allocas (the
    adstacks among them); the driver may add spills on top of it.
    """
    out = {}
    funcs = [(m.start(), m.group(1)) for m in _FUNC.finditer(ptx)]
    for m in _DEPOT.finditer(ptx):
        owner = None
        for start, fname in funcs:
            if start < m.start():
                owner = fname
        out[owner] = out.get(owner, 0) + int(m.group(2))
    return out
