"""Recomputation: which values the sweep recomputes instead of keeping them.

A value the sweep needs is recomputed where it is cheap and pure: constants and globals
(written in place), copies, tuples, integer index arithmetic, loads from arrays the
function never writes, and the index of a range loop (from the reversed iteration number).
Everything else that is overwritten within its reversal unit goes on a stack.
"""
from numba.core import ir, types


class Recompute:
    def __init__(self, facts, fused, sites):
        self.facts = facts
        self.fused = frozenset(fused)
        self.sites = sites
        self._rc = {}

    def is_remat(self, name):
        """Can the reverse sweep recompute this value where it needs it (cheap, pure)?"""
        f = self.facts
        if name in f.phis:
            return False
        e = f.def_expr(name)
        if e is None or isinstance(e, ir.Arg):
            return False
        if isinstance(e, (ir.Const, ir.Global, ir.FreeVar, ir.Var)):
            return True
        if not isinstance(e, ir.Expr):
            return False
        t = f.ty(name)
        if e.op in ("getattr", "build_tuple", "exhaust_iter", "cast"):
            return True
        if e.op in ("getitem", "static_getitem"):
            vt = f.ty(e.value)
            if isinstance(vt, types.BaseTuple):
                return True
            if isinstance(vt, types.Array):
                return isinstance(t, types.Array) or f.is_readonly_array(e.value.name)
            return False
        if e.op in ("binop", "unary", "inplace_binop"):
            return isinstance(t, (types.Integer, types.Boolean))
        if e.op == "call":
            fn = f.resolve_global(e.func)
            return fn in (len, slice) and not e.kws
        return False

    def rc_loop(self, name):
        """The range loop whose index ``name`` is, when the reverse sweep can recompute it
        from the iteration number (every use is inside that loop)."""
        if name not in self._rc:
            self._rc[name] = self._find_rc_loop(name)
        return self._rc[name]

    def _find_rc_loop(self, name):
        f = self.facts
        for lp in f.s.loops:
            rl = lp.range
            if rl is None or rl.first != name or lp in self.fused:
                continue
            if rl.array is not None and not f.is_readonly_array(rl.array.name):
                return None     # the values change: keep them on a stack
            chain, work = set(), [name]
            while work:
                v = work.pop()
                if v in chain:
                    continue
                chain.add(v)
                for label, stmt in f.uses.get(v, ()):
                    if label not in lp.blocks:
                        return None
                    if (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var)
                            and stmt.value.name == v):
                        work.append(stmt.target.name)
            return lp
        return None

    def is_rc(self, name):
        return self.rc_loop(name) is not None

    def kept_on_stack(self, name):
        """Will the sweep read ``name`` from a stack (rather than recompute it or find it
        still in place)?"""
        if self.is_remat(name) or self.is_rc(name):
            return False
        if not self.sites.has_def(name):
            return False
        return any(self.sites.def_site_loops(name).values())
