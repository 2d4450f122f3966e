"""Arguments as the rewrite sees them: tuples flattened into their items, functions bound.

A Numba function may take a tuple (``params``) or another Numba function (``func``) as an
argument. The rewrite differentiates float and array arguments, and inlines the calls to
functions it knows before typing. So before the IR of the function is typed, each tuple
argument is replaced by its items (nested tuples recursively) and rebuilt with
``build_tuple`` where the argument was read, and each function argument is replaced by
the function itself: its Numba type, ``types.Dispatcher``, names the one dispatcher it
holds, and the backward is built per argument types. The backward takes the flat
arguments; the gradient is regrouped into the shape of the arguments: a tuple of
gradients for a tuple, None for a function.
"""
from numba import typeof
from numba._dispatcher import compute_fingerprint
from numba.core import ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import build_definitions

# A tree per argument: ("leaf", flat index), ("func", dispatcher) or ("tuple", [trees]).
_LEAF, _FUNC, _TUPLE = "leaf", "func", "tuple"


def _flattened(t):
    """Is ``t`` a tuple the layout takes apart? Named tuples stay whole: their fields are
    read by attribute, which the rewrite does not follow."""
    return isinstance(t, types.BaseTuple) and not isinstance(
        t, (types.NamedTuple, types.NamedUniTuple))


def is_function_type(t):
    return isinstance(t, types.Dispatcher)


class ArgLayout:
    """How the arguments of one type signature map to the flat arguments of the backward."""

    def __init__(self, argtypes, names):
        self.argtypes = tuple(argtypes)
        self.names = list(names)
        self.flat_types = []
        self.flat_names = []
        self.trees = [self._tree(t, n) for t, n in zip(self.argtypes, self.names)]
        self.trivial = all(tree[0] == _LEAF for tree in self.trees)

    def _tree(self, t, name):
        if is_function_type(t):
            return (_FUNC, t.dispatcher)
        if _flattened(t):
            return (_TUPLE, [self._tree(u, "%s_%d" % (name, k)) for k, u in enumerate(t)])
        self.flat_types.append(t)
        self.flat_names.append(name)
        return (_LEAF, len(self.flat_types) - 1)

    # -- values
    def flatten(self, args):
        """The backward's arguments for the caller's ``args``."""
        out = []

        def walk(tree, v):
            if tree[0] == _LEAF:
                out.append(v)
            elif tree[0] == _TUPLE:
                for sub, x in zip(tree[1], v):
                    walk(sub, x)
        for tree, v in zip(self.trees, args):
            walk(tree, v)
        return out

    def regroup(self, flat, wrt=None):
        """The gradient tuple, one entry per argument, from the backward's flat one; None
        for an argument outside ``wrt`` (indices of the caller's arguments)."""
        def walk(tree):
            if tree[0] == _LEAF:
                return flat[tree[1]]
            if tree[0] == _FUNC:
                return None
            return tuple(walk(sub) for sub in tree[1])
        return tuple(walk(tree) if wrt is None or k in wrt else None
                     for k, tree in enumerate(self.trees))

    def flat_wrt(self, wrt):
        """Flat argument indices for ``wrt`` (indices of the caller's arguments)."""
        if wrt is None:
            return None
        out = set()

        def walk(tree):
            if tree[0] == _LEAF:
                out.add(tree[1])
            elif tree[0] == _TUPLE:
                for sub in tree[1]:
                    walk(sub)
        for k in wrt:
            walk(self.trees[k])
        return frozenset(out)

    def leaf_paths(self):
        """For each flat argument, the path of indices that reads it from the arguments:
        ``(k,)`` for argument k itself, ``(k, 0)`` for the first item of the tuple k."""
        out = [None] * len(self.flat_types)

        def walk(tree, path):
            if tree[0] == _LEAF:
                out[tree[1]] = path
            elif tree[0] == _TUPLE:
                for j, sub in enumerate(tree[1]):
                    walk(sub, path + (j,))
        for k, tree in enumerate(self.trees):
            walk(tree, (k,))
        return out


def by_fingerprint(cache, args, build):
    """``build(argument types)``, made once per types and found again through Numba's
    fast argument fingerprints (computing ``typeof`` on every call costs more)."""
    try:
        fast = tuple(map(compute_fingerprint, args))
    except Exception:
        fast = None
    got = cache.get(fast) if fast is not None else None
    if got is None:
        got = build(tuple(typeof(a) for a in args))
        if fast is not None:
            cache[fast] = got
    return got


def layout_of(py_func, argtypes):
    """The :class:`ArgLayout` of ``py_func`` called with ``argtypes``."""
    code = py_func.__code__
    names = list(code.co_varnames[:code.co_argcount])
    return ArgLayout(argtypes, names + ["arg%d" % k for k in range(len(names), len(argtypes))])


@register_pass(mutates_CFG=False, analysis_only=False)
class SpecialiseArguments(FunctionPass):
    """Replace tuple arguments by their items and function arguments by the functions
    (:class:`ArgLayout`), before the IR is processed and typed."""
    _name = "numba_adstack_specialise_arguments"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        layout = state.pipeline.layout
        fir = state.func_ir
        taken = set(fir.arg_names) | set(fir.func_id.code.co_varnames)
        flat_names = [_fresh(n, taken) if layout.trees[k][0] != _LEAF else n
                      for k, n in _leaf_owners(layout)]
        for blk in fir.blocks.values():
            body = []
            for stmt in blk.body:
                if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Arg):
                    body.extend(_rebuild(layout, flat_names, stmt, blk.scope))
                else:
                    body.append(stmt)
            blk.body = body
        fir._definitions = build_definitions(fir.blocks)
        fir.arg_names = tuple(flat_names)
        fir.arg_count = len(flat_names)
        state.args = tuple(layout.flat_types)
        state.nargs = len(flat_names)
        return True


def _leaf_owners(layout):
    """``(argument index, flat name)`` for each flat argument."""
    owners = [None] * len(layout.flat_types)
    for flat, path in enumerate(layout.leaf_paths()):
        owners[flat] = (path[0], layout.flat_names[flat])
    return owners


def _fresh(name, taken):
    out = name
    while out in taken:
        out += "_"
    taken.add(out)
    return out


def _rebuild(layout, flat_names, stmt, scope):
    """Statements defining the argument of ``stmt`` from the flat arguments: itself, a
    tuple built from them, or the function it stands for."""
    out = []
    loc = stmt.loc

    def build(tree, target):
        if tree[0] == _LEAF:
            name = flat_names[tree[1]]
            out.append(ir.Assign(ir.Arg(name, tree[1], loc), target, loc))
        elif tree[0] == _FUNC:
            disp = tree[1]
            out.append(ir.Assign(ir.Global(disp.py_func.__name__, disp, loc), target, loc))
        else:
            items = []
            for sub in tree[1]:
                # An item read as an argument keeps the argument's name in the backward.
                v = scope.get_or_define(flat_names[sub[1]], loc) if sub[0] == _LEAF \
                    else scope.redefine("$arg_item", loc)
                build(sub, v)
                items.append(v)
            out.append(ir.Assign(ir.Expr.build_tuple(items, loc), target, loc))
    build(layout.trees[stmt.value.index], stmt.target)
    return out
