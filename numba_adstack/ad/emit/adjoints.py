"""Adjoint contributions: what reversing one definition adds into which adjoint.

For ``y = f(a, b)`` the rule of ``f`` (:mod:`..rules`) gives each operand's contribution in
terms of ``y``'s adjoint and primal values; :meth:`Adjoints.ref` renders those primal values
as the sweep finds them (in place, recomputed, or restored from a stack); under a draft
plan it leaves them as :class:`.reads.Read` nodes, from which the plan is settled.
"""
from contextlib import contextmanager

from numba.core import ir, types

from .. import rules as R
from ..facts.checks import array_expr_message
from ..typeinfo import has_scalar_adjoint, is_complex, is_float, is_float_array
from ..facts.operators import OPS
from ..plan.reciprocals import copy_root
from ..facts.rule_binding import bind_expr
from ..rules.template import by_reciprocal, is_adjoint, shape_only, template, with_factor
from ..rules.vjp_overlap import OVERLAP_RULES
from . import lists
from .lowering import Choice
from .reads import PrimalRead
from ..plan.stacks import partial_of
from ..generated_source.code import expr, value
from .contributions import (Add, Assigned, Atomic, Guarded, Into, Scaled, Term,
                            ThroughView, ToValue)

_CONTAINER_READ = ("reading floats out of a %s that differentiable values were put into; "
                   "keep them in an array (np.empty(n), then a[k] = v) or a tuple")


class _Chosen:
    """The term of a rule application whose partial the plan may keep (a Term's
    :meth:`tree`)."""

    def __init__(self, key, partial, rule):
        self.key, self.partial, self.rule = key, partial, rule

    def tree(self):
        return Choice(self.key, self.partial.tree(), self.rule.tree())


class Adjoints:
    def __init__(self, cx):
        self.cx = cx
        self.facts = cx.facts
        self.names = cx.names
        self.src = cx.src
        self._ctx = None      # the rule operand being rendered: (application, slot)
        self._app = None      # the rule application being rendered (its result's name)
        self._reciprocal = False  # it is written with a kept reciprocal
        self.made = set()     # computed arrays whose adjoint the next lines write into

    # ------------------------------------------------------------------ primal values
    def ref(self, var, shape=False, restores=False, shared=None):
        """A primal value (a name or an expression tree) at the current point of the
        reverse sweep; ``shape``: read only for its shape (see :meth:`ref_shape`). Under a
        draft plan, a :class:`.reads.Read` node, resolved once the plan is settled
        (``restores``: read as an input a loop restores, ``shared``: the parallel loop
        whose iteration would then assign a value from before it, see
        :meth:`.fused.Fused.restore_inputs`)."""
        if not isinstance(var, (ir.Var, str)):
            return self.src.const(var)
        name = var if isinstance(var, str) else var.name
        static = self.src.static(name)
        if static is not None:
            return static
        if self.cx.draft:
            return self.cx.read_node(PrimalRead(name, self._ctx, shape, self._app,
                                                self._reciprocal, restores, shared))
        plan = self.cx.plan
        if plan.sites.once(name):
            return self.names.n(name)       # defined once per reversal unit: still there
        if plan.recompute.is_remat(name):
            return self.remat(name)
        if name not in plan.needed:
            # Overwritten by the time the sweep reads it, and nothing keeps it: the value
            # read would be a later one. The plan must have seen this read.
            raise AssertionError("internal: the sweep reads %r, which the plan does not "
                                 "keep" % name)
        return self.names.n(name)

    def ref_shape(self, var):
        """An array read only for its shape (the operand of ``sum_to``,
        ``ensure`` or ``acc`` that gives the shape): its shape where the plan keeps that
        instead of the array (:mod:`..plan.shape_reads`), else the array."""
        name = var if isinstance(var, str) else var.name
        extents = self.cx.plan.kept_shapes.get(name)
        ctx, self._ctx = self._ctx, None    # (a shape is not changed by later writes)
        try:
            if extents is None:
                return self.ref(var, shape=True)
            return tuple(value(self.ref(d)) for d in extents)
        finally:
            self._ctx = ctx

    @staticmethod
    def shape_operands(templates):
        """The operand positions that ``templates`` (of one rule) read at most for their
        shape (:func:`..rules.template.shape_only`)."""
        values, shapes = set(), set()
        for t in templates:
            t = template(t)
            shape = {int(f) for f in shape_only(t) if f.isdigit()}
            values |= {int(f) for f in t.reads if f.isdigit()} - shape
            shapes |= shape
        return shapes - values

    def remat(self, name):
        e = self.facts.def_expr(name)
        if isinstance(e, ir.Const):
            return self.src.const(e.value)
        if isinstance(e, (ir.Global, ir.FreeVar)):
            return self.src.form(("global", e.value))
        if isinstance(e, ir.Var):
            return self.ref(e)
        return self.src.expr(e, self.ref)

    def ref_bar(self, var):
        """The adjoint array of a float array variable (a name, or a view of one)."""
        facts = self.facts
        name = var if isinstance(var, str) else var.name
        alias = facts.phi_alias(name)
        if alias is not None:           # a phi that always names one array: its adjoint
            return self.ref_bar(alias)
        e = facts.def_expr(name)
        if isinstance(e, ir.Var):
            return self.ref_bar(e)
        if isinstance(e, ir.Expr) and e.op == "cast":
            return self.ref_bar(e.value)
        if isinstance(e, ir.Expr) and e.op == "getattr" and e.attr == "T":
            return expr("{}.T", self.ref_bar(e.value))
        if isinstance(e, ir.Expr) and e.op == "inplace_binop" \
                and facts.array_root(name) != name:
            return self.ref_bar(e.lhs)      # written into the memory it names
        if isinstance(e, ir.Expr) and e.op in ("getitem", "static_getitem"):
            item = facts.tuple_item(e)
            if item is not None:
                return self.ref_bar(item)
            if facts.array_root(name) != name:     # a view (x[idx] is a copy: its own)
                return expr("{}[{}]", self.ref_bar(e.value), self.src.index(e, self.ref))
        if isinstance(e, ir.Arg) or name in self.cx.activity.array_adjoints:
            return self.names.bar(name)
        if name in self.cx.activity.array_values:
            # Written into in place: it must exist first (Reverse.make_adjoints).
            self.made.add(name)
            return self.names.bar(name)
        if facts.computed_array(name):
            facts.error(array_expr_message(facts, name), facts.def_loc(name))
        facts.error("the array %r is produced by an expression that is not differentiated "
                    "(%s); build arrays with np.zeros/np.empty/np.ones and write them with "
                    "loops" % (name, e), facts.def_loc(name))

    # ------------------------------------------------------------------ array definitions
    def array_definition(self, L, name, e):
        """The adjoint of a fresh array flows into its fill value or the copied array."""
        facts, act = self.facts, self.cx.activity
        fill = facts.fill_value(e)
        if fill is not None and fill.name in act.useful:
            L.code("{} += np.sum({})", self.names.bar(fill), self.ref_bar(name))
        src = facts.array_copy_source(e)
        if src is not None and src.name in act.varied and \
                facts.array_root(name) in act.useful_roots:
            tmp = self.names.fresh("view")
            view = self.ref_bar(src)
            # A view of a computed array's adjoint (h_bar[:, :2] for h[:, :2].copy()):
            # that adjoint must exist before the add, as Reverse.make_adjoints does.
            for v in sorted(self.made):
                L.code("{0} = ensure({0}, {1})", self.names.bar(v), self.ref_shape(v))
            self.made.clear()
            L.code("{} = {}", tmp, view)
            L.code("{} += {}", tmp, self.names.bar(name))

    # ------------------------------------------------------------------ contributions
    def contributions(self, name, e):
        """The contributions of ``name = e`` to the adjoints of what it reads (records of
        :mod:`.contributions`, written by ``Reverse.accumulate``)."""
        facts = self.facts
        g = self.names.bar(name)
        if is_float_array(facts.ty(name)):
            return self._array_def(name, e, g)
        if isinstance(e, ir.Var):
            return self._plain(e, g)
        if isinstance(e, (ir.Const, ir.Global, ir.FreeVar, ir.Arg)):
            return []
        if e.op == "cast":
            return self._plain(e.value, g)
        if e.op == "binop" and facts.reduction(e) is not None:
            return self._reduction(name, e, g)          # u @ v of two vectors
        if self._complex(name, e):
            found = R.complex_rule(facts, e)
            if found is None:
                facts.error("%s on complex numbers" % e, e.loc)     # (the checks refuse it)
            rule, operands, _ = found       # (no literal-power forms: they are real)
            return self.apply(name, rule, operands)
        if e.op in ("binop", "inplace_binop"):
            fn = e.fn if e.op == "binop" else R.INPLACE_TO_BINOP.get(e.fn, e.immutable_fn)
            rule = R.BINOP_RULES.get(fn)
            if rule is None:
                facts.error("the operator %s on floats" % OPS.get(fn, fn), e.loc)
            return self.apply(name, rule, [e.lhs, e.rhs], fn=fn)
        if e.op == "unary":
            rule = R.UNARY_RULES.get(e.fn)
            if rule is None:
                facts.error("the unary operator %s on floats" % e.fn, e.loc)
            return self.apply(name, rule, [e.value])
        if e.op == "call" and facts.reduction(e) is not None:
            return self._reduction(name, e, g)
        if e.op == "call":
            return self._call(name, e)
        if e.op in ("getitem", "static_getitem"):
            return self._read(name, e, g)
        if e.op == "exhaust_iter":
            return []
        if e.op == "pair_first":
            return self._array_loop_value(e, g)
        if e.op == "getattr" and is_float(facts.ty(e.value)) and e.attr in ("real", "imag"):
            return self._plain(e.value, g) if e.attr == "real" else []    # of a float
        if e.op == "getattr":
            facts.error("the attribute `.%s` of %s" % (e.attr, facts.ty(e.value)), e.loc)
        facts.error("the expression %r producing a float" % e.op, e.loc)

    def _complex(self, name, e):
        """Does ``name = e`` read or make a complex number (rules/complex_rules.py)?"""
        facts = self.facts
        return is_complex(facts.ty(name)) or any(
            is_complex(facts.ty(v)) for v in facts.adjoint_operands(name))

    def _array_def(self, name, e, g):
        """Contributions of a computed array ``name = e`` (its adjoint is ``g``)."""
        facts = self.facts
        if isinstance(e, ir.Expr) and e.op == "getattr" and e.attr == "T":
            return self.array_target(e.value, expr("{}.T", g), shaped=True)
        if isinstance(e, ir.Expr) and e.op in ("getitem", "static_getitem") and \
                lists.holds_adjoint(self.cx, e.value):
            return lists.read(self.cx, e, g, name)  # an array read out of a list
        found = facts.array_rule(e)
        if found is None:
            facts.error(array_expr_message(facts, name), e.loc)
        rule, operands, shaped = found
        arrays = [op for op in operands if isinstance(facts.ty(op), types.Array)]
        # One array operand (the others scalars): its contribution has its shape already.
        shaped = shaped or len(arrays) == 1
        terms = self.terms(name, rule, operands)
        intos = self._in_place(name, e, rule, operands, len(terms))
        out = []
        for (op, term), into in zip(terms, intos):
            src = term.tree()
            items = facts.tuple_arrays(op)
            if items is not None:       # a tuple of arrays gets a tuple of contributions
                for k, item in enumerate(items):
                    if item is not None:
                        out.extend(self.array_target(item, expr("{}[{}]", src, k), True))
            elif is_float(facts.ty(op)):
                out.append(Add(self.names.bar(op), expr("np.sum({})", src)))
            else:
                out.extend(self.array_target(op, src, shaped, into))
        return out

    def _in_place(self, name, e, rule, operands, count):
        """The rule's forms adding each of the ``count`` contributions in place into an
        existing adjoint (terms with ``{out}`` open), in the order ``terms`` gives them;
        Nones when the rule has none for every operand that takes one."""
        bound = bind_expr(self.facts, e)
        into = bound.templates(into=True) if bound is not None else None
        if into is None or any((t is None) != (r is None) for t, r in zip(into, rule)):
            return [None] * count
        return [term for _, term in self.terms(name, into, operands)]

    def array_target(self, op, src, shaped=False, into=None):
        """A contribution ``src`` to the adjoint of the array ``op``: into its own adjoint
        (:class:`.ToValue`) or, for arguments, fresh arrays and their views, in place into
        the adjoint array they share (:class:`.ThroughView`); summed back to ``op``'s
        shape unless the rule gives that shape already (``shaped``). ``into``: the rule's
        form adding it in place into an existing adjoint (a :class:`.Term` with ``{out}``
        open), used wherever there is one (:class:`.Into`, or :class:`.ToValue` with it)."""
        if not isinstance(op, ir.Var) or op.name not in self.cx.activity.useful:
            return []
        while isinstance(self.facts.def_expr(op.name), ir.Var):     # an alias: its value
            op = self.facts.def_expr(op.name)
        if self._element_seeded(op):
            return []       # its elements' adjoints were seeded before the loop filled it
        if not shaped:
            src, into = expr("sum_to({}, {})", src, self.ref_shape(op)), None
        if op.name in self.cx.activity.array_values:
            return [ToValue(op.name, src, into)]
        self.cx.parallel.note_adjoint_write(op, None)
        if into is not None:
            return [Into(self.ref_bar(op), into)]
        return [ThroughView(self.ref_bar(op), src)]

    def inplace_store(self, name, e):
        """``x op= c`` into memory given or made (its adjoint array is shared by its
        views): ``c`` gets its contribution from that adjoint, which then becomes the
        adjoint of what ``x`` held before (unchanged for ``+=`` and ``-=``)."""
        facts = self.facts
        rule, operands, _ = facts.array_rule(e)
        g = self.ref_bar(name)
        shared = self._shared_operand(name, e)
        if shared is not None:
            return shared
        out = []
        if rule[0] is None:
            # No derivative in the old value (``x //= y``): what x held gets none.
            out.append(Scaled(g, Term.of("0.0")))
        for op, term in self.terms(name, rule, operands, g=g):
            if op is operands[0]:
                if not is_adjoint(rule[0]):
                    out.append(Scaled(g, term))
            elif is_float(facts.ty(op)):
                out.append(Add(self.names.bar(op), expr("np.sum({})", term.tree())))
            else:
                out.extend(self.array_target(op, term.tree()))
        # The operand's contribution reads the adjoint before it is rescaled.
        return sorted(out, key=lambda c: isinstance(c, Scaled))

    def _shared_operand(self, name, e):
        """``x op= y`` where ``y`` is a view of the array ``x`` is a view of: Numba's loop
        may read what it wrote, and the two adjoint views share memory as ``x`` and ``y``
        do; the loop reversed element by element (rules/vjp_overlap.py) is the adjoint.
        None where ``y`` is other memory."""
        facts = self.facts
        y = e.rhs
        if not (is_float_array(facts.ty(y)) and y.name in self.cx.activity.useful) or \
                facts.array_root(y.name) != facts.array_root(name) or \
                self._element_seeded(y):
            return None
        fn = R.INPLACE_TO_BINOP.get(e.fn, e.immutable_fn)
        template = OVERLAP_RULES.get(fn.__name__)
        if template is None:
            facts.error("the in-place operator %s between two views of one array"
                        % OPS.get(fn, fn), e.loc)
        rule = (None, template)
        g = self.ref_bar(name)
        return [Into(self.ref_bar(y), term)
                for _, term in self.terms(name, rule, [e.lhs, y], g=g)]

    def _plain(self, var, g):
        if isinstance(var, ir.Var) and var.name in self.cx.activity.useful \
                and has_scalar_adjoint(self.facts.ty(var)):
            return [Add(self.names.bar(var), g)]
        return []

    def apply(self, name, rule, operands, fn=None):
        """Contributions of the float ``name = f(*operands)`` by ``rule`` (one template
        per operand) to the operands' adjoints."""
        # A real operand of a complex result takes the real part of its contribution.
        real = is_complex(self.facts.ty(name))
        return [Add(self.names.bar(op), expr("{}.real", term.tree())
                    if real and is_float(self.facts.ty(op)) else term.tree())
                for op, term in self.terms(name, rule, operands, fn=fn)]

    def terms(self, name, rule, operands, g=None, fn=None):
        """``(operand, Term)`` for each operand of ``name = f(*operands)`` that takes a
        contribution by ``rule`` (one template per operand); ``g``: the expression of
        ``name``'s adjoint when it is not its own variable."""
        names = self.names
        array = is_float_array(self.facts.ty(name))
        # Literal operands may have a rule of their own (``x ** 6``: no pow).
        rule = R.specialise(fn, [self._literal(op) for op in operands]) or rule
        active = [r is not None and self._useful_operand(op)
                  for r, op in zip(rule, operands)]
        if not any(active):
            return []
        g = names.bar(name) if g is None else g
        with self._application(name):
            partials = self.cx.plan.partials
            if name in partials:
                return [(operands[0], Term.of(with_factor(rule[0], "p"), g=g,
                                              p=self.ref(partials[name][0])))]
            copies = self.cx.plan.snapshots.get(name, {})
            fmt = {"g": g}
            if not copies:
                rule = self._by_reciprocals(name, rule, operands, fmt)
            used = R.needed_operands([r for r, a in zip(rule, active) if a])
            shaped = self.shape_operands([r for r, a in zip(rule, active) if a])
            self._ctx = (name, "y")
            fmt["y"] = self.ref(copies.get(name, name)) if "y" in used else ""
            pos = []
            for k, op in enumerate(operands):
                self._ctx = (name, k)
                read = copies.get(op.name, op) if isinstance(op, ir.Var) else op
                if k in shaped and isinstance(op, ir.Var):
                    pos.append(self.ref_shape(op))
                    continue
                pos.append(self._scalar_ref(read, op, array) if k in used else "")
            out = [(op, Term.of(r, pos, **fmt)) for r, op, a in zip(rule, operands, active)
                   if a]
            if ("partial", name) in self.cx.variants and len(out) == 1:
                # The plan may keep the partial instead (lowering.Choice).
                pname = partial_of(self.facts, name)[0]
                kept = self.cx.read_node(PrimalRead(pname, None, False, name,
                                                    kept_partial=True))
                out = [(out[0][0], _Chosen(name, Term.of(with_factor(rule[0], "p"), g=g,
                                                          p=kept), out[0][1]))]
        return out

    @contextmanager
    def _application(self, name):
        """While the operands of the rule of ``name``'s definition are read: reads are
        tagged with it (:class:`.reads.PrimalRead`)."""
        self._app, self._reciprocal = name, False
        try:
            yield
        finally:
            self._app, self._reciprocal, self._ctx = None, False, None

    def _scalar_ref(self, read, op, array):
        """An operand of a scalar rule: a 0-d array (``np.sin`` of one is a
        float) is read as its element, which ``math.*`` takes."""
        src = self.ref(read)
        if not array and isinstance(op, ir.Var) and isinstance(self.facts.ty(op), types.Array) \
                and self.facts.ty(op).ndim == 0:
            return expr("{}[()]", src)
        return src

    def _by_reciprocals(self, name, rule, operands, fmt):
        """``rule`` with each ``(c / {y})`` or ``(c / {k})`` made ``(c * q)`` where the
        primal computed ``q = 1. / v`` of that value (:mod:`..plan.reciprocals`)."""
        recip = self.cx.plan.reciprocals
        if not recip:
            return rule
        slots = [("y", name)] + [(str(k), op.name) for k, op in enumerate(operands)
                                 if isinstance(op, ir.Var)]
        for slot, var in slots:
            q = recip.get(copy_root(self.facts, var))
            if q is None:
                continue
            made = [None if r is None else by_reciprocal(r, slot, "recip_" + slot)
                    for r in rule]
            if not any(made):
                continue
            self._ctx = (name, slot if slot == "y" else int(slot))
            self._reciprocal = True
            fmt["recip_" + slot] = self.ref(q)
            self._ctx = None
            rule = [m or r for m, r in zip(made, rule)]
        return rule

    def _useful_operand(self, op):
        """Does ``op`` (a float, a float array, a tuple of arrays built in the function)
        take an adjoint?"""
        if not isinstance(op, ir.Var) or self._element_seeded(op):
            return False
        act, t = self.cx.activity, self.facts.ty(op)
        if has_scalar_adjoint(t) or is_float_array(t):
            return op.name in act.useful
        items = self.facts.tuple_arrays(op) or []
        return any(v is not None and v.name in act.useful for v in items)

    def _element_seeded(self, op):
        """Is ``op`` an array whose elements' adjoints the plan gives its stores directly
        (:mod:`..plan.replay`, :mod:`..plan.read_seeds`), so that nothing adds to its
        adjoint?"""
        return isinstance(self.facts.ty(op.name), types.Array) and \
            self.facts.array_root(op.name) in self.cx.plan.element_seeds

    def _literal(self, var):
        """The number a literal operand (a constant or a global number) holds, or None."""
        form = self.facts.static_form(var.name) if isinstance(var, ir.Var) else None
        if form is None or form[0] not in ("const", "global"):
            return None
        v = form[1]
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        return v if ok else None

    def _reduction(self, name, e, g):
        """Contributions of a float reduced from arrays (``np.sum(x)``, ``np.max(x)``,
        ``np.linalg.det(a)``...) to the adjoints of those arrays."""
        facts, act = self.facts, self.cx.activity
        bound = facts.reduction(e)
        # Into an adjoint array shared by views, a contribution may only broadcast to its
        # operand (``x_bar += g``); a computed array's own adjoint takes its exact shape.
        own = [a.name in act.array_values for a in bound.operands]
        rules = {True: bound.templates(), False: bound.templates(accumulate=True)}
        active = [r is not None and (is_float_array(facts.ty(a)) or is_float(facts.ty(a)))
                  and a.name in act.varied and not self._element_seeded(a)
                  for r, a in zip(rules[True], bound.operands)]
        own = [o or is_float(facts.ty(a)) for o, a in zip(own, bound.operands)]
        read = [rules[o][k] for k, (o, a) in enumerate(zip(own, active)) if a]
        used = R.needed_operands(read)
        shaped = self.shape_operands(read)
        copies = self.cx.plan.snapshots.get(name, {})
        with self._application(name):
            self._ctx = (name, "y")
            fmt = {"g": g, "y": self.ref(copies.get(name, name)) if "y" in used else ""}
            pos = []
            for k, a in enumerate(bound.operands):
                self._ctx = (name, k)
                if k in shaped:
                    pos.append(self.ref_shape(a))
                    continue
                pos.append(self.ref(copies.get(a.name, a)) if k in used else "")
        out = []
        for k, (a, o) in enumerate(zip(bound.operands, own)):
            if active[k] and is_float(facts.ty(a)):     # np.interp(s, xp, fp): s
                out.extend(self._plain(a, Term.of(rules[o][k], pos, **fmt).tree()))
            elif active[k]:
                out.extend(self.array_target(a, Term.of(rules[o][k], pos, **fmt).tree(),
                                             shaped=True))
        return out

    def _call(self, name, e):
        facts = self.facts
        receiver = facts.float_itself(e)
        if receiver is not None:            # x.item(), x.conjugate() of a float
            return self._plain(receiver, self.names.bar(name))
        fn = facts.resolve_global(e.func)
        if fn in R.NON_DIFFERENTIABLE_CALLS or fn in R.ARRAY_CONSTRUCTORS:
            return []
        rule = R.CALL_RULES.get(fn)
        if rule is None:
            return []       # refused by the checks when its result reaches the gradient
        if e.kws:
            facts.error("keyword arguments to %s" % getattr(fn, "__name__", fn), e.loc)
        if len(e.args) < len(rule) and all(t is None for t in rule[len(e.args):]):
            rule = rule[:len(e.args)]       # defaults with no gradient: np.round(x)
        if len(rule) != len(e.args):
            facts.error("%s with %d arguments" % (getattr(fn, "__name__", fn), len(e.args)),
                        e.loc)
        return self.apply(name, rule, list(e.args), fn=fn)

    def _read(self, name, e, g):
        """``name = a[i]`` (the element's adjoint gets ``g``) or ``name = t[k]`` (the tuple
        item's adjoint does)."""
        facts = self.facts
        vt = facts.ty(e.value)
        if isinstance(vt, types.Array):
            if isinstance(facts.ty(name), types.Array) or name in facts.inplace_loads:
                return []
            if self.cx.plan.element_seeds.get(facts.array_root(e.value.name),
                                              (None, ("",)))[1][0] == "indexed":
                return []   # its stores take this read's adjoint (plan/read_seeds.py)
            self.cx.parallel.note_adjoint_write(e.value, facts.index_var(e))
            cell = (self.ref_bar(e.value), self.src.index(e, self.ref))
            acc = self.cx.cell_sum(name, e, cell)
            if acc is not None:     # summed in a local, added into the cell later
                return [Add(acc, g)]
            if facts.target.needs_atomic(facts, e):
                return [Atomic(cell[0], cell[1], g)]
            root = facts.array_root(e.value.name)
            assigned = self.cx.plan.assigned_adjoints.get(root)
            if assigned is not None and assigned[1] == name:
                return [Assigned(expr("{}[{}]", *cell), g)]     # (plan/assigned.py)
            swept = self.cx.plan.sweep_assigned.get(root)
            if swept is not None and swept.read == name and self.cx.versions.fast:
                return [Assigned(expr("{}[{}]", *cell), g)]     # (plan/sweep_assigned.py)
            return [Add(expr("{}[{}]", *cell), g)]
        if isinstance(vt, types.BaseTuple):
            ops = self.cx.activity.diff_operands(facts, name)
            if not ops and e.value.name in self.cx.activity.varied:
                facts.error("reading a float out of a tuple that is not built in the "
                            "function (%s)" % vt, e.loc)
            return [Add(self.names.bar(op), g) for op in ops]
        if lists.holds_adjoint(self.cx, e.value):
            return lists.read(self.cx, e, g)
        facts.error(_CONTAINER_READ % vt, e.loc)

    def add_cell_sum(self, L, acc, e):
        """After the loop it sums over: the sum ``acc`` of the contributions to the adjoint
        of the element ``e`` reads, into that element (:mod:`..plan.cell_sums`). Not when
        it is zero: the read may not have run, and its index may be no index then."""
        facts = self.facts
        array, index = self.ref_bar(e.value), self.src.index(e, self.ref)
        with L.block("if {} != 0.0:", acc):
            self.cx.reverse.make_adjoints(L)
            if facts.target.needs_atomic(facts, e):
                L(facts.target.atomic_add_statement(array, index, acc))
            else:
                L.code("{}[{}] += {}", array, index, acc)

    def _array_loop_value(self, e, g):
        """``for v in x``: the element read this iteration gets ``g``."""
        rl = self.facts.iter_alias[self.facts.pair_iter(e).name]
        if rl.array is None:
            return []
        h = rl.loop.header
        if lists.holds_adjoint(self.cx, rl.array):
            return lists.loop_item(self.cx, rl, h, g)
        if not isinstance(self.facts.ty(rl.array), types.Array):
            self.facts.error(_CONTAINER_READ % self.facts.ty(rl.array), e.loc)
        self.cx.parallel.note_adjoint_write(rl.array, None)
        # The last test of the loop reads no element: guard its (zero) adjoint.
        it = "_it%d" % h
        return [Guarded(expr("{} < {}", it, rl.len), expr("{}[{}]", self.ref_bar(rl.array), it),
                        g)]
