"""Refusals: constructs on the gradient path that the rewrite cannot differentiate.

Reads the facts and the activity; produces nothing, or raises ``NonDifferentiableError``
naming the function, the construct and its line. Run before anything is planned, so that
what is refused is refused whatever the plan, and never differentiated wrongly.
"""
import numpy as np
from numba.core import ir, types

from .. import rules as R
from .ir_facts import is_range
from .rule_binding import bind_expr
from ..rules import array_effects as effects
from .view_checks import check_views
from .memory import MemoryModel, call_view_operand, shared_writes, writes_into_held_arrays
from .unreplayed_reads import check_reads_of_unreplayed_stores
from ..typeinfo import holds_complex, is_array_list, is_float, is_float_array
from .operators import OPS, UNARY
from .names import describe, is_generated


def check(facts, activity):
    _check_complex(facts, activity)
    check_views(facts, activity)
    _check_shared_writes(facts, activity)
    check_reads_of_unreplayed_stores(facts, activity)
    for blk in facts.fir.blocks.values():
        for stmt in blk.body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr):
                _check_expr(facts, activity, stmt.target.name, stmt.value, stmt)
            elif isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                _check_store(facts, activity, stmt)


def _check_expr(facts, activity, name, e, stmt):
    if e.op == "call" and isinstance(facts.typemap.get(e.func.name),
                                     types.ObjModeDispatcher):
        _check_object_mode(facts, activity, e, name)
    if e.op == "call" and facts.target.atomic_update(facts, stmt) is None \
            and not is_range(facts.resolve_global(e.func)):
        check_call(facts, activity, e, name)
        _check_mutating_call(facts, activity, e)
        _check_sequence_operands(facts, activity, e, name)
    if e.op == "inplace_binop" and isinstance(facts.ty(e.lhs), types.Array) \
            and facts.array_rule(e) is None:
        facts.error("in-place whole-array arithmetic (`%s=` on %s) with no adjoint rule"
                    % (OPS.get(e.immutable_fn, "?"), facts.ty(e.lhs)), e.loc)
    if e.op != "phi" and name in activity.useful and is_float_array(facts.ty(name)):
        _check_array_def(facts, name, e, stmt)
    if name in activity.useful:
        _check_optional_inputs(facts, activity, e)


def _check_complex(facts, activity):
    """Refuse every construct that reads or makes a complex value depending on the
    differentiated arguments where its result reaches the gradient, unless a complex rule
    handles it (rules/complex_rules.py): the adjoint would be dropped there, a silently
    wrong gradient."""
    for blk in facts.fir.blocks.values():
        for stmt in blk.body:
            if not isinstance(stmt, ir.Assign) or stmt.target.name not in activity.useful:
                continue
            e, t = stmt.value, facts.ty(stmt.target.name)
            if isinstance(e, ir.Arg) and holds_complex(t):
                facts.error("the complex argument %r is not differentiated; pass its real "
                            "and imaginary parts as floats (`complex(re, im)` inside), or "
                            "leave it out of wrt=" % stmt.target.name, stmt.loc)
            inputs = [e.name] if isinstance(e, ir.Var) else \
                _inputs(facts, e) if isinstance(e, ir.Expr) else []
            bad = [v for v in inputs if v in activity.varied and holds_complex(facts.ty(v))]
            if not (bad or holds_complex(t)) or isinstance(e, ir.Var) or (
                    isinstance(e, ir.Expr) and (e.op in ("phi", "cast")
                                                or R.complex_rule(facts, e) is not None
                                                or _tuple_item(facts, e))):
                continue
            if bad:
                what = "a value of type %s" % facts.ty(bad[0]) if bad[0].startswith("$") \
                    else "%r (%s)" % (_user_name(bad[0]), facts.ty(bad[0]))
                what = "of " + what
            else:
                what = "producing %s" % t
            facts.error("%s %s, which depends on the differentiated arguments, has no "
                        "complex adjoint rule; write it with the real and imaginary parts "
                        "as floats (`re * re + im * im` for `abs(z) ** 2`)"
                        % (_construct(facts, e), what), stmt.loc)


def _tuple_item(facts, e):
    """Is ``e`` an item of a tuple built in the function (its adjoint goes to the item)?"""
    return e.op in ("getitem", "static_getitem") and \
        isinstance(facts.ty(e.value), types.BaseTuple) and facts.tuple_item(e) is not None


def _inputs(facts, e):
    """The variables ``e`` reads, and the receivers of the methods it calls."""
    out = []
    for v in e.list_vars():
        out.append(v.name)
        d = facts.def_expr(v.name)
        if isinstance(d, ir.Expr) and d.op == "getattr" \
                and isinstance(facts.ty(v.name), types.BoundFunction):
            out.append(d.value.name)
    return out


def _construct(facts, e):
    """How a message names the construct ``e``."""
    if isinstance(e, ir.Expr):
        if e.op in ("binop", "inplace_binop"):
            fn = e.immutable_fn if e.op == "inplace_binop" else e.fn
            return "the operator `%s`" % OPS.get(fn, fn)
        if e.op == "unary":
            return "the unary operator `%s`" % UNARY.get(e.fn, e.fn).strip()
        if e.op == "getattr":
            return "the attribute `.%s`" % e.attr
        if e.op == "call":
            fn = facts.resolve_global(e.func)
            if fn is None:
                return _call_description(facts, e)
            module = getattr(fn, "__module__", None) or ""
            prefix = "np." if isinstance(fn, np.ufunc) or module.startswith("numpy") else \
                "cmath." if module == "cmath" else ""
            return "`%s%s`" % (prefix, getattr(fn, "__name__", fn))
        if e.op in ("getitem", "static_getitem"):
            return "reading an item of %s" % facts.ty(e.value)
        return "the expression `%s`" % e.op
    return "the assignment"


def _primitive_name(fn):
    return "`np.%s`" % getattr(fn, "__name__", fn)


def _check_store(facts, activity, stmt):
    if not is_float_array(facts.ty(stmt.target)):
        return
    if facts.array_root(stmt.target.name) not in activity.useful_roots and \
            not facts.target.seeds_store(facts, stmt):
        return
    v = stmt.value
    if v.name in activity.useful and not (is_float(facts.ty(v)) or is_float_array(facts.ty(v))):
        facts.error("assigning %s into a slice of an array (`a[i:j] = ...`); write the "
                    "element-wise loop" % facts.ty(v), stmt.loc)


#: ``check(facts, activity, expr, name, fn)`` for each call on the gradient path
#: (registered by ad/calls/: a user's rule checks what it returns).
_CALL_CHECKS = []


def register_call_check(check):
    _CALL_CHECKS.append(check)


def check_call(facts, activity, e, name):
    """A call whose float result reaches the gradient needs an adjoint rule."""
    if name in activity.useful:
        for hook in _CALL_CHECKS:
            hook(facts, activity, e, name, facts.resolve_global(e.func))
    if facts.reduction(e) is not None or facts.array_copy_source(e) is not None \
            or facts.float_itself(e) is not None:
        return
    fn = facts.resolve_global(e.func)
    t = facts.ty(name)
    if fn in R.ARRAY_CONSTRUCTORS:
        return
    if name in activity.useful:
        _check_operands_without_rule(facts, activity, e, fn)
    # (Array results are checked with the array's definition, _check_array_def.) A float
    # of arrays without an array rule (np.nanmax(x)) has none: the scalar rules of
    # CALL_RULES are of floats.
    # (A 0-d array is one float: the scalar rule holds for it.)
    on_arrays = any(isinstance(facts.ty(a), types.Array) and facts.ty(a).ndim > 0
                    for a in list(e.args) + [v for _, v in e.kws])
    if name in activity.useful and is_float(t) and fn not in R.NON_DIFFERENTIABLE_CALLS \
            and (fn not in R.CALL_RULES or on_arrays) and R.complex_rule(facts, e) is None:
        fname = getattr(fn, "__name__", None)
        if fname is None:
            f = facts.def_expr(e.func.name)
            fname = ("the method %s" % f.attr if isinstance(f, ir.Expr)
                     and f.op == "getattr" else str(fn))
        facts.error("the call to %s has no derivative rule%s: write it with functions "
                    "that have one (docs/grad_jit.md lists them), or give it one with "
                    "numba_adstack.custom_vjp (docs/grad_jit.md, custom derivatives)"
                    % (fname, " for arrays" if on_arrays else ""), e.loc)


def _check_operands_without_rule(facts, activity, e, fn):
    """A varied operand of a primitive without a derivative in it (the shape parameter of
    ``gammainc``) is refused, naming it."""
    try:
        missing = R.OPERANDS_WITHOUT_RULE.get(fn)
    except TypeError:                  # unhashable: not a primitive
        return
    for k, v in enumerate(e.args):
        if missing and k in missing and v.name in activity.varied:
            facts.error("the call to %s has no derivative in its argument %d (%s), which "
                        "depends on the differentiated arguments; pass it a constant, or "
                        "give the call a derivative with numba_adstack.custom_vjp"
                        % (getattr(fn, "__name__", fn), k + 1, missing[k]), e.loc)


def _check_optional_inputs(facts, activity, e):
    """A value that may be None (``np.linalg.matrix_power`` returns an optional array)
    has no derivative rule: refused where the gradient reads it, naming what made it."""
    for v in facts.expr_inputs(e):
        t = facts.ty(v)
        if v not in activity.varied or not isinstance(t, types.Optional):
            continue
        d = facts.def_expr(v)
        what = _call_description(facts, d) if isinstance(d, ir.Expr) and d.op == "call" \
            else "the value %r" % v
        facts.error("%s producing %s (a value or None) has no derivative rule"
                    % (what, t), e.loc)


def _check_sequence_operands(facts, activity, e, name):
    """A primitive given a tuple or list holding varied floats (``np.append(x, [a, b])``)
    gets contributions for the arrays of a tuple built in the function only: refuse the
    rest rather than give the floats none."""
    if name not in activity.useful:
        return
    bound = bind_expr(facts, e)
    if bound is None:
        return
    for op in bound.operands:
        if not (isinstance(op, ir.Var) and op.name in activity.varied
                and isinstance(facts.ty(op), (types.BaseTuple, types.List))):
            continue
        t = facts.ty(op)
        elems = t.types if isinstance(t, types.BaseTuple) else (t.dtype,)
        if not any(is_float(x) or is_float_array(x) for x in elems):
            continue                    # a shape: integers only
        built = facts.tuple_build(op.name) if isinstance(t, types.BaseTuple) else None
        if built is None or any(v.name in activity.varied and not is_float_array(facts.ty(v))
                                for v in built.items):
            facts.error("%s of a %s holding floats that depend on the arguments: the "
                        "gradient reaches the arrays of a tuple written at the call only; "
                        "make the floats an array first (`np.array([a, b])`)"
                        % (_call_description(facts, e), facts.ty(op)), e.loc)


def _check_object_mode(facts, activity, e, name):
    """A ``with numba.objmode()`` block runs as it is; one whose results depend on what
    the gradient differentiates, and reach it, has no derivative."""
    if name in activity.useful or (name in activity.varied and any(
            v in activity.useful for v, _ in _uses_of(facts, name))):
        facts.error("a value computed in a `with numba.objmode()` block from values the "
                    "gradient differentiates: object mode has no derivative; compute it "
                    "in nopython code, or pass it in as an argument", e.loc)


def _uses_of(facts, name):
    """``(target, statement)`` of the assignments reading ``name``."""
    return [(s.target.name, s) for _, s in facts.uses.get(name, ())
            if isinstance(s, ir.Assign)]


def _check_mutating_call(facts, activity, e):
    """Refuse a call that writes into an array the gradient reads (``y.put(i, v)``,
    ``np.fill_diagonal(y, v)``, a call the effect table does not know, which may write
    every array it is given): what it writes is invisible to the rewrite."""
    arrays, what = facts.call_writes(e)
    known = facts.resolve_global(e.func) is None or \
        effects.writes_into_first(facts.resolve_global(e.func)) or \
        facts._out_given(e, None) is not None
    for a in arrays:
        root = facts.array_root(a.name)
        if root not in activity.useful_roots and a.name not in activity.varied:
            continue
        if known:
            facts.error("%s writes into the array %r, which the gradient reads; write the "
                        "element-wise loop, or compute into a new array" % (what, root),
                        e.loc)
        facts.error("the call to %s may write into the array %r, which the gradient "
                    "reads: the rewrite knows what NumPy, math and Numba functions write, "
                    "not this call; pass it a copy (`%s.copy()`), or give the call a "
                    "derivative with numba_adstack.custom_vjp" % (what, root, root), e.loc)


def _check_array_def(facts, name, e, stmt):
    """Arrays on the gradient path must be arguments, fresh arrays, views or aliases;
    whole-array arithmetic is refused rather than differentiated wrongly."""
    if isinstance(e, (ir.Arg, ir.Var, ir.Global, ir.FreeVar, ir.Const)):
        return
    if isinstance(e, ir.Expr):
        if e.op in ("getitem", "static_getitem", "cast"):
            return
        if e.op == "call" and (facts.resolve_global(e.func) in R.ARRAY_CONSTRUCTORS
                               or facts.local_array(name)):
            return
        if facts.array_copy_source(e) is not None:
            return
        if e.op == "getattr" and e.attr == "T":
            return
        if facts.array_rule(e) is not None:
            return
    facts.error(array_expr_message(facts, name), stmt.loc)


def array_expr_message(facts, name):
    """Why the array ``name`` cannot be differentiated, naming the expression."""
    e = facts.def_expr(name)
    if isinstance(e, ir.Expr) and e.op == "call":
        fn = facts.resolve_global(e.func)
        why = facts.target.refused_constructor(fn)
        if why is not None:
            return "`%s` on the gradient path: %s" % (facts.target.display_name(fn), why)
    what = "an array expression"
    if isinstance(e, ir.Expr):
        if e.op in ("binop", "inplace_binop"):
            fn = e.immutable_fn if e.op == "inplace_binop" else e.fn
            what = "whole-array arithmetic (`%s`)" % OPS.get(fn, fn)
        elif e.op == "unary":
            what = "whole-array arithmetic (unary `%s`)" % UNARY.get(e.fn, e.fn).strip()
        elif e.op == "getattr":
            what = "the array attribute `.%s`" % e.attr
        elif e.op == "call":
            what = _call_description(facts, e)
        elif e.op in ("static_getitem", "getitem"):
            item = _tuple_item_description(facts, e)
            if item is not None:
                return ("%s has no derivative rule (the items with one: those of "
                        "np.linalg.eigh, eig, svd, slogdet, qr and lstsq, of "
                        "np.polynomial.polynomial.polydiv, and of np.split, array_split, "
                        "hsplit, vsplit and dsplit read from a list not changed in place; "
                        "see docs/array_rules.md)" % item)
            held = facts.ty(e.value)
            if isinstance(held, (types.List, types.ListType, types.DictType)):
                return ("reading arrays out of a %s that differentiable values were put "
                        "into; keep them in a tuple, or in the rows of one array "
                        "(np.empty((n, m)) and a[k] = ...)" % held)
    target = "" if is_generated(name) else ", assigned to %r," % name
    return ("%s%s producing %s has no array rule (the supported primitives are listed in "
            "docs/array_rules.md): write the element-wise loop, or give the function a "
            "derivative with numba_adstack.custom_vjp" % (what, target, facts.ty(name)))


def _tuple_item_description(facts, e):
    """``item 0 of the tuple `np.linalg.svd` returns`` for an item of a call's result
    (read by index or unpacked), or None."""
    tup = facts.def_expr(e.value.name)
    if isinstance(tup, ir.Expr) and tup.op == "exhaust_iter":
        tup = facts.def_expr(tup.value.name)
    if not (isinstance(tup, ir.Expr) and tup.op == "call"):
        return None
    index = e.index if e.op == "static_getitem" else "k"
    return "item %s of the tuple returned by %s" % (index, _call_description(facts, tup))


def _call_description(facts, e):
    fn = facts.resolve_global(e.func)
    d = facts.def_expr(e.func.name)
    if fn is None and isinstance(d, ir.Expr) and d.op == "getattr":
        return "the array method `.%s()`" % d.attr
    shown = facts.target.display_name(fn)
    if shown is not None:
        return "`%s`" % shown
    module = getattr(fn, "__module__", None) or ""
    prefix = "np." if isinstance(fn, np.ufunc) or module.startswith("numpy") else ""
    if module.startswith("numpy.linalg"):
        prefix = "np.linalg."
    return "the array function `%s%s`" % (prefix, getattr(fn, "__name__", fn))


def _check_shared_writes(facts, activity):
    """Writes into an array that another name with an adjoint of its own may name while
    it is read later (the memory model, facts/memory.py): one array would change under
    two adjoints. Refused by the user's names, with a copy as the fix."""
    model = MemoryModel(facts)
    active = activity.useful_roots | activity.useful

    def relevant(names):
        return bool(set(names) & active)
    arrays_held = {c for c in activity.container_adjoints if is_array_list(facts.ty(c))}
    for stmt, written, held, put in writes_into_held_arrays(facts, model, arrays_held):
        what = "a view of it" if model.base(put) != put else "it"
        facts.error("writing into %s after %s was put into the list %s (line %s), which "
                    "is read later: a list holds the array itself, not its values when "
                    "put in; put a copy in (`.copy()`)"
                    % (_described(facts, written), what, _described(facts, held),
                       getattr(facts.def_loc(put), "line", "?")), stmt.loc)
    for stmt, written, other in shared_writes(facts, model, relevant):
        w, o = _described(facts, written), _described(facts, other)
        made = _made_by_call(facts, model, other)
        if made is not None:
            facts.error("writing into %s after %s was made from it by %s (line %s), which "
                        "may share its memory: %s is read later and would see the write; "
                        "copy it when it is made (`.copy()`), or write before it"
                        % (w, o, made[1], made[2], o), stmt.loc)
        made = _made_by_call(facts, model, written)
        if made is not None:
            facts.error("writing into %s, the result of %s (line %s), which may share "
                        "memory with %s, while %s is read later: both would see the write; "
                        "copy the result (`.copy()`) to write into it"
                        % (w, made[1], made[2], o, o), stmt.loc)
        facts.error("writing into %s while %s, which may name the same array (%s), is read "
                    "later: both names would see the write; give %s an array of its own "
                    "with a copy (`.copy()`) where it takes that array"
                    % (w, o, _how_shared(facts, model, other), o), stmt.loc)


def _made_by_call(facts, model, name):
    """``(variable, call's name, line)`` where ``name``'s memory comes through a call that
    may return a view (``r = z.reshape(2, 3)``), else None."""
    step = name
    while step is not None:
        viewed = call_view_operand(facts, facts.def_expr(step))
        if viewed is not None:
            return step, viewed[1], getattr(facts.def_loc(step), "line", "?")
        step = model.shares_with(step)
    return None


def _described(facts, name):
    """How a message names the array variable ``name``: the user's name, or what made it."""
    viewed = call_view_operand(facts, facts.def_expr(name))
    if viewed is not None and is_generated(name):
        return "the array %s makes of %s" % (viewed[1], _described(facts, viewed[0].name))
    return describe(facts, name)


def _how_shared(facts, model, other):
    """How ``other`` came to name the array written, in words."""
    if model.base(other) in facts.phis:
        return "it is rebound in a loop or a branch to arrays that include it"
    return "one array since line %s" % getattr(facts.def_loc(other), "line", "?")


def _user_name(name):
    """The source name of an IR variable (``w`` for its SSA versions ``w.1``, ``w.2``)."""
    return name.split(".")[0]
