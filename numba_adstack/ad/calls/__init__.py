"""Calls that the capture leaves to their own rewrite (each module registers it with
:func:`..capture.call_registry.register_call_rewriter` when imported): helpers marked
``checkpoint``, solvers marked ``implicit_root``, derivatives called in the function,
calls of functions that call themselves; SciPy special functions called through their C addresses;
and users' rules (``custom_vjp``, ``custom_jvp``)."""
from . import checkpoint_call, custom, implicit, recursion, scipy_special, second_order  # noqa: F401
