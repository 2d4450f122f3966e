"""grad_jit as a drop-in for ``numba.njit`` and ``numba.jit(nopython=True)``: every way the
decorator is spelled (signatures, ``locals=``, ``pipeline_class=``, each target option)
against njit spelled the same way, the dispatcher's attributes against a CPUDispatcher's,
and ``NUMBA_DISABLE_JIT``.

Each row compiles one njit and one grad_jit function: the primal values must be equal,
and the gradient must match central finite differences of the njit function (so a
``pipeline_class`` that changes the program is differenced as compiled).
"""
import math

import numba
import numpy as np
import pytest
from numba.core import config, ir
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.typed_passes import NopythonTypeInference
from numba.core.untyped_passes import IRProcessing

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

from conftest import assert_grads_close, fd_grad

X = np.linspace(0.1, 0.9, 6)
A = 0.7


def body(x, a):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += math.sin(x[i] * a) * 2.0
    return acc * a


@register_pass(mutates_CFG=False, analysis_only=False)
class TwoToThree(FunctionPass):
    """A user's pass before typing: the constant 2.0 becomes 3.0."""
    _name = "test_two_to_three"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        changed = False
        for blk in state.func_ir.blocks.values():
            for st in blk.body:
                if isinstance(st, ir.Assign) and isinstance(st.value, ir.Const) \
                        and st.value.value == 2.0:
                    st.value = ir.Const(3.0, st.value.loc)
                    changed = True
        return changed


class TwoToThreePipeline(CompilerBase):
    def define_pipelines(self):
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.add_pass_after(TwoToThree, IRProcessing)
        pm.finalize()
        return [pm]


@register_pass(mutates_CFG=False, analysis_only=True)
class AfterTyping(FunctionPass):
    """A user's pass after typing (here it changes nothing; the gradient cannot know)."""
    _name = "test_after_typing"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        return False


class AfterTypingPipeline(CompilerBase):
    def define_pipelines(self):
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.add_pass_after(AfterTyping, NopythonTypeInference)
        pm.finalize()
        return [pm]


SIG = "f8(f8[:], f8)"
# (row name, positional argument or None, keywords, called from Python)
SPELLINGS = [
    ("bare", None, {}, True),
    ("signature string", SIG, {}, True),
    ("list of signatures", [SIG, "f4(f4[:], f4)"], {}, True),
    ("Signature object", numba.float64(numba.float64[:], numba.float64), {}, True),
    ("tuple of argument types", (numba.float64[::1], numba.float64), {}, True),
    ("locals", None, {"locals": {"acc": numba.float32}}, True),
    ("pipeline_class", None, {"pipeline_class": TwoToThreePipeline}, True),
    ("boundscheck and debug", None, {"boundscheck": True, "debug": True}, True),
    ("inline", None, {"inline": "always"}, False),
    ("no_cpython_wrapper", None, {"no_cpython_wrapper": True}, False),
    ("no_cfunc_wrapper, forceinline, _nrt", None,
     {"no_cfunc_wrapper": True, "forceinline": True, "_nrt": False}, True),
    ("jit(nopython=True) and target options", None,
     {"nopython": True, "fastmath": True, "nogil": True, "error_model": "numpy",
      "cache": False}, True),
]


def _decorate(jit, first, kw):
    return jit(first, **kw)(body) if first is not None else jit(**kw)(body)


def _caller(fn):
    """A jitted caller: how a function without a Python entry point (or inlined) runs."""
    return numba.njit(lambda x, a: fn(x, a))


@pytest.fixture(scope="module")
def rows():
    out = {}
    for name, first, kw, from_python in SPELLINGS:
        ours = _decorate(nad.grad_jit, first, kw)
        ref = _decorate(numba.jit if "nopython" in kw else numba.njit, first, kw)
        # (the grad_jit function, how its primal is called, the njit reference)
        out[name] = (ours, ours, ref) if from_python else \
            (ours, _caller(ours), _caller(ref))
    return out


@pytest.mark.parametrize("name", [s[0] for s in SPELLINGS])
def test_spelling_matches_njit(rows, name):
    gfn, call, ref = rows[name]
    x = X.copy()
    assert call(x, A) == ref(x, A)
    got = gfn.grad(x, A)
    # float32 locals: the accumulator's rounding is in the differences too.
    eps, tol = (1e-3, 2e-3) if name == "locals" else (1e-6, 1e-6)
    want = fd_grad(ref, (x, A), eps=eps)
    assert_grads_close(got, want, (x, A), rtol=tol, atol=tol)
    if name == "pipeline_class":
        # The user's pass ran in the capture too: 3.0, not the source's 2.0.
        np.testing.assert_allclose(got[1], fd_grad(body, (x, A))[1] * 1.5, rtol=1e-6)


def test_signatures_are_compiled_at_once_and_convert_as_njit(rows):
    gfn, _, ref = rows["signature string"]
    assert [tuple(s) for s in gfn.signatures] == [tuple(s) for s in ref.signatures]
    assert gfn.signatures and not gfn._can_compile
    # An int where the signature has a float is converted, for grad too; a C array
    # goes to the 'A' signature.
    xs = X[::2]
    np.testing.assert_allclose(gfn.grad(xs, 1)[0], fd_grad(ref, (xs, 1.0))[0], rtol=1e-6)
    assert gfn(xs, 1) == ref(xs, 1)
    assert len(gfn.signatures) == 1
    with pytest.raises(TypeError, match="No matching definition"):
        ref(X.astype(np.int64), A)
    with pytest.raises(TypeError, match=r"body\.grad: no matching definition.*f8\(f8\[:\]"
                       r"|body\.grad: no matching definition.*float64"):
        gfn.grad(X.astype(np.int64), A)


def _outcome(method, *args):
    try:
        return "returned", method(*args)
    except Exception as e:
        return type(e), str(e)


def test_dispatcher_attributes_as_on_a_cpu_dispatcher(rows, capsys):
    g, _, ref = rows["bare"]
    assert g.py_func is body and ref.py_func is body
    assert g.signatures == ref.signatures and list(g.overloads) == list(ref.overloads)
    assert g.targetoptions == ref.targetoptions
    sig = g.signatures[0]
    assert set(g.inspect_llvm()) == set(ref.inspect_llvm()) == {sig}
    assert "define" in g.inspect_llvm(sig) and g.inspect_asm(sig)
    g.inspect_types()
    assert "acc" in capsys.readouterr().out
    assert _outcome(g.parallel_diagnostics, sig) == _outcome(ref.parallel_diagnostics, sig)
    tmpl, pysig, args, _ = g.get_call_template(list(sig), {})
    theirs = ref.get_call_template(list(sig), {})
    assert [tuple(c.args) for c in tmpl.cases] == [tuple(c.args) for c in theirs[0].cases]
    assert tuple(args) == tuple(theirs[2]) == tuple(sig) and pysig == theirs[1]
    assert g.stats.cache_hits == ref.stats.cache_hits


SCALE = 2.0


def scaled(x):
    return x * x * SCALE


def test_recompile_and_disable_compile():
    global SCALE
    g, ref = nad.grad_jit(scaled), numba.njit(scaled)
    assert g.grad(1.5) == (6.0,) and g(1.5) == ref(1.5) == 4.5
    SCALE = 3.0
    try:
        assert g(1.5) == 4.5 and g.grad(1.5) == (6.0,)      # frozen, as njit's
        g.recompile()
        ref.recompile()
        assert g(1.5) == ref(1.5) == 6.75 and g.grad(1.5) == (9.0,)
        g.disable_compile()
        ref.disable_compile()
        assert g.grad(2) == (12.0,)                         # converted to float64
        with pytest.raises(TypeError):
            ref(np.ones(2))
        with pytest.raises(TypeError, match="no matching definition"):
            g.grad(np.ones(2))
    finally:
        SCALE = 2.0


def test_already_jitted_and_unknown_options():
    plain = numba.njit(fastmath=True, locals={"acc": numba.float64})(body)
    g = nad.grad_jit(plain)      # njit refuses a jitted function; grad_jit keeps its options
    assert g.targetoptions["fastmath"] is True and g.py_func is body
    assert g(X, A) == plain(X, A)
    with pytest.raises(KeyError):
        numba.njit(fastmth=True)(body)(X, A)
    with pytest.raises(TypeError, match="unknown option 'fastmth'.*fastmath"):
        nad.grad_jit(fastmth=True)
    with pytest.raises(TypeError, match="not a signature"):
        nad.grad_jit([SIG, 3])


def test_disable_jit_runs_python_and_grad_names_the_setting(monkeypatch):
    monkeypatch.setattr(config, "DISABLE_JIT", True)

    def cube(x):
        return x ** 3

    f = nad.grad_jit(SIG, fastmath=True)(cube)
    assert f is cube and numba.njit(cube) is cube
    assert f(1.5) == 3.375
    with pytest.raises(RuntimeError, match="cube.grad: NUMBA_DISABLE_JIT=1"):
        f.grad(1.5)
    with pytest.raises(RuntimeError, match="cube.value_and_grad"):
        f.value_and_grad(1.5)


def test_a_pipeline_with_passes_after_typing_is_refused_by_name():
    g = nad.grad_jit(pipeline_class=AfterTypingPipeline)(body)
    assert g(X, A) == numba.njit(pipeline_class=AfterTypingPipeline)(body)(X, A)
    with pytest.raises(NonDifferentiableError,
                       match=r"'body'.*AfterTypingPipeline.*after typing \(AfterTyping\)"):
        g.grad(X, A)
