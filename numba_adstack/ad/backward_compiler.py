"""How Numba compiles generated code: a lighter pipeline, and two analyses made cheaper.

The backward (and the JVP) are long, flat functions of many small statements. Numba
compiles them as it compiles any function, but three of its costs grow faster than the
code:

- the passes that generated code does not need (SSA reconstruction, closure inlining,
  literal unrolling...), each walking every block (:class:`GeneratedCodeCompiler` leaves
  them out);
- the liveness analysis behind ``postproc`` and dead-code removal, run five times per
  compile: its first step (``def_reach``) gives every block the set of every variable
  defined above it, quadratic in the blocks times the variables;
- the typing of each operator call (``a * b`` on two floats), which tries every template
  of the operator, NumPy's ufunc loops included, the same way for each of thousands of
  statements, once in type inference and again in lowering.

While a function is compiled through :class:`GeneratedCodeCompiler` (and the functions its
compilation compiles in turn), :func:`generated_code_analyses` answers both with the same
result computed more cheaply: liveness with ``def_reach`` restricted to the variables read
before being written in some block (the only ones a live set can hold, so the result is
the same), and the signature of a function typed on plain scalars (floats, integers,
booleans) found again for the same argument types within the compile. Outside it, Numba
runs unchanged.
"""
import contextlib
from collections import defaultdict

from numba.core import analysis, ir_utils, types
from numba.core.compiler import Compiler, DefaultPassBuilder
from numba.core.compiler_machinery import PassManager
from numba.core.types import functions as _functions

_state = {"depth": 0, "signatures": None}
_numba_live_map = analysis.compute_live_map
_numba_get_call_type = _functions.BaseFunction.get_call_type
#: Argument types whose typing depends on nothing else (literal types are other classes).
_PLAIN_SCALARS = (types.Float, types.Integer, types.Boolean)


def compute_live_map(cfg, blocks, var_use_map, var_def_map):
    """Numba's ``analysis.compute_live_map``, with ``def_reach`` over the variables a live
    set can hold: those read before written in some block (live sets start from these
    reads and only shrink on the way up). Outside a generated-code compile: Numba's own."""
    if not _state["depth"]:
        return _numba_live_map(cfg, blocks, var_use_map, var_def_map)
    exposed = set().union(*var_use_map.values()) if var_use_map else set()
    touched = {k: (var_def_map[k] & exposed) | var_use_map[k] for k in blocks}
    topo_order = cfg.topo_order()

    def fix_point(step, sets):
        old, new = None, [len(v) for v in sets.values()]
        while old != new:
            step(sets)
            old, new = new, [len(v) for v in sets.values()]

    def def_reach(sets):
        for offset in topo_order:
            sets[offset] |= touched[offset]
            for succ, _ in cfg.successors(offset):
                sets[succ] |= sets[offset]

    def liveness(sets):
        for offset in reversed(topo_order):
            live = sets[offset]
            for pred, _ in cfg.predecessors(offset):
                sets[pred] |= (live & reach[pred]) - var_def_map[pred]

    reach = defaultdict(set)
    fix_point(def_reach, reach)
    live_map = {k: set(var_use_map[k]) for k in blocks}
    fix_point(liveness, live_map)
    return live_map


def get_call_type(self, context, args, kws):
    """Numba's ``BaseFunction.get_call_type``, remembered within a generated-code compile
    for calls on plain scalars (``operator.mul(float64, float64)``, ``math.sin``)."""
    memo = _state["signatures"]
    if memo is None or kws or not all(type(a) in _PLAIN_SCALARS for a in args):
        return _numba_get_call_type(self, context, args, kws)
    key = (self, args, type(context))
    sig = memo.get(key)
    if sig is None:
        sig = _numba_get_call_type(self, context, args, kws)
        if sig is not None:
            memo[key] = sig
    return sig


analysis.compute_live_map = compute_live_map
ir_utils.compute_live_map = compute_live_map
_functions.BaseFunction.get_call_type = get_call_type


@contextlib.contextmanager
def generated_code_analyses():
    """Within: the cheaper analyses above (nested compiles included). Numba compiles under
    its global compiler lock, so no other compile runs meanwhile."""
    outer = _state["depth"] == 0
    if outer:
        _state["signatures"] = {}
    _state["depth"] += 1
    try:
        yield
    finally:
        _state["depth"] -= 1
        if outer:
            _state["signatures"] = None


class GeneratedCodeCompiler(Compiler):
    """Numba's nopython pipeline, less the passes generated code does not need, with the
    analyses of :func:`generated_code_analyses`.

    The generated backward holds no closures, ``with`` blocks, literal loops or
    inline-always calls, and their variables keep one type each by construction (adjoints
    are floats, records integers), which is all Numba's type inference needs without SSA
    (``enable_ssa`` is Numba's own flag, off for lifted loops too). The passes left out
    each walk every block, several of them running a liveness analysis quadratic in the
    blocks times the variables; on long functions they were most of the compile time."""

    def _compile_core(self):
        with generated_code_analyses():
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
