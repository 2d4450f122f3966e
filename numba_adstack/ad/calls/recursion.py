"""Calls of recursive Numba functions: differentiated through the callee's own gradient.

The capture (:mod:`.capture`) inlines every call of a Numba function, which a function
that calls itself defeats: its depth is known only at run time. A call of a function that
calls itself (``fib``, ``fact``, a divide-and-conquer sum over an index range) is not
inlined. As a call of a helper marked ``checkpoint`` is (:mod:`.checkpoint_call`), it is
rewritten into one primitive whose value is the callee's own (compiled) result::

    w = checkpoint_pack_2(x, n)                       # the float operands, flattened
    y = recursive_call_3(fact_g, site, w, x, n)       # fact_g: grad_jit(fact)

differentiated in ``w`` only, by the callee's vjp: the callee returns a float, so the
:class:`~.backward.Backward` of ``fact_g`` for the call's argument types, seeded with the
cotangent of ``y``, gives the cotangents of all the arguments in one call
(``recursive_vjp_packed``), flattened as ``w`` is; the pack gives each operand its piece.

Inside the callee's own backward, its calls of itself are rewritten the same way, into
``recursive_self_call_<n>``, whose adjoint calls the global ``_nad_recursive_self``: the
backward itself. The name is bound in the backward's namespace once its ``numba.njit``
function exists and before it is compiled (:func:`bind`); Numba types a function that
calls itself through a global (its ``RecursiveCall``), the return type coming from the
backward's paths that do not recurse. So the recursion of the backward follows the
recursion of the function: each call's backward runs the call forward once more (its
value, by the compiled function, at every level below), then its own reverse, which calls
the backward of the calls it made. A recursion of depth ``d`` runs each level's forward up
to ``d`` times: linear recursion costs time quadratic in its depth, and no history is
stored beyond the call stack.

Forward mode takes the tangent of ``y`` as the dot product of the callee's gradient (the
same backward, seeded with 1) with the operands' tangents (:func:`packed_call`); the
packed copy ``w`` gets no tangent (:func:`forward_varied`). Second derivatives through a
recursive call (forward over the reverse) are refused.

A recursive call must pass the argument types its function was called with (the backward
calls itself for those types), up to integers of another width and arrays of another
layout, which ``recursive_as`` converts; the function takes floats, integers, booleans and
arrays of them, returns a float (or integers: then it is only called) and writes into none
of its arguments. Functions that call each other (mutual recursion) are refused, naming
them. Otherwise a ``NonDifferentiableError`` names the call and the fix.
"""
import dataclasses
import dis
import inspect
import threading
import types as pytypes
import warnings

import llvmlite.ir as ir_ll
import numpy as np
from numba.core import ir, types
from numba.core.extending import intrinsic

from ...errors import IntegerArgumentWarning, NonDifferentiableError, raise_non_differentiable
from ..capture.call_rewrite import CallRewrite
from ..capture.call_registry import register_inline_rewriter
from ..dispatch import grad_functions
from ..dispatch.backward import register_definition_hook
from ..dispatch.jitted import serial_backward
from ..generated_source import exec_source
from ..rules.array_rules import ARRAY_RULES
from ..runtime import RUNTIME
from ..tangent.jvp_source import register_varied_filter
from . import implicit
from .arity_primitives import ArityPrimitives
from .checkpoint_call import checkpoint_pack, _floats, _function, _pack_lines

#: The name by which a backward calls itself (bound by :func:`bind`).
SELF = "_nad_recursive_self"

# id(py_func) -> (py_func, grad_jit function of it), made when first used.
_HELPERS = {}
# (qualname, who, location, primal dispatcher, the capture's argument types or None for a
# call from another function) of each call site, by the number its primitive holds.
_SITES = []
_lock = threading.RLock()


# ---------------------------------------------------------------------- which calls
def _is_numba_function(obj):
    return hasattr(obj, "py_func") and hasattr(obj, "targetoptions") and \
        inspect.isfunction(getattr(obj, "py_func", None))


def _code_names(code):
    """The global names ``code`` (and the code it defines) loads: not the names of
    attributes (``poly.polydiv`` in a function named ``polydiv`` calls another)."""
    names = {ins.argval for ins in dis.get_instructions(code)
             if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            names |= _code_names(c)
    return names


def _called_functions(py_func):
    """The Python functions of the Numba functions ``py_func`` names (globals and closure
    cells): those it may call."""
    out = []
    glb = py_func.__globals__
    for name in sorted(_code_names(py_func.__code__)):
        v = glb.get(name)
        if _is_numba_function(v):
            out.append(v.py_func)
    for cell in py_func.__closure__ or ():
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        if _is_numba_function(v):
            out.append(v.py_func)
    return out


def _cycle_through(py_func, limit=200):
    """The functions of a call cycle through ``py_func`` other than itself (``[]`` when it
    only calls itself), or None when it is in none: by the names the functions use."""
    direct = _called_functions(py_func)
    # Paths py_func -> ... -> py_func through other functions (breadth first: shortest).
    seen = {id(py_func)}
    frontier = [(f, [f]) for f in direct if f is not py_func]
    while frontier and len(seen) < limit:
        nxt = []
        for f, path in frontier:
            if id(f) in seen:
                continue
            seen.add(id(f))
            for g in _called_functions(f):
                if g is py_func:
                    return path
                if id(g) not in seen:
                    nxt.append((g, path + [g]))
        frontier = nxt
    return [] if any(f is py_func for f in direct) else None


def _listed(names):
    return names[0] if len(names) == 1 else "%s and %s" % (", ".join(names[:-1]), names[-1])


def helper_of(obj):
    """The ``grad_jit`` function of the Numba function ``obj``'s Python function, made
    once: the gradient its recursive calls use (every float argument differentiated)."""
    py_func = obj.py_func
    entry = _HELPERS.get(id(py_func))
    if entry is None or entry[0] is not py_func:
        with _lock:
            entry = _HELPERS.get(id(py_func))
            if entry is None or entry[0] is not py_func:
                options = {k: v for k, v in obj.targetoptions.items()
                           if k not in ("nopython", "parallel", "boundscheck")}
                entry = _HELPERS[id(py_func)] = (py_func,
                                                 grad_functions.grad_jit(py_func, **options))
    return entry[1]


def rewrite_if_recursive(state, block, i, called, callee):
    """When the call at ``block.body[i]`` calls ``called`` (whose Python function is
    ``callee``), a Numba function that calls itself: rewrite it into the primitive of the
    module docstring and return True. Functions that call each other are refused."""
    if not _is_numba_function(called):
        return False
    cycle = _cycle_through(callee)
    if cycle is None:
        return False
    stmt = block.body[i]
    if callee.__globals__.get(SELF) is called:      # a backward calling itself
        raise_non_differentiable(state.func_id.func_qualname, _SECOND_ORDER, stmt.loc)
    if cycle:
        names = [callee.__name__] + [f.__name__ for f in cycle]
        raise_non_differentiable(
            state.func_id.func_qualname,
            "the call to %s: %s call each other (mutual recursion), whose gradient is not "
            "generated; merge them into one function that calls itself (an argument "
            "choosing what each call computes), which differentiates, or write the "
            "recursion as a loop" % (callee.__name__, _listed(names)), stmt.loc)
    own = callee is state.func_id.func
    if own and getattr(state.pipeline, "layout", None) is not None:
        raise_non_differentiable(
            state.func_id.func_qualname, "the recursive call to %s: %s takes a tuple or a "
            "function, and a recursive function is differentiated when it takes floats, "
            "integers, booleans and arrays of them (pass the items of a tuple as "
            "arguments of their own)" % (callee.__name__, callee.__name__), stmt.loc)
    own_types = tuple(types.unliteral(t) for t in state.args) if own else None
    if own and own_types not in called.overloads:
        if not called._can_compile:     # (signatures given: @jit("i8(i8)"))
            raise_non_differentiable(
                state.func_id.func_qualname, _fixed_signatures(
                    "the recursive call to %s" % callee.__name__, called, own_types),
                stmt.loc)
        # Compiled now: once the capture types the function, a compile of it for the
        # same types would re-enter the compiler.
        called.compile(own_types)
    helper = helper_of(called)
    rw = CallRewrite(state, block, i, "the recursive call to %s" % callee.__name__)
    loc, assign = rw.loc, rw.assign
    operands = rw.operands(callee, "$rec_default")
    with _lock:
        _SITES.append((rw.qualname, rw.who, loc, called, own_types))
        site = len(_SITES) - 1
    hv = assign(ir.Global(callee.__name__, helper, loc), "$rec_function")
    site_v = assign(ir.Const(site, loc), "$rec_site")
    # One backward call for all operands, through their packed copy.
    pack = checkpoint_pack(len(operands))
    pack_fn = assign(ir.Global(pack.__name__, pack, loc), "$rec_pack")
    packed = assign(ir.Expr.call(pack_fn, list(operands), (), loc), "$rec_packed")
    operands = [packed] + operands
    prim = packed_call(len(operands), own)
    fn = assign(ir.Global(prim.__name__, prim, loc), "$rec_call")
    rw.finish(ir.Expr.call(fn, [hv, site_v] + operands, (), loc))
    return True


def _fixed_signatures(who, called, argtypes):
    name = called.py_func.__name__
    return ("%s: %s is compiled for the signatures given to it only (%s), and is called "
            "with (%s); give it a signature of these types, or none"
            % (who, name, ", ".join(str(s) for s in called.nopython_signatures),
               ", ".join(map(str, argtypes))))


# ---------------------------------------------------------------------- the primitives
def _as_called(operands):
    """The operands converted to the types the function was called with (integers of
    another width, arrays of another layout: ``recursive_as``)."""
    return ", ".join("recursive_as(%s, {site}, %d)" % (a, k) for k, a in enumerate(operands))


def _self_adjoint(args, j):
    if j:
        return None
    rest = args.split(", ")[1:]
    return "recursive_pack_grads(%s(%s, float({g}), bool(0))[1], (%s,))" % (
        SELF, _as_called(rest), ", ".join(rest))


def _adjoint(args, j):
    if j:
        return None
    rest = ", ".join(args.split(", ")[1:])
    return "recursive_vjp_packed(float({g}), {f}, (%s,))" % rest


# The packed copy first, then the call's operands: y = f(a0, ...), differentiated in the
# packed copy only. From another function, and in the function's own backward.
_CALLS = ArityPrimitives(
    __name__, "recursive_call", ("f", "site"),
    lambda f, site, args: _call_impl(f, site, args[1:]), _adjoint)
_SELF_CALLS = ArityPrimitives(
    __name__, "recursive_self_call", ("f", "site"),
    lambda f, site, args: _call_impl(f, site, args[1:]), _self_adjoint)
_ALL = (_CALLS, _SELF_CALLS)


def packed_call(n, own):
    """The primitive of ``n`` operands (the packed copy and the call's), with its tangents
    for forward mode (made once): the tangent of ``y = f(a...)``, of a float, is the
    sum over the operands of the dot product of ``f``'s gradient in it with its tangent.
    The packed copy carries no tangent (:func:`forward_varied`)."""
    made = _SELF_CALLS if own else _CALLS
    fn = made.get(n)
    rule = ARRAY_RULES[fn]
    if not rule.jvps:
        ops = rule.params[2:]
        rest = ", ".join("{%s}" % p for p in ops[1:])
        ARRAY_RULES[fn] = dataclasses.replace(rule, jvps={
            p: "recursive_inner(recursive_vjp(1.0, {f}, (%s,))[%d], {d})" % (rest, k)
            for k, p in enumerate(ops[1:])})
    return fn


def __getattr__(name):
    # The primitives of a backward loaded from the disk cache, in a new process.
    for made, own in ((_CALLS, False), (_SELF_CALLS, True)):
        try:
            made.by_name(name)
        except AttributeError:
            continue
        return packed_call(int(name.rsplit("_", 1)[1]), own)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def _accepted_argument(t):
    return isinstance(t, (types.Float, types.Integer, types.Boolean)) or (
        isinstance(t, types.Array) and
        isinstance(t.dtype, (types.Float, types.Integer, types.Boolean)))


def _call_impl(f, site, args):
    """The implementation of a call primitive for these types (``args``: the call's
    operands, after the packed copy): the function's own call; None after noting a
    refusal (raised by the capture)."""
    if not (isinstance(f, types.Dispatcher) and grad_functions.is_grad_function(f.dispatcher)
            and isinstance(site, types.IntegerLiteral)):
        return None
    qualname, who, loc, primal, own_types = _SITES[site.literal_value]
    name = primal.py_func.__name__
    argtypes = tuple(types.unliteral(t) for t in args)
    bad = [str(t) for t in argtypes if not _accepted_argument(t)]
    if bad:
        implicit._refuse_while_typing(
            qualname, "%s, with an argument of type %s: a recursive function is "
            "differentiated when it takes floats, integers, booleans and arrays of them "
            "(pass the items of a tuple as arguments of their own)" % (who, ", ".join(bad)),
            loc)
        return None
    if own_types is not None and not all(
            _converts(a, b) for a, b in zip(argtypes, own_types)):
        implicit._refuse_while_typing(
            qualname, "%s passes arguments of types (%s), where %s was called with (%s): "
            "its gradient calls itself for the types it was called with (integers of "
            "another width and arrays of another layout are converted, floats of another "
            "precision are not); give the recursive call the same types (np.float64(...), "
            "or call %s with the types its recursion uses)"
            % (who, ", ".join(map(str, argtypes)), name, ", ".join(map(str, own_types)),
               name), loc)
        return None
    if argtypes not in primal.overloads:
        if not primal._can_compile:
            implicit._refuse_while_typing(qualname, _fixed_signatures(who, primal, argtypes),
                                          loc)
            return None
        primal.compile(argtypes)
    out = primal.overloads[argtypes].signature.return_type
    constant = isinstance(out, (types.Integer, types.Boolean)) or (
        isinstance(out, types.Array) and isinstance(out.dtype, (types.Integer,
                                                                types.Boolean)))
    if constant:
        # No gradient flows through an integer: only the call is made, and the rewrite
        # does not see what it writes.
        if any(isinstance(t, types.Array) for t in argtypes) and _may_write(primal.py_func):
            implicit._refuse_while_typing(
                qualname, "%s, which returns %s and may write into an array argument "
                "(it stores into an array): a recursive function is not inlined, so its "
                "writes are not seen by the gradient; compute the integers without "
                "writing into the arrays it is given (into a new array), or outside the "
                "differentiated function" % (who, out), loc)
            return None
    elif not isinstance(out, types.Float):
        implicit._refuse_while_typing(
            qualname, "%s, which returns %s: a recursive function is differentiated when "
            "it returns a float (sum an array result into the float the caller needs in "
            "the recursive function, or write the recursion as a loop)" % (who, out), loc)
        return None
    if own_types is None and not constant:
        # The backward of the callee, built now: its refusals are the capture's.
        try:
            written = backward_of(f.dispatcher, argtypes).written_args
        except NonDifferentiableError as exc:
            implicit._pending.error = exc
            raise
        if written:
            implicit._refuse_while_typing(
                qualname, "%s, which writes into its array argument(s) %s; %s"
                % (who, _names(primal.py_func, written), _WRITES_FIX), loc)
            return None
    params = ["a%d" % j for j in range(1, len(args) + 1)]
    ns = {"_h": primal, "_not_cached": not_cached}
    src = "def impl(f, site, a0, %s):\n    _not_cached()\n    return _h(%s)\n" % (
        ", ".join(params), ", ".join(params))
    return exec_source("impl", src, ns, "recursive call")


class _NotCached:
    """The object whose address :func:`not_cached` embeds."""


_NOT_CACHED = _NotCached()


@intrinsic
def not_cached(typingctx):
    """Keeps the machine code that holds it out of Numba's disk cache: code that calls a
    recursive function, reloaded from the cache in another process, can crash there
    (numba issue 6061), and a cached caller links the recursion's backward. The address
    of a Python object is embedded, as Numba does for dynamic globals, which its cache
    refuses (with a NumbaWarning naming the function)."""
    def codegen(context, builder, sig, args):
        ptr = context.add_dynamic_addr(builder, id(_NOT_CACHED), info="numba_adstack "
                                       "recursion")
        # Kept: an empty instruction with a side effect reads it.
        fnty = ir_ll.FunctionType(ir_ll.VoidType(), [ptr.type])
        builder.asm(fnty, "", "r", [ptr], side_effect=True)
        return context.get_dummy_value()
    return types.none(), codegen


_WRITES_FIX = ("the gradient of a recursive function runs each call again, so the "
               "function must not change its arguments (write into a new array, and "
               "return a float computed from it)")


def _names(py_func, positions):
    code = py_func.__code__
    return ", ".join(code.co_varnames[k] if k < code.co_argcount else str(k)
                     for k in positions)


_WRITING_METHODS = frozenset(["sort", "fill", "put", "itemset", "resize", "partition",
                              "setflags", "__setitem__"])


def _may_write(py_func):
    """Does ``py_func`` store into an array or call a method that writes into one (by its
    bytecode: a store into a new local array counts too)?"""
    for ins in dis.get_instructions(py_func):
        if ins.opname in ("STORE_SUBSCR", "STORE_SLICE") or (
                ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval in _WRITING_METHODS):
            return True
    return False


def _converts(t, want):
    """Does ``recursive_as`` convert a value of type ``t`` to ``want`` exactly?"""
    if t == want:
        return True
    if isinstance(t, (types.Integer, types.Boolean)) and isinstance(want, types.Integer):
        return True
    return isinstance(t, types.Array) and isinstance(want, types.Array) and \
        t.dtype == want.dtype and t.ndim == want.ndim and want.layout == "C" and \
        not want.readonly


def backward_of(helper, argtypes):
    """The :class:`~.backward.Backward` of the recursive function's ``grad_jit`` function
    that calls from jitted code run (serial, the memory budget's ``"fit"`` variant)."""
    with warnings.catch_warnings():
        # Its integer arguments are never differentiated: the caller's own are named.
        warnings.simplefilter("ignore", IntegerArgumentWarning)
        return serial_backward(helper, tuple(argtypes))


def forward_varied(facts, varied):
    """The values forward mode gives a tangent (``varied``), less the packed copies of
    the operands of recursive calls: a recursive call's tangent is taken from its
    operands' own (:func:`packed_call`). Forward mode over a backward that calls the
    recursion's (``hvp``, forward over reverse) is refused, naming the fixes."""
    mine = {id(made.get(n)) for made in _ALL for n in list(made._made)}
    reverse = {id(recursive_vjp), id(recursive_vjp_packed), id(recursive_pack_grads)}
    dropped = set()
    for block in facts.fir.blocks.values():
        for stmt in block.body:
            e = stmt.value if isinstance(stmt, ir.Assign) else None
            if not (isinstance(e, ir.Expr) and e.op == "call"):
                continue
            fn = facts.resolve_global(e.func)
            if id(fn) in mine and len(e.args) > 2:
                v = e.args[2]
                while isinstance(v, ir.Var) and v.name not in dropped:
                    dropped.add(v.name)
                    d = facts.def_expr(v.name)
                    v = d if isinstance(d, ir.Var) else None
            elif id(fn) in reverse and any(a.name in varied for a in e.args
                                           if isinstance(a, ir.Var)):
                raise_non_differentiable(facts.qualname, _SECOND_ORDER,
                                         facts.def_loc(stmt.target.name))
    return frozenset(v for v in varied if v not in dropped)


_SECOND_ORDER = ("a second derivative (hvp, or the gradient of a function calling .grad) "
                 "through a recursive call is not generated; take it by finite "
                 "differences of the gradient, or write the recursion as a loop")


# ---------------------------------------------------------------------- its own backward
def recursive_self(*args):
    """The backward that calls it, calling itself (Numba code only; :func:`bind`)."""
    raise NotImplementedError("%s is bound in a backward's namespace" % SELF)


RUNTIME[SELF] = recursive_self


def bind(bw, ns):
    """Bind :data:`SELF` in the namespace ``ns`` of the backward ``bw``, whose
    ``njit_fn`` exists and is not compiled yet: to ``bw.njit_fn`` itself when it gives the
    gradient of every float argument; else to the backward of the function's recursion
    helper (:func:`helper_of`) for the same types."""
    if SELF not in bw.source:
        return
    helper = _HELPERS.get(id(bw.dispatcher.py_func))
    own = helper is not None and helper[1] is bw.dispatcher
    if bw.written_args and not own:     # a helper's: refused at the call (_call_impl)
        raise_non_differentiable(
            bw.qualname, "it calls itself and writes into its array argument(s) %s; %s"
            % (_names(bw.dispatcher.py_func, bw.written_args), _WRITES_FIX))
    floats = set(bw.float_array_args) | set(bw.float_scalar_args)
    if own or (bw.layout.trivial and not bw.parallel and floats <= set(bw.wrt)):
        ns[SELF] = bw.njit_fn
    else:
        ns[SELF] = backward_of(helper_of(bw.dispatcher), bw.argtypes).njit_fn


# ---------------------------------------------------------------------- the adjoints
def recursive_vjp(g, f, args):
    """The cotangents of ``f``'s arguments at ``args`` for the cotangent ``g`` of its
    float result, one per argument (Numba code only)."""
    raise NotImplementedError("recursive_vjp is called from Numba code only")


def recursive_vjp_packed(g, f, args):
    """:func:`recursive_vjp`'s float cotangents flattened as ``checkpoint_pack`` flattens
    ``args`` (Numba code only)."""
    raise NotImplementedError("recursive_vjp_packed is called from Numba code only")


def recursive_pack_grads(grads, args):
    """The float items of the cotangents ``grads`` of ``args``, flattened as
    ``checkpoint_pack`` flattens ``args`` (Numba code only)."""
    raise NotImplementedError("recursive_pack_grads is called from Numba code only")


def recursive_as(a, site, k):
    """``a``, the ``k``-th operand of the recursive call ``site``, as the type the function
    was called with (Numba code only)."""
    raise NotImplementedError("recursive_as is called from Numba code only")


def recursive_inner(a, b):
    """The dot product of the gradient ``a`` and the tangent ``b`` (floats or arrays of
    one shape; Numba code only)."""
    raise NotImplementedError("recursive_inner is called from Numba code only")


RUNTIME["recursive_as"] = recursive_as
RUNTIME["recursive_inner"] = recursive_inner
RUNTIME["recursive_vjp"] = recursive_vjp
RUNTIME["recursive_vjp_packed"] = recursive_vjp_packed
RUNTIME["recursive_pack_grads"] = recursive_pack_grads


def _backward_call(f, args):
    bw = backward_of(f.dispatcher, tuple(types.unliteral(t) for t in args))
    reads = ", ".join("args[%d]" % j for j in range(len(args)))
    return bw, "_bw(%s, g, bool(0))[1]" % reads


def _ov_recursive_vjp(g, f, args):
    if not isinstance(args, types.BaseTuple):
        return None
    bw, call = _backward_call(f, tuple(args))
    return _function("impl", "g, f, args", ["return " + call], {"_bw": bw.njit_fn})


def _ov_recursive_vjp_packed(g, f, args):
    if not isinstance(args, types.BaseTuple):
        return None
    bw, call = _backward_call(f, tuple(args))
    argtypes = tuple(args)
    _, dtype = _floats(argtypes)
    exprs = ["_ct[%d]" % j for j in range(len(argtypes))]
    lines = ["_ct = " + call] + _pack_lines(exprs, argtypes, dtype) + ["return _w"]
    return _function("impl", "g, f, args", lines, {"_bw": bw.njit_fn, "_dt": dtype})


def _ov_recursive_pack_grads(grads, args):
    if not isinstance(args, types.BaseTuple):
        return None
    argtypes = tuple(args)
    _, dtype = _floats(argtypes)
    exprs = ["grads[%d]" % j for j in range(len(argtypes))]
    return _function("impl", "grads, args", _pack_lines(exprs, argtypes, dtype) +
                     ["return _w"], {"_dt": dtype})


def _ov_recursive_as(a, site, k):
    if not (isinstance(site, types.IntegerLiteral) and isinstance(k, types.IntegerLiteral)):
        return None
    want = _SITES[site.literal_value][4][k.literal_value]
    t = types.unliteral(a)
    if t == want:
        return lambda a, site, k: a
    if isinstance(want, types.Integer):
        return _function("impl", "a, site, k", ["return np.%s(a)" % want], {})
    return lambda a, site, k: np.ascontiguousarray(a)


def _ov_recursive_inner(a, b):
    if isinstance(a, types.Array):
        return lambda a, b: np.sum(a * b)
    return lambda a, b: a * b


def _register():
    from numba.core.extending import overload
    overload(recursive_inner, inline="always")(_ov_recursive_inner)
    overload(recursive_as, inline="always", prefer_literal=True)(_ov_recursive_as)
    overload(recursive_vjp, inline="always")(_ov_recursive_vjp)
    overload(recursive_vjp_packed, inline="always")(_ov_recursive_vjp_packed)
    overload(recursive_pack_grads, inline="always")(_ov_recursive_pack_grads)


_register()

__all__ = ["SELF", "bind", "helper_of", "recursive_pack_grads", "recursive_vjp",
           "recursive_vjp_packed", "forward_varied", "rewrite_if_recursive"]


register_inline_rewriter(rewrite_if_recursive)
register_definition_hook(bind)
register_varied_filter(forward_varied)
