"""PyTorch interop: a ``grad_jit`` function as a ``torch.autograd.Function``.

``numba_adstack.torch.function(f)`` returns a callable that takes CPU tensors (float32 or
float64; other arguments, such as integers, pass through), runs ``f`` on their NumPy
views (copies where ``f`` writes into its arguments), and returns tensors shaped like
``f``'s output (a tensor per array or float, tuples kept). Its ``backward`` is
``f.vjp_call`` with the incoming gradients as the cotangent. Install with
``pip install ".[torch]"`` (from the repository's root).

The backward is itself an autograd function (:class:`_Pullback`), so that a gradient
taken with ``create_graph=True`` can be differentiated again. The pullback
``x, g -> J(x)^T g`` is linear in the cotangent ``g``, whose derivative along ``w`` is
``J(x) w``: ``f.jvp``. Its derivative in ``x`` along ``w`` is the Hessian of the float
``<g, f(x)>`` times ``w``: ``hvp`` of the generated function that computes that sum
(:mod:`numba_adstack.ad.dispatch.vjp`). A third derivative raises :class:`ThirdDerivativeError`.
"""
import numpy as np
import torch

from .ad.dispatch.vjp import protected_arguments, signature_for
from .errors import ThirdDerivativeError

__all__ = ["function", "ThirdDerivativeError"]


class _Call:
    """What the autograd functions of one call share: ``f``, the arguments that are not
    tensors (None where there is a tensor), and the output's layout."""

    def __init__(self, f, name, args):
        self.f, self.name = f, name
        self.args = [None if torch.is_tensor(a) else a for a in args]
        self.structure = self.leaf_kinds = None

    def numpy_args(self, tensors):
        """``f``'s arguments: the saved tensors' NumPy views where there were tensors."""
        tensors = iter(tensors)
        return [_to_numpy(next(tensors), self.name, k) if a is None else a
                for k, a in enumerate(self.args)]

    def cotangent(self, grads):
        """The cotangent tree of ``f``'s output from the gradients of its float leaves."""
        grads = iter(grads)
        flat = []
        for kind in self.leaf_kinds:
            g = None if kind is None else next(grads)
            flat.append(g if g is None else float(g) if kind == "float" else
                        g.detach().numpy())
        return _unflatten(self.structure, iter(flat))


def function(f):
    """``f`` (a ``grad_jit`` function) as a differentiable PyTorch function."""
    if not hasattr(f, "vjp_call"):
        raise TypeError("numba_adstack.torch.function needs a grad_jit function, got %r"
                        % (f,))
    name = f.py_func.__qualname__

    class NumbaFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, holder, *args):
            call = _Call(f, name, args)
            np_args = [_to_numpy(a, name, k) for k, a in enumerate(args)]
            # f runs on the tensors' memory, on copies where it writes into it.
            out = f(*protected_arguments(f, np_args))
            leaves = []
            _flatten(out, leaves)
            call.structure = _structure(out)
            call.leaf_kinds = [_kind(v) for v in leaves]
            holder.append(call.structure)       # for the caller to regroup the output
            ctx.call = call
            ctx.save_for_backward(*[a for a in args if torch.is_tensor(a)])
            # A float output has the precision of the tensors it came from.
            scalar = next((a.dtype for a in args if torch.is_tensor(a)
                           and a.is_floating_point()), torch.float64)
            tensors = [torch.tensor(v, dtype=scalar) if kind == "float"
                       else torch.from_numpy(np.asarray(v))
                       for v, kind in zip(leaves, call.leaf_kinds)]
            ctx.mark_non_differentiable(*[t for t, kind in zip(tensors, call.leaf_kinds)
                                          if kind is None])
            return tuple(tensors)

        @staticmethod
        def backward(ctx, *grads):
            saved = ctx.saved_tensors
            float_grads = [g for g, kind in zip(grads, ctx.call.leaf_kinds) if kind]
            cts = iter(_Pullback.apply(ctx.call, len(saved), *saved, *float_grads))
            return (None,) + tuple(None if a is not None else next(cts)
                                   for a in ctx.call.args)

    def call(*args):
        holder = []
        flat = NumbaFunction.apply(holder, *args)
        return _unflatten(holder[0], iter(flat))

    call.__name__ = f.py_func.__name__
    call.__qualname__ = name
    call.__doc__ = f.py_func.__doc__
    return call


class _Pullback(torch.autograd.Function):
    """``(x, g) -> J(x)^T g``: ``f.vjp_call``, one output per tensor argument of ``f`` (None
    for those without a gradient). Differentiable once more (see the module docstring)."""

    @staticmethod
    def forward(ctx, call, n_args, *inputs):
        tensors, grads = inputs[:n_args], inputs[n_args:]
        np_args = call.numpy_args(tensors)
        in_cts = call.f.vjp_call(*np_args, call.cotangent(grads))
        ctx.call, ctx.n_args = call, n_args
        ctx.save_for_backward(*inputs)
        k = [j for j, a in enumerate(call.args) if a is None]
        return tuple(None if g is None or not t.requires_grad else
                     torch.as_tensor(np.asarray(g), dtype=t.dtype).reshape(t.shape)
                     for t, g in zip(tensors, [in_cts[j] for j in k]))

    @staticmethod
    def backward(ctx, *w):
        call, n_args = ctx.call, ctx.n_args
        inputs = ctx.saved_tensors
        tensors, grads = inputs[:n_args], inputs[n_args:]
        np_args = call.numpy_args(tensors)
        # One tangent per argument of f: w where f's tensor argument got a gradient.
        w = iter(w)
        tangents = [None if a is not None else _tangent(next(w), np_args[k])
                    for k, a in enumerate(call.args)]
        out = [None, None] + [None] * len(inputs)
        if any(ctx.needs_input_grad[2:2 + n_args]):
            sig = signature_for(call.f, np_args)
            flat = sig.cotangent_leaves(call.cotangent(grads))
            hv = sig.sum_function.hvp(tuple(np_args) + tuple(flat),
                                      tangents + [None] * len(flat))
            hv = [h for h, a in zip(hv, call.args) if a is None]
            for j, (t, h) in enumerate(zip(tensors, hv)):
                if ctx.needs_input_grad[2 + j] and h is not None:
                    out[2 + j] = torch.as_tensor(np.asarray(h), dtype=t.dtype).reshape(t.shape)
        if any(ctx.needs_input_grad[2 + n_args:]):
            _, jw = call.f.jvp(np_args, tangents)
            leaves = []
            _flatten(jw, leaves)
            float_leaves = [v for v, kind in zip(leaves, call.leaf_kinds) if kind]
            for j, (g, v) in enumerate(zip(grads, float_leaves)):
                if ctx.needs_input_grad[2 + n_args + j]:
                    out[2 + n_args + j] = (torch.zeros_like(g) if v is None else
                                           torch.as_tensor(np.asarray(v), dtype=g.dtype)
                                           .reshape(g.shape))
        if torch.is_grad_enabled() and any(t.requires_grad for t in inputs):
            out = _no_third_derivative(call.name, out, inputs)
        return tuple(out)


def _tangent(w, arg):
    """The tangent of one argument of ``f`` for the ``jvp`` and ``hvp`` calls: None where
    the argument has no gradient, a float for a float argument, an array in the
    argument's dtype otherwise."""
    if w is None:
        return None
    if isinstance(arg, float):
        return float(w)
    return w.detach().numpy().astype(arg.dtype, copy=False).reshape(arg.shape)


def _no_third_derivative(name, out, inputs):
    """``out`` behind a node that refuses to be differentiated, for a graph recorded
    through the second derivative (``create_graph=True``). The node takes the pullback's
    inputs too: it lies on every path from ``out`` to them, so that ``autograd.grad``
    cannot leave it out and return a derivative without its part."""
    live = [k for k, t in enumerate(out) if t is not None]
    guarded = _ThirdDerivative.apply(name, len(live), *[out[k] for k in live], *inputs)
    out = list(out)
    for k, t in zip(live, guarded):
        out[k] = t
    return out


class _ThirdDerivative(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, n_out, *tensors):
        ctx.name = name
        return tuple(t.clone() for t in tensors[:n_out])

    @staticmethod
    def backward(ctx, *grads):
        raise ThirdDerivativeError(
            "%s (numba_adstack.torch.function): derivatives of third order and higher are "
            "not supported; first and second derivatives are (the second through f.hvp and "
            "f.jvp). For higher orders, differentiate the second derivative by finite "
            "differences, or write the function in PyTorch." % ctx.name)


def _to_numpy(a, name, k):
    if not torch.is_tensor(a):
        return a
    if a.device.type != "cpu":
        raise TypeError("%s (numba_adstack.torch.function): argument %d is on %s; "
                        "only CPU tensors are supported" % (name, k, a.device))
    if a.dtype not in (torch.float32, torch.float64) and a.is_floating_point():
        raise TypeError("%s (numba_adstack.torch.function): argument %d is %s; use "
                        "float32 or float64" % (name, k, a.dtype))
    x = a.detach().numpy()
    return x.item() if x.ndim == 0 and x.dtype.kind == "f" else x


def _kind(v):
    """"float", "array" or None (an integer output: no gradient)."""
    if isinstance(v, float):
        return "float"
    if isinstance(v, np.ndarray) and v.dtype.kind == "f":
        return "array"
    if isinstance(v, np.floating):
        return "float"
    return None


def _flatten(out, leaves):
    if isinstance(out, tuple):
        for v in out:
            _flatten(v, leaves)
    else:
        leaves.append(out)


def _structure(out):
    """None for a leaf, a list of structures for a tuple."""
    return [_structure(v) for v in out] if isinstance(out, tuple) else None


def _unflatten(structure, leaves):
    if structure is None:
        return next(leaves)
    return tuple(_unflatten(s, leaves) for s in structure)
