"""The IR rewrites of :mod:`.map_sums`, each given a site its reader found: a map loop
folded into the sum that reads it (:func:`fold`), an element-wise array computed at its
reads (:func:`sink`), or made with ``np.empty_like`` and filled by the loop that
overwrites it (:func:`fill_in_place`); and the fresh arrays they leave unread dropped."""
import operator

import numpy as np
from numba.core import ir, types
from numba.core.ir_utils import build_definitions
from numba.core.typing import signature


def fold(typed, site):
    fir, typemap, calltypes = typed.func_ir, typed.typemap, typed.calltypes
    lp = site.loop
    scope = fir.blocks[lp.header].scope
    loc = site.store.loc
    tag, k = "$fold%d" % site.store_label, 0
    while tag + ".acc" in typemap:
        k += 1
        tag = "$fold%d_%d" % (site.store_label, k)
    f64 = types.float64

    def var(name, t):
        typemap[name] = t
        return ir.Var(scope, name, loc)

    init = var(tag + ".init", f64)
    acc = var(tag + ".acc", f64)
    nxt = var(tag + ".next", f64)

    def replace(label, old, new_stmts):
        body = fir.blocks[label].body
        k = next(k for k, st in enumerate(body) if st is old)
        body[k:k + 1] = new_stmts

    # The sum, in the loop: acc = phi(0.0, next); next = acc + value.
    pre = fir.blocks[site.pre]
    pre.body.insert(len(pre.body) - 1, ir.Assign(ir.Const(0.0, loc), init, loc))
    phi = ir.Expr.phi(loc)
    phi.incoming_values = [init] + [nxt] * len(site.latches)
    phi.incoming_blocks = [site.pre] + list(site.latches)
    fir.blocks[lp.header].body.insert(0, ir.Assign(phi, acc, loc))
    add = ir.Expr.binop(operator.add, acc, site.store.value, loc)
    calltypes[add] = signature(f64, f64, typemap[site.store.value.name])
    replace(site.store_label, site.store, [ir.Assign(add, nxt, loc)])
    sum_stmt = site.sum_stmt
    replace(_label_of(fir, sum_stmt), sum_stmt,
            [ir.Assign(acc, sum_stmt.target, sum_stmt.loc)])
    if site.method is not None:         # r.sum: the bound method goes with the call
        replace(_label_of(fir, site.method), site.method, [])

    if site.producer is not None:
        _sink_reads(typed, site.producer, site.root, site.members, site.reads, site.lens,
                    (), tag)
    else:
        _drop_fresh(typed, site)
    fir._definitions = build_definitions(fir.blocks)


def _drop_fresh(typed, site):
    """A fresh ``r = np.empty_like(y)`` read by nothing but ``len`` once folded: ``len(y)``
    instead, and no array made."""
    fir, calltypes = typed.func_ir, typed.calltypes
    root_def = next((st for blk in fir.blocks.values() for st in blk.body
                     if isinstance(st, ir.Assign) and st.target.name == site.root), None)
    e = root_def.value if root_def is not None else None
    if not (isinstance(e, ir.Expr) and e.op == "call" and len(e.args) == 1) \
            or not isinstance(typed.typemap.get(e.args[0].name), types.Array) \
            or typed.typemap[e.args[0].name].ndim != 1:
        return
    like = e.args[0]
    for label, st in site.lens:
        call = ir.Expr.call(st.value.func, [like], (), st.value.loc)
        calltypes[call] = signature(types.intp, typed.typemap[like.name])
        body = fir.blocks[label].body
        body[next(k for k, s in enumerate(body) if s is st)] = \
            ir.Assign(call, st.target, st.loc)
    gone = set(site.members)
    for blk in fir.blocks.values():
        blk.body = [st for st in blk.body if not (
            isinstance(st, ir.Assign) and st.target.name in gone
            or isinstance(st, ir.Del) and st.value in gone)]


def fill_in_place(typed, site):
    """``r = np.empty_like(x)`` in place of the element-wise expression; the loop's
    reads of ``r[i]`` compute the element from ``x[i]``."""
    fir, typemap, calltypes = typed.func_ir, typed.typemap, typed.calltypes
    tag, k = "$filled%d" % site.store_label, 0
    while tag + ".np" in typemap:
        k += 1
        tag = "$filled%d_%d" % (site.store_label, k)
    fnty, sig = site.empty_like
    st = site.root_def
    loc, scope = st.loc, st.target.scope
    x = ir.Var(scope, site.producer["source"], loc)
    mod = ir.Var(scope, tag + ".np", loc)
    fn = ir.Var(scope, tag + ".empty_like", loc)
    call = ir.Expr.call(fn, [x], (), loc)
    typemap[mod.name] = types.Module(np)
    typemap[fn.name] = fnty
    calltypes[call] = sig
    label = next(label for label, blk in fir.blocks.items() if any(s is st for s in blk.body))
    body = fir.blocks[label].body
    at = next(k for k, s in enumerate(body) if s is st)
    body[at:at + 1] = [ir.Assign(ir.Global("np", np, loc), mod, loc),
                       ir.Assign(ir.Expr.getattr(mod, "empty_like", loc), fn, loc),
                       ir.Assign(call, st.target, loc)]
    _sink_reads(typed, site.producer, site.root, (), site.reads, (), (), tag,
                keep={site.root})
    fir._definitions = build_definitions(fir.blocks)


def sink(typed, site):
    """Array ``site.root`` (an element-wise expression of ``x``) read element by element:
    each read computes its element from ``x``."""
    tag, k = "$sunk%d" % site.label, 0
    while tag + ".x0" in typed.typemap:
        k += 1
        tag = "$sunk%d_%d" % (site.label, k)
    _sink_reads(typed, site.producer, site.root, site.members, site.reads, site.lens,
                site.likes, tag)
    typed.func_ir._definitions = build_definitions(typed.func_ir.blocks)


def _sink_reads(typed, producer, root, members, reads, lens, likes, tag, keep=()):
    """Each read ``root[i]`` becomes the element-wise expression of ``x[i]``; ``len(r)``
    and ``np.empty_like(r)`` take ``x``; the expression's arrays and ``root``'s copies
    go."""
    fir, typemap, calltypes = typed.func_ir, typed.typemap, typed.calltypes
    f64 = types.float64
    scope = next(iter(fir.blocks.values())).scope

    def var(name, t, loc):
        typemap[name] = t
        return ir.Var(scope, name, loc)

    def replace(label, old, new_stmts):
        body = fir.blocks[label].body
        k = next(k for k, st in enumerate(body) if st is old)
        body[k:k + 1] = new_stmts

    source = ir.Var(scope, producer["source"], next(iter(reads))[1].loc if reads
                    else fir.loc)
    src_t = typemap[source.name]
    for n_read, (label, st) in enumerate(reads):
        stmts, names = [], {}
        elem = var("%s.x%d" % (tag, n_read), f64, st.loc)
        get = ir.Expr.getitem(source, st.value.index, st.loc)
        calltypes[get] = signature(f64, src_t, typemap[st.value.index.name])
        stmts.append(ir.Assign(get, elem, st.loc))
        names[producer["source"]] = elem
        for k, (name, node) in enumerate(producer["nodes"]):
            e = node.value
            out = st.target if name == root else var("%s.e%d_%d" % (tag, n_read, k), f64,
                                                     st.loc)

            def scalar(v):
                return names.get(v.name, v)

            if e.op == "binop":
                a, b = scalar(e.lhs), scalar(e.rhs)
                new = ir.Expr.binop(e.fn, a, b, st.loc)
                calltypes[new] = signature(f64, typemap[a.name], typemap[b.name])
            else:
                a = scalar(e.value)
                new = ir.Expr.unary(e.fn, a, st.loc)
                calltypes[new] = signature(f64, typemap[a.name])
            stmts.append(ir.Assign(new, out, st.loc))
            names[name] = out
        replace(label, st, stmts)
    for label, st in list(lens) + list(likes):
        call = ir.Expr.call(st.value.func, [source], (), st.value.loc)
        old_sig = calltypes.get(st.value)
        ret = old_sig.return_type if old_sig is not None else typemap[st.target.name]
        calltypes[call] = signature(ret, src_t)
        replace(label, st, [ir.Assign(call, st.target, st.loc)])
    gone = (set(members) | {name for name, _ in producer["nodes"]}) - set(keep)
    for blk in fir.blocks.values():
        blk.body = [st for st in blk.body if not (
            isinstance(st, ir.Assign) and st.target.name in gone
            or isinstance(st, ir.Del) and st.value in gone)]


def _label_of(fir, stmt):
    return next(label for label, blk in fir.blocks.items()
                if any(st is stmt for st in blk.body))
