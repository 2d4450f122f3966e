"""Typed SSA Numba IR of a function, as the reverse-mode rewrite reads it.

Numba's own untyped pipeline builds the IR (bytecode -> FunctionIR -> SSA with phis); one
extra pass inlines every call to another Numba function so that the rewrite differentiates
through it; Numba's type inference then types every variable. The pipeline stops right
after typing: nothing is lowered.

Functions as values: the arguments of the function may first be specialised
(:mod:`.specialize`: tuples taken apart, function arguments replaced by the functions
they hold). The inlining pass then follows a called variable to the function it holds
(through copies, inlined arguments and items of built tuples), expands ``f(x, *args)``
when the length of ``args`` is known, and leaves the calls that a later phase registered
(:func:`.call_registry.register_call_rewriter`: a solver marked ``implicit_root``, a helper marked
``checkpoint``, a derivative called in the function; ad/calls/) to that phase. What it
cannot follow is refused with ``NonDifferentiableError``.
"""
import inspect
import operator
import types as pytypes

import numba

from numba.core import ir
from numba.core.compiler import (Compiler, CompilerBase, DefaultPassBuilder, compile_extra,
                                 _EarlyPipelineCompletion)
from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass
from numba.core.untyped_passes import FindLiterallyCalls, FixupArgs, InlineInlinables
from numba.core.typed_passes import NopythonTypeInference
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.ir_utils import build_definitions, simplify_CFG
from numba.core import postproc
from numba.core.compiler_lock import global_compiler_lock
from numba.core.types import WrapperAddressProtocol
from numba.core import errors, types

from . import generators, library_calls, stencils, tuples
from .numpy_items import rewrite_items
from ..rules import CALL_RULES
from ..rules.array_rules import rule_of
from ...errors import NonDifferentiableError
from ...errors import raise_non_differentiable
from .accumulators import RewriteElementAccumulators
from .user_pipeline import passes_before_typing
from .literal_items import RewriteLiteralItems
from .loopforms import RewriteLoopForms
from .plain_builtins import RewritePlainBuiltins
from .ir_emitter import RefusingPass
from .call_registry import (CALL_REWRITERS, INLINE_REWRITERS, PRIMITIVE_TESTS,
                            typing_failed)
from . import writes
from .writes import RewriteWrites, ScalarInPlaceSites, scalar_sites
from .numba_pipeline import cheaper_analyses, primal_flags
from .specialize import SpecialiseArguments

_MAX_INLINES = 200

class TypedIR:
    """What the rewrite needs: the SSA IR and the types of its variables and calls."""

    def __init__(self, func_ir, typemap, calltypes, return_type, argtypes):
        self.func_ir = func_ir
        self.typemap = typemap
        self.calltypes = calltypes
        self.return_type = return_type
        self.argtypes = argtypes


def _defined_value(func_ir, var):
    """What ``var`` holds when it is known before typing: the ``Global``, ``FreeVar``,
    ``Const``, ``Arg`` or expression it copies, looking through copies and through items
    of tuples built in the function (``funcs[0]`` of ``funcs = (f, g)``); else None."""
    for _ in range(100):
        try:
            defn = func_ir.get_definition(var)
        except Exception:
            return None
        if isinstance(defn, ir.Expr) and defn.op == "getattr":
            # mod.f as the Global of f; any other attribute (h.grad) as itself.
            return _module_attribute(func_ir, defn) or defn
        if isinstance(defn, ir.Expr) and defn.op in ("static_getitem", "getitem"):
            idx = defn.index if defn.op == "static_getitem" else _constant(func_ir,
                                                                            defn.index)
            tup = _defined_value(func_ir, defn.value)
            if isinstance(tup, ir.Expr) and tup.op == "build_tuple" and \
                    isinstance(idx, int) and -len(tup.items) <= idx < len(tup.items):
                var = tup.items[idx]
                continue
            return None
        return defn
    return None


def _module_attribute(func_ir, expr):
    """``mod.f`` and ``mod.sub.f`` (``getattr`` on a module read as a global), as the
    ``Global`` of the attribute's value: Numba reads module attributes when it compiles,
    as it reads globals; None for an attribute of anything else."""
    base = _defined_value(func_ir, expr.value)
    if not (isinstance(base, (ir.Global, ir.FreeVar))
            and isinstance(base.value, pytypes.ModuleType)):
        return None
    try:
        value = getattr(base.value, expr.attr)
    except AttributeError:
        return None
    return ir.Global("%s.%s" % (base.name, expr.attr), value, expr.loc)


def _constant(func_ir, var):
    defn = _defined_value(func_ir, var)
    return defn.value if isinstance(defn, (ir.Const, ir.Global, ir.FreeVar)) else None


def _called_object(func_ir, expr):
    """The Python object a call expression calls, when known before typing, or None."""
    defn = _defined_value(func_ir, expr.func)
    if isinstance(defn, (ir.Global, ir.FreeVar)):
        return defn.value
    return None


def _is_dispatcher(val):
    return hasattr(val, "py_func") and hasattr(val, "targetoptions")


def _callee_py_func(func_ir, expr, callee_of=None):
    """The Python function of the Numba function a call expression calls, or None.
    ``callee_of`` (optional) recognises the target's own kinds of callable."""
    val = _called_object(func_ir, expr)
    if val is None or _called_as_is(val):
        return None
    if _is_dispatcher(val) or isinstance(val, library_calls.Implementation):
        return val.py_func
    return None if callee_of is None else callee_of(val)


def _called_as_is(val):
    """Is ``val`` a primitive of the rewrite: marked so, or a Numba function with a rule
    of its own (rules/special.py's digamma, met when forward mode runs over a backward)?"""
    if any(test(val) for test in PRIMITIVE_TESTS):
        return True
    try:
        return val in CALL_RULES or rule_of(val) is not None
    except TypeError:                  # unhashable
        return False


def _tuple_items(func_ir, var, argtypes, depth=0):
    """``[(tuple variable, index), ...]``: where each item of the tuple ``var`` is read,
    when its length is known before typing, else None. Python builds the tuple of
    ``f(x, *args)`` as ``(x,) + tuple(args)``: concatenations and ``tuple()`` are taken
    apart, so that each item is read from a tuple the rewrite sees being built."""
    try:
        defn = func_ir.get_definition(var)
    except Exception:
        return None
    if depth > 50:
        return None
    if isinstance(defn, ir.Expr) and defn.op == "build_tuple":
        return [(var, k) for k in range(len(defn.items))]
    if isinstance(defn, (ir.Const, ir.Global, ir.FreeVar)) and isinstance(defn.value, tuple):
        return [(var, k) for k in range(len(defn.value))]
    if isinstance(defn, ir.Arg) and defn.index < len(argtypes) and \
            isinstance(argtypes[defn.index], types.BaseTuple):
        return [(var, k) for k in range(len(argtypes[defn.index]))]
    if isinstance(defn, ir.Expr) and defn.op == "cast":
        # What an inlined function returns.
        return _tuple_items(func_ir, defn.value, argtypes, depth + 1)
    if isinstance(defn, ir.Expr) and defn.op == "binop" and defn.fn is operator.add:
        lhs = _tuple_items(func_ir, defn.lhs, argtypes, depth + 1)
        rhs = _tuple_items(func_ir, defn.rhs, argtypes, depth + 1)
        return None if lhs is None or rhs is None else lhs + rhs
    if isinstance(defn, ir.Expr) and defn.op == "call" and len(defn.args) == 1 and \
            not defn.kws and defn.vararg is None and _called_object(func_ir, defn) is tuple:
        return _tuple_items(func_ir, defn.args[0], argtypes, depth + 1)
    return None


def _expand_vararg(state, block, i):
    """``f(x, *args)`` -> ``f(x, args[0], args[1])`` when the length of ``args`` is known
    (Numba's inliner takes no ``*args``); returns the number of statements inserted before
    the call, or None when the length is unknown."""
    fir = state.func_ir
    stmt = block.body[i]
    e = stmt.value
    where = _tuple_items(fir, e.vararg, tuple(state.args))
    if where is None:
        return None
    new, items = [], []
    for tup, k in where:
        v = block.scope.redefine("$vararg_item", e.loc)
        item = ir.Expr.static_getitem(tup, k, None, e.loc)
        new.append(ir.Assign(item, v, e.loc))
        fir._definitions[v.name].append(item)
        items.append(v)
    e.args = list(e.args) + items
    e.vararg = None
    block.body[i:i] = new
    return len(new)


def _drop_unused_callee_globals(func_ir):
    """Remove the loads of inlined functions, and the copies of them that inlining leaves
    (a function passed as an argument), that nothing calls any more: a simulator device
    function, for one, has no Numba type."""
    while True:
        used = set()
        for blk in func_ir.blocks.values():
            for stmt in blk.body:
                for v in stmt.list_vars():
                    if not (isinstance(stmt, ir.Assign) and v.name == stmt.target.name):
                        used.add(v.name)
        dropped = False
        for blk in func_ir.blocks.values():
            keep = [s for s in blk.body if not (
                isinstance(s, ir.Assign) and s.target.name not in used
                and _is_function_value(func_ir, s.value))]
            dropped |= len(keep) != len(blk.body)
            blk.body = keep
        if not dropped:
            return


def _is_function_value(func_ir, value):
    """A function, or a module it was read from (``mod`` of ``mod.f``)."""
    if isinstance(value, (ir.Global, ir.FreeVar)):
        return hasattr(value.value, "py_func") or isinstance(value.value, pytypes.ModuleType)
    if isinstance(value, ir.Var) or (isinstance(value, ir.Expr) and value.op == "getattr"):
        defn = _defined_value(func_ir, value) if isinstance(value, ir.Var) else \
            _module_attribute(func_ir, value)
        return isinstance(defn, (ir.Global, ir.FreeVar)) and (
            hasattr(defn.value, "py_func") or isinstance(defn.value, pytypes.ModuleType))
    return False


def _star_args_as_tuple(state, block, i, callee):
    """The callee as Numba's inliner can bind it. Numba's inliner binds plain and keyword
    parameters only; a callee declared ``f(x, *args)`` (Numba types ``args`` as a tuple)
    is read as the same code taking ``args`` as a plain parameter, and the call passes
    its extra positional arguments as a tuple built at the call."""
    sig = inspect.signature(callee)
    params = list(sig.parameters.values())
    loc = block.body[i].loc
    for p in params:
        if p.kind == p.VAR_KEYWORD:
            _refuse(state, "calling %s, which takes **%s (keyword arguments are not "
                    "inlined)" % (callee.__name__, p.name), loc)
    star = [p for p in params if p.kind == p.VAR_POSITIONAL]
    if not star:
        return callee
    if any(p.kind == p.KEYWORD_ONLY for p in params):
        _refuse(state, "calling %s, which takes keyword-only parameters after *%s"
                % (callee.__name__, star[0].name), loc)
    e = block.body[i].value
    try:
        bound = sig.bind(*e.args, **dict(e.kws))
    except TypeError as exc:
        _refuse(state, "calling %s: %s" % (callee.__name__, exc), loc)
    items = list(bound.arguments.pop(star[0].name, ()))
    tup = block.scope.redefine("$star_args", loc)
    build = ir.Expr.build_tuple(items, loc)
    block.body.insert(i, ir.Assign(build, tup, loc))
    state.func_ir._definitions[tup.name].append(build)
    # Every argument by keyword: the parameters left out keep their defaults.
    e.args = []
    e.kws = list(bound.arguments.items()) + [(star[0].name, tup)]
    code = callee.__code__
    plain = code.replace(co_argcount=code.co_argcount + 1,
                         co_flags=code.co_flags & ~inspect.CO_VARARGS)
    # The defaults stay on their parameters; the tuple's default is empty.
    out = pytypes.FunctionType(plain, callee.__globals__, callee.__name__,
                               (callee.__defaults__ or ()) + ((),), callee.__closure__)
    out.__qualname__ = callee.__qualname__
    return out


def _refuse(state, what, loc):
    raise_non_differentiable(state.func_id.func_qualname, what, loc)


def _callee_name(func_ir, expr):
    val = _called_object(func_ir, expr)
    return getattr(val, "__name__", None) or getattr(
        getattr(val, "py_func", None), "__name__", "a function")


@register_pass(mutates_CFG=True, analysis_only=False)
class InlineDispatcherCalls(RefusingPass):
    """Inline every call to a Numba dispatcher so the rewrite sees one function body:
    functions read as globals, passed as arguments or picked out of tuples, called with
    their arguments or with ``*args``; a solver marked ``implicit_root`` is replaced by
    its implicit derivative (ad/calls/implicit.py)."""
    _name = "numba_adstack_inline_dispatcher_calls"

    def _run(self, state):
        from numba.core.inline_closurecall import InlineWorker, callee_ir_validator
        worker = InlineWorker(state.typingctx, state.targetctx, state.locals, state.pipeline,
                              state.flags, validator=callee_ir_validator)
        worker._compiler_pipeline = _untyped_for_inlining
        # Rebuilt: Numba's bytecode translation leaves some loads (the ``tuple`` of
        # ``f(*args)``) out of them.
        state.func_ir._definitions = build_definitions(state.func_ir.blocks)
        modified = False
        count = [0]
        work = list(state.func_ir.blocks.items())
        while work:
            while work:
                label, block = work.pop()
                new_blocks = self._inline_first(state, worker, block, count)
                if new_blocks is not None:
                    work.extend(new_blocks)
                    modified = True
            _read_literally_as_its_argument(state.func_ir)
            # Calls whose implementation Numba chooses while typing (library_calls),
            # found by typing a copy of the IR: without the functions inlined already.
            _drop_unused_callee_globals(state.func_ir)
            sites = library_calls.mark_sites(state, lambda e: _called_object(
                state.func_ir, e))
            if sites:
                modified = True
                work = [(None, b) for b in library_calls.resolve_sites(state, sites)]
        modified |= rewrite_items(state.func_ir)
        if modified:
            _drop_unused_callee_globals(state.func_ir)
            cfg = compute_cfg_from_blocks(state.func_ir.blocks)
            for dead in cfg.dead_nodes():
                del state.func_ir.blocks[dead]
            postproc.PostProcessor(state.func_ir).run()
            state.func_ir.blocks = simplify_CFG(state.func_ir.blocks)
        return modified

    def _inline_first(self, state, worker, block, count):
        """Inline the first call to a Numba function in ``block``; the blocks to look at
        next, or None when the block calls none."""
        fir = state.func_ir
        i = 0
        while i < len(block.body):
            stmt = block.body[i]
            if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                    and stmt.value.op == "call"):
                i += 1
                continue
            e = stmt.value
            if e.vararg is not None:
                added = _expand_vararg(state, block, i)
                if added is None:
                    if _callee_py_func(fir, e, getattr(state.pipeline, "callee_of", None)):
                        _refuse(state, "calling %s with *args whose length is not known "
                                "before typing (build the tuple in the function)"
                                % _callee_name(fir, e), e.loc)
                    i += 1
                    continue
                i += added
            called = _called_object(fir, e)
            if any(rewrite(state, block, i, e, called, lambda v: _defined_value(fir, v),
                           lambda v: _tuple_items(fir, v, tuple(state.args)))
                   for rewrite in CALL_REWRITERS):
                return [(None, block)]
            callee = _callee_py_func(fir, e, getattr(state.pipeline, "callee_of", None))
            if callee is None:
                i += 1
                continue
            if getattr(state.pipeline, "prepare", None) is None and any(
                    rewrite(state, block, i, _called_object(fir, e), callee)
                    for rewrite in INLINE_REWRITERS):
                return [(None, block)]
            count[0] += 1
            if count[0] > _MAX_INLINES:
                _refuse(state, "the call to %s nests more than %d calls deep, as a recursive "
                        "function does: a function that calls itself by its own name is "
                        "differentiated, not a recursion through other calls (a function "
                        "passed as an argument); call the recursive function by its name, "
                        "or write the recursion as a loop (the values it would keep on its "
                        "call stack in an array)"
                        % (getattr(callee, "__name__", callee), _MAX_INLINES), stmt.loc)
            prepare = getattr(state.pipeline, "prepare", None)
            if prepare is not None:
                callee = prepare(callee)
            n = len(block.body)
            callee = _star_args_as_tuple(state, block, i, callee)
            i += len(block.body) - n
            def refuse(what):
                _refuse(state, what, stmt.loc)
            if callee.__code__.co_flags & inspect.CO_GENERATOR:
                return generators.inline_loop_over(worker, fir, block, i, callee, refuse)
            try:
                _, inlined, _, new_blocks = worker.inline_function(fir, block, i, callee)
            except (errors.UnsupportedError, NotImplementedError) as exc:
                refuse("the call to %s cannot be inlined (%s)" % (
                    callee.__name__, str(exc).splitlines()[0].strip()))
            except errors.TypingError:
                if "objmode" not in callee.__code__.co_names:
                    raise
                # Numba lifts the block out of the callee, which then cannot be inlined.
                refuse("the call to %s, which has a `with numba.objmode()` block: object "
                       "mode has no derivative, and a block in a called function is not "
                       "run as the function's own are; move the block into the "
                       "differentiated function, or give %s a derivative with "
                       "numba_adstack.custom_vjp" % (callee.__name__, callee.__name__))
            tuples.merge_returned_tuples(fir, stmt.target, inlined, new_blocks[0][0],
                                         lambda v: _defined_value(fir, v))
            return new_blocks
        return None


def _read_literally_as_its_argument(func_ir):
    """``k = numba.literally(v)`` in an inlined callee becomes ``k = v``: ``v`` is the call
    site's constant, which keeps its literal type through a copy (the call would type
    its result as a plain integer or string, and the overloads that read the literal
    would fail)."""
    func_ir._definitions = build_definitions(func_ir.blocks)
    for blk in func_ir.blocks.values():
        for stmt in blk.body:
            e = stmt.value if isinstance(stmt, ir.Assign) else None
            if isinstance(e, ir.Expr) and e.op == "call" and len(e.args) == 1 \
                    and not e.kws and _defined_value(func_ir, e.func) is not None \
                    and _global_of(func_ir, e.func) is numba.literally:
                stmt.value = e.args[0]
    func_ir._definitions = build_definitions(func_ir.blocks)


def _global_of(func_ir, var):
    d = _defined_value(func_ir, var)
    return d.value if isinstance(d, (ir.Global, ir.FreeVar)) else None


def _untyped_for_inlining(state):
    """Numba's untyped pipeline for a callee about to be inlined, less its search for
    ``numba.literally(k)`` of an argument (``interpolation``'s ``eval_spline``): the
    argument is the call site's value, a constant once inlined, and the pipeline of the
    function around it checks it then."""
    pm = DefaultPassBuilder.define_untyped_pipeline(state)
    pm.passes = [p for p in pm.passes if p[0] is not FindLiterallyCalls]
    return pm


@register_pass(mutates_CFG=False, analysis_only=True)
class CaptureTypedIR(FunctionPass):
    """Hand the typed IR back and end the pipeline: nothing is lowered."""
    _name = "numba_adstack_capture_typed_ir"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        try:
            _check_calls(state)
        except NonDifferentiableError as exc:
            raise _EarlyPipelineCompletion(exc)
        tuples.read_fields_by_index(state)
        tuples.read_unpacked_arrays(state)
        if getattr(state.pipeline, "stencils", False):
            stencils.rewrite_stencils(state.func_ir, state.typemap, state.calltypes,
                                      state.typingctx)
        wrongly_rebound = scalar_sites(state.func_ir, state.typemap) & writes.REBOUND
        if wrongly_rebound:
            raise _EarlyPipelineCompletion(ScalarInPlaceSites(wrongly_rebound))
        raise _EarlyPipelineCompletion(TypedIR(state.func_ir, dict(state.typemap),
                                               state.calltypes, state.return_type,
                                               tuple(state.args)))


def _check_calls(state):
    """Refuse a call to a Numba function that is still there after inlining: one chosen
    at run time (``f = g if c else h``), which the rewrite cannot see into."""
    for blk in state.func_ir.blocks.values():
        for stmt in blk.body:
            if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                    and stmt.value.op == "call"):
                continue
            t = state.typemap.get(stmt.value.func.name)
            if isinstance(t, types.ObjModeDispatcher):
                continue        # a `with numba.objmode()` block: run as it is (checks.py)
            if isinstance(t, types.Dispatcher) and not _called_as_is(t.dispatcher):
                through = stmt.value.func.name
                through = "a value" if through.startswith("$") else \
                    "%r" % through.split(".")[0]
                _refuse(state, "a call to the Numba function %s through %s, which is not "
                        "known before the function runs (pass the function itself, as an "
                        "argument or a global)" % (t.dispatcher.py_func.__name__, through),
                        stmt.loc)
            elif isinstance(t, types.ExternalFunctionPointer):
                _refuse(state, library_calls.pointer_call_message(
                    _called_object(state.func_ir, stmt.value)), stmt.loc)
            elif isinstance(t, (types.FunctionType, types.UndefinedFunctionType)):
                called = _called_object(state.func_ir, stmt.value)
                if isinstance(called, WrapperAddressProtocol):    # a global C function
                    _refuse(state, library_calls.pointer_call_message(
                        called.__wrapper_address__(), type(called).__name__), stmt.loc)
                _refuse(state, "a call to a function value chosen at run time (%s); call "
                        "the @numba.njit function itself" % t, stmt.loc)


class _CapturePipeline(CompilerBase):
    # How the arguments are specialised (tuples flattened, functions bound), or None.
    layout = None
    # Maps each function about to be read (the root and inlined callees) to the one read.
    prepare = None
    # Maps a called object that is not a Numba dispatcher to the Python function to inline.
    callee_of = None
    # The function's own ``pipeline_class`` (njit's), or None for Numba's.
    user_pipeline = None
    # Stencil expressions in loops made primitives (:mod:`.stencils`): the backward's.
    stencils = False

    def define_pipelines(self):
        pm = PassManager("numba_adstack_capture")
        pm.passes.extend(passes_before_typing(self, self.user_pipeline))
        pm.add_pass_after(InlineDispatcherCalls, InlineInlinables)
        pm.add_pass_after(RewriteLoopForms, InlineDispatcherCalls)
        pm.add_pass_after(RewriteLiteralItems, RewriteLoopForms)
        pm.add_pass_after(RewriteWrites, RewriteLiteralItems)
        pm.add_pass_after(RewritePlainBuiltins, RewriteWrites)
        pm.add_pass_after(RewriteElementAccumulators, RewritePlainBuiltins)
        if self.layout is not None:
            pm.add_pass_after(SpecialiseArguments, FixupArgs)
        pm.add_pass(NopythonTypeInference, "nopython frontend")
        pm.add_pass(CaptureTypedIR, "capture typed IR")
        pm.finalize()
        return [pm]

    def _compile_core(self):
        # Numba's untyped passes run their liveness analysis on the whole function.
        with cheaper_analyses():
            return super()._compile_core()


def typed_ir(py_func, argtypes, prepare=None, callee_of=None, layout=None, locals=None,
             pipeline_class=None, stencils=False):
    """Typed SSA IR of ``py_func`` for the given Numba argument types.

    ``layout`` (optional, a :class:`.specialize.ArgLayout` of ``argtypes``): the IR takes
    the flat arguments of the layout instead, its tuple arguments taken apart and its
    function arguments bound.
    ``prepare`` (optional) maps each function about to be read (``py_func`` and every
    inlined callee) to the function actually read. ``callee_of`` (optional) maps a called
    object that is not a Numba dispatcher (a target's own device functions) to the Python
    function to inline, or None. ``locals``: the types of locals, as ``njit(locals=)``.
    ``pipeline_class``: the function's own, as ``njit(pipeline_class=)``; its passes
    before typing run in the capture too. ``stencils``: whole-array stencil expressions
    in loops are made primitives with a one-pass pullback (:mod:`.stencils`).
    """
    from numba.core.registry import cpu_target
    typingctx, targetctx = cpu_target.typing_context, cpu_target.target_context
    flags = primal_flags()
    pipeline = _CapturePipeline
    user = pipeline_class if pipeline_class not in (None, Compiler) else None
    if prepare is not None or callee_of is not None or layout is not None or user \
            or stencils:
        hooks = {"prepare": None if prepare is None else staticmethod(prepare),
                 "callee_of": None if callee_of is None else staticmethod(callee_of),
                 "layout": layout, "user_pipeline": user, "stencils": stencils}
        pipeline = type("_HookedCapturePipeline", (_CapturePipeline,), hooks)
        if prepare is not None:
            py_func = prepare(py_func)
    with global_compiler_lock:
        out = _compile(typingctx, targetctx, py_func, argtypes, flags, pipeline, locals)
        if isinstance(out, ScalarInPlaceSites):
            # operator.iadd(a, b)... on numbers: typed again without rebinding ``a``.
            pipeline = type("_CapturePipeline", (pipeline,),
                            {"scalar_inplace_sites": out.sites})
            out = _compile(typingctx, targetctx, py_func, argtypes, flags, pipeline, locals)
    if isinstance(out, (NonDifferentiableError, ScalarInPlaceSites)):
        raise out
    return out


def _compile(typingctx, targetctx, py_func, argtypes, flags, pipeline, locals=None):
    writes.REBOUND.clear()
    locals = dict(locals or {})
    try:
        return compile_extra(typingctx, targetctx, py_func, tuple(argtypes), None, flags,
                             locals, pipeline_class=pipeline)
    except errors.TypingError:
        typing_failed()
        if not writes.REBOUND or \
                getattr(pipeline, "scalar_inplace_sites", None) is _EVERY_SITE:
            raise
        # (A rebinding of an integer to a float result may not type at all.)
        pipeline = type("_CapturePipeline", (pipeline,),
                        {"scalar_inplace_sites": _EVERY_SITE})
        try:
            return compile_extra(typingctx, targetctx, py_func, tuple(argtypes), None,
                                 flags, locals, pipeline_class=pipeline)
        except errors.TypingError:
            typing_failed()
        raise


class _Every:
    def __contains__(self, site):
        return True


_EVERY_SITE = _Every()
