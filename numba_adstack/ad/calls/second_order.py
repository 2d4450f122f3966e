"""Second order: ``h.grad`` and ``h.value_and_grad`` called in a function that is itself
differentiated (``penalty(x) = sum(h.grad(x, y)[1] ** 2)``, a loss on the force field
``-energy.grad(x)[0]``, Newton steps in a differentiated loop).

The capture (:mod:`..capture.pipeline`) replaces the call ``r = h.grad(a0, a1)`` by one primitive call
per argument that ``h`` differentiates, and rebuilds the tuple from them::

    g0 = gradient_item_2(h, 0, site, a0, a1)    # h.grad(a0, a1)[0]
    g1 = gradient_item_2(h, 1, site, a0, a1)
    r = (g0, g1)                                 # None where h does not differentiate

``value_and_grad`` also calls ``v = h(a0, a1)``, which is inlined and differentiated as any
call, and gives ``r = (v, (g0, g1))``. The rewrite follows the tuple's items as it follows
any tuple built in the function.

``gradient_item_<n>`` is a primitive of ``n`` arguments: its value is item ``k`` of ``h``'s
gradient (the backward of ``h`` for the call's argument types, called as ``h.grad`` from
jitted code calls it); its adjoint rule (one per arity, in ``rules.ARRAY_RULES`` and
``rules.CALL_RULES``) gives operand ``a_j`` the contribution ``(H v)_j``, the Hessian of
``h`` times ``v``, the cotangent of ``g_k`` in slot ``k`` and zeros elsewhere:
``second_order_hvp`` runs the forward-mode rewrite over ``h``'s backward (forward over
reverse, as ``h.hvp``), built for those types when the backward is compiled. Each active
operand's contribution calls it once.

Refused (``NonDifferentiableError`` naming the call and its line): ``vjp_call`` and ``jvp``
inside a differentiated function, ``h`` with ``*args``, and tuple or function arguments
of ``h`` (met when the call is typed).
"""
import inspect
import threading

from numba.core import ir, types
from numba.core.errors import TypingError
from numba.core.extending import overload

from ..dispatch import grad_functions
from . import implicit
from ...errors import raise_non_differentiable
from .arity_primitives import ArityPrimitives
from ..capture.call_registry import register_call_rewriter
from ..capture.specialize import layout_of
from ..dispatch.derived import _forward_over_reverse
from ..dispatch.jitted import KINDS, derivative_of, serial_backward
from ..dispatch.wrt import wrt_indices
from ..runtime import RUNTIME
from ..generated_source import exec_source

#: Kinds of derivative a differentiated function may call.
SUPPORTED = ("grad", "value_and_grad")
# (function, call, location) of each call site, by the number its primitive holds.
_SITES = []
_lock = threading.RLock()


# ---------------------------------------------------------------------- the call sites
def derivative_called(defined_value, expr):
    """``(h, attribute)`` when ``expr`` calls ``h.grad`` (or another derivative attribute
    of a ``grad_jit`` function ``h``) written as an attribute (``h.grad(x)``), or held by
    a variable (a function value bound to ``h.grad``), or inlined from it (see
    :mod:`..dispatch.jitted`); else None. ``defined_value(var)``: what ``var`` holds before typing."""
    defn = defined_value(expr.func)
    if isinstance(defn, ir.Expr) and defn.op == "getattr" and defn.attr in KINDS:
        owner = defined_value(defn.value)
        if isinstance(owner, (ir.Global, ir.FreeVar)) and \
                grad_functions.is_grad_function(owner.value):
            return owner.value, defn.attr
        return None
    if not isinstance(defn, (ir.Global, ir.FreeVar)):
        return None
    kind = getattr(defn.value, "_numba_adstack_derivative_call", None)
    if kind is not None and expr.args:
        owner = defined_value(expr.args[0])
        if isinstance(owner, (ir.Global, ir.FreeVar)):
            return owner.value, kind
    return derivative_of(defn.value)


def refuse(qualname, derivative, loc):
    """The error for a derivative call the rewrite cannot differentiate."""
    h, kind = derivative
    name = h.py_func.__qualname__
    raise_non_differentiable(
        qualname, "a call to %s.%s: the derivative of a function that calls %s.%s is not "
        "supported (of one that calls %s.grad or %s.value_and_grad, it is); Hessian-vector "
        "products of %s are %s.hvp(args, v)" % (name, kind, name, kind, name, name, name,
                                                name), loc)


def _rewrite_site(state, block, i, expr, called, defined_value, tuple_items):
    derivative = derivative_called(defined_value, expr)
    if derivative is None:
        return False
    rewrite_call(state, block, i, derivative, defined_value, tuple_items)
    return True


def rewrite_call(state, block, i, derivative, defined_value, tuple_items):
    """Replace the call ``r = h.grad(...)`` (or ``value_and_grad``) at ``block.body[i]`` by
    the primitives of the module docstring."""
    fir, scope = state.func_ir, block.scope
    stmt = block.body[i]
    e, loc, target = stmt.value, stmt.loc, stmt.target
    qualname = state.func_id.func_qualname
    h, kind = derivative
    if kind not in SUPPORTED:
        refuse(qualname, derivative, loc)
    name = "%s.%s" % (h.py_func.__qualname__, kind)
    new = []

    def assign(value, prefix):
        v = scope.redefine(prefix, loc)
        new.append(ir.Assign(value, v, loc))
        fir._definitions[v.name].append(value)
        return v

    sig = inspect.signature(h.py_func)
    if any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY)
           for p in sig.parameters.values()):
        raise_non_differentiable(qualname, "a call to %s: %s takes *args, **kwargs or "
                                 "keyword-only parameters, whose second derivatives are "
                                 "not supported" % (name, h.py_func.__qualname__), loc)
    if getattr(defined_value(e.func), "value", None) is not None and \
            getattr(defined_value(e.func).value, "_numba_adstack_derivative_call", None):
        # ``_grad_call(h, args)``, inlined from ``h.grad``: the arguments are a tuple.
        where = tuple_items(e.args[1]) if len(e.args) == 2 else None
        if where is None:
            raise_non_differentiable(qualname, "a call to %s whose arguments are not known "
                                     "before typing" % name, loc)
        built = defined_value(e.args[1])
        if isinstance(built, ir.Expr) and built.op == "build_tuple":
            operands = list(built.items)
        else:
            operands = [assign(ir.Expr.static_getitem(t, k, None, loc), "$grad_arg")
                        for t, k in where]
    else:
        if e.vararg is not None or e.varkwarg is not None:
            raise_non_differentiable(qualname, "%s called with *args or **kwargs" % name,
                                     loc)
        try:
            bound = sig.bind(*e.args, **dict(e.kws))
        except TypeError as exc:
            raise_non_differentiable(qualname, "%s: %s" % (name, exc), loc)
        operands = []
        for pname, p in sig.parameters.items():
            v = bound.arguments.get(pname)
            operands.append(v if v is not None else
                            assign(ir.Const(p.default, loc), "$grad_default"))
    if len(operands) != len(sig.parameters):
        raise_non_differentiable(qualname, "%s with %d arguments; %s takes %d"
                                 % (name, len(operands), h.py_func.__qualname__,
                                    len(sig.parameters)), loc)
    wrt = wrt_indices(h.py_func, h.ad_options["wrt"])
    with _lock:
        _SITES.append((qualname, name, loc))
        site = len(_SITES) - 1
    item = gradient_item(len(operands))
    fn = assign(ir.Global(item.__name__, item, loc), "$gradient_item")
    hv = assign(ir.Global(h.py_func.__name__, h, loc), "$grad_function")
    site_v = assign(ir.Const(site, loc), "$grad_site")
    if kind == "grad":
        read = _items_read(fir, target.name)
    else:
        outer = _items_read(fir, target.name, keep=True)
        read = None if outer is None else set()
        for v in outer.get(1, ()) if outer is not None else ():
            sub = _items_read(fir, v)
            read = None if sub is None or read is None else read | sub
    grads = []
    for k in range(len(operands)):
        if (wrt is not None and k not in wrt) or (read is not None and k not in read):
            grads.append(assign(ir.Const(None, loc), "$grad_none"))
            continue
        kv = assign(ir.Const(k, loc), "$grad_index")
        grads.append(assign(ir.Expr.call(fn, [hv, kv, site_v] + operands, (), loc),
                            "$grad_item"))
    result = ir.Expr.build_tuple(grads, loc)
    if kind == "value_and_grad":
        value = assign(ir.Expr.call(hv, operands, (), loc), "$grad_value")
        result = ir.Expr.build_tuple([value, assign(result, "$grads")], loc)
    new.append(ir.Assign(result, target, loc))
    defs = fir._definitions[target.name]
    if e in defs:
        defs.remove(e)
    defs.append(result)
    block.body[i:i + 1] = new


def _items_read(fir, name, keep=False):
    """The items of the tuple variable ``name`` that the function reads (``r[1]``,
    ``a, b = r``), or None when it uses the tuple otherwise; with ``keep``, a dict from
    each item read to the variables it is read into."""
    uses, items = [], {}
    for blk in fir.blocks.values():
        for stmt in blk.body:
            if any(v.name == name for v in stmt.list_vars()) and not (
                    isinstance(stmt, ir.Assign) and stmt.target.name == name):
                uses.append(stmt)
    for stmt in uses:
        e = stmt.value if isinstance(stmt, ir.Assign) else None
        if isinstance(e, ir.Var) or (isinstance(e, ir.Expr) and e.op == "exhaust_iter"
                                     and e.value.name == name):
            # A copy (an inlined function's result) or unpacking: read through it.
            sub = _items_read(fir, stmt.target.name, keep)
            if sub is None:
                return None
            for k, vs in sub.items() if keep else ((k, ()) for k in sub):
                items.setdefault(k, []).extend(vs)
        elif isinstance(e, ir.Expr) and e.op == "static_getitem" and \
                e.value.name == name and isinstance(e.index, int):
            items.setdefault(e.index, []).append(stmt.target.name)
        else:
            return None
    return items if keep else set(items)


# ---------------------------------------------------------------------- the primitives
# Adjoints: (H v)_j for each argument a_j.
_PRIMITIVES = ArityPrimitives(
    __name__, "gradient_item", ("f", "k", "site"), lambda *a: _item_impl(*a),
    lambda args, j: "second_order_hvp({g}, {f}, {k}, (%s,))[%d]" % (args, j))


def gradient_item(n):
    """The primitive ``gradient_item_<n>`` of the module docstring, made once."""
    return _PRIMITIVES.get(n)


def __getattr__(name):
    # ``gradient_item_<n>`` of a backward loaded from the disk cache, in a new process.
    return _PRIMITIVES.by_name(name)


def _literal_int(t):
    return t.literal_value if isinstance(t, types.IntegerLiteral) else None


def _item_impl(f, k, site, args):
    """The implementation of ``gradient_item_<n>`` for these types (see the module
    docstring), or None after noting why not (raised by the capture)."""
    if not (isinstance(f, types.Dispatcher) and grad_functions.is_grad_function(f.dispatcher)):
        return None
    k, site = _literal_int(k), _literal_int(site)
    if k is None or site is None:
        return None
    disp = f.dispatcher
    argtypes = tuple(types.unliteral(t) for t in args)
    if not layout_of(disp.py_func, argtypes).trivial:
        qualname, name, loc = _SITES[site]
        implicit._refuse_while_typing(
            qualname, "a call to %s with a tuple or function argument (%s): second "
            "derivatives take floats, float arrays and non-differentiated arguments only"
            % (name, ", ".join(str(t) for t in argtypes)), loc)
        return None
    bw = serial_backward(disp, argtypes)
    params = ", ".join("a%d" % j for j in range(len(args)))
    ns = {"_bw": bw.njit_fn}
    return exec_source("impl", "def impl(f, k, site, %s):\n    return _bw(%s, 1.0, bool(0))[1][%d]\n"
                       % (params, params, k), ns, "second-order call")


# ---------------------------------------------------------------------- the adjoint
def second_order_hvp(g, f, k, args):
    """``H v`` of ``f`` at ``args``, ``v`` being ``g`` in slot ``k`` and zeros elsewhere:
    a tuple with one entry per argument (Numba code only)."""
    raise NotImplementedError("second_order_hvp is called from Numba code only")


RUNTIME["second_order_hvp"] = second_order_hvp


def _every_argument(disp):
    """``disp``, or a twin differentiating every argument when ``disp`` has ``wrt=``: the
    Hessian's mixed terms need the gradient of every argument."""
    if disp.ad_options["wrt"] is None:
        return disp
    twin = disp.__dict__.get("_every_argument")
    if twin is None:
        with _lock:
            twin = disp.__dict__.get("_every_argument")
            if twin is None:
                twin = grad_functions.like(disp, disp.py_func,
                                           dict(disp.ad_options, wrt=None, cache=False))
                disp.__dict__["_every_argument"] = twin
    return twin


@overload(second_order_hvp, prefer_literal=True, inline="always")
def _second_order_hvp_impl(g, f, k, args):
    if not (isinstance(f, types.Dispatcher) and grad_functions.is_grad_function(f.dispatcher)
            and isinstance(args, types.BaseTuple)):
        return None
    kk = _literal_int(k)
    if kk is None:
        raise TypingError("second_order_hvp: the index must be a constant")
    disp = _every_argument(f.dispatcher)
    argtypes = tuple(types.unliteral(t) for t in args)
    jvp = _forward_over_reverse(disp, argtypes, frozenset([kk]))
    reads = "".join("args[%d], " % j for j in range(len(args)))
    ns = {"_jvp": jvp.njit_fn}
    return exec_source("impl", "def impl(g, f, k, args):\n    return _jvp(%s1.0, bool(0), g)[1][1]\n"
                       % reads, ns, "second-order call")


__all__ = ["derivative_called", "gradient_item", "refuse", "rewrite_call",
           "second_order_hvp", "SUPPORTED"]


register_call_rewriter(_rewrite_site)
