"""Gradients of a loss summed over data larger than one machine, on Dask.

A loss that is a sum over data (a likelihood over events, least squares over samples),
``L(p) = sum_k f(p, chunk_k)``, has the gradient ``sum_k grad f(p, chunk_k)``: each chunk's
value and gradient are computed where the chunk is (a Dask worker), then summed as a tree.

    import numba_adstack.dask as nad_dask
    value, grad = nad_dask.value_and_grad(loss, params, data)   # data: a dask.array

Needs ``pip install ".[dask]"`` (from the repository's root). The tasks run on the distributed
client when one is active (``dask.distributed.Client``), else on Dask's default scheduler;
``scheduler=`` chooses another, as in ``dask.compute``.
"""
import numpy as np

__all__ = ["value_and_grad", "chunks_of"]


def _chunk_value_and_grad(f, params, chunk, args):
    """On a worker: the value and the gradient with respect to ``params`` of one chunk."""
    value, grads = f.value_and_grad(params, chunk, *args)
    return value, grads[0]


def _add(*parts):
    """The sum of ``(value, gradient)`` pairs."""
    value, grad = parts[0]
    for v, g in parts[1:]:
        value = value + v
        grad = grad + g
    return value, grad


def chunks_of(data):
    """The chunks of ``data`` as a list: the blocks of a ``dask.array`` (which must be
    chunked along its first axis only: a chunk holds whole samples), or ``data`` itself,
    a list or tuple of arrays, ``Delayed`` objects or futures."""
    if isinstance(data, (list, tuple)):
        if not data:
            raise ValueError("numba_adstack.dask.value_and_grad: no chunks of data")
        return list(data)
    import dask.array as da
    if isinstance(data, da.Array):
        if any(len(c) > 1 for c in data.chunks[1:]):
            raise ValueError(
                "numba_adstack.dask.value_and_grad: the dask array of shape %s is chunked "
                "along axes other than the first (chunks %s); a chunk must hold whole "
                "samples: rechunk it, data.rechunk({%s})"
                % (data.shape, data.chunks,
                   ", ".join("%d: -1" % ax for ax in range(1, data.ndim))))
        return list(data.to_delayed().ravel())
    raise TypeError("numba_adstack.dask.value_and_grad: data must be a dask.array or a "
                    "list of chunks, not %s" % type(data).__name__)


def value_and_grad(f, params, data, *args, split_every=8, scheduler=None):
    """``(sum_k f(params, c_k, *args), sum_k d f(params, c_k, *args) / d params)`` over
    the chunks ``c_k`` of ``data`` (see :func:`chunks_of`), computed on Dask's workers:
    each chunk's ``f.value_and_grad`` where the chunk is, then a tree of sums of
    ``split_every`` parts each.

    ``f`` is a ``grad_jit`` function taking the parameters first and a chunk second
    (``wrt=("params",)`` spares the workers the gradients of the data); ``args`` are
    passed to every call. The gradient has the type of ``f``'s gradient for ``params``
    (an array for an array, a float for a float).
    """
    import dask
    if not hasattr(f, "value_and_grad"):
        raise TypeError("numba_adstack.dask.value_and_grad: %r is not a grad_jit function "
                        "(decorate it with @numba_adstack.grad_jit)" % (f,))
    if split_every < 2:
        raise ValueError("split_every must be at least 2, got %d" % split_every)
    one = dask.delayed(_chunk_value_and_grad, pure=False)
    add = dask.delayed(_add, pure=False)
    args = tuple(args)
    level = [one(f, params, c, args) for c in chunks_of(data)]
    while len(level) > 1:
        level = [add(*level[i:i + split_every]) if len(level[i:i + split_every]) > 1
                 else level[i] for i in range(0, len(level), split_every)]
    value, grad = dask.compute(level[0], scheduler=scheduler)[0]
    if isinstance(grad, np.ndarray) and grad.ndim == 0:
        grad = grad[()]
    return value, grad
