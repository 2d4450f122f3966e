"""Core helpers of the array adjoints: undo NumPy broadcasting (``sum_to``) and undo a
reduction along an axis (``unreduce``), plus ``by_type``, which makes an njit helper whose
implementation is chosen by the types of its arguments.

Conventions shared by every helper of ``vjp_*.py``: a helper returns the contribution to
ONE operand's adjoint, with exactly that operand's shape; a freshly allocated result is
C-contiguous, a scalar operand gets a Python float. The dtype is the one NumPy's promotion
gives from the result's adjoint (a float32 operand of a float64 result gets float64).
"""
import contextlib
import functools
import hashlib
import inspect
import os
import types as pytypes

import numpy as np
from numba import njit, types
from numba.core import config as numba_config
from numba.core.caching import (CacheImpl, FunctionCache, NullCache, UserProvidedCacheLocator,
                                 UserWideCacheLocator)
from numba.core.errors import TypingError
from numba.core.typing.templates import infer, infer_global, make_overload_template

from ..generated_source import exec_source
from .helper_jit import helper_jit


# The helpers' machine code is kept in Numba's on-disk cache, so that another process
# loads it rather than compiling it again: in NUMBA_CACHE_DIR when it is set, else in
# Numba's per-user cache directory (never inside the installed package, which a later
# uninstall would leave behind); NUMBA_ADSTACK_HELPER_CACHE=0 turns that off.
HELPER_CACHE = os.environ.get("NUMBA_ADSTACK_HELPER_CACHE", "1") != "0"
RULES_DIR = os.path.dirname(os.path.abspath(__file__))


class RulesCacheLocator:
    """Where Numba caches the functions of the rules' source files: the locator of
    NUMBA_CACHE_DIR, else of the user-wide cache directory, as Numba does for a read-only
    installation; never ``__pycache__`` beside the sources. Numba asks it first for every
    function; it answers for the rules' files only (None: Numba's own locators decide)."""

    @classmethod
    def from_function(cls, py_func, py_file):
        if os.path.dirname(os.path.abspath(py_file)) != RULES_DIR:
            return None
        for locator in (UserProvidedCacheLocator, UserWideCacheLocator):
            found = locator.from_function(py_func, py_file)
            if found is not None:
                # One directory per optimisation level: processes compiling at different
                # levels (a test suite at -O1 beside a program at -O3) keep their own.
                found._cache_path = os.path.join(found._cache_path,
                                                 "opt%d" % int(numba_config.OPT))
                try:
                    found.ensure_cache_path()
                except OSError:     # not writable: as Numba does, the next locator
                    continue
                return found
        raise RuntimeError("cannot cache %s: no writable NUMBA_CACHE_DIR or user-wide "
                           "cache directory" % py_func.__qualname__)


if RulesCacheLocator not in CacheImpl._locator_classes:
    CacheImpl._locator_classes.insert(0, RulesCacheLocator)


def _drop_in_tree_cache():
    """Remove the helpers' cache files that earlier versions wrote beside the sources
    (``__pycache__/vjp_*.nbi``, ``.nbc``): left there, an uninstall leaves the directory
    behind. Best effort: a read-only installation keeps them, unused."""
    path = os.path.join(RULES_DIR, "__pycache__")
    try:
        for name in os.listdir(path):
            if name.startswith("vjp_") and name.endswith((".nbi", ".nbc")) \
                    or name == _DIGEST_FILE:
                os.remove(os.path.join(path, name))
    except OSError:
        pass


def _rules_digest():
    """A digest of the sources of the rules' helpers. Numba checks a cached function
    against its own source file only, not against the helpers it calls from other files:
    a change drops the cached helpers (``_checked_cache_dirs``). The optimisation level
    has a directory of its own (``RulesCacheLocator``)."""
    h = hashlib.sha256()
    for name in sorted(os.listdir(RULES_DIR)):
        if name.endswith(".py"):
            with open(os.path.join(RULES_DIR, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
    return h.hexdigest()


_DIGEST_FILE = "numba_adstack_rules.digest"
_checked_cache_dirs = {}


def _check_cache_dir(path):
    """Drop the cached helpers in ``path`` when they were compiled from other sources of
    the rules than these; True when the directory can be used."""
    if path in _checked_cache_dirs:
        return _checked_cache_dirs[path]
    digest = _rules_digest()
    stamp = os.path.join(path, _DIGEST_FILE)
    try:
        with open(stamp) as f:
            fresh = f.read() == digest
    except OSError:
        fresh = False
    try:
        if not fresh:
            for name in os.listdir(path):
                if name.startswith("vjp_") and name.endswith((".nbi", ".nbc")):
                    os.remove(os.path.join(path, name))
            with open(stamp, "w") as f:
                f.write(digest)
        ok = True
    except OSError:
        ok = False
    _checked_cache_dirs[path] = ok
    return ok


_OPT_AT_IMPORT = str(numba_config.OPT)
_drop_in_tree_cache()


def cacheable(fn):
    """Can Numba cache ``fn`` on disk: a function of a source file (not of ``exec``), with
    a cache directory it can write, compiled at the optimisation level the cache was
    checked for?"""
    if not HELPER_CACHE or str(numba_config.OPT) != _OPT_AT_IMPORT:
        return False
    try:
        cache = FunctionCache(fn)
    except (RuntimeError, OSError):
        return False
    return _check_cache_dir(cache._cache_path)


#: The helpers divide as the backward's own code does (numba_pipeline.AdjointCompiler):
#: an infinite or undefined derivative is inf or NaN, not a ZeroDivisionError.
ADJOINT_ERRORS = {"error_model": "numpy"}

#: The njit helpers compiled with a disk cache (``suspend_helper_cache`` reaches them).
CACHED_HELPERS = []


def _cached_njit(**options):
    def decorate(fn):
        disp = helper_jit(fn, cache=cacheable(fn), **options)
        CACHED_HELPERS.append(disp)
        return disp
    return decorate


@contextlib.contextmanager
def suspend_helper_cache():
    """Compile the helpers without their disk cache for a while (code compiled at another
    optimisation level than the cache's must not be written into it)."""
    global HELPER_CACHE
    saved = HELPER_CACHE, [d._cache for d in CACHED_HELPERS]
    HELPER_CACHE = False
    for d in CACHED_HELPERS:
        d._cache = NullCache()
    try:
        yield
    finally:
        HELPER_CACHE = saved[0]
        for d, cache in zip(CACHED_HELPERS, saved[1]):
            d._cache = cache


# Helpers called only from njit code: no Python or C entry points, which every caller
# would otherwise link and compile again.
internal = _cached_njit(no_cpython_wrapper=True, no_cfunc_wrapper=True, **ADJOINT_ERRORS)
# Helpers also callable from Python.
public = _cached_njit(no_cfunc_wrapper=True, **ADJOINT_ERRORS)


def by_type(selector=None, prefer_literal=False):
    """A helper whose implementation ``selector`` picks from the argument types.

    ``selector`` follows the ``numba.extending.overload`` protocol: it receives Numba types
    and returns a Python function of the same parameters, which Numba compiles. The result
    is a plain function of the selector's name and signature, overloaded for njit code
    (where a call compiles the chosen implementation straight into the caller's library)
    and callable from Python (through an njit trampoline); it is importable by its name
    from the selector's module, which the gradient cache relies on. With
    ``prefer_literal``, compile-time constant arguments reach the selector as literal
    types (``types.IntegerLiteral``), so it can choose by their value.
    """
    if selector is None:
        return lambda sel: by_type(sel, prefer_literal)
    sig = inspect.signature(selector)
    params = ", ".join(sig.parameters)
    name = selector.__name__
    trampoline = []
    ns = {"_trampoline": trampoline, "njit": njit}
    fn = exec_source(name, "def %s%s:\n"
                     "    if not _trampoline:\n"
                     "        _trampoline.append(njit(lambda %s: %s(%s)))\n"
                     "    return _trampoline[0](%s)\n" % (name, sig, params, name, params, params),
                     ns, "selector")
    fn.__module__ = selector.__module__
    fn.__qualname__ = selector.__qualname__
    fn.__doc__ = selector.__doc__
    # What numba.extending.overload does, keeping the template's jit options at hand:
    # Numba reads them when it compiles the implementation the selector has just
    # returned, which is cached on disk when it can be (not one written by exec).
    options = {"no_cpython_wrapper": True, "nopython": True, "no_cfunc_wrapper": True,
               **ADJOINT_ERRORS}

    @functools.wraps(selector)
    def select(*args, **kws):
        impl = selector(*args, **kws)
        if isinstance(impl, pytypes.FunctionType):
            options["cache"] = cacheable(impl)
        return impl
    template = make_overload_template(fn, select, options, True, "never", prefer_literal)
    infer(template)
    infer_global(fn, types.Function(template))
    return fn


def is_scalar(ty):
    return isinstance(ty, (types.Number, types.Boolean))


def is_none(ty):
    return ty is None or isinstance(ty, (types.NoneType, types.Omitted))


@njit(inline="always")
def c_strides(shape):
    """C-order strides of ``shape``, in elements."""
    n = len(shape)
    out = np.zeros(n, np.intp)
    step = 1
    for k in range(n - 1, -1, -1):
        out[k] = step
        step *= shape[k]
    return out


@njit(inline="always")
def _advance(idx, shape, off, strides):
    """Step the multi-index ``idx`` over all dimensions but the last (C order), moving the
    offset ``off`` by ``strides``; returns the new offset."""
    k = len(shape) - 2
    while k >= 0:
        idx[k] += 1
        off += strides[k]
        if idx[k] < shape[k]:
            return off
        off -= strides[k] * shape[k]
        idx[k] = 0
        k -= 1
    return off


@internal
def _merge(shape, strides):
    """``(shape, strides)`` with adjacent dimensions that walk memory as one merged (both
    summed, or nesting strides) and size-1 dimensions dropped: fewer, longer loops."""
    n = len(shape)
    ms = np.ones(n, np.intp)
    mt = np.zeros(n, np.intp)
    k = 0
    for d in range(n):
        if shape[d] == 1:
            continue
        if ms[k] == 1:
            ms[k] = shape[d]
            mt[k] = strides[d]
        elif (strides[d] == 0 and mt[k] == 0) or (
                strides[d] != 0 and mt[k] == strides[d] * shape[d]):
            ms[k] *= shape[d]
            mt[k] = strides[d]
        else:
            k += 1
            ms[k] = shape[d]
            mt[k] = strides[d]
    return ms[:k + 1], mt[:k + 1]


@internal
def scatter_add(g, ostr, out):
    """``out.flat[sum(i * ostr)] += g[i]`` for every index ``i`` of ``g``: ``ostr`` holds,
    per dimension of ``g``, its stride in ``out``: 0 where the dimension is summed, else
    ``out``'s C stride (so the innermost is 0 or 1)."""
    if g.size == 0:
        return
    shape, strides = _merge(g.shape, ostr)
    inner = shape[shape.size - 1]
    rows = g.size // inner
    src = np.ascontiguousarray(g).reshape((rows, inner))
    dst = out.reshape(out.size)
    summed_inner = strides[shape.size - 1] == 0
    # Merged to at most 2-d (every broadcast of one operand against a bigger one but a
    # size-1 dimension between kept ones): the loops a hand-written adjoint has.
    if shape.size <= 2 and summed_inner:
        for r in range(rows):
            acc = src[r, 0]
            for i in range(1, inner):
                acc += src[r, i]
            dst[r] += acc
        return
    if shape.size <= 2:
        for r in range(rows):
            for i in range(inner):
                dst[i] += src[r, i]
        return
    idx = np.zeros(shape.size, np.intp)
    off = 0
    for r in range(rows):
        if summed_inner:
            acc = src[r, 0]
            for i in range(1, inner):
                acc += src[r, i]
            dst[off] += acc
        else:
            for i in range(inner):
                dst[off + i] += src[r, i]
        off = _advance(idx, shape, off, strides)


@internal
def gather(src, sstr, shape):
    """A new C-contiguous array of ``shape`` whose element ``i`` is
    ``src.flat[sum(i * sstr)]`` (``src`` C-contiguous; ``sstr`` its C strides, 0 along
    the dimensions it is repeated): NumPy broadcasting, materialised."""
    out = np.empty(shape, src.dtype)
    if out.size == 0:
        return out
    mshape, mstr = _merge(shape, sstr)
    inner = mshape[mshape.size - 1]
    rows = out.size // inner
    dst = out.reshape((rows, inner))
    flat = src.reshape(src.size)
    repeat_inner = mstr[mshape.size - 1] == 0
    if mshape.size <= 2 and repeat_inner:
        for r in range(rows):
            v = flat[r]
            for i in range(inner):
                dst[r, i] = v
        return out
    if mshape.size <= 2:
        for r in range(rows):
            for i in range(inner):
                dst[r, i] = flat[i]
        return out
    idx = np.zeros(mshape.size, np.intp)
    off = 0
    for r in range(rows):
        if repeat_inner:
            v = flat[off]
            for i in range(inner):
                dst[r, i] = v
        else:
            for i in range(inner):
                dst[r, i] = flat[off + i]
        off = _advance(idx, mshape, off, mstr)
    return out


@internal
def sum_to_shape(g, shape):
    """``g`` summed down to ``shape`` (a shape ``g``'s broadcasts from): over its leading
    dimensions and over those where ``shape`` has size 1. Always a new array."""
    m = g.ndim
    n = len(shape)
    lead = m - n
    ostr = np.zeros(m, np.intp)
    step = 1
    for k in range(n - 1, -1, -1):
        if shape[k] != 1:
            if g.shape[lead + k] != shape[k]:
                raise ValueError("sum_to: shapes do not broadcast")
            ostr[lead + k] = step
        step *= shape[k]
    out = np.zeros(shape, g.dtype)
    scatter_add(g, ostr, out)
    return out


@by_type
def sum_to(g, like):
    """The adjoint ``g`` of a broadcast result, summed back to the shape of the operand
    ``like`` (undoes NumPy broadcasting), or to ``like`` itself when it is a shape (a
    tuple of integers). Returns ``g`` itself, no copy, when the shapes
    already match; a float when ``like`` is a scalar; otherwise a new C-contiguous array.
    """
    if is_scalar(like):
        if isinstance(g, types.Array):
            return lambda g, like: np.sum(g)
        return lambda g, like: g
    if is_shape(like):      # the operand's shape, kept instead of it (plan/shape_reads.py)
        return _sum_to_shape_of(g, len(like))
    if not isinstance(like, types.Array):
        raise TypingError("sum_to: operand of type %s" % like)
    if is_scalar(g):
        return lambda g, like: np.full(like.shape, g)
    if g.ndim == like.ndim == 0:
        return lambda g, like: g
    if g.ndim == like.ndim:
        def same_ndim(g, like):
            if g.shape == like.shape:
                return g
            return sum_to_shape(g, like.shape)
        return same_ndim
    if g.ndim > like.ndim and like.ndim > 0:
        return lambda g, like: sum_to_shape(g, like.shape)
    if g.ndim > like.ndim:                  # a 0-d operand: the sum, as a 0-d array
        def to_0d(g, like):
            out = np.empty(like.shape, g.dtype)
            out[()] = np.sum(g)
            return out
        return to_0d
    raise TypingError("sum_to: a %d-d adjoint for a %d-d operand" % (g.ndim, like.ndim))


def is_shape(ty):
    """Is ``ty`` the type of an array's shape (a tuple of integers, at least one)?"""
    return isinstance(ty, types.UniTuple) and ty.count > 0 \
        and isinstance(ty.dtype, types.Integer)


def _sum_to_shape_of(g, ndim):
    """``sum_to``'s implementation for an operand given by its shape (``ndim`` integers)."""
    if is_scalar(g):
        return lambda g, like: np.full(like, g)
    if not isinstance(g, types.Array) or g.ndim < ndim:
        raise TypingError("sum_to: a %s adjoint for a %d-d operand" % (g, ndim))
    if g.ndim == ndim:
        def same_ndim(g, like):
            if g.shape == like:
                return g
            return sum_to_shape(g, like)
        return same_ndim
    return lambda g, like: sum_to_shape(g, like)


@by_type
def shape_of(x):
    """The shape of ``x``, an array or a shape already."""
    if is_shape(x):
        return lambda x: x
    return lambda x: x.shape


@njit(inline="always")
def norm_axis(axis, ndim):
    """``axis`` in ``range(ndim)`` (NumPy's negative axes counted from the end)."""
    a = axis + ndim if axis < 0 else axis
    if a < 0 or a >= ndim:
        raise ValueError("axis out of range")
    return a


@njit(inline="always")
def split_at(shape, ax):
    """``(outer, n, inner)``: ``shape`` seen as 3-d around its axis ``ax`` (a C-contiguous
    array of ``shape`` reshapes to it without a copy)."""
    outer = 1
    inner = 1
    for k in range(len(shape)):
        if k < ax:
            outer *= shape[k]
        elif k > ax:
            inner *= shape[k]
    return outer, shape[ax], inner


@internal
def _unreduce_axis(g, shape, axis, kept):
    """``g`` (``shape`` reduced along ``axis``, kept as size 1 when ``kept``) repeated
    along ``axis`` to ``shape``."""
    n = len(shape)
    ax = norm_axis(axis, n)
    gs = c_strides(g.shape)
    sstr = np.zeros(n, np.intp)
    for k in range(n):
        if k < ax:
            sstr[k] = gs[k]
        elif k > ax:
            sstr[k] = gs[k] if kept else gs[k - 1]
    return gather(np.ascontiguousarray(g), sstr, shape)


@by_type
def unreduce(g, x, axis, keepdims=False):
    """The adjoint ``g`` of a reduction of ``x`` along ``axis`` (an int, or None for all
    of ``x``) broadcast back to ``x``'s shape: every element of ``x`` gets the adjoint of
    the reduced value it went into. ``g`` is a float (``axis=None``, or a 1-d ``x``) or an
    array with the reduced shape (``keepdims``: with size 1 at ``axis``; the ranks tell,
    the flag is accepted for NumPy's signature). Returns a new C-contiguous array."""
    if not (isinstance(x, types.Array) or is_shape(x)):
        raise TypingError("unreduce: operand of type %s" % x)
    nd = x.count if is_shape(x) else x.ndim     # (``x`` may be its shape: shape_reads.py)
    if is_scalar(g):
        return lambda g, x, axis, keepdims=False: np.full(shape_of(x), g)
    if not isinstance(g, types.Array) or is_none(axis):
        raise TypingError("unreduce: a %s adjoint with axis %s" % (g, axis))
    if isinstance(axis, types.BaseTuple) and len(axis) == 0:
        return lambda g, x, axis, keepdims=False: np.ascontiguousarray(g).copy()  # none
    if isinstance(axis, types.UniTuple) and isinstance(axis.dtype, types.Integer):
        kept = g.ndim == nd                 # (a tuple of literals arrives as a UniTuple too)
        return lambda g, x, axis, keepdims=False: _unreduce_axes(g, shape_of(x), axis, kept)
    if g.ndim == nd:
        return lambda g, x, axis, keepdims=False: _unreduce_axis(g, shape_of(x), axis, True)
    if g.ndim == nd - 1:
        return lambda g, x, axis, keepdims=False: _unreduce_axis(g, shape_of(x), axis, False)
    raise TypingError("unreduce: a %d-d adjoint for a %d-d operand" % (g.ndim, nd))


@internal
def _unreduce_axes(g, shape, axes, kept):
    """``g`` (``shape`` reduced along each of ``axes``, kept as size 1 when ``kept``)
    repeated along those axes to ``shape``."""
    n = len(shape)
    reduced = np.zeros(n, np.bool_)
    for a in axes:
        reduced[norm_axis(a, n)] = True
    gs = c_strides(g.shape)
    sstr = np.zeros(n, np.intp)
    j = 0
    for k in range(n):
        if not reduced[k]:
            sstr[k] = gs[j]
        if kept or not reduced[k]:
            j += 1
    return gather(np.ascontiguousarray(g), sstr, shape)


@by_type
def reduced_view(g, x, axis):
    """The adjoint ``g`` of a reduction of ``x`` along ``axis``, as a value that
    broadcasts to ``x``'s shape without being materialised: ``g`` itself (a float, or
    kept dimensions) or a view of it with ``axis`` put back as size 1. For ``x_bar += ...``
    only: its shape is not ``x``'s."""
    nd = x.count if is_shape(x) else x.ndim
    if is_scalar(g) or (isinstance(g, types.Array) and g.ndim == nd):
        return lambda g, x, axis: g
    if isinstance(axis, types.BaseTuple):
        return lambda g, x, axis: unreduce(g, x, axis, False)      # (materialised)
    return lambda g, x, axis: np.expand_dims(g, axis)
