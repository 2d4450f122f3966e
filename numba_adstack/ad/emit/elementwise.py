"""Runs of element-wise whole-array statements fused into one loop over the elements.

Whole-array code gives the backward a run of statements that each make or read arrays
of one shape: the forward's expressions kept for the reverse (``t = np.exp(a)``,
``m = f * t + c``, ``v = np.log(m)``, ``r = -np.sum(v)``), then their reverse
(``m_bar = broadcast_like(-r_bar * (1.0 / m), v)``, ``c_bar += m_bar * e``,
``f_bar += sum_of_product(m_bar, t)``, ``a_bar = acc_new(a_bar, m_bar * f * t, a)``).
As written, each statement is a pass over memory and each temporary an array. A run of
such statements at the function's top level becomes one loop over the elements, forward
and reverse together: a temporary that nothing after the run reads is a number in the
loop, a sum is a running total (in element order from ``0.0``, as ``np.sum`` adds), and
only the arrays read after the run are made.

The loop runs where a check at run time finds every array of the run 1-d, of one length,
and every array it writes apart from the others (or the same array); otherwise the
statements run as written. A statement is element-wise when it is an operator, a negation
or a one-argument NumPy ufunc of 1-d float64 arrays and numbers (or a rule's helper that
is one on arrays of the run's length: ``sum_to``, ``broadcast_like``, ``unreduce`` of a
whole sum), or the guarded product ``zmultiply`` (``zmul_select`` on the elements); a division or a power of arrays takes NumPy's meaning in the loop
(``np.divide``, ``np.power``: no exception on a zero, the same routine), as it has on the
arrays.
Scalar statements of the run go before the loop when they read nothing the loop makes,
after it otherwise; a run ends before a statement that reads a scalar made after the loop.
The results are those of the statements as written, bit for bit: the same operations on
each element, in the same order.
"""
import ast
import copy

from numba.core import types as nbtypes

from ..rules.template import GUARDED_SELECT, GUARDED_UFUNC, guarded_product_call
from .peephole import is_np_sum, is_sum_unreduce
from .syntax import walk

#: One-argument NumPy ufuncs taken element by element (on a float64 element, the same
#: function as on the array).
UFUNCS = frozenset({
    "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "arcsin",
    "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "log1p", "expm1", "log2",
    "log10", "exp2", "absolute", "abs", "negative", "square", "cbrt", "fabs"})
_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
#: Operators whose meaning on arrays the loop keeps with the ufunc on elements (no
#: exception on a zero, the same power routine).
_AS_UFUNC = {ast.Div: "divide", ast.Pow: "power"}
_REDUCTIONS = {"sum_of_product": 1, "sum_of_negated_product": -1,
               "sum_of_guarded_product": 1}
#: Fewest statements that touch arrays for a run to be fused (one is a pass already).
MIN_ARRAY_STATEMENTS = 2


def fuse_elementwise(fn, types):
    """Fuse the element-wise runs of the top level of ``fn`` (an ``ast.FunctionDef``,
    changed in place); ``types``: ``{name: Numba type}`` of the names whose type is known.
    Returns how many runs were fused."""
    taken = {n.id for n in walk(fn) if n.__class__ is ast.Name}
    taken.update(a.arg for a in fn.args.args)
    body = fn.body
    last_read = {}          # name -> the last top-level statement that reads it
    for j, s in enumerate(body):
        for name in _reads([s]):
            last_read[name] = j
    out, i, fused = [], 0, 0
    while i < len(body):
        run = _Run(types)
        j = i
        while j < len(body) and run.take(body[j]):
            j += 1
        if run.array_statements >= MIN_ARRAY_STATEMENTS and run.inputs:
            def read_after(name, end=j):
                return last_read.get(name, -1) >= end
            out.extend(run.fused(_free_prefix(taken, fused), body[i:j], read_after))
            fused += 1
            i = j
        else:
            # (a run that starts later in the statements taken ends where this one
            # does: they go as they are, and the cost stays linear)
            out.extend(body[i:max(j, i + 1)])
            i = max(j, i + 1)
    fn.body[:] = out
    return fused


def _free_prefix(taken, k):
    while True:
        prefix = "_ew%d" % k
        if not any(n.startswith(prefix) for n in taken):
            taken.add(prefix)
            return prefix
        k += 100


def _is_float_vector(t):
    return isinstance(t, nbtypes.Array) and t.ndim == 1 and t.dtype == nbtypes.float64


def _is_number(t):
    return isinstance(t, (nbtypes.Float, nbtypes.Integer)) \
        and not isinstance(t, nbtypes.Boolean)


def _is_length_shape(t):
    return isinstance(t, nbtypes.UniTuple) and t.count == 1 \
        and isinstance(t.dtype, nbtypes.Integer)


class _Run:
    """The statements of one run taken so far, and what its loop needs of them."""

    def __init__(self, types):
        self.types = types
        self.inputs = []            # arrays from before the run that the loop reads
        self.written = []           # arrays from before the run that the loop may write
        self.shapes = []            # names read for their shape only (checked too)
        self.made = set()           # arrays the run makes
        self.alias = {}             # name -> the array it names (``g = s_bar``)
        self.scalars = set()        # numbers the run's scalar statements make
        self.after = set()          # of them, those made after the loop
        self.after_reads = set()    # names the statements after the loop read
        self.loop_reads = set()     # names the loop reads
        self.steps = []             # what each statement becomes, in order
        self.array_statements = 0

    # ------------------------------------------------------------------ taking
    def take(self, s):
        """Add the statement ``s`` to the run if it fits; returns whether it did."""
        if s.__class__ is ast.Assign and len(s.targets) == 1 \
                and s.targets[0].__class__ is ast.Name:
            return self._assign(s.targets[0].id, s.value, s)
        if s.__class__ is ast.AugAssign and s.target.__class__ is ast.Name \
                and s.op.__class__ is ast.Add:
            name = s.target.id
            target = self._array(name)
            if target is not None:
                return self._add_into(target, s.value)
            if self._is_scalar_name(name) and self._scalar_expr(s.value):
                return self._scalar(name, s, augmented=True)
        return False

    def _assign(self, name, value, s):
        call = _call_name(value)
        # (``acc(a_bar, e, x)`` names its adjoint first: it adds into it)
        read = value.args[1:] if call in ("acc_new", "acc") else [value]
        if name in self.made or name in self.alias or name in self.loop_reads \
                or name in self.after_reads or any(_mentions(e, name) for e in read):
            return False
        if value.__class__ is ast.Name and self._array(value.id) is not None:
            return self._copy(name, self._array(value.id))
        if call == "sum_to" and len(value.args) == 2 \
                and value.args[0].__class__ is ast.Name:
            source = self._array(value.args[0].id)
            return source is not None and self._shape(value.args[1]) \
                and self._copy(name, source)
        if call in ("sum_to", "unreduce") and _is_float_vector(self.types.get(name)) \
                and self._element(value, arrays_needed=True) is not None:
            return self._make(name, value)      # (a new array: the expression's own)
        if call == "broadcast_like" and len(value.args) == 2:
            return self._shape(value.args[1]) \
                and self._element(value.args[0]) is not None \
                and _is_float_vector(self.types.get(name)) \
                and self._make(name, value.args[0])
        if call in ("acc_new", "acc") and len(value.args) == 3:
            into = value.args[0]
            if not (into.__class__ is ast.Name and into.id == name
                    and _is_float_vector(self.types.get(name))
                    and self._array(name) == name and name not in self.inputs
                    and self._shape(value.args[2])
                    and self._element(value.args[1], arrays_needed=True) is not None):
                return False
            self._note_reads(value.args[1])
            self.made.add(name)
            self.written.append(name)
            self.steps.append(("acc", name, value.args[1], call == "acc_new"))
            self.array_statements += 1
            return True
        if (self._is_scalar_name(name) or self.types.get(name) is None) \
                and self._scalar_expr(value):
            return self._scalar(name, s)
        return _is_float_vector(self.types.get(name)) \
            and self._element(value, arrays_needed=True) is not None \
            and self._make(name, value)

    def _copy(self, name, source):
        self.alias[name] = source
        self.steps.append(("copy", name, source))
        return True

    def _make(self, name, expr):
        self._note_reads(expr)
        self.made.add(name)
        self.steps.append(("make", name, expr))
        self.array_statements += 1
        return True

    def _add_into(self, target, expr):
        if target in self.made or self._element(expr) is None:
            return False
        self._note_reads(expr)
        if target not in self.inputs:
            self.inputs.append(target)
        if target not in self.written:
            self.written.append(target)
        self.steps.append(("add", target, expr))
        self.array_statements += 1
        return True

    def _scalar(self, name, s, augmented=False):
        reads = {n.id for n in walk(s.value) if n.__class__ is ast.Name}
        if augmented:
            reads.add(name)
        sums = [c for c in walk(s.value) if _is_sum(c)]
        for c in sums:
            reads_arrays = [self._element(a) for a in c.args]
            if None in reads_arrays or not any(reads_arrays):
                return False
        if sums or reads & self.after or name in self.loop_reads \
                or name in self.after or name in self.after_reads:
            for c in sums:
                self._note_reads(c)
            self.after.add(name)
            self.after_reads |= reads
            self.steps.append(("after", s))
            self.array_statements += bool(sums)
        else:
            self.steps.append(("before", s))
        self.scalars.add(name)
        return True

    # ------------------------------------------------------------------ reading
    def _array(self, name):
        """The array ``name`` stands for in the run (made, an alias, or from before it),
        or None where it is not a 1-d float64 array."""
        if name in self.alias:
            return self.alias[name]
        if name in self.made:
            return name
        if name not in self.scalars and _is_float_vector(self.types.get(name)):
            return name
        return None

    def _is_scalar_name(self, name):
        return name in self.scalars or (_is_number(self.types.get(name))
                                        and name not in self.made)

    def _shape(self, e):
        """Is ``e`` an array of the run, or a shape of one dimension? (Checked at run
        time to be the run's length, when it is not made by the run.)"""
        if e.__class__ is not ast.Name:
            return False
        a = self._array(e.id)
        if a is None and not (_is_length_shape(self.types.get(e.id))
                              and e.id not in self.scalars):
            return False
        a = a or e.id
        if a not in self.made and a not in self.inputs and a not in self.shapes:
            self.shapes.append(a)
        return True

    def _element(self, e, arrays_needed=False):
        """Whether the element-wise expression ``e`` reads an array, or None where the
        loop cannot take it (or, with ``arrays_needed``, where it reads none)."""
        c = e.__class__
        if c is ast.Name:
            if e.id in self.after:
                return None
            if self._array(e.id) is not None:
                return True
            reads = None if not self._is_scalar_name(e.id) else False
        elif c is ast.Constant:
            reads = False if type(e.value) in (int, float) else None
        elif c is ast.BinOp and e.op.__class__ in _OPS:
            left, right = self._element(e.left), self._element(e.right)
            reads = None if left is None or right is None else (left or right)
        elif c is ast.UnaryOp and e.op.__class__ in (ast.USub, ast.UAdd):
            reads = self._element(e.operand)
        elif c is ast.Call and _np_ufunc(e):
            reads = self._element(e.args[0])
        elif guarded_product_call(e, GUARDED_UFUNC) is not None:
            left, right = (self._element(a) for a in e.args)
            reads = None if left is None or right is None else (left or right)
        elif _call_name(e) in ("broadcast_like", "sum_to") and len(e.args) == 2 \
                and self._shape(e.args[1]):
            # (its first operand spread to the run's length, or of that length already)
            reads = None if self._element(e.args[0]) is None else True
        elif is_sum_unreduce(e) and self._shape(e.args[1]):
            # (the adjoint of a sum of all of an array: one number, spread)
            reads = None if self._element(e.args[0]) is not False else True
        elif c is ast.Compare and len(e.ops) == 1:
            # (of numbers only: a rule's ``(p == 0.0)``)
            parts = [self._element(e.left), self._element(e.comparators[0])]
            reads = False if parts == [False, False] else None
        else:
            reads = None
        return None if arrays_needed and not reads else reads

    def _scalar_expr(self, e):
        """Is ``e`` arithmetic on numbers (sums of element-wise expressions included)?"""
        c = e.__class__
        if c is ast.Name:
            return self._is_scalar_name(e.id)
        if c is ast.Constant:
            return type(e.value) in (int, float)
        if c is ast.BinOp and e.op.__class__ in _OPS:
            return self._scalar_expr(e.left) and self._scalar_expr(e.right)
        if c is ast.UnaryOp and e.op.__class__ in (ast.USub, ast.UAdd):
            return self._scalar_expr(e.operand)
        if c is ast.Call and _np_ufunc(e):
            return self._scalar_expr(e.args[0])
        if c is ast.Compare and len(e.ops) == 1:
            return self._scalar_expr(e.left) and self._scalar_expr(e.comparators[0])
        return _is_sum(e)

    def _note_reads(self, e):
        for n in walk(e):
            if n.__class__ is ast.Name and n.ctx.__class__ is ast.Load:
                self.loop_reads.add(n.id)
                a = self._array(n.id)
                if a is not None and a not in self.made and a not in self.inputs:
                    self.inputs.append(a)

    # ------------------------------------------------------------------ writing
    def fused(self, prefix, original, read_after):
        """The statements that run the loop where the check passes, the ``original``
        statements otherwise; ``read_after(name)``: is ``name`` read after the run?"""
        kept = set()            # made arrays the loop stores (read after the run)
        for step in self.steps:
            if step[0] in ("make", "acc") and read_after(step[1]):
                kept.add(step[1])
            elif step[0] == "copy" and read_after(step[1]) and step[2] in self.made:
                kept.add(step[2])
        n, i = prefix + "n", prefix + "i"
        local = {name: "%s_%s" % (prefix, name) for name in self.made}
        element = _Element(self, local, i)
        before, setup, loop, after = [], [], [], []
        for step in self.steps:
            kind = step[0]
            if kind == "before":
                before.append(step[1])
            elif kind == "make":
                name = step[1]
                loop.append(_assign(local[name], element.of(step[2])))
                if name in kept:
                    setup.append(_assign(name, _np_call("empty", [_name(n)])))
                    loop.append(_assign(_item(name, i, store=True), _name(local[name])))
            elif kind == "acc":
                _, name, expr, new = step
                # No adjoint yet (size 0): a new array holding the contribution.
                fresh = "%sf_%s" % (prefix, name)
                setup.append(_assign(fresh, ast.UnaryOp(ast.Not(), _call(
                    "length_is", [_name(name), _name(n)]))))
                setup.append(ast.If(_name(fresh), [_assign(name, _np_call(
                    "empty", [_name(n)]))], []))
                value = element.of(expr)
                first = value if new else ast.BinOp(ast.Constant(0.0), ast.Add(), value)
                loop.append(_assign(local[name], ast.IfExp(
                    _name(fresh), first,
                    ast.BinOp(_item(name, i), ast.Add(), copy.deepcopy(value)))))
                loop.append(_assign(_item(name, i, store=True), _name(local[name])))
            elif kind == "add":
                _, target, expr = step
                loop.append(ast.AugAssign(_item(target, i, store=True), ast.Add(),
                                          element.of(expr)))
            elif kind == "copy":
                _, name, source = step
                if read_after(name):
                    (after if source in self.made else before).append(
                        _assign(name, _name(source)))
            else:       # "after": its sums are running totals of the loop
                s = copy.deepcopy(step[1])
                for c in [c for c in walk(s.value) if _is_sum(c)]:
                    total = "%ss%d" % (prefix, len(setup))
                    setup.append(_assign(total, ast.Constant(0.0)))
                    loop.append(ast.AugAssign(_name(total, store=True), ast.Add(),
                                              element.of(_summand(c))))
                    _replace(s, c, _name(total))
                after.append(s)
        checks = [_call("length_is", [_name(a), _name(n)])
                  for a in self.inputs + self.shapes]
        checks += [_call("apart", [_name(w), _name(a)])
                   for w in self.written for a in self.inputs if a != w]
        guard = ast.BoolOp(ast.And(), checks) if len(checks) > 1 else checks[0]
        length = ast.Subscript(ast.Attribute(_name(self.inputs[0]), "shape", ast.Load()),
                               ast.Constant(0), ast.Load())
        loop_stmt = ast.For(_name(i, store=True), _call("range", [_name(n)]), loop, [],
                            lineno=0)
        return [_assign(n, length),
                ast.If(guard, before + setup + [loop_stmt] + after, list(original))]


def _reads(stmts):
    """The names ``stmts`` read (``g += e`` reads ``g``)."""
    out = set()
    for s in stmts:
        for n in walk(s):
            if n.__class__ is ast.Name and n.ctx.__class__ is ast.Load:
                out.add(n.id)
            elif n.__class__ is ast.AugAssign and n.target.__class__ is ast.Name:
                out.add(n.target.id)
    return out


class _Element(ast.NodeTransformer):
    """An expression of the run as the loop computes it for element ``i``: arrays made by
    the run read as the loop's locals, others by index; a division of arrays as
    ``np.divide`` (NumPy's meaning: no exception on a zero)."""

    def __init__(self, run, local, i):
        self.run, self.local, self.i = run, local, i

    def of(self, e):
        return self.visit(copy.deepcopy(e))

    def visit_Name(self, node):
        a = self.run._array(node.id)
        if a is None:
            return node
        if a in self.local:
            return _name(self.local[a])
        return _item(a, self.i)

    def visit_Call(self, node):
        if _call_name(node) in ("broadcast_like", "sum_to") or is_sum_unreduce(node):
            return self.visit(node.args[0])
        self.generic_visit(node)
        parts = guarded_product_call(node, GUARDED_UFUNC)
        if parts is not None:       # (the ufunc's kernel, on the elements)
            return _guarded(*parts)
        return node

    def visit_BinOp(self, node):
        ufunc = _AS_UFUNC.get(node.op.__class__)
        on_arrays = ufunc is not None and bool(self.run._element(node))
        self.generic_visit(node)
        if on_arrays:
            return _np_call(ufunc, [node.left, node.right])
        return node


def _guarded(a, p):
    """``zmultiply(a, p)`` of numbers: ``zmul_select(a, p)`` (no chain runs through an
    element loop's products, and selects leave it one block)."""
    return _call(GUARDED_SELECT, [a, p])


def _summand(c):
    if is_np_sum(c):
        return c.args[0]
    if _call_name(c) == "sum_of_guarded_product":
        return _guarded(*c.args)
    term = ast.BinOp(c.args[0], ast.Mult(), c.args[1])
    return ast.UnaryOp(ast.USub(), term) if _REDUCTIONS[_call_name(c)] < 0 else term


def _replace(tree, old, new):
    for n in walk(tree):
        for field in n._fields:
            v = getattr(n, field, None)
            if v is old:
                setattr(n, field, new)
            elif v.__class__ is list:
                for k, item in enumerate(v):
                    if item is old:
                        v[k] = new


def _mentions(e, name):
    return any(n.__class__ is ast.Name and n.id == name for n in walk(e))


def _call_name(e):
    if e.__class__ is ast.Call and e.func.__class__ is ast.Name:
        return e.func.id
    return None


def _np_ufunc(e):
    f = e.func
    return f.__class__ is ast.Attribute and f.attr in UFUNCS \
        and f.value.__class__ is ast.Name and f.value.id == "np" \
        and len(e.args) == 1 and not e.keywords


def _is_sum(e):
    return is_np_sum(e) or (_call_name(e) in _REDUCTIONS and len(e.args) == 2
                             and not e.keywords)


def _name(id_, store=False):
    return ast.Name(id_, ast.Store() if store else ast.Load())


def _item(array, i, store=False):
    return ast.Subscript(_name(array), _name(i), ast.Store() if store else ast.Load())


def _call(fn, args):
    return ast.Call(_name(fn), args, [])


def _np_call(fn, args):
    return ast.Call(ast.Attribute(_name("np"), fn, ast.Load()), args, [])


def _assign(target, value):
    if isinstance(target, str):
        target = _name(target, store=True)
    return ast.Assign(targets=[target], value=value, lineno=0)
