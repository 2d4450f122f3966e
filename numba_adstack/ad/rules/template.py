"""Rule templates, parsed once into expression trees.

A rule is written as a Python expression with placeholders: ``{g}`` the adjoint of the
result (in forward mode: an operand's tangent), ``{y}`` the result, ``{0}``, ``{1}``...
the operands by position, or ``{<name>}`` the parameters of an array rule. Each
template is parsed once, when its table is built, into a :class:`Template`: the text as
written (a ``str``, which ``format`` fills in) and its tree (``ast``), where each
placeholder is a ``Name`` node (:func:`field`). Whatever reads a rule reads the tree:

* :func:`adjoint_factor`: ``{g} * P`` with ``P`` free of the adjoint (the partial kept on
  a stack in place of the operand, plan/stacks.py);
* :func:`by_reciprocal`: ``c / {v}`` made ``c * {q}`` for a reciprocal ``q = 1. / v``
  the primal computed (plan/reciprocals.py);
* :func:`lift`: the rule on arrays (``math.*`` -> ``np.*``, ``a if c else b`` -> a mask
  or ``np.where``), which generates the element-wise array rules and forward mode's
  array tangents from the scalar rules;
* :func:`substitute`: placeholders renamed or replaced by other expressions;
* :func:`linear_in_adjoint`: the property every adjoint rule must have (it is linear in
  ``{g}``), checked when a table is built;
* :func:`zero_safe`: a contribution that is exactly zero where the adjoint is, whatever
  its partial (see below).

A zero adjoint contributes zero. Where the partial ``P`` of a rule ``{g} * P`` may be
infinite or NaN at finite operands (``sqrt`` and ``log`` at 0, a quotient by 0,
``arcsin`` at 1), the rule is declared ``zero_safe``: ``zmul({g}, P)``, the product where
``{g}`` is not zero and 0 where it is (rules/vjp_elementwise.py), so that an operation
whose result nothing uses, or that a masked ``where`` or a NaN-skipping reduction leaves
out, gives exactly 0 where IEEE arithmetic gives ``0 * inf = NaN``. ``zmul`` is the
product and a branch the processor predicts, so an adjoint chain through it does not wait
for the test; it is a primitive with a rule, so forward mode over the backward (``hvp``)
differentiates it (a branch on the adjoint in the code would lose the tangent where the
adjoint is zero). On arrays (:func:`lift`) it is the ufunc ``zmultiply``, and every contribution
whose partial reads a value gets it: arrays carry data with NaNs that the NaN-skipping
reductions leave out. Rules whose partial is finite where their operands are (``sin``, a
product, a sum) stay plain products on floats: a loop's adjoint chain pays nothing for
them. :func:`ieee_products` takes the guards out of a generated tree
(``grad_jit(ieee_products=True)``), :func:`guards_outside_loops` makes those that run
once selects, :func:`guards_as_branches` writes them as conditional expressions (for
targets without the ``zmul`` primitive: CUDA).

A template made from a tree is printed once (``ast.unparse``); its text then parses
back to the same tree.
"""
import ast
import functools
import string

import numpy as np

from ..generated_source.code import PLACEHOLDER as _MARK

#: Tree roots printed in parentheses, so that the text stays one operand wherever a
#: caller places it.
_LOOSE = (ast.IfExp, ast.BoolOp, ast.Compare, ast.Lambda, ast.NamedExpr)
#: ``math`` functions whose NumPy ufunc has another name.
_NP_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2",
             "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "pow": "power"}


class Template(str):
    """A rule template: its text (a format string) and ``tree``, the expression with each
    placeholder a :func:`field` name; ``reads``: the placeholders it reads (``"g"``,
    ``"y"``, ``"0"``...)."""

    def __new__(cls, text, tree=None):
        self = super().__new__(cls, text)
        if tree is None:
            tree = _parse(text)
        self.tree = tree
        self.reads = frozenset(f for f in map(field_of, ast.walk(tree)) if f is not None)
        return self

    @classmethod
    def of_tree(cls, tree):
        """The template of an expression tree (placeholders as :func:`field` names)."""
        return cls(_print(tree), tree)

    @property
    def operands(self):
        """The operand positions it reads."""
        return {int(f) for f in self.reads if f.isdigit()}


def _parse(text):
    """The tree of a template's text, each ``{name}`` a :func:`field` name."""
    parts = []
    for literal, name, spec, conversion in string.Formatter().parse(text):
        parts.append(literal)
        if name is None:
            continue
        if spec or conversion or not (name.isidentifier() or name.isdigit()):
            raise ValueError("rule template %r: placeholder {%s%s%s} is not a plain name"
                             % (text, name, "!" + conversion if conversion else "",
                                ":" + spec if spec else ""))
        parts.append(_MARK + name)
    try:
        return ast.parse("".join(parts).strip(), mode="eval").body
    except SyntaxError as exc:
        raise ValueError("rule template %r is not a Python expression: %s"
                         % (text, exc.msg)) from None


def _print(tree):
    class Braced(ast.NodeTransformer):
        def visit_Name(self, node):
            f = field_of(node)
            return node if f is None else ast.Name(id="{%s}" % f, ctx=ast.Load())
    text = ast.unparse(Braced().visit(_copy(tree)))
    return "(%s)" % text if isinstance(tree, _LOOSE) else text


def _copy(tree):
    return _Copier().visit(tree)


class _Copier(ast.NodeTransformer):
    """A deep copy (trees of templates are shared: transformers work on copies)."""

    def generic_visit(self, node):
        new = type(node)()
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                value = [self.visit(v) if isinstance(v, ast.AST) else v for v in value]
            elif isinstance(value, ast.AST):
                value = self.visit(value)
            setattr(new, name, value)
        return new


@functools.lru_cache(maxsize=4096)
def _cached(text):
    return Template(text)


def template(text):
    """The :class:`Template` of ``text`` (parsed once per distinct text); None stays
    None and a Template stays itself."""
    if text is None or isinstance(text, Template):
        return text
    return _cached(text)


def rule(texts):
    """A rule (a tuple of templates, None for an operand without gradient) parsed."""
    return None if texts is None else tuple(template(t) for t in texts)


# ---------------------------------------------------------------------------- nodes
def field(name):
    """The node of placeholder ``{name}``."""
    return ast.Name(id=_MARK + str(name), ctx=ast.Load())


def field_of(node):
    """The placeholder a node is (``"g"``, ``"0"``...), or None."""
    if isinstance(node, ast.Name) and node.id.startswith(_MARK):
        return node.id[len(_MARK):]
    return None


def _number(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
        and not isinstance(node.value, bool)


def _module_call(node, module):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and isinstance(node.func.value, ast.Name) and node.func.value.id == module


#: The guarded product of floats (``zmul(a, P)``), its form for code that runs once and
#: its ufunc (rules/vjp_elementwise.py).
GUARDED_PRODUCT, GUARDED_SELECT, GUARDED_UFUNC = "zmul", "zmul_select", "zmultiply"


def _scaled_adjoint(node):
    """``a`` of ``a`` or ``-a``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return node.operand
    return node


def guarded_product_call(node, name=GUARDED_PRODUCT):
    """``(a, P)`` of a call ``zmul(a, P)`` (``name``: or of the ufunc's); else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == name and len(node.args) == 2 and not node.keywords:
        return node.args[0], node.args[1]
    return None


def _guarded_product(a, p, name=GUARDED_PRODUCT):
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[a, p], keywords=[])


def zero_safe(text):
    """The template ``{g} * P`` (or ``-{g} * P``) made exactly zero where ``{g}`` is
    zero, whatever ``P``: ``zmul({g}, P)`` (see the module's docstring). For the rules
    whose partial may be infinite or NaN at finite operands."""
    tree = _parse(text)
    if not (isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.Mult)
            and field_of(_scaled_adjoint(tree.left)) == "g"
            and not _reads_g(tree.right)):
        raise ValueError("zero_safe(%r): write the rule {g} * (...)" % (text,))
    return Template.of_tree(_guarded_product(tree.left, tree.right))


def _product(tpl):
    """``(a, P, guarded)`` of a template ``a * P`` or ``zmul(a, P)``; None otherwise."""
    tree = template(tpl).tree
    parts = guarded_product_call(tree)
    if parts is not None:
        return parts[0], parts[1], True
    if isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.Mult):
        return tree.left, tree.right, False
    return None


# ---------------------------------------------------------------------------- matchers
def is_adjoint(tpl):
    """Is the template ``{g}`` itself (the contribution is the adjoint as it is)?"""
    return tpl is not None and field_of(template(tpl).tree) == "g"


def adjoint_factor(tpl):
    """``P`` of a template ``{g} * P`` (guarded or not) whose ``P`` reads neither the
    adjoint nor the result, as a template; else None."""
    parts = _product(tpl)
    if parts is None or field_of(parts[0]) != "g":
        return None
    part = Template.of_tree(parts[1])
    return None if part.reads & {"g", "y"} else part


def with_factor(tpl, name):
    """The template ``{g} * {name}``, guarded where ``tpl`` (a rule of
    :func:`adjoint_factor`) is: its partial kept, and read as ``{name}``."""
    product = "{g} * {%s}" % name
    return zero_safe(product) if _product(tpl)[2] else template(product)


def calls_module(tpl, module):
    """Does the template call a function of ``module`` (``math.cos``...)?"""
    return any(_module_call(n, module) for n in ast.walk(template(tpl).tree))


def linear_in_adjoint(tpl):
    """Is the template linear in ``{g}``: ``{g}`` read once, only through negation,
    products and quotients by values free of it, and branches whose other side is a
    zero? Forward mode relies on it (it puts an operand's tangent in ``{g}``), and
    reverse mode on the contribution vanishing with the adjoint."""
    def linear(node):
        f = field_of(node)
        if f is not None:
            return f == "g"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return linear(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            left, right = _reads_g(node.left), _reads_g(node.right)
            return (left != right) and linear(node.left if left else node.right)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return not _reads_g(node.right) and linear(node.left)
        # Real-linear maps of a complex adjoint (rules/complex_rules.py).
        if isinstance(node, ast.Attribute) and node.attr in ("real", "imag"):
            return linear(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "conjugate" and not node.args and not node.keywords:
            return linear(node.func.value)
        parts = guarded_product_call(node)
        if parts is not None:
            return linear(parts[0]) and not _reads_g(parts[1])
        if isinstance(node, ast.IfExp):
            if _reads_g(node.test):
                return False
            sides = [node.body, node.orelse]
            return all(linear(s) or (_number(s) and s.value == 0) for s in sides) \
                and any(_reads_g(s) for s in sides)
        return False
    return linear(template(tpl).tree)


#: Helpers of the array rules that read their second argument only for its shape
#: (rules/vjp_core.py: they take a shape there too).
SHAPE_ARGUMENT = ("sum_to", "unreduce", "reduced_view")


def shape_only(tpl):
    """The placeholders the template reads only for their shape: each of its reads is
    the second argument of a :data:`SHAPE_ARGUMENT` helper (plan/shape_reads.py)."""
    tree = template(tpl).tree
    reads, as_shape = {}, {}
    for n in ast.walk(tree):
        f = field_of(n)
        if f is not None:
            reads[f] = reads.get(f, 0) + 1
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                and n.func.id in SHAPE_ARGUMENT and len(n.args) >= 2:
            f = field_of(n.args[1])
            if f is not None:
                as_shape[f] = as_shape.get(f, 0) + 1
    return frozenset(f for f, k in as_shape.items() if reads[f] == k)


def _reads_g(node):
    return any(field_of(n) == "g" for n in ast.walk(node))


# ---------------------------------------------------------------------------- transformers
def substitute(tpl, values):
    """The template with placeholders replaced: ``values`` maps a placeholder name to a
    template, or to the text of an expression (itself with placeholders, ``"{0}"``,
    ``"({0}, {1},)"``, ``"None"``)."""
    trees = {str(k): template(v).tree for k, v in values.items()}

    class Sub(ast.NodeTransformer):
        def visit_Name(self, node):
            f = field_of(node)
            return _copy(trees[f]) if f in trees else node
    return Template.of_tree(Sub().visit(_copy(template(tpl).tree)))


def by_reciprocal(tpl, slot, recip):
    """The template with each ``c / {slot}`` (``c`` a number or an operand) made
    ``c * {recip}``; None when it divides nothing by ``{slot}`` that way."""
    changed = []

    class Recip(ast.NodeTransformer):
        def visit_BinOp(self, node):
            self.generic_visit(node)
            if isinstance(node.op, ast.Div) and field_of(node.right) == slot and (
                    _number(node.left) or (field_of(node.left) or "").isdigit()):
                changed.append(node)
                return ast.BinOp(left=node.left, op=ast.Mult(), right=field(recip))
            return node
    tree = Recip().visit(_copy(template(tpl).tree))
    return Template.of_tree(tree) if changed else None


class _Lift(ast.NodeTransformer):
    """A scalar expression made element-wise on arrays (see :func:`lift`)."""

    class Refused(Exception):
        pass

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == "math":
            name = _NP_NAMES.get(node.attr, node.attr)
            if not isinstance(getattr(np, name, None), np.ufunc):
                raise self.Refused(node.attr)
            return ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()), attr=name,
                                 ctx=ast.Load())
        return self.generic_visit(node)

    def visit_Call(self, node):
        parts = guarded_product_call(node)
        if parts is not None:
            return _guarded_product(self.visit(parts[0]), self.visit(parts[1]),
                                    GUARDED_UFUNC)
        if isinstance(node.func, ast.Name):
            raise self.Refused(node.func.id)     # a builtin: abs, min... of scalars
        return self.generic_visit(node)

    def visit_BoolOp(self, node):
        op = ast.BitOr() if isinstance(node.op, ast.Or) else ast.BitAnd()
        values = [self.visit(v) for v in node.values]
        out = values[0]
        for v in values[1:]:
            out = ast.BinOp(left=out, op=op, right=v)
        return out

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            return _np_call("logical_not", self.visit(node.operand))
        return self.generic_visit(node)

    def visit_Compare(self, node):
        node = self.generic_visit(node)
        pairs = [ast.Compare(left=a, ops=[op], comparators=[b]) for a, op, b in
                 zip([node.left] + node.comparators[:-1], node.ops, node.comparators)]
        out = pairs[0]
        for p in pairs[1:]:
            out = ast.BinOp(left=out, op=ast.BitAnd(), right=p)
        return out

    def visit_IfExp(self, node):
        test, body, orelse = (self.visit(n) for n in (node.test, node.body, node.orelse))
        # A branch between the adjoint and zero is a mask the adjoint is multiplied by:
        # one fused loop, cheaper to compile than np.where.
        g = ast.Name(id=_MARK + "g", ctx=ast.Load())
        if field_of(body) == "g" and _number(orelse) and orelse.value == 0:
            return ast.BinOp(left=g, op=ast.Mult(), right=test)
        if field_of(orelse) == "g" and _number(body) and body.value == 0:
            return ast.BinOp(left=g, op=ast.Mult(), right=_np_call("logical_not", test))
        return _np_call("where", test, body, orelse)


#: Calls whose value is a truth value (a partial that is a mask: finite).
_TRUTHS = {"isfinite", "isnan", "isinf", "logical_not"}


def _truth(node):
    if isinstance(node, (ast.Compare, ast.BoolOp)):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in _TRUTHS


def _guarded_on_arrays(scalar, lifted):
    """``lifted`` (the array form of the scalar tree ``scalar``) guarded where it is a
    product ``{g} * P`` (or ``-{g} * P``) whose ``P`` reads a value and is no mask: on
    arrays, NaN data that a NaN-skipping reduction leaves out meets every such partial."""
    if not (isinstance(scalar, ast.BinOp) and isinstance(scalar.op, ast.Mult)
            and field_of(_scaled_adjoint(scalar.left)) == "g") or _truth(scalar.right):
        return lifted
    if not any(f is not None and f != "g" for f in map(field_of, ast.walk(scalar.right))):
        return lifted           # a constant partial
    return _guarded_product(lifted.left, lifted.right, GUARDED_UFUNC)


def _np_call(name, *args):
    return ast.Call(func=ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()), attr=name,
                                       ctx=ast.Load()), args=list(args), keywords=[])


def lift(tpl):
    """The template element-wise on arrays (``math.cos`` -> ``np.cos``, ``a if c else b``
    -> ``np.where(c, a, b)``, or a mask times ``{g}`` when the other branch is zero;
    ``or``/``and``/``not`` -> ``|``/``&``/``np.logical_not``; a guarded product, and a
    product whose partial reads a value, -> ``zmultiply({g}, P)``), or None when it calls a
    function with no NumPy ufunc. A template that needs no change is returned as is."""
    if tpl is None:
        return None
    tpl = template(tpl)
    try:
        tree = _guarded_on_arrays(tpl.tree, _Lift().visit(_copy(tpl.tree)))
    except _Lift.Refused:
        return None
    out = Template.of_tree(tree)
    return tpl if ast.dump(tree) == ast.dump(tpl.tree) else out


def lift_rule(rule):
    """A rule (a tuple of templates) lifted to arrays, or None when one does not lift."""
    out = tuple(lift(t) for t in rule)
    if any(o is None and t is not None for o, t in zip(out, rule)):
        return None
    return out


def ieee_products(tree):
    """The generated code ``tree`` (changed in place) with its guarded products plain
    ones, ``zmul(a, P)`` and ``zmultiply(a, P)`` -> ``a * P``: the IEEE product (``0 *
    inf`` is NaN), as ``grad_jit(ieee_products=True)`` asks."""
    class Plain(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            parts = guarded_product_call(node) or guarded_product_call(
                node, GUARDED_UFUNC) or guarded_product_call(node, GUARDED_SELECT)
            if parts is None:
                return node
            return ast.BinOp(left=parts[0], op=ast.Mult(), right=parts[1])
    return Plain().visit(tree)


def guards_outside_loops(fn):
    """The function ``fn`` (a generated ``ast.FunctionDef``, changed in place) with each
    ``zmul`` outside its loops ``zmul_select``: code that runs once gains nothing from a
    predicted branch, whose weight only changes how LLVM lays out the loops around it."""
    class Once(ast.NodeTransformer):
        def visit_For(self, node):
            return node

        visit_While = visit_For

        def visit_Call(self, node):
            self.generic_visit(node)
            parts = guarded_product_call(node)
            return node if parts is None else _guarded_product(*parts, GUARDED_SELECT)
    Once().visit(fn)
    return fn


def guards_as_branches(tree):
    """The generated code ``tree`` (changed in place) with each ``zmul(a, P)`` written
    ``(a * P if a != 0.0 else 0.0)`` (``a``, an adjoint or a tangent, is read twice), for
    a target that compiles no ``zmul``. Forward mode over such code would lose the tangent
    where ``a`` is zero (see the module's docstring): only kernels are written so."""
    class Branches(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            parts = guarded_product_call(node)
            if parts is None:
                return node
            a, p = parts
            return ast.IfExp(
                test=ast.Compare(left=_copy(_scaled_adjoint(a)), ops=[ast.NotEq()],
                                 comparators=[ast.Constant(0.0)]),
                body=ast.BinOp(left=a, op=ast.Mult(), right=p), orelse=ast.Constant(0.0))
    return Branches().visit(tree)


# ---------------------------------------------------------------------------- tables
class RuleTable(dict):
    """A table of rules (primitive -> tuple of templates, None for an operand without
    gradient) that parses each rule written as text when it is entered."""

    def __init__(self, entries=()):
        super().__init__()
        self.update(entries)

    def __setitem__(self, key, value):
        super().__setitem__(key, rule(value))

    def setdefault(self, key, value=None):
        if key not in self:
            self[key] = value
        return self[key]

    def update(self, entries=(), **kw):
        for key, value in dict(entries, **kw).items():
            self[key] = value


def check_linear(table, where):
    """Raise at import for a rule of ``table`` not linear in ``{g}`` (see
    :func:`linear_in_adjoint`)."""
    for key, r in table.items():
        for t in r:
            if t is not None and not linear_in_adjoint(t):
                raise ValueError("%s: the rule of %s, %r, is not linear in {g}: write it "
                                 "{g} * (...)" % (where, getattr(key, "__name__", key), t))
