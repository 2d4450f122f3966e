"""Helper calls recomputed instead of stored: ``numba_adstack.checkpoint``.

``step_ck = checkpoint(step)`` (``step`` an ``@numba.njit`` function or a plain Python
function) is a Numba function computing what ``step`` computes, usable wherever ``step``
is. In ``grad_jit`` code the capture (:mod:`..capture.pipeline`) does not inline a call of it; it
rewrites ``y = step_ck(a0)`` into one primitive::

    y = checkpoint_call_1(step_g, site, a0)    # step_g: grad_jit(step)

whose value is ``step(a0)``, run as the compiled helper, keeping no history. Its adjoint
rule (in ``rules.ARRAY_RULES`` and ``rules.CALL_RULES``) gives ``a0`` item 0 of
``checkpoint_vjp(g, step_g, (a0,))``: the vjp of ``step`` at the call's input for the
cotangent ``g`` of ``y``, the backward of ``step`` called as ``step_g.vjp_call`` is from
jitted code (:mod:`..dispatch.jitted`). That backward runs ``step`` forward again with its own
adstacks and reverses it. The caller's forward keeps only the inputs of the call (the rule
reads them), never the helper's internal history.

A helper of several parameters gets the cotangents of all of them from one backward call:
the call is rewritten as ::

    w = checkpoint_pack_2(a0, a1)                       # its float operands, flattened
    y = checkpoint_packed_call_3(step_g, site, w, a0, a1)

``w``'s value is the float operands one after the other in one 1-d array (of the widest
float type among them, so that each converts back exactly); ``y`` is ``step(a0, a1)``. The
packed call differentiates in ``w`` only, by ``checkpoint_vjp_packed``: one backward of
``step``, its cotangents flattened as ``w`` is; the pack gives each operand its piece of
``w``'s adjoint (``checkpoint_unpack``). So the reverse sweep computes the adjoint of ``w``
once and reads every operand's cotangent out of it. The cost: ``step`` runs once more per
call in the sweep, and its backward once; the replay copies the float operands into ``w``.

The helper must take floats, float arrays and integers, write into none of its array
arguments, and return a float or a float array; otherwise the call is refused with a
``NonDifferentiableError`` naming it and its line (met while typing the primitive).
"""
import threading

import numpy as np
from numba.core import ir, types
from numba.core.extending import overload

from ...errors import NonDifferentiableError
from ..dispatch import grad_functions
from . import implicit
from ..capture import checkpoint_loop
from ..capture.call_rewrite import CallRewrite
from ..capture.call_registry import register_call_rewriter
from ..dispatch.jitted import _vjp_call_call, _vjp_signature
from .arity_primitives import ArityPrimitives
from ..runtime import RUNTIME
from ..generated_source import exec_source

# id -> (marked helper, grad_jit function of its Python function, made when first used)
_GRADIENTS = {}
# (function, call, location) of each call site, by the number its primitive holds.
_SITES = []
_lock = threading.RLock()


def gradient_function_of(obj):
    """The ``grad_jit`` function of a helper marked ``checkpoint`` (made once), or None
    when ``obj`` is not one."""
    if not checkpoint_loop.is_marked_helper(obj):
        return None
    entry = _GRADIENTS.setdefault(id(obj), [obj, None])
    if entry[1] is None:
        with _lock:
            if entry[1] is None:
                options = {k: v for k, v in obj.targetoptions.items() if k != "nopython"}
                entry[1] = grad_functions.grad_jit(obj.py_func, **options)
    return entry[1]


# ---------------------------------------------------------------------- the capture
def _rewrite_site(state, block, i, expr, called, defined_value, tuple_items):
    helper = gradient_function_of(called)
    if helper is None:
        return False
    rewrite_call(state, block, i, helper, defined_value)
    return True


def rewrite_call(state, block, i, helper_grad, defined_value):
    """Replace the call ``y = step_ck(...)`` at ``block.body[i]`` by the primitive of the
    module docstring."""
    py_func = helper_grad.py_func
    rw = CallRewrite(state, block, i, "checkpoint(%s)" % py_func.__name__)
    loc, assign = rw.loc, rw.assign
    operands = rw.operands(py_func, "$ck_default")
    with _lock:
        _SITES.append((rw.qualname, rw.who, loc))
        site = len(_SITES) - 1
    hv = assign(ir.Global(py_func.__name__, helper_grad, loc), "$ck_function")
    site_v = assign(ir.Const(site, loc), "$ck_site")
    if len(operands) == 1:
        prim = checkpoint_call(1)
    else:       # one backward call for all operands, through their packed copy
        pack = checkpoint_pack(len(operands))
        pack_fn = assign(ir.Global(pack.__name__, pack, loc), "$ck_pack")
        packed = assign(ir.Expr.call(pack_fn, list(operands), (), loc), "$ck_packed")
        operands = [packed] + operands
        prim = checkpoint_packed_call(len(operands))
    fn = assign(ir.Global(prim.__name__, prim, loc), "$ck_call")
    rw.finish(ir.Expr.call(fn, [hv, site_v] + operands, (), loc))


# ---------------------------------------------------------------------- the primitives
# Adjoints: item j of the helper's vjp at the call's inputs, for each argument a_j.
_PRIMITIVES = ArityPrimitives(
    __name__, "checkpoint_call", ("f", "site"), lambda *a: _call_impl(*a),
    lambda args, j: "checkpoint_vjp({g}, {f}, (%s,))[%d]" % (args, j))


def _packed_adjoint(args, j):
    """The packed call differentiates in its first operand, the packed copy, only."""
    if j:
        return None
    rest = args.split(", ")[1:]
    return "checkpoint_vjp_packed({g}, {f}, (%s,))" % ", ".join(rest)


_PACKED_CALLS = ArityPrimitives(
    __name__, "checkpoint_packed_call", ("f", "site"),
    lambda f, site, args: _call_impl(f, site, args[1:], packed=True), _packed_adjoint)
# Each operand's cotangent: its piece of the adjoint of the packed copy.
_PACKS = ArityPrimitives(
    __name__, "checkpoint_pack", (), lambda args: _pack_impl(args),
    lambda args, j: "checkpoint_unpack({g}, (%s,), %d)" % (args, j))


def checkpoint_call(n):
    """The primitive ``checkpoint_call_<n>`` of the module docstring, made once."""
    return _PRIMITIVES.get(n)


def checkpoint_packed_call(n):
    """The primitive ``checkpoint_packed_call_<n>`` (the packed copy, then the ``n - 1``
    operands), made once."""
    return _PACKED_CALLS.get(n)


def checkpoint_pack(n):
    """The primitive ``checkpoint_pack_<n>``, made once."""
    return _PACKS.get(n)


def __getattr__(name):
    # The primitives of a backward loaded from the disk cache, in a new process.
    for made in (_PACKED_CALLS, _PACKS, _PRIMITIVES):
        try:
            return made.by_name(name)
        except AttributeError:
            pass
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def _accepted_argument(t):
    return isinstance(t, (types.Float, types.Integer, types.Boolean)) or (
        isinstance(t, types.Array) and isinstance(t.dtype, types.Float))


def _accepted_result(t):
    return isinstance(t, types.Float) or (isinstance(t, types.Array)
                                          and isinstance(t.dtype, types.Float))


def _call_impl(f, site, args, packed=False):
    """The implementation of ``checkpoint_call_<n>`` (``packed``:
    ``checkpoint_packed_call_<n + 1>``, whose first operand the call does not read) for
    these types: the helper's own call; None after noting a refusal (raised by the
    capture)."""
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
    params = ["a%d" % j for j in range(int(packed), len(args) + int(packed))]
    ns = {"_h": disp}
    src = "def impl(f, site, %s%s):\n    return _h(%s)\n" % (
        "a0, " if packed else "", ", ".join(params), ", ".join(params))
    return exec_source("impl", src, ns, "checkpoint call")


# ---------------------------------------------------------------------- packing
def _floats(argtypes):
    """Positions of the float and float-array operands (those packed) and the NumPy dtype
    of the packed copy: the widest float among them, to which each converts exactly."""
    at = [j for j, t in enumerate(argtypes) if _accepted_result(types.unliteral(t))]
    dtypes = [np.dtype(str(types.unliteral(argtypes[j]).dtype
                           if isinstance(argtypes[j], types.Array) else argtypes[j]))
              for j in at]
    return at, (np.result_type(*dtypes) if dtypes else np.dtype(np.float64))


def _pack_lines(exprs, argtypes, dtype):
    """Source lines setting ``_w`` to the float items of ``exprs`` (of ``argtypes``) one
    after the other."""
    at, _ = _floats(argtypes)
    size = " + ".join(["0"] + ["%s.size" % exprs[j] if isinstance(argtypes[j], types.Array)
                               else "1" for j in at])
    lines = ["_w = np.empty(%s, _dt)" % size, "_o = 0"]
    for j in at:
        if isinstance(argtypes[j], types.Array):
            lines += ["_w[_o:_o + %s.size] = np.ravel(%s)" % (exprs[j], exprs[j]),
                      "_o += %s.size" % exprs[j]]
        else:
            lines += ["_w[_o] = %s" % exprs[j], "_o += 1"]
    return lines


def _function(name, params, lines, ns):
    ns = dict(ns, np=np)
    body = "".join("    %s\n" % s for s in lines)
    return exec_source(name, "def %s(%s):\n%s" % (name, params, body), ns, "checkpoint call")


def _pack_impl(args):
    """``checkpoint_pack_<n>``: the float operands, flattened into one 1-d array."""
    exprs = ["a%d" % j for j in range(len(args))]
    _, dtype = _floats(args)
    return _function("impl", ", ".join(exprs),
                     _pack_lines(exprs, args, dtype) + ["return _w"], {"_dt": dtype})


def checkpoint_unpack(g, args, j):
    """Operand ``j``'s piece of ``g``, the adjoint of the packed copy of ``args``, in
    ``args[j]``'s shape and type (Numba code only)."""
    raise NotImplementedError("checkpoint_unpack is called from Numba code only")


def checkpoint_vjp_packed(g, f, args):
    """The cotangents of ``f``'s float arguments at ``args`` for the cotangent ``g`` of
    its result, flattened as ``checkpoint_pack`` flattens ``args`` (Numba code only)."""
    raise NotImplementedError("checkpoint_vjp_packed is called from Numba code only")


RUNTIME["checkpoint_unpack"] = checkpoint_unpack
RUNTIME["checkpoint_vjp_packed"] = checkpoint_vjp_packed


@overload(checkpoint_unpack, inline="always", prefer_literal=True)
def _checkpoint_unpack_impl(g, args, j):
    if not (isinstance(args, types.BaseTuple) and isinstance(j, types.IntegerLiteral)):
        return None
    j = j.literal_value
    at, _ = _floats(tuple(args))
    t = types.unliteral(args[j])
    if j not in at:
        return lambda g, args, j: 0.0        # not differentiated
    offset = " + ".join(["0"] + ["args[%d].size" % k if isinstance(args[k], types.Array)
                                 else "1" for k in at if k < j])
    if isinstance(t, types.Array):
        piece = "g[_o:_o + args[%d].size].reshape(args[%d].shape)" % (j, j)
        if np.dtype(str(t.dtype)) != np.dtype(str(g.dtype)):
            piece += ".astype(np.%s)" % t.dtype
    else:
        piece = "np.%s(g[_o])" % t
    return _function("impl", "g, args, j", ["_o = %s" % offset, "return " + piece], {})


@overload(checkpoint_vjp_packed, inline="always")
def _checkpoint_vjp_packed_impl(g, f, args):
    if not isinstance(args, types.BaseTuple):
        return None
    argtypes = tuple(args)
    _, dtype = _floats(argtypes)
    exprs = ["_ct[%d]" % j for j in range(len(argtypes))]
    lines = ["_ct = _vjp_call_call(f, args + (g,))"] + _pack_lines(exprs, argtypes, dtype)
    return _function("impl", "g, f, args", lines + ["return _w"],
                     {"_vjp_call_call": _vjp_call_call, "_dt": dtype})


# ---------------------------------------------------------------------- the adjoint
def checkpoint_vjp(g, f, args):
    """The cotangents of ``f``'s arguments at ``args`` for the cotangent ``g`` of its
    result: a tuple with one entry per argument (Numba code only)."""
    raise NotImplementedError("checkpoint_vjp is called from Numba code only")


RUNTIME["checkpoint_vjp"] = checkpoint_vjp


@overload(checkpoint_vjp, inline="always")
def _checkpoint_vjp_impl(g, f, args):
    if not isinstance(args, types.BaseTuple):
        return None

    def impl(g, f, args):
        return _vjp_call_call(f, args + (g,))
    return impl


__all__ = ["checkpoint_call", "checkpoint_pack", "checkpoint_packed_call",
           "checkpoint_unpack", "checkpoint_vjp", "checkpoint_vjp_packed",
           "gradient_function_of", "rewrite_call"]


register_call_rewriter(_rewrite_site)
