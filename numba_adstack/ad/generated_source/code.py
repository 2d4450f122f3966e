"""The backward's code as trees: statement templates parsed once, filled by substitution.

Emission writes code the way rules are written (:mod:`..rules.template`): a statement is
a template, Python with placeholders (``"{} = ensure({}, {})"``, ``"{t} += {v}"``),
parsed once into a tree; :func:`stmt` and :func:`expr` fill a copy of that tree with the
values given, each an expression tree, a name, or a number. A :class:`Lines` collects
the statements of one body, each at its nesting level, and :meth:`Lines.block` opens a
compound statement (``"if {} != 0.0:"``, ``"while {} > 0:"``, ``"else:"``) whose body
the lines written inside it are. :func:`body` nests them into the statement list a
function's tree holds, :func:`module` into a module; nothing is printed or parsed on the
way. The passes that follow (states numbered, tidying, checks) work on that tree, and
:func:`printed` prints it once: the text ``inspect_adjoint`` shows, the disk cache keeps
and Numba compiles (the package's one printer of code; :mod:`.` runs it).

This is the backward's IR: statements over named values (names are IR values, their
adjoints, records, stacks), loops and branches as nested bodies, stack pushes and pops
as the runtime's calls (``push(st, v)``, ``v = pop(st)``), rule applications as their
templates' trees filled with operand trees.
"""
import ast
import functools
import string
from contextlib import contextmanager

#: What a placeholder ``{name}`` is named in a template's tree (rule templates too,
#: :mod:`..rules.template`).
PLACEHOLDER = "_tpl_"
_MARK, _MARK_LEN = PLACEHOLDER, len(PLACEHOLDER)


class Else(ast.stmt):
    """``else:`` of the ``if``, ``for`` or ``while`` before it, at the same level."""
    _fields = ()


class Elif(ast.stmt):
    """``elif test:`` of the ``if`` (or ``elif``) before it, at the same level."""
    _fields = ("test",)


# ---------------------------------------------------------------------------- templates
def _marked(text):
    """The text of a template with each placeholder a marked name (``{}`` numbered in
    order)."""
    parts, auto = [], 0
    for literal, name, spec, conversion in string.Formatter().parse(text):
        parts.append(literal)
        if name is None:
            continue
        if name == "":
            name, auto = str(auto), auto + 1
        if spec or conversion or not (name.isidentifier() or name.isdigit()):
            raise ValueError("code template %r: {%s} is not a plain placeholder"
                             % (text, name))
        parts.append(_MARK + name)
    return "".join(parts).strip()


@functools.lru_cache(maxsize=8192)
def _template(text):
    """``(statements, heading)`` of a statement template; ``heading``: the text opens a
    block (ends with ``:``)."""
    src = _marked(text)
    heading = src.endswith(":")
    if heading:
        head = src.split(None, 1)[0].rstrip(":")
        if head == "else":
            return (Else(),), True
        if head == "elif":
            test = ast.parse(src[4:-1].strip(), mode="eval").body
            return (Elif(test=test),), True
        src += "\n    pass"
    tree = ast.parse(src).body
    if heading:
        tree[0].body = []
    return tuple(tree), heading


@functools.lru_cache(maxsize=8192)
def _expr_template(text):
    return ast.parse(_marked(text), mode="eval").body


def value(x):
    """The expression tree of ``x``: a tree (copied: trees are changed in place later),
    a name (``x``, ``np.float64``), a number, ``None``, ``Ellipsis``, or a tuple of
    these."""
    if isinstance(x, str):
        if x.isidentifier():
            return ast.Name(id=x, ctx=ast.Load())
        parts = x.split(".")
        if all(p.isidentifier() for p in parts):        # a dotted name: np.float64
            got = ast.Name(id=parts[0], ctx=ast.Load())
            for p in parts[1:]:
                got = ast.Attribute(value=got, attr=p, ctx=ast.Load())
            return got
        raise TypeError("not a name: %r (give an expression as a tree)" % (x,))
    if isinstance(x, ast.AST):
        return _copy(x)
    if isinstance(x, tuple):
        return ast.Tuple(elts=[value(v) for v in x], ctx=ast.Load())
    if isinstance(x, bool) or x is None or x is Ellipsis or isinstance(x, complex):
        return ast.Constant(x)
    if isinstance(x, (int, float)):
        if x < 0 or (x == 0 and str(x).startswith("-")):
            return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-x))
        return ast.Constant(x)
    raise TypeError("no expression for %r" % (x,))


#: Nodes with no fields of their own (contexts, operators): shared, never copied.
_SHARED = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
_Name, _Constant, _AST, _stmt = ast.Name, ast.Constant, ast.AST, ast.stmt


def _fill(node, values):
    """A copy of ``node`` with each placeholder replaced by its value's tree (none when
    ``values`` is None)."""
    cls = node.__class__
    if cls is _Name:
        i = node.id
        if values is not None and i.startswith(_MARK):
            got = value(values[i[_MARK_LEN:]])
            if hasattr(got, "ctx"):
                got.ctx = node.ctx
            return got
        return _Name(id=i, ctx=node.ctx)
    if cls is _Constant:
        return _Constant(node.value)
    if isinstance(node, _SHARED):
        return node
    new = cls.__new__(cls)
    for f in cls._fields:
        v = getattr(node, f, None)
        if v.__class__ is list:
            v = [_fill(x, values) if isinstance(x, _AST) else x for x in v]
        elif isinstance(v, _AST):
            v = _fill(v, values)
        setattr(new, f, v)
    if isinstance(new, _stmt):
        new.lineno = 0      # (the printer reads it)
    return new


def fill(tree, values):
    """A copy of the expression ``tree`` (a rule template's, see
    :mod:`..rules.template`) with each placeholder replaced by ``values[name]``, given as
    :func:`value` takes it."""
    return _fill(tree, values)


def _copy(node):
    """A copy of ``node`` (placeholders kept as they are)."""
    return _fill(node, None)


def call(func, args=(), keywords=()):
    """``func(*args, k=v, ...)``, however many arguments (each as :func:`value` takes
    it)."""
    return ast.Call(func=value(func), args=[value(a) for a in args],
                    keywords=[ast.keyword(arg=k, value=value(v)) for k, v in keywords])


def attribute(obj, name):
    """``obj.name``."""
    return ast.Attribute(value=value(obj), attr=str(name), ctx=ast.Load())


def sum_of(terms):
    """``a + b + ...`` of ``terms``, added from the left."""
    out = value(terms[0])
    for t in terms[1:]:
        out = ast.BinOp(left=out, op=ast.Add(), right=value(t))
    return out


def all_of(tests):
    """``a and b and ...`` of ``tests``."""
    if len(tests) == 1:
        return value(tests[0])
    return ast.BoolOp(op=ast.And(), values=[value(t) for t in tests])


def targets(names):
    """``a, b, ...``: the names assigned together."""
    return ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Store()) for n in names], ctx=ast.Store())


def _values(args, kw):
    out = {str(k): v for k, v in enumerate(args)}
    out.update(kw)
    return out


def stmts(tpl, *args, **kw):
    """The statements of template ``tpl`` filled with ``args`` (``{}``, ``{0}``...) and
    ``kw`` (``{name}``)."""
    trees, _ = _template(tpl)
    vals = _values(args, kw)
    return [_fill(t, vals) for t in trees]


def stmt(tpl, *args, **kw):
    """The one statement of template ``tpl``, filled (see :func:`stmts`)."""
    got = stmts(tpl, *args, **kw)
    if len(got) != 1:
        raise ValueError("code template %r is not one statement" % tpl)
    return got[0]


def expr(tpl, *args, **kw):
    """The expression of template ``tpl``, filled (see :func:`stmts`)."""
    return _fill(_expr_template(tpl), _values(args, kw))


def function_def(name, params):
    """``def name(*params):`` with an empty body (see :meth:`Lines.open`)."""
    return ast.FunctionDef(
        name=name, args=ast.arguments(
            posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None,
            kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[], decorator_list=[], returns=None, type_comment=None, lineno=0,
        **({"type_params": []} if "type_params" in ast.FunctionDef._fields else {}))


def code_key(x):
    """A key equal for equal code: a name as it is, a tree as its dump."""
    return x if isinstance(x, str) else ast.dump(value(x))


# ---------------------------------------------------------------------------- bodies
class Lines:
    """The statements of a body, each at its nesting level (``level``: where the next one
    goes). A compound statement is written with an empty body; the statements after it,
    one level deeper, are its body (see :func:`body`)."""

    def __init__(self, level=0):
        self.lines = []         # [(level, statement)]
        self.level = level

    def __call__(self, node):
        """Write one statement (a tree, or a list of them)."""
        if isinstance(node, list):
            for n in node:
                self(n)
        elif isinstance(node, ast.stmt):
            self.lines.append((self.level, node))
        else:
            raise TypeError("not a statement tree: %r" % (node,))

    def code(self, tpl, *args, **kw):
        """Write the statements of template ``tpl`` filled (:func:`stmts`)."""
        trees, heading = _template(tpl)
        if heading:
            raise ValueError("code template %r opens a block: write it with block()" % tpl)
        vals = _values(args, kw)
        for t in trees:
            self.lines.append((self.level, _fill(t, vals)))

    def block(self, tpl, *args, **kw):
        """Open the compound statement of template ``tpl`` (ending with ``:``); what is
        written inside the ``with`` is its body (``pass`` when nothing is)."""
        trees, heading = _template(tpl)
        if not heading:
            raise ValueError("code template %r does not open a block" % tpl)
        return self._opened(_fill(trees[0], _values(args, kw)))

    def arm(self, k, n, var):
        """Open arm ``k`` of ``n`` of a chain chosen by the record ``var``:
        ``if var == 0:``, ``elif var == k:``, the last one (of several) ``else:``."""
        if k == 0:
            return self.block("if {} == {}:", var, k)
        if k < n - 1:
            return self.block("elif {} == {}:", var, k)
        return self.block("else:")

    def open(self, node):
        """Open the compound statement ``node`` (a tree with an empty body), as
        :meth:`block` does."""
        return self._opened(node)

    @contextmanager
    def _opened(self, node):
        self.lines.append((self.level, node))
        self.level += 1
        try:
            yield self
        finally:
            self.level -= 1

    def mark(self):
        return len(self.lines)

    def sub(self, level):
        """Lines of the same kind, starting at ``level`` (spliced in later)."""
        return type(self)(level)

    def insert(self, mark, level, nodes):
        """Put ``nodes`` at ``level`` where :meth:`mark` was taken."""
        self.lines[mark:mark] = [(level, n) for n in nodes]

    def extend(self, other):
        self.lines.extend(other.lines)


def body(lines, level=0):
    """The statement list of ``lines`` (``(level, statement)`` pairs, the first at
    ``level``): each compound statement takes the deeper lines after it as its body;
    ``else:``/``elif`` attach to the statement before them."""
    out = []
    # (level of a body, that body, the compound statement owning it or None)
    stack = [(level, out, None)]
    last = {}       # level -> the last compound statement written at that level
    for lv, node in lines:
        while stack[-1][0] > lv:
            _close(stack.pop())
        cls = node.__class__
        if cls is Else or cls is Elif:
            owner = last[lv]
            if cls is Else:
                owner.orelse = []
                stack.append((lv + 1, owner.orelse, owner))
            else:
                nested = ast.If(test=node.test, body=[], orelse=[])
                owner.orelse = [nested]
                last[lv] = nested
                stack.append((lv + 1, nested.body, nested))
            continue
        stack[-1][1].append(node)
        if isinstance(node, (ast.If, ast.While, ast.For, ast.FunctionDef, ast.With)):
            if not hasattr(node, "orelse") or node.orelse is None:
                if not isinstance(node, (ast.FunctionDef, ast.With)):
                    node.orelse = []
            last[lv] = node
            stack.append((lv + 1, node.body, node))
    while len(stack) > 1:
        _close(stack.pop())
    return out


def _close(entry):
    # Python needs a statement in a block.
    _, stmts_, owner = entry
    if owner is not None and not stmts_:
        stmts_.append(ast.Pass())


def top_statements(lines):
    """How many statements ``lines`` holds at its first level (an ``else:`` is part of
    the statement before it)."""
    return sum(1 for lv, node in lines.lines
               if lv == lines.level and node.__class__ not in (Else, Elif))


# ---------------------------------------------------------------------------- printing
def module(lines):
    """The module tree of ``lines`` (a :class:`Lines`)."""
    return ast.Module(body=body(lines.lines), type_ignores=[])


def printed(tree):
    """The source of the module ``tree``: what ``inspect_adjoint`` shows, the disk cache
    keeps and Numba compiles."""
    return ast.unparse(tree) + "\n"


def printed_expression(tree):
    """The text of an expression ``tree`` (shown in the comments of the generated code)."""
    return ast.unparse(value(tree))
