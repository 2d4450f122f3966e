"""Helpers the generated backward calls: accumulating array adjoints.

An array computed by the function (``z = x * y``) has an adjoint array of its own. One
read once gets its adjoint assigned (see :mod:`numba_adstack.ad.plan.direct`); one read
several times accumulates contributions, starting from *no adjoint yet*: an array of the
right type and size 0, as JAX starts from a symbolic zero. The first contribution makes an
array of the value's shape; later ones add into it in place. Adjoint arrays made here are
owned by the variable that holds them: nothing else refers to them, so adding into them
in place never changes another adjoint.

``RUNTIME`` maps the names the generated code uses to these functions and to the helpers
of the array rules (``RULE_HELPERS``, rules/helpers.py).
"""
import numpy as np
from numba import njit, types
from numba.extending import intrinsic, overload

from ...errors import AdjointReadError
from ..rules.helpers import IN_PLACE, RULE_HELPERS
from ..rules.vjp_core import is_shape, shape_of, sum_to
from ..rules.helper_jit import helper_jit
from ..rules.vjp_overlap import _addresses


def acc(a, c, like):
    """``a + c`` with the shape of ``like`` (an array, or its shape), where ``a`` of
    another shape (size 0) means zero; adds into ``a`` in place when it already is an
    adjoint array."""
    raise NotImplementedError


@overload(acc)
def _ov_acc(a, c, like):
    # A contribution that is an adjoint with nothing in it yet (size 0, another shape:
    # a swapped buffer's, say) adds nothing. Numba's ``out += c`` would broadcast it,
    # reading past its end.
    empty = isinstance(c, types.Array)
    if is_shape(like):      # the value's shape, kept instead of it (plan/shape_reads.py)
        def by_shape(a, c, like):
            if empty and _nothing_yet(c, like):
                return a if a.shape == like else np.zeros(like, a.dtype)
            if a.shape != like:
                out = np.zeros(like, a.dtype)
                out += c
                return out
            a += c
            return a
        return by_shape

    def impl(a, c, like):
        if empty and _nothing_yet(c, like.shape):
            return a if a.shape == like.shape else np.zeros(like.shape, like.dtype)
        if a.shape != like.shape:
            out = np.zeros(like.shape, like.dtype)
            out += c
            return out
        a += c
        return a
    return impl


@njit(inline="always")
def _nothing_yet(c, shape):
    """Is the array ``c`` an adjoint with nothing in it yet for a value of ``shape``?"""
    return c.size == 0 and c.shape != shape


def add_adjoint(out, c):
    """``out += c`` into an adjoint array (or a view of one), where ``c`` may be an array
    value's adjoint with nothing in it yet (size 0, another shape): then nothing."""
    raise NotImplementedError


@overload(add_adjoint)
def _ov_add_adjoint(out, c):
    def impl(out, c):
        if not _nothing_yet(c, out.shape):
            out += c
    return impl


def acc_new(a, c, like):
    """:func:`acc` of a contribution ``c`` that is a new array nothing else refers to (a
    whole-array expression's result): the first contribution is ``c`` itself when it has
    the adjoint's type and shape, with no array of zeros made and added to (``0.0 + c``
    differs from ``c`` only in the sign of a zero)."""
    raise NotImplementedError


@overload(acc_new)
def _ov_acc_new(a, c, like):
    if c != a:
        return lambda a, c, like: acc(a, c, like)

    def impl(a, c, like):      # (``like``: an array, or its shape kept instead of it)
        if a.shape != shape_of(like) and c.shape == shape_of(like):
            return c
        return acc(a, c, like)
    return impl


def ensure(a, like):
    """``a``, or a zero array of the shape of ``like`` (an array, or its shape) when
    ``a`` has none yet (size 0)."""
    raise NotImplementedError


@overload(ensure)
def _ov_ensure(a, like):
    if is_shape(like):
        def by_shape(a, like):
            if a.shape != like:
                return np.zeros(like, a.dtype)
            return a
        return by_shape

    def impl(a, like):
        if a.shape != like.shape:
            return np.zeros(like.shape, a.dtype)    # (the adjoint's dtype: a float32
        return a                                    # value may have a float64 adjoint)
    return impl


def fill_as(c, like):
    """An array of the shape of ``like`` from a contribution: a float fills it, an array
    is summed back to it (``sum_to``, rules/vjp_core.py)."""
    raise NotImplementedError


@overload(fill_as)
def _ov_fill_as(c, like):
    if isinstance(c, types.Number):
        return lambda c, like: np.full(like.shape, c, like.dtype)
    return lambda c, like: sum_to(c, like)


def sum_of_product(a, b):
    """``np.sum(a * b)`` in one pass, with no array for the product, where ``a`` and ``b``
    are float64 arrays of one shape, 1-d or C-contiguous, or one of them a float;
    otherwise as written. Exact: the same products added in the same order, from
    ``0.0``, as Numba's ``np.sum`` of the product."""
    raise NotImplementedError


def sum_of_negated_product(a, b):
    """``np.sum(-(a * b))``, as :func:`sum_of_product`."""
    raise NotImplementedError


def sum_of_guarded_product(a, b):
    """``np.sum(zmultiply(a, b))`` (the product, zero where ``a`` is zero:
    rules/template.py), as :func:`sum_of_product`."""
    raise NotImplementedError


@helper_jit(error_model="numpy")
def _sum_product_written(a, b):
    return np.sum(a * b)


@helper_jit(error_model="numpy")
def _sum_negated_product_written(a, b):
    return np.sum(-(a * b))


@helper_jit(error_model="numpy")
def _sum_guarded_product_written(a, b):
    return np.sum(_zmul(a, b))


_zmul = RULE_HELPERS["zmultiply"]


def _product_sum(a, b, sign, guarded=False):
    """The implementation of ``np.sum(sign * (a * b))`` for these operand types (``sign``
    1.0 or -1.0, a negation: exact), with ``guarded``, of ``np.sum(zmultiply(a, b))``."""
    as_written = _sum_guarded_product_written if guarded else \
        _sum_negated_product_written if sign < 0 else _sum_product_written
    arrays = [t for t in (a, b) if isinstance(t, types.Array)]
    # The single pass reads 1-d arrays by index and others through their flat C view.
    ok = arrays and all(t.dtype == types.float64 and (t.ndim == 1 or t.layout == "C")
                        for t in arrays) and \
        all(t == types.float64 for t in (a, b) if not isinstance(t, types.Array)) and \
        len({t.ndim for t in arrays}) == 1
    if not ok:
        return lambda a, b: as_written(a, b)
    if len(arrays) == 2:
        def both(a, b):
            if a.shape != b.shape:
                return as_written(a, b)
            fa = _flat(a)
            fb = _flat(b)
            s = 0.0
            for k in range(fa.size):
                if guarded:
                    s += fa[k] * fb[k] if fa[k] != 0.0 else 0.0
                else:
                    s += sign * (fa[k] * fb[k])
            return s
        return both
    if isinstance(a, types.Array):
        def left(a, b):
            fa = _flat(a)
            s = 0.0
            for k in range(fa.size):
                if guarded:
                    s += fa[k] * b if fa[k] != 0.0 else 0.0
                else:
                    s += sign * (fa[k] * b)
            return s
        return left

    def right(a, b):
        fb = _flat(b)
        s = 0.0
        if guarded and a == 0.0:
            return s
        for k in range(fb.size):
            s += sign * (a * fb[k])
        return s
    return right


def _flat(a):
    raise NotImplementedError


@overload(_flat)
def _ov_flat(a):
    """A 1-d array as it is; a C-contiguous one as its flat view."""
    if a.ndim == 1:
        return lambda a: a
    return lambda a: a.reshape(a.size)


@overload(sum_of_product)
def _ov_sum_of_product(a, b):
    return _product_sum(a, b, 1.0)


@overload(sum_of_negated_product)
def _ov_sum_of_negated_product(a, b):
    return _product_sum(a, b, -1.0)


@overload(sum_of_guarded_product)
def _ov_sum_of_guarded_product(a, b):
    return _product_sum(a, b, 1.0, guarded=True)


def broadcast_like(p, x):
    """``p`` with the shape ``p`` and ``x`` broadcast to: ``p`` itself when it has
    ``x``'s shape already. ``unreduce(g, x, None, False) * e`` (the adjoint of a sum of all
    of ``x`` times ``e``) is ``broadcast_like(g * e, x)``: ``g`` is one number."""
    raise NotImplementedError


@overload(broadcast_like)
def _ov_broadcast_like(p, x):
    # ``x``: an array, or its shape (kept instead of it: plan/shape_reads.py)
    ndim = x.count if is_shape(x) else x.ndim
    if not isinstance(p, types.Array):
        return lambda p, x: np.full(shape_of(x), p)
    # (``p``'s dtype: ``g * e`` has the dtype ``np.full(x.shape, g) * e`` has)
    if p.ndim == ndim:
        def same_ndim(p, x):
            if p.shape == shape_of(x):
                return p
            return np.ones(shape_of(x), p.dtype) * p
        return same_ndim
    return lambda p, x: np.ones(shape_of(x), p.dtype) * p


def length_is(a, n):
    """Is ``a`` (an array, or a shape kept instead of it) one-dimensional and ``n``
    long? (The check of a fused element-wise loop: emit/elementwise.py.)"""
    raise NotImplementedError


@overload(length_is)
def _ov_length_is(a, n):
    if is_shape(a):
        if a.count != 1:
            return lambda a, n: False
        return lambda a, n: a[0] == n
    if a.ndim != 1:
        return lambda a, n: False
    return lambda a, n: a.shape[0] == n


def apart(a, b):
    """Do the 1-d arrays ``a`` and ``b`` share no element, or are they the same elements
    in the same order (same first element, same step)? Where one is written element by
    element while the other is read at the same index, the result is then the one of the
    whole-array statements."""
    raise NotImplementedError


@overload(apart)
def _ov_apart(a, b):
    def impl(a, b):
        if a.size == 0 or b.size == 0:
            return True
        pa = np.int64(a.ctypes.data)
        pb = np.int64(b.ctypes.data)
        sa = np.int64(a.strides[0])
        sb = np.int64(b.strides[0])
        if pa == pb and sa == sb:
            return True
        ea = pa + (a.shape[0] - 1) * sa
        eb = pb + (b.shape[0] - 1) * sb
        lo_a, hi_a = min(pa, ea), max(pa, ea) + a.itemsize
        lo_b, hi_b = min(pb, eb), max(pb, eb) + b.itemsize
        return hi_a <= lo_b or hi_b <= lo_a
    return impl


@helper_jit(error_model="numpy")
def _extent(a):
    """The first and one past the last byte of the elements of ``a`` (not empty)."""
    lo = hi = np.int64(a.ctypes.data)
    for d in range(a.ndim):
        step = np.int64(a.strides[d]) * (a.shape[d] - 1)
        if step < 0:
            lo += step
        else:
            hi += step
    return lo, hi + a.itemsize


@helper_jit(error_model="numpy")
def arguments_apart(a, b, message):
    """Raise ``ValueError(message)`` when the arrays ``a`` and ``b`` share an element."""
    if a.size == 0 or b.size == 0:
        return
    lo_a, hi_a = _extent(a)
    lo_b, hi_b = _extent(b)
    if hi_a <= lo_b or hi_b <= lo_a:
        return
    pa = _addresses(a)
    pb = _addresses(b)
    sa = np.sort(pa)
    for p in pb:
        i = np.searchsorted(sa, p)
        if (i < sa.size and sa[i] < p + b.itemsize) or (i > 0 and sa[i - 1] + a.itemsize > p):
            raise ValueError(message)


@helper_jit(error_model="numpy")
def unpacked(a, n):
    """``a``, which ``x, y, ... = a`` unpacks into ``n`` names: Numba's check of its length,
    kept where the items are read as ``a[k]`` (tuples.read_unpacked_arrays)."""
    if a.shape[0] != n:
        raise ValueError("cannot unpack an array of another length into this many names")
    return a


@helper_jit(error_model="numpy")
def dict_zeros(d):
    """A typed Dict of ``d``'s keys, each 0: the adjoint of the Dict ``d`` of floats."""
    out = d.copy()
    for k in d:
        out[k] = 0.0
    return out


def list_zeros_like(items):
    """A zero array of each array's shape in ``items``: the adjoint of a list of arrays."""
    raise NotImplementedError


@overload(list_zeros_like)
def _ov_list_zeros_like(items):
    def impl(items):
        return [np.zeros_like(a) for a in items]
    return impl


# ---------------------------------------------------------------- checked mode (emit/checked.py)
@helper_jit(error_model="numpy")
def _check_broadcast(a_shape, b_shape):
    """Raise unless an array of shape ``b_shape`` broadcasts to ``a_shape``."""
    ok = len(b_shape) <= len(a_shape)
    if ok:
        for k in range(1, len(b_shape) + 1):
            d = b_shape[len(b_shape) - k]
            if d != 1 and d != a_shape[len(a_shape) - k]:
                ok = False
    if not ok:
        raise ValueError("a generated backward added an array of another shape into an "
                         "adjoint; this is a fault of numba_adstack, please report it "
                         "with the function")


def checked_add(a, b, sign):
    """``a += sign * b`` of the backward in checked mode: ``b`` must broadcast to ``a``."""
    raise NotImplementedError


@overload(checked_add)
def _ov_checked_add(a, b, sign):
    if isinstance(a, types.Array) and isinstance(b, types.Array):
        def arrays(a, b, sign):
            _check_broadcast(a.shape, b.shape)
            if sign > 0:
                a += b
            else:
                a -= b
            return a
        return arrays
    if isinstance(a, types.Array):
        def array(a, b, sign):
            if sign > 0:
                a += b
            else:
                a -= b
            return a
        return array
    return lambda a, b, sign: a + b if sign > 0 else a - b


def checked_add_at(a, idx, b, sign):
    """``a[idx] += sign * b`` of the backward in checked mode."""
    raise NotImplementedError


@overload(checked_add_at)
def _ov_checked_add_at(a, idx, b, sign):
    from numba.core.registry import cpu_target
    import operator as _op
    got = cpu_target.typing_context.resolve_function_type(_op.getitem, (a, idx), {})
    if got is not None and isinstance(got.return_type, types.Array):
        def view(a, idx, b, sign):
            v = a[idx]
            checked_add(v, b, sign)
        return view

    def element(a, idx, b, sign):
        if sign > 0:
            a[idx] += b
        else:
            a[idx] -= b
    return element


def acc_checked(a, c, like):
    """:func:`acc` whose contribution must broadcast to the value's shape."""
    raise NotImplementedError


@overload(acc_checked)
def _ov_acc_checked(a, c, like):
    if isinstance(c, types.Array):
        def impl(a, c, like):
            if not (c.size == 0 and c.shape != shape_of(like)):
                _check_broadcast(shape_of(like), c.shape)
            return acc(a, c, like)
        return impl
    return lambda a, c, like: acc(a, c, like)


def acc_new_checked(a, c, like):
    """:func:`acc_new` whose contribution must broadcast to the value's shape."""
    raise NotImplementedError


@overload(acc_new_checked)
def _ov_acc_new_checked(a, c, like):
    if isinstance(c, types.Array):
        def impl(a, c, like):
            if not (c.size == 0 and c.shape != shape_of(like)):
                _check_broadcast(shape_of(like), c.shape)
            return acc_new(a, c, like)
        return impl
    return lambda a, c, like: acc_new(a, c, like)


#: The helpers of the array rules (``sum_to``, ``unreduce``...; those adding into an adjoint
#: in place, ``IN_PLACE``) and the ones above.
@helper_jit(error_model="numpy")
def written(a, what):
    """``a``, an adjoint the backward reads; in checked mode (emit/checked.py) an
    :class:`~numba_adstack.errors.AdjointReadError` when nothing was written into it yet."""
    if a.size == 0:
        raise AdjointReadError(what)
    return a


@intrinsic
def radd(typingctx, a, b):
    """``a + b`` that LLVM may reassociate with the other adds of its chain: a sum over a
    loop's iterations written with it may be added in another order (as ``np.sum`` may,
    pairwise in NumPy), so that the loop vectoriser runs it in SIMD lanes. The sums of
    the loops a ``np.sum`` was folded into use it (emit/reassoc.py)."""
    if not (isinstance(a, types.Float) and isinstance(b, (types.Float, types.Integer))):
        return None

    def codegen(context, builder, sig, args):
        rhs = context.cast(builder, args[1], sig.args[1], sig.return_type)
        return builder.fadd(args[0], rhs, flags=("reassoc", "nsz"))
    return a(a, b), codegen


RUNTIME = dict(RULE_HELPERS, **IN_PLACE, acc=acc, acc_new=acc_new, add_adjoint=add_adjoint,
               ensure=ensure, fill_as=fill_as, written=written, sum_of_product=sum_of_product,
               sum_of_negated_product=sum_of_negated_product,
               sum_of_guarded_product=sum_of_guarded_product, broadcast_like=broadcast_like,
               length_is=length_is, apart=apart, arguments_apart=arguments_apart,
               unpacked=unpacked, radd=radd, dict_zeros=dict_zeros, list_zeros_like=list_zeros_like,
               checked_add=checked_add,
               checked_add_at=checked_add_at, acc_checked=acc_checked,
               acc_new_checked=acc_new_checked)
#: Pullbacks returning the adjoints of all their operands as fresh values, none a view of
#: another: the backward calls each once for all the operands it needs
#: (:mod:`..emit.common_calls`).
ONE_CALL = set()
#: Helpers with no effect on their arguments (the generated code may move their calls).
PURE = set(RULE_HELPERS) | {"fill_as", "sum_of_product", "sum_of_negated_product",
                             "sum_of_guarded_product",
                             "broadcast_like", "length_is", "apart", "radd"}
