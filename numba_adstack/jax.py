"""JAX interop: a ``grad_jit`` function as a ``jax.custom_vjp`` over ``jax.pure_callback``.

``numba_adstack.jax.function(f)`` returns a JAX function: it may be called inside
``jax.jit``, ``jax.grad``, ``jax.vjp`` and ``jax.vmap``. Its forward is ``f`` run on the
host through ``jax.pure_callback``, its reverse ``f.vjp_call`` with JAX's cotangent.
Arguments listed in ``static_argnums`` (integers such as a number of steps) are passed to
``f`` as they are and are not differentiated. Install with ``pip install ".[jax]"`` (from the
repository's root).

``pure_callback`` needs the output's shapes and dtypes while JAX traces: by default they
are found by running ``f`` once on arrays of ones of the arguments' shapes and dtypes (so
the shapes of the output may depend on those shapes and on the static arguments only);
``result_shape`` (a ``jax.ShapeDtypeStruct`` tree, or a function of the arguments
returning one) gives them instead. The dtypes are JAX's canonical ones: without
``jax_enable_x64`` a float64 output of ``f`` reaches JAX as float32, and its cotangent,
float32 too, is converted back to float64 for ``f.vjp_call``.

Under ``jax.vmap`` each callback receives the whole batch (``vmap_method="expand_dims"``:
unbatched operands keep a leading axis of size 1) and runs it in one Numba loop that
calls ``f``, or the backward of its vjp, once per element (:mod:`.jax_batch`).
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import jax_batch
from .ad.dispatch.vjp import signature_for

__all__ = ["function"]


def function(f, static_argnums=(), result_shape=None):
    """``f`` (a ``grad_jit`` function) as a differentiable JAX function."""
    if not hasattr(f, "vjp_call"):
        raise TypeError("numba_adstack.jax.function needs a grad_jit function, got %r" % (f,))
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    static = tuple(sorted(static_argnums))
    name = f.py_func.__qualname__
    shapes = {}

    def output_shape(args):
        if result_shape is not None:
            return result_shape(*args) if callable(result_shape) else result_shape
        key = tuple(a if k in static else (np.shape(a), jnp.result_type(a))
                    for k, a in enumerate(args))
        if key not in shapes:
            probe = [a if k in static else np.ones(np.shape(a), _host_dtype(a))
                     for k, a in enumerate(args)]
            shapes[key] = _shape_tree(f(*_host_args(probe, static)))
        return shapes[key]

    def run(args):
        spec = output_shape(args)
        dynamic = [a for k, a in enumerate(args) if k not in static]
        spec_leaves, tree = jax.tree_util.tree_flatten(spec)

        def one(values):
            out = f(*_host_args(_merge(args, static, values), static))
            return jax.tree_util.tree_leaves(out)

        def host(*values):
            leaves = _over_batch(one, values, [np.ndim(a) for a in dynamic], spec_leaves,
                                 lambda ops, n: jax_batch.primal(f, args, static, ops, n,
                                                                 spec_leaves))
            return jax.tree_util.tree_unflatten(tree, leaves)
        return jax.pure_callback(host, spec, *dynamic, vmap_method="expand_dims")

    @functools.partial(jax.custom_vjp, nondiff_argnums=static)
    def fn(*args):
        return run(args)

    def fwd(*args):
        return run(args), tuple(a for k, a in enumerate(args) if k not in static)

    def bwd(*rest):
        statics, (dynamic, g) = rest[:-2], rest[-2:]
        args = _merge_static(statics, static, dynamic)
        spec = output_shape(args)
        spec_leaves, tree = jax.tree_util.tree_flatten(spec)
        g_leaves = jax.tree_util.tree_leaves(g)
        floating = [k for k, s in enumerate(spec_leaves) if jnp.issubdtype(s.dtype, jnp.floating)]
        # Cotangents for the float arguments; the others (integers) get None, JAX's zero.
        diff = [j for j, a in enumerate(dynamic)
                if jnp.issubdtype(jnp.result_type(a), jnp.floating)]
        in_spec = [jax.ShapeDtypeStruct(np.shape(dynamic[j]), jnp.result_type(dynamic[j]))
                   for j in diff]

        def one(values):
            vals, gs = values[:len(dynamic)], values[len(dynamic):]
            flat = [None] * len(spec_leaves)
            for k, v in zip(floating, gs):
                flat[k] = np.asarray(v) if np.ndim(v) else float(v)
            full = _host_args(_merge(args, static, vals), static)
            # JAX's cotangent has the output's canonical dtype (float32 without
            # jax_enable_x64); f.vjp_call takes the dtype f returns.
            cotangent = signature_for(f, full).cast_cotangent(
                jax.tree_util.tree_unflatten(tree, flat))
            cts = f.vjp_call(*full, cotangent)
            dyn_cts = [c for k, c in enumerate(cts) if k not in static]
            return [np.zeros(s.shape, s.dtype) if dyn_cts[j] is None else dyn_cts[j]
                    for s, j in zip(in_spec, diff)]

        ndims = [np.ndim(a) for a in dynamic] + [len(spec_leaves[k].shape) for k in floating]

        def host(*values):
            return tuple(_over_batch(
                one, values, ndims, in_spec,
                lambda ops, n: jax_batch.vjp(f, args, static, ops[:len(dynamic)],
                                             ops[len(dynamic):], n, in_spec, diff)))
        got = iter(jax.pure_callback(host, tuple(in_spec), *dynamic,
                                     *[g_leaves[k] for k in floating],
                                     vmap_method="expand_dims"))
        return tuple(next(got) if j in diff else None for j in range(len(dynamic)))

    fn.defvjp(fwd, bwd)
    functools.update_wrapper(fn, f.py_func)
    fn.__qualname__ = name
    return fn


def _over_batch(one, values, ndims, spec_leaves, loop):
    """``one(values)`` (a list of leaves) as arrays of ``spec_leaves``' shapes and dtypes.
    Under ``jax.vmap``, ``values`` have leading batch axes beyond ``ndims`` (of size 1
    for an operand not mapped): they are collapsed into one, and ``loop(operands, n)``
    runs the batch in Numba (:mod:`.jax_batch`), or, where it returns None, ``one`` runs
    once per element."""
    # The callback gets JAX arrays: as NumPy arrays (no copy on the CPU), an element is a
    # view, not a JAX operation.
    values = [np.asarray(v) for v in values]
    extra = {np.ndim(v) - n for v, n in zip(values, ndims)}
    if extra in (set(), {0}):
        return [_leaf(v, s) for v, s in zip(one(values), spec_leaves)]
    nb, = extra
    batch = np.broadcast_shapes(*[np.shape(v)[:nb] for v in values])
    n = int(np.prod(batch))
    operands = [v.reshape((1,) + v.shape[nb:]) if v.shape[:nb] == (1,) * nb else
                np.broadcast_to(v, batch + v.shape[nb:]).reshape((n,) + v.shape[nb:])
                for v in values]
    out = loop(operands, n)
    if out is None:
        out = [np.empty((n,) + tuple(s.shape), s.dtype) for s in spec_leaves]
        for b in range(n):
            for o, v, s in zip(out, one([v[b % v.shape[0]] for v in operands]), spec_leaves):
                o[b] = _leaf(v, s)
    return [o.reshape(batch + tuple(s.shape)) for o, s in zip(out, spec_leaves)]


def _leaf(v, s):
    v = np.asarray(v, s.dtype)
    if v.shape != tuple(s.shape):
        raise ValueError(jax_batch.SHAPE_ERROR)
    return v


def _merge(args, static, values):
    """The full argument list: static arguments from ``args``, the others from ``values``."""
    values = iter(values)
    return [a if k in static else next(values) for k, a in enumerate(args)]


def _merge_static(statics, static, dynamic):
    n = len(static) + len(dynamic)
    statics, dynamic = iter(statics), iter(dynamic)
    return [next(statics) if k in static else next(dynamic) for k in range(n)]


def _host_dtype(a):
    return np.dtype(jnp.result_type(a))


def _host_args(args, static):
    """What ``f`` takes: NumPy arrays, and Python floats for 0-d float arrays. JAX's
    buffers are read-only: ``f`` gets writable copies (the types it is compiled for
    outside JAX, and room for a function that writes into its arguments)."""
    out = []
    for k, a in enumerate(args):
        if k not in static:
            a = np.array(a)
            if a.ndim == 0:
                a = a.item()
        out.append(a)
    return out


def _shape_tree(out):
    if isinstance(out, tuple):
        return tuple(_shape_tree(v) for v in out)
    a = np.asarray(out)
    return jax.ShapeDtypeStruct(a.shape, jax.dtypes.canonicalize_dtype(a.dtype))
