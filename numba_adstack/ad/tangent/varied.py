"""Which values a tangent reaches, for forward mode.

Reads the :class:`~..facts.ir_facts.IRFacts` and the indices of the arguments that take a tangent;
produces the set of variable names whose tangent may be non-zero. A value is varied when
one of its inputs is (through arithmetic, calls, phis, tuples, iterators); integers and
booleans never are. Float arrays go by *buffer class* (the arrays that may share memory,
:meth:`~..facts.array_facts.ArrayFacts._buffer_classes`): a class is varied when a member is
computed from varied values or a varied value is stored into one, and then every member
carries a tangent, so that a tangent array's views and writes mirror the primal's.
"""
from numba.core import ir, types

from ... import intrinsics as I
from ..rules.helpers import IN_PLACE
from ..typeinfo import is_float_array


def _never_varied(t):
    return isinstance(t, (types.Integer, types.Boolean, types.NoneType)) or (
        isinstance(t, types.Array) and not is_float_array(t))


def _inputs(facts, name):
    if name in facts.phis:
        return [v.name for v in facts.phi_incoming(name).values() if isinstance(v, ir.Var)]
    e = facts.def_expr(name)
    if isinstance(e, ir.Var):
        return [e.name]
    if isinstance(e, ir.Expr):
        return facts.expr_inputs(e)
    return []


def _writes(facts):
    """``[(written array, value or operand vars)]``: stores, in-place updates and calls
    that write into an array."""
    out = []
    for blk in facts.fir.blocks.values():
        for stmt in blk.body:
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                out.append((stmt.target.name, [stmt.value.name]))
            elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr):
                e = stmt.value
                if e.op == "inplace_binop" and is_float_array(facts.ty(e.lhs)):
                    out.append((e.lhs.name, [e.rhs.name]))
                for a in facts.mutated_arrays(e):
                    out.append((a.name, facts.expr_inputs(e)))
                if e.op == "call":
                    out.extend(_container_writes(facts, e))
    return out


def _container_writes(facts, e):
    """A push onto a stack, an append to a list, a helper adding into an adjoint array
    (in generated backwards, which hvp differentiates), a kernel's atomic add: the
    container holds the value."""
    fn = facts.resolve_global(e.func)
    if fn is I.push and len(e.args) == 2:
        return [(e.args[0].name, [e.args[1].name])]
    if fn in IN_PLACE.values():       # add_dot_vjp_a(out, g, a, b): out += ...
        return [(e.args[0].name, [a.name for a in e.args[1:]])]
    if fn is not None and fn is getattr(facts.target, "atomic_add", None):
        return [(e.args[0].name, [e.args[2].name])]
    f = facts.def_expr(e.func.name)
    if fn is None and isinstance(f, ir.Expr) and f.op == "getattr" and \
            isinstance(facts.ty(f.value), (types.List, types.ListType, types.DictType)):
        # (Only append and clear are mirrored on the tangent's list; forward mode refuses
        # the other changes of a list or Dict that has a tangent: tangents.effect.)
        return [(f.value.name, [a.name for a in e.args])]
    return []


def varied_values(facts, wrt):
    """Names of the values whose tangent may be non-zero when the arguments ``wrt`` (by
    index) have tangents."""
    classes = facts._buffer_classes()
    varied = set()
    varied_classes = set()
    for k, a in enumerate(facts.arg_vars):
        if k in wrt and not _never_varied(facts.ty(a)):
            varied.add(a)
            if a in classes:
                varied_classes.add(classes[a])
    names = [n for n in list(facts.defs) + list(facts.phis)
             if not _never_varied(facts.typemap.get(n))]
    writes = _writes(facts)
    changed = True
    while changed:
        changed = False
        for target, values in writes:
            cls = classes.get(target, target)
            if cls not in varied_classes and any(v in varied for v in values):
                varied_classes.add(cls)
                changed = True
        for name in names:
            if name in varied:
                continue
            cls = classes.get(name, name)
            if cls in varied_classes or \
                    any(v in varied for v in _inputs(facts, name)):
                varied.add(name)
                varied_classes.add(cls)
                changed = True
    return varied
