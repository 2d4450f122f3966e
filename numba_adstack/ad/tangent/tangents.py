"""The tangent of one IR statement, as an expression tree.

Reads the :class:`~..facts.ir_facts.IRFacts` of the function and the set of values that vary with
the differentiated arguments; produces, for each definition ``y = e``, the expression of
the tangent of ``y`` (a tree, a name, or the source an emission producer gives), or None
when it is zero. Scalar and element-wise rules come from the adjoint tables of
:mod:`..rules`: each rule gives ``dy/da_k`` times ``{g}``, so the tangent is the sum over
the operands of the rule with ``{g}`` the operand's tangent (filled by substitution into
the rule's tree).
Functions linear in an array (``np.sum``, ``x.T``, ``x.reshape``) take the tangent in place
of the array; bilinear ones (``np.dot``, ``@``) take it in each operand in turn.
Anything that makes a float or a float array from varied values without a rule here is
refused with the line.
"""
import ast
import builtins
import operator

import numpy as np
from numba.core import ir, types

from ... import intrinsics as I
from ...typing.types import AdStackType
from .. import rules as R
from .. import runtime
from ..generated_source.code import attribute, call, expr, fill, stmt, sum_of, value
from ..facts.rule_binding import bind_expr
from ..rules import vjp_split
from ..rules.array_rules import rule_of
from ..rules.template import lift_rule, template
from ..rules.vjp_overlap import OPERATOR_CODES
from ..capture.call_registry import register_call_rewriter
from ..typeinfo import carries_floats, is_float, is_float_array

#: Functions linear in the arrays at these argument positions (the others are read as
#: they are): the tangent is the function of the tangents.
LINEAR_CALLS = {
    np.sum: (0,), np.mean: (0,), np.cumsum: (0,), np.transpose: (0,), np.ravel: (0,),
    np.copy: (0,), np.reshape: (0,), np.ascontiguousarray: (0,), np.trace: (0,),
    np.diag: (0,), np.concatenate: (0,), np.stack: (0,), np.hstack: (0,),
    np.vstack: (0,), np.fliplr: (0,), np.flipud: (0,), np.diff: (0,), np.array: (0,),
    np.asarray: (0,), tuple: (0,), builtins.sum: (0, 1), np.flip: (0,), np.roll: (0,),
    np.swapaxes: (0,), np.triu: (0,), np.tril: (0,), np.moveaxis: (0,), np.rot90: (0,),
    np.repeat: (0,),
    np.append: (0, 1), vjp_split.split_item: (0,),
    vjp_split.array_split_item: (0,),
    # The helpers of the generated backward (hvp runs forward mode over it): sums and
    # reshapes of adjoint arrays, linear in the adjoints together.
    runtime.acc: (0, 1), runtime.acc_new: (0, 1), runtime.ensure: (0,),
    runtime.fill_as: (0,), runtime.radd: (0, 1),
    runtime.acc_checked: (0, 1), runtime.acc_new_checked: (0, 1),
    runtime.checked_add: (0, 1),
}
#: A helper whose tangent is another's: the tangent of ``acc_new``'s contribution is not
#: a new array, so it is added with ``acc``.
TANGENT_CALLEES = {runtime.acc_new: runtime.acc,
                   runtime.acc_new_checked: runtime.acc_checked}
if hasattr(np, "row_stack"):        # an alias of np.vstack, gone in NumPy 2.5
    LINEAR_CALLS[np.row_stack] = LINEAR_CALLS[np.vstack]
#: Helpers of the array rules linear in the adjoint they take first; their other
#: arguments give only shapes and axes.
_SHAPED_HELPERS = [runtime.RUNTIME[n] for n in (
    "sum_to", "unreduce", "reduced_view", "transpose_vjp", "cumsum_vjp", "trace_vjp",
    "diag_vjp", "concatenate_vjp", "stack_vjp", "diff_vjp", "take_vjp", "like_dtype",
    "hstack_vjp", "vstack_vjp", "column_stack_vjp", "tri_vjp", "append_vjp_arr",
    "append_vjp_values", "broadcast_like",
    # Linear in the adjoint, piecewise constant in the values (where each goes).
    "sort_vjp", "median_vjp")]
LINEAR_CALLS.update({f: (0,) for f in _SHAPED_HELPERS})
#: Helpers linear in each of two arguments apart (the adjoint and the other factor of a
#: product); their third argument gives only a shape.
BILINEAR_HELPERS = {runtime.RUNTIME[n]: pos for n, pos in (
    ("dot_vjp_a", (0, 2)), ("dot_vjp_b", (0, 1)), ("outer_vjp_a", (0, 2)),
    ("outer_vjp_b", (0, 1)))}
#: Helpers adding a bilinear contribution in place into the adjoint array given first
#: (``add_dot_vjp_a(out, g, a, b)``: ``out += dot_vjp_a(g, a, b)``), with the positions
#: of their two factors: the tangent of ``out`` gets the helper of each factor's tangent.
ADDS_INTO = {runtime.RUNTIME[n]: pos for n, pos in (
    ("add_dot_vjp_a", (1, 3)), ("add_dot_vjp_b", (1, 2)))}
#: The adjoints of an in-place operator between views of one array (rules/vjp_overlap.py):
#: called as they are, the sum's linear in its two adjoints (tangent: itself of theirs).
OVERLAP_ADJOINTS = {runtime.RUNTIME[n] for n in ("overlap_sum_vjp", "overlap_update_vjp")}
register_call_rewriter(lambda *args: False,
                       lambda obj: any(obj is f for f in OVERLAP_ADJOINTS))
#: Helpers of the backward adding into an adjoint in place, linear in the arguments at
#: these positions together (``add_adjoint(out, c)``, ``checked_add_at(a, i, c, sign)``).
ADDS_IN_PLACE = {runtime.RUNTIME["add_adjoint"]: (0, 1),
                 runtime.RUNTIME["checked_add_at"]: (0, 2)}
#: The adjoints of np.interp (in a backward that hvp differentiates) -> their tangents,
#: which take the helper's four arguments and then the four tangents.
INTERP_ADJOINTS = {runtime.RUNTIME[n]: runtime.RUNTIME[n + "_jvp"] for n in (
    "interp_vjp_x", "interp_vjp_xp", "interp_vjp_fp")}
#: Linear functions whose other arguments give only a shape.
SHAPE_ARGUMENTS = {runtime.acc, runtime.acc_new, runtime.ensure, runtime.fill_as,
                   runtime.acc_checked, runtime.acc_new_checked, runtime.checked_add,
                   *_SHAPED_HELPERS}
#: Helpers whose result is zeros of their operands' shapes (the adjoint of a list of
#: arrays, made at the start of a sweep): the tangent is another one.
ZEROS_OF_SHAPES = {runtime.RUNTIME["list_zeros_like"]}
#: Stack reads: the tangent is read from the tangent's stack, pushed in step.
STACK_READS = {I.pop, I.top}
#: Stack effects mirrored on the tangent's stack (argument 1: the value pushed).
STACK_EFFECTS = {I.push, I.reserve, I.clear}
LIST_READS = {"pop"}
LIST_EFFECTS = {"append", "clear"}
#: Methods of a list or Dict that change nothing.
CONTAINER_READS = {"count", "index", "copy", "keys", "get", "values", "items"}
#: Array methods linear in the array they are called on.
LINEAR_METHODS = {"sum", "mean", "cumsum", "copy", "reshape", "ravel", "flatten",
                  "transpose", "trace", "conj", "conjugate"}
#: Functions linear in each of their two operands: d(a b) = da b + a db (the guarded
#: product's sum too: its tangent along its first operand is guarded by that tangent, and
#: along its second by the first operand, as zmul's rule has them).
BILINEAR_CALLS = {np.dot, np.outer, np.inner, np.cross, np.matmul, np.kron, np.vdot,
                  runtime.sum_of_product, runtime.sum_of_negated_product,
                  runtime.sum_of_guarded_product}
BILINEAR_METHODS = {"dot"}
#: Reductions that pick one element: the tangent is the tangent's element there.
PICKS = {np.max: np.argmax, np.min: np.argmin, np.amax: np.argmax, np.amin: np.argmin}
PICK_METHODS = {"max": np.argmax, "min": np.argmin}


def has_floats(t):
    """Can a value of type ``t`` carry a tangent (a float, a float array, a tuple of
    them)?"""
    if is_float(t) or is_float_array(t):
        return True
    if isinstance(t, types.BaseTuple):
        return any(has_floats(x) for x in t.types)
    if isinstance(t, AdStackType):       # a stack of floats: its tangent is a stack too
        return is_float(t.dtype) or (isinstance(t.dtype, type) and
                                     issubclass(t.dtype, np.floating))
    if isinstance(t, (types.List, types.ListType)):
        return has_floats(t.dtype)
    if isinstance(t, types.DictType):    # a Dict of floats: its tangent is a Dict too
        return has_floats(t.value_type)
    return False


def _opaque(t):
    """A type that may hold varied floats but has no tangent here (complex numbers,
    records, iterators over arrays): a varied value of it cannot be followed."""
    return carries_floats(t) and not has_floats(t) and not isinstance(
        t, (types.BoundFunction, types.BaseTuple))


def zero_of(t, src):
    """The zero tangent (a tree) of a value of type ``t`` whose expression is ``src``."""
    if is_float(t):
        return value(0.0)
    if is_float_array(t):
        return expr("np.zeros_like({})", src)
    if isinstance(t, types.BaseTuple) and has_floats(t):
        return value(tuple(zero_of(x, expr("{}[{}]", src, k))
                           for k, x in enumerate(t.types)))
    if isinstance(t, types.List) and isinstance(t.dtype, types.Number):
        return expr("np.zeros(len({}))", src)   # np.append(a_list, x): a flat zero
    return value(None)


class Tangents:
    """Tangents of the statements of one function (see the module docstring)."""

    def __init__(self, facts, src, names, varied):
        self.facts = facts
        self.src = src
        self.names = names
        self.varied = varied

    # ------------------------------------------------------------------ names
    def has(self, var):
        """Does this variable carry a (possibly non-zero) tangent?"""
        if not isinstance(var, (ir.Var, str)):
            return False
        name = var if isinstance(var, str) else var.name
        return (name in self.varied and has_floats(self.facts.ty(name))
                and self.src.static(name) is None)

    def dot(self, var):
        """Source name of a variable's tangent."""
        name = var if isinstance(var, str) else var.name
        return self.names.n(name + ".dot")

    def of(self, var):
        """A variable's tangent (its name), a zero (a tree) when it carries none."""
        if self.has(var):
            return self.dot(var)
        name = var if isinstance(var, str) else var.name
        return zero_of(self.facts.ty(name), self.src.operand(var))

    def _error(self, name, what):
        self.facts.error("forward mode: %s" % what, self.facts.def_loc(name))

    # ------------------------------------------------------------------ definitions
    def expr(self, name, e):
        """The tangent of ``name = e`` (after the primal ran): a tree, a name or
        expression source; or None."""
        if isinstance(e, ir.Var):
            return self.of(e)
        if not isinstance(e, ir.Expr):
            return None
        for v in self.facts.expr_inputs(e):
            if v in self.varied and _opaque(self.facts.ty(v)):
                self._error(name, "a varied value of type %s" % self.facts.ty(v))
        op = e.op
        if op in ("cast", "exhaust_iter"):
            return self.of(e.value)
        if op == "build_tuple":
            return value(tuple(self.of(v) for v in e.items))
        if op == "build_list":
            return ast.List(elts=[value(self.of(v)) for v in e.items], ctx=ast.Load())
        if op in ("getitem", "static_getitem"):
            if not self.has(e.value):
                return None
            return expr("{}[{}]", self.dot(e.value), self.src.index(e, self.src.operand))
        if op == "getattr":
            if e.attr == "T" and self.has(e.value):
                return expr("{}.T", self.dot(e.value))
            if e.attr in ("real", "imag"):
                t = self.facts.ty(e.value)
                if not (is_float(t) or is_float_array(t)):
                    self._error(name, "the attribute .%s" % e.attr)
                # Of floats: .real is the value, .imag zeros.
                if e.attr == "real" and self.has(e.value):
                    return self.dot(e.value)
            return None
        if op == "binop" and isinstance(self.facts.ty(name), types.List):
            # [c] * n, L * n: the tangent's items repeated as the items are.
            lst, n = (e.lhs, e.rhs) if isinstance(self.facts.ty(e.lhs), types.List) \
                else (e.rhs, e.lhs)
            if self.has(lst):
                return expr("{} * {}", self.dot(lst), self.src.operand(n))
            # (A number's zero reads no expression; an array item's would, and has none
            # here: it was, and is, a call Numba refuses.)
            return expr("[{}] * len({})", zero_of(self.facts.ty(name).dtype, None),
                        self.names.n(name))
        if op == "binop":
            return self.operator(name, e.fn, [e.lhs, e.rhs], is_binop=True)
        if op == "inplace_binop":
            return self.operator(name, e.immutable_fn, [e.lhs, e.rhs], is_binop=True)
        if op == "unary":
            return self.operator(name, e.fn, [e.value], is_unary=True)
        if op == "call":
            return self.call(name, e)
        self._error(name, "the construct %r on varied values" % op)

    def operator(self, name, fn, operands, is_binop=False, is_unary=False):
        if fn is operator.matmul:
            # np.dot is @ for vectors and matrices, and the reverse rewrite (hvp
            # differentiates this code) has its rules.
            small = all(self.facts.ty(v).ndim <= 2 for v in operands)
            return self.bilinear(name, "np.dot({0}, {1})" if small else "{0} @ {1}",
                                 operands)
        table = R.BINOP_RULES if is_binop else R.UNARY_RULES
        rule = table.get(fn)
        if rule is None:
            self._error(name, "the operator %s" % getattr(fn, "__name__", fn))
        return self.apply(name, fn, rule, operands)

    def apply(self, name, fn, rule, operands):
        """Sum over the varied operands of the rule with ``{g}`` their tangent."""
        facts = self.facts
        y_ty = facts.ty(name)
        rule = R.specialise(fn, [self._literal(v) for v in operands]) or rule
        if isinstance(y_ty, types.Array):
            rule = lift_rule(rule)
            if rule is None:
                self._error(name, "%s on arrays" % getattr(fn, "__name__", fn))
        terms = []
        for k, v in enumerate(operands):
            if not self.has(v):
                continue
            if k >= len(rule) or rule[k] is None:
                missing = R.OPERANDS_WITHOUT_RULE.get(fn, ())
                if k in missing:
                    self._error(name, "%s with a varied argument %d (%s), in which it has "
                                "no derivative" % (getattr(fn, "__name__", fn), k + 1,
                                                   missing[k]))
                if is_float(facts.ty(v)) or is_float_array(facts.ty(v)):
                    continue        # no derivative in this operand (floor, //)
                self._error(name, "%s of a varied %s" % (fn, facts.ty(v)))
            terms.append(self.fill(rule[k], name, operands, self.dot(v)))
        if not terms:
            return None
        out = sum_of(terms)
        if isinstance(y_ty, types.Array) and not any(
                self.has(v) and isinstance(facts.ty(v), types.Array)
                and facts.ty(v).ndim == y_ty.ndim for v in operands):
            # The varied operands are smaller than the result: broadcast to its shape.
            out = expr("np.zeros_like({}) + {}", self.names.n(name), out)
        return out

    def fill(self, tpl, name, operands, g):
        """The tree of rule template ``tpl`` with ``{g}`` the tangent ``g``, ``{y}`` the
        result and ``{0}``, ``{1}``... the operands."""
        scalar = not isinstance(self.facts.ty(name), types.Array)
        # A 0-d array operand of a scalar rule (np.sin of one is a float) is read as its
        # element, which math.* takes.
        values = {str(k): expr("{}[()]", self.src.operand(v))
                  if scalar and _zero_d(self.facts, v) else self.src.operand(v)
                  for k, v in enumerate(operands)}
        values.update(g=g, y=self.names.n(name))
        return fill(template(tpl).tree, values)

    def _literal(self, var):
        if not isinstance(var, ir.Var):
            return None
        value = self.facts.resolve_global(var)
        if isinstance(value, (int, float, np.integer, np.floating)) and \
                not isinstance(value, bool):
            return float(value)
        return None

    def bilinear(self, name, pattern, operands, **kw):
        """The sum over the varied operands of expression template ``pattern`` (``{0}``,
        ``{1}``: the operands; ``kw``: its other placeholders) with that operand's
        tangent."""
        terms = []
        for k, v in enumerate(operands):
            if self.has(v):
                ops = [self.src.operand(x) for x in operands]
                ops[k] = self.dot(v)
                terms.append(expr(pattern, *ops, **kw))
        return sum_of(terms) if terms else None

    # ------------------------------------------------------------------ calls
    def call(self, name, e):
        facts = self.facts
        fn = facts.resolve_global(e.func)
        args = list(e.args)
        kws = list(e.kws)
        varied_args = [a for a in args + [v for _, v in kws] if self.has(a)]
        if fn is None:
            return self.method(name, e, varied_args)
        if fn is not None and fn is getattr(facts.target, "atomic_add", None):
            if facts.uses.get(name):
                self._error(name, "the value an atomic add returns")
            return None             # the add into the tangent is its effect
        if fn in STACK_READS and self.has(args[0]):
            return expr("{}({})", self.names.gname(fn), self.dot(args[0]))
        if not varied_args or fn in ZEROS_OF_SHAPES:
            return self.constructed(name, e)
        if fn in R.ARRAY_CONSTRUCTORS:
            return self.fill_call(name, fn, e)
        if fn in LINEAR_CALLS:
            return self.linear(name, fn, e, LINEAR_CALLS[fn],
                               self.names.gname(TANGENT_CALLEES.get(fn, fn)))
        if fn in BILINEAR_HELPERS and len(args) == 3 and not kws:
            return self.bilinear_helper(fn, args, BILINEAR_HELPERS[fn])
        if fn in BILINEAR_CALLS and len(args) == 2 and not kws:
            return self.bilinear(name, "{f}({0}, {1})", args, f=self.names.gname(fn))
        if fn in PICKS and len(args) == 1 and not kws \
                and isinstance(facts.ty(args[0]), types.Array):
            return self.pick(args[0], PICKS[fn])
        rule = rule_of(fn)
        arrays = [a for a in args + [v for _, v in kws]
                  if isinstance(facts.ty(a), types.Array)]
        if rule is not None and rule.jvps and (arrays or fn not in R.CALL_RULES):
            return self.rule_jvp(name, fn, e)
        if fn in INTERP_ADJOINTS and len(args) == 4 and not kws:
            return call(self.names.gname(INTERP_ADJOINTS[fn]),
                         [self.src.operand(a) for a in args] + [self.of(a) for a in args])
        if fn in R.NON_DIFFERENTIABLE_CALLS or not has_floats(facts.ty(name)):
            return None
        rule = R.CALL_RULES.get(fn)
        # (A float of arrays: the scalar rule, of one float, does not apply; a 0-d array
        # is one float.)
        if rule is None or kws or (is_float(facts.ty(name)) and any(
                facts.ty(a).ndim > 0 for a in arrays)):
            self._error(name, "the call %s on varied values (no rule)"
                        % getattr(fn, "__name__", fn))
        return self.apply(name, fn, rule, args)

    def rule_jvp(self, name, fn, e):
        """The tangent of a call by its array rule's ``jvps`` (rules/array_rules.py): the
        sum of the terms of its varied operands."""
        bound = bind_expr(self.facts, e)
        if bound is None:
            self._error(name, "%s with these arguments" % getattr(fn, "__name__", fn))
        values = {"y": self.names.n(name)}
        for p, a in bound.args.items():
            if isinstance(a, tuple):
                a = tuple(self.src.operand(bound.operands[k]) for k in a)
            # (a default is the text of a constant, written in the rule: its tree)
            values[p] = self.src.operand(bound.operands[a]) if isinstance(a, int) else \
                template(a).tree if isinstance(a, str) else a
        terms, ndims = [], []
        for p, a in bound.args.items():
            v = bound.operands[a] if isinstance(a, int) else None
            if v is None or not self.has(v):
                continue
            term = bound.rule.jvps.get(p)
            if term is None:
                self._error(name, "%s of a varied %s" % (getattr(fn, "__name__", fn), p))
            terms.append(fill(template(term).tree, dict(values, d=self.dot(v))))
            ndims.append(getattr(self.facts.ty(v), "ndim", 0))
        if not terms:
            return None
        out = sum_of(terms)
        y_ty = self.facts.ty(name)
        if bound.rule.elementwise and isinstance(y_ty, types.Array) and \
                y_ty.ndim not in ndims:
            # The varied operands are smaller than the result: broadcast to its shape.
            out = expr("np.zeros_like({}) + {}", self.names.n(name), out)
        return out

    def constructed(self, name, e):
        """A call none of whose operands varies: a fresh array gets a zero tangent when a
        varied value is later stored into it, a fresh stack or list another one."""
        if not self.has(name):
            return None
        t = self.facts.ty(name)
        fn = self.facts.resolve_global(e.func)
        if isinstance(t, (AdStackType, types.List, types.ListType, types.DictType)) or \
                self.facts.target.is_thread_local_constructor(fn):
            return self.src.expr(e, self.src.operand)   # another one (local memory: as is)
        return zero_of(t, self.names.n(name))

    def effect(self, e):
        """The tangent's twin of a statement run for its effect (a push onto a varied
        stack, an append to a varied list): a list of statement trees, or None."""
        if not (isinstance(e, ir.Expr) and e.op == "call"):
            return None
        fn = self.facts.resolve_global(e.func)
        if fn is not None and fn is getattr(self.facts.target, "atomic_add", None) and \
                self.has(e.args[0]):
            a, i, v = e.args
            return [stmt("{}({}, {}, {})", self.src.operand(e.func), self.dot(a),
                         self.src.operand(i), self.of(v))]
        if fn in OVERLAP_ADJOINTS and (self.has(e.args[0]) or self.has(e.args[1])):
            # (forward over reverse: the backward of ``x op= y`` with y a view of x's array)
            if fn is not runtime.RUNTIME["overlap_sum_vjp"]:
                self.facts.error("second-order derivatives through an in-place operator "
                                 "(*=, /=, **=, %=, //=) between two views of one array "
                                 "(write it as `x[...] = x * y`)", e.loc)
            return [stmt("{}({}, {}, {})", self.src.operand(e.func), self.of(e.args[0]),
                         self.of(e.args[1]), self.src.operand(e.args[2]))]
        if fn in ADDS_IN_PLACE and any(self.has(e.args[k]) for k in ADDS_IN_PLACE[fn]):
            # ``out += c`` into an adjoint (the backward's): the same of their tangents
            ops = [self.of(a) if k in ADDS_IN_PLACE[fn] else self.src.operand(a)
                   for k, a in enumerate(e.args)]
            return [stmt("{}", call(self.names.gname(fn), ops))]
        if fn in ADDS_INTO and self.has(e.args[0]):
            terms = self.helper_terms(fn, e.args, ADDS_INTO[fn], out=self.dot(e.args[0]))
            return [stmt("{}", t) for t in terms] if terms else None
        if fn in STACK_EFFECTS and self.has(e.args[0]):
            rest = [self.of(a) if k == 0 and fn is I.push else self.src.operand(a)
                    for k, a in enumerate(e.args[1:])]
            return [stmt("{}", call(self.names.gname(fn), [self.dot(e.args[0])] + rest))]
        f = self.facts.def_expr(e.func.name)
        if fn is None and isinstance(f, ir.Expr) and f.op == "getattr" and \
                f.attr in LIST_EFFECTS and self.has(f.value):
            return [ast.Expr(value=call(attribute(self.dot(f.value), f.attr),
                                        [self.of(a) for a in e.args]))]
        if fn is None and isinstance(f, ir.Expr) and f.op == "getattr" and \
                self.has(f.value) and f.attr not in CONTAINER_READS | LIST_READS and \
                isinstance(self.facts.ty(f.value), (types.List, types.ListType,
                                                     types.DictType)):
            self.facts.error("forward mode: .%s on a %s that has a tangent (append, stores "
                             "and reads are followed; keep the values in an array for the "
                             "rest)" % (f.attr, self.facts.ty(f.value)), e.loc)
        return None

    def fill_call(self, name, fn, e):
        k = R.FILL_ARGUMENT.get(fn)
        if k is not None and len(e.args) > k and self.has(e.args[k]):
            return expr("np.full_like({}, {})", self.names.n(name), self.dot(e.args[k]))
        return expr("np.zeros_like({})", self.names.n(name))

    def bilinear_helper(self, fn, args, positions):
        """The sum over the varied factors of the helper with that factor's tangent."""
        terms = self.helper_terms(fn, args, positions)
        return sum_of(terms) if terms else None

    def helper_terms(self, fn, args, positions, out=None):
        """The calls of the helper with one varied factor's tangent each (``out``: the
        tangent array an in-place helper adds into, its first argument)."""
        terms = []
        for k in positions:
            if self.has(args[k]):
                ops = [self.of(a) if j == k else self.src.operand(a)
                       for j, a in enumerate(args)]
                if out is not None:
                    ops[0] = out
                terms.append(call(self.names.gname(fn), ops))
        return terms

    def linear(self, name, fn, e, positions, callee):
        for k, a in enumerate(e.args):
            if k not in positions and self.has(a) and fn not in SHAPE_ARGUMENTS:
                self._error(name, "%s with a varied argument %d" % (fn.__name__, k))
        if any(self.has(v) for _, v in e.kws):
            self._error(name, "%s with a varied keyword argument" % fn.__name__)
        args = [self.of(a) if k in positions else self.src.operand(a)
                for k, a in enumerate(e.args)]
        return call(callee, args, [(k, self.src.operand(v)) for k, v in e.kws])

    def method(self, name, e, varied_args):
        """``x.sum()``, ``x.reshape(...)``, ``x.dot(y)``: the bound method's object is the
        first operand."""
        facts = self.facts
        f = facts.def_expr(e.func.name)
        if not (isinstance(f, ir.Expr) and f.op == "getattr"):
            if self.has(name) or varied_args:
                self._error(name, "a call of %s" % facts.ty(e.func))
            return None
        obj = f.value
        if not (self.has(obj) or varied_args):
            return self.constructed(name, e)
        if not has_floats(facts.ty(name)):
            return None
        if f.attr in LIST_READS and isinstance(facts.ty(obj), types.ListType):
            return call(attribute(self.dot(obj), f.attr))
        if f.attr in LINEAR_METHODS and not varied_args:
            return call(attribute(self.dot(obj), f.attr),
                        [self.src.operand(a) for a in e.args],
                        [(k, self.src.operand(v)) for k, v in e.kws])
        if f.attr in PICK_METHODS and not e.args and not e.kws:
            return self.pick(obj, PICK_METHODS[f.attr])
        if f.attr in BILINEAR_METHODS and len(e.args) == 1 and not e.kws:
            return self.bilinear(name, "np.dot({0}, {1})", [obj, e.args[0]])
        rule = rule_of(f.attr) if isinstance(facts.ty(obj), types.Array) else None
        if rule is not None and rule.jvps:
            return self.rule_jvp(name, f.attr, e)
        self._error(name, "the method .%s on varied values" % f.attr)

    def pick(self, x, arg_fn):
        """``np.max(x)``: the tangent of the element chosen (the first one on ties)."""
        return expr("np.ravel({})[{}({})]", self.dot(x), self.names.gname(arg_fn),
                    self.src.operand(x))

    # ------------------------------------------------------------------ in-place arrays
    def inplace_array(self, name, e):
        """``x op= v`` on an array: ``(before, after)`` statements (trees), the tangent
        update made in place in the tangent of ``x`` (which views the same memory as
        ``x``'s). ``before`` runs ahead of the primal (it reads the old ``x``)."""
        fn = e.immutable_fn
        x, v = e.lhs, e.rhs
        xd = self.dot(x)
        if fn in (operator.add, operator.sub):
            if not self.has(v):
                return [], []
            tpl = "{} += {}" if fn is operator.add else "{} -= {}"
            return [], [stmt(tpl, xd, self.dot(v))]
        if self.has(v) and is_float_array(self.facts.ty(v)) and \
                self.facts.array_root(v.name) == self.facts.array_root(x.name):
            # v views x's array: Numba's element loop may read what it wrote
            # (rules/vjp_overlap.py), and the tangents share memory as x and v do.
            op = OPERATOR_CODES.get(fn.__name__)
            if op is None:
                self._error(name, "the in-place operator %s= between two views of one "
                            "array" % fn.__name__)
            return [stmt("overlap_update_jvp({}, {}, {}, {}, {})", xd, self.dot(v),
                         self.src.operand(x), self.src.operand(v), op)], []
        rule = lift_rule(R.BINOP_RULES.get(fn, (None,)))
        if rule is None or any(t is not None and "y" in t.reads for t in rule):
            self._error(name, "the in-place operator %s= on arrays" % fn.__name__)
        terms = []
        for k, w in enumerate((x, v)):
            if self.has(w) and rule[k] is not None:
                terms.append(self.fill(rule[k], name, [x, v], self.dot(w)))
        tmp = self.names.fresh("tin")
        before = [stmt("{} = {}", tmp, sum_of(terms) if terms else 0.0)]
        return before, [stmt("{}[...] = {}", xd, tmp)]


def _zero_d(facts, v):
    return isinstance(v, ir.Var) and isinstance(facts.ty(v), types.Array) \
        and facts.ty(v).ndim == 0
