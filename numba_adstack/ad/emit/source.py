"""Python source of IR expressions, constants and values known before the function runs."""
import math
import operator

import numpy as np
from numba.core import ir, types

from ..facts.operators import OPS, UNARY
from ..typeinfo import is_literal


class Source:
    """Renders IR expressions for one generated module (``names`` gives variable and
    global names)."""

    def __init__(self, facts, names):
        self.facts = facts
        self.names = names
        self._static = {}

    def const(self, value):
        if isinstance(value, float):
            if math.isinf(value):
                return "math.inf" if value > 0 else "(-math.inf)"
            if math.isnan(value):
                return "math.nan"
            return repr(value)
        if isinstance(value, (bool, int, str, type(None))):
            return repr(value)
        if isinstance(value, tuple):
            return "(%s)" % "".join(self.const(v) + ", " for v in value)
        if isinstance(value, np.generic):
            return "%s(%r)" % (self.names.gname(type(value)), value.item())
        return self.names.gname(value)

    def static(self, name):
        """Source of a value known before the function runs, or None (see
        :meth:`IRFacts.static_form`)."""
        if name not in self._static:
            form = self.facts.static_form(name)
            self._static[name] = None if form is None else self.form(form)
        return self._static[name]

    def form(self, form):
        kind = form[0]
        if kind == "const":
            return self.const(form[1])
        if kind == "global":
            value = form[1]
            return self.const(value) if is_literal(value) else self.names.gname(value)
        return "%s.%s" % (self.form(form[1]), form[2])

    def operand(self, var):
        """Source of an operand where its variable holds it (the forward replay)."""
        if not isinstance(var, (ir.Var, str)):
            return repr(var)
        name = var if isinstance(var, str) else var.name
        static = self.static(name)
        return self.names.n(name) if static is None else static

    def index(self, e, r):
        if e.op == "static_getitem":
            if e.index_var is not None and e.index is not Ellipsis:
                return r(e.index_var)
            return self._static_index(e.index)
        return self._index_var(e.index, r)

    def _static_index(self, index):
        # (Numba lowers ``a[...]`` only written as a tuple: ``a[(...,)]``)
        return "(...,)" if index is Ellipsis else self.const(index)

    def _index_var(self, var, r):
        form = self.facts.static_form(var.name) if isinstance(var, ir.Var) else None
        if form is not None and form[0] in ("const", "global") and form[1] is Ellipsis:
            return "(...,)"
        return r(var)

    def store_index(self, stmt, r):
        """Source of the index of a store ``a[i] = v``."""
        if isinstance(stmt, ir.StaticSetItem):
            if stmt.index_var is not None and stmt.index is not Ellipsis:
                return r(stmt.index_var)
            return self._static_index(stmt.index)
        return self._index_var(stmt.index, r)

    def expr(self, e, r):
        """Python source of an IR expression; ``r`` renders operand variables."""
        op = e.op
        if op in ("binop", "inplace_binop"):
            fn = e.immutable_fn if op == "inplace_binop" else e.fn
            if fn is operator.contains:
                return "%s in %s" % (r(e.rhs), r(e.lhs))
            if fn not in OPS:
                self.facts.error("operator %s" % fn, e.loc)
            return "%s %s %s" % (r(e.lhs), OPS[fn], r(e.rhs))
        if op == "unary":
            return "%s%s" % (UNARY[e.fn], r(e.value))
        if op == "call":
            if e.vararg is not None or e.varkwarg is not None:
                self.facts.error("calls with *args or **kwargs", e.loc)
            args = [r(a) for a in e.args] + ["%s=%s" % (k, r(v)) for k, v in e.kws]
            return "%s(%s)" % (r(e.func), ", ".join(args))
        if op == "getattr":
            return "%s.%s" % (r(e.value), e.attr)
        if op in ("getitem", "static_getitem"):
            return "%s[%s]" % (r(e.value), self.index(e, r))
        if op == "build_tuple":
            return "(%s)" % "".join(r(v) + ", " for v in e.items)
        if op == "build_list":
            return "[%s]" % ", ".join(r(v) for v in e.items)
        if op == "exhaust_iter" and isinstance(self.facts.ty(e.value), types.Array):
            return "unpacked(%s, %d)" % (r(e.value), e.count)     # the length check
        if op in ("exhaust_iter", "cast"):
            return r(e.value)
        if op in ("build_map", "build_set"):
            self.facts.error("a %s literal on the gradient path: the rewrite does not "
                             "follow values through dicts and sets; keep them in local "
                             "variables or a tuple" % ("dict" if op == "build_map" else "set"),
                             e.loc)
        self.facts.error("the construct %r" % op, e.loc)

    def hoisted(self, h):
        """Source of a hoisted factor of an early seed (:mod:`..plan.seeds`)."""
        if h[0] == "static":
            return self.static(h[1])
        if h[0] == "var":
            return self.names.n(h[1])
        e, parts = h[1], h[2]
        return "(%s)" % self.expr(e, lambda x: self.hoisted(parts[x.name]))

    def seed(self, t):
        """Source of an early seed tree (:mod:`..plan.seeds`)."""
        kind = t[0]
        if kind == "ret":
            return "_ret_b"
        if kind == "zero":
            return "0.0"
        if kind == "fused":     # the seed of the enclosing fused loop's sum
            return self.names.seed(t[1])
        if kind == "neg":
            return "(-(%s))" % self.seed(t[1])
        if kind == "mul":
            return "(%s) * %s" % (self.seed(t[1]), self.hoisted(t[2]))
        if kind == "div":
            return "(%s) / %s" % (self.seed(t[1]), self.hoisted(t[2]))
        return " + ".join(self.seed(x) for x in t[1])
