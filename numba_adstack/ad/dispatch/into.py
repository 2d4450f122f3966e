"""``f.grad_into(out, *args)``: the gradient added into the caller's buffers.

A gradient called many times from a loop (an SGD epoch calling ``dist.grad(a, b)`` per
pair) spends more on making its result arrays than on computing them. ``grad_into`` takes
the buffers: ``out`` holds one array per differentiated float array argument (the array
itself when there is one, else a tuple of them in argument order), each of its argument's
shape and dtype; the gradient is *added* into them, as PyTorch's ``.grad`` and Enzyme's
shadow arguments accumulate, and the call returns the function's value.

Its backward is a variant of the function's (:class:`..emit.target.AccumulatingTarget`):
the adjoints of those arguments are the buffers, nothing is allocated for them and no
element of them is assigned. It runs serially, as the memory budget's ``"fit"`` variant: a
call that has added into the buffers cannot be made again (after an exception of a
parallel region, or with less memory). Called from Python here, and from jitted code by
:mod:`.jitted`.
"""
import numpy as np
from numba.core import types

from ...errors import AdStackOverflowError
from ..capture.specialize import by_fingerprint, layout_of
from ..typeinfo import is_float, is_float_array
from .backward import Backward, named_memory_error, overflow_error
from .wrt import wrt_indices


class IntoError(TypeError):
    """A ``grad_into`` call the function's arguments or ``out`` do not fit."""


def buffered_arguments(disp, argtypes):
    """The indices of the arguments whose gradients ``grad_into`` adds into buffers: the
    float array arguments ``wrt=`` differentiates. A float scalar among them has nowhere to
    go (IntoError)."""
    name = disp.py_func.__qualname__
    if not layout_of(disp.py_func, argtypes).trivial:
        raise IntoError(
            "%s.grad_into: its arguments include tuples or functions, whose gradients have "
            "no buffer; call %s.grad, or pass their items as separate arguments" % (name, name))
    wrt = wrt_indices(disp.py_func, disp.ad_options["wrt"])
    params = list(disp.py_func.__code__.co_varnames[:len(argtypes)])
    out = []
    for k, t in enumerate(argtypes):
        if wrt is not None and k not in wrt:
            continue
        if is_float_array(t):
            out.append(k)
        elif is_float(t):
            raise IntoError(
                "%s.grad_into adds the gradients of array arguments into buffers, and the "
                "float argument %r is differentiated too; leave it out of wrt= "
                "(grad_jit(..., wrt=[...])) or call %s.value_and_grad"
                % (name, params[k] if k < len(params) else k, name))
    if not out:
        raise IntoError("%s.grad_into: no float array argument is differentiated, so there "
                        "is nothing to add into a buffer; call %s.value_and_grad"
                        % (name, name))
    return out


def into_backward(disp, argtypes, buffer_types):
    """The backward adding into buffers of ``buffer_types``, made once per types."""
    table = disp.__dict__.setdefault("_into_backwards", {})
    key = (tuple(argtypes), tuple(buffer_types))
    bw = table.get(key)
    if bw is None:
        bw = Backward(disp, tuple(argtypes), parallel=False, into=tuple(buffer_types))
        if bw.guarded:
            bw = bw.checkpointed("fit")
        table[key] = bw
    return bw


def grad_into(disp, out, args):
    """``f.grad_into(out, *args)`` from Python."""
    name = disp.py_func.__qualname__
    args = tuple(args)
    # (found again through Numba's argument fingerprints: typeof on every call costs more
    # than the call)
    buffered = by_fingerprint(disp.__dict__.setdefault("_into_buffered", {}), args,
                              lambda argtypes: buffered_arguments(disp, argtypes))
    buffers = _buffers(name, out, [args[k] for k in buffered], buffered, disp)
    bw = by_fingerprint(disp.__dict__.setdefault("_into_calls", {}), args + buffers,
                        lambda types: into_backward(disp, types[:len(args)],
                                                    types[len(args):]))
    try:
        return bw.njit_fn(*args, *buffers, 1.0, True)
    except AdStackOverflowError as e:
        raise overflow_error(disp, e) from None
    except MemoryError as e:
        raise named_memory_error(name, e) from None


def _buffers(name, out, arrays, indices, disp):
    """``out`` as a tuple of buffers, one per array, each checked against its array."""
    if isinstance(out, np.ndarray):
        out = (out,)
    if not isinstance(out, (tuple, list)) or len(out) != len(arrays):
        raise IntoError("%s.grad_into: out must be %s, one per differentiated array "
                        "argument" % (name, "an array" if len(arrays) == 1
                                      else "a tuple of %d arrays" % len(arrays)))
    params = disp.py_func.__code__.co_varnames
    for b, a, k in zip(out, arrays, indices):
        what = "the buffer of %r" % params[k]
        if not isinstance(b, np.ndarray):
            raise IntoError("%s.grad_into: %s must be an array, got %s"
                            % (name, what, type(b).__name__))
        if b.shape != a.shape or b.dtype != a.dtype:
            raise ValueError("%s.grad_into: %s must have its argument's shape and dtype, %s "
                             "%s; got %s %s" % (name, what, a.shape, a.dtype, b.shape, b.dtype))
        if not b.flags.writeable:
            raise ValueError("%s.grad_into: %s is read-only" % (name, what))
    return tuple(out)


def jitted_buffers(disp, argtypes, out):
    """The buffer types of ``out`` (a Numba type) in a jitted call, checked against the
    arguments': ``(indices of the buffered arguments, buffer types)``."""
    name = disp.py_func.__qualname__
    buffered = buffered_arguments(disp, argtypes)
    items = [out] if isinstance(out, types.Array) else \
        list(out) if isinstance(out, types.BaseTuple) else None
    if items is None or len(items) != len(buffered):
        raise IntoError("%s.grad_into: out must be %s, one per differentiated array "
                        "argument; got %s" % (name, "an array" if len(buffered) == 1
                                              else "a tuple of %d arrays" % len(buffered), out))
    for k, b in zip(buffered, items):
        a = argtypes[k]
        if not isinstance(b, types.Array) or b.dtype != a.dtype or b.ndim != a.ndim \
                or not b.mutable:
            raise IntoError("%s.grad_into: the buffer of argument %d must be a writable "
                            "array of %s with %d dimensions, got %s"
                            % (name, k, a.dtype, a.ndim, b))
    return buffered, tuple(items)
