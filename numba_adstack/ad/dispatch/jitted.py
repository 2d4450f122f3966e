"""Gradients called from jitted code: ``f.grad``, ``f.value_and_grad``, ``f.vjp_call`` and
``f.jvp`` inside ``@numba.njit`` functions, and as function values.

Inside nopython code a ``grad_jit`` function is a ``types.Dispatcher``, as any Numba
function, so calling it runs the primal. Its attributes ``grad``, ``value_and_grad``,
``vjp_call`` and ``jvp`` are typed by an attribute template on ``types.Dispatcher``: each is
``types.Dispatcher(m)``, where ``m`` is one small njit function per gradient function and
attribute (:func:`method_dispatcher`), and the attribute is lowered as a dummy value. The
call is then an ordinary call of ``m``, which Numba compiles for the argument types at the
call site. ``m`` calls an ``@overload`` (``_grad_call`` and friends) whose typing builds the
backward of those types (the same :class:`~.backward.Backward` as the Python call, serial) and
returns an implementation, generated per signature, that flattens tuple arguments, calls
the backward's njit function and regroups its result exactly as the Python call does.
The caller's library links the backward's machine code, so ``cache=True`` callers hold it
and ``prange`` bodies call it like any function.

``m`` being a Numba function, ``f.grad`` is also a value: passed as an argument to a
jitted function (from jitted code or from Python, where the bound method ``f.grad`` types
as the same dispatcher).
"""
import inspect
import threading
import types as pytypes

import numpy as np
from numba import njit
from numba.core import types
from numba.core.errors import TypingError
from numba.core.extending import overload, typeof_impl
from numba.core.imputils import impl_ret_untracked, lower_getattr
from numba.core.typing.templates import AttributeTemplate, infer_getattr

from ...errors import AdjointArgumentError
from . import vjp as _vjp
from .into import IntoError, into_backward, jitted_buffers
from . import grad_functions
from .backward import Backward
from ..generated_source import exec_source
from ..tangent.jvp import jvp_for
from ..capture.specialize import _FUNC, _LEAF, _TUPLE, layout_of

KINDS = ("grad", "value_and_grad", "vjp_call", "jvp", "grad_into")
_lock = threading.RLock()


# ---------------------------------------------------------------------- one per attribute
def method_dispatcher(disp, kind):
    """The njit function that ``disp.<kind>`` is inside jitted code, made once."""
    methods = disp.__dict__.setdefault("_jit_methods", {})
    m = methods.get(kind)
    if m is None:
        with _lock:
            m = methods.get(kind)
            if m is None:
                m = methods[kind] = _make_method(disp, kind)
    return m


def _make_method(disp, kind):
    py_func = disp.py_func
    code = py_func.__code__
    plain = not (code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)) and \
        code.co_kwonlyargcount == 0
    defaults = None
    if kind == "jvp":
        params, packed = "args, tangents", "args, tangents"
    elif kind in ("grad", "value_and_grad", "grad_into") and plain:
        # f's own parameters: keywords and defaults bind as in the Python call.
        names = list(code.co_varnames[:code.co_argcount])
        params = ", ".join(names)
        packed = "(%s)" % "".join(n + ", " for n in names)
        defaults = py_func.__defaults__
    else:
        params, packed = "*args", "args"
    if kind == "grad_into":     # the buffers first (a name no parameter has)
        params, packed = "_nad_out, " + params, "_nad_out, " + packed
    source = "def %s(%s):\n    return _nad_call(_nad_f, %s)\n" % (kind, params, packed)
    ns = {"_nad_call": _CALLS[kind], "_nad_f": disp}
    fn = exec_source(kind, source, ns, "%s.%s" % (py_func.__qualname__, kind))
    fn.__defaults__ = defaults
    fn.__qualname__ = "%s.%s" % (py_func.__qualname__, kind)
    options = {k: v for k, v in disp.backward_options.items() if k not in ("cache",)}
    m = njit(inline="always", **options)(fn)
    m._numba_adstack_derivative = (disp, kind)
    return m


def derivative_of(obj):
    """``(grad_jit function, attribute)`` when ``obj`` is the jitted form of a gradient
    attribute (``f.grad`` inside jitted code), else None."""
    return getattr(obj, "_numba_adstack_derivative", None)


# ---------------------------------------------------------------------- backwards
def serial_backward(disp, argtypes):
    """The :class:`~.backward.Backward` of ``disp`` for ``argtypes`` that a jitted caller links:
    the Python call's own, or a serial one for a ``parallel=True`` function (the caller may
    itself run it inside ``prange``, and an exception in a parallel region loses its
    type). With ``checkpoint="auto"``, a backward whose loops the memory budget guards is
    replaced by its ``"fit"`` variant: a jitted caller cannot make the call again when
    the guard fires. There a counted loop is checkpointed with segments as long as half
    the budget allows (a loop that fits is one segment), and a loop of unknown trip count
    keeps its history until it would pass the budget, dropping it and going on by the
    online schedule only then (a loop that fits runs once)."""
    if not disp.targetoptions.get("parallel"):
        bw = disp.backward_for_types(argtypes)
    else:
        serial = disp.__dict__.setdefault("_jit_backwards", {})
        with _lock:
            bw = serial.get(argtypes)
            if bw is None:
                bw = serial[argtypes] = Backward(disp, argtypes, parallel=False)
    if bw.guarded:
        with _lock:
            return bw.checkpointed("fit")
    return bw


def _unliteral(t):
    if isinstance(t, types.BaseTuple) and not isinstance(t, (types.NamedTuple,
                                                           types.NamedUniTuple)):
        return types.BaseTuple.from_types([_unliteral(u) for u in t])
    return types.unliteral(t)


def _argtypes(args):
    return tuple(_unliteral(t) for t in args)


# ---------------------------------------------------------------------- generated source
def _flat_reads(layout, root):
    """For each flat argument of the backward, the expression that reads it from the
    tuple ``root`` of the caller's arguments."""
    return ["%s%s" % (root, "".join("[%d]" % i for i in path))
            for path in layout.leaf_paths()]


def _tuple_source(items):
    return "(%s)" % "".join(s + ", " for s in items)


def _regrouped(layout, grads, wrt, nargs=None):
    """Source of the gradient tuple, one entry per argument (the first ``nargs``), from the
    backward's flat gradient tuple ``grads``: ``Backward.__call__``'s regrouping."""
    def walk(tree):
        if tree[0] == _LEAF:
            return "%s[%d]" % (grads, tree[1])
        if tree[0] == _FUNC:
            return "None"
        return _tuple_source([walk(sub) for sub in tree[1]])
    trees = layout.trees if nargs is None else layout.trees[:nargs]
    return _tuple_source([walk(t) if wrt is None or k in wrt else "None"
                          for k, t in enumerate(trees)])


def _implementation(name, params, body, namespace):
    source = "def %s(%s):\n%s" % (name, params, "".join("    %s\n" % s for s in body))
    return exec_source(name, source, dict(namespace, np=np,
                                          AdjointArgumentError=AdjointArgumentError),
                       "jitted " + name)


def _backward_call(bw, reads, value=False):
    # bool(k), not a literal True/False: a literal would compile the backward again for
    # the Literal[bool] type.
    return "_r = _bw(%s)" % ", ".join(list(reads) + ["1.0", "bool(%d)" % value])


# ---------------------------------------------------------------------- the calls
def _grad_call(f, args):
    raise NotImplementedError("only called from jitted code")


def _value_and_grad_call(f, args):
    raise NotImplementedError("only called from jitted code")


def _vjp_call_call(f, args):
    raise NotImplementedError("only called from jitted code")


def _jvp_call(f, args, tangents):
    raise NotImplementedError("only called from jitted code")


def _grad_into_call(f, out, args):
    raise NotImplementedError("only called from jitted code")


def _gradient_impl(f, args, with_value):
    disp = f.dispatcher
    bw = serial_backward(disp, _argtypes(args))
    body = [_backward_call(bw, _flat_reads(bw.layout, "args"), with_value)]
    grads = "_r[1]" if bw.layout.trivial else _regrouped(bw.layout, "_r[1]", bw.arg_wrt)
    body.append("return %s" % ("(_r[0], %s)" % grads if with_value else grads))
    return _implementation("value_and_grad" if with_value else "grad", "f, args", body,
                           {"_bw": bw.njit_fn})


@overload(_grad_call, inline="always")
def _overload_grad(f, args):
    return _gradient_impl(f, args, False)


@overload(_value_and_grad_call, inline="always")
def _overload_value_and_grad(f, args):
    return _gradient_impl(f, args, True)


@overload(_vjp_call_call, inline="always")
def _overload_vjp_call(f, args):
    disp = f.dispatcher
    qualname = disp.py_func.__qualname__
    if len(args) < 1:
        raise TypingError("vjp_call of %s needs the arguments and a cotangent" % qualname)
    argtypes = _argtypes(args)[:-1]
    sig = _vjp_signature(disp, argtypes)
    reads, checks = [], []
    _cotangent_reads(sig, sig.tree, args[-1], "args[%d]" % len(argtypes), (), reads, checks)
    bw = sig.backward
    if bw.parallel:
        bw = serial_backward(sig.sum_function, bw.argtypes)
    flat = _flat_reads(layout_of(disp.py_func, argtypes), "args")
    body = checks + [_backward_call(bw, flat + reads),
                     "return %s" % _regrouped(bw.layout, "_r[1]", bw.arg_wrt, len(argtypes))]
    return _implementation("vjp_call", "f, args", body, {"_bw": bw.njit_fn})


def _vjp_signature(disp, argtypes):
    by_types = disp.__dict__.setdefault("_vjp_signatures", {})
    with _lock:
        if argtypes not in by_types:
            by_types[argtypes] = _vjp.VjpSignature(disp, argtypes)
    return by_types[argtypes]


def _cotangent_reads(sig, tree, t, expr, path, reads, checks):
    """The expressions of the cotangent's leaves as the backward takes them, checked
    against the output's layout at typing (``VjpSignature._walk``, on types)."""
    kind, out = tree
    name = sig._name(path)
    if kind == _vjp._TUPLE:
        if not isinstance(t, types.BaseTuple) or len(t) != len(out):
            raise AdjointArgumentError("cotangent for %s must be a tuple of %d items, like "
                                       "the output; got %s" % (name, len(out), t))
        for k, sub in enumerate(out):
            _cotangent_reads(sig, sub, t[k], "%s[%d]" % (expr, k), path + (k,), reads,
                             checks)
    elif kind == _vjp._NONE:
        if isinstance(t, (types.Number, types.Boolean)):
            checks.append("if %s != 0: raise AdjointArgumentError(%r)"
                          % (expr, "%s is %s and takes no cotangent; pass None (or zero) "
                             "for it" % (name, out)))
        elif t != types.none:
            raise AdjointArgumentError("%s is %s and takes no cotangent; pass None (or zero) "
                                       "for it, not %s" % (name, out, t))
    elif kind == _vjp._FLOAT:
        if not isinstance(t, (types.Float, types.Integer)):
            raise AdjointArgumentError("cotangent for %s must be a float (the output is %s), "
                                       "got %s" % (name, out, t))
        reads.append("float(%s)" % expr)
    else:
        if not isinstance(t, types.Array) or t.dtype != out.dtype or t.ndim != out.ndim:
            raise AdjointArgumentError("cotangent for %s must be an array of %s with %d "
                                       "dimensions (the output is %s), got %s"
                                       % (name, out.dtype, out.ndim, out, t))
        reads.append(expr if t.layout == "C" else "np.ascontiguousarray(%s)" % expr)


@overload(_jvp_call, inline="always")
def _overload_jvp(f, args, tangents):
    disp = f.dispatcher
    qualname = disp.py_func.__qualname__
    if not isinstance(args, types.BaseTuple):
        raise TypingError("jvp of %s takes a tuple of arguments, got %s" % (qualname, args))
    if not isinstance(tangents, types.BaseTuple):
        tangents, troot = types.Tuple([tangents]), "(tangents,)"
    else:
        troot = "tangents"
    if len(tangents) != len(args):
        raise TypingError("%s takes %d arguments; %d tangents were given (one per argument, "
                          "None for those not differentiated)"
                          % (qualname, len(args), len(tangents)))
    layout = layout_of(disp.py_func, _argtypes(args))
    names = disp.py_func.__code__.co_varnames
    flat_tangents, checks = {}, []
    for k, tree in enumerate(layout.trees):
        name = names[k] if k < disp.py_func.__code__.co_argcount else "#%d" % k
        _tangent_reads(qualname, tree, "args[%d]" % k, args[k], "%s[%d]" % (troot, k),
                       tangents[k], name, flat_tangents, checks)
    wrt = frozenset(flat_tangents)
    fn = jvp_for(disp, None, wrt, layout)
    reads = _flat_reads(layout, "args") + [flat_tangents[i] for i in sorted(wrt)]
    body = checks + ["return _jvp(%s)" % ", ".join(reads)]
    return _implementation("jvp", "f, args, tangents", body, {"_jvp": fn.njit_fn})


def _tangent_reads(qualname, tree, value, vt, tangent, tt, name, out, checks):
    """``check_tangents`` of :mod:`..tangent.jvp`, on types: the tangent expression of each
    differentiated flat argument, into ``out``."""
    where = "the tangent of argument %r of %s" % (name, qualname)
    if tt == types.none or (isinstance(tt, types.IntegerLiteral) and tt.literal_value == 0):
        return
    if tree[0] == _FUNC:
        raise TypingError("%s must be None: it is a function" % where)
    if tree[0] == _TUPLE:
        if not isinstance(tt, types.BaseTuple) or len(tt) != len(tree[1]):
            raise TypingError("%s must be a tuple of %d items (or None), as the argument is"
                              % (where, len(tree[1])))
        for j, sub in enumerate(tree[1]):
            _tangent_reads(qualname, sub, "%s[%d]" % (value, j), vt[j],
                           "%s[%d]" % (tangent, j), tt[j], "%s[%d]" % (name, j), out, checks)
        return
    if isinstance(vt, types.Array) and isinstance(vt.dtype, types.Float):
        if not isinstance(tt, types.Array) or tt.dtype != vt.dtype or tt.ndim != vt.ndim:
            raise TypingError("%s must be an array of %s with %d dimensions, got %s"
                              % (where, vt.dtype, vt.ndim, tt))
        checks.append("if %s.shape != %s.shape: raise ValueError(%r)"
                      % (tangent, value, "%s does not have the argument's shape" % where))
        out[tree[1]] = tangent
    elif isinstance(vt, types.Float):
        if not isinstance(tt, (types.Float, types.Integer)):
            raise TypingError("%s must be a float (or None), got %s" % (where, tt))
        out[tree[1]] = "float(%s)" % tangent
    else:
        raise TypingError("%s must be None: the argument is %s, which has no tangent"
                          % (where, vt))


@overload(_grad_into_call, inline="always")
def _overload_grad_into(f, out, args):
    disp = f.dispatcher
    argtypes = _argtypes(args)
    try:
        buffered, buffer_types = jitted_buffers(disp, argtypes, out)
    except IntoError as e:
        raise TypingError(str(e)) from None
    bw = into_backward(disp, argtypes, buffer_types)
    one = len(buffered) == 1 and isinstance(out, types.Array)
    outs = ["out"] if one else ["out[%d]" % j for j in range(len(buffered))]
    params = disp.py_func.__code__.co_varnames
    body = ["if %s.shape != args[%d].shape: raise ValueError(%r)"
            % (o, k, "%s.grad_into: the buffer of %r does not have its argument's shape"
               % (disp.py_func.__qualname__, params[k]))
            for o, k in zip(outs, buffered)]
    body.append("return _bw(%s)" % ", ".join(
        _flat_reads(bw.layout, "args") + outs + ["1.0", "bool(1)"]))
    return _implementation("grad_into", "f, out, args", body, {"_bw": bw.njit_fn})


_CALLS = {"grad": _grad_call, "value_and_grad": _value_and_grad_call,
          "vjp_call": _vjp_call_call, "jvp": _jvp_call, "grad_into": _grad_into_call}
for _kind, _call in _CALLS.items():
    _call._numba_adstack_derivative_call = _kind      # for the capture's refusal


# ---------------------------------------------------------------------- typing, lowering
@infer_getattr
class GradientAttributes(AttributeTemplate):
    """``f.grad`` (and the other three) of a ``grad_jit`` function in nopython code."""
    key = types.Dispatcher

    def generic_resolve(self, ty, attr):
        if attr in KINDS and grad_functions.is_grad_function(ty.dispatcher):
            return types.Dispatcher(method_dispatcher(ty.dispatcher, attr))


def _lower_attribute(context, builder, ty, value):
    # The attribute is a Dispatcher type: its calls are bound at compile time.
    return impl_ret_untracked(context, builder, ty, context.get_dummy_value())


for _kind in KINDS:
    lower_getattr(types.Dispatcher, _kind)(_lower_attribute)


@typeof_impl.register(pytypes.MethodType)
def _typeof_method(val, c):
    """``f.grad`` passed from Python to a jitted function: the same Numba function as
    ``f.grad`` inside jitted code."""
    owner, name = val.__self__, getattr(val.__func__, "__name__", None)
    if grad_functions.is_grad_function(owner) and name in KINDS:
        return types.Dispatcher(method_dispatcher(owner, name))
    return typeof_impl.dispatch(object)(val, c)
