"""Adjoints of an in-place operator between two views of one array (``u[:-1] += u[1:]``).

Numba runs ``x op= y`` as one loop over ``x``'s elements in C order, each step reading
``y``'s element as memory holds it then: where ``y`` shares memory with ``x``, a step may
read an element an earlier step wrote (``u[1:] += u[:-1]`` is then a running sum, not
NumPy's result). The adjoint of that loop is the loop reversed, over adjoint views that
share memory as ``x`` and ``y`` do: it is exact for every overlap, and for the overlaps
where Numba's result is NumPy's it is NumPy's adjoint. A step's operands are ``x``'s old
element and ``y``'s element as that step read it: the old one, or the new value an earlier
step stored there (found by address).

The helpers write into the adjoints they are given (``out``: ``y``'s adjoint view, ``g``:
``x``'s, which becomes the adjoint of ``x``'s old value); the emitter calls them only where
``x`` and ``y`` are views of one array (emit/adjoints.py, ``inplace_store``).
"""
import numpy as np

from .helper_jit import helper_jit

#: The operators a helper differentiates, by the code its call passes.
OPERATOR_CODES = {"add": 0, "sub": 1, "mul": 2, "truediv": 3, "pow": 4, "mod": 5,
                  "floordiv": 6}
#: The rule of ``x op= y`` between views of one array, by operator: the template of
#: ``y``'s contribution, added into ``{out}`` (``y``'s adjoint view) while ``{g}`` (``x``'s)
#: is made the adjoint of ``x``'s old value; ``{0}``, ``{1}``: ``x`` and ``y`` before it.
OVERLAP_RULES = {"add": "overlap_sum_vjp({out}, {g}, 1.0)",
                 "sub": "overlap_sum_vjp({out}, {g}, -1.0)"}
OVERLAP_RULES.update({name: "overlap_update_vjp({out}, {g}, {0}, {1}, %d)" % code
                      for name, code in OPERATOR_CODES.items() if name not in OVERLAP_RULES})


@helper_jit(error_model="numpy")
def _addresses(a):
    """The address of each element of ``a``, in C order."""
    out = np.empty(a.size, np.int64)
    base = np.int64(a.ctypes.data)
    k = 0
    for ix in np.ndindex(a.shape):
        p = base
        for d in range(a.ndim):
            p += np.int64(ix[d]) * np.int64(a.strides[d])
        out[k] = p
        k += 1
    return out


@helper_jit(error_model="numpy")
def _earlier_writes(ga, gb):
    """For each step ``k`` of the loop over ``ga``'s elements: the step ``j < k`` that
    wrote the element ``gb`` reads at step ``k``, or -1 (the element is as it was)."""
    n = ga.size
    pa = _addresses(ga)
    pb = _addresses(gb)
    out = np.full(n, -1, np.int64)
    if n == 0 or pa.max() < pb.min() or pb.max() < pa.min():
        return out
    order = np.argsort(pa)
    sorted_a = pa[order]
    for k in range(n):
        i = np.searchsorted(sorted_a, pb[k])
        if i < n and sorted_a[i] == pb[k] and order[i] < k:
            out[k] = order[i]
    return out


@helper_jit(error_model="numpy")
def _step(op, a, b):
    """``a op b`` for an operator code of :data:`OPERATOR_CODES`."""
    if op == 0:
        return a + b
    if op == 1:
        return a - b
    if op == 2:
        return a * b
    if op == 3:
        return a / b
    if op == 4:
        return a ** b
    if op == 5:
        return a - np.floor(a / b) * b
    return np.floor(a / b)


@helper_jit(error_model="numpy")
def _partials(op, a, b):
    """``(d(a op b)/da, d(a op b)/db)``."""
    if op == 0:
        return 1.0, 1.0
    if op == 1:
        return 1.0, -1.0
    if op == 2:
        return b, a
    if op == 3:
        return 1.0 / b, -a / (b * b)
    if op == 4:
        db = a ** b * np.log(a) if a > 0.0 else 0.0
        return b * a ** (b - 1.0), db
    if op == 5:
        return 1.0, -np.floor(a / b)
    return 0.0, 0.0


@helper_jit(error_model="numpy")
def overlap_update_vjp(out, g, a, b, op):
    """The adjoint of ``x op= y`` (``op``: a code of :data:`OPERATOR_CODES`) where ``y``
    may share memory with ``x``: ``g`` (``x``'s adjoint view) becomes the adjoint of ``x``'s
    old value and ``out`` (``y``'s adjoint view, sharing memory as ``y`` does) gets ``y``'s
    contribution; ``a`` and ``b``: ``x`` and ``y`` before the update. ``y`` broadcasts to
    ``x``'s shape."""
    n = g.size
    if n == 0:
        return
    gb = np.lib.stride_tricks.as_strided(out, shape=g.shape,
                                         strides=np.broadcast_to(out, g.shape).strides)
    bb = np.broadcast_to(b, g.shape)
    steps = [ix for ix in np.ndindex(g.shape)]
    wrote = _earlier_writes(g, gb)
    # The value each step read of y, and what it stored (for the steps after it).
    read = np.empty(n, g.dtype)
    stored = np.empty(n, g.dtype)
    for k in range(n):
        ix = steps[k]
        j = wrote[k]
        read[k] = stored[j] if j >= 0 else bb[ix]
        stored[k] = _step(op, a[ix], read[k])
    for k in range(n - 1, -1, -1):
        ix = steps[k]
        gk = g[ix]
        if gk == 0.0:
            continue        # (a zero adjoint contributes zero, whatever the partials)
        da, db = _partials(op, a[ix], read[k])
        g[ix] = gk * da
        gb[ix] += gk * db


@helper_jit(error_model="numpy")
def overlap_sum_vjp(out, g, sign):
    """The adjoint of ``x += y`` (``sign`` 1.0) or ``x -= y`` (-1.0) where ``y`` may share
    memory with ``x``, as :func:`overlap_update_vjp` (``g`` is unchanged: the update
    keeps ``x``'s old value with weight one)."""
    if g.size == 0:
        return
    gb = np.lib.stride_tricks.as_strided(out, shape=g.shape,
                                         strides=np.broadcast_to(out, g.shape).strides)
    steps = [ix for ix in np.ndindex(g.shape)]
    for k in range(g.size - 1, -1, -1):
        ix = steps[k]
        gb[ix] += sign * g[ix]


@helper_jit(error_model="numpy")
def overlap_update_jvp(tx, ty, x, y, op):
    """The tangent of ``x op= y`` where ``y`` may share memory with ``x``, made in place in
    ``tx`` (``ty``: ``y``'s tangent view, sharing memory as ``y`` does) before the primal
    update runs: Numba's element loop, its reads of what it wrote included."""
    n = tx.size
    if n == 0:
        return
    tyb = np.broadcast_to(ty, tx.shape)
    yb = np.broadcast_to(y, tx.shape)
    steps = [ix for ix in np.ndindex(tx.shape)]
    wrote = _earlier_writes(tx, np.lib.stride_tricks.as_strided(
        ty, shape=tx.shape, strides=tyb.strides))
    stored = np.empty(n, x.dtype)
    for k in range(n):
        ix = steps[k]
        j = wrote[k]
        b = stored[j] if j >= 0 else yb[ix]
        a = x[ix]
        da, db = _partials(op, a, b)
        ta = tx[ix]
        tb = tyb[ix]            # (the tangent stored there by an earlier step, if one did)
        tx[ix] = (ta * da if ta != 0.0 else 0.0) + (tb * db if tb != 0.0 else 0.0)
        stored[k] = _step(op, a, b)
