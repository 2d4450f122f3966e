"""Calls whose callee Numba chooses while typing: ``@overload`` and ``@overload_method``
implementations, and the kernels of ``@vectorize`` functions.

Libraries often expose their jitted code as a Python stub that Numba implements by the
argument types (numba-stats' ``norm.logpdf(x, loc, scale)``: one implementation for an
array ``x``, another for a float), or as methods of their own Numba types. Before typing,
the capture cannot tell which implementation a call gets. So once the capture has inlined
every function it knows, a *probe* types a copy of the IR (the rest of Numba's untyped
pipeline, then type inference) and reads, for each such call, what Numba chose: the
implementation's Python function, from the template's cache of implementations by
argument types. The call is then pointed at that function (an :class:`Implementation`),
which the capture inlines like any njit callee; the implementation may call other stubs,
so the capture inlines and probes again until none is left.

Only libraries' own overloads are followed: Numba's implementations of NumPy and of the
Python builtins have adjoint rules (or are refused naming the function), and so have
numba_adstack's own primitives.
"""
import copy
import ctypes
import sys

import numba
import numpy as np

from numba.core import ir, types
from numba.core.compiler import CompilerBase, DefaultPassBuilder, Flags, compile_ir, \
    _EarlyPipelineCompletion
from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass
from numba.core.ir_utils import build_definitions
from numba.core.typed_passes import NopythonTypeInference
from numba.core.typing import templates
from numba.core.untyped_passes import InlineInlinables
from numba.np.ufunc.dufunc import DUFunc

from .loopforms import RewriteLoopForms
from ..generated_source import exec_source

# Packages whose overloads are Numba's own implementations, not a library's code; a
# target package of numba_adstack adds that of its Numba target (add_numba_package).
_OWN_PACKAGES = {"numba", "numpy", "numba_adstack", "llvmlite"}
# Python's own functions, which libraries may overload for their types: not followed.
_PYTHON = ("builtins", "math", "cmath", "operator")
_SITE = "$library_call"


def add_numba_package(name):
    """Count the top-level package ``name`` (a Numba target's) as Numba's own: its
    overloads have rules or are refused, they are not a library's code to follow."""
    _OWN_PACKAGES.add(name)


class Implementation:
    """The implementation Numba chose for one call: a Python function, inlined like the
    Python function of an njit callee."""

    def __init__(self, py_func):
        self.py_func = py_func
        self.__name__ = py_func.__name__


def _is_library_template(template):
    """Is ``template`` an ``@overload`` or ``@overload_method`` of a library?"""
    func = getattr(template, "_overload_func", None)
    if getattr(func, "__qualname__", "").startswith("register_jitable."):
        func = template.key     # its implementation is the function itself: whose is it?
    module = getattr(func, "__module__", None) or ""
    return func is not None and module.split(".")[0] not in _OWN_PACKAGES


def _is_stub(typingctx, value):
    """Is ``value`` a function a library implements with ``@overload``, or a DUFunc?"""
    if isinstance(value, DUFunc):
        return True
    package = (getattr(value, "__module__", None) or "").split(".")[0]
    if not callable(value) or package in _OWN_PACKAGES or package in _PYTHON or \
            hasattr(value, "py_func"):
        return False
    try:
        fnty = typingctx.resolve_value_type(value)
    except Exception:
        return False
    return isinstance(fnty, types.Function) and any(
        _is_library_template(t) for t in fnty.templates)


def _library_method_names():
    """Names of the methods libraries define with ``@overload_method``."""
    return {t._attr for t in templates.builtin_registry.attributes
            if getattr(t, "is_method", False) and _is_library_template(t)}


def mark_sites(state, called_object):
    """Give each call to a library stub, a DUFunc or a library method that no probe has
    seen a target of its own (``$library_call``), read back after the probe. Returns
    ``[(block, statement)]`` of the calls marked."""
    fir = state.func_ir
    methods = None
    sites = []
    for block in fir.blocks.values():
        for k, stmt in enumerate(list(block.body)):
            if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                    and stmt.value.op == "call") or stmt.target.name.startswith(_SITE):
                continue
            e = stmt.value
            value = called_object(e)
            if value is None:
                try:
                    f = fir.get_definition(e.func)
                except Exception:
                    continue
                if not (isinstance(f, ir.Expr) and f.op == "getattr"):
                    continue
                if methods is None:
                    methods = _library_method_names()
                if f.attr not in methods:
                    continue
            elif not _is_stub(state.typingctx, value):
                continue
            site = block.scope.redefine(_SITE, stmt.loc)
            copy_back = ir.Assign(site, stmt.target, stmt.loc)
            fir._definitions[stmt.target.name].remove(e)
            fir._definitions[stmt.target.name].append(site)
            fir._definitions[site.name].append(e)
            stmt.target = site
            block.body.insert(block.body.index(stmt) + 1, copy_back)
            sites.append((block, stmt))
    return sites


def resolve_sites(state, sites):
    """Point each marked call at the implementation Numba chooses for it (see the module
    docstring); the blocks holding a call so changed. Calls the probe cannot resolve stay
    as they are, and are refused later as calls without a rule."""
    probed = _probe(state)
    if probed is None:
        return []
    typemap, calltypes, probe_ir = probed
    found = {}
    for blk in probe_ir.blocks.values():
        for stmt in blk.body:
            if isinstance(stmt, ir.Assign) and stmt.target.name.startswith(_SITE):
                found[stmt.target.name] = stmt.value
    changed = []
    for block, stmt in sites:
        pe = found.get(stmt.target.name)
        if pe is None or not isinstance(pe, ir.Expr) or pe.op != "call":
            continue
        chosen = _chosen(state.typingctx, typemap, pe)
        if chosen is None:
            continue
        py_func, receiver = chosen
        e, loc = stmt.value, stmt.loc
        impl = block.scope.redefine("$library_impl", loc)
        value = ir.Global(py_func.__name__, Implementation(py_func), loc)
        block.body.insert(block.body.index(stmt), ir.Assign(value, impl, loc))
        state.func_ir._definitions[impl.name].append(value)
        if receiver:
            e.args = [state.func_ir.get_definition(e.func).value] + list(e.args)
        e.func = impl
        if block not in [b for b in changed]:
            changed.append(block)
    return changed


def _chosen(typingctx, typemap, e):
    """``(Python function, whether the receiver is its first argument)`` that Numba
    chose for the probe's call ``e``, or None."""
    ft = typemap.get(e.func.name)
    args = [typemap[a.name] for a in e.args]
    kws = [(k, typemap[v.name]) for k, v in e.kws]
    if e.vararg is not None:
        return None
    if isinstance(ft, types.Function):
        for t in ft.templates:
            if isinstance(getattr(t, "key", None), DUFunc) and not kws:
                kernel = _vectorized(typingctx, t.key, args)
                return None if kernel is None else (kernel, False)
        py_func = _from_templates(ft, args, kws)
        return None if py_func is None else (py_func, False)
    if isinstance(ft, types.BoundFunction) and _is_library_template(ft.template):
        fnty = typingctx.resolve_value_type(ft.template._overload_func)
        py_func = _from_templates(fnty, [ft.this] + args, kws)
        return None if py_func is None else (py_func, True)
    return None


# id -> (DUFunc, an njit dispatcher of its kernel), for the loops over arrays.
_KERNELS = {}


def _vectorized(typingctx, dufunc, args):
    """What a ``@vectorize`` function computes for these arguments, as a Python function:
    its scalar kernel on scalars; on arrays of one shape (and scalars), a loop applying
    the kernel to each element. None for anything else (broadcasting arrays of different
    numbers of dimensions)."""
    py_func = dufunc._dispatcher.py_func
    if all(isinstance(a, types.Number) for a in args):
        return py_func
    arrays = [k for k, a in enumerate(args) if isinstance(a, types.Array)]
    if not all(isinstance(a, (types.Number, types.Array)) for a in args) or \
            len({args[k].ndim for k in arrays}) != 1:
        return None
    elem = [a.dtype if isinstance(a, types.Array) else a for a in args]
    got = _KERNELS.get(id(dufunc))
    if got is None or got[0] is not dufunc:
        got = _KERNELS[id(dufunc)] = (dufunc, numba.njit(py_func))
    disp = got[1]
    sig = types.Dispatcher(disp).get_call_type(typingctx, elem, {})
    if sig is None or not isinstance(sig.return_type, types.Number):
        return None
    names = ["x%d" % k for k in range(len(args))]
    first = names[arrays[0]]
    lines = ["def vectorized_%s(%s):" % (dufunc.__name__, ", ".join(names))]
    for k in arrays:
        lines.append("    f%d = np.ravel(x%d)" % (k, k))
        lines.append("    if x%d.shape != %s.shape:" % (k, first))
        lines.append("        raise ValueError('@vectorize arguments of different shapes')")
    lines.append("    out = np.empty(f%d.shape[0], np.%s)" % (arrays[0], sig.return_type))
    lines.append("    for k in range(out.shape[0]):")
    lines.append("        out[k] = kernel(%s)" % ", ".join(
        "f%d[k]" % k if k in arrays else n for k, n in enumerate(names)))
    lines.append("    return out.reshape(%s.shape)" % first)
    ns = {"np": np, "kernel": disp}
    return exec_source("vectorized_" + dufunc.__name__, "\n".join(lines), ns,
                       "vectorize loop")


def _from_templates(fnty, args, kws):
    """The implementation a library template made for these argument types: the one
    Python function of its cache entries for them, or None. Entries for these very
    types, literals included, come first (``eval_spline``'s order ``k``, 1 or 3, chooses
    the code); then those for the same types but literals."""
    for same in (lambda a: a, types.unliteral):
        want = (tuple(same(a) for a in args), tuple((k, same(v)) for k, v in kws))
        out = {}
        for t in fnty.templates:
            if not _is_library_template(t):
                continue
            for key, value in list(getattr(t, "_impl_cache", {}).items()):
                disp = value[0] if isinstance(value, tuple) else None
                if disp is None or not hasattr(disp, "py_func"):
                    continue
                got = (tuple(same(a) for a in key[1]),
                       tuple((k, same(v)) for k, v in key[2]))
                if got == want:
                    out.setdefault(_same_code(disp.py_func), disp.py_func)
        if out:
            return next(iter(out.values())) if len(out) == 1 else None
    return None


def _same_code(py_func):
    """What makes two implementations the same: their code and what their closures
    hold (a template's cache may hold several made alike, one per compile options)."""
    cells = []
    for c in py_func.__closure__ or ():
        try:
            v = c.cell_contents
            hash(v)
        except (ValueError, TypeError):
            v = id(c)
        cells.append(v)
    return py_func.__code__, tuple(cells)


# ---------------------------------------------------------------------- the probe
@register_pass(mutates_CFG=False, analysis_only=True)
class _ProbeResult(FunctionPass):
    _name = "numba_adstack_library_probe_result"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        raise _EarlyPipelineCompletion((dict(state.typemap), state.calltypes,
                                        state.func_ir))


class _ProbePipeline(CompilerBase):
    """The capture's passes after inlining, up to type inference, on a copy of its IR."""

    def define_pipelines(self):
        untyped = DefaultPassBuilder.define_untyped_pipeline(self.state).passes
        at = [k for k, p in enumerate(untyped) if p[0] is InlineInlinables][0]
        pm = PassManager("numba_adstack_library_probe")
        pm.add_pass(RewriteLoopForms, "loop forms")
        pm.passes.extend(untyped[at + 1:])
        pm.add_pass(NopythonTypeInference, "nopython frontend")
        pm.add_pass(_ProbeResult, "probe result")
        pm.finalize()
        return [pm]


def _probe(state):
    """``(typemap, calltypes, IR)`` of a typed copy of the capture's IR, or None when it
    does not type (the capture's own typing then reports why)."""
    fir = state.func_ir
    twin = fir.copy()
    twin.blocks = copy.deepcopy(fir.blocks)
    twin._definitions = build_definitions(twin.blocks)
    flags = Flags()
    flags.nrt = True
    try:
        return compile_ir(state.typingctx, state.targetctx, twin, tuple(state.args), None,
                          flags, state.locals, pipeline_class=_ProbePipeline)
    except Exception:
        return None


# ---------------------------------------------------------------------- function pointers
def pointer_call_message(pointer, kind=None):
    """Why a call through a compiled function pointer (ctypes, cffi, Numba's
    ``WrapperAddressProtocol``: ``kind`` names it) is refused, naming the SciPy function
    when it is one of ``scipy.special.cython_special``'s."""
    name = cython_special_name(pointer)
    fix = ("write it in Numba, or wrap the call in an @numba.njit function and give that "
           "function its derivative with numba_adstack.custom_vjp")
    if name is not None:
        return ("a call to scipy.special.cython_special's %s through a function pointer: "
                "a compiled SciPy function with no derivative rule (%s)" % (name, fix))
    return ("a call through a compiled function pointer (%s): compiled code with no "
            "derivative rule (%s)" % (kind or type(pointer).__name__, fix))


def pointer_address(called):
    """The C address a compiled function pointer stands for (a ``WrapperAddressProtocol``
    object or a ctypes function), or None for anything else."""
    wrapper = getattr(called, "__wrapper_address__", None)
    if wrapper is not None:
        try:
            return int(wrapper())
        except Exception:
            return None
    if isinstance(called, ctypes._CFuncPtr):
        return ctypes.cast(called, ctypes.c_void_p).value
    return None


def cython_special_name(pointer):
    """The name of the scipy.special.cython_special function at ``pointer`` (an address
    or a ctypes pointer), its fused-type prefix left out; None for any other."""
    module = sys.modules.get("scipy.special.cython_special")
    if module is None or pointer is None:
        return None
    try:
        address = ctypes.cast(pointer, ctypes.c_void_p).value
    except Exception:
        return None
    from numba.extending import get_cython_function_address
    for name in getattr(module, "__pyx_capi__", {}):
        try:
            if get_cython_function_address(module.__name__, name) == address:
                return name.replace("__pyx_fuse_0", "").replace("__pyx_fuse_1", "")
        except Exception:
            continue
    return None
