"""Which Numba types the rewrite differentiates, keeps on stacks, and how it spells them."""
from numba.core import types

from .generated_source.code import expr, value


def is_float(t):
    return isinstance(t, types.Float)


def is_float_array(t):
    return isinstance(t, types.Array) and isinstance(t.dtype, types.Float)


def is_complex(t):
    return isinstance(t, types.Complex)


def is_complex_array(t):
    return isinstance(t, types.Array) and isinstance(t.dtype, types.Complex)


def has_scalar_adjoint(t):
    """A float or a complex number: a value whose adjoint is a number of its own."""
    return isinstance(t, (types.Float, types.Complex))


def holds_complex(t):
    """A complex number, a complex array, or one that may be None."""
    if isinstance(t, types.Optional):
        t = t.type
    return is_complex(t) or is_complex_array(t)


def is_kept_array(t):
    """Arrays a list stack keeps from one loop iteration to the sweep: float arrays, and
    the masks and integer arrays they are computed with (``y > 0.1`` for ``np.where``)."""
    return isinstance(t, types.Array) and (
        isinstance(t.dtype, (types.Float, types.Boolean))
        or t.dtype in (types.int64, types.int32))


def is_float_list(t):
    """A list or typed List of floats (its adjoint is an array of its length)."""
    return isinstance(t, (types.List, types.ListType)) and isinstance(t.dtype, types.Float)


def is_array_list(t):
    """A list or typed List of float arrays (its adjoint: a list of arrays of the items'
    shapes)."""
    return isinstance(t, (types.List, types.ListType)) and is_float_array(t.dtype)


def is_float_dict(t):
    """A typed Dict whose values are floats (its adjoint: a Dict of the same keys)."""
    return isinstance(t, types.DictType) and isinstance(t.value_type, types.Float)


def is_float_container(t):
    """A list, typed List or typed Dict of floats, or a list of float arrays: containers
    with adjoints."""
    return is_float_list(t) or is_float_dict(t) or is_array_list(t)


def carries_floats(t):
    """Types other than floats and float arrays that can hold a differentiable value (an
    optional one too: ``np.linalg.matrix_power`` returns an optional array)."""
    if isinstance(t, types.Optional):
        return is_float(t.type) or is_float_array(t.type) or carries_floats(t.type)
    return isinstance(t, (types.Complex, types.BaseTuple, types.List, types.BoundFunction,
                          types.NumpyFlatType, types.Record))


#: Bytes of one entry, and a short tag, of an adstack of each dtype :func:`stack_dtype` gives.
STACK_ENTRY_BYTES = {"np.float64": 8, "np.int64": 8, "np.float32": 4, "np.int32": 4,
                     "np.bool_": 1, "np.complex128": 16, "np.complex64": 8}
STACK_TAGS = {"np.float64": "f8", "np.float32": "f4", "np.int64": "i8", "np.int32": "i4",
              "np.bool_": "b1", "np.complex128": "c16", "np.complex64": "c8"}


def stack_dtype(t):
    """Source of the NumPy dtype an adstack of values of type ``t`` holds, or None when
    such values cannot be kept on a stack."""
    if isinstance(t, types.Float):
        return "np.float32" if t.bitwidth == 32 else "np.float64"
    if isinstance(t, types.Boolean):
        return "np.bool_"
    if isinstance(t, types.Integer):
        return "np.int32" if t.bitwidth == 32 and t.signed else "np.int64"
    if isinstance(t, types.Complex):
        return "np.complex64" if t.bitwidth == 64 else "np.complex128"
    return None


def zero_expr(t):
    """The expression of a zero of type ``t`` (what a declared local starts as)."""
    if isinstance(t, types.Float):
        return expr("np.float32(0.0)") if t.bitwidth == 32 else value(0.0)
    if isinstance(t, types.Complex):
        return expr("np.complex64(0.0)") if t.bitwidth == 64 else value(0j)
    if isinstance(t, types.Boolean):
        return value(False)
    if isinstance(t, types.Integer) and t.bitwidth == 32 and t.signed:
        return expr("np.int32(0)")
    return value(0)


def is_literal(value):
    """A Python value written in generated source as itself (``repr``)."""
    return isinstance(value, (bool, int, float, str, type(None)))


def array_zero_expr(t):
    """The expression of the *no adjoint yet* of an array adjoint of type ``t``: an empty array of
    its dtype and dimension (see numba_adstack.ad.runtime)."""
    dt = stack_dtype(t.dtype)      # (a mask or an index array kept on a list stack too)
    if t.ndim == 0:     # no empty 0-d array: its adjoint starts at zero
        return expr("np.zeros((), {})", dt)
    return expr("np.empty({}, {})", (0,) * t.ndim, dt)


def array_placeholder_expr(t):
    """An empty array of ``t``'s dtype, dimension and layout (C or Fortran): what a kept
    array's name holds before the replay gives it a value."""
    empty = array_zero_expr(t)
    return expr("np.asfortranarray({})", empty) if t.layout == "F" and t.ndim > 1 else empty
