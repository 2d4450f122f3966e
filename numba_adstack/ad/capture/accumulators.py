"""Element accumulators: ``a[i] += e`` in an inner loop, read as a sum into a local.

QuantEcon's Gini coefficient adds into an element of a fresh array in its inner loop::

    i_sum = np.zeros(n)                      i_sum = np.zeros(n)
    for i in prange(n):                      for i in prange(n):
        for j in range(n):          ->           acc = 0.0
            i_sum[i] += e                        for j in range(n):
                                                     acc += e
                                                 i_sum[i] = acc

The right-hand form is a loop of sums inside a map loop (``plan/replay.py``), which the
plan reverses an iteration at a time, in parallel under ``prange``; the left-hand one
reads back the element it writes, which no iteration may do in a map loop. Both add the
same terms to ``0.0`` in the same order, so they compute the same values, bit for bit,
when nothing else touches ``a`` while the outer loop runs: ``a`` is made by
``np.zeros(n)`` (float64 zeros) before the outer loop and used nowhere else until it
ends; the outer loop runs over ``range(n)`` (or ``prange(n)``) of the same ``n``, so each
element is filled by one iteration and every index is in bounds; the inner loop reads ``a[i]`` once and writes it once (the sum), with ``i``
and ``a`` unchanged in it, and is left only when its range is exhausted (no ``break``).

Reads the untyped IR before SSA, after :mod:`.loopforms` (its range loops).
"""
from numba.core import ir
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.ir_utils import build_definitions, find_callname, GuardException

from .loopforms import _for_loops

_ADDS = ("+=", "+")


def rewrite_accumulators(fir):
    """Rewrite every element accumulator of ``fir`` (see the module docstring); True when
    one was rewritten."""
    changed = False
    while _rewrite_one(fir):
        changed = True
        fir._definitions = build_definitions(fir.blocks)
    return changed


def _rewrite_one(fir):
    fir._definitions = build_definitions(fir.blocks)
    cfg = compute_cfg_from_blocks(fir.blocks)
    natural = {lp.header: lp for lp in cfg.loops().values()}
    fors = _for_loops(fir)
    for inner in fors:
        lp = natural.get(inner.header)
        if lp is None:
            continue
        for outer in fors:
            olp = natural.get(outer.header)
            if olp is None or olp is lp or inner.header not in olp.body:
                continue
            found = _accumulator(fir, cfg, inner, lp, outer, olp)
            if found is not None:
                _apply(fir, inner, *found)
                return True
    return False


def _accumulator(fir, cfg, inner, lp, outer, olp):
    """``(array var, index var, read stmt, write stmt)`` of the accumulator of ``inner``
    into an element ``outer``'s index picks, or None."""
    body = set(lp.body)
    exit_label = fir.blocks[inner.header].terminator.falsebr
    if any(s not in body for b in body if b != inner.header for s, _ in cfg.successors(b)) \
            or set(p for p, _ in cfg.predecessors(exit_label)) != {inner.header}:
        return None                 # a break, or an exit reached another way
    pre = fir.blocks[inner.pre].terminator
    if not (isinstance(pre, ir.Jump) and pre.target == inner.header):
        return None
    rng = _call(fir, outer.getiter.value.value)
    if rng is None or _callname(fir, rng) not in (("range", "builtins"), ("prange", "numba")) \
            or len(rng.args) != 1 or rng.kws:
        return None
    for label in sorted(body):
        for stmt in fir.blocks[label].body:
            if isinstance(stmt, ir.SetItem) and _is_index_of(fir, stmt.index.name, outer):
                got = _pattern(fir, cfg, stmt, label, stmt.index.name, body, olp,
                               rng.args[0].name)
                if got is not None:
                    return got
    return None


def _is_index_of(fir, name, loop):
    """Is ``name`` the index of the range loop ``loop`` (its pair_first's copy, or a copy
    of that made once)?"""
    first = loop.copy.target.name
    if name == first:
        return len(fir._definitions.get(name, ())) == 1
    defs = fir._definitions.get(name, ())
    return len(defs) == 1 and isinstance(defs[0], ir.Var) and defs[0].name == first \
        and len(fir._definitions.get(first, ())) == 1


def _pattern(fir, cfg, store, label, index, body, olp, count):
    arr = store.target.name
    block = fir.blocks[label]
    add = _def_in(block, store.value.name)
    if add is None or not isinstance(add.value, ir.Expr) or add.value.op not in (
            "inplace_binop", "binop") or getattr(add.value, "fn", None) is None:
        return None
    e = add.value
    if (e.op == "inplace_binop" and e.immutable_fn.__name__ != "add") or \
            (e.op == "binop" and e.fn.__name__ != "add"):
        return None
    read = _def_in(block, e.lhs.name)
    if read is None or not (isinstance(read.value, ir.Expr) and read.value.op == "getitem"
                            and read.value.value.name == arr
                            and read.value.index.name == index):
        return None
    if block.body.index(read) > block.body.index(add) or \
            block.body.index(add) > block.body.index(store):
        return None
    # The sum's temporaries are read by the add and the store only.
    if _uses(fir, e.lhs.name) != [add] or _uses(fir, store.value.name) != [store]:
        return None
    # The array: float64 zeros made once, before the outer loop, and in the outer loop
    # read and written only by this pair.
    # The array: float64 zeros of the outer range's length (``np.zeros(n)``, ``range(n)``:
    # every index in bounds, also where the inner loop does not run and the store after
    # it is the only one), made once, before the outer loop, and in the outer loop read
    # and written only by this pair.
    defs = fir._definitions.get(arr, ())
    if len(defs) != 1 or not (isinstance(defs[0], ir.Expr) and defs[0].op == "call"
                              and _callname(fir, defs[0]) == ("zeros", "numpy")
                              and len(defs[0].args) == 1 and not defs[0].kws
                              and defs[0].vararg is None
                              and defs[0].args[0].name == count
                              and len(fir._definitions.get(count, ())) == 1):
        return None
    for b, blk in fir.blocks.items():
        for stmt in blk.body:
            if stmt is read or stmt is store or arr not in {v.name for v in stmt.list_vars()}:
                continue
            if isinstance(stmt, ir.Assign) and stmt.target.name == arr:
                if b in olp.body:
                    return None
                continue
            if b in olp.body or _reaches(cfg, b, olp.header):
                return None     # read or written while (or before) the loop fills it
    if any(isinstance(s, ir.Assign) and s.target.name in (arr, index)
           for b in body for s in fir.blocks[b].body):
        return None
    return arr, store.index, read, store


def _apply(fir, inner, arr, index_var, read, store):
    scope, loc = store.target.scope, store.loc
    acc = scope.define(_fresh(fir, "acc_%s" % arr.replace(".", "_")), loc)
    pre = fir.blocks[inner.pre]
    pre.body.insert(len(pre.body) - 1, ir.Assign(ir.Const(0.0, loc), acc, loc))
    read.value = acc                                  # $t = acc
    label = next(b for b, blk in fir.blocks.items() if store in blk.body)
    blk = fir.blocks[label]
    blk.body[blk.body.index(store)] = ir.Assign(store.value, acc, loc)    # acc = $u
    exit_block = fir.blocks[fir.blocks[inner.header].terminator.falsebr]
    exit_block.body.insert(0, ir.SetItem(store.target, index_var, acc, loc))


def _def_in(block, name):
    for stmt in block.body:
        if isinstance(stmt, ir.Assign) and stmt.target.name == name:
            return stmt
    return None


def _uses(fir, name):
    return [stmt for blk in fir.blocks.values() for stmt in blk.body
            if name in {v.name for v in stmt.list_vars()}
            and not (isinstance(stmt, ir.Assign) and stmt.target.name == name)]


def _reaches(cfg, start, target):
    seen, work = set(), [start]
    while work:
        b = work.pop()
        for s, _ in cfg.successors(b):
            if s == target:
                return True
            if s not in seen:
                seen.add(s)
                work.append(s)
    return False


def _call(fir, var):
    """The call expression defining ``var``, or None."""
    try:
        expr = fir.get_definition(var)
    except KeyError:
        return None
    return expr if isinstance(expr, ir.Expr) and expr.op == "call" else None


def _callname(fir, expr):
    if not (isinstance(expr, ir.Expr) and expr.op == "call"):
        return None
    try:
        name, mod = find_callname(fir, expr)
    except GuardException:
        return None
    return (name, "numba" if str(mod).startswith("numba") else mod)


def _fresh(fir, base):
    names = {v for blk in fir.blocks.values() for stmt in blk.body
             for v in (x.name for x in stmt.list_vars())}
    name, k = base, 0
    while name in names:
        k += 1
        name = "%s_%d" % (base, k)
    return name


@register_pass(mutates_CFG=False, analysis_only=False)
class RewriteElementAccumulators(FunctionPass):
    """Read ``a[i] += e`` in an inner loop as a sum into a local (module docstring)."""
    _name = "numba_adstack_rewrite_element_accumulators"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        return rewrite_accumulators(state.func_ir)
