"""Derivatives given by the user: ``custom_vjp`` (and ``custom_jvp``) over njit pairs.

A function marked with a derivative of its own is a primitive of the rewrite, like
``np.sin``: it is called, never inlined, and its rule is the user's function, entered in
the same tables as the package's own rules (``CALL_RULES`` for numbers, ``ARRAY_RULES``
for arrays) under a name the generated code reads from the runtime namespace::

    @numba_adstack.custom_vjp
    @numba.njit
    def softplus(x):
        return math.log1p(math.exp(-abs(x))) + max(x, 0.0)

    @softplus.defvjp
    @numba.njit
    def softplus_vjp(x, g):          # the primal's arguments, then the result's adjoint
        return (g / (1.0 + math.exp(-x)),)   # one cotangent per argument, shaped like it

The pullback must be linear in ``g`` (a vector-Jacobian product is). Of a function of
numbers it is also its forward mode: the tangent of the result is the sum over the
arguments of the pullback's cotangent with ``g`` the argument's tangent (a Jacobian of
numbers is its own transpose). A function of arrays gets forward mode from ``defjvp``:
``jvp(*args, *tangents)`` returns the result's tangent.
"""
import inspect
import re

import numba
from numba.core.dispatcher import Dispatcher

from ..rules import array_rules, helpers, scalar
from ..rules.array_rules import ArrayRule
from . import implicit
from .. import runtime


def custom_vjp(fn):
    """Mark ``fn`` (a ``@numba.njit`` function, or a Python function, jitted here) as
    having a derivative of its own, given by ``fn.defvjp(pullback)``. Returns the njit
    function, which runs and is called from jitted code as before."""
    if not isinstance(fn, Dispatcher):
        fn = numba.njit(fn)
    fn.defvjp = lambda pullback: _define(fn, pullback, "vjp")
    fn.defjvp = lambda tangent: _define(fn, tangent, "jvp")
    return fn


custom_jvp = custom_vjp


def _jitted(f):
    return f if isinstance(f, Dispatcher) else numba.njit(f)


def _helper_name(fn, kind):
    """The name the generated code calls the user's function by: stable across processes
    (the disk cache finds it again once the module defining it has run)."""
    py = fn.py_func
    return "_custom_%s_%s" % (kind, re.sub(r"\W", "_", "%s_%s" % (py.__module__,
                                                                   py.__qualname__)))


def _define(fn, given, kind):
    given = _jitted(given)
    implicit._PRIMITIVES[id(fn)] = fn   # called as it is; its rules call a function of g
    params = list(inspect.signature(fn.py_func).parameters)
    name = _helper_name(fn, kind)
    helpers.RULE_HELPERS[name] = given
    runtime.RUNTIME[name] = given
    runtime.PURE.add(name)
    names = ["a%d" % k for k in range(len(params))]
    if kind == "vjp":
        call = "%s(%s, {g})" % (name, ", ".join("{%d}" % k for k in range(len(params))))
        scalar.CALL_RULES[fn] = tuple("%s[%d]" % (call, k) for k in range(len(params)))
        array_call = "%s(%s, {g})" % (name, ", ".join("{%s}" % n for n in names))
        old = array_rules.ARRAY_RULES.get(fn)
        array_rules.ARRAY_RULES[fn] = ArrayRule(
            tuple(names), {n: "%s[%d]" % (array_call, k) for k, n in enumerate(names)}, {},
            jvps=old.jvps if old is not None else {})
    else:
        # The tangent of the result, one operand's tangent at a time (the others zero).
        jvps = {}
        for k, n in enumerate(names):
            tangents = ["{d}" if j == k else "({%s} * 0.0)" % m for j, m in enumerate(names)]
            jvps[n] = "%s(%s, %s)" % (name, ", ".join("{%s}" % m for m in names),
                                      ", ".join(tangents))
        old = array_rules.ARRAY_RULES.get(fn)
        if old is None:
            raise TypeError("%s.defjvp: define its pullback first (defvjp); forward mode "
                            "adds to it" % fn.py_func.__qualname__)
        array_rules.ARRAY_RULES[fn] = ArrayRule(old.params, old.vjps, old.defaults,
                                                jvps=jvps)
    return given
