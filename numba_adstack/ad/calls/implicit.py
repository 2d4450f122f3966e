"""Implicit derivatives of root solves (``implicit_root``) and ``stop_gradient``.

By default ``grad_jit`` differentiates a root solver as the code it is: it replays the
iterations and reverses them. For Newton's method that converges to the derivative of the
root; for bisection, whose iterates depend on the parameters only through comparisons, it
is zero. At a converged root ``x`` of ``func(x, *args) = 0``, with ``func`` smooth and
``dfunc/dx != 0`` there, the implicit function theorem gives the derivative directly:
``dx/dp = -(dfunc/dp) / (dfunc/dx)``, whatever the solver did to find ``x``.

A solver marked with :func:`implicit_root` is not inlined. ``x = solver(func, x0, ...,
args=args)`` is captured as::

    xs = solver(func, x0, ..., args)        # the same call, no derivative, no history
    fv = func(xs, *args)                    # inlined and differentiated
    x  = xs - (fv - stop_gradient(fv)) / dfdx(func, xs, args)

whose value is ``xs`` exactly and whose derivative in ``args`` is ``-(dfunc/dp) /
(dfunc/dx)``; ``dfdx`` is the derivative of ``func`` in its first argument at ``xs``,
computed by the backward of ``func`` (``grad_jit``).
"""
import inspect
import operator
import threading

import numba
from numba.core import ir, types
from numba.extending import overload

from ..dispatch import grad_functions
from .. import rules as R
from ...errors import NonDifferentiableError, raise_non_differentiable
from ..capture.call_rewrite import CallRewrite
from ..capture.call_registry import register_call_rewriter
from ..capture.tuples import returned_shape, root_index
from ..generated_source import exec_source

# id -> (object, spec) of the solvers marked implicit, and the functions the capture
# leaves as calls (their rules give no derivative).
_SPECS = {}
_PRIMITIVES = {}


class _Spec:
    """A solver marked ``implicit_root``: where its function and its extra arguments are."""

    def __init__(self, py_func, func_index, args_index, primal):
        self.py_func = py_func
        self.name = py_func.__name__
        self.func_index = func_index
        self.args_index = args_index
        self.primal = primal


def _register_primitive(fn, nargs):
    _PRIMITIVES[id(fn)] = fn
    R.CALL_RULES[fn] = (None,) * nargs


def is_primitive(obj):
    """Is ``obj`` called as it is by the rewrite (never inlined)?"""
    return _PRIMITIVES.get(id(obj)) is obj and obj is not None


def spec_of(obj):
    """The :class:`_Spec` of a solver marked ``implicit_root``, or None."""
    entry = _SPECS.get(id(obj))
    return entry[1] if entry is not None and entry[0] is obj else None


@numba.njit(inline="never")
def stop_gradient(x):
    """``x``, through which ``grad_jit`` passes no derivative: a constant for the gradient.
    In plain Numba code it is the identity."""
    return x


_register_primitive(stop_gradient, 1)


def _param_index(params, which, what, required):
    names = [p.name for p in params]
    if isinstance(which, int) and -len(names) <= which < len(names):
        return which % len(names)
    if isinstance(which, str) and which in names:
        return names.index(which)
    if not required:
        return None
    raise ValueError("implicit_root: %s=%r names no parameter of the solver %s"
                     % (what, which, tuple(names)))


def implicit_root(solver=None, *, func=0, args="args"):
    """Mark a root solver so that ``grad_jit`` differentiates its result implicitly.

    ``solver(..., func, ..., args=...)`` must return ``x`` with ``func(x, *args) == 0``
    (a float). ``func`` and ``args`` name the solver's parameters holding the function and
    the tuple of its extra arguments (names or indices; ``args=None``: ``func(x)`` only).
    Returns a Numba function computing what ``solver`` computes, usable wherever it is;
    in ``grad_jit`` code the derivative of its result in ``args`` is ``-(dfunc/dargs) /
    (dfunc/dx)`` at the root, and the solver's iterations are neither differentiated nor
    recorded. As a decorator: ``@implicit_root`` or ``@implicit_root(func="f")`` above
    (or instead of) ``@numba.njit``.
    """
    def wrap(s):
        if hasattr(s, "py_func") and hasattr(s, "targetoptions"):
            py_func, options = s.py_func, dict(s.targetoptions)
        else:
            py_func, options = s, {}
        options.pop("nopython", None)
        params = list(inspect.signature(py_func).parameters.values())
        if any(p.kind != p.POSITIONAL_OR_KEYWORD for p in params):
            raise ValueError("implicit_root: the solver %s must take plain parameters "
                             "(no *args, **kwargs or keyword-only ones)" % py_func.__name__)
        fi = _param_index(params, func, "func", True)
        ai = _param_index(params, args, "args", args != "args" and args is not None) \
            if args is not None else None
        marked = numba.njit(**options)(py_func)
        primal = numba.njit(**options)(py_func)
        _register_primitive(primal, len(params))
        _SPECS[id(marked)] = (marked, _Spec(py_func, fi, ai, primal))
        return marked
    if solver is None:
        return wrap
    return wrap(solver)


# ---------------------------------------------------------------------- the capture
def _rewrite_site(state, block, i, expr, called, defined_value, tuple_items):
    spec = spec_of(called)
    if spec is None:
        return False
    rewrite_call(state, block, i, spec, defined_value, tuple_items)
    return True


def rewrite_call(state, block, i, spec, defined_value, tuple_items):
    """Replace the call ``x = solver(...)`` at ``block.body[i]`` by its implicit form
    (see the module docstring). ``defined_value(var)`` and ``tuple_items(var)`` read what
    a variable holds before typing (:mod:`..capture.pipeline`)."""
    rw = CallRewrite(state, block, i, "implicit_root(%s)" % spec.name)
    loc, assign, qualname, who = rw.loc, rw.assign, rw.qualname, rw.who
    operands = rw.operands(spec.py_func, "$default")
    fn = operands[spec.func_index]
    callee = defined_value(fn)
    if not (isinstance(callee, (ir.Global, ir.FreeVar)) and hasattr(callee.value, "py_func")):
        raise_non_differentiable(qualname, "%s: its function argument must be a Numba "
                                 "function known before the function runs" % who, loc)
    tup = operands[spec.args_index] if spec.args_index is not None else \
        assign(ir.Const((), loc), "$noargs")
    where = tuple_items(tup)
    if where is None:
        raise_non_differentiable(qualname, "%s: the length of its args tuple must be known "
                                 "before typing (build the tuple in the call)" % who, loc)
    primal = assign(ir.Global(spec.name, spec.primal, loc), "$implicit_solver")
    out = assign(ir.Expr.call(primal, operands, (), loc), "$implicit_solver_out")
    # A solver returning a tuple (``results(root, iterations, ...)``): its root item
    # gets the implicit derivative, the other items are passed on.
    shape = returned_shape(spec.py_func)
    at = root_index(shape)
    if at is None:
        shape = None        # a float, or refused while typing (implicit_result)
    whole = out
    if shape is not None:
        # Read by a primitive: the solver's own result carries no derivative.
        item = assign(ir.Global("implicit_item", implicit_item, loc), "$implicit_item")
        k = assign(ir.Const(at, loc), "$implicit_root_index")
        out = assign(ir.Expr.call(item, [whole, k], (), loc), "$implicit_solver_root")
    # The solver must return the root: checked while typing (implicit_result).
    _SITES.append((qualname, who, loc))
    guard = assign(ir.Global("implicit_result", implicit_result, loc), "$implicit_result")
    site = assign(ir.Const(len(_SITES) - 1, loc), "$implicit_site")
    xs = assign(ir.Expr.call(guard, [out, site], (), loc), "$implicit_root")
    items = [assign(ir.Expr.static_getitem(t, k, None, loc), "$implicit_arg")
             for t, k in where]
    fv = assign(ir.Expr.call(fn, [xs] + items, (), loc), "$implicit_f")
    stop = assign(ir.Global("stop_gradient", stop_gradient, loc), "$stop_gradient")
    fs = assign(ir.Expr.call(stop, [fv], (), loc), "$implicit_f_const")
    dfdx_fn = assign(ir.Global("implicit_dfdx", implicit_dfdx, loc), "$implicit_dfdx")
    dfdx = assign(ir.Expr.call(dfdx_fn, [fn, xs, tup], (), loc), "$implicit_dfdx")
    d = assign(ir.Expr.binop(operator.sub, fv, fs, loc), "$implicit_d")
    q = assign(ir.Expr.binop(operator.truediv, d, dfdx, loc), "$implicit_q")
    result = ir.Expr.binop(operator.sub, xs, q, loc)
    if shape is not None:
        root = assign(result, "$implicit_x")
        items = [root if k == at else assign(ir.Expr.static_getitem(whole, k, None, loc),
                                             "$implicit_item") for k in range(shape[0])]
        if shape[1] is None:
            result = ir.Expr.build_tuple(items, loc)
        else:
            cls = assign(ir.Global(shape[1].__name__, shape[1], loc), "$implicit_class")
            result = ir.Expr.call(cls, items, (), loc)
    rw.finish(result)


# ---------------------------------------------------------------------- typing guards
# A refusal met while typing (the solver's result, implicit_dfdx), which Numba would
# report as a TypingError: typed_ir raises it instead.
_pending = threading.local()
# (function, solver, location) of each implicit call site, by the number its guard holds.
_SITES = []


def raise_pending():
    """Raise the NonDifferentiableError met while typing the last capture, if any."""
    exc = getattr(_pending, "error", None)
    if exc is not None:
        _pending.error = None
        raise exc


def _refuse_while_typing(qualname, what, loc):
    try:
        raise_non_differentiable(qualname, what, loc)
    except NonDifferentiableError as exc:
        _pending.error = exc


def implicit_result(x, site):
    """``x``, the root an implicit solver returned (Numba code only)."""
    raise NotImplementedError("implicit_result is called from Numba code only")


_register_primitive(implicit_result, 2)
R.CALL_RULES[implicit_result] = ("{g}", None)


@overload(implicit_result, prefer_literal=True)
def _implicit_result_impl(x, site):
    if isinstance(x, types.Float):
        return lambda x, site: x
    if not isinstance(site, types.IntegerLiteral):
        return None
    qualname, who, loc = _SITES[site.literal_value]
    _refuse_while_typing(qualname, "%s returns %s; an implicit root solver must return "
                         "the root (a float, or a named tuple with a field `root`)" % (who, x), loc)
    return None


def implicit_item(t, k):
    """``t[k]``, the root in the tuple an implicit solver returned (Numba code only)."""
    raise NotImplementedError("implicit_item is called from Numba code only")


_register_primitive(implicit_item, 2)


@overload(implicit_item, prefer_literal=True)
def _implicit_item_impl(t, k):
    if not (isinstance(t, types.BaseTuple) and isinstance(k, types.IntegerLiteral)):
        return None
    at = k.literal_value
    return lambda t, k: t[at]


# ---------------------------------------------------------------------- dfunc/dx
def implicit_dfdx(func, x, args):
    """The derivative of ``func(x, *args)`` in ``x`` (Numba code only)."""
    raise NotImplementedError("implicit_dfdx is called from Numba code only")


_register_primitive(implicit_dfdx, 3)
_DERIVATIVES = {}


def _unliteral(t):
    if isinstance(t, types.BaseTuple) and not isinstance(t, (types.NamedTuple,
                                                             types.NamedUniTuple)):
        return types.Tuple([_unliteral(u) for u in t])
    return types.unliteral(t)


@overload(implicit_dfdx)
def _implicit_dfdx_impl(func, x, args):
    if not isinstance(func, types.Dispatcher) or not isinstance(args, types.BaseTuple):
        return None
    disp = func.dispatcher
    entry = _DERIVATIVES.get(id(disp))
    if entry is None or entry[0] is not disp:
        entry = (disp, grad_functions.grad_jit(disp.py_func, wrt=(0,), **{
            k: v for k, v in disp.targetoptions.items() if k != "nopython"}))
        _DERIVATIVES[id(disp)] = entry
    try:
        bw = entry[1].backward_for_types((_unliteral(x),) + tuple(_unliteral(t)
                                                                  for t in args))
    except NonDifferentiableError as exc:
        _pending.error = exc
        raise
    # Each flat argument of func's backward: x, or an item (of an item) of args.
    reads = ["x" if path[0] == 0 else "args[%d]%s" % (
        path[0] - 1, "".join("[%d]" % k for k in path[1:])) for path in bw.layout.leaf_paths()]
    src = ("def impl(func, x, args):\n    return bw(%s1.0, bool(0))[1][0]\n"
           % "".join(r + ", " for r in reads))
    ns = {"bw": bw.njit_fn}
    return exec_source("impl", src, ns, "implicit derivative")


register_call_rewriter(_rewrite_site, is_primitive, raise_pending)
