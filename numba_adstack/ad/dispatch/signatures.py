"""``f.grad(*args)`` from Python: the backward of the arguments' types found by Numba's C
dispatch.

Each :class:`~.backward.Backward` is one compiled Numba function of its argument types and the
seed. :class:`BackwardTable` is a Numba dispatcher that holds the compiled backwards of one
``grad_jit`` function as its overloads: calling it with ``(*args, seed, value)`` types the
arguments and picks the backward in C, with Numba's type-of cache, as a call of an
``njit`` function does, and runs it. Nothing is compiled for it: the overloads are the
backwards' own machine code.

A call of types it does not hold yet reaches :meth:`BackwardTable._compile_for_args` (what
Numba's dispatcher calls on a miss), which builds the backward as the Python path does
(the errors and the warnings are those of the Python call) and adds it when its call
needs nothing else: arguments the backward takes as they are (no tuple taken apart, no
function bound) and a serial backward (a parallel one reruns serially on an error). Other
calls, and calls with keywords or defaults (which ``grad`` binds first), go through the
Python path every time.
"""
import inspect
import threading

from numba.core import types
from numba.core.dispatcher import _DispatcherBase

from .backward import SEED_TYPES


class BackwardTable(_DispatcherBase):
    """The backwards of one ``grad_jit`` function by argument types, called with
    ``(*args, seed, value)``: they return ``(value, gradients)``."""

    _fold_args = False              # positional calls only: the arguments as given

    def __init__(self, owner):
        self._owner = owner
        self._lock = threading.Lock()
        code = owner.py_func.__code__
        # The number of arguments of the calls it takes (without the seed and the value
        # flag); -1 for a
        # function with *args, **kwargs or keyword-only parameters, which binds its
        # arguments as Python does. Numba's C dispatch reads that many argument types
        # (its folding of arguments is off): the caller checks the count.
        plain = not (code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)) \
            and code.co_kwonlyargcount == 0
        self.nargs = code.co_argcount if plain else -1
        names = list(code.co_varnames[:code.co_argcount]) + ["_seed", "_value"]
        pysig = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY)
                                   for n in names])
        super().__init__(len(names), owner.py_func, pysig, can_fallback=False,
                         exact_match_required=True)

    def _make_finalizer(self):
        # The overloads belong to the backwards' own dispatchers, which release them.
        return lambda: None

    def _compile_for_args(self, *args):
        """A call of types not held: the callable Numba's dispatcher calls with
        ``args``, after adding the backward of these types when it can be called as is."""
        try:
            *args, seed, value = args
            owner = self._owner
            if len(args) != self.nargs:
                return owner.call_backward       # bound as Python binds them
            bw = owner._backward(tuple(args))
            if not bw.layout.trivial or bw.parallel:
                return owner.call_backward
            sig = bw.flat_types + SEED_TYPES
            cres = bw.njit_fn.overloads.get(sig)
            if cres is None or cres.objectmode:
                return owner.call_backward
            with self._lock:
                if sig not in self.overloads:
                    self.add_overload(cres)
            return bw.njit_fn
        finally:
            self._types_active_call.clear()
