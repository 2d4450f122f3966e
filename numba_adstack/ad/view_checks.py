"""Refusals of writes into memory that a call-made view shares.

A call that may return a view of its operand (``x.reshape(6)``, ``np.asarray(x)``,
``np.flip(x)``, ``x.view(t)``; the table is :data:`.rules.array_effects.MAY_RETURN_VIEW`)
makes an array the rewrite keeps as a value of its own, with an adjoint of its own. A write
into either after the call would change the other unseen, so it is refused when the
gradient reads either; a write before the call is fine, and so is a view of a fresh array
nothing else reads (``np.zeros(6).reshape(2, 3)``: the view is the only way to it).
"""
from numba.core import ir, types

from .rule_binding import bind_expr
from .rules.array_effects import MAY_RETURN_VIEW, VIEW_METHODS
from .structure import successors


def check_views(facts, activity):
    writes = list(_writes(facts))
    active = activity.useful_roots | activity.varied
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
