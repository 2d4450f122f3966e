"""Tuples and named tuples that functions return, as the rewrite reads them.

The rewrite follows an item of a tuple to the variable it was built from (``t[0]`` of
``t = (a, b)``: ``a``). Two ways of writing it hide that variable:

- a Numba function returning a tuple from several ``return`` statements (a solver that
  returns ``(root, iterations)`` when it converges and again after its last
  iteration): once inlined, the caller's variable is assigned in each return block and
  merged by a phi of tuples. :func:`merge_returned_tuples` assigns the items instead,
  each merged by a phi of its own, and builds the tuple once after the merge;
- a named tuple's field read by name (``res.root``): :func:`read_fields_by_index`
  reads it by its index, as ``res[0]`` is read, once the types are known;
- an array unpacked into names (``a, b, c = x``): :func:`read_unpacked_arrays` reads
  each item as ``x[k]``.

A named tuple built by calling its class (``results(x, k)``) counts as built in the
function (``facts.tuple_build``).
"""
import operator

from numba.core import ir, types


def namedtuple_class(value):
    """Is ``value`` a named tuple class (``collections.namedtuple``, ``NamedTuple``)?"""
    return isinstance(value, type) and issubclass(value, tuple) and \
        hasattr(value, "_fields")


def _built_items(func_ir, var, defined_value):
    """``(items, named tuple class or None)`` of the tuple ``var`` holds, when it is
    built in the function (``build_tuple``, or a call of a named tuple class with its
    fields by position); else None."""
    d = defined_value(var)
    if isinstance(d, ir.Expr) and d.op == "build_tuple":
        return list(d.items), None, d
    if isinstance(d, ir.Expr) and d.op == "call" and not d.kws and d.vararg is None:
        cls = defined_value(d.func)
        cls = cls.value if isinstance(cls, (ir.Global, ir.FreeVar)) else None
        if namedtuple_class(cls) and len(d.args) == len(cls._fields):
            return list(d.args), cls, d
    return None


def merge_returned_tuples(func_ir, target, inlined, after, defined_value):
    """After a callee is inlined as ``target = callee(...)`` (its blocks ``inlined``,
    continuing at block ``after``): when it returns tuples of one shape from several
    ``return`` statements, assign their items there and build ``target`` once at
    ``after`` (see the module docstring)."""
    sites = [blk for blk in inlined.values()
             if isinstance(blk.terminator, ir.Jump) and blk.terminator.target == after
             and len(blk.body) >= 2 and isinstance(blk.body[-2], ir.Assign)
             and blk.body[-2].target.name == target.name]
    if len(sites) < 2:
        return
    built = [_built_items(func_ir, blk.body[-2].value, defined_value) for blk in sites]
    if any(b is None for b in built) or len({(len(b[0]), b[1]) for b in built}) != 1:
        return
    n, cls = len(built[0][0]), built[0][1]
    loc = target.loc
    scope = sites[0].scope
    merged = [scope.redefine("$returned_item", loc) for _ in range(n)]
    for blk, (items, _, expr) in zip(sites, built):
        # Copies made where the tuple is built: what it holds, whatever the callee
        # assigns to the item variables before returning it.
        copies = _copies_at_build(func_ir, inlined, expr, items)
        if copies is None:
            return
        ret = blk.body[-2]
        func_ir._definitions[target.name] = [
            d for d in func_ir._definitions[target.name] if d is not ret.value]
        blk.body[-2:-1] = [ir.Assign(c, m, loc) for c, m in zip(copies, merged)]
        for c, m in zip(copies, merged):
            func_ir._definitions[m.name].append(c)
    cont = func_ir.blocks[after]
    new = []
    if cls is None:
        value = ir.Expr.build_tuple(list(merged), loc)
    else:
        ctor = scope.redefine("$returned_class", loc)
        glob = ir.Global(cls.__name__, cls, loc)
        new.append(ir.Assign(glob, ctor, loc))
        func_ir._definitions[ctor.name].append(glob)
        value = ir.Expr.call(ctor, list(merged), (), loc)
    new.append(ir.Assign(value, target, loc))
    func_ir._definitions[target.name].append(value)
    cont.body[0:0] = new


def _copies_at_build(func_ir, blocks, expr, items):
    """Fresh copies of ``items`` assigned right after the statement building ``expr``
    (in ``blocks``), or None when it is not found there."""
    for blk in blocks.values():
        for k, stmt in enumerate(blk.body):
            if isinstance(stmt, ir.Assign) and stmt.value is expr:
                out, assigns = [], []
                for v in items:
                    c = blk.scope.redefine("$returned_copy", stmt.loc)
                    assigns.append(ir.Assign(v, c, stmt.loc))
                    func_ir._definitions[c.name].append(v)
                    out.append(c)
                blk.body[k + 1:k + 1] = assigns
                return out
    return None


def read_fields_by_index(state):
    """``res.root`` of a named tuple ``res`` -> ``res[0]`` (typed): the rewrite follows
    items by index."""
    for blk in state.func_ir.blocks.values():
        for stmt in blk.body:
            e = stmt.value if isinstance(stmt, ir.Assign) else None
            if not (isinstance(e, ir.Expr) and e.op == "getattr"):
                continue
            t = state.typemap.get(e.value.name)
            if not isinstance(t, (types.NamedTuple, types.NamedUniTuple)) or \
                    e.attr not in t.fields:
                continue
            k = t.fields.index(e.attr)
            item = ir.Expr.static_getitem(e.value, k, None, e.loc)
            sig = state.typingctx.resolve_static_getitem(value=t, index=k)
            if sig is not None:
                state.calltypes[item] = sig
            stmt.value = item
            defs = state.func_ir._definitions[stmt.target.name]
            state.func_ir._definitions[stmt.target.name] = [
                item if d is e else d for d in defs]


def read_unpacked_arrays(state):
    """``a, b = x`` of an array ``x`` (typed): each item read ``t[k]`` of the unpacked tuple
    becomes ``x[k]``, an element (or row) read the rewrite differentiates. The unpacking
    stays where it is, and checks the length as before."""
    fir, typemap = state.func_ir, state.typemap
    for blk in fir.blocks.values():
        for stmt in list(blk.body):
            e = stmt.value if isinstance(stmt, ir.Assign) else None
            if not (isinstance(e, ir.Expr) and e.op == "static_getitem"
                    and isinstance(e.index, int)):
                continue
            d = _get(fir, e.value)
            if not (isinstance(d, ir.Expr) and d.op == "exhaust_iter"):
                continue
            at = typemap.get(d.value.name)
            if not isinstance(at, types.Array) or at.ndim < 1:
                continue
            sig = state.typingctx.resolve_function_type(operator.getitem, (at, types.intp), {})
            want = typemap.get(stmt.target.name)
            if sig is None or not (sig.return_type == want or _same_but_layout(
                    sig.return_type, want)):
                continue
            sig = sig.replace(return_type=want)     # a row: the item's layout ('A')
            index = blk.scope.redefine("$unpacked_index", stmt.loc)
            typemap[index.name] = types.intp
            const = ir.Const(e.index, stmt.loc)
            item = ir.Expr.getitem(d.value, index, stmt.loc)
            state.calltypes[item] = sig
            blk.body.insert(blk.body.index(stmt), ir.Assign(const, index, stmt.loc))
            fir._definitions[index.name] = [const]
            stmt.value = item
            fir._definitions[stmt.target.name] = [
                item if x is e else x for x in fir._definitions[stmt.target.name]]


def _same_but_layout(a, b):
    return isinstance(a, types.Array) and isinstance(b, types.Array) and \
        (a.dtype, a.ndim) == (b.dtype, b.ndim)


def returned_shape(py_func):
    """``(length, named tuple class or None)`` when every ``return`` of ``py_func``
    returns a tuple built there with one shape; else None (a float, or shapes that
    differ)."""
    from numba.core.compiler import run_frontend
    try:
        fir = run_frontend(py_func)
    except Exception:
        return None

    def defined(v):
        try:
            d = fir.get_definition(v)
        except Exception:
            return None
        while isinstance(d, ir.Expr) and d.op == "cast":
            d = _get(fir, d.value)
        return d
    shapes = set()
    for blk in fir.blocks.values():
        if isinstance(blk.terminator, ir.Return):
            built = _built_items(fir, blk.terminator.value, defined)
            if built is None:
                return None
            shapes.add((len(built[0]), built[1]))
    return shapes.pop() if len(shapes) == 1 else None


def _get(fir, v):
    try:
        return fir.get_definition(v)
    except Exception:
        return None


def root_index(shape):
    """Which item of a solver's returned tuple is the root: the field ``root`` of a named
    tuple (SciPy's and QuantEcon's results); None for any other tuple, whose items say
    nothing of which one is a root (``(x, f(x))`` of a maximiser is not)."""
    cls = shape[1] if shape is not None else None
    return cls._fields.index("root") if cls is not None and "root" in cls._fields \
        else None
