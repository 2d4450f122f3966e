"""``numba_adstack.cuda.grad_jit``: numba.cuda kernels with a generated backward kernel.

``k[grid, block](*args)`` launches the kernel as ``numba.cuda.jit`` would.
``k.grad[grid, block](*args, *adjoints)`` launches its backward: one adjoint per array
argument, in argument order, same shape and dtype. Adjoints of what the kernel writes are
the seeds; adjoints of what it reads are accumulated into (``+=``), with atomic adds where
several threads may read the same element.

The backward kernel comes from the same rewrite as the CPU one. The kernel is typed by
Numba's CPU pipeline with stand-ins for the ``numba.cuda`` API
(:mod:`numba_adstack.cuda.standins`), so the same typed IR is read whether a GPU, the
simulator or neither is present; the generated source names the real ``numba.cuda`` and is
compiled by ``numba.cuda.jit``.
"""
import threading

from numba import cuda
from numba.core import types

from .. import config
from ..errors import AdjointArgumentError
from ..ad.capture.pipeline import typed_ir
from ..ad.dispatch.rewrite import Options, build_backward
from .forwarding import forward_stored_elements
from .kernels import OverflowCheckedKernel, argument_type, compile_kernel_source
from .device_grad import device_function
from .launch import LaunchSizedKernel
from .sizing import LaunchSizing
from .standins import simulator_device_function, with_standin_globals
from .tangent_kernels import TangentLauncher
from .target import CudaTarget


class GradKernel:
    """A kernel launched like ``numba.cuda.jit``'s, with ``.grad`` for its backward."""

    def __init__(self, py_func, ad_stack_size=None, while_cap=None, **jit_options):
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        # None: stacks sized at each launch; an int: fixed per-thread capacity.
        self.ad_stack_size = None if ad_stack_size is None else int(ad_stack_size)
        self.while_cap = int(while_cap or config.DEFAULT_WHILE_CAP)
        self.jit_options = jit_options
        self.kernel = cuda.jit(**jit_options)(py_func)
        self.nargs = py_func.__code__.co_argcount
        self._backwards = {}
        self._lock = threading.Lock()

    def __getitem__(self, launch_config):
        return self.kernel[launch_config]

    def __call__(self, *args, **kwargs):
        raise TypeError("%s is a kernel: launch it as %s[grid, block](...)"
                        % (self.__name__, self.__name__))

    @property
    def grad(self):
        """``k.grad[grid, block](*args, *adjoints)`` runs the backward kernel."""
        return _GradLauncher(self)

    @property
    def jvp(self):
        """``k.jvp[grid, block](*args, *tangents)`` runs the tangent kernel (forward mode,
        :mod:`.tangent_kernels`): one tangent per float array argument, those of the arrays
        the kernel writes filled by the launch."""
        return TangentLauncher(self)

    def backward(self, args):
        key = tuple(argument_type(a) for a in args)
        bw = self._backwards.get(key)
        if bw is None:
            with self._lock:
                bw = self._backwards.get(key)
                if bw is None:
                    bw = self._build(key)
                    self._backwards[key] = bw
        return bw

    def _build(self, argtypes):
        typed = forward_stored_elements(typed_ir(
            self.py_func, argtypes, prepare=with_standin_globals,
            callee_of=simulator_device_function))
        names = list(self.py_func.__code__.co_varnames[:self.nargs])
        positions = [i for i, t in enumerate(argtypes) if isinstance(t, types.Array)]
        kw = dict(n_args=self.nargs, arg_names=names, adjoint_positions=positions)
        if self.ad_stack_size is None:
            bw = build_backward(typed, self.py_func, Options(), CudaTarget(True))
            sizing = LaunchSizing(bw.facts, bw.plan, self.while_cap)
            if sizing:
                launcher = LaunchSizedKernel(bw.source, bw.fname, bw.globals,
                                             self.jit_options, sizing, self.__name__, **kw)
                launcher.source = bw.source
                return launcher
            # no stack: the plain kernel, without the launch's stack buffers
            options = Options()
        else:
            options = Options(self.ad_stack_size, "frame")
        bw = build_backward(typed, self.py_func, options, CudaTarget())
        dispatcher = compile_kernel_source(bw.source, bw.fname, namespace=bw.globals,
                                           **self.jit_options)
        launcher = OverflowCheckedKernel(dispatcher, self.__name__, self.ad_stack_size, **kw)
        launcher.source = bw.source
        return launcher

    def inspect_adjoint(self, *args):
        """Source of the backward kernel generated for these arguments."""
        return self.backward(args[:self.nargs]).source


class _GradLauncher:
    def __init__(self, owner):
        self.owner = owner

    def __getitem__(self, launch_config):
        owner = self.owner
        if not isinstance(launch_config, tuple):
            launch_config = (launch_config,)

        def launch(*args):
            if len(args) < owner.nargs:
                raise AdjointArgumentError(
                    "%s.grad takes the kernel's %d argument(s) and then one adjoint per array "
                    "argument, got %d argument(s) in all" % (owner.__name__, owner.nargs,
                                                           len(args)))
            bw = owner.backward(args[:owner.nargs])
            return bw.launch(launch_config, args)
        return launch


def grad_jit(fn=None, *, ad_stack_size=None, while_cap=None, device=False, **jit_options):
    """Decorator like ``numba.cuda.jit`` for kernels, adding ``k.grad[grid, block]``.

    By default each launch of the backward sizes its stacks from the trip counts it can
    compute from the kernel's arguments (``range(n)``, ``range(x.shape[0])``): in local
    memory when they fit ``numba_adstack.config.CUDA_LOCAL_BUDGET_BYTES`` per thread, else
    in a global-memory buffer allocated for the launch.

    while_cap: iterations given to a ``while`` loop, or to a loop whose length depends on
    the thread or on data (default ``numba_adstack.config.DEFAULT_WHILE_CAP``); past it
    the launch raises ``AdStackOverflowError``.
    ad_stack_size: advanced, a fixed per-thread capacity for the stacks of every loop of
    run-time length, in local memory (loops with constant trip counts get exactly what
    they need); past it the launch raises ``AdStackOverflowError``.
    device: ``device=True`` makes a device function whose gradient kernels call per
    thread, ``d.grad(*args)`` (numba_adstack/cuda/device_grad.py); its stacks have fixed
    capacities (``ad_stack_size``, default ``numba_adstack.config.DEFAULT_AD_STACK_SIZE``,
    for loops of run-time length).
    Other keyword arguments go to ``numba.cuda.jit`` for both kernels.
    """
    def wrap(f):
        if hasattr(f, "py_func"):
            f = f.py_func
        if device:
            return device_function(f, ad_stack_size=ad_stack_size, **jit_options)
        return GradKernel(f, ad_stack_size=ad_stack_size, while_cap=while_cap,
                          **jit_options)
    if fn is None:
        return wrap
    return wrap(fn)
