"""Activity: which values carry a derivative, and which of those reach the result.

Reads the :class:`~.ir_facts.IRFacts`, the target and ``wrt``; produces an :class:`Activity`:

* **varied**: values that depend on a differentiated argument, through arithmetic, phis,
  tuples, and arrays that varied values are stored into;
* **useful**: varied floats that flow into the result (for kernels: into the arrays they
  write). Only these get adjoints;
* **useful_roots**: the arrays whose contents reach the result;
* **array_adjoints**: the memory the function was given or made, whose adjoint is an
  array its views share, and where that comes from (``"arg"``: passed in, ``"new"``:
  allocated beside a fresh array, ``"local"``: a per-thread scratch array of the target);
* **array_values**: the arrays the function computes (``x * y``, ``np.sin(x)``, a phi of
  arrays): their adjoint is a value of its own, as a float's is (made when first needed,
  see numba_adstack.ad.runtime).
"""
from dataclasses import dataclass

from numba.core import ir, types

from .. import rules as R
from .rule_binding import bind_expr

from ..typeinfo import (carries_floats, holds_complex, is_complex_array, is_float,
                        is_float_array, is_float_container)
from .containers import (container_adjoints, container_puts, container_root,
                         grow_varied_containers, is_container, put_into)


@dataclass(frozen=True)
class Activity:
    varied: frozenset
    useful: frozenset
    useful_roots: frozenset
    array_adjoints: dict
    array_values: frozenset = frozenset()
    container_adjoints: frozenset = frozenset()     # lists and Dicts of floats read usefully

    def diff_operands(self, facts, name):
        """Varied operands through which an adjoint flows from ``name``."""
        return [o for o in facts.adjoint_operands(name) if o in self.varied]


def analyse(facts, wrt):
    """The :class:`Activity` of the function described by ``facts``."""
    varied = frozenset(_varied(facts, wrt))
    useful, useful_roots = _useful(facts, varied)
    adjoints, values = _array_adjoints(facts, useful_roots, useful)
    return Activity(varied, frozenset(useful), frozenset(useful_roots), adjoints,
                    frozenset(values), container_adjoints(facts, useful, varied))


# ---------------------------------------------------------------------- varied
def _varied(facts, wrt):
    """Values that depend on a differentiable input (float arguments and float array
    contents)."""
    varied = set()
    for name, t in facts.typemap.items():
        if name in facts.defs and isinstance(facts.defs[name][1].value, ir.Arg) \
                and (is_float(t) or is_float_array(t) or holds_complex(t)):
            # (A complex argument is an input too: what it reaches is varied, and the
            # checks refuse it where it reaches the result.)
            if wrt is None or facts.defs[name][1].value.index in wrt:
                varied.add(name)
    wrt_roots = {a for a in varied if isinstance(facts.typemap[a], types.Array)}
    # Arrays whose contents depend on the inputs: the differentiated arguments, and arrays
    # a varied value is stored into.
    varied_roots = set()

    def depends_on_inputs(v):
        root = facts.array_root(v)
        return v in varied or root in varied_roots or root in wrt_roots

    def depends(name, e):
        if name in facts.phis:
            inputs = [v.name for v in facts.phi_incoming(name).values()
                      if isinstance(v, ir.Var)]
        elif isinstance(e, ir.Expr):
            # An item of a tuple built in the function depends on that item only (the
            # grid of a library's ``f(grid, values, points)`` packed as its *args).
            item = facts.tuple_item(e) if e.op in ("getitem", "static_getitem") else None
            inputs = [item.name] if item is not None else facts.expr_inputs(e)
        elif isinstance(e, ir.Var):
            inputs = [e.name]
        else:
            return False
        return any(depends_on_inputs(v) for v in inputs)

    puts = container_puts(facts)
    changed = True
    while changed:
        changed = _grow_varied_roots(facts, varied, varied_roots, depends_on_inputs)
        changed |= grow_varied_containers(facts, puts, varied, depends_on_inputs)
        for name in list(facts.defs) + list(facts.phis):
            if name in varied:
                continue
            t = facts.typemap.get(name)
            e = None if name in facts.phis else facts.def_expr(name)
            if carries_floats(t) or is_container(t):
                # A tuple, list, complex number, bound method... built from varied values:
                # whatever float is read out of it depends on them too.
                hit = depends(name, e)
            elif is_complex_array(t):
                # Complex arrays computed from, viewing, or written with varied values:
                # what is read out of them depends on the inputs.
                root = facts.array_root(name)
                hit = root in wrt_roots or root in varied_roots or root in varied or \
                    depends(name, e) or _complex_part_written(facts, name, varied_roots)
            elif not (is_float(t) or is_float_array(t)):
                continue
            elif isinstance(e, ir.Expr) and e.op in ("getitem", "static_getitem") \
                    and isinstance(facts.ty(e.value), types.Array):
                root = facts.array_root(e.value.name)
                hit = root in wrt_roots or root in varied_roots or root in varied
            elif is_float_array(t):
                # An array is varied when the array it views or aliases holds varied
                # values, or (a value computed from others, a phi) when its inputs vary.
                root = facts.array_root(name)
                hit = root in wrt_roots or root in varied_roots or root in varied or (
                    root == name and depends(name, e))
            else:
                # Every input counts, not only those a rule differentiates: a float that
                # depends on the inputs through a construct without a rule must be refused,
                # not taken as a constant.
                hit = depends(name, e) or any(op in varied
                                              for op in facts.adjoint_operands(name))
            if hit:
                varied.add(name)
                changed = True
    return varied


def _complex_part_written(facts, name, varied_roots):
    """Is a varied value written into ``c.real`` or ``c.imag`` of the complex array
    ``name`` (views of its memory that the roots do not follow)?"""
    for _, stmt in facts.uses.get(name, ()):
        e = stmt.value if isinstance(stmt, ir.Assign) else None
        if isinstance(e, ir.Expr) and e.op == "getattr" and e.attr in ("real", "imag") \
                and stmt.target.name in varied_roots:
            return True
    return False


def _grow_varied_roots(facts, varied, varied_roots, depends_on_inputs):
    """Add the arrays that stores, writing calls, copies and fills make depend on the
    inputs; True when any was added."""
    changed = False
    for blk in facts.fir.blocks.values():
        for stmt in blk.body:
            upd = facts.array_update(stmt)
            if upd is not None and upd[1].name in varied:
                root = facts.array_root(upd[0].name)
                if root not in varied_roots:
                    varied_roots.add(root)
                    changed = True
            written = facts.mutated_arrays(stmt.value) if isinstance(stmt, ir.Assign) else []
            e = stmt.value if isinstance(stmt, ir.Assign) else None
            if isinstance(e, ir.Expr) and e.op == "inplace_binop" \
                    and is_float_array(facts.ty(e.lhs)):
                written = written + [e.lhs]         # x op= e writes e into x's memory
            if written and any(depends_on_inputs(v) for v in facts.expr_inputs(stmt.value)):
                for a in written:
                    if facts.array_root(a.name) not in varied_roots:
                        varied_roots.add(facts.array_root(a.name))
                        changed = True
    for name, (label, stmt) in facts.defs.items():
        if name in varied_roots:
            continue
        src = facts.array_copy_source(stmt.value)
        fill = facts.fill_value(stmt.value)
        if src is not None:
            inputs = [src.name]
        elif fill is not None:
            inputs = [fill.name]
        elif facts.computed_array(name):
            # Whole-array arithmetic (x * 2.0, np.sin(x), x.T): its values depend on its
            # inputs. Marking it lets the sweep refuse it where its values reach the
            # result, instead of treating it as a constant.
            inputs = facts.expr_inputs(stmt.value)
        else:
            continue
        if any(depends_on_inputs(v) for v in inputs):
            varied_roots.add(name)
            changed = True
    return changed


# ---------------------------------------------------------------------- useful
def _useful(facts, varied):
    """Varied floats whose adjoint can be non-zero (they flow into the result), and the
    roots of the arrays whose contents do."""
    useful, useful_roots = set(), set()
    work = []
    for blk in facts.fir.blocks.values():
        if isinstance(blk.terminator, ir.Return):
            work.append(blk.terminator.value.name)
    if not facts.target.returns_value:
        for blk in facts.fir.blocks.values():
            for stmt in blk.body:
                upd = facts.array_update(stmt)
                if upd is not None:
                    work.append(upd[1].name)
    while work:
        while work:
            name = work.pop()
            if name in useful or name not in varied:
                continue
            useful.add(name)
            for op in _gradient_operands(facts, name):
                if op in varied and op not in useful:
                    work.append(op)
            for a in facts.arrays_read(name):
                useful_roots.add(facts.array_root(a))
            if is_float_array(facts.ty(name)):
                useful_roots.add(facts.array_root(name))
        # A copy of an array read usefully makes its source read usefully, and a
        # computed source useful: through the worklist, so that its own operands are.
        work.extend(_useful_copy_sources(facts, varied, useful_roots))
        if work:
            continue
        # A computed array (or a phi of arrays) read usefully (by elements, through
        # views) is useful itself: its adjoint flows on into its operands.
        work.extend(r for r in useful_roots if r in varied and r not in useful
                    and (facts.computed_array(r) or r in facts.phis))
        # So does the value a useful array is filled with at its creation.
        for name, (label, stmt) in facts.defs.items():
            fill = facts.fill_value(stmt.value)
            if fill is not None and name in useful_roots and fill.name not in useful \
                    and fill.name in varied:
                work.append(fill.name)
        # A value stored into an array (or added in place) matters when that array is
        # read usefully; so does, for an in-place operator, the view it updates (its old
        # contents scale: ``v *= c`` in a helper given the row).
        for blk in facts.fir.blocks.values():
            for stmt in blk.body:
                if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                    target, values = stmt.target, [stmt.value]
                elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) \
                        and stmt.value.op == "inplace_binop" \
                        and is_float_array(facts.ty(stmt.value.lhs)):
                    target, values = stmt.value.lhs, [stmt.value.rhs, stmt.value.lhs]
                else:
                    continue
                if facts.array_root(target.name) in useful_roots:
                    work.extend(v.name for v in values
                                if v.name not in useful and v.name in varied)
        # A value put into a container of floats read usefully (its adjoint gives it one).
        held = {container_root(facts, n) for n in useful if is_float_container(facts.ty(n))}
        work.extend(v for v in put_into(facts, held) if v not in useful and v in varied)
    return useful, useful_roots


def _gradient_operands(facts, name):
    """The operands an adjoint may flow into from ``name``, less those of a call that its
    rule gives no gradient in every place they are passed (``np.floor(x * x)``: ``x * x``
    gets no adjoint, rather than one never written)."""
    ops = facts.adjoint_operands(name)
    e = None if name in facts.phis else facts.def_expr(name)
    if not (isinstance(e, ir.Expr) and e.op == "call"):
        return ops
    bound = bind_expr(facts, e)
    found = R.complex_rule(facts, e)
    if found is not None:
        pairs = list(zip(found[1], found[0]))
    elif bound is not None:
        pairs = list(zip(bound.operands, bound.templates()))
    else:
        rule = R.CALL_RULES.get(facts.resolve_global(e.func))
        if rule is None or e.kws or e.vararg is not None or len(rule) != len(e.args):
            return ops
        pairs = list(zip(e.args, rule))
    live = {v.name for v, t in pairs if isinstance(v, ir.Var) and t is not None}
    dead = {v.name for v, t in pairs if isinstance(v, ir.Var) and t is None} - live
    return [o for o in ops if o not in dead]


def _useful_copy_sources(facts, varied, useful_roots):
    """Add the roots of the arrays that useful copies read to ``useful_roots``; return
    the varied sources (their adjoints flow on into their operands)."""
    out = []
    grew = True
    while grew:
        grew = False
        for name, (label, stmt) in facts.defs.items():
            src = facts.array_copy_source(stmt.value)
            if src is not None and name in useful_roots and \
                    facts.array_root(src.name) not in useful_roots:
                useful_roots.add(facts.array_root(src.name))
                grew = True
                if src.name in varied:
                    out.append(src.name)
    return out


# ---------------------------------------------------------------------- array adjoints
def _array_adjoints(facts, useful_roots, useful):
    out = {a: "arg" for a in facts.arg_vars if is_float_array(facts.ty(a))}
    values = set()
    for name, (label, stmt) in facts.defs.items():
        e = stmt.value
        if facts.local_array(name):
            if facts.s.depth(label) > 0:
                facts.error("creating the array %r inside a loop; create it before the "
                            "loop" % name, stmt.loc)
            if facts.ty(name).ndim != 1:
                if facts.array_root(name) in useful_roots:
                    facts.error("a %d-d %s on the gradient path; use a 1-d one"
                                % (facts.ty(name).ndim,
                                   facts.target.display_name(facts.resolve_global(e.func))),
                                stmt.loc)
                continue
            out[name] = "local"
            continue
        if (isinstance(e, ir.Expr) and e.op == "call" and is_float_array(facts.ty(name))
                and (facts.resolve_global(e.func) in R.ARRAY_CONSTRUCTORS
                     or facts.array_copy_source(e) is not None)):
            if not facts.target.allocates_arrays:
                facts.error("allocating arrays in a kernel", stmt.loc)
            out[name] = "new"
        elif name in useful and _is_value(facts, name):
            values.add(name)
    values.update(p for p in facts.phis if p in useful and _is_value(facts, p))
    return out, values


def _is_value(facts, name):
    """Is ``name`` an array the function computed (``x * y``, a phi of arrays, ``v += e``
    on such a value), whose adjoint is a value of its own?"""
    return (is_float_array(facts.typemap.get(name)) and facts.array_root(name) == name
            and not facts.is_buffer_source(name))


# ---------------------------------------------------------------------- integer inputs
def integer_arguments_in_float_arithmetic(facts, wrt):
    """Indices of the integer arguments (those in ``wrt``; all when None) that take part
    in float arithmetic: ``x * n``, ``float(n)``, directly or through integer arithmetic
    and phis. Such an argument would have a derivative if it were passed as a float; one
    used only as a count, a bound or an index would not."""
    out = []
    for k, arg in enumerate(facts.arg_vars):
        t = facts.ty(arg)
        if not _integer(t) or (wrt is not None and k not in wrt):
            continue
        todo, seen = [arg], {arg}
        while todo and k not in out:
            for _, stmt in facts.uses.get(todo.pop(), ()):
                if not isinstance(stmt, ir.Assign):
                    continue
                e, target = stmt.value, stmt.target.name
                rt = facts.typemap.get(target)
                arithmetic = isinstance(e, ir.Expr) and (
                    e.op in ("binop", "inplace_binop", "unary", "phi")
                    or (e.op == "call" and facts.resolve_global(e.func) is float)
                    # an element or a slice of an integer array
                    or (e.op in ("getitem", "static_getitem")
                        and isinstance(facts.ty(e.value), types.Array)))
                if not (arithmetic or isinstance(e, ir.Var)):
                    continue
                if is_float(rt) or is_float_array(rt):
                    out.append(k)
                    break
                if _integer(rt) and target not in seen:
                    seen.add(target)
                    todo.append(target)
    return out


def _integer(t):
    """An integer (not a boolean), or an array of them."""
    if isinstance(t, types.Array):
        t = t.dtype
    return isinstance(t, types.Integer) and not isinstance(t, types.Boolean)
