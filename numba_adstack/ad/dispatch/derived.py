"""Hessian-vector products and Jacobians, built on ``jvp``, ``grad`` and ``vjp``.

``hvp`` reads a dispatcher whose function returns a float, the arguments and a direction
``v``; it produces ``H v`` shaped as ``f.grad(*args)``. It is forward over reverse: the
forward-mode rewrite (:mod:`..tangent.jvp_source`) is applied to the generated backward of the
function (the source ``f.inspect_adjoint`` prints, compiled serial). The backward's pushes and pops
become pushes and pops of the tangents on a stack beside each stack of floats, its adjoint
helpers (:mod:`..runtime`) are linear in the adjoints, and the tangent of the gradient it
returns is ``H v``. One generated function per signature and direction pattern; a call
runs it once.

``jacobian`` reads a dispatcher and which arguments to differentiate; it produces a
function of the arguments returning the Jacobian of the result (a float or an array) with
respect to each, shaped ``result.shape + argument.shape``. With fewer inputs than outputs
it is built by columns (one JVP per input element), otherwise by rows: one gradient for a
scalar result, one pullback per output element when the dispatcher has ``vjp``
(``f.vjp(*args) -> (value, pullback)``, ``pullback(cotangent) -> cotangents``); without
``vjp``, by columns.
"""
import numbers

import numpy as np
from numba import typeof
from numba.core import types

from .backward import SEED_TYPES, Backward
from ..typeinfo import is_float, is_float_array
from ..tangent.jvp import JVP, argument_names, check_tangents, jvp_for


def hvp(dispatcher, args, v):
    """``H v`` at ``args`` (see the module docstring): an array for each float array
    argument, a float for each float, None for the others."""
    args = tuple(args)
    checked, wrt, layout = check_tangents(dispatcher, args, v)
    cache = dispatcher.__dict__.setdefault("_hvps", {})
    key = (layout.argtypes, wrt)
    fn = cache.get(key)
    if fn is None:
        # Not under the dispatcher's lock, which building the backward takes: threads
        # calling first at once may each build it, and one is kept.
        fn = cache.setdefault(key, _forward_over_reverse(dispatcher, layout.argtypes, wrt))
    seed = 1.0
    flat = tuple(layout.flatten(args)) if not layout.trivial else args
    (value, grads), (_, hv) = fn(flat + (seed, True), checked + [None, None])
    return hv if layout.trivial else fn.backward.layout.regroup(hv, fn.backward.arg_wrt)


def _forward_over_reverse(dispatcher, argtypes, wrt):
    """The JVP function of the (serial) backward of ``dispatcher`` for ``argtypes``."""
    bw = dispatcher.backward_for_types(argtypes)
    if bw.parallel or "_stencil_vjp_" in bw.source:
        # (serial, and with its stencils reversed operation by operation: their
        # generated pullbacks have no tangent rule)
        bw = Backward(dispatcher, argtypes, parallel=False, stencils=False)
    fn = JVP(bw.njit_fn.py_func, bw.flat_types + SEED_TYPES, wrt, dispatcher)
    fn.backward = bw
    return fn


def hessian(f, argnums=0, *, argnum=None):
    """A function of ``f``'s arguments that returns the Hessian of its (float) result
    with respect to argument ``argnums`` (an index of a float or a float array argument;
    ``argnum`` is the older spelling), shaped ``argument.shape * 2``: one ``hvp`` per
    element of the argument."""
    if not hasattr(f, "hvp"):
        raise TypeError("hessian needs a function decorated with @grad_jit, got %r" % (f,))
    if argnum is not None:
        argnums = argnum
    if not isinstance(argnums, numbers.Integral):
        raise ValueError("hessian of %s: argnums=%r; give one argument index (the Hessian "
                         "of several arguments is not supported)"
                         % (f.py_func.__qualname__, argnums))
    argnum, = argument_indices(f, (argnums,), "hessian")

    def hess(*args):
        args = _bound(f, args)
        x = args[argnum]
        if not _is_float_value(x):
            raise TypeError("hessian of %s: argument %r is %s; only float and float array "
                            "arguments are differentiated"
                            % (f.py_func.__qualname__, argument_names(f.py_func)[argnum],
                               typeof(x)))
        cols = []
        for j in range(_size(x)):
            v = [None] * len(args)
            v[argnum] = 1.0 if np.isscalar(x) else _one_hot(x, j)
            cols.append(np.asarray(f.hvp(args, v)[argnum], dtype=np.float64))
        h = np.stack(cols, axis=-1).reshape(np.shape(x) * 2)
        return float(h) if h.ndim == 0 else h
    return hess


def _bound(f, args):
    """``args`` with ``f``'s defaults filled in, as ``f`` binds them."""
    bind = getattr(f, "_all_args", None)
    return tuple(args) if bind is None else tuple(bind(args, {}))


def argument_indices(f, argnums, who):
    """``argnums`` as indices of ``f``'s parameters (negative ones counted as Python
    counts them); a ``ValueError`` naming the parameters for anything else."""
    names = argument_names(f.py_func)
    out = []
    for k in argnums:
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) \
                or not -len(names) <= k < len(names):
            raise ValueError("%s of %s: argnums entry %r is not an argument index of %s(%s); "
                             "give indices from %d to %d"
                             % (who, f.py_func.__qualname__, k, f.py_func.__name__,
                                ", ".join(names), -len(names), len(names) - 1))
        out.append(int(k) % len(names))
    return tuple(out)


# ---------------------------------------------------------------------- jacobian
def _size(x):
    return 1 if np.isscalar(x) else int(np.size(x))


def _is_float_value(x):
    t = typeof(x)
    return is_float(t) or is_float_array(t)


def jacobian(f, argnums=0, mode="auto"):
    """A function of ``f``'s arguments that returns the Jacobian of its result with
    respect to the arguments ``argnums`` (an index: one array; a tuple: a tuple of
    them). ``mode``: ``"auto"`` (forward when the selected inputs are fewer than the
    outputs, reverse otherwise), ``"forward"`` or ``"reverse"``."""
    if not hasattr(f, "jvp"):
        raise TypeError("jacobian needs a function decorated with @grad_jit, got %r" % (f,))
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError("mode must be 'auto', 'forward' or 'reverse', got %r" % (mode,))
    single = isinstance(argnums, numbers.Integral)
    nums = argument_indices(f, (argnums,) if single else tuple(argnums), "jacobian")
    name = f.py_func.__qualname__

    def jac(*args):
        args = _bound(f, args)
        names = argument_names(f.py_func)
        for k in nums:
            if not _is_float_value(args[k]):
                raise TypeError("jacobian of %s: argument %r is %s; only float and float "
                                "array arguments are differentiated"
                                % (name, names[k], typeof(args[k])))
        value = f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        if not _is_float_value(value):
            raise TypeError("jacobian of %s: the result is %s; it must be a float or a "
                            "float array" % (name, typeof(value)))
        n_in = sum(_size(args[k]) for k in nums)
        reverse = _reverse_rows(f, value)
        use = mode
        if mode == "auto":
            use = "forward" if n_in < _size(value) or reverse is None else "reverse"
        if use == "reverse":
            if reverse is None:
                raise NotImplementedError(
                    "jacobian of %s: reverse mode needs a float result or f.vjp; use "
                    "mode='forward'" % name)
            out = reverse(args, nums, value)
        else:
            out = _forward_columns(f, args, nums, value)
        return out[0] if single else tuple(out)
    return jac


def _one_hot(x, j):
    e = np.zeros(np.shape(x), dtype=np.asarray(x).dtype)
    e.flat[j] = 1.0
    return e


def _forward_columns(f, args, nums, value):
    """One JVP per element of each selected argument (the JVP function looked up once
    per argument, the one-hot tangent moved along)."""
    out = []
    for k in nums:
        x = args[k]
        tangents = [None] * len(args)
        tangents[k] = 1.0 if np.isscalar(x) else np.zeros_like(x)
        checked, wrt, layout = check_tangents(f, args, tangents)
        fn = jvp_for(f, args, wrt, layout)
        one_hot = checked[layout.trees[k][1]]        # the flat argument of argument k
        cols = []
        for j in range(_size(x)):
            if not np.isscalar(x):
                one_hot.flat[j - 1] = 0.0
                one_hot.flat[j] = 1.0
            cols.append(np.array(fn(args, checked)[1], dtype=np.float64))
        shape = np.shape(value) + np.shape(x)
        jk = np.stack(cols, axis=-1).reshape(shape) if cols else np.zeros(shape)
        out.append(float(jk) if jk.ndim == 0 else jk)
    return out


def _reverse_rows(f, value):
    """The builder of the Jacobian by rows for this result, or None: a gradient for a
    float result, one VJP per output element when ``f`` has ``vjp``."""
    if np.isscalar(value):
        def by_gradient(args, nums, value):
            grads = f.grad(*args)
            return [grads[k] for k in nums]
        return by_gradient
    vjp = getattr(f, "vjp", None)
    if vjp is None:
        return None

    def by_vjp(args, nums, value):
        _, pullback = vjp(*args)
        rows = {k: [] for k in nums}
        for i in range(value.size):
            cotangents = pullback(_one_hot(value, i))
            for k in nums:
                rows[k].append(np.asarray(cotangents[k], dtype=np.float64))
        return [np.stack(rows[k]).reshape(value.shape + np.shape(args[k])) for k in nums]
    return by_vjp
