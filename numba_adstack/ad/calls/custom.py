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

The generated code never calls the user's function directly, but through a wrapper per
cotangent (``<name>_<k>``) that checks what it returned: its structure (a tuple of one
cotangent per argument, each a float for a float, an array of floats of the argument's
dimensions for an array, or None for zero) when it is typed, and an array cotangent's
shape against its argument's when it runs (a ``ValueError`` naming both). A mistake in a
rule is an error, never a read past the end of an array.
"""
import inspect
import re

import numba
import numpy as np
from numba.core import types
from numba.core.dispatcher import Dispatcher
from numba.extending import overload

from ..facts import checks
from ..rules import array_rules, helpers, scalar
from ..rules.array_rules import ArrayRule
from . import implicit
from .. import runtime


class CustomRuleError(TypeError):
    """A custom rule returned something that is not what its function needs (raised while
    the rule is typed; the reverse mode's checks say the same with the line)."""


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


# ------------------------------------------------------------------ what a rule returns
class _Rule:
    """A user's rule and how messages name it."""

    def __init__(self, fn, given, kind):
        self.fn, self.given, self.kind = fn, given, kind
        self.params = list(inspect.signature(fn.py_func).parameters)
        self.what = "the %s %s of %s (numba_adstack.custom_%s)" % (
            "pullback" if kind == "vjp" else "tangent rule",
            given.py_func.__qualname__, fn.py_func.__qualname__, kind)

    def signature(self):
        return "%s(%s)" % (self.fn.py_func.__qualname__, ", ".join(self.params))

    def structure_error(self, argtypes, returned):
        """Why ``returned``, what the pullback returns for arguments of ``argtypes``, is
        not one cotangent per argument; None when it is."""
        n = len(self.params)
        if not isinstance(returned, types.BaseTuple):
            return ("%s returns %s, not a tuple: return one cotangent per argument of %s, "
                    "as a tuple (`(c,)` for one)" % (self.what, returned, self.signature()))
        if len(returned) != n:
            return ("%s returns %d cotangent%s (%s) for the %d argument%s of %s: return one "
                    "per argument, in order (None for one without a derivative)"
                    % (self.what, len(returned), "" if len(returned) == 1 else "s",
                       returned, n, "" if n == 1 else "s", self.signature()))
        for k, (a, c) in enumerate(zip(argtypes, returned)):
            want = _cotangent_mismatch(a, c)
            if want is not None:
                return ("%s returns %s as the cotangent of the argument %r (%s): %s, or "
                        "None for zero" % (self.what, c, self.params[k], a, want))
        return None

    def tangent_error(self, result, returned):
        want = _cotangent_mismatch(result, returned)
        if want is None:
            return None
        return ("%s returns %s as the tangent of the result of %s (%s): %s"
                % (self.what, returned, self.signature(), result, want))


def _cotangent_mismatch(arg, cot):
    """What a cotangent of ``arg`` must be, when ``cot`` is not one; else None."""
    if isinstance(cot, (types.NoneType, types.Omitted)):
        return None
    if isinstance(arg, types.Array) and isinstance(arg.dtype, types.Float):
        if not (isinstance(cot, types.Array) and cot.ndim == arg.ndim
                and isinstance(cot.dtype, types.Float)):
            return "an array of floats of %d dimension%s, shaped like the argument" % (
                arg.ndim, "" if arg.ndim == 1 else "s")
    elif isinstance(arg, types.Float):
        if not isinstance(cot, (types.Float, types.Integer)) or \
                isinstance(cot, types.Boolean):
            return "a float, like the argument"
    return None


@numba.njit
def _shape_text(s):
    out = "("
    for k in range(len(s)):
        out += str(s[k])
        if k + 1 < len(s) or len(s) == 1:
            out += ","
        if k + 1 < len(s):
            out += " "
    return out + ")"


def checked_cotangent(c, a, what, of):
    """``c``, the cotangent of ``a`` a rule returned (zero for None), once its shape is
    checked against ``a``'s (``what`` and ``of`` name the rule and ``a`` in the error)."""


@overload(checked_cotangent)
def _checked_cotangent(c, a, what, of):
    if isinstance(c, (types.NoneType, types.Omitted)):
        if isinstance(a, types.Array):
            return lambda c, a, what, of: np.zeros(a.shape)
        return lambda c, a, what, of: 0.0
    if isinstance(c, types.Array) and isinstance(a, types.Array):
        def impl(c, a, what, of):
            if c.shape != a.shape:     # one comparison: the rule's array is used as it is
                raise ValueError(what + " of shape " + _shape_text(c.shape) + " for " +
                                 of + ", of shape " + _shape_text(a.shape) +
                                 ": it must be shaped like it")
            return c
        return impl
    return lambda c, a, what, of: c


def _structure_check(rule):
    """A function of the rule's result and arguments that raises CustomRuleError while it
    is typed when the result is not one cotangent per argument (forward mode, and calls
    that the reverse mode's checks did not see, meet the error here)."""
    def structure(r, args):
        pass

    @overload(structure)
    def _typed(r, args):
        why = rule.structure_error(tuple(args)[:len(rule.params)], r)
        if why is not None:
            raise CustomRuleError(why)
        return lambda r, args: None
    return structure


def _cotangent_helper(rule, structure, k):
    """The njit function the backward calls for the cotangent of argument ``k``."""
    given = rule.given
    what = "%s returned a cotangent" % rule.what
    of = "the argument %r" % rule.params[k]

    @numba.njit
    def cotangent(*args):
        r = given(*args)
        structure(r, args)
        return checked_cotangent(r[k], args[k], what, of)
    return cotangent


def _tangent_helper(rule):
    """The njit function forward mode calls, ``(y, *args, *tangents)``: the tangent the
    user's rule returns, checked against the result ``y``."""
    given = rule.given
    what = "%s returned a tangent" % rule.what

    def tangent_type(t, y):
        pass

    @overload(tangent_type)
    def _typed(t, y):
        why = rule.tangent_error(y, t)
        if why is not None:
            raise CustomRuleError(why)
        return lambda t, y: None

    @numba.njit
    def tangent(y, *args):
        t = given(*args)
        tangent_type(t, y)
        return checked_cotangent(t, y, what, "the result")
    return tangent


_RULES = {}


def _check_call(facts, activity, e, name, fn):
    """At a call of a function with a pullback on the gradient path: the pullback's
    result, typed for the call's arguments, is one cotangent per argument."""
    rule = _RULES.get(id(fn))
    if rule is None or rule.fn is not fn or e.kws or e.vararg is not None:
        return
    argtypes = tuple(types.unliteral(facts.ty(a)) for a in e.args)
    out = facts.ty(name)
    g = types.Array(types.float64, out.ndim, "C") if isinstance(out, types.Array) \
        else types.float64
    rule.given.compile(argtypes + (g,))
    returned = rule.given.overloads[argtypes + (g,)].signature.return_type
    why = rule.structure_error(argtypes, returned)
    if why is not None:
        facts.error(why, e.loc)


checks.register_call_check(_check_call)


def _define(fn, given, kind):
    given = _jitted(given)
    # Read by the gradient cache: its key covers the rules, and it finds the checked
    # calls again through the function (dispatch/cache_key.py).
    fn.ad_rules = dict(getattr(fn, "ad_rules", {}), **{kind: given})
    fn.ad_rule_helpers = getattr(fn, "ad_rule_helpers", {})
    implicit._PRIMITIVES[id(fn)] = fn   # called as it is; its rules call a function of g
    rule = _Rule(fn, given, kind)
    params = rule.params
    name = _helper_name(fn, kind)
    names = ["a%d" % k for k in range(len(params))]
    if kind == "vjp":
        _RULES[id(fn)] = rule
        structure = _structure_check(rule)
        for k in range(len(params)):
            _register(fn, "%s_%d" % (name, k), _cotangent_helper(rule, structure, k))
        scalar.CALL_RULES[fn] = tuple(
            "%s_%d(%s, {g})" % (name, k, ", ".join("{%d}" % j for j in range(len(params))))
            for k in range(len(params)))
        operands = ", ".join("{%s}" % n for n in names)
        old = array_rules.ARRAY_RULES.get(fn)
        array_rules.ARRAY_RULES[fn] = ArrayRule(
            tuple(names), {n: "%s_%d(%s, {g})" % (name, k, operands)
                           for k, n in enumerate(names)}, {},
            jvps=old.jvps if old is not None else {})
    else:
        _register(fn, name, _tangent_helper(rule))
        # The tangent of the result, one operand's tangent at a time (the others zero).
        jvps = {}
        for k, n in enumerate(names):
            tangents = ["{d}" if j == k else "({%s} * 0.0)" % m for j, m in enumerate(names)]
            jvps[n] = "%s({y}, %s, %s)" % (name, ", ".join("{%s}" % m for m in names),
                                           ", ".join(tangents))
        old = array_rules.ARRAY_RULES.get(fn)
        if old is None:
            raise TypeError("%s.defjvp: define its pullback first (defvjp); forward mode "
                            "adds to it" % fn.py_func.__qualname__)
        array_rules.ARRAY_RULES[fn] = ArrayRule(old.params, old.vjps, old.defaults,
                                                jvps=jvps)
    return given


def _register(fn, name, helper):
    helper.ad_rule_of = (fn, name)
    fn.ad_rule_helpers[name] = helper
    helpers.RULE_HELPERS[name] = helper
    runtime.RUNTIME[name] = helper
    runtime.PURE.add(name)
