"""Map loops folded into the sum that reads them, before the rewrite reads the IR.

A library's element loop often fills an array that the caller only sums::

    r = (x - loc) * inv_scale              # numba-stats' _trans
    for i in prange(len(r)):
        r[i] = _logpdf1(r[i]) - np.log(scale)
    ...  np.sum(r)                         # the caller's loss

Differentiated as written, the backward makes the element-wise temporaries, keeps them
for the reverse of the products, runs the loop, sums ``r``, and reverses each of those
passes with an array adjoint of its own. Optimising first gives the loop a sum::

    acc = 0.0
    for i in prange(len(x)):
        acc += _logpdf1((x[i] - loc) * inv_scale) - np.log(scale)
    ...  acc

which the plan fuses (:mod:`.fusion`): one pass over the elements, forward and reverse
together, no array made and none kept. The fold itself is exact: Numba's ``np.sum`` of a
1-d array adds its elements in order from zero, as the loop does, and each element is the
same sequence of IEEE operations on the same operands. (Emission then lets LLVM add the
loop's sums in any order, as ``np.sum`` may: :mod:`..emit.reassoc`.)

:func:`fold_map_sums` applies this where it is exact:

* ``r`` is a 1-d float64 array, either a fresh ``np.empty``/``np.empty_like`` or an
  element-wise expression (``+ - * /`` and negation) of one 1-d float64 array ``x`` and
  numbers, whose temporaries nothing else reads;
* it is used only through copies, by ``len``, by one ``np.sum(r)`` or ``r.sum()`` after
  the loop, and in a
  counted loop ``for i in range(len(r))`` (or ``prange``) that stores ``r[i]`` once in
  every iteration (in a block every iteration passes, not in an inner loop) and reads it
  only at ``i`` before that store (not at all when it is fresh);
* the loop has no other store and no call taking an array, and none runs between the
  element-wise expression and the loop, so ``x`` reads the same inside the loop as before
  it; the loop is left only at its header, and the sum runs once after each run of the
  loop (the same loops enclose both).

Only CPU backwards are folded (the targets that fuse loops); the primal is compiled from
the function as written.
"""
import operator

import numba
import numpy as np
from numba.core import ir, types
from numba.core.analysis import compute_cfg_from_blocks

from .map_sums_ir import fill_in_place, fold, sink

_ELEMENTWISE = {operator.add, operator.sub, operator.mul, operator.truediv}
_FRESH = (np.empty, np.empty_like)
_CONSTRUCTORS = (np.empty, np.empty_like, np.zeros, np.zeros_like, np.ones, np.ones_like)
#: Array methods that write no array (views they make are followed as arrays of their own).
_READING_METHODS = {"sum", "mean", "prod", "min", "max", "argmin", "argmax", "any", "all",
                    "copy", "astype", "reshape", "ravel", "flatten", "transpose", "dot",
                    "cumsum", "std", "var"}
def _ranges():
    return (range, numba.prange)


def is_folded_sum(name):
    """Is IR variable ``name`` the sum of a loop a ``np.sum`` was folded into?"""
    return name.startswith("$fold") and name.endswith(".acc")


def fold_map_sums(typed, target):
    """``typed`` with every such loop folded into its sum (a new ``TypedIR``, sharing
    nothing it changes with ``typed``), or ``typed`` itself when none is."""
    try:
        return _fold_map_sums(typed, target)
    except Exception:               # an optimisation: the IR as captured is right too
        if _STRICT:
            raise
        return typed


#: Raise what the fold meets rather than leave the IR as it is (the tests set it).
_STRICT = False


def _fold_map_sums(typed, target):
    if not target.fuses_loops or not any(
            isinstance(st, ir.Assign) and _is_vector(typed.typemap.get(st.target.name))
            and isinstance(st.value, ir.Expr) and st.value.op in ("binop", "unary", "call")
            for blk in typed.func_ir.blocks.values() for st in blk.body):
        return typed                # no array an element-wise operation or call makes
    work = None
    for _ in range(32):             # one site at a time, the IR read again after each
        reader = _Reader(work if work is not None else typed)
        for find, apply in ((_Reader.find, fold), (_Reader.find_sunk, sink),
                            (_Reader.find_in_place, fill_in_place)):
            site = find(reader)
            if site is not None:
                break
        if site is None:
            break
        if work is None:            # (the site again, on the copy's statements)
            work = _copy(typed)
            site = find(_Reader(work))
        apply(work, site)
    return typed if work is None else work


def _copy(typed):
    fir = typed.func_ir.copy()
    new = type(typed).__new__(type(typed))
    new.__dict__.update(typed.__dict__)
    new.func_ir = fir
    new.typemap = dict(typed.typemap)
    new.calltypes = dict(typed.calltypes)
    return new


class _Site:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class _Reader:
    """The definitions, uses and loops of one IR, and the search for a foldable site."""

    def __init__(self, typed):
        self.typed = typed
        self.fir = typed.func_ir
        self.blocks = self.fir.blocks
        self.defs, self.uses = {}, {}
        self.where = {}                 # id(stmt) -> (label, position)
        for label, blk in self.blocks.items():
            for k, st in enumerate(blk.body):
                self.where[id(st)] = (label, k)
                if isinstance(st, ir.Assign):
                    self.defs.setdefault(st.target.name, []).append((label, st))
                    used = st.value.list_vars() if hasattr(st.value, "list_vars") else (
                        [st.value] if isinstance(st.value, ir.Var) else [])
                else:
                    used = st.list_vars()
                for v in used:
                    self.uses.setdefault(v.name, []).append((label, st))
        self.cfg = compute_cfg_from_blocks(self.blocks)
        self.loops = self.cfg.loops()
        self.doms = self.cfg.dominators()

    def ty(self, name):
        return self.typed.typemap.get(name)

    def single_def(self, name):
        d = self.defs.get(name, ())
        return d[0][1] if len(d) == 1 else None

    def origin(self, name, depth=0):
        """The variable ``name`` copies (through plain copies), and its one definition."""
        st = self.single_def(name)
        if st is not None and isinstance(st.value, ir.Var) and depth < 32:
            return self.origin(st.value.name, depth + 1)
        return name, st

    def global_of(self, var, depth=0):
        st = self.single_def(var.name)
        if st is None or depth > 8:
            return None
        e = st.value
        if isinstance(e, (ir.Global, ir.FreeVar)):
            return e.value
        if isinstance(e, ir.Var):
            return self.global_of(e, depth + 1)
        if isinstance(e, ir.Expr) and e.op == "getattr":
            base = self.global_of(e.value, depth + 1)
            return getattr(base, e.attr, None) if base is not None else None
        return None

    def is_call_of(self, e, fns, nargs=1):
        return (isinstance(e, ir.Expr) and e.op == "call" and len(e.args) == nargs
                and not e.kws and e.vararg is None and self.global_of(e.func) in fns)

    def loops_of(self, label):
        return frozenset(h for h, lp in self.loops.items() if label in lp.body)

    def innermost(self, label):
        inside = [self.loops[h] for h in self.loops_of(label)]
        return min(inside, key=lambda lp: len(lp.body)) if inside else None

    # -- the search -------------------------------------------------------------------
    def find_sunk(self):
        """An element-wise array read only element by element (and by ``len`` and
        ``np.empty_like``), its source never written: numba-stats' ``z = _trans(x, loc,
        scale)`` read as ``z[i]`` by the loop filling ``r``."""
        if not any(isinstance(self.ty(n), types.Array) for n in self.fir.arg_names) \
                and not self.defs:
            return None
        for label, blk in self.blocks.items():
            for st in blk.body:
                if isinstance(st, ir.Assign) and isinstance(st.value, ir.Expr) \
                        and st.value.op in ("binop", "unary") \
                        and _is_vector(self.ty(st.target.name)):
                    site = self._sink_site(label, st.target.name)
                    if site is not None:
                        return site
        return None

    def _sink_site(self, label, root):
        producer = self._producer(root)
        if producer is None or len(producer["nodes"]) > 8:
            return None
        members = self._members(root)
        reads, lens, likes = [], [], []
        for m in members:
            for at, st in self.uses.get(m, ()):
                e = st.value if isinstance(st, ir.Assign) else None
                if isinstance(st, ir.Del) or (isinstance(e, ir.Var)
                                              and st.target.name in members):
                    continue
                if isinstance(e, ir.Expr) and e.op == "getitem" and e.value.name == m \
                        and isinstance(self.ty(e.index.name), types.Integer):
                    reads.append((at, st))
                elif self.is_call_of(e, (len,)):
                    lens.append((at, st))
                elif self.is_call_of(e, (np.empty_like,)):
                    likes.append((at, st))
                else:
                    return None
        if not reads or not self._never_written(producer["source"]):
            return None
        return _Site(label=label, root=root, members=members, producer=producer,
                     reads=reads, lens=lens, likes=likes)

    def _never_written(self, name):
        """Is array ``name`` never written? Every store of the function goes into a fresh
        array (made by a constructor or an element-wise operation) that is not it, and no
        call or in-place operator can write into an array."""
        own, _ = self.origin(name)
        for blk in self.blocks.values():
            for st in blk.body:
                if isinstance(st, (ir.SetItem, ir.StaticSetItem)):
                    root, d = self.origin(st.target.name)
                    if root == own or d is None or not (self.is_call_of(
                            d.value, _CONSTRUCTORS, _nargs(d.value))
                            or isinstance(d.value, ir.Expr)
                            and d.value.op in ("binop", "unary")
                            and isinstance(self.ty(root), types.Array)):
                        return False
                elif self._writes_memory(st):
                    return False
        return True

    def find(self):
        for label, blk in self.blocks.items():
            for st in blk.body:
                summed = self._summed(st)
                if summed is not None:
                    site = self._site(label, st, summed)
                    if site is not None:
                        return site
        return None

    def _summed(self, st):
        """The array ``st`` sums (``s = np.sum(a)``, ``s = m()`` of ``m = a.sum``) and the
        method's statement, or None."""
        e = st.value if isinstance(st, ir.Assign) else None
        if self.is_call_of(e, (np.sum,)):
            return e.args[0].name, None
        if isinstance(e, ir.Expr) and e.op == "call" and not e.args and not e.kws \
                and e.vararg is None:
            m = self.single_def(e.func.name)
            if m is not None and isinstance(m.value, ir.Expr) and m.value.op == "getattr" \
                    and m.value.attr == "sum" and _is_vector(self.ty(m.value.value.name)) \
                    and len(self.uses.get(e.func.name, ())) == 1:
                return m.value.value.name, m
        return None

    def find_in_place(self):
        """An element-wise array ``r`` overwritten element by element by a loop that
        reads ``r[i]`` first (numba-stats' ``_logpdf`` whose result is not only summed):
        made with ``np.empty_like(x)``, the loop computing each element from ``x[i]``."""
        for label, blk in self.blocks.items():
            for st in blk.body:
                if isinstance(st, ir.Assign) and isinstance(st.value, ir.Expr) \
                        and st.value.op in ("binop", "unary") \
                        and _is_vector(self.ty(st.target.name)):
                    site = self._site(label, None, (st.target.name, None))
                    if site is not None:
                        site.empty_like = self._empty_like(site)
                        if site.empty_like is not None:
                            return site
        return None

    def _empty_like(self, site):
        """The function type and signature of ``np.empty_like(x)``, when it makes an array
        of ``r``'s type; else None."""
        from numba.core.registry import cpu_target
        ctx = cpu_target.typing_context
        fnty = ctx.resolve_getattr(types.Module(np), "empty_like")
        sig = ctx.resolve_function_type(fnty, (self.ty(site.producer["source"]),), {})
        if sig is None or sig.return_type != self.ty(site.root):
            return None
        return fnty, sig

    def _site(self, sum_label, sum_stmt, summed):
        """The fold of ``sum_stmt`` (the sum of array ``summed[0]``), or with no
        ``sum_stmt``, the loop that overwrites element-wise array ``summed[0]``."""
        array, method = summed
        root, root_def = self.origin(array)
        if root_def is None or not _is_vector(self.ty(root)) or sum_stmt is not None \
                and self.ty(sum_stmt.target.name) != types.float64:
            return None
        members = self._members(root)
        lens, reads, stores, sums, later = [], [], [], [], []
        for m in members:
            for label, st in self.uses.get(m, ()):
                if isinstance(st, ir.Del):
                    continue
                e = st.value if isinstance(st, ir.Assign) else None
                if isinstance(e, ir.Var) and st.target.name in members:
                    continue
                if st is sum_stmt or st is method:
                    sums.append(st)
                elif self.is_call_of(e, (len,)):
                    lens.append((label, st))
                elif isinstance(e, ir.Expr) and e.op == "getitem" and e.value.name == m \
                        and e.index.name not in members:
                    reads.append((label, st))
                elif isinstance(st, ir.SetItem) and st.target.name == m \
                        and st.index.name not in members and st.value.name not in members:
                    stores.append((label, st))
                elif sum_stmt is None:
                    later.append((label, st))
                else:
                    return None
        if len(sums) != (sum_stmt is not None) or len(stores) != 1:
            return None
        fresh = self.is_call_of(root_def.value, _FRESH)
        producer = None if fresh else self._producer(root)
        if not fresh and producer is None or fresh and reads \
                or sum_stmt is None and producer is None:
            return None
        store_label, store = stores[0]
        lp = self.innermost(store_label)
        if lp is None:
            return None
        if sum_stmt is None:
            # What reads r after the loop reads the stored elements: every one is stored.
            exit_label = next(iter(lp.exits)) if len(lp.exits) == 1 else None
            later += [(label, st) for label, st in reads if label not in lp.body]
            reads = [(label, st) for label, st in reads if label in lp.body]
            if exit_label is None or not reads or any(
                    label in lp.body or exit_label not in self.doms[label]
                    for label, _ in later):
                return None
        index = self._loop_index(lp, members, producer)
        if index is None or self.origin(store.index.name)[0] != index \
                or not isinstance(self.ty(store.value.name), types.Float):
            return None
        if not self._every_iteration(lp, store_label) or not self._reads_first(
                lp, store_label, store, reads, index) or not self._loop_is_plain(lp, store):
            return None
        if sum_stmt is None:
            pre = [p for p, _ in self.cfg.predecessors(lp.header) if p not in lp.body]
            if len(pre) != 1 or not self._nothing_writes_between(producer, pre[0], lp):
                return None
            return _Site(root=root, members=members, producer=producer, reads=reads,
                         store_label=store_label, root_def=root_def)
        # The sum runs once after each run of the loop.
        exit_label = next(iter(lp.exits)) if len(lp.exits) == 1 else None
        if exit_label is None or exit_label not in self.doms[sum_label] \
                or self.loops_of(sum_label) != self.loops_of(lp.header) - {lp.header} \
                or self.loops_of(self.where[id(root_def)][0]) != self.loops_of(sum_label):
            return None
        pre = [p for p, _ in self.cfg.predecessors(lp.header) if p not in lp.body]
        latches = [p for p, _ in self.cfg.predecessors(lp.header) if p in lp.body]
        if len(pre) != 1:
            return None
        if producer is not None and not self._nothing_writes_between(producer, pre[0], lp):
            return None
        return _Site(root=root, members=members, producer=producer, lens=lens,
                     reads=reads, store=store, store_label=store_label, sum_stmt=sum_stmt,
                     method=method, loop=lp, pre=pre[0], latches=latches)

    def _members(self, root):
        members, todo = {root}, [root]
        while todo:
            for _, st in self.uses.get(todo.pop(), ()):
                if isinstance(st, ir.Assign) and isinstance(st.value, ir.Var) \
                        and st.target.name not in members \
                        and self.single_def(st.target.name) is st:
                    members.add(st.target.name)
                    todo.append(st.target.name)
        return members

    def _producer(self, root):
        """The element-wise expression defining ``root``: ``{"source": x, "nodes": [(name,
        stmt)] in order of definition}``, or None."""
        nodes, source = [], []

        def walk(name, depth):
            st = self.single_def(name)
            if st is None or depth > 16 or not _is_vector(self.ty(name)):
                return False
            e = st.value
            if isinstance(e, ir.Expr) and e.op == "binop" and e.fn in _ELEMENTWISE:
                operands = [e.lhs, e.rhs]
            elif isinstance(e, ir.Expr) and e.op == "unary" and e.fn in (operator.neg, "-"):
                operands = [e.value]
            else:
                return False
            if not any(_is_vector(self.ty(v.name)) for v in operands):
                return False
            for v in operands:
                t = self.ty(v.name)
                if _is_vector(t):
                    d = self.single_def(v.name)
                    if d is not None and isinstance(d.value, ir.Expr) \
                            and d.value.op in ("binop", "unary"):
                        if len([u for u in self.uses.get(v.name, ())
                                if not isinstance(u[1], ir.Del)]) != 1 \
                                or not walk(v.name, depth + 1):
                            return False
                    elif d is not None or v.name in self.fir.arg_names:
                        source.append(v.name)
                    else:
                        return False
                elif not (isinstance(t, (types.Float, types.Integer))
                          and not isinstance(t, types.Boolean)
                          and len(self.defs.get(v.name, ())) <= 1):
                    return False
            nodes.append((name, st))
            return True

        if not walk(root, 0) or len(set(source)) != 1:
            return None
        return {"source": source[0], "nodes": nodes}

    def _loop_index(self, lp, members, producer):
        """The index of counted loop ``lp`` over ``range(len(m))`` (``m`` a member, or the
        producer's source array), or None."""
        header = self.blocks[lp.header]
        it = first = None
        for st in header.body:
            if isinstance(st, ir.Assign) and isinstance(st.value, ir.Expr):
                if st.value.op == "iternext":
                    it = st.value.value.name
                elif st.value.op == "pair_first":
                    first = st.target.name
        if it is None or first is None or lp.exits != {next(iter(lp.exits))} \
                or any(s not in lp.body for b in lp.body if b != lp.header
                       for s, _ in self.cfg.successors(b)):
            return None
        _, gi = self.origin(it)
        if gi is None or not (isinstance(gi.value, ir.Expr) and gi.value.op == "getiter"):
            return None
        _, rng = self.origin(gi.value.value.name)
        if rng is None or not self.is_call_of(rng.value, _ranges()):
            return None
        _, n = self.origin(rng.value.args[0].name)
        if n is None or not self.is_call_of(n.value, (len,)):
            return None
        counted = self.origin(n.value.args[0].name)[0]
        if counted not in members and (producer is None or counted != producer["source"]):
            return None
        return first

    def _every_iteration(self, lp, label):
        """Does every iteration pass ``label`` once (it dominates every latch, in no inner
        loop)?"""
        latches = [p for p, _ in self.cfg.predecessors(lp.header) if p in lp.body]
        return self.innermost(label) is lp and all(label in self.doms[b] for b in latches)

    def _reads_first(self, lp, store_label, store, reads, index):
        _, at = self.where[id(store)]
        for label, st in reads:
            if self.origin(st.value.index.name)[0] != index or self.innermost(label) is not lp:
                return False
            if label == store_label:
                if self.where[id(st)][1] > at:
                    return False
            elif label not in self.doms[store_label]:
                return False
        return True

    def _writes_memory(self, st, allowed=()):
        if isinstance(st, (ir.SetItem, ir.StaticSetItem, ir.DelItem, ir.SetAttr)):
            return st not in allowed
        e = st.value if isinstance(st, ir.Assign) else None
        if isinstance(e, ir.Expr) and e.op == "inplace_binop" \
                and not isinstance(self.ty(e.lhs.name), (types.Number, types.Boolean)):
            return True
        if isinstance(e, ir.Expr) and e.op == "call":
            bound = self.ty(e.func.name)
            if isinstance(bound, types.BoundFunction) and not isinstance(
                    bound.this, (types.Number, types.Boolean)):
                # a method of an array (or of anything holding one): a read only if known
                key = getattr(bound.template, "key", "")
                name = key[-1] if isinstance(key, tuple) else str(key).rpartition(".")[2]
                return name not in _READING_METHODS
            fn = self.global_of(e.func)
            if fn in (len, np.sum) + _ranges() + _CONSTRUCTORS or (
                    isinstance(fn, np.ufunc) and not e.kws and e.vararg is None
                    and len(e.args) == fn.nin):
                return False
            return any(isinstance(self.ty(v.name), (types.Array, types.BaseTuple,
                                                    types.List, types.Buffer))
                       for v in e.list_vars() if v.name != e.func.name)
        return False

    def _loop_is_plain(self, lp, store):
        return not any(self._writes_memory(st, (store,)) for b in lp.body
                       for st in self.blocks[b].body)

    def _nothing_writes_between(self, producer, pre, lp):
        """The producer's statements all lie in the loop's preheader, and nothing after the
        first of them there writes memory."""
        labels = {self.where[id(st)][0] for _, st in producer["nodes"]}
        if labels != {pre}:
            return False
        first = min(self.where[id(st)][1] for _, st in producer["nodes"])
        return not any(self._writes_memory(st) for st in self.blocks[pre].body[first:])


def _nargs(e):
    return len(e.args) if isinstance(e, ir.Expr) and e.op == "call" else -1


def _is_vector(t):
    return isinstance(t, types.Array) and t.ndim == 1 and t.dtype == types.float64
