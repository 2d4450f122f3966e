"""Refusals of writes into memory that the rewrite cannot follow: memory a call-made view
shares, arrays read out of lists and dicts, stores through ``.flat`` left for after typing.

A call that may return a view of its operand (``x.reshape(6)``, ``np.asarray(x)``,
``np.flip(x)``, ``x.view(t)``; the table is :data:`..rules.array_effects.MAY_RETURN_VIEW`)
makes an array the rewrite keeps as a value of its own, with an adjoint of its own. A write
into either after the call would change the other unseen, so it is refused when the
gradient reads either; a write before the call is fine, and so is a view of a fresh array
nothing else reads (``np.zeros(6).reshape(2, 3)``: the view is the only way to it).

An array put into a list or a dict is memory the rewrite no longer follows: an array read
out of one is a value of its own to it. A write into such an array is refused where the
gradient reads it or what it may be. A store through ``.flat`` of an array whose number of
dimensions is known only once typed (:mod:`..capture.writes` rewrites the others) is refused where
the gradient reads the array.
"""
from numba.core import ir, types

from .rule_binding import bind_expr
from ..rules.array_effects import MAY_RETURN_VIEW, VIEW_METHODS, member
from .structure import successors


def check_views(facts, activity):
    writes = list(_writes(facts))
    active = activity.useful_roots | activity.varied
    _check_flat_stores(facts, active, writes)
    _check_container_writes(facts, active, writes)
    for name, (label, stmt) in facts.defs.items():
        if not isinstance(facts.typemap.get(name), types.Array):
            continue
        found = view_operand(facts, stmt.value)
        if found is None:
            continue
        operand, what = found
        viewed = facts.array_root(operand.name)
        if _only_way_to(facts, operand, viewed):
            continue
        if not {name, viewed, facts.array_root(name)} & active:
            continue
        mine = {facts.buffer_class.get(name, name)}
        theirs = {facts.buffer_class.get(operand.name, operand.name),
                  facts.buffer_class.get(viewed, viewed)}
        for wlabel, windex, target, wstmt in writes:
            cls = facts.buffer_class.get(target.name, target.name)
            root = facts.array_root(target.name)
            if cls in mine or root == name:
                written = ("the array %s makes" % what if root.startswith("$")
                           else "%r, the result of %s" % (root, what))
                facts.error("writing into %s, which may share memory with %r; copy it "
                            "first (`.copy()`)" % (written, viewed), wstmt.loc)
            if (cls in theirs or root == viewed) and _reaches(
                    facts, label, stmt, wlabel, windex):
                facts.error("writing into %r after %r was made from it by %s (line %s), "
                            "which may share its memory: the write would change %r "
                            "unseen; make %r with a copy (`.copy()`), or write before it"
                            % (root, name, what, stmt.loc.line, name, name), wstmt.loc)


def view_operand(facts, e):
    """``(operand, name of the call)`` when ``e`` may return a view of ``operand``, else
    None. (Slices and ``.T`` are views the rewrite follows: not these.)"""
    if not isinstance(e, ir.Expr):
        return None
    if e.op == "getattr" and e.attr in ("real", "imag") \
            and isinstance(facts.ty(e.value), types.Array):
        return e.value, "`.%s`" % e.attr
    if e.op != "call":
        return None
    bound = bind_expr(facts, e)
    if bound is not None and bound.fn in MAY_RETURN_VIEW and bound.operands:
        return bound.operands[0], "`np.%s`" % getattr(bound.fn, "__name__", bound.fn)
    fn = facts.resolve_global(e.func)
    if member(fn, MAY_RETURN_VIEW) and e.args:
        return e.args[0], "`%s`" % getattr(fn, "__name__", fn)
    f = facts.def_expr(e.func.name)
    if isinstance(f, ir.Expr) and f.op == "getattr" and f.attr in VIEW_METHODS \
            and isinstance(facts.ty(f.value), types.Array):
        return f.value, "`.%s()`" % f.attr
    return None


def _only_way_to(facts, operand, viewed):
    """Is ``operand`` fresh memory (a constructor's, a copy, a computed array) that only
    this call reads?"""
    if operand.name != viewed or len(facts.uses.get(operand.name, ())) != 1:
        return False
    if operand.name in facts.arg_vars:
        return False
    return facts.is_buffer_source(viewed) or facts.computed_array(viewed)


def _writes(facts):
    """``(label, index, array written, statement)`` of every write into an array."""
    for label, blk in facts.fir.blocks.items():
        for k, stmt in enumerate(blk.body):
            upd = facts.array_update(stmt)
            if upd is not None:
                yield label, k, upd[0], stmt
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr):
                e = stmt.value
                if e.op == "inplace_binop" and isinstance(facts.ty(e.lhs), types.Array):
                    yield label, k, e.lhs, stmt
                for a in facts.mutated_arrays(e):
                    yield label, k, a, stmt


def _reaches(facts, label, stmt, wlabel, windex):
    """Can the write at ``(wlabel, windex)`` run after ``stmt`` in block ``label``?"""
    blocks = facts.fir.blocks
    if wlabel == label and windex > blocks[label].body.index(stmt):
        return True
    seen, work = set(), list(successors(blocks[label]))
    while work:
        b = work.pop()
        if b == wlabel:
            return True
        if b in seen:
            continue
        seen.add(b)
        work.extend(successors(blocks[b]))
    return False


def _check_flat_stores(facts, active, writes):
    for _, _, target, stmt in writes:
        d = facts.def_expr(target.name)
        if isinstance(facts.ty(target), types.NumpyFlatType) and isinstance(d, ir.Expr) \
                and d.op == "getattr" and (facts.array_root(d.value.name) in active
                                           or stmt.value.name in active):
            facts.error("a store through `.flat` of %r, whose number of dimensions is "
                        "known only once typed: store by its indices (`a[i, j] = v`), or "
                        "make it with a literal shape first" % d.value.name, stmt.loc)


def _check_container_writes(facts, active, writes):
    """Writes into arrays read out of lists and dicts, where an array put into one, or
    the array written, is read by the gradient."""
    escaped = _put_in_containers(facts)
    if not escaped:
        return
    for _, _, target, stmt in writes:
        d = facts.def_expr(facts.array_root(target.name))
        if not (isinstance(d, ir.Expr) and d.op in ("getitem", "static_getitem")
                and isinstance(facts.ty(d.value), _CONTAINERS)):
            continue
        if escaped & active or facts.array_root(target.name) in active:
            facts.error("writing into an array read out of %r, a %s: the rewrite does "
                        "not follow the arrays put into it (%s); write into the array by "
                        "its own name, or keep the arrays in a tuple"
                        % (d.value.name, facts.ty(d.value),
                           ", ".join(repr(a) for a in sorted(escaped)
                                     if not a.startswith("$")) or "arrays it computed"),
                        stmt.loc)


_CONTAINERS = (types.List, types.ListType, types.DictType, types.Set)


def _put_in_containers(facts):
    """Roots of the arrays put into lists or dicts (built with them, appended, stored)."""
    out = set()
    for blk in facts.fir.blocks.values():
        for stmt in blk.body:
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) and isinstance(
                    facts.ty(stmt.target), _CONTAINERS):
                vals = [stmt.value]
            elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and \
                    stmt.value.op in ("build_list", "build_map", "build_set", "call"):
                e = stmt.value
                if e.op == "call":
                    f = facts.def_expr(e.func.name)
                    if not (isinstance(f, ir.Expr) and f.op == "getattr" and
                            isinstance(facts.ty(f.value), _CONTAINERS)):
                        continue
                    vals = list(e.args)
                elif e.op == "build_map":
                    vals = [v for _, v in e.items]
                else:
                    vals = list(e.items)
            else:
                continue
            out |= {facts.array_root(v.name) for v in vals
                    if isinstance(v, ir.Var) and isinstance(facts.ty(v), types.Array)}
    return out
