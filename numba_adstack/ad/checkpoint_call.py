"""Helper calls recomputed instead of stored: ``numba_adstack.checkpoint``.

``step_ck = checkpoint(step)`` (``step`` an ``@numba.njit`` function or a plain Python
function) is a Numba function computing what ``step`` computes, usable wherever ``step``
is. In ``grad_jit`` code the capture (:mod:`.capture`) does not inline a call of it; it
rewrites ``y = step_ck(a0, a1)`` into one primitive::

    y = checkpoint_call_2(step_g, site, a0, a1)    # step_g: grad_jit(step)

whose value is ``step(a0, a1)``, run as the compiled helper, keeping no history. Its
adjoint rule (in ``rules.ARRAY_RULES`` and ``rules.CALL_RULES``) gives each operand ``a_j``
item ``j`` of ``checkpoint_vjp(g, step_g, (a0, a1))``: the vjp of ``step`` at the call's
inputs for the cotangent ``g`` of ``y``, the backward of ``step`` called as
``step_g.vjp_call`` is from jitted code (:mod:`.jitted`). That backward runs ``step``
forward again with its own adstacks and reverses it. The caller's forward keeps only the
inputs of the call (the rule reads them), never the helper's internal history. The cost:
``step`` runs once more per call in the sweep, and its backward once per differentiated
operand.

The helper must take floats, float arrays and integers, write into none of its array
arguments, and return a float or a float array; otherwise the call is refused with a
``NonDifferentiableError`` naming it and its line (met while typing the primitive).
"""
import inspect
import threading

import numba
from numba.core import ir, types
from numba.core.extending import overload

from ..errors import NonDifferentiableError
from . import grad_functions
from . import implicit
from .facts import raise_non_differentiable
from .arity_primitives import ArityPrimitives
from .runtime import RUNTIME

# id -> (marked function, grad_jit function of its Python function, made when first used)
_MARKED = {}
# (function, call, location) of each call site, by the number its primitive holds.
_SITES = []
_lock = threading.RLock()


def checkpoint(fn):
    """Mark a helper whose history the gradient recomputes instead of storing.

    ``fn``: an ``@numba.njit`` function (or a Python function, compiled with njit). Returns
    a Numba function computing what ``fn`` computes, callable from Python and from jitted
    code. Inside a ``grad_jit`` function, a call of the returned function keeps only its
    arguments for the backward; the backward runs ``fn``'s own gradient from them. Use it
    on a step of a time loop whose internal history (inner loops) is large: the memory kept
    is that of the step's inputs per iteration. ``fn`` takes floats, float arrays (which it
    does not write into) and integers, and returns a float or a float array.
    """
    if hasattr(fn, "py_func") and hasattr(fn, "targetoptions"):
        py_func, options = fn.py_func, dict(fn.targetoptions)
    elif inspect.isfunction(fn):
        py_func, options = fn, {}
    else:
        raise TypeError("checkpoint: expected a Numba or Python function, got %r" % (fn,))
    params = inspect.signature(py_func).parameters.values()
    if any(p.kind != p.POSITIONAL_OR_KEYWORD for p in params):
        raise ValueError("checkpoint: the helper %s must take plain parameters (no *args, "
                         "**kwargs or keyword-only ones)" % py_func.__name__)
    options.pop("nopython", None)
    marked = numba.njit(**options)(py_func)
    _MARKED[id(marked)] = [marked, None]
    return marked


def gradient_function_of(obj):
    """The ``grad_jit`` function of a helper marked ``checkpoint`` (made once), or None
    when ``obj`` is not one."""
    entry = _MARKED.get(id(obj))
    if entry is None or entry[0] is not obj:
        return None
    if entry[1] is None:
        with _lock:
            if entry[1] is None:
                options = {k: v for k, v in obj.targetoptions.items() if k != "nopython"}
                entry[1] = grad_functions.grad_jit(obj.py_func, **options)
    return entry[1]


# ---------------------------------------------------------------------- the capture
def rewrite_call(state, block, i, helper_grad, defined_value):
    """Replace the call ``y = step_ck(...)`` at ``block.body[i]`` by the primitive of the
    module docstring."""
    fir, scope = state.func_ir, block.scope
    stmt = block.body[i]
    e, loc, target = stmt.value, stmt.loc, stmt.target
    qualname = state.func_id.func_qualname
    py_func = helper_grad.py_func
    who = "checkpoint(%s)" % py_func.__name__
    new = []

    def assign(value, prefix):
        v = scope.redefine(prefix, loc)
        new.append(ir.Assign(value, v, loc))
        fir._definitions[v.name].append(value)
        return v

    if e.vararg is not None or e.varkwarg is not None:
        raise_non_differentiable(qualname, "%s called with *args or **kwargs" % who, loc)
    sig = inspect.signature(py_func)
    try:
        bound = sig.bind(*e.args, **dict(e.kws))
    except TypeError as exc:
        raise_non_differentiable(qualname, "%s: %s" % (who, exc), loc)
    operands = []
    for name, p in sig.parameters.items():
        v = bound.arguments.get(name)
        operands.append(v if v is not None else assign(ir.Const(p.default, loc),
                                                       "$ck_default"))
    with _lock:
        _SITES.append((qualname, who, loc))
        site = len(_SITES) - 1
    prim = checkpoint_call(len(operands))
    fn = assign(ir.Global(prim.__name__, prim, loc), "$ck_call")
    hv = assign(ir.Global(py_func.__name__, helper_grad, loc), "$ck_function")
    site_v = assign(ir.Const(site, loc), "$ck_site")
    result = ir.Expr.call(fn, [hv, site_v] + operands, (), loc)
    new.append(ir.Assign(result, target, loc))
    defs = fir._definitions[target.name]
    if e in defs:
        defs.remove(e)
    defs.append(result)
    block.body[i:i + 1] = new


# ---------------------------------------------------------------------- the primitives
# Adjoints: item j of the helper's vjp at the call's inputs, for each argument a_j.
_PRIMITIVES = ArityPrimitives(
    __name__, "checkpoint_call", ("f", "site"), lambda *a: _call_impl(*a),
    lambda args, j: "checkpoint_vjp({g}, {f}, (%s,))[%d]" % (args, j))


def checkpoint_call(n):
    """The primitive ``checkpoint_call_<n>`` of the module docstring, made once."""
    return _PRIMITIVES.get(n)


def __getattr__(name):
    # ``checkpoint_call_<n>`` of a backward loaded from the disk cache, in a new process.
    return _PRIMITIVES.by_name(name)


def _accepted_argument(t):
    return isinstance(t, (types.Float, types.Integer, types.Boolean)) or (
        isinstance(t, types.Array) and isinstance(t.dtype, types.Float))


def _accepted_result(t):
    return isinstance(t, types.Float) or (isinstance(t, types.Array)
                                          and isinstance(t.dtype, types.Float))


def _call_impl(f, site, args):
    """The implementation of ``checkpoint_call_<n>`` for these types: the helper's own
    call; None after noting a refusal (raised by the capture)."""
    from .jitted import _vjp_signature
    if not (isinstance(f, types.Dispatcher) and grad_functions.is_grad_function(f.dispatcher)
            and isinstance(site, types.IntegerLiteral)):
        return None
    qualname, who, loc = _SITES[site.literal_value]
    disp = f.dispatcher
    argtypes = tuple(types.unliteral(t) for t in args)
    bad = [str(t) for t in argtypes if not _accepted_argument(t)]
    if bad:
        implicit._refuse_while_typing(
            qualname, "a call to %s with an argument of type %s: a helper marked checkpoint "
            "takes floats, float arrays and integers" % (who, ", ".join(bad)), loc)
        return None
    disp.compile(argtypes)
    out = disp.overloads[argtypes].signature.return_type
    if not _accepted_result(out):
        implicit._refuse_while_typing(
            qualname, "a call to %s, which returns %s: a helper marked checkpoint returns "
            "a float or a float array" % (who, out), loc)
        return None
    try:
        written = _vjp_signature(disp, argtypes).backward.written_args
    except NonDifferentiableError as exc:      # the helper itself: raised by the capture
        implicit._pending.error = exc
        raise
    if written:
        implicit._refuse_while_typing(
            qualname, "a call to %s, which writes into its array argument(s) %s: a helper "
            "marked checkpoint must not change its arguments (return a new array)"
            % (who, ", ".join(str(w) for w in written)), loc)
        return None
    params = ", ".join("a%d" % j for j in range(len(args)))
    ns = {"_h": disp}
    exec("def impl(f, site, %s):\n    return _h(%s)\n" % (params, params), ns)
    return ns["impl"]


# ---------------------------------------------------------------------- the adjoint
def checkpoint_vjp(g, f, args):
    """The cotangents of ``f``'s arguments at ``args`` for the cotangent ``g`` of its
    result: a tuple with one entry per argument (Numba code only)."""
    raise NotImplementedError("checkpoint_vjp is called from Numba code only")


RUNTIME["checkpoint_vjp"] = checkpoint_vjp


@overload(checkpoint_vjp, inline="always")
def _checkpoint_vjp_impl(g, f, args):
    from .jitted import _vjp_call_call
    if not isinstance(args, types.BaseTuple):
        return None

    def impl(g, f, args):
        return _vjp_call_call(f, args + (g,))
    return impl


__all__ = ["checkpoint", "checkpoint_call", "checkpoint_vjp", "gradient_function_of",
           "rewrite_call"]
