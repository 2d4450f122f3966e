"""The memory model of arrays: which memory each array variable may name, at each point.

Every array variable names the memory of a *base*: the variable its memory comes from
through aliases, views (slices, rows, ``.T``, casts, tuple items), in-place results and the
calls that may return a view of their operand (rules/array_effects.py). A base is an
argument, a fresh array (a constructor, a copy, whole-array arithmetic), a phi, or
memory the rewrite does not follow (an item of a list). Its *objects* are abstract
allocations: an argument's own, or an allocation site's, and for a site inside a loop the
array of this iteration apart from the arrays earlier iterations made there (the recency
abstraction of Balakrishnan and Reps, SAS 2006): ``new = np.empty_like(u); ...; u = new``
makes ``new`` and ``u`` two arrays within an iteration, since ``u`` holds what an earlier
iteration made. Phis at one block that only pass distinct arrays around (``a, b = b, a``,
a rotation of three, a swap on some steps) are two arrays at every point: a greatest fixed
point over the edges into their block.

The rewrite gives each array an adjoint by its *identity* (:meth:`ArrayFacts.array_root`:
the base, except that a call's view and an in-place update of a computed value start an
identity of their own). That is exact as long as no two identities name one array while
it is written: :func:`shared_writes` finds the writes where another identity that may name
the same array is still live (read later), which the checks refuse by the user's names.
"""
from numba.core import ir, types

from ..rules.array_effects import MAY_RETURN_VIEW, VIEW_METHODS, member
from .containers import container_root
from .rule_binding import bind_expr
from .structure import reachable, successors

NEW, OLD = "new", "old"


class MemoryModel:
    """Bases, objects and the liveness of array variables of one function."""

    def __init__(self, facts):
        self.facts = facts
        self._base = {}
        self.objects = self._points_to()
        self.apart = self._phis_apart()
        self._live_out = _live_out(facts)

    # ------------------------------------------------------------------ bases
    def base(self, name):
        """The variable whose memory the array variable ``name`` names."""
        if name not in self._base:
            self._base[name] = self._find_base(name)
        return self._base[name]

    def _find_base(self, name):
        for _ in range(1000):
            source = self.shares_with(name)
            if source is None:
                return name
            name = source
        return name

    def shares_with(self, name):
        """The variable whose memory ``name``'s definition names (an alias, a view, an
        in-place result, a call that may return a view), or None for new memory."""
        facts = self.facts
        if name in facts.phis:
            return facts.phi_alias(name)
        e = facts.def_expr(name)
        if isinstance(e, ir.Var):
            return e.name
        if not isinstance(e, ir.Expr):
            return None
        if e.op in ("getitem", "static_getitem"):
            if isinstance(facts.ty(e.value), types.Array):
                return None if facts._advanced_index(e) else e.value.name
            item = facts.tuple_item(e)
            return None if item is None else item.name
        if e.op == "cast" or (e.op == "getattr" and e.attr in ("T", "real", "imag")):
            return e.value.name if isinstance(facts.ty(e.value), types.Array) else None
        if e.op == "inplace_binop" and isinstance(facts.ty(e.lhs), types.Array):
            return e.lhs.name
        viewed = call_view_operand(facts, e)
        return None if viewed is None else viewed[0].name

    # ------------------------------------------------------------------ points-to
    def _points_to(self):
        """``{base: frozenset of objects}``; an object is ``(site, age)``: ``("arg",
        name)``, ``(allocating variable, NEW or OLD)``, or ``("unknown", name)``."""
        facts = self.facts
        bases = {self.base(n) for n, t in facts.typemap.items()
                 if isinstance(t, types.Array) and (n in facts.defs or n in facts.phis)}
        pts = {}
        for b in bases:
            if b in facts.phis:
                pts[b] = frozenset()
            elif b in facts.arg_vars:
                pts[b] = frozenset([("arg", b)])
            elif b in facts.defs and _follows(facts, b):
                pts[b] = frozenset([(b, NEW)])
            else:
                pts[b] = frozenset([("unknown", b)])
        phis = [b for b in bases if b in facts.phis]
        items = {b: _item_read(facts, b) for b in bases}
        items = {b: c for b, c in items.items() if c is not None}
        puts = _container_puts(facts) if items else {}
        changed = True
        while changed:
            changed = False
            for b, (label, index, container) in items.items():
                got = set(pts[b]) - {("unknown", b)}
                for plabel, pindex, v in puts.get(container, ()):
                    objs = pts.get(self.base(v), frozenset([("unknown", v)]))
                    got |= self.put_as_seen(objs, (plabel, pindex), (label, index))
                if got != pts[b]:
                    pts[b] = frozenset(got)
                    changed = True
            for p in phis:
                label = facts.phis[p]
                got = set()
                for pred, v in facts.phi_incoming(p).items():
                    if not isinstance(v, ir.Var):
                        continue
                    objs = pts.get(self.base(v.name), frozenset([("unknown", v.name)]))
                    got |= self._aged(objs, pred, label)
                if not got <= pts[p]:
                    pts[p] = pts[p] | got
                    changed = True
        return pts

    def put_as_seen(self, objs, put, at):
        """The objects ``objs`` put into a container at statement ``put`` (label, index),
        as a statement ``at`` sees them: made by an earlier iteration of the loops around
        the put unless ``at`` runs after it within one iteration."""
        if self._reaches_within(put[0], put[1], at[0], at[1]):
            return set(objs)
        return {(site, OLD) if age == NEW and self._in_loop_of(site, put[0]) else
                (site, age) for site, age in objs}

    def _aged(self, objs, pred, label):
        """The objects ``objs`` after edge ``pred -> label``: an allocation inside a loop
        whose back edge this is was made by an earlier iteration once the edge is taken."""
        s = self.facts.s
        back = [lp for lp in s.enclosing(pred) if lp.header == label]
        if not back:
            return set(objs)
        out = set()
        for site, age in objs:
            if age == NEW and self.facts.def_label(site) in back[0].blocks:
                out.add((site, OLD))
            else:
                out.add((site, age))
        return out

    def _in_loop_of(self, site, label):
        """Is the allocation ``site`` made in a loop holding block ``label``?"""
        site_label = self.facts.def_label(site)
        return site_label is not None and any(
            site_label in lp.blocks for lp in self.facts.s.enclosing(label))

    def _reaches_within(self, src, i, dst, j):
        """Can statement ``j`` of block ``dst`` run after statement ``i`` of block
        ``src`` in one iteration of the loops holding ``src`` (no back edge taken)?"""
        if src == dst and i < j:
            return True
        s = self.facts.s
        headers = {lp.header for lp in s.enclosing(src)}
        seen, work = set(), [t for t in successors(self.facts.fir.blocks[src])
                             if t not in headers]
        while work:
            b = work.pop()
            if b == dst:
                return True
            if b in seen:
                continue
            seen.add(b)
            work.extend(t for t in successors(self.facts.fir.blocks[b]) if t not in headers)
        return False

    def objects_of(self, name):
        return self.objects.get(self.base(name), frozenset([("unknown", name)]))

    # ------------------------------------------------------------------ distinct phis
    def _phis_apart(self):
        """Pairs of array phis of one block that never hold one array: assumed for every
        pair, then dropped where an edge into their block brings two values that may be
        one array, until nothing changes."""
        facts = self.facts
        by_block = {}
        for p, label in facts.phis.items():
            if isinstance(facts.typemap.get(p), types.Array) and self.base(p) == p:
                by_block.setdefault(label, []).append(p)
        apart = set()
        for ps in by_block.values():
            apart |= {frozenset((a, b)) for a in ps for b in ps if a < b}
        changed = True
        while changed:
            changed = False
            for pair in list(apart):
                a, b = sorted(pair)
                ia, ib = facts.phi_incoming(a), facts.phi_incoming(b)
                for pred in ia:
                    va, vb = ia.get(pred), ib.get(pred)
                    if not (isinstance(va, ir.Var) and isinstance(vb, ir.Var)) or \
                            not self._distinct(va.name, vb.name, apart):
                        apart.discard(pair)
                        changed = True
                        break
        return apart

    def _distinct(self, x, y, apart):
        bx, by = self.base(x), self.base(y)
        if bx == by:
            return False
        if frozenset((bx, by)) in apart:
            return True
        return not _overlap(self.objects_of(bx), self.objects_of(by))

    def may_alias(self, x, y):
        """May the array variables ``x`` and ``y`` name one array at one time?"""
        return not self._distinct(x, y, self.apart)

    # ------------------------------------------------------------------ liveness
    def live_after(self, label, index):
        """The variables read after statement ``index`` of block ``label`` runs."""
        body = self.facts.fir.blocks[label].body
        live = set(self._live_out[label])
        for stmt in reversed(body[index + 1:]):
            _step_back(stmt, live)
        return live


def memory_model(facts):
    """The :class:`MemoryModel` of ``facts``'s function, made once."""
    model = getattr(facts, "_memory_model", None)
    if model is None:
        model = facts._memory_model = MemoryModel(facts)
    return model


def unchanged_after(facts, name, label, index):
    """Does no write into any array ``name`` may name run at or after statement ``index``
    of block ``label`` (in this iteration or any later one)? Then what an element read
    there gives is what the array holds once the function returns. Judged by objects, not
    by names: a name rebound to another array later (a swap) counts the writes into
    either."""
    model = memory_model(facts)
    after = reachable(facts.fir.blocks, successors(facts.fir.blocks[label]))
    mine = model.objects_of(name)
    for wlabel, k, target, _ in array_writes(facts):
        if not isinstance(facts.typemap.get(target.name), types.Array):
            continue
        if (wlabel in after or wlabel == label and k >= index) and (
                model.base(target.name) == model.base(name) or
                _overlap(model.objects_of(target.name), mine)):
            return False
    return True


def unchanged_after_definition(facts, array, name):
    """Is ``array``, made in the function, unchanged from the statement defining ``name``
    on (:func:`unchanged_after`)? Memoised per function."""
    memo = facts.__dict__.setdefault("_unchanged_after", {})
    key = (array, name)
    if key not in memo:
        ok = name in facts.defs and not facts.is_arg_array(array)
        if ok:
            label, stmt = facts.defs[name]
            body = facts.fir.blocks[label].body
            ok = stmt in body and unchanged_after(facts, array, label, body.index(stmt))
        memo[key] = ok
    return memo[key]


def array_writes(facts):
    """``(label, index, array written, statement)`` of every write into an array: stores,
    in-place operators, calls that write (the effect table)."""
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


def shared_writes(facts, model, relevant):
    """``(statement, array written, other name)`` for each write into an array while
    another identity that may name the same array is read later (see the module
    docstring); ``relevant(names)``: whether the gradient reads any of those identities."""
    found = []
    for label, k, target, stmt in array_writes(facts):
        if not isinstance(facts.typemap.get(target.name), types.Array):
            continue        # (a list or a dict stored into: facts/containers.py's)
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and \
                stmt.value.op == "inplace_binop":
            identity = facts.array_root(stmt.target.name)
        else:
            identity = facts.array_root(target.name)
        for other in sorted(model.live_after(label, k)):
            if not isinstance(facts.typemap.get(other), types.Array) or \
                    other == target.name:
                continue
            theirs = facts.array_root(other)
            if theirs == identity or not relevant({identity, theirs, other}) or \
                    not model.may_alias(other, target.name):
                continue
            found.append((stmt, target.name, other))
            break
    return found


def writes_into_held_arrays(facts, model, containers):
    """``(statement, array written, container)`` for each write into an array that a list
    of ``containers`` (roots of lists of arrays whose items the gradient reads) may hold
    at that point and that the list is read after: the list's adjoint gives each item the
    adjoint of the array as it was put in, so the item must not change after."""
    puts = _container_puts(facts)
    found = []
    for label, k, target, stmt in array_writes(facts):
        if not isinstance(facts.typemap.get(target.name), types.Array):
            continue
        live = model.live_after(label, k)
        written = model.objects_of(target.name)
        for container in sorted(containers):
            if not any(container_root(facts, n) == container for n in live
                       if n in facts.typemap):
                continue
            for plabel, pindex, v in puts.get(container, ()):
                held = model.put_as_seen(model.objects_of(v), (plabel, pindex), (label, k))
                if _overlap(written, held):
                    found.append((stmt, target.name, container, v))
                    break
            else:
                continue
            break
    return found


def call_view_operand(facts, e):
    """``(operand, name of the call)`` when ``e`` is a call that may return a view of
    ``operand`` (``x.reshape(6)``, ``np.asarray(x)``, ``.real``), else None."""
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


def _follows(facts, name):
    """Is ``name`` new memory whose every later name the rewrite sees (a constructor, a
    copy, whole-array arithmetic), rather than an item of a container?"""
    e = facts.def_expr(name)
    if not isinstance(e, ir.Expr):
        return False
    if e.op in ("getitem", "static_getitem"):
        return isinstance(facts.ty(e.value), types.Array)      # x[idx]: a copy
    return e.op in ("call", "binop", "unary")


_CONTAINERS = (types.List, types.ListType, types.DictType)


def _item_read(facts, name):
    """``(label, index, container root)`` where ``name`` is read out of a list or dict."""
    e = facts.def_expr(name)
    if not (isinstance(e, ir.Expr) and e.op in ("getitem", "static_getitem", "call")):
        return None
    if e.op == "call":
        f = facts.def_expr(e.func.name)
        if not (isinstance(f, ir.Expr) and f.op == "getattr" and f.attr in ("pop", "get")
                and isinstance(facts.ty(f.value), _CONTAINERS)):
            return None
        holder = f.value
    elif isinstance(facts.ty(e.value), _CONTAINERS):
        holder = e.value
    else:
        return None
    label, stmt = facts.defs[name]
    return label, facts.fir.blocks[label].body.index(stmt), container_root(facts, holder.name)


def _container_puts(facts):
    """``{container root: [(label, index, variable put)]}``: items built in, appended,
    inserted, extended, stored."""
    out = {}
    for label, blk in facts.fir.blocks.items():
        for k, stmt in enumerate(blk.body):
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                if isinstance(facts.ty(stmt.target), _CONTAINERS):
                    if isinstance(facts.ty(stmt.value), types.Array):
                        out.setdefault(container_root(facts, stmt.target.name), []).append(
                            (label, k, stmt.value.name))
                continue
            e = stmt.value if isinstance(stmt, ir.Assign) else None
            if not isinstance(e, ir.Expr):
                continue
            if e.op == "build_list" or e.op == "build_map":
                items = e.items if e.op == "build_list" else [v for _, v in e.items]
                out.setdefault(stmt.target.name, []).extend(
                    (label, k, v.name) for v in items if isinstance(v, ir.Var)
                    and isinstance(facts.ty(v), types.Array))
            elif e.op == "call":
                f = facts.def_expr(e.func.name)
                if isinstance(f, ir.Expr) and f.op == "getattr" and \
                        isinstance(facts.ty(f.value), _CONTAINERS):
                    out.setdefault(container_root(facts, f.value.name), []).extend(
                        (label, k, a.name) for a in e.args
                        if isinstance(facts.ty(a), types.Array))
    return out


def _overlap(a, b):
    """May one of the objects ``a`` be one of ``b``? An allocation of this iteration is
    not one of an earlier iteration's; two of earlier iterations may be one."""
    return bool(a & b) or any(("unknown" in (s[0] for s in side)) for side in (a, b))


# ---------------------------------------------------------------------- liveness
def _uses(stmt):
    if isinstance(stmt, ir.Assign):
        e = stmt.value
        if isinstance(e, ir.Var):
            return [e.name]
        if isinstance(e, ir.Expr):
            return [] if e.op == "phi" else [v.name for v in e.list_vars()]
        return []
    return [v.name for v in stmt.list_vars()]


def _step_back(stmt, live):
    if isinstance(stmt, ir.Assign):
        live.discard(stmt.target.name)
    if isinstance(stmt, ir.Del):
        return
    live.update(_uses(stmt))


def _live_out(facts):
    """``{label: variables live at the end of the block}`` (a phi's operand is read at
    the end of the block it comes from)."""
    blocks = facts.fir.blocks
    live_in = {b: set() for b in blocks}
    live_out = {b: set() for b in blocks}
    changed = True
    while changed:
        changed = False
        for b in sorted(blocks, reverse=True):
            out = set()
            for s in successors(blocks[b]):
                phi_targets = {t.name for t, _ in facts.block_phis.get(s, ())}
                out |= live_in[s] - phi_targets
                for _, inc in facts.block_phis.get(s, ()):
                    v = inc.get(b)
                    if isinstance(v, ir.Var):
                        out.add(v.name)
            live = set(out)
            for stmt in reversed(blocks[b].body):
                _step_back(stmt, live)
            if out != live_out[b] or live != live_in[b]:
                live_out[b], live_in[b] = out, live
                changed = True
    return live_out
