"""Element seeds across two loops: an array that a later loop of sums reads at its index.

A moving average fills ``out`` in one loop, and the loss reads it in another: ``total +=
w[i] * out[i]``, or ``total += (i + 1) * out[i] * out[i]``. When that second loop is fused
(its sum's seed is known before it runs, :mod:`.seeds`), the adjoint of element ``k`` of
``out`` is a function of ``k`` alone: the seed times the partials between the reads and
the sum, evaluated at ``k`` (``seed * w[k]``; ``seed * out[k] * (k + 1) + ...``, one
term per read). The sweep then gives each store ``out[k] = v`` that value directly, with
no adjoint array for ``out``: nothing is written into one by the reading loop, nor read
and cleared by the sweep.

This holds when:

* ``out`` is a fresh 1-d array, used only through aliases, its shape, stores and reads,
  all reads in one loop ``R`` at its index (no view, no call, no other loop reading it);
* ``R`` is a top-level fused loop over ``range(len(out))`` without branches; each read
  ``out[i]`` that takes an adjoint goes into one of its sums through values each used
  once, by operators and calls with a scalar rule; the other operands on the way (the
  partials' inputs) are *factors*, which the sweep can evaluate at any ``k``: constants,
  arguments, the index ``i``, elements ``x[i]`` of argument arrays nothing writes, the
  reads ``out[i]`` themselves, and arithmetic or pure calls of those;
* every store of ``out`` runs before ``R`` (none reachable from it), none in a loop
  reversed in the replay (before ``R`` gives the seeds), and no element is written
  twice: each store's index is ``i + c`` in a counted loop (one store per iteration) or
  a value outside loops, with ``c`` and the loop's bounds sums of integers and values
  defined once outside loops; their ranges are proved disjoint (an element written
  twice would give the seed to both stores). A range not proved free of negative
  indices (``range(w, n)``: ``w`` may be negative, and ``out[-1]`` is ``out[n - 1]``)
  is checked by the replay where the store's loop starts; when one is negative, the
  sweep gives each element's seed to the last store into it only (the first one it
  reverses, marked in an array of flags), at the element's index counted from zero.

So ``out[k]`` holds the value stored at ``k`` from that store on, wherever the sweep
evaluates the element's seed (it reverses the store after it ran, and nothing writes
``out`` again), and the element read at ``i`` in ``R`` is the element ``k = i``.
"""
import operator

import numpy as np
from numba.core import ir, types

from .. import rules as R
from ..rules.template import template
from ..typeinfo import is_float
from ..facts.structure import reachable
from .reciprocals import copy_root
from .replay import is_loop_index

_MAX_CHAIN = 20
_SHAPE_ATTRS = ("shape", "size", "ndim")
_LIKE = (np.empty_like, np.zeros_like, np.ones_like, np.full_like)


def read_seeds(facts, activity, sums, taken, maps=()):
    """``{array: (reading loop, ("indexed", seed tree, unchecked))}`` for the arrays whose
    elements' adjoints the sweep takes from a later fused loop of sums (``sums``: those
    loops and their families); ``taken``: arrays seeded already. ``unchecked``: the
    stores' index ranges that the replay checks for negative indices (see
    :func:`_written_once`)."""
    if not facts.target.fuses_loops:
        return {}
    out = {}
    for lp, families in sums.items():
        if not plain_reading_loop(facts, lp):
            continue
        for b in sorted(lp.blocks):
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
                got = _element_seed(facts, activity, lp, families, root, sums, maps)
                if got is not None:
                    out[root] = (lp, ("indexed",) + got)
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


def _element_seed(facts, activity, lp, families, root, sums, maps):
    if facts.s.depth(facts.def_label(root)) != 0 or not facts.is_constructor_call(root) \
            or facts.fill_value(facts.def_expr(root)) is not None \
            or facts.ty(root).ndim != 1:
        return None
    aliases, stores, reads = uses_of_array(facts, root)
    if aliases is None or not reads or not stores:
        return None
    if not (all(facts.def_label(r.target.name) in lp.blocks
                and is_loop_index(facts, lp.range, r.value.index.name) for r in reads)
            and (_is_length_of(facts, lp.range.args[0].name, aliases)
                 or _made_with_length(facts, root, lp.range.args[0].name))):
        return None
    useful = sorted((r for r in reads if r.target.name in activity.useful),
                    key=lambda r: _position(facts, r))
    # The last read's term first, as the reverse of the iteration adds them.
    terms = [_chain(facts, lp, families, aliases, r.target.name) for r in reversed(useful)]
    if not terms or None in terms or not _stores_before(facts, lp, stores) \
            or any(other in sums for label, _ in stores
                   for other in facts.s.enclosing(label)):
        return None
    unchecked = _written_once(facts, stores)
    if unchecked is None or unchecked and any(
            other in maps for label, _ in stores for other in facts.s.enclosing(label)):
        return None     # (the sweep must reverse the last store into an element first)
    tree = terms[0] if len(terms) == 1 else ("sum", tuple(terms))
    if _reads_index(tree) and not _index_types_match(facts, lp, stores):
        return None
    return tree, unchecked


def _position(facts, stmt):
    label = facts.def_label(stmt.target.name)
    return label, facts.fir.blocks[label].body.index(stmt)


def _reads_index(tree):
    if isinstance(tree, tuple):
        return tree == ("index",) or any(_reads_index(x) for x in tree)
    if isinstance(tree, dict):
        return any(_reads_index(x) for x in tree.values())
    return False


def _index_types_match(facts, lp, stores):
    """Does each store's index have the type of ``R``'s index, which a seed reading the
    index takes its place (``(k + 1)`` computes as ``(i + 1)`` did)?"""
    want = facts.ty(lp.range.first)
    for _, stmt in stores:
        idx = stmt.index_var if isinstance(stmt, ir.StaticSetItem) else stmt.index
        got = types.intp if idx is None else facts.ty(idx.name)
        if got != want:
            return False
    return True


def uses_of_array(facts, root, like=False):
    """The aliases of ``root``, its stores ``[(label, stmt)]`` and its reads ``[stmt]``;
    Nones when it is used otherwise (a view, a call, an in-place operator...). ``like``:
    an array made like it (``np.empty_like(x)``, which reads its shape) is no other use."""
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
            elif like and isinstance(e, ir.Expr) and e.op == "call" and e.args \
                    and e.args[0].name == a and all(v.name != a for v in e.args[1:]) \
                    and all(v.name != a for _, v in e.kws) \
                    and facts.resolve_global(e.func) in _LIKE:
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


def _made_with_length(facts, root, name):
    """Is ``root`` made by ``np.empty``, ``np.zeros`` or ``np.ones`` given the integer
    ``name`` as its length (``np.empty(n)`` read by a loop over ``range(n)``)?"""
    e = facts.def_expr(root)
    if not (isinstance(e, ir.Expr) and e.op == "call" and e.args) \
            or facts.resolve_global(e.func) not in (np.empty, np.zeros, np.ones) \
            or not isinstance(facts.ty(e.args[0].name), types.Integer):
        return False
    return copy_root(facts, e.args[0].name) == copy_root(facts, name)


# ---------------------------------------------------------------------- the read's chain
def _chain(facts, lp, families, seeded, v):
    """The seed tree of the adjoint of ``v`` (read in ``lp``) when it reaches one of the
    loop's sums through values used once, the partials on the way being factors (read
    at ``k`` from ``seeded``, the aliases of the array read); else None."""
    wrap = []       # ("neg",) / ("mul", h) / ("div", h) / ("rule", templates, hs, hy)
    for _ in range(_MAX_CHAIN):
        uses = facts.uses.get(v, ())
        if len(uses) != 1 or uses[0][0] not in lp.blocks:
            return None
        stmt = uses[0][1]
        if not isinstance(stmt, ir.Assign) or not isinstance(stmt.value, (ir.Var, ir.Expr)) \
                or not is_float(facts.ty(stmt.target.name)):
            return None
        e, t = stmt.value, stmt.target.name
        if isinstance(e, ir.Var) or e.op == "cast":
            v = t
            continue
        if e.op == "unary" and e.fn is operator.neg:
            wrap.append(("neg",))
            v = t
            continue
        if e.op == "call":
            fn = facts.resolve_global(e.func)
            rule = R.CALL_RULES.get(fn)
            if rule is None or e.kws or e.vararg is not None or e.varkwarg is not None \
                    or facts.draws_random(e) or len(rule) != len(e.args):
                return None
            step = _rule_step(facts, lp, seeded, fn, rule, e.args, v, t)
            if step is None:
                return None
            wrap.append(step)
            v = t
            continue
        if e.op not in ("binop", "inplace_binop"):
            return None
        fn = e.fn if e.op == "binop" else R.INPLACE_TO_BINOP.get(e.fn)
        if e.lhs.name == e.rhs.name:
            step = _binop_step(facts, lp, seeded, fn, e, v, t)
            if step is None:
                return None
            wrap.append(step)
            v = t
            continue
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
            h = _factor(facts, lp, other.name, 0, seeded)
            if h is None:
                return None
            wrap.append(("mul" if fn is operator.mul else "div", h))
        else:
            step = _binop_step(facts, lp, seeded, fn, e, v, t)
            if step is None:
                return None
            wrap.append(step)
        v = t
    return None


def _binop_step(facts, lp, seeded, fn, e, v, t):
    """The step of a binary operator ``t = e`` by its rule (see :func:`_rule_step`)."""
    return _rule_step(facts, lp, seeded, fn, R.BINOP_RULES.get(fn), [e.lhs, e.rhs], v, t)


def _rule_step(facts, lp, seeded, fn, rule, operands, v, t):
    """``("rule", templates, hs, hy)``: the scalar rule of ``t = fn(*operands)`` for the
    positions holding ``v`` (their terms are summed), with the operands it reads
    (``hs`` by position) and its result (``hy``) as factors; None when one is not."""
    if rule is None:
        return None
    rule = R.specialise(fn, [_literal(facts, op.name) for op in operands]) or rule
    positions = [k for k, op in enumerate(operands) if op.name == v]
    if not positions or any(rule[k] is None for k in positions):
        return None
    tpls = tuple(template(rule[k]) for k in positions)
    reads = set().union(*(tpl.reads for tpl in tpls))
    if not reads <= {"g", "y"} | {str(k) for k in range(len(operands))}:
        return None
    hs = {}
    for k, op in enumerate(operands):
        if str(k) in reads:
            hs[k] = _factor(facts, lp, op.name, 0, seeded)
            if hs[k] is None:
                return None
    hy = _factor(facts, lp, t, 0, seeded) if "y" in reads else None
    if "y" in reads and hy is None:
        return None
    return ("rule", tpls, hs, hy)


def _literal(facts, name):
    """The number a literal operand holds (a rule of its own: ``x ** 2``), or None."""
    form = facts.static_form(name)
    if form is None or form[0] not in ("const", "global"):
        return None
    ok = isinstance(form[1], (int, float)) and not isinstance(form[1], bool)
    return form[1] if ok else None


def _sum_of(families, name):
    for phi, members, _, _ in families:
        if name in members:
            return phi
    return None


def _wrapped(tree, wrap):
    for w in reversed(wrap):
        tree = ("neg", tree) if w[0] == "neg" else (w[0], tree) + tuple(w[1:])
    return tree


def _factor(facts, lp, name, depth, seeded=frozenset()):
    """A factor the sweep can evaluate at any element ``k``: a constant, an argument, the
    loop's index (``("index",)``: ``k``), an element ``x[i]`` of an argument array
    nothing writes or of the seeded array (``("at", x)``: ``x[k]``), or arithmetic and
    pure calls of those; else None."""
    if depth > 10:
        return None
    if facts.static_form(name) is not None:
        return ("static", name)
    if seeded and is_loop_index(facts, lp.range, name):
        return ("index",)
    e = facts.def_expr(name) if name not in facts.phis else None
    if isinstance(e, ir.Arg):
        return ("var", name)
    if isinstance(e, ir.Var):
        return _factor(facts, lp, e.name, depth + 1, seeded)
    if not isinstance(e, ir.Expr):
        return None
    if e.op == "getitem" and isinstance(facts.ty(e.value), types.Array):
        root = facts.array_root(e.value.name)
        readonly = root in facts.arg_vars and facts.is_readonly_array(e.value.name)
        if (readonly or e.value.name in seeded) \
                and facts.ty(e.value.name).ndim == 1 \
                and is_loop_index(facts, lp.range, e.index.name):
            return ("at", e.value.name)
        return None
    if e.op not in ("binop", "unary", "call", "cast"):
        return None
    if e.op == "call":
        fn = facts.resolve_global(e.func)
        if facts.draws_random(e) or e.kws or e.vararg is not None \
                or e.varkwarg is not None or not (
                    fn in R.CALL_RULES or fn in R.NON_DIFFERENTIABLE_CALLS):
            return None         # (evaluated again in the sweep: pure calls only)
    parts = {}
    for op in e.list_vars():
        h = _factor(facts, lp, op.name, depth + 1, seeded)
        if h is None:
            return None
        parts[op.name] = h
    return ("expr", e, parts)


# ---------------------------------------------------------------------- the stores
def _stores_before(facts, lp, stores):
    """Is no store reachable from the reading loop (all run before it)?"""
    seen = reachable(facts.fir.blocks, [lp.header])
    return not any(label in seen for label, _ in stores)


def _written_once(facts, stores):
    """Does no element get two stores? Each store's index range, as linear forms in values
    defined once outside loops, must be apart from every other's. ``(unchecked)`` when
    so, ``unchecked`` the ranges not proved free of negative indices (a negative index
    counts from the end, so its element may be another store's): ``(where, lowest,
    highest)``, which the replay checks where the store's loop starts (``where`` its
    header) or before a store outside loops (``("store", label, position)``); else
    None."""
    spans, per_loop, unchecked = [], {}, []
    for label, stmt in stores:
        if not is_float(facts.ty(stmt.value.name)):
            return None
        idx = stmt.index_var if isinstance(stmt, ir.StaticSetItem) else stmt.index
        if isinstance(stmt, ir.StaticSetItem) and isinstance(stmt.index, int):
            form = ({}, stmt.index)
        elif idx is not None and isinstance(facts.ty(idx.name), types.Integer):
            form = linear(facts, idx.name, 0)
        else:
            return None
        if form is None:
            return None
        loops = facts.s.enclosing(label)
        span = _span(facts, form, loops)
        if span is None:
            return None
        if loops:
            per_loop[loops[0]] = per_loop.get(loops[0], 0) + 1
            if per_loop[loops[0]] > 1:
                return None         # two stores in one iteration
        lo = constant(span[0])
        if lo is not None and lo < 0:
            return None
        if lo is None:
            if loops and loops[0].range.parallel:
                return None         # (its iterations would share the record)
            where = loops[0].header if loops else \
                ("store", label, facts.fir.blocks[label].body.index(stmt))
            unchecked.append((where,) + span)
        spans.append(span)
    for k, (lo, hi) in enumerate(spans):
        for lo2, hi2 in spans[k + 1:]:
            below, above = constant(minus(hi, lo2)), constant(minus(hi2, lo))
            if not ((below is not None and below < 0) or (above is not None and above < 0)):
                return None
    return tuple(unchecked)


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
    start = linear(facts, rl.args[0].name, 0) if len(rl.args) == 2 else ({}, 0)
    stop = linear(facts, rl.args[-1].name, 0)
    if start is None or stop is None:
        return None
    rest = ({b: k for b, k in bases.items() if b != idx[0]}, c)
    return plus(start, rest), plus(plus(stop, ({}, -1)), rest)


def linear(facts, name, depth):
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
        return linear(facts, (e if isinstance(e, ir.Var) else e.value).name, depth + 1)
    if isinstance(e, ir.Expr) and e.op == "binop" and e.fn in (operator.add, operator.sub):
        a = linear(facts, e.lhs.name, depth + 1)
        b = linear(facts, e.rhs.name, depth + 1)
        if a is None or b is None:
            return None
        return plus(a, b) if e.fn is operator.add else minus(a, b)
    if isinstance(e, ir.Expr) and e.op == "unary" and e.fn is operator.neg:
        a = linear(facts, e.value.name, depth + 1)
        return None if a is None else minus(({}, 0), a)
    label = facts.def_label(name)
    if label is not None and facts.s.depth(label) == 0:
        return ({name: 1}, 0)
    return None


def plus(a, b):
    bases = dict(a[0])
    for k, v in b[0].items():
        bases[k] = bases.get(k, 0) + v
    return ({k: v for k, v in bases.items() if v}, a[1] + b[1])


def minus(a, b):
    return plus(a, ({k: -v for k, v in b[0].items()}, -b[1]))


def constant(form):
    return None if form[0] else form[1]
