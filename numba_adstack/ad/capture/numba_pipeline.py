"""How Numba compiles generated code: a lighter pipeline, and analyses made cheaper.

The backward (and the JVP) are long, flat functions of many small statements, and the
capture (:mod:`.pipeline`) types the whole primal with its callees inlined. Numba compiles
them as it compiles any function, but three of its costs grow faster than the code:

- the passes that generated code does not need (SSA reconstruction, closure inlining,
  literal unrolling...), each walking every block (:class:`GeneratedCodeCompiler` leaves
  them out);
- the liveness analysis behind ``postproc`` and dead-code removal, run five times per
  compile: its first step (``def_reach``) gives every block the set of every variable
  defined above it, quadratic in the blocks times the variables;
- the typing of each operator call (``a * b`` on two floats), which tries every template
  of the operator, NumPy's ufunc loops included, the same way for each of thousands of
  statements, once in type inference and again in lowering, where each binary operator
  also builds and catches a typing error per operand that is not a constant.

While a function is compiled through :class:`GeneratedCodeCompiler` or captured (and
while the functions these compile in turn are compiled), :func:`cheaper_analyses` gives
the same results at less cost: liveness on bit sets of the variables read before being
written in some block (the only ones a live set can hold, so the result is the same),
the signature of a function typed on scalars, arrays and stacks (and the type of a
plain function) found again within the compile, and the ``Omitted`` type of a
non-constant operand given at once. Outside it, Numba runs unchanged. On the 292-line branchy function
(``benchmarks/branchy.py``) these took the gradient's first call from 21 s to 12 s of
CPU time; with the smaller heap-stack code (``lowering/heap.py``) and the declarations
dropped by :mod:`..emit.declarations`, to about 10 s.
"""
import contextlib
import types as pytypes

import numpy as np

from numba.core import analysis, callconv, ir, ir_utils, lowering, types
from numba.core.compiler import Compiler, DefaultPassBuilder, Flags
from numba.core.compiler_machinery import PassManager
from numba.core.targetconfig import ConfigStack
from numba.core.types import functions as _functions
from numba.core.typing.context import BaseContext

from ...typing.types import AdStackType

_state = {"depth": 0, "signatures": None, "values": None}
_numba_live_map = analysis.compute_live_map
_numba_get_call_type = _functions.BaseFunction.get_call_type
_numba_lit_or_omitted = lowering._lit_or_omitted
_numba_resolve_value_type = BaseContext.resolve_value_type
_PLAIN_FUNCTIONS = (pytypes.FunctionType, pytypes.BuiltinFunctionType)
#: Argument types whose typing depends on nothing but the type (the literal types among
#: them carry their value).
_PLAIN_TYPES = (types.Float, types.Integer, types.Boolean, types.IntegerLiteral,
                types.BooleanLiteral, types.Array, AdStackType)


def compute_live_map(cfg, blocks, var_use_map, var_def_map):
    """Numba's ``analysis.compute_live_map`` (the variables live at the entry of each
    block), with the same fix points over bit sets of the variables a live set can hold:
    those read before written in some block (live sets start from these reads and only
    shrink on the way up). Outside :func:`cheaper_analyses`: Numba's own."""
    if not _state["depth"]:
        return _numba_live_map(cfg, blocks, var_use_map, var_def_map)
    exposed = sorted(set().union(*var_use_map.values())) if var_use_map else []
    bit = {name: 1 << k for k, name in enumerate(exposed)}

    def bits(names):
        out = 0
        for name in names:
            out |= bit.get(name, 0)
        return out

    uses = {k: bits(var_use_map[k]) for k in blocks}
    defs = {k: bits(var_def_map[k]) for k in blocks}
    topo_order = cfg.topo_order()
    succs = {k: [s for s, _ in cfg.successors(k)] for k in topo_order}
    preds = {k: [p for p, _ in cfg.predecessors(k)] for k in topo_order}
    # def_reach: what is defined or used in a block or above it.
    reach = dict.fromkeys(blocks, 0)
    old = None
    while old != reach:
        old = dict(reach)
        for k in topo_order:
            reach[k] |= defs[k] | uses[k]
            for s in succs[k]:
                reach[s] |= reach[k]
    # liveness: what a block reads, and what is live below and reaches it, less its own
    # definitions.
    live = dict(uses)
    old = None
    while old != live:
        old = dict(live)
        for k in reversed(topo_order):
            for p in preds[k]:
                live[p] |= live[k] & reach[p] & ~defs[p]
    names = np.array(exposed + [""], dtype=object)
    nbytes = (len(exposed) + 8) // 8
    return {k: _names(live[k], names, nbytes) for k in blocks}


def _names(mask, names, nbytes):
    """The names of the bits set in ``mask`` (a block's live set: hundreds of names in a
    long backward, read off with NumPy rather than bit by bit)."""
    if not mask:
        return set()
    bits = np.unpackbits(np.frombuffer(mask.to_bytes(nbytes, "little"), np.uint8),
                         bitorder="little")
    return set(names[np.flatnonzero(bits[:len(names)])].tolist())


def get_call_type(self, context, args, kws):
    """Numba's ``BaseFunction.get_call_type``, remembered within a generated-code compile
    for calls on scalars, arrays and stacks (``operator.mul(float64, float64)``,
    ``math.sin``, ``pop``)."""
    memo = _state["signatures"]
    if memo is None or kws or not all(type(a) in _PLAIN_TYPES for a in args):
        return _numba_get_call_type(self, context, args, kws)
    key = (self, args, type(context))
    sig = memo.get(key)
    if sig is None:
        sig = _numba_get_call_type(self, context, args, kws)
        if sig is not None:
            memo[key] = sig
    return sig


def resolve_value_type(self, val):
    """Numba's ``BaseContext.resolve_value_type``, remembered within a generated-code
    compile for plain functions (``push``, ``math.sin``): Numba first asks ``typeof``,
    which fails on them after formatting a coloured error message, then finds their
    registered type."""
    memo = _state["values"]
    if memo is None or not isinstance(val, _PLAIN_FUNCTIONS):
        return _numba_resolve_value_type(self, val)
    key = (val, type(self))
    ty = memo.get(key)
    if ty is None:
        ty = memo[key] = _numba_resolve_value_type(self, val)
    return ty


def literal_or_omitted(value):
    """Numba's ``lowering._lit_or_omitted``, which lowering asks of both operands of every
    binary operator: an operand that is not a constant (``ir.UNDEFINED``) gets its
    ``Omitted`` type at once, not after building and catching a typing error."""
    if _state["depth"] and value is ir.UNDEFINED:
        return types.Omitted(value)
    return _numba_lit_or_omitted(value)


analysis.compute_live_map = compute_live_map
ir_utils.compute_live_map = compute_live_map
_functions.BaseFunction.get_call_type = get_call_type
BaseContext.resolve_value_type = resolve_value_type
lowering._lit_or_omitted = literal_or_omitted


@contextlib.contextmanager
def cheaper_analyses():
    """Within: the cheaper analyses above (nested compiles included). Numba compiles under
    its global compiler lock, so no other compile runs meanwhile."""
    outer = _state["depth"] == 0
    if outer:
        _state["signatures"], _state["values"] = {}, {}
    _state["depth"] += 1
    try:
        yield
    finally:
        _state["depth"] -= 1
        if outer:
            _state["signatures"] = _state["values"] = None


class AdjointCompiler(Compiler):
    """Numba's pipeline, where the generated function's own arithmetic follows NumPy's
    error model: a derivative that is infinite where the function is not (``0.5 / r`` at
    ``r == 0``) is ``inf``, not a ``ZeroDivisionError``.

    Only the function's own code: its flags keep the primal's error model, which the
    functions it calls inherit, so that Numba's implementations (``np.percentile``,
    ``np.partition``...) and the rules' helpers are the ones the primal compiled, not
    compiled again under other flags (Numba keys them by the caller's flags); this halved
    the first gradient's compile time of NumPy-heavy functions. Where the user gives an
    ``error_model``, :data:`OWN_MODEL` pipelines compile with it alone."""

    #: The error model of the generated function's own code; None: its flags'.
    own_error_model = "numpy"

    def __init__(self, typingctx, targetctx, library, args, return_type, flags, locals):
        super().__init__(typingctx, targetctx, library, args, return_type, flags, locals)
        if self.own_error_model is not None and flags.error_model != self.own_error_model:
            self.state.targetctx = self.state.targetctx.subtarget(
                error_model=callconv.create_error_model(self.own_error_model, targetctx))


class GeneratedCodeCompiler(AdjointCompiler):
    """Numba's nopython pipeline, less the passes generated code does not need, with the
    analyses of :func:`cheaper_analyses`.

    The generated backward holds no closures, ``with`` blocks, literal loops or
    inline-always calls, and their variables keep one type each by construction (adjoints
    are floats, records integers), which is all Numba's type inference needs without SSA
    (``enable_ssa`` is Numba's own flag, off for lifted loops too). The passes left out
    each walk every block, several of them running a liveness analysis quadratic in the
    blocks times the variables; on long functions they were most of the compile time."""

    def _compile_core(self):
        with cheaper_analyses():
            return super()._compile_core()

    def define_pipelines(self):
        from numba.core import typed_passes as tp, untyped_passes as up
        self.state.flags.enable_ssa = False
        pm = PassManager("numba_adstack_generated")
        if self.state.func_ir is None:
            pm.add_pass(up.TranslateByteCode, "analyzing bytecode")
            pm.add_pass(up.FixupArgs, "fix up args")
        pm.add_pass(up.IRProcessing, "processing IR")
        pm.add_pass(up.RewriteSemanticConstants, "rewrite semantic constants")
        pm.add_pass(up.GenericRewrites, "nopython rewrites")
        pm.add_pass(up.RewriteDynamicRaises, "rewrite dynamic raises")
        pm.add_pass(tp.NopythonTypeInference, "nopython frontend")
        pm.add_pass(tp.InlineOverloads, "inline overloaded functions")
        pm.add_pass(tp.NopythonRewrites, "nopython rewrites")
        lowering = DefaultPassBuilder.define_nopython_lowering_pipeline(self.state)
        pm.passes.extend(lowering.passes)
        pm.finalize()
        return [pm]


class _AdjointCompilerOwnModel(AdjointCompiler):
    own_error_model = None


class _GeneratedCodeCompilerOwnModel(GeneratedCodeCompiler):
    own_error_model = None


#: The pipelines to use where the user gave an ``error_model`` (it is the backward's too).
OWN_MODEL = {AdjointCompiler: _AdjointCompilerOwnModel,
             GeneratedCodeCompiler: _GeneratedCodeCompilerOwnModel}


def generated_code_options(options, user_options, parallel=False):
    """Numba options for a generated function: ``options`` with the pipeline that
    compiles it (Numba's whole pipeline where ``parallel``: its parfor passes expect it)."""
    out = dict(options)
    pipeline = AdjointCompiler if parallel else GeneratedCodeCompiler
    if "error_model" in user_options:
        pipeline = OWN_MODEL[pipeline]
    out.setdefault("pipeline_class", pipeline)
    return out


def primal_flags():
    """The flags ``njit`` compiles the primal with: Numba keys the implementations a
    function calls (its NumPy functions, other overloads) by the caller's flags, so that
    typing the capture reuses the primal's instead of compiling them again. Under another
    target's compile (a CUDA kernel's device function), whose flags a CPU function does
    not inherit, Numba's defaults."""
    from numba.core.cpu import CPUTargetOptions
    flags = Flags()
    top = ConfigStack.top_or_none()
    if top is None or type(top) is Flags:
        CPUTargetOptions.parse_as_flags(flags, {"nopython": True})
    else:
        flags.nrt = True
    return flags
