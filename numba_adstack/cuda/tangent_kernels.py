"""Forward mode of ``numba.cuda`` kernels: a tangent kernel from the same rewrite.

Reads a :class:`numba_adstack.cuda.GradKernel` and its arguments; produces the tangent
kernel: the kernel itself with each statement's tangent beside it (the forward-mode
rewrite, :mod:`numba_adstack.ad.tangent.jvp_source`), which
takes one tangent array per float array argument after the kernel's own arguments. The
tangents of the arrays the kernel reads are its inputs, those of the arrays it writes are
written by the launch; an atomic add into an array adds the tangent atomically into the
array's tangent. Unlike the backward, the tangent kernel runs the kernel's own
computation again, stores included: it is one launch, no stacks.
"""
from numba.core import types

from ..ad.capture.pipeline import typed_ir
from ..ad.tangent.jvp_source import build_jvp
from .kernels import argument_type, compile_kernel_source
from .standins import simulator_device_function, with_standin_globals
from .target import CudaTarget


class KernelForward(CudaTarget):
    """A kernel's target, for the tangent kernel: it redoes the stores and the atomic
    adds of the kernel (the rule of an atomic add is in
    :mod:`numba_adstack.ad.tangent.tangents`)."""

    def replays_store(self, facts, stmt):
        return True

    def atomic_update(self, facts, stmt):
        return None


class TangentKernel:
    """The compiled tangent kernel of one argument type signature."""

    def __init__(self, kernel, argtypes):
        typed = typed_ir(kernel.py_func, argtypes, prepare=with_standin_globals,
                         callee_of=simulator_device_function)
        self.positions = [k for k, t in enumerate(argtypes)
                          if isinstance(t, types.Array) and isinstance(t.dtype, types.Float)]
        gen = build_jvp(typed, kernel.py_func, frozenset(self.positions), KernelForward())
        self.source = gen.source
        self.dispatcher = compile_kernel_source(gen.source, gen.fname, namespace=gen.globals,
                                                **kernel.jit_options)
        self.name = kernel.__name__
        self.nargs = kernel.nargs

    def launch(self, config, args):
        if len(args) != self.nargs + len(self.positions):
            raise TypeError("%s.jvp takes the kernel's %d argument(s) and then one tangent "
                            "per float array argument (%d), got %d argument(s) in all"
                            % (self.name, self.nargs, len(self.positions), len(args)))
        tangents = args[self.nargs:]
        for k, t in zip(self.positions, tangents):
            a = args[k]
            if getattr(t, "shape", None) != a.shape or getattr(t, "dtype", None) != a.dtype:
                raise ValueError("%s.jvp: the tangent of argument %d must have the shape %s "
                                 "and dtype %s of the argument"
                                 % (self.name, k, a.shape, a.dtype))
        self.dispatcher[config](*args)


class TangentLauncher:
    """``k.jvp[grid, block](*args, *tangents)``."""

    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, config):
        kernel = self.kernel
        if not isinstance(config, tuple):
            config = (config,)

        def launch(*args):
            key = tuple(argument_type(a) for a in args[:kernel.nargs])
            cache = kernel.__dict__.setdefault("_tangent_kernels", {})
            tk = cache.get(key)
            if tk is None:
                with kernel._lock:
                    tk = cache.get(key)
                    if tk is None:
                        tk = cache[key] = TangentKernel(kernel, key)
            tk.launch(config, args)
        return launch
