"""What operations do to memory: the one table of effects. (The adjoint rules of array
primitives are in array_rules.py.)

Every call the rewrite meets is one of:

* a constructor: its result is fresh memory (``ARRAY_CONSTRUCTORS``);
* a call that may return a view of its first operand (``MAY_RETURN_VIEW``): writing into
  that result writes into the operand;
* a call that writes into arrays it is given: a ``out`` argument (every ufunc and every
  NumPy function with an ``out`` parameter, :func:`out_position`), the receiver of a
  method in ``WRITING_METHODS``, an argument of a function in ``WRITING_FUNCTIONS``;
* a call known to write nothing: a primitive with a rule, a function of numbers, a NumPy
  function without an ``out`` given, a call in ``PURE_CALLS``;
* anything else (an ``@intrinsic``, a C function, an ``objmode`` block): it may write
  every array it is given.

The capture (:mod:`..capture.writes`) makes the common writes explicit, as the stores and
in-place operators the rewrite differentiates (``np.sin(x, out)`` -> ``out[...] =
np.sin(x)``); :mod:`..facts.checks` refuses, by name, a write that is left.
"""
import builtins
import cmath
import inspect
import math
import operator
import random

import numpy as np

# Array constructors: the result is a fresh array whose contents carry no gradient; the
# rewrite gives it an adjoint array of the same shape.
ARRAY_CONSTRUCTORS = {np.zeros, np.empty, np.ones, np.empty_like, np.zeros_like,
                      np.ones_like, np.full, np.full_like}

# Constructors that fill the new array with a value (by argument position): the value's
# adjoint is the sum of the array's adjoint.
FILL_ARGUMENT = {np.full: 1, np.full_like: 1}

# Methods that write into their receiver, and functions that write into their first
# argument. The capture rewrites ``fill``, ``sort`` and ``np.copyto`` as stores; the
# others are refused where the gradient reads the array.
MUTATING_METHODS = {"fill", "sort", "put", "itemset", "resize", "partition", "setfield",
                    "setflags"}
MUTATING_FUNCTIONS = {np.fill_diagonal, np.random.shuffle, np.put, np.place, np.putmask,
                      np.copyto}

# Primitives whose result may share memory with their first operand (NumPy returns a view
# where it can): writing into that result would write into the operand unseen.
MAY_RETURN_VIEW = {np.reshape, np.ravel, np.transpose, np.atleast_1d, np.atleast_2d,
                   np.atleast_3d, np.expand_dims, np.asarray, np.ascontiguousarray, np.flip,
                   np.fliplr, np.flipud, np.swapaxes, np.squeeze, np.asfortranarray,
                   np.broadcast_to, np.diagonal, np.moveaxis, np.real, np.imag,
                   np.lib.stride_tricks.as_strided,
                   np.lib.stride_tricks.sliding_window_view}
VIEW_METHODS = {"reshape", "ravel", "transpose", "view", "squeeze", "swapaxes", "T",
                "real", "imag", "diagonal"}


def out_position(fn):
    """The position of the ``out`` argument of a NumPy callable (a ufunc's first output
    follows its inputs), or None when it has none."""
    if isinstance(fn, np.ufunc):
        return fn.nin
    if getattr(fn, "__module__", None) is None or not str(fn.__module__).startswith("numpy"):
        return None
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    return params.index("out") if "out" in params else None


def method_out_position(name):
    """The position, after the receiver, of the ``out`` argument of the array method
    ``name`` (``x.clip(lo, hi, out)``), read off the NumPy function of that name."""
    fn = getattr(np, name, None)
    k = out_position(fn) if callable(fn) and not isinstance(fn, np.ufunc) else None
    return None if k is None or k == 0 else k - 1


# Calls that write into no array they are given and that are not NumPy's (whose writes
# are its ``out`` arguments and the lists above): builtins, math, operators but the
# in-place ones (rewritten by the capture).
_PURE_MODULES = (math, cmath)
PURE_BUILTINS = {getattr(builtins, n) for n in (
    "len", "range", "min", "max", "abs", "float", "int", "bool", "complex", "round",
    "sum", "pow", "divmod", "print", "isinstance", "tuple", "list", "enumerate", "zip",
    "iter", "next", "hash", "str", "sorted", "any", "all", "reversed", "slice", "type",
    "map", "filter", "repr", "dict", "set", "ord", "chr", "callable")}


def draws_random(fn):
    """Does ``fn`` draw from a random generator (NumPy's or Python's ``random``)? Its
    result is not a function of its arguments: it is kept, never computed again, and a
    loop that calls it is never run again by the reverse sweep."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, (np.random.RandomState, random.Random)):
        return True
    return (getattr(fn, "__module__", None) or "").startswith("numpy.random")


def member(fn, table):
    try:
        return fn in table
    except TypeError:           # unhashable (a ctypes function pointer)
        return False


def writes_into_first(fn):
    """Does ``fn`` write into its first argument (``np.fill_diagonal``...)?"""
    return member(fn, MUTATING_FUNCTIONS)


def writes_nothing(fn):
    """Is ``fn`` a known function of its arguments' values, writing into none of them
    (when given no ``out``)?"""
    if member(fn, PURE_BUILTINS) or member(fn, MUTATING_FUNCTIONS):
        return member(fn, PURE_BUILTINS)
    mod = getattr(fn, "__module__", None) or ""
    if isinstance(fn, np.ufunc) or mod.startswith("numpy"):
        return True
    if any(getattr(m, getattr(fn, "__name__", ""), None) is fn for m in _PURE_MODULES):
        return True
    if mod in ("_operator", "operator"):
        return not getattr(fn, "__name__", "").startswith("i")
    return False
