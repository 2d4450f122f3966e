"""Launching a backward kernel whose stacks are sized at each launch.

The backward source declares each stack as ``launch_stack(dtype, _K<i>, i, _gstack,
_gmeta)``. Per launch, the capacities come from the kernel's arguments
(:mod:`.sizing`); then:

* when the stacks of one thread fit ``config.CUDA_LOCAL_BUDGET_BYTES`` (capacities rounded
  up to powers of two, so that a few compiled variants serve every size), they are local
  memory: ``_K<i>`` is the capacity, a constant of the compiled variant;
* otherwise ``_K<i>`` is 0 and stack ``i`` is this thread's slice of one global buffer
  allocated for the launch (threads x capacity entries per stack, entry k of thread t at
  ``k * threads + t``, so that a warp's pushes are coalesced): ``_gmeta`` gives each
  stack's byte offset and capacity. That variant is compiled once.
"""
import numpy as np
from numba import cuda

from .. import config as _config
from .kernels import OverflowCheckedKernel, compile_kernel_source
from .layout import DATA_ALIGN
from .sizing import round_up


def threads_of(launch_config):
    """Number of threads of a launch configuration ``(grid, block[, stream, shared])``."""
    total = 1
    for dims in launch_config[:2]:
        for d in (dims if isinstance(dims, tuple) else (dims,)):
            total *= int(d)
    return total


class LaunchSizedKernel(OverflowCheckedKernel):
    """``k[grid, block](*args, *adjoints)``: sizes the stacks for the launch, compiles (or
    reuses) the variant that holds them, and launches it with the overflow flag and the
    global stack buffer."""

    def __init__(self, source, fname, namespace, jit_options, sizing, name, **kw):
        self.source, self.fname = source, fname
        self.namespace, self.jit_options = dict(namespace), dict(jit_options)
        self.sizing = sizing
        self._variants = {}
        self._capped = False
        self.local = None            # whether the last launch kept its stacks local
        self.capacities = None       # the capacities of the last launch
        super().__init__(self.variant({i: 0 for i in sizing.itemsizes()}), name, None, **kw)

    def variant(self, ks):
        """The kernel compiled with ``_K<i> = ks[i]`` (0: global storage)."""
        key = tuple(sorted(ks.items()))
        disp = self._variants.get(key)
        if disp is None:
            ns = dict(self.namespace)
            ns.update({"_K%d" % i: k for i, k in ks.items()})
            disp = compile_kernel_source(self.source, self.fname, namespace=ns,
                                         **self.jit_options)
            self._variants[key] = disp
        return disp

    def plan_launch(self, args, nthreads):
        """``(ks, meta, nbytes)`` for a launch: the variant's constants, and for global
        storage each stack's ``[offset, capacity]`` and the buffer's size in bytes."""
        caps, self._capped = self.sizing.capacities(args)
        sizes = self.sizing.itemsizes()
        local = sum(_padded(round_up(c) * sizes[i]) for i, c in caps.items())
        self.capacities = caps
        meta = np.zeros(2 * (max(caps, default=-1) + 1), np.int64)
        if local <= _config.CUDA_LOCAL_BUDGET_BYTES:
            return {i: round_up(c) for i, c in caps.items()}, meta, 0
        offset = 0
        for i, c in sorted(caps.items()):
            meta[2 * i], meta[2 * i + 1] = offset, c
            offset += _padded(c * nthreads * sizes[i])
        return {i: 0 for i in caps}, meta, offset

    def prepare(self, config, args):
        ks, meta, nbytes = self.plan_launch(args[:self.n_args], threads_of(config))
        self.local = nbytes == 0
        self.dispatcher = self.variant(ks)
        gstack = cuda.device_array(max(nbytes, DATA_ALIGN), np.uint8)
        return self.dispatcher, (gstack, cuda.to_device(meta))

    def overflow_message(self):
        if not self._capped:
            return super().overflow_message()
        cap = self.sizing.while_cap
        return ("adstack overflow in CUDA kernel '%s': a thread ran a while loop (or a loop "
                "whose length depends on the thread or on data) past while_cap=%d "
                "iterations, so the results of this launch are wrong, and adjoint arrays "
                "accumulated into may hold partial sums. Pass grad_jit(while_cap=N) with N "
                "above the longest such loop and launch again with fresh adjoints."
                % (self.name, cap))


def _padded(nbytes):
    return (nbytes + DATA_ALIGN - 1) // DATA_ALIGN * DATA_ALIGN
