"""PyTorch interop: a ``grad_jit`` function as a ``torch.autograd.Function``.

``numba_adstack.torch.function(f)`` returns a callable that takes CPU tensors (float32 or
float64; other arguments, such as integers, pass through), runs ``f`` on their NumPy
views (copies where ``f`` writes into its arguments), and returns tensors shaped like
``f``'s output (a tensor per array or float, tuples kept). Its ``backward`` is
``f.vjp_call`` with the incoming gradients as the cotangent. Install with
``pip install numba_adstack[torch]``.
"""
import numpy as np
import torch

from .ad.vjp import protected_arguments

__all__ = ["function"]


def function(f):
    """``f`` (a ``grad_jit`` function) as a differentiable PyTorch function."""
    if not hasattr(f, "vjp_call"):
        raise TypeError("numba_adstack.torch.function needs a grad_jit function, got %r"
                        % (f,))
    name = f.py_func.__qualname__

    class NumbaFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, structure, *args):
            np_args = [_to_numpy(a, name, k) for k, a in enumerate(args)]
            # f runs on the tensors' memory, on copies where it writes into it.
            out = f(*protected_arguments(f, np_args))
            leaves = []
            _flatten(out, leaves)
            ctx.structure = _structure(out)
            structure.append(ctx.structure)     # for the caller to regroup the output
            ctx.save_for_backward(*[a for a in args if torch.is_tensor(a)])
            ctx.args = [None if torch.is_tensor(a) else a for a in args]
            ctx.leaf_kinds = [_kind(v) for v in leaves]
            # A float output has the precision of the tensors it came from.
            scalar = next((a.dtype for a in args if torch.is_tensor(a)
                           and a.is_floating_point()), torch.float64)
            tensors = [torch.tensor(v, dtype=scalar) if kind == "float"
                       else torch.from_numpy(np.asarray(v))
                       for v, kind in zip(leaves, ctx.leaf_kinds)]
            ctx.mark_non_differentiable(*[t for t, kind in zip(tensors, ctx.leaf_kinds)
                                          if kind is None])
            return tuple(tensors)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, *grads):
            saved = iter(ctx.saved_tensors)
            tensors = [next(saved) if a is None else None for a in ctx.args]
            np_args = [a if t is None else _to_numpy(t, name, k)
                       for k, (t, a) in enumerate(zip(tensors, ctx.args))]
            flat = [None if kind is None else
                    (float(g) if kind == "float" else g.detach().numpy())
                    for g, kind in zip(grads, ctx.leaf_kinds)]
            cotangent = _unflatten(ctx.structure, iter(flat))
            in_cts = f.vjp_call(*np_args, cotangent)
            out = [None]                        # the structure argument
            for t, g in zip(tensors, in_cts):
                out.append(None if t is None or g is None or not t.requires_grad
                           else torch.as_tensor(np.asarray(g), dtype=t.dtype).reshape(t.shape))
            return tuple(out)

    def call(*args):
        structure = []
        flat = NumbaFunction.apply(structure, *args)
        return _unflatten(structure[0], iter(flat))

    call.__name__ = f.py_func.__name__
    call.__qualname__ = name
    call.__doc__ = f.py_func.__doc__
    return call


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
