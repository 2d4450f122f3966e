"""Items of a tuple or list written in the function, read at an index known only at run
time: ``t = (a, b, c); v = t[k]`` becomes a chain of branches, one per item::

    $i0, $i1, $i2 = a, b, c            (copies made where the tuple is built)
    t = ($i0, $i1, $i2)
    kk = k + 3 * (k < 0)               (Python's negative indices)
    if kk == 0:   v = $i0
    elif kk == 1: v = $i1
    elif kk == 2: v = $i2
    else:         raise IndexError

The rewrite follows a built tuple's items one by one (each gets its own adjoint); an item
read at a run-time index would have nowhere to send its adjoint, so the read becomes a
choice among the items, which the rewrite differentiates as any branch. The copies keep
the values the tuple was built with, whatever later assignments do to ``a``.

Loops over a tuple or list written in the function (``for v in (a, b)``, and in ``zip`` or
``enumerate``) are range loops reading ``t[k]`` by then (:mod:`.loopforms`), so they come
here too. A list is read this way only when nothing can change it: every use of it is an
item read, ``len``, or a loop over it.

Reads the untyped IR before SSA (a variable may be assigned in several blocks).
"""
import operator

from numba.core import ir
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import build_definitions, simplify_CFG
from numba.core import postproc

from .ir_emitter import fresh_label

_BUILDS = ("build_tuple", "build_list")


def _sole_definition(fir, var):
    defs = fir._definitions.get(var.name, ())
    return defs[0] if len(defs) == 1 else None


def built_sequence(fir, var):
    """The ``build_tuple``/``build_list`` expression ``var`` holds (through copies), and the
    names that hold it; (None, ()) when it is not one, or is assigned more than once."""
    names = []
    while True:
        names.append(var.name)
        d = _sole_definition(fir, var)
        if isinstance(d, ir.Var):
            var = d
            continue
        if isinstance(d, ir.Expr) and d.op in _BUILDS and d.items:
            return d, names
        return None, ()


def _unchanging_list(fir, names, len_globals):
    """Whether every use of the list held by ``names`` reads it: an item, its length, a
    loop over it, or a copy."""
    held = set(names)
    for blk in fir.blocks.values():
        for stmt in blk.body:
            used = {v.name for v in stmt.list_vars()} & held
            if not used:
                continue
            if isinstance(stmt, ir.Assign):
                v = stmt.value
                if stmt.target.name in held and (
                        isinstance(v, ir.Var) or isinstance(v, ir.Expr) and v.op in _BUILDS):
                    continue
                if isinstance(v, ir.Expr) and v.op in ("getitem", "static_getitem",
                                                         "getiter") \
                        and v.value.name in held and not (
                            v.op == "getitem" and v.index.name in held):
                    continue
                if isinstance(v, ir.Expr) and v.op == "call" and len(v.args) == 1 \
                        and not v.kws and v.func.name in len_globals:
                    continue
            return False
    return True


def _is_slice(fir, index):
    """Whether ``index`` is a slice or a tuple (then the read is left as it is)."""
    d = _sole_definition(fir, index)
    if isinstance(d, ir.Expr) and d.op == "call":
        f = _sole_definition(fir, d.func)
        return isinstance(f, (ir.Global, ir.FreeVar)) and f.value is slice
    return isinstance(d, ir.Expr) and d.op == "build_tuple" or \
        isinstance(d, ir.Const) and not isinstance(d.value, int)


def _len_globals(fir):
    return {name for name, defs in fir._definitions.items()
            if len(defs) == 1 and isinstance(defs[0], (ir.Global, ir.FreeVar))
            and defs[0].value is len}


def _reads(fir):
    """The run-time item reads to rewrite: (block label, statement, built expression)."""
    lens = _len_globals(fir)
    found = []
    for label, blk in fir.blocks.items():
        for stmt in blk.body:
            if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                    and stmt.value.op == "getitem"):
                continue
            built, names = built_sequence(fir, stmt.value.value)
            if built is None or _is_slice(fir, stmt.value.index):
                continue
            if built.op == "build_list" and not _unchanging_list(fir, names, lens):
                continue
            found.append((label, stmt, built))
    return found


def _copy_items(fir, built, copies):
    """Copy the items of ``built`` into fresh variables just before it is built (once per
    built expression); the copies' variables."""
    if id(built) in copies:
        return copies[id(built)]
    for blk in fir.blocks.values():
        for at, stmt in enumerate(blk.body):
            if isinstance(stmt, ir.Assign) and stmt.value is built:
                new = []
                for item in built.items:
                    var = blk.scope.redefine("$literal_item", stmt.loc)
                    new.append(ir.Assign(item, var, stmt.loc))
                blk.body[at:at] = new
                built.items = [s.target for s in new]
                copies[id(built)] = built.items
                return built.items
    raise AssertionError("the built tuple is in no block")


def _rewrite_read(fir, label, stmt, items):
    """Split the block at ``stmt`` (``v = t[k]``) into the chain of the module docstring."""
    blk = fir.blocks[label]
    scope, loc = blk.scope, stmt.loc
    at = next(j for j, s in enumerate(blk.body) if s is stmt)
    after = ir.Block(scope, loc)
    after.body = blk.body[at + 1:]
    after_label = fresh_label(fir)
    fir.blocks[after_label] = after

    def assign(body, value, name):
        var = scope.redefine(name, loc)
        body.append(ir.Assign(value, var, loc))
        return var

    def glob(body, obj, name):
        return assign(body, ir.Global(name, obj, loc), "$literal_fn")

    head = blk.body[:at]
    k, n = stmt.value.index, len(items)
    negative = assign(head, ir.Expr.binop(operator.lt, k, assign(head, ir.Const(0, loc),
                                                                 "$literal_c"), loc),
                      "$literal_neg")
    shift = assign(head, ir.Expr.binop(operator.mul, assign(head, ir.Const(n, loc),
                                                            "$literal_c"),
                                       negative, loc), "$literal_shift")
    kk = assign(head, ir.Expr.binop(operator.add, k, shift, loc), "$literal_index")
    blk.body = head
    test_body = blk.body
    for j, item in enumerate(items):
        is_j = assign(test_body, ir.Expr.binop(
            operator.eq, kk, assign(test_body, ir.Const(j, loc), "$literal_c"), loc),
            "$literal_is")
        arm, nxt = ir.Block(scope, loc), ir.Block(scope, loc)
        arm_label, nxt_label = fresh_label(fir), fresh_label(fir)
        arm.body = [ir.Assign(item, stmt.target, loc), ir.Jump(after_label, loc)]
        test_body.append(ir.Branch(is_j, arm_label, nxt_label, loc))
        fir.blocks[arm_label], fir.blocks[nxt_label] = arm, nxt
        test_body = nxt.body
    test_body.append(ir.StaticRaise(IndexError, ("tuple index out of range",), loc))


@register_pass(mutates_CFG=True, analysis_only=False)
class RewriteLiteralItems(FunctionPass):
    """Run-time item reads of tuples and lists built in the function, as a choice among
    the items (see :mod:`.literal_items`)."""
    _name = "numba_adstack_rewrite_literal_items"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        fir = state.func_ir
        fir._definitions = build_definitions(fir.blocks)
        reads = _reads(fir)
        if not reads:
            return False
        copies = {}
        for label, stmt, built in reads:
            _copy_items(fir, built, copies)
        for label, stmt, built in reads:
            # An earlier split may have moved the statement to a new block.
            where = next(lb for lb, b in fir.blocks.items()
                         if any(s is stmt for s in b.body))
            _rewrite_read(fir, where, stmt, built.items)
        fir._definitions = build_definitions(fir.blocks)
        postproc.PostProcessor(fir).run()
        fir.blocks = simplify_CFG(fir.blocks)
        return True
