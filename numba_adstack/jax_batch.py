"""Loops over a batch in Numba for :mod:`numba_adstack.jax` under ``jax.vmap``.

A batched callback receives every element at once. Calling ``f`` (or ``f.vjp_call``)
from Python for each costs microseconds of dispatch and argument checking per element,
more than a small ``f`` itself; here one compiled loop calls ``f``, or the compiled
backward of ``f``'s vjp (:mod:`numba_adstack.ad.dispatch.vjp`), once per element. Operands carry a
leading axis of the batch's length, or of length 1 for one shared by every element.

The backward is generated for exact argument types: the loop is used only when each
element has the types of the single call (checked before the first element runs);
otherwise, and for a parallel or non-trivially laid out backward, the caller loops in
Python.
"""
import threading

import numpy as np
from numba import njit, typeof
from numba.core import types
from numba.core.errors import NumbaError

from .ad.dispatch.backward import SEED_TYPES
from .ad.generated_source import exec_source
from .ad.dispatch.vjp import signature_for

_lock = threading.Lock()
SHAPE_ERROR = ("numba_adstack.jax.function: an output of f has a shape other than the "
                "one given to JAX (result_shape, or the output for arrays of ones)")
_loops = {}


def primal(f, args, static, operands, n, out_leaves):
    """``f`` over the batch: one array of shape ``(n,) + leaf.shape`` per leaf of
    ``out_leaves`` (``jax.ShapeDtypeStruct``), or None where the loop cannot be used."""
    call_args = _call_args(args, static, operands)
    try:
        argtypes = tuple(typeof(a) for a in _element(call_args, static))
        f.compile(argtypes)
        out_type = f.overloads[argtypes].signature.return_type
    except (NumbaError, TypeError, ValueError):    # the single calls say why
        return None
    paths = _leaf_paths(out_type)
    if len(paths) != len(out_leaves) or any(
            (t.ndim if isinstance(t, types.Array) else 0) != len(s.shape)
            for (p, t), s in zip(paths, out_leaves)):
        return None
    # Arrays of the dtypes f returns, converted to JAX's after the loop.
    outs = [np.empty((n,) + tuple(s.shape), _dtype(t)) for (p, t), s in zip(paths, out_leaves)]
    # f may write into its arguments: each call gets its own copy of an array element.
    owned = tuple(k for k, a in enumerate(call_args) if k not in static and a.ndim > 1)
    leaves = tuple((p, isinstance(t, types.Array)) for p, t in paths)
    loop = _loop("primal", len(args), static, leaves, f, owned=owned)
    loop(n, *call_args, *outs)
    return [o.astype(s.dtype, copy=False) for o, s in zip(outs, out_leaves)]


def vjp(f, args, static, operands, cotangents, n, in_leaves, diff):
    """``f.vjp_call`` over the batch: the input cotangents of the dynamic arguments
    ``diff`` (one array ``(n,) + leaf.shape`` per leaf of ``in_leaves``), or None."""
    call_args = _call_args(args, static, operands)
    element = _element(call_args, static)
    sig = signature_for(f, element)
    bw = sig.backward
    if not bw.layout.trivial or bw.parallel or len(cotangents) != len(sig.leaves):
        return None
    cts = [np.array(c, dtype=_dtype(t), order="C") for c, (p, kind, t)
           in zip(cotangents, sig.leaves)]
    element = tuple(element) + tuple(c[0] for c in cts)
    if tuple(typeof(a) for a in element) != bw.flat_types:
        return None
    grads = bw.njit_fn.overloads[bw.flat_types + SEED_TYPES].signature.return_type[1]
    positions = [k for k in range(len(args)) if k not in static]
    # The gradients the backward returns (None for arguments left out by wrt=).
    outs = {positions[j]: np.zeros((n,) + tuple(s.shape), _dtype(grads[positions[j]]))
            for j, s in zip(diff, in_leaves)
            if not isinstance(grads[positions[j]], types.NoneType)}
    taken = tuple(outs)
    loop = _loop("vjp", len(args), static, taken, bw.njit_fn, n_cts=len(cts))
    loop(n, *call_args, *cts, *outs.values())
    return [outs[positions[j]].astype(s.dtype, copy=False) if positions[j] in outs
            else np.zeros((n,) + tuple(s.shape), s.dtype) for j, s in zip(diff, in_leaves)]


def _call_args(args, static, operands):
    """The loop's arguments: static ones as they are, the others as writable C arrays
    whose elements have the types of the single call (a 0-d float is a Python float,
    so float64; a 0-d integer an int64)."""
    operands = iter(operands)
    out = []
    for k, a in enumerate(args):
        if k in static:
            out.append(a)
            continue
        v = next(operands)
        if v.ndim == 1:
            v = np.array(v, dtype=np.asarray(v[0].item()).dtype)
        out.append(np.array(v, order="C"))
    return out


def _element(call_args, static):
    return [a if k in static else a[0] for k, a in enumerate(call_args)]


def _dtype(t):
    return np.dtype(str(t.dtype if isinstance(t, types.Array) else t))


def _leaf_paths(t, path=()):
    """``[(path, type)]`` of the leaves of an output of Numba type ``t``."""
    if isinstance(t, types.BaseTuple):
        return [leaf for k, u in enumerate(t) for leaf in _leaf_paths(u, path + (k,))]
    return [(path, t)]


def _loop(kind, nargs, static, outputs, callee, n_cts=0, owned=()):
    """The compiled loop for one kind, argument count, static positions and outputs (leaf
    paths of ``f``'s value, with whether each is an array, or the positions of the
    gradients kept); ``owned``: the
    arguments whose elements are copied before the call."""
    key = (kind, nargs, static, outputs, callee, n_cts, owned)
    with _lock:
        if key not in _loops:
            _loops[key] = njit(_loop_source(kind, nargs, static, outputs, callee, n_cts,
                                            owned))
        return _loops[key]


def _loop_source(kind, nargs, static, outputs, callee, n_cts, owned):
    params = ["a%d" % k for k in range(nargs)]
    items = [p if k in static else "%s[b %% %s.shape[0]]" % (p, p)
             for k, p in enumerate(params)]
    cts = ["c%d" % k for k in range(n_cts)]
    outs = ["o%d" % k for k in range(len(outputs))]
    if kind == "primal":
        items = ["%s.copy()" % i if k in owned else i for k, i in enumerate(items)]
        call = "_callee(%s)" % ", ".join(items)
        stores = []
        for o, (path, array) in zip(outs, outputs):
            leaf = "r" + "".join("[%d]" % i for i in path)
            if array:       # a shape other than the one declared to JAX is an error
                stores += ["        if %s.shape != %s.shape[1:]:" % (leaf, o),
                           "            raise ValueError(%r)" % SHAPE_ERROR]
            stores.append("        %s[b] = %s" % (o, leaf))
    else:
        call = "_callee(%s)[1]" % ", ".join(items + ["%s[b %% %s.shape[0]]" % (c, c)
                                                     for c in cts] + ["1.0", "False"])
        stores = ["        %s[b] = r[%d]" % (o, k) for o, k in zip(outs, outputs)]
    source = "\n".join(["def _batch_loop(n, %s):" % ", ".join(params + cts + outs),
                        "    for b in range(n):",
                        "        r = %s" % call] + stores) + "\n"
    return exec_source("_batch_loop", source, {"_callee": callee}, "jax.vmap %s" % kind)
