"""Element-wise helpers: ``erf`` and ``erfc`` on arrays (NumPy has none and Numba
compiles no ``scipy.special``), and the adjoint of ``np.clip``'s operand.

Most element-wise adjoints need no helper: their rules in ``array_rules.py`` are plain
array expressions, which Numba fuses into one loop.
"""
import math

from numba import vectorize

from .vjp_core import by_type, is_none


@vectorize(cache=False)
def erf(x):
    """The error function, element-wise (a ufunc usable in njit code)."""
    return math.erf(x)


@vectorize(cache=False)
def erfc(x):
    """The complementary error function, element-wise."""
    return math.erfc(x)


@by_type
def clip_vjp(g, a, a_min, a_max):
    """``y = np.clip(a, a_min, a_max)``: ``g`` where ``a_min <= a <= a_max`` (a bound of
    None is no bound), else 0. A value on a bound counts as inside: the gradient goes to
    ``a``, as ``max``/``min`` give it to their first operand on ties. Shaped like ``g``
    (the broadcast result): wrap in ``sum_to`` for a smaller ``a``."""
    if is_none(a_min) and is_none(a_max):
        return lambda g, a, a_min, a_max: g
    if is_none(a_min):
        return lambda g, a, a_min, a_max: g * (a <= a_max)
    if is_none(a_max):
        return lambda g, a, a_min, a_max: g * (a >= a_min)
    return lambda g, a, a_min, a_max: g * ((a >= a_min) & (a <= a_max))


@by_type
def clip_bounds_vjp(g, a, a_min, a_max, lower):
    """The adjoint of ``np.clip``'s lower bound (``lower`` true) or upper bound: ``g``
    where ``a`` lies strictly outside that bound. Crossed bounds (``a_min > a_max``) give
    ``a_max`` everywhere, as NumPy's ``minimum(maximum(a, a_min), a_max)``: the upper
    bound then gets the gradient. Shaped like ``g``."""
    if is_none(a_min):
        return lambda g, a, a_min, a_max, lower: g * (a > a_max)
    if is_none(a_max):
        return lambda g, a, a_min, a_max, lower: g * (a < a_min)

    def both(g, a, a_min, a_max, lower):
        crossed = a_min > a_max
        if lower:
            return g * ((a < a_min) & ~crossed)
        return g * ((a > a_max) | crossed)
    return both
