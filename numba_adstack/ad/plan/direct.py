"""Direct adjoints: temporaries whose adjoint is assigned once rather than accumulated.

Most values of the IR are temporaries read once, by the next statements of the same block
(``t = a * b; y = t + c``). Reversing that block reverses the read first: it is the only
contribution to ``t``'s adjoint, so the sweep *assigns* it (``t_bar = y_bar``) instead of
adding it into an accumulator that must be declared before and reset after. The adjoint is
then a variable assigned once, which the generated code can fold into its one use.
"""
from numba.core import ir

from ..typeinfo import is_float

_DIRECT_USES = ("binop", "inplace_binop", "unary", "cast", "call")


def direct_adjoints(facts, activity):
    """``{value name: the statement whose reverse assigns its adjoint}``."""
    out = {}
    for name in activity.useful:
        d = facts.defs.get(name)
        if d is None or isinstance(d[1].value, ir.Arg) or not (
                is_float(facts.ty(name)) or name in activity.array_values):
            continue
        uses = facts.uses.get(name, ())
        if len(uses) != 1:
            continue
        label, use = uses[0]
        if _is_phi(use):
            # Read by a phi on the one edge that leaves its own block: reversing that
            # edge is the only contribution, and it comes first.
            block = facts.fir.blocks[d[0]]
            if use.target.name in activity.useful and isinstance(block.terminator, ir.Jump) \
                    and block.terminator.target == label \
                    and facts.phi_incoming(use.target.name).get(d[0]) is not None \
                    and facts.phi_incoming(use.target.name)[d[0]].name == name:
                out[name] = use
            continue
        if label != d[0] or not _reverses_into(facts, activity, use, name):
            continue
        body = facts.fir.blocks[label].body
        if body.index(use) > body.index(d[1]):
            out[name] = use
    return out


def _is_phi(stmt):
    return isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) \
        and stmt.value.op == "phi"


def _reverses_into(facts, activity, use, name):
    """Does reversing ``use`` always run, and add into ``name``'s adjoint at most once?"""
    target = use.target.name if isinstance(use, ir.Assign) else None
    if target not in activity.useful or not (
            is_float(facts.ty(target)) or target in activity.array_values):
        return False
    e = use.value
    if isinstance(e, ir.Var):
        return is_float(facts.ty(target))
    if not isinstance(e, ir.Expr) or e.op not in _DIRECT_USES:
        return False
    if e.op == "call" and facts.reduction(e) is not None and \
            name not in activity.array_values:
        return False
    return sum(1 for v in e.list_vars() if v.name == name) == 1
