"""Element-wise helpers: ``erf`` and ``erfc`` on arrays (NumPy has none and Numba
compiles no ``scipy.special``), the guarded products ``zmul`` (of numbers) and
``zmultiply`` (its ufunc) and the adjoint of ``np.clip``'s operand.

Most element-wise adjoints need no helper: their rules in ``array_rules.py`` are plain
array expressions, which Numba fuses into one loop.
"""
import math
import operator

from llvmlite import ir
from numba import types, vectorize
from numba.core.extending import intrinsic

from .vjp_core import by_type, is_none


@vectorize(cache=False)
def erf(x):
    """The error function, element-wise (a ufunc usable in njit code)."""
    return math.erf(x)


@vectorize(cache=False)
def erfc(x):
    """The complementary error function, element-wise."""
    return math.erfc(x)


def _zmul_signature(typingctx, g, p, codegen):
    if isinstance(g, types.Array) or isinstance(p, types.Array):
        # (a 0-d array: a scalar rule's operand, or its tangent, in forward mode)
        ufunc = typingctx.resolve_value_type(zmultiply)
        sig = typingctx.resolve_function_type(ufunc, (g, p), {})
        return None if sig is None else (sig, _through_ufunc)
    if not (isinstance(g, types.Number) and isinstance(p, (types.Number, types.Boolean))):
        return None
    rt = typingctx.resolve_function_type(operator.mul, (g, p), {}).return_type
    return rt(g, p), codegen


def _through_ufunc(context, builder, sig, args):
    return context.compile_internal(builder, lambda g, p: zmultiply(g, p), sig, args)


def _operands(context, builder, sig, args):
    """The operands as the result's type, or None where it is no float (complex)."""
    rt = sig.return_type
    if not isinstance(rt, types.Float):
        return None
    return [context.cast(builder, v, t, rt) for v, t in zip(args, sig.args)]


def _other(context, builder, sig, args):
    return context.compile_internal(
        builder, lambda g, p: g * p if g != 0 else g * p * 0, sig, args)


def _select(context, builder, sig, args):
    ops = _operands(context, builder, sig, args)
    if ops is None:
        return _other(context, builder, sig, args)
    a, b = ops
    return builder.select(builder.fcmp_unordered("!=", a, a.type(0.0)),
                          builder.fmul(a, b), a.type(0.0))


def _branch(context, builder, sig, args):
    ops = _operands(context, builder, sig, args)
    if ops is None:
        return _other(context, builder, sig, args)
    a, b = ops
    product = builder.fmul(a, b)
    module = builder.module
    fabs = module.declare_intrinsic("llvm.fabs", [a.type])
    nonzero = builder.fcmp_ordered(">", builder.call(fabs, [a]), a.type(0.0))
    before = builder.basic_block
    check = builder.append_basic_block("zmul.zero_or_nan")
    done = builder.append_basic_block("zmul.done")
    branch = builder.cbranch(nonzero, done, check)
    branch.set_metadata("prof", module.add_metadata(
        [ir.MetaDataString(module, "branch_weights"), _I32(1 << 20), _I32(1)]))
    builder.position_at_end(check)          # (a NaN g keeps its NaN product)
    guarded = builder.select(builder.fcmp_unordered("!=", a, a.type(0.0)), product,
                             a.type(0.0))
    builder.branch(done)
    builder.position_at_end(done)
    out = builder.phi(a.type)
    out.add_incoming(product, before)
    out.add_incoming(guarded, check)
    return out


@intrinsic
def zmul(typingctx, g, p):
    """``g * p`` where ``g`` is not zero, else zero (whatever ``p``: an infinity, a NaN):
    the contribution of a partial ``p`` to an adjoint (in forward mode: a tangent) ``g``
    (rules/template.py, ``zero_safe``). In a loop: the product, and a branch to the test
    of ``g`` where ``|g| > 0`` fails, marked as almost never taken, which the processor
    predicts: the loop's adjoint chain does not wait for the test (a select would), and
    LLVM merges the tests of the contributions that share an adjoint."""
    return _zmul_signature(typingctx, g, p, _branch)


@intrinsic
def zmul_select(typingctx, g, p):
    """``zmul`` as a select, for code that runs once (the backward's statements outside
    loops) and element loops: there a branch, and the weight that keeps it one, only
    change how LLVM lays out the loops around it."""
    return _zmul_signature(typingctx, g, p, _select)


_I32 = ir.IntType(32)


@vectorize(cache=False)
def zmultiply(g, p):
    """``zmul`` element-wise: a ufunc, so that Numba fuses it with the array expression
    around it."""
    # (g - g: a zero of the product's type, as g * p has)
    return g * p if g != 0 else g - g


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
