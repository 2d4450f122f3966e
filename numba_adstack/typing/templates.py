"""Typing of the adstack intrinsics.

The signature logic lives in plain functions (``adstack_signature``, ``push_signature``,
...) so that another target's typing registry can wrap them; the templates below register
them in Numba's builtin typing registry, which the CPU target uses.
"""
from numba.core import types
from numba.core.errors import TypingError
from numba.core.typing.templates import AbstractTemplate, infer_global, signature
from numba.core.utils import pysignature

from .. import intrinsics
from .types import AdStackType, ELEMENT_TYPES, STORAGES

_ELEMENT_NAMES = "float32, float64, int32, int64, bool, complex64 or complex128"

#: Callables run before typing any intrinsic call: a target's lowering registers one to
#: install its implementations once the target context exists (installing earlier could
#: happen while Numba is still building that context).
before_typing_hooks = []


def _element_type(ty):
    """The element type named by a dtype argument (np.float64, numba.float64, np.dtype)."""
    if isinstance(ty, types.NumberClass):
        elt = ty.instance_type
    elif isinstance(ty, types.DType):
        elt = ty.dtype
    elif isinstance(ty, types.BooleanLiteral) or ty == types.boolean:
        elt = None
    else:
        elt = None
    if elt is None or elt not in ELEMENT_TYPES:
        what = elt if elt is not None else ty
        raise TypingError("adstack(): element type must be %s, got %s"
                          % (_ELEMENT_NAMES, what))
    return elt


def adstack_signature(args, kws):
    """Signature of ``adstack(dtype, capacity[, storage])``."""
    kws = dict(kws)
    storage_kw = kws.pop("storage", None)
    if kws:
        raise TypingError("adstack(): unexpected keyword argument(s) %s"
                          % ", ".join(sorted(kws)))
    if len(args) not in (2, 3) or (len(args) == 3 and storage_kw is not None):
        raise TypingError("adstack() takes (dtype, capacity, storage='frame')")
    elt = _element_type(args[0])
    cap = args[1]
    if not isinstance(cap, types.IntegerLiteral):
        # Typed with literals first (prefer_literal), so a non-literal is a run-time value.
        raise TypingError("adstack(): capacity must be a compile-time integer constant, "
                          "got %s" % (cap,))
    if cap.literal_value < 1:
        raise TypingError("adstack(): capacity must be positive, got %d"
                          % cap.literal_value)
    storage = "frame"
    st_ty = args[2] if len(args) == 3 else storage_kw
    if st_ty is not None:
        if not isinstance(st_ty, types.StringLiteral):
            raise TypingError("adstack(): storage must be the constant 'frame' or 'heap', "
                              "got %s" % (st_ty,))
        storage = st_ty.literal_value
        if storage not in STORAGES:
            raise TypingError("adstack(): storage must be 'frame' or 'heap', got %r"
                              % storage)
    ret = AdStackType(elt, cap.literal_value, storage)
    if storage_kw is not None:
        return signature(ret, *args, storage_kw).replace(
            pysig=pysignature(intrinsics.adstack))
    return signature(ret, *args)


def launch_stack_signature(args, kws):
    """Signature of ``launch_stack(dtype, K, index, gstack, gmeta)`` (CUDA): a local stack
    of capacity ``K`` when ``K > 0``, else entry ``index`` of the launch's global stacks."""
    if kws or len(args) != 5:
        raise TypingError("launch_stack() takes (dtype, K, index, gstack, gmeta)")
    elt = _element_type(args[0])
    k, index = args[1], args[2]
    if not (isinstance(k, types.IntegerLiteral) and isinstance(index, types.IntegerLiteral)):
        raise TypingError("launch_stack(): K and index must be compile-time integer "
                          "constants, got %s, %s" % (k, index))
    for name, arr in (("gstack", args[3]), ("gmeta", args[4])):
        if not (isinstance(arr, types.Array) and arr.ndim == 1):
            raise TypingError("launch_stack(): %s must be a 1-d array, got %s" % (name, arr))
    if k.literal_value > 0:
        return signature(AdStackType(elt, k.literal_value, "frame"), *args)
    return signature(AdStackType(elt, 1, "global"), *args)


def _check_stack(fname, st):
    if not isinstance(st, AdStackType):
        raise TypingError("%s(): first argument must be an adstack, got %s" % (fname, st))


def _pushable(elt, val):
    """Whether ``val`` can be pushed on a stack of ``elt`` (cast on the way)."""
    if isinstance(val, types.Boolean):
        return True
    if isinstance(val, types.Integer):
        return elt != types.boolean
    if isinstance(val, types.Float):
        return isinstance(elt, (types.Float, types.Complex))
    if isinstance(val, types.Complex):
        return isinstance(elt, types.Complex)
    return False


def push_signature(args, kws):
    if kws or len(args) != 2:
        raise TypingError("push() takes (stack, value)")
    st, val = args
    _check_stack("push", st)
    val = types.unliteral(val)
    if not _pushable(st.dtype, val):
        raise TypingError("push(): cannot push a value of type %s onto an adstack of %s"
                          % (val, st.dtype))
    return signature(types.none, st, val)


def reserve_signature(args, kws):
    if kws or len(args) != 2:
        raise TypingError("reserve() takes (stack, count)")
    st, n = args
    _check_stack("reserve", st)
    n = types.unliteral(n)
    if not isinstance(n, types.Integer):
        raise TypingError("reserve(): the count must be an integer, got %s" % (n,))
    return signature(types.none, st, n)


def _unary(fname, ret):
    def sig(args, kws):
        if kws or len(args) != 1:
            raise TypingError("%s() takes one adstack argument" % fname)
        _check_stack(fname, args[0])
        return signature(ret(args[0]), args[0])
    sig.__name__ = fname + "_signature"
    return sig


pop_signature = _unary("pop", lambda st: st.dtype)
top_signature = _unary("top", lambda st: st.dtype)
size_signature = _unary("size", lambda st: types.int64)
overflowed_signature = _unary("overflowed", lambda st: types.boolean)
clear_signature = _unary("clear", lambda st: types.none)


def _template(func, sig_fn, literal=False):
    class Template(AbstractTemplate):
        key = func
        prefer_literal = literal

        def generic(self, args, kws):
            for hook in before_typing_hooks:
                hook()
            return sig_fn(args, kws)
    Template.__name__ = "AdStack_%s_Template" % func.__name__
    return infer_global(func)(Template)


AdStackTemplate = _template(intrinsics.adstack, adstack_signature, literal=True)
PushTemplate = _template(intrinsics.push, push_signature)
PopTemplate = _template(intrinsics.pop, pop_signature)
TopTemplate = _template(intrinsics.top, top_signature)
SizeTemplate = _template(intrinsics.size, size_signature)
OverflowedTemplate = _template(intrinsics.overflowed, overflowed_signature)
ClearTemplate = _template(intrinsics.clear, clear_signature)
ReserveTemplate = _template(intrinsics.reserve, reserve_signature)
LaunchStackTemplate = _template(intrinsics.launch_stack, launch_stack_signature, literal=True)
