"""JAX interop: a ``grad_jit`` function as a ``jax.custom_vjp`` over ``jax.pure_callback``.

``numba_adstack.jax.function(f)`` returns a JAX function: it may be called inside
``jax.jit``, ``jax.grad`` and ``jax.vjp``. Its forward is ``f`` run on the host through
``jax.pure_callback``, its reverse ``f.vjp_call`` with JAX's cotangent. Arguments listed in
``static_argnums`` (integers such as a number of steps) are passed to ``f`` as they are
and are not differentiated. Install with ``pip install numba_adstack[jax]``.

``pure_callback`` needs the output's shapes and dtypes while JAX traces: by default they
are found by running ``f`` once on arrays of ones of the arguments' shapes and dtypes (so
the shapes of the output may depend on those shapes and on the static arguments only);
``result_shape`` (a ``jax.ShapeDtypeStruct`` tree, or a function of the arguments
returning one) gives them instead.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

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

        def host(*values):
            out = f(*_host_args(_merge(args, static, values), static))
            return jax.tree_util.tree_map(lambda s, v: np.asarray(v, s.dtype), spec, out)
        return jax.pure_callback(host, spec, *dynamic)

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
        in_spec = tuple(jax.ShapeDtypeStruct(np.shape(dynamic[j]), jnp.result_type(dynamic[j]))
                        for j in diff)

        def host(*values):
            vals, gs = values[:len(dynamic)], values[len(dynamic):]
            flat = [None] * len(spec_leaves)
            for k, v in zip(floating, gs):
                flat[k] = np.asarray(v) if np.ndim(v) else float(v)
            cotangent = jax.tree_util.tree_unflatten(tree, flat)
            full = _host_args(_merge(args, static, vals), static)
            cts = f.vjp_call(*full, cotangent)
            dyn_cts = [c for k, c in enumerate(cts) if k not in static]
            return tuple(np.zeros(s.shape, s.dtype) if dyn_cts[j] is None else
                         np.asarray(dyn_cts[j], s.dtype).reshape(s.shape)
                         for s, j in zip(in_spec, diff))
        got = iter(jax.pure_callback(host, in_spec, *dynamic,
                                     *[g_leaves[k] for k in floating]))
        return tuple(next(got) if j in diff else None for j in range(len(dynamic)))

    fn.defvjp(fwd, bwd)
    functools.update_wrapper(fn, f.py_func)
    fn.__qualname__ = name
    return fn


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
