"""Tidy: fold the generated source's single-use temporaries into their one use.

The rewrite writes one statement per IR value (``t = a * b`` then ``y = t + c``), as the
IR has them. A variable assigned once and read once, by a later statement of the same
block, is folded into that read (``y = a * b + c``) when nothing in between can change
what its expression reads. The backward then reads like code written by hand, and Numba
has fewer named variables to track (its liveness analysis is quadratic in them).
Before that, control flow is made plain (:mod:`.control`: guards one state reaches,
tails all arms share) and a pullback that returns the adjoints of all its operands is
called once for all of them (:mod:`.common_calls`); then stores no path reads go (the liveness of :mod:`.dataflow`; in
the iteration helpers of parallel loops only the declarations no read can see,
:mod:`.declarations`), copies are propagated, and ``g += e`` where ``g`` is known to
hold ``-0.0`` becomes ``g = e`` (:mod:`.peephole`); declarations of one value end up on
one line; the ``ensure`` of an array adjoint is made once before a top-level loop rather
than in every iteration (:mod:`.hoist`); last, whole-array temporaries whose only use is a
sum, or the first add into an adjoint, are left out (:func:`.peephole.whole_array_forms`).
Every analysis of what holds on the paths is a client of the one solver of
:mod:`.dataflow`.
"""
import ast
import builtins
import math

import numpy as np
from numba.core import types as nbtypes

from ..runtime import PURE, RUNTIME
from .common_calls import share_pullback_calls
from .control import simplify_control
from .declarations import chain_declarations, drop_unseen_declarations
from .hoist import hoist_ensures
from .dataflow import dead_stores
from .elementwise import fuse_elementwise
from .value_only import guard_value_work
from .peephole import assign_onto_zeros, fold_resets, propagate_copies, whole_array_forms
from .syntax import walk

#: Intrinsics that change only their stack: they leave the arrays an expression reads alone.
STACK_CALLS = {"push", "pop", "top", "clear", "size", "overflowed", "adstack"}
_SCALARS = (nbtypes.Number, nbtypes.Boolean)
_PURE_BUILTINS = {bool, float, int, abs, min, max, len, round, range} | {RUNTIME[n] for n in PURE}


def tidy(tree, namespace, helpers=(), types=None, fuse=False):
    """Fold the single-use temporaries of the generated module ``tree`` (an
    ``ast.Module``, changed in place; see the module docstring); ``namespace`` holds the
    globals it will run with (to tell pure calls); ``helpers`` names the iteration helpers
    of parallel loops (see :meth:`_Folder.run`); ``types``: ``{name: Numba type}`` of the
    names whose type emission knows (any other name may hold an array)."""
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef):
            simplify_control(fn)
            share_pullback_calls(fn)
            if fn.name not in helpers:
                hoist_ensures(fn)
            _Folder(fn, namespace, types or {}).run(inlined=fn.name in helpers)
            whole_array_forms(fn)
            if fn.name not in helpers:
                if fuse:
                    fuse_elementwise(fn, types or {})
                guard_value_work(fn, _Folder(fn, namespace, types or {})._pure)
                chain_declarations(fn)


class _Folder:
    def __init__(self, fn, namespace, types):
        self.fn = fn
        self.namespace = namespace
        self.types = types
        self.params = {a.arg for a in fn.args.args}
        self._array_names = None

    def run(self, inlined=False):
        """``inlined``: a parallel loop's iteration helper that Numba inlines into a
        ``prange`` body. Its adjoints keep their declarations and resets as written: Numba's
        parfor passes hoist a constant declaration out of the loop, and a value assigned
        on one path would then reach the next iteration."""
        while True:
            self.stores, self.loads = _count_names(self.fn)
            self._array_names = None
            if self._fold_in(self.fn) | self._drop_dead(self.fn):
                continue
            if inlined:
                if not drop_unseen_declarations(self.fn):
                    return
                continue
            # (None where the solver does not follow the code: the definite assignment
            # would not either, it runs on the same solver.)
            unread = dead_stores(self.fn)
            changed = unread is not None and self._drop_dead(self.fn, unread)
            if not (changed | propagate_copies(self.fn, self.stores, self.loads, self.params)
                    | fold_resets(self.fn) | assign_onto_zeros(self.fn)):
                return

    def _drop_dead(self, node, unread=()):
        """Remove assignments of pure values to names nothing reads (declarations of
        records a function never makes, say), or to names no path reads afterwards
        (the statements ``unread`` holds, see :func:`.dataflow.dead_stores`)."""
        changed = False
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if not stmts:
                continue
            keep = []
            for s in stmts:
                if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                        and isinstance(s.targets[0], ast.Name) \
                        and (not self.loads.get(s.targets[0].id) or id(s) in unread) \
                        and s.targets[0].id not in self.params and self._pure(s.value):
                    changed = True
                    continue
                changed |= self._drop_dead(s, unread)
                keep.append(s)
            stmts[:] = keep or [ast.Pass()]
        return changed

    def _fold_in(self, node):
        """Fold what can be folded in every statement list under ``node``."""
        changed = False
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if not stmts:
                continue
            changed |= self._fold_list(stmts)
            for s in stmts:
                changed |= self._fold_in(s)
            if not stmts:
                stmts.append(ast.Pass())
        return changed

    def _fold_list(self, stmts):
        changed = False
        i = 0
        while i < len(stmts):
            s = stmts[i]
            if self._candidate(s) and self._fold_one(stmts, i):
                changed = True
                continue
            i += 1
        return changed

    def _candidate(self, s):
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name)):
            return False
        name = s.targets[0].id
        return (name not in self.params and self.stores.get(name) == 1
                and self.loads.get(name) == 1 and self._pure(s.value))

    def _fold_one(self, stmts, i):
        s = stmts[i]
        name = s.targets[0].id
        reads = {n.id for n in walk(s.value) if isinstance(n, ast.Name)}
        if self._array_names is None:
            self._array_names = _memory_names(self.fn, self.types)
        memory = any(isinstance(n, ast.Subscript) or (
            isinstance(n, ast.Call) and self._reads_arrays(n.func)) for n in walk(s.value)) \
            or bool(reads & self._array_names)
        for j in range(i + 1, len(stmts)):
            use = stmts[j]
            spot = _immediate_load(use, name)
            if spot is not None:
                spot.put(s.value)
                del stmts[i]
                return True
            if _mentions(use, name) or _assigns_any(use, reads) or (
                    memory and (self._may_write_memory(use) or self._updates_array(use))):
                return False
        return False

    def _pure(self, expr):
        """No call in ``expr`` has an effect, and nothing it reads is written by it."""
        for n in walk(expr):
            if isinstance(n, (ast.NamedExpr, ast.Await, ast.Yield, ast.Lambda)):
                return False
            if isinstance(n, ast.Call) and not self._pure_call(n.func):
                return False
        return True

    def _pure_call(self, func):
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            mod = self.namespace.get(func.value.id)
            return mod is math or mod is np
        if isinstance(func, ast.Name):
            obj = self.namespace.get(func.id, getattr(builtins, func.id, None))
            return obj in _PURE_BUILTINS or isinstance(obj, np.ufunc) or (
                getattr(obj, "__module__", None) == "math") or (
                isinstance(obj, type) and issubclass(obj, np.generic))
        return False

    def _reads_arrays(self, func):
        """A NumPy function or a method: it may read whole arrays (``np.sum(u_bar * c)``)."""
        if isinstance(func, ast.Attribute):
            return not (isinstance(func.value, ast.Name)
                        and self.namespace.get(func.value.id) is math)
        return isinstance(func, ast.Name) and isinstance(
            self.namespace.get(func.id), np.ufunc)

    def _updates_array(self, stmt):
        """``v += e`` where ``v`` may be an array or a view of one (``_view = u_bar``): an
        update in place of memory that an expression of whole arrays may read."""
        if self._array_names is None:
            self._array_names = _memory_names(self.fn, self.types)
        return any(isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)
                   and n.target.id in self._array_names for n in walk(stmt))

    def _may_write_memory(self, stmt):
        for n in walk(stmt):
            if isinstance(n, (ast.Assign, ast.AugAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                if any(not isinstance(t, ast.Name) for t in targets):
                    return True
            if isinstance(n, ast.Call) and not self._pure_call(n.func) and not (
                    isinstance(n.func, ast.Name) and n.func.id in STACK_CALLS):
                return True
        return False


def _memory_names(fn, types):
    """The names of ``fn`` that may hold an array or a view of one: every local (a
    parameter or a name it assigns; globals are constants) whose type (``types``, from
    emission) is not known to be a number or a boolean."""
    names = {a.arg for a in fn.args.args}
    names.update(n.id for n in walk(fn) if n.__class__ is ast.Name
                 and n.ctx.__class__ is ast.Store)
    return {n for n in names if not isinstance(types.get(n), _SCALARS)}


def _count_names(fn):
    stores, loads = {}, {}
    for n in walk(fn):
        if isinstance(n, ast.Name):
            d = stores if isinstance(n.ctx, ast.Store) else loads
            d[n.id] = d.get(n.id, 0) + 1
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            loads[n.target.id] = loads.get(n.target.id, 0) + 1
    return stores, loads


def _mentions(stmt, name):
    return any(isinstance(n, ast.Name) and n.id == name for n in walk(stmt))


def _assigns_any(stmt, names):
    for n in walk(stmt):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in names:
            return True
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) \
                and n.target.id in names:
            return True
    return False


class _Spot:
    """Where a load sits: ``put`` puts an expression there."""

    def __init__(self, parent, field, index=None):
        self.parent, self.field, self.index = parent, field, index

    def put(self, expr):
        if self.index is None:
            setattr(self.parent, self.field, expr)
        else:
            getattr(self.parent, self.field)[self.index] = expr


def _immediate_load(stmt, name):
    """The place of the load of ``name`` in the part of ``stmt`` evaluated once, right
    when ``stmt`` runs (not in a nested body, not in a loop test), or None."""
    if isinstance(stmt, ast.Assign):
        fields = [("value", None)] + [("targets", k) for k in range(len(stmt.targets))]
    elif isinstance(stmt, ast.AugAssign):
        fields = [("value", None), ("target", None)]
    elif isinstance(stmt, (ast.Expr, ast.Return)) and stmt.value is not None:
        fields = [("value", None)]
    elif isinstance(stmt, ast.If):
        fields = [("test", None)]
    else:
        return None
    for field, k in fields:
        root = getattr(stmt, field) if k is None else getattr(stmt, field)[k]
        if _is_load(root, name):
            return _Spot(stmt, field, k)
        for parent in walk(root):
            for f, value in ast.iter_fields(parent):
                if _is_load(value, name):
                    return _Spot(parent, f)
                if isinstance(value, list):
                    for j, item in enumerate(value):
                        if _is_load(item, name):
                            return _Spot(parent, f, j)
    return None


def _is_load(node, name):
    return isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
