"""Expression trees of IR expressions, constants and values known before the function
runs (what the generated code writes for them)."""
import ast
import math
import operator

import numpy as np
from numba.core import ir, types

from ..facts.operators import NODES, UNARY_NODES
from ..generated_source.code import expr, value
from ..typeinfo import is_literal


class Source:
    """Renders IR expressions as trees for one generated module (``names`` gives variable
    and global names). What it returns is a name (a ``str``) or an expression tree, as
    :func:`..generated_source.code.value` takes it."""

    def __init__(self, facts, names):
        self.facts = facts
        self.names = names
        self._static = {}

    def const(self, c):
        if isinstance(c, float):
            if math.isinf(c):
                return expr("math.inf") if c > 0 else expr("-math.inf")
            if math.isnan(c):
                return expr("math.nan")
            return value(c)
        if isinstance(c, (bool, int, str, type(None))):
            return ast.Constant(c) if isinstance(c, str) else value(c)
        if isinstance(c, tuple):
            return ast.Tuple(elts=[value(self.const(v)) for v in c], ctx=ast.Load())
        if isinstance(c, np.generic):
            return expr("{}({})", self.names.gname(type(c)), value(c.item()))
        return self.names.gname(c)

    def static(self, name):
        """The expression of a value known before the function runs, or None (see
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
            v = form[1]
            return self.const(v) if is_literal(v) else self.names.gname(v)
        return ast.Attribute(value=value(self.form(form[1])), attr=form[2], ctx=ast.Load())

    def operand(self, var):
        """An operand where its variable holds it (the forward replay)."""
        if not isinstance(var, (ir.Var, str)):
            return self.const(var)
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
        return value((Ellipsis,)) if index is Ellipsis else self.const(index)

    def _index_var(self, var, r):
        form = self.facts.static_form(var.name) if isinstance(var, ir.Var) else None
        if form is not None and form[0] in ("const", "global") and form[1] is Ellipsis:
            return value((Ellipsis,))
        return r(var)

    def store_index(self, stmt, r):
        """The index of a store ``a[i] = v``."""
        if isinstance(stmt, ir.StaticSetItem):
            if stmt.index_var is not None and stmt.index is not Ellipsis:
                return r(stmt.index_var)
            return self._static_index(stmt.index)
        return self._index_var(stmt.index, r)

    def expr(self, e, r):
        """The tree of an IR expression; ``r`` renders operand variables."""
        op = e.op
        if op in ("binop", "inplace_binop"):
            fn = e.immutable_fn if op == "inplace_binop" else e.fn
            if fn is operator.contains:
                return expr("{} in {}", r(e.rhs), r(e.lhs))
            node = NODES.get(fn)
            if node is None:
                self.facts.error("operator %s" % fn, e.loc)
            left, right = value(r(e.lhs)), value(r(e.rhs))
            if issubclass(node, ast.cmpop):
                return ast.Compare(left=left, ops=[node()], comparators=[right])
            return ast.BinOp(left=left, op=node(), right=right)
        if op == "unary":
            return ast.UnaryOp(op=UNARY_NODES[e.fn](), operand=value(r(e.value)))
        if op == "call":
            if e.vararg is not None or e.varkwarg is not None:
                self.facts.error("calls with *args or **kwargs", e.loc)
            return ast.Call(func=value(r(e.func)), args=[value(r(a)) for a in e.args],
                            keywords=[ast.keyword(arg=k, value=value(r(v)))
                                      for k, v in e.kws])
        if op == "getattr":
            return ast.Attribute(value=value(r(e.value)), attr=e.attr, ctx=ast.Load())
        if op in ("getitem", "static_getitem"):
            return expr("{}[{}]", r(e.value), self.index(e, r))
        if op == "build_tuple":
            return ast.Tuple(elts=[value(r(v)) for v in e.items], ctx=ast.Load())
        if op == "build_list":
            return ast.List(elts=[value(r(v)) for v in e.items], ctx=ast.Load())
        if op == "exhaust_iter" and isinstance(self.facts.ty(e.value), types.Array):
            return expr("unpacked({}, {})", r(e.value), e.count)     # the length check
        if op in ("exhaust_iter", "cast"):
            return r(e.value)
        if op == "build_set":
            return ast.Set(elts=[value(r(v)) for v in e.items])
        if op == "build_map":       # (a Dict read usefully has an adjoint: emit/lists.py)
            return ast.Dict(keys=[value(r(k)) for k, _ in e.items],
                            values=[value(r(v)) for _, v in e.items])
        self.facts.error("the construct %r" % op, e.loc)

    def hoisted(self, h):
        """The expression of a hoisted factor of an early seed (:mod:`..plan.seeds`)."""
        if h[0] == "static":
            return self.static(h[1])
        if h[0] == "var":
            return self.names.n(h[1])
        e, parts = h[1], h[2]
        return self.expr(e, lambda x: self.hoisted(parts[x.name]))

    def seed(self, t):
        """The expression of an early seed tree (:mod:`..plan.seeds`)."""
        kind = t[0]
        if kind == "ret":
            return "_ret_b"
        if kind == "zero":
            return value(0.0)
        if kind == "fused":     # the seed of the enclosing fused loop's sum
            return self.names.seed(t[1])
        if kind == "neg":
            return expr("-{}", self.seed(t[1]))
        if kind == "mul":
            return expr("{} * {}", self.seed(t[1]), self.hoisted(t[2]))
        if kind == "div":
            return expr("{} / {}", self.seed(t[1]), self.hoisted(t[2]))
        terms = [self.seed(x) for x in t[1]]
        out = value(terms[0])
        for x in terms[1:]:
            out = expr("{} + {}", out, x)
        return out
