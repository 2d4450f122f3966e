"""Gradients of CUDA device functions, called per thread from inside kernels.

``d = numba_adstack.cuda.grad_jit(device=True)(fn)`` is the ``numba.cuda.jit(device=True)``
function of ``fn``: kernels call ``d(...)`` as before, and ``d.grad(...)`` for the
gradient of its (float scalar) result with respect to its float scalar arguments, a tuple
with one entry per argument (a float for a float scalar, None otherwise), as
``f.grad`` on the CPU; ``d.value_and_grad(...)`` gives ``(value, gradients)``. Array
arguments are read, not differentiated.

The backward is the CPU rewrite's, for :class:`DeviceFunctionTarget`: a device function of
the arguments and the seed that returns ``(value, gradients)``, allocates no arrays, and
keeps its stacks in per-thread local memory with fixed capacities (a loop's constant trip
count, else ``ad_stack_size``). A thread cannot raise: when a stack overflowed, the value
and every float gradient are NaN.

Inside a kernel, ``d.grad`` is typed in numba-cuda's own typing context by
:class:`DeviceGradientAttribute` as ``types.Dispatcher(m)``, where ``m`` is one device
function per gradient that calls ``_device_grad_call``; its ``@overload`` (numba-cuda's)
builds the backward of the argument types at the call site and returns an implementation
that calls it with the seed 1.0 and returns the gradients. In the simulator, ``d.grad`` is
a Python function that does the same per call.
"""
import threading

from numba import cuda
from numba.core import types
from numba.core.target_extension import target_override

from .. import config
from ..ad.generated_source import exec_source
from ..ad.generated_source.code import expr, stmt
from ..ad.capture.pipeline import typed_ir
from ..ad.typeinfo import is_float
from ..ad.dispatch.rewrite import Options, build_backward
from ..errors import NonDifferentiableError
from .kernels import SIMULATOR, argument_type, compile_kernel_source
from .standins import simulator_device_function, with_standin_globals
from .target import CudaTarget

_lock = threading.RLock()


class DeviceFunctionTarget(CudaTarget):
    """A device function's backward: returns ``(value, gradients)`` like the CPU's, with
    frame stacks in local memory and no arrays allocated; an overflow makes the results
    NaN."""

    returns_value = True

    def needs_atomic(self, facts, expr):
        return False        # array arguments are not differentiated: no adjoint arrays

    def replays_store(self, facts, stmt):
        return True

    def seeds_store(self, facts, stmt):
        return False

    def backward_params(self, facts, names):
        return ["_ret_b"]

    def backward_prologue(self, facts, names, assigned=()):
        return [stmt("_retval = 0.0")]

    def backward_epilogue(self, facts, activity, names, stacks, wrt):
        out = [stmt("_nan_if_overflowed = 0.0")]
        for st in stacks:
            out.append(stmt("if overflowed({}):\n    _nan_if_overflowed = math.nan", st))
        grads = []
        for k, a in enumerate(facts.arg_vars):
            if (wrt is None or k in wrt) and is_float(facts.ty(a)):
                # ``+ 0.0`` (here the NaN flag) also turns -0.0 into 0.0, as on the CPU.
                grads.append(expr("{} + _nan_if_overflowed",
                                  names.bar(a) if a in activity.useful else 0.0))
            else:
                grads.append(None)
        return out + [stmt("return _retval + _nan_if_overflowed, {}", tuple(grads))]

    def return_statement(self, value):
        return stmt("_retval = {}", value)


class DeviceBackward:
    """The backward device function of one argument type signature."""

    def __init__(self, gradient, argtypes):
        py_func = gradient.py_func
        self.qualname = py_func.__qualname__
        for t in argtypes:
            if isinstance(t, (types.BaseTuple, types.Dispatcher)):
                raise NonDifferentiableError(
                    "%s.grad in a kernel takes scalars and arrays; argument of type %s: pass "
                    "the items of a tuple as arguments of their own" % (self.qualname, t))
        # Built while a kernel that calls d.grad is being typed: the rewrite types the
        # function with Numba's CPU pipeline, which must not run as the CUDA target (the
        # CPU's lazily registered templates, such as Array._allocate behind np.empty,
        # would be registered for CUDA and missing from later CPU compiles).
        with target_override("cpu"):
            typed = typed_ir(py_func, argtypes, prepare=with_standin_globals,
                             callee_of=simulator_device_function)
            wrt = frozenset(k for k, t in enumerate(argtypes) if isinstance(t, types.Float))
            size = gradient.ad_stack_size or config.DEFAULT_AD_STACK_SIZE
            rw = build_backward(typed, py_func, Options(size, "frame", wrt=wrt),
                                DeviceFunctionTarget())
        written = [a for a in rw.facts.arg_vars if a in rw.facts.written_roots]
        if written:
            rw.facts.error("the gradient of device function %s cannot be taken: it writes "
                           "into its argument %s; write into a cuda.local.array, or take "
                           "the gradient of a function that returns the value"
                           % (self.qualname, written[0]))
        self.argtypes, self.source, self.fname = argtypes, rw.source, rw.fname
        self.dispatcher = compile_kernel_source(rw.source, rw.fname, namespace=rw.globals,
                                                device=True)


class DeviceGradient:
    """What ``grad_jit(device=True)`` adds to a device function: its backwards by
    argument types, and the device function ``d.grad`` is inside kernels."""

    def __init__(self, py_func, ad_stack_size=None):
        self.py_func = py_func
        self.ad_stack_size = None if ad_stack_size is None else int(ad_stack_size)
        self._backwards = {}
        self._methods = {}

    def backward_for_types(self, argtypes):
        argtypes = tuple(types.unliteral(t) for t in argtypes)
        with _lock:
            bw = self._backwards.get(argtypes)
            if bw is None:
                bw = self._backwards[argtypes] = DeviceBackward(self, argtypes)
        return bw

    def inspect_adjoint(self, argtypes):
        """Source of the backward generated for these Numba argument types."""
        return self.backward_for_types(tuple(argtypes)).source

    def method(self, device_function, kind):
        """The device function that ``d.grad`` (or ``d.value_and_grad``) is inside
        kernels: the function's own parameters, passed on as one tuple to the call of
        ``kind``."""
        with _lock:
            m = self._methods.get(kind)
            if m is None:
                code = self.py_func.__code__
                names = list(code.co_varnames[:code.co_argcount])
                source = "def %s(%s):\n    return _nad_call(_nad_f, (%s))\n" % (
                    kind, ", ".join(names), "".join(n + ", " for n in names))
                fn = exec_source(kind, source, {"_nad_call": _CALLS[kind],
                                                "_nad_f": device_function},
                                 "%s.%s" % (self.py_func.__qualname__, kind))
                fn.__defaults__ = self.py_func.__defaults__
                m = self._methods[kind] = cuda.jit(device=True)(fn)
        return m

    def simulate(self, args, with_value=False):
        """``d.grad(*args)`` in the CUDA simulator: the backward of the values' types."""
        bw = self.backward_for_types(tuple(argument_type(a) for a in args))
        out = bw.dispatcher(*args, 1.0)
        return out if with_value else out[1]


def _host_call(name):
    def call(*args, **kwargs):
        raise TypeError("%s is the gradient of a CUDA device function: call it inside a "
                        "kernel (numba.cuda.jit), once per thread" % name)
    return call


def device_function(py_func, ad_stack_size=None, **jit_options):
    """``numba.cuda.jit(device=True)(py_func)`` with ``.grad`` (see the module)."""
    disp = cuda.jit(device=True, **jit_options)(py_func)
    gradient = DeviceGradient(py_func, ad_stack_size)
    disp._numba_adstack_gradient = gradient
    name = py_func.__qualname__
    if SIMULATOR:
        disp.grad = lambda *args: gradient.simulate(args)
        disp.value_and_grad = lambda *args: gradient.simulate(args, with_value=True)
    else:
        disp.grad = _host_call(name + ".grad")
        disp.value_and_grad = _host_call(name + ".value_and_grad")
    disp.inspect_adjoint = gradient.inspect_adjoint
    return disp


def _device_grad_call(f, args):
    raise NotImplementedError("only called from CUDA kernels")


def _device_value_and_grad_call(f, args):
    raise NotImplementedError("only called from CUDA kernels")


_CALLS = {"grad": _device_grad_call, "value_and_grad": _device_value_and_grad_call}


def _call_impl(f, args, with_value):
    """The implementation of a call of ``d.grad`` (``d.value_and_grad``) for the argument
    types at a call site: the backward of those types, called with the seed 1.0."""
    gradient = getattr(getattr(f, "dispatcher", None), "_numba_adstack_gradient", None)
    if gradient is None or not isinstance(args, types.BaseTuple):
        return None
    bw = gradient.backward_for_types(tuple(args))
    reads = ", ".join(["args[%d]" % k for k in range(len(args))] + ["1.0"])
    kind = "value_and_grad" if with_value else "grad"
    source = "def %s(f, args):\n    return _bw(%s)%s\n" % (kind, reads,
                                                          "" if with_value else "[1]")
    return exec_source(kind, source, {"_bw": bw.dispatcher},
                       "cuda %s.%s" % (gradient.py_func.__qualname__, kind))


def _resolve(ty, attr):
    gradient = getattr(ty.dispatcher, "_numba_adstack_gradient", None)
    if attr in _CALLS and gradient is not None:
        return types.Dispatcher(gradient.method(ty.dispatcher, attr))
    return None


if not SIMULATOR:
    # numba-cuda's own registries: its typing context and its target context install
    # them, not Numba's CPU ones.
    from numba.cuda.core.imputils import impl_ret_untracked, lower_getattr
    from numba.cuda.extending import infer_getattr, overload
    from numba.cuda.typing.templates import AttributeTemplate

    overload(_device_grad_call)(lambda f, args: _call_impl(f, args, False))
    overload(_device_value_and_grad_call)(lambda f, args: _call_impl(f, args, True))

    @infer_getattr
    class DeviceGradientAttribute(AttributeTemplate):
        """``d.grad`` and ``d.value_and_grad`` of a ``grad_jit(device=True)``
        function inside a kernel."""
        key = types.Dispatcher

        def generic_resolve(self, ty, attr):
            return _resolve(ty, attr)

    def _lower_attribute(context, builder, ty, value):
        # The attribute is a Dispatcher type: its call is bound at compile time.
        return impl_ret_untracked(context, builder, ty, context.get_dummy_value())

    for _kind in _CALLS:
        lower_getattr(types.Dispatcher, _kind)(_lower_attribute)
