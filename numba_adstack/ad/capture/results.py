"""A 0-d float array result read as the float it holds, for ``grad`` and
``value_and_grad`` (as JAX takes one): the value returned is ``np.sum`` of it, a
reduction with its rule, so the rest of the rewrite sees a function returning a float."""
import numpy as np
from numba.core import ir, types


def is_zero_d_float(t):
    return isinstance(t, types.Array) and t.ndim == 0 and isinstance(t.dtype, types.Float)


def float_result(typed):
    """Rewrite ``typed`` (in place) so that it returns the float of its 0-d array result;
    a function of another result is left as it is. Returns ``typed``."""
    if not is_zero_d_float(typed.return_type):
        return typed
    from numba.core.registry import cpu_target
    ctx = cpu_target.typing_context
    fnty = ctx.resolve_value_type(np.sum)
    sig = ctx.resolve_function_type(fnty, (typed.return_type,), {})
    fir = typed.func_ir
    for blk in fir.blocks.values():
        if not isinstance(blk.terminator, ir.Return):
            continue
        ret = blk.terminator.value
        k, cast = next((k, s) for k, s in enumerate(blk.body) if isinstance(s, ir.Assign)
                       and s.target.name == ret.name)
        loc = cast.loc
        fn = ir.Var(blk.scope, "$float_result_fn%d" % k, loc)
        fn = blk.scope.redefine(fn.name, loc)
        value = blk.scope.redefine("$float_result", loc)
        get = ir.Global("sum", np.sum, loc)
        call = ir.Expr.call(fn, [cast.value.value], (), loc)
        blk.body[k:k] = [ir.Assign(get, fn, loc), ir.Assign(call, value, loc)]
        fir._definitions[fn.name] = [get]
        fir._definitions[value.name] = [call]
        cast.value.value = value
        typed.typemap[fn.name] = fnty
        typed.typemap[value.name] = sig.return_type
        typed.typemap[ret.name] = sig.return_type
        typed.calltypes[call] = sig
    typed.return_type = sig.return_type
    return typed
