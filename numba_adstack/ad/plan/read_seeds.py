"""Element seeds across two loops: an array that a later loop of sums reads linearly.

A moving average fills ``out`` in one loop, and the loss reads it in another: ``total +=
w[i] * out[i]``. When that second loop is fused (its sum's seed is known before it runs,
:mod:`.seeds`), the adjoint of element ``k`` of ``out`` is the seed times the factors
between the read and the sum, evaluated at ``k``: ``seed * w[k]``. The sweep then gives
each store ``out[k] = v`` that value directly, with no adjoint array for ``out``: nothing
is written into one by the reading loop, nor read and cleared by the sweep.

This holds when:

* ``out`` is a fresh 1-d array, used only through aliases, its shape, stores and one read
  (no view, no call, no other loop reading it);
* the reading loop ``R`` is a top-level fused loop over ``range(len(out))`` without
  branches, and reads ``out[i]`` (``i`` its index) once per iteration, the value going
  into one of its sums through additions, negations, products with and divisions by
  factors that are constants, arguments or elements ``x[i]`` of argument arrays nothing
  writes (so the sweep can evaluate them at any ``k``), each value used once;
* every store of ``out`` runs before ``R`` (none reachable from it), and no element is
  written twice: each store's index is ``i + c`` in a counted loop (one store per
  iteration) or a value outside loops, with ``c`` and the loop's bounds sums of integers
  and values defined once outside loops; their ranges are proved disjoint and not
  negative (an element written twice would give the seed to both stores).
"""
import operator

from numba.core import ir, types

from .. import rules as R
from ..typeinfo import is_float
from .replay import is_loop_index

_MAX_CHAIN = 20
_SHAPE_ATTRS = ("shape", "size", "ndim")


def read_seeds(facts, activity, sums, taken):
    """``{array: (reading loop, ("indexed", seed tree))}`` for the arrays whose elements'
    adjoints the sweep takes from a later fused loop of sums (``sums``: those loops and
    their families); ``taken``: arrays seeded already."""
    if not facts.target.fuses_loops:
        return {}
    out = {}
    for lp, families in sums.items():
        if not plain_reading_loop(facts, lp):
            continue
        for b in lp.blocks:
            for stmt in facts.fir.blocks[b].body:
                e = stmt.value if isinstance(stmt, ir.Assign) else None
                if not (isinstance(e, ir.Expr) and e.op == "getitem"
                        and isinstance(facts.ty(e.value), types.Array)
                        and is_float(facts.ty(stmt.target.name))
                        and stmt.target.name in activity.useful):
                    continue
                root = facts.array_root(e.value.name)
                if root in taken or root in out:
                    continue
                tree = _element_seed(facts, lp, families, root, stmt)
                if tree is not None:
                    out[root] = (lp, ("indexed", tree))
    return out


def plain_reading_loop(facts, lp, serial_prange=False):
    """A top-level serial loop over ``range(n)`` (from 0, step 1) with no branch in its
    body: every statement of it runs on each iteration. ``serial_prange``: a ``prange``
    loop qualifies too (the backward runs it serially)."""
    rl = lp.range
    if lp.depth != 1 or rl is None or rl.array is not None \
            or (rl.parallel and not serial_prange) \
            or rl.first is None or len(lp.exits) != 1:
        return False
    if len(rl.args) != 1:
        return False
    return all(isinstance(facts.fir.blocks[b].terminator, ir.Jump)
               for b in lp.blocks if b != lp.header and b != rl.block)


def _element_seed(facts, lp, families, root, read):
    if facts.s.depth(facts.def_label(root)) != 0 or not facts.is_constructor_call(root) \
            or facts.fill_value(facts.def_expr(root)) is not None \
            or facts.ty(root).ndim != 1:
        return None
    aliases, stores, reads = uses_of_array(facts, root)
    if aliases is None or reads != [read] or not stores:
        return None
    if not (is_loop_index(facts, lp.range, read.value.index.name)
            and _is_length_of(facts, lp.range.args[0].name, aliases)):
        return None
    tree = _chain(facts, lp, families, read.target.name)
    if tree is None or not _stores_before(facts, lp, stores) \
            or not _written_once(facts, stores):
        return None
    return tree


def uses_of_array(facts, root):
    """The aliases of ``root``, its stores ``[(label, stmt)]`` and its reads ``[stmt]``;
    Nones when it is used otherwise (a view, a call, an in-place operator...)."""
    aliases, stores, reads, work = {root}, [], [], [root]
    while work:
        a = work.pop()
        for label, stmt in facts.uses.get(a, ()):
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                if stmt.target.name != a or stmt.value.name == a:
                    return None, None, None
                stores.append((label, stmt))
                continue
            if isinstance(stmt, ir.Del):
                continue
            if not isinstance(stmt, ir.Assign):
                return None, None, None
            e, t = stmt.value, stmt.target.name
            if isinstance(e, ir.Var) or (isinstance(e, ir.Expr) and e.op == "cast"):
                if t not in aliases:
                    aliases.add(t)
                    work.append(t)
            elif isinstance(e, ir.Expr) and e.op == "getattr" and e.attr in _SHAPE_ATTRS:
                pass
            elif isinstance(e, ir.Expr) and e.op == "call" and len(e.args) == 1 \
                    and not e.kws and facts.resolve_global(e.func) is len:
                pass
            elif isinstance(e, ir.Expr) and e.op == "getitem" and e.value.name == a \
                    and isinstance(facts.ty(e.index), types.Integer):
                reads.append(stmt)
            else:
                return None, None, None
    return aliases, stores, reads


def _is_length_of(facts, name, aliases, depth=0):
    """Is ``name`` ``len(a)`` or ``a.shape[0]`` of an alias ``a``?"""
    e = facts.def_expr(name) if name not in facts.phis else None
    if depth > 8 or e is None:
        return False
    if isinstance(e, ir.Var):
        return _is_length_of(facts, e.name, aliases, depth + 1)
    if isinstance(e, ir.Expr) and e.op == "call" and len(e.args) == 1:
        return facts.resolve_global(e.func) is len and e.args[0].name in aliases
    if isinstance(e, ir.Expr) and e.op in ("static_getitem", "getitem"):
        idx = e.index if e.op == "static_getitem" else facts.static_form(e.index.name)
        idx = idx[1] if isinstance(idx, tuple) and idx[0] == "const" else idx
        shape = facts.def_expr(e.value.name)
        return idx == 0 and isinstance(shape, ir.Expr) and shape.op == "getattr" \
            and shape.attr == "shape" and shape.value.name in aliases
    return False


# ---------------------------------------------------------------------- the read's chain
def _chain(facts, lp, families, v):
    """The seed tree of the adjoint of ``v`` (read in ``lp``) when it reaches one of the
    loop's sums linearly; else None."""
    wrap = []                       # ("neg",) / ("mul", h) / ("div", h), from the read
    for _ in range(_MAX_CHAIN):
        uses = facts.uses.get(v, ())
        if len(uses) != 1 or uses[0][0] not in lp.blocks:
            return None
        stmt = uses[0][1]
        if not isinstance(stmt, ir.Assign) or not isinstance(stmt.value, (ir.Var, ir.Expr)):
            return None
        e, t = stmt.value, stmt.target.name
        if isinstance(e, ir.Var) or e.op == "cast":
            v = t
            continue
        if e.op == "unary" and e.fn is operator.neg:
            wrap.append(("neg",))
            v = t
            continue
        if e.op not in ("binop", "inplace_binop"):
            return None
        fn = e.fn if e.op == "binop" else R.INPLACE_TO_BINOP.get(e.fn)
        if e.lhs.name == e.rhs.name:
            return None
        other = e.rhs if e.lhs.name == v else e.lhs
        phi = _sum_of(families, t)
        if fn in (operator.add, operator.sub) and phi is not None:
            if _sum_of(families, other.name) != phi:
                return None         # the sum is the other operand: v is the increment
            if fn is operator.sub:
                wrap.append(("neg",))
            return _wrapped(("fused", phi), wrap)
        if fn is operator.add or (fn is operator.sub and e.lhs.name == v):
            pass
        elif fn is operator.sub:
            wrap.append(("neg",))
        elif fn is operator.mul or (fn is operator.truediv and e.lhs.name == v):
            h = _factor(facts, lp, other.name, 0)
            if h is None:
                return None
            wrap.append(("mul" if fn is operator.mul else "div", h))
        else:
            return None
        v = t
    return None


def _sum_of(families, name):
    for phi, members, _, _ in families:
        if name in members:
            return phi
    return None


def _wrapped(tree, wrap):
    for w in reversed(wrap):
        tree = ("neg", tree) if w[0] == "neg" else (w[0], tree, w[1])
    return tree


def _factor(facts, lp, name, depth):
    """A factor the sweep can evaluate at any element ``k``: a constant, an argument, an
    element ``x[i]`` of an argument array nothing writes (``("at", x)``: ``x[k]``), or
    arithmetic of those; else None."""
    if depth > 10:
        return None
    if facts.static_form(name) is not None:
        return ("static", name)
    e = facts.def_expr(name) if name not in facts.phis else None
    if isinstance(e, ir.Arg):
        return ("var", name)
    if isinstance(e, ir.Var):
        return _factor(facts, lp, e.name, depth + 1)
    if not isinstance(e, ir.Expr):
        return None
    if e.op == "getitem" and isinstance(facts.ty(e.value), types.Array):
        root = facts.array_root(e.value.name)
        if root in facts.arg_vars and facts.is_readonly_array(e.value.name) \
                and facts.ty(e.value.name).ndim == 1 \
                and is_loop_index(facts, lp.range, e.index.name):
            return ("at", e.value.name)
        return None
    if e.op not in ("binop", "unary", "call", "cast"):
        return None
    parts = {}
    for op in e.list_vars():
        h = _factor(facts, lp, op.name, depth + 1)
        if h is None:
            return None
        parts[op.name] = h
    return ("expr", e, parts)


# ---------------------------------------------------------------------- the stores
def _stores_before(facts, lp, stores):
    """Is no store reachable from the reading loop (all run before it)?"""
    seen, work = set(), [lp.header]
    while work:
        b = work.pop()
        if b in seen:
            continue
        seen.add(b)
        work.extend(facts.fir.blocks[b].terminator.get_targets())
    return not any(label in seen for label, _ in stores)


def _written_once(facts, stores):
    """Does no element get two stores? Each store's index range, as linear forms in values
    defined once outside loops, must be apart from every other's and not negative."""
    spans, per_loop = [], {}
    for label, stmt in stores:
        if not is_float(facts.ty(stmt.value.name)):
            return None
        idx = stmt.index_var if isinstance(stmt, ir.StaticSetItem) else stmt.index
        if isinstance(stmt, ir.StaticSetItem) and isinstance(stmt.index, int):
            form = ({}, stmt.index)
        elif idx is not None and isinstance(facts.ty(idx.name), types.Integer):
            form = _linear(facts, idx.name, 0)
        else:
            return False
        if form is None:
            return False
        loops = facts.s.enclosing(label)
        span = _span(facts, form, loops)
        if span is None:
            return False
        if loops:
            per_loop[loops[0]] = per_loop.get(loops[0], 0) + 1
            if per_loop[loops[0]] > 1:
                return False        # two stores in one iteration
        spans.append(span)
    for k, (lo, hi) in enumerate(spans):
        if _constant(lo) is None or _constant(lo) < 0:
            return False
        for lo2, hi2 in spans[k + 1:]:
            below, above = _constant(_minus(hi, lo2)), _constant(_minus(hi2, lo))
            if not ((below is not None and below < 0) or (above is not None and above < 0)):
                return False
    return True


def _span(facts, form, loops):
    """``(lowest, highest)`` index a store of linear index ``form`` writes."""
    bases, c = form
    idx = [b for b in bases if isinstance(b, tuple)]
    if not loops:
        return None if idx else (form, form)
    lp = loops[0]
    rl = lp.range
    if len(loops) != 1 or rl is None or rl.array is not None or len(rl.args) > 2 \
            or idx != [("i", lp.header)] or bases[idx[0]] != 1:
        return None
    start = _linear(facts, rl.args[0].name, 0) if len(rl.args) == 2 else ({}, 0)
    stop = _linear(facts, rl.args[-1].name, 0)
    if start is None or stop is None:
        return None
    rest = ({b: k for b, k in bases.items() if b != idx[0]}, c)
    return _plus(start, rest), _plus(_plus(stop, ({}, -1)), rest)


def _linear(facts, name, depth):
    """``({base: coefficient}, constant)`` for an integer made of constants, loop indices
    (base ``("i", header)``) and values defined once outside loops, by ``+`` and ``-``."""
    if depth > 20:
        return None
    for rl in facts.ranges.values():
        if is_loop_index(facts, rl, name) and rl.array is None:
            return ({("i", rl.loop.header): 1}, 0)
    form = facts.static_form(name)
    if form is not None:
        return ({}, form[1]) if form[0] == "const" and isinstance(form[1], int) \
            and not isinstance(form[1], bool) else None
    e = facts.def_expr(name) if name not in facts.phis else None
    if isinstance(e, ir.Var) or (isinstance(e, ir.Expr) and e.op == "cast"):
        return _linear(facts, (e if isinstance(e, ir.Var) else e.value).name, depth + 1)
    if isinstance(e, ir.Expr) and e.op == "binop" and e.fn in (operator.add, operator.sub):
        a = _linear(facts, e.lhs.name, depth + 1)
        b = _linear(facts, e.rhs.name, depth + 1)
        if a is None or b is None:
            return None
        return _plus(a, b) if e.fn is operator.add else _minus(a, b)
    if isinstance(e, ir.Expr) and e.op == "unary" and e.fn is operator.neg:
        a = _linear(facts, e.value.name, depth + 1)
        return None if a is None else _minus(({}, 0), a)
    label = facts.def_label(name)
    if label is not None and facts.s.depth(label) == 0:
        return ({name: 1}, 0)
    return None


def _plus(a, b):
    bases = dict(a[0])
    for k, v in b[0].items():
        bases[k] = bases.get(k, 0) + v
    return ({k: v for k, v in bases.items() if v}, a[1] + b[1])


def _minus(a, b):
    return _plus(a, ({k: -v for k, v in b[0].items()}, -b[1]))


def _constant(form):
    return None if form[0] else form[1]
