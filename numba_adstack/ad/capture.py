"""Typed SSA Numba IR of a function, as the reverse-mode rewrite reads it.

Numba's own untyped pipeline builds the IR (bytecode -> FunctionIR -> SSA with phis); one
extra pass inlines every call to another Numba function so that the rewrite differentiates
through it; Numba's type inference then types every variable. The pipeline stops right
after typing: nothing is lowered.
"""
from numba.core import ir
from numba.core.compiler import (CompilerBase, DefaultPassBuilder, Flags, compile_extra,
                                 _EarlyPipelineCompletion)
from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass
from numba.core.untyped_passes import InlineInlinables
from numba.core.typed_passes import NopythonTypeInference
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.ir_utils import simplify_CFG
from numba.core import postproc
from numba.core.compiler_lock import global_compiler_lock

from ..errors import NonDifferentiableError

_MAX_INLINES = 200


class TypedIR:
    """What the rewrite needs: the SSA IR and the types of its variables and calls."""

    def __init__(self, func_ir, typemap, calltypes, return_type, argtypes):
        self.func_ir = func_ir
        self.typemap = typemap
        self.calltypes = calltypes
        self.return_type = return_type
        self.argtypes = argtypes


def _callee_py_func(func_ir, expr, callee_of=None):
    """The Python function of the Numba function a call expression calls, or None.
    ``callee_of`` (optional) recognises the target's own kinds of callable."""
    try:
        defn = func_ir.get_definition(expr.func)
    except Exception:
        return None
    val = getattr(defn, "value", None) if isinstance(defn, (ir.Global, ir.FreeVar)) else None
    if val is None:
        return None
    if hasattr(val, "py_func") and hasattr(val, "targetoptions"):
        return val.py_func
    return None if callee_of is None else callee_of(val)


def _drop_unused_callee_globals(func_ir):
    """Remove the loads of inlined functions that nothing calls any more (a simulator
    device function, for one, has no Numba type)."""
    used = set()
    for blk in func_ir.blocks.values():
        for stmt in blk.body:
            for v in stmt.list_vars():
                if not (isinstance(stmt, ir.Assign) and v.name == stmt.target.name):
                    used.add(v.name)
    for blk in func_ir.blocks.values():
        blk.body = [s for s in blk.body if not (
            isinstance(s, ir.Assign) and isinstance(s.value, (ir.Global, ir.FreeVar))
            and s.target.name not in used and (hasattr(s.value.value, "py_func")))]


@register_pass(mutates_CFG=True, analysis_only=False)
class InlineDispatcherCalls(FunctionPass):
    """Inline every call to a Numba dispatcher so the rewrite sees one function body."""
    _name = "numba_adstack_inline_dispatcher_calls"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        from numba.core.inline_closurecall import InlineWorker, callee_ir_validator
        worker = InlineWorker(state.typingctx, state.targetctx, state.locals, state.pipeline,
                              state.flags, validator=callee_ir_validator)
        modified = False
        count = 0
        work = list(state.func_ir.blocks.items())
        while work:
            label, block = work.pop()
            for i, stmt in enumerate(block.body):
                if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                        and stmt.value.op == "call"):
                    continue
                callee = _callee_py_func(state.func_ir, stmt.value,
                                         getattr(state.pipeline, "callee_of", None))
                if callee is None:
                    continue
                count += 1
                if count > _MAX_INLINES:
                    raise NonDifferentiableError(
                        f"{state.func_id.func_qualname}: too many nested calls to inline while "
                        f"differentiating (recursion?) at {stmt.loc.strformat()}")
                prepare = getattr(state.pipeline, "prepare", None)
                if prepare is not None:
                    callee = prepare(callee)
                _, _, _, new_blocks = worker.inline_function(state.func_ir, block, i, callee)
                work.extend(new_blocks)
                modified = True
                break
        if modified:
            _drop_unused_callee_globals(state.func_ir)
            cfg = compute_cfg_from_blocks(state.func_ir.blocks)
            for dead in cfg.dead_nodes():
                del state.func_ir.blocks[dead]
            postproc.PostProcessor(state.func_ir).run()
            state.func_ir.blocks = simplify_CFG(state.func_ir.blocks)
        return modified


@register_pass(mutates_CFG=False, analysis_only=True)
class CaptureTypedIR(FunctionPass):
    """Hand the typed IR back and end the pipeline: nothing is lowered."""
    _name = "numba_adstack_capture_typed_ir"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        raise _EarlyPipelineCompletion(TypedIR(state.func_ir, dict(state.typemap),
                                               state.calltypes, state.return_type,
                                               tuple(state.args)))


class _CapturePipeline(CompilerBase):
    # Maps each function about to be read (the root and inlined callees) to the one read.
    prepare = None
    # Maps a called object that is not a Numba dispatcher to the Python function to inline.
    callee_of = None

    def define_pipelines(self):
        untyped = DefaultPassBuilder.define_untyped_pipeline(self.state)
        pm = PassManager("numba_adstack_capture")
        pm.passes.extend(untyped.passes)
        pm.add_pass_after(InlineDispatcherCalls, InlineInlinables)
        pm.add_pass(NopythonTypeInference, "nopython frontend")
        pm.add_pass(CaptureTypedIR, "capture typed IR")
        pm.finalize()
        return [pm]


def typed_ir(py_func, argtypes, prepare=None, callee_of=None):
    """Typed SSA IR of ``py_func`` for the given Numba argument types.

    ``prepare`` (optional) maps each function about to be read (``py_func`` and every
    inlined callee) to the function actually read. ``callee_of`` (optional) maps a called
    object that is not a Numba dispatcher (a target's own device functions) to the Python
    function to inline, or None.
    """
    from numba.core.registry import cpu_target
    typingctx, targetctx = cpu_target.typing_context, cpu_target.target_context
    flags = Flags()
    flags.nrt = True
    pipeline = _CapturePipeline
    if prepare is not None or callee_of is not None:
        hooks = {"prepare": None if prepare is None else staticmethod(prepare),
                 "callee_of": None if callee_of is None else staticmethod(callee_of)}
        pipeline = type("_HookedCapturePipeline", (_CapturePipeline,), hooks)
        if prepare is not None:
            py_func = prepare(py_func)
    with global_compiler_lock:
        return compile_extra(typingctx, targetctx, py_func, tuple(argtypes), None, flags,
                             {}, pipeline_class=pipeline)
