"""Adjoints of linear algebra: ``np.dot`` and ``@``, ``np.outer``, ``np.trace``,
``np.diag``. (``solve``, ``inv`` and ``det`` are array expressions in ``array_rules.py``.)

Each helper returns the contribution to one operand's adjoint, a new C-contiguous array of
that operand's shape (a float for a scalar operand). ``g`` is the result's adjoint.

``add_dot_vjp_a`` / ``add_dot_vjp_b`` add the same contribution into an adjoint array that
exists already (``out``, of the operand's shape, any strides: a view of another adjoint,
``X_bar.T``), with no temporary where the contribution is an outer product: the cost of
the matrix-vector product's adjoint is one read-modify-write pass over ``out``, as in
hand-written code, rather than a fresh array and a second pass to add it. Besides ``out``
they read only primal values and the result's adjoint ``g`` (the adjoint of a fresh array,
never an operand's), so ``out`` may be any operand's adjoint, or the same one twice
(``np.dot(A, A.T)`` adds into ``A_bar`` and ``A_bar.T``).
"""
import numpy as np
from numba import types
from numba.core.errors import TypingError

from .vjp_core import by_type, internal, is_scalar


def _ndims(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)) \
            or a.ndim not in (1, 2) or b.ndim not in (1, 2):
        raise TypingError("dot: operands of types %s, %s" % (a, b))
    return a.ndim, b.ndim


@by_type
def like_dtype(g, a):
    """``g`` in the dtype of the array ``a``: itself when it already is, else a converted
    copy. Numba's BLAS products take operands of one dtype only, and the adjoint of a
    float32 product may come as float64 (a float64 seed, a float64 scalar factor)."""
    if not isinstance(g, types.Array) or g.dtype == a.dtype:
        return lambda g, a: g
    return lambda g, a: g.astype(a.dtype)


@by_type
def dot_vjp_a(g, a, b):
    """``y = np.dot(a, b)`` or ``a @ b`` (1-d and 2-d operands): the adjoint of ``a``.
    vector.vector: ``g * b``; matrix.vector: ``outer(g, b)``; vector.matrix: ``b @ g``;
    matrix.matrix: ``g @ b.T``."""
    nd = _ndims(a, b)
    if nd == (1, 1):
        return lambda g, a, b: np.ascontiguousarray(g * b)
    if nd == (2, 1):
        return lambda g, a, b: np.outer(g, b)
    if nd == (1, 2):
        return lambda g, a, b: np.dot(b, like_dtype(g, b))
    return lambda g, a, b: np.dot(like_dtype(g, b), b.T)


@by_type
def dot_vjp_b(g, a, b):
    """``y = np.dot(a, b)`` or ``a @ b``: the adjoint of ``b``. vector.vector: ``g * a``;
    matrix.vector: ``a.T @ g``; vector.matrix: ``outer(a, g)``; matrix.matrix:
    ``a.T @ g``."""
    nd = _ndims(a, b)
    if nd == (1, 1):
        return lambda g, a, b: np.ascontiguousarray(g * a)
    if nd == (1, 2):
        return lambda g, a, b: np.outer(a, g)
    return lambda g, a, b: np.dot(a.T, like_dtype(g, a))


@internal
def add_outer(out, u, v):
    """``out += np.outer(u, v)`` in place (``out`` 2-d, any strides), walking ``out`` in
    the order of its memory."""
    rows, cols = out.shape
    if abs(out.strides[0]) >= abs(out.strides[1]):
        for i in range(rows):
            ui = u[i]
            for j in range(cols):
                out[i, j] += ui * v[j]
    else:
        for j in range(cols):
            vj = v[j]
            for i in range(rows):
                out[i, j] += u[i] * vj


@by_type
def add_dot_vjp_a(out, g, a, b):
    """``out += dot_vjp_a(g, a, b)`` in place: matrix.vector adds ``outer(g, b)`` with no
    temporary; the other forms add the product BLAS computes."""
    nd = _ndims(a, b)
    if nd == (2, 1):
        def into_matrix(out, g, a, b):
            add_outer(out, g, b)
        return into_matrix

    def added(out, g, a, b):
        out += dot_vjp_a(g, a, b)
    return added


@by_type
def add_dot_vjp_b(out, g, a, b):
    """``out += dot_vjp_b(g, a, b)`` in place: vector.matrix adds ``outer(a, g)`` with no
    temporary; the other forms add the product BLAS computes."""
    nd = _ndims(a, b)
    if nd == (1, 2):
        def into_matrix(out, g, a, b):
            add_outer(out, a, g)
        return into_matrix

    def added(out, g, a, b):
        out += dot_vjp_b(g, a, b)
    return added


@by_type
def outer_vjp_a(g, a, b):
    """``y = np.outer(a, b)`` (operands flattened, as NumPy does): ``a``'s adjoint,
    ``g @ b.ravel()`` in ``a``'s shape (a float for a scalar ``a``)."""
    if is_scalar(a):
        return lambda g, a, b: np.sum(np.ascontiguousarray(g).reshape(g.size) * b)
    if is_scalar(b):
        return lambda g, a, b: (np.ascontiguousarray(g).reshape(g.size) * b).reshape(a.shape)
    return lambda g, a, b: np.dot(like_dtype(g, b), b.ravel()).reshape(a.shape)


@by_type
def outer_vjp_b(g, a, b):
    """``y = np.outer(a, b)``: ``b``'s adjoint, ``a.ravel() @ g`` in ``b``'s shape."""
    if is_scalar(b):
        return lambda g, a, b: np.sum(np.ascontiguousarray(g).reshape(g.size) * a)
    if is_scalar(a):
        return lambda g, a, b: (np.ascontiguousarray(g).reshape(g.size) * a).reshape(b.shape)
    return lambda g, a, b: np.dot(a.ravel(), like_dtype(g, a)).reshape(b.shape)


@by_type
def trace_vjp(g, a, offset=0):
    """``y = np.trace(a, offset)`` (2-d ``a``): ``g`` on the ``offset`` diagonal."""
    def impl(g, a, offset=0):
        out = np.zeros(a.shape)
        rows, cols = a.shape
        for i in range(max(0, -offset), min(rows, cols - offset)):
            out[i, i + offset] = g
        return out
    return impl


@by_type
def diag_vjp(g, v, k=0):
    """``y = np.diag(v, k)``: for a 1-d ``v`` (a matrix built from it), the ``k`` diagonal
    of ``g``; for a 2-d ``v`` (its ``k`` diagonal taken), ``g`` placed on that diagonal."""
    if not isinstance(v, types.Array) or v.ndim not in (1, 2):
        raise TypingError("diag_vjp: operand of type %s" % v)
    if v.ndim == 1:
        def from_vector(g, v, k=0):
            out = np.empty(v.shape[0], g.dtype)
            r0, c0 = max(0, -k), max(0, k)
            for i in range(v.shape[0]):
                out[i] = g[r0 + i, c0 + i]
            return out
        return from_vector

    def from_matrix(g, v, k=0):
        out = np.zeros(v.shape, g.dtype)
        r0, c0 = max(0, -k), max(0, k)
        for i in range(g.shape[0]):
            out[r0 + i, c0 + i] = g[i]
        return out
    return from_matrix


@by_type
def solve_vjp_a(gb, y):
    """``y = np.linalg.solve(a, b)``: ``a``'s adjoint ``-gb y^T`` from ``b``'s adjoint
    ``gb = solve(a^T, g)`` (an outer product when ``b`` is a vector)."""
    if isinstance(y, types.Array) and y.ndim == 1:
        return lambda gb, y: -np.outer(gb, y)
    return lambda gb, y: -np.dot(like_dtype(gb, y), y.T)
