"""Lists, typed Lists and typed Dicts: what is put into them, and which get adjoints.

Containers are changed in place (``L.append(v)``, ``d[k] = v``): a varied value put into
one makes the container varied, through every name that holds it
(:func:`grow_varied_containers`), so that what is read back out of it is never taken for
a constant. A list or typed List of floats, or a typed Dict with float values, that the
function makes and whose floats the gradient reads gets an adjoint in the reverse sweep
(:func:`container_adjoints`; emitted by ad/emit/lists.py): the values put into it get
theirs from it. What the adjoint cannot follow (removing, inserting, reading every value
at once) is refused, naming what to write instead.
"""
import operator

from numba.core import ir, types
from numba.typed import Dict as TypedDict, List as TypedList

from ..typeinfo import is_array_list, is_float_container, is_float_dict, is_float_list

_CONTAINERS = (types.List, types.ListType, types.DictType, types.Set)


def is_container(t):
    """A list, typed List, typed Dict or set: an object its methods and stores change in
    place, so that what is read out of it depends on what was put into it."""
    return isinstance(t, _CONTAINERS)


# ---------------------------------------------------------------------- varied
def container_puts(facts):
    """``[(container, [values put into it])]``: ``L.append(v)``, ``L.extend(w)``,
    ``L.insert(k, v)``, ``L[k] = v``, ``d[key] = v``, ``L += w``. Read once per function."""
    out = []
    for blk in facts.fir.blocks.values():
        for stmt in blk.body:
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)) and \
                    is_container(facts.ty(stmt.target)):
                out.append((stmt.target.name, [stmt.value.name]))
            e = stmt.value if isinstance(stmt, ir.Assign) else None
            if isinstance(e, ir.Expr) and e.op == "call":
                method = facts.def_expr(e.func.name)
                if isinstance(method, ir.Expr) and method.op == "getattr" and \
                        is_container(facts.ty(method.value)):
                    out.append((method.value.name, [a.name for a in e.args]))
            elif isinstance(e, ir.Expr) and e.op == "inplace_binop" and \
                    is_container(facts.ty(e.lhs)):
                out.append((e.lhs.name, [e.rhs.name]))
    return out


def grow_varied_containers(facts, puts, varied, depends_on_inputs):
    """Mark varied the containers (and every name that holds the same one: copies, phis)
    that a varied value is put into (``puts``: :func:`container_puts`). True when any was
    marked."""
    changed = False
    for name, values in puts:
        if not any(depends_on_inputs(v) for v in values):
            continue
        for held in _same_container(facts, name):
            if held not in varied:
                varied.add(held)
                changed = True
    return changed


def _same_container(facts, name):
    """The names that hold the object ``name`` holds: copies of it and phis over it, both
    ways."""
    group, work = {name}, [name]
    while work:
        n = work.pop()
        linked = []
        e = None if n in facts.phis else facts.def_expr(n)
        if isinstance(e, ir.Var):
            linked.append(e.name)
        elif isinstance(e, ir.Expr) and e.op == "cast":
            linked.append(e.value.name)
        if n in facts.phis:
            linked += [v.name for v in facts.phi_incoming(n).values() if isinstance(v, ir.Var)]
        for _, stmt in facts.uses.get(n, ()):
            if isinstance(stmt, ir.Assign) and (
                    isinstance(stmt.value, ir.Var) or
                    isinstance(stmt.value, ir.Expr) and stmt.value.op == "cast"):
                linked.append(stmt.target.name)
        for p in facts.phis:
            if any(isinstance(v, ir.Var) and v.name == n
                   for v in facts.phi_incoming(p).values()):
                linked.append(p)
        for m in linked:
            if m not in group and is_container(facts.ty(m)):
                group.add(m)
                work.append(m)
    return group


# ---------------------------------------------------------------------- useful
def put_into(facts, held):
    """The values put into the containers ``held`` (their names as made): their items
    when built, what ``append`` (``extend``, ``insert``) and stores ``L[k] = v``,
    ``d[k] = v`` put in."""
    out = []
    for blk in facts.fir.blocks.values():
        for stmt in blk.body:
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                if container_root(facts, stmt.target.name) in held:
                    out.append(stmt.value.name)
                continue
            e = stmt.value if isinstance(stmt, ir.Assign) else None
            if not isinstance(e, ir.Expr):
                continue
            if e.op == "build_list" and stmt.target.name in held:
                out.extend(v.name for v in e.items)
            elif e.op == "build_map" and stmt.target.name in held:
                out.extend(v.name for _, v in e.items)
            elif e.op == "call":
                method = facts.def_expr(e.func.name)
                if isinstance(method, ir.Expr) and method.op == "getattr" and \
                        container_root(facts, method.value.name) in held:
                    out.extend(a.name for a in e.args)
    return out


# ---------------------------------------------------------------------- adjoints
# Methods that leave the container's adjoint as it is, and those the adjoint follows.
_LIST_METHODS = frozenset(["count", "index", "copy", "append"])
_DICT_METHODS = frozenset(["keys", "copy"])


def container_adjoints(facts, useful, varied):
    """The lists (typed Lists) of floats and the typed Dicts of float values read
    usefully: each gets an adjoint in the reverse sweep (ad/emit/lists.py). Such a
    container is made in the function, outside any loop, and changed only by ``append``
    and stores; anything else is refused here, naming the fix."""
    out = set()
    roots = {container_root(facts, n) for n in useful if is_float_container(facts.ty(n))}
    for name in sorted(roots, key=lambda n: (n.startswith("$"), n)):   # named ones first
        label, stmt = facts.defs.get(name, (None, None))
        e = stmt.value if stmt is not None else None
        t = facts.ty(name)
        what = "list" if _is_list(t) else "Dict"
        made = isinstance(e, ir.Expr) and _made(facts, e, varied)
        if not made and is_array_list(t):
            continue        # (arrays of a list a call returns: capture/numpy_items.py)
        if not made:
            facts.error("reading floats out of %r (a %s) that it did not make; make the %s "
                        "in the function, or keep the values in an array"
                        % (name.split(".")[0], t, what),
                        stmt.loc if stmt is not None else None)
        if facts.s.depth(label) > 0:
            facts.error("making the %s %r inside a loop and reading floats out of it; make "
                        "it before the loop" % (what, name.split(".")[0]), stmt.loc)
        group = _names_of(facts, name)
        for member in group:
            for _, use in facts.uses.get(member, ()):
                done = _unsupported_use(facts, member, use, group)
                if done is not None:
                    facts.error("%s the %s %r whose floats the gradient reads; only %s "
                                "change it (keep the values in an array for anything else)"
                                % (done, what, name.split(".")[0],
                                   "append and L[k] = v" if what == "list" else "d[k] = v"),
                                use.loc)
        out.add(name)
    return frozenset(out)


def container_root(facts, name):
    """The name that made the container ``name`` holds, through copies (``M = L``)."""
    for _ in range(100):
        e = None if name in facts.phis else facts.def_expr(name)
        if isinstance(e, ir.Var):
            name = e.name
        elif isinstance(e, ir.Expr) and e.op == "cast":
            name = e.value.name
        else:
            return name
    return name


def _names_of(facts, root):
    """Every name holding the container ``root`` made (its copies)."""
    return {n for n in facts.defs if is_float_container(facts.ty(n))
            and container_root(facts, n) == root}


def _is_list(t):
    return is_float_list(t) or is_array_list(t)


def _made(facts, e, varied):
    """Does ``e`` make a container: ``[...]``, ``[0.0] * n`` (constants repeated),
    ``List()``, ``List.empty_list(t)``, ``Dict.empty(k, v)``, ``{}``, ``{k: v, ...}``?"""
    if e.op == "build_list":
        return True
    if e.op == "build_map":         # {} or {k: v, ...} (its items put in: emit/lists.py)
        return True
    if e.op == "binop" and e.fn is operator.mul:
        lists = [v for v in (e.lhs, e.rhs) if is_float_list(facts.ty(v.name))]
        return len(lists) == 1 and lists[0].name not in varied
    if e.op != "call":
        return False
    fn = facts.resolve_global(e.func)
    if fn is TypedList or fn is TypedDict:
        return True
    f = facts.def_expr(e.func.name)
    return isinstance(f, ir.Expr) and f.op == "getattr" and (
        f.attr == "empty_list" and facts.resolve_global(f.value) is TypedList or
        f.attr == "empty" and facts.resolve_global(f.value) is TypedDict)


def _unsupported_use(facts, name, stmt, group):
    """What ``stmt`` does to the container ``name`` (one of the names ``group`` of one
    container) that its adjoint cannot follow, or None."""
    t = facts.ty(name)
    if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
        return None if stmt.target.name == name else "storing"
    if isinstance(stmt, ir.DelItem):
        return "deleting from"
    e = stmt.value if isinstance(stmt, ir.Assign) else None
    if isinstance(stmt, ir.Assign) and isinstance(e, ir.Var):
        return None if stmt.target.name in group else \
            "naming again (%s = ...)" % stmt.target.name.split(".")[0]
    if not isinstance(e, ir.Expr):
        return None
    if e.op == "getattr":
        allowed = _LIST_METHODS if _is_list(t) else _DICT_METHODS
        return None if e.attr in allowed else "calling .%s on" % e.attr
    if e.op in ("getitem", "static_getitem"):
        if isinstance(facts.ty(stmt.target.name), (types.List, types.ListType)):
            return "slicing"
        return None
    if e.op in ("getiter", "build_list", "build_tuple", "cast"):
        return None if e.op != "getiter" or is_float_container(t) else \
            "iterating over"
    if e.op == "binop" and e.fn is operator.contains:
        return None
    if e.op in ("inplace_binop", "binop"):
        return "adding to or repeating"
    if e.op == "call":
        fn = facts.resolve_global(e.func)
        if fn is len:
            return None
        return "passing to %s" % getattr(fn, "__name__", "a call")
    return None
