"""The real-program workloads (benchmarks/workloads_real.py): every hand-written adjoint
against central finite differences of the primal at quick sizes, the hand-written VJP
and JVP of the array-returning program against finite differences and against each
other, and the JAX versions (benchmarks/peers/jax_real.py) against the hand-written
ones when JAX is importable. No grad_jit here."""
import numpy as np
import pytest

from benchmarks.measure import compare
from benchmarks.workloads import finite_difference_check
from benchmarks.workloads_real import REAL_WORKLOADS, ArrayWorkload

# black_scholes_2m is black_scholes at another full size: the same at the quick sizes
NAMES = [n for n in REAL_WORKLOADS if n != "black_scholes_2m"]
ARRAY_NAMES = [n for n, w in REAL_WORKLOADS.items() if isinstance(w, ArrayWorkload)]


@pytest.mark.parametrize("name", NAMES)
def test_hand_gradient_matches_finite_differences(name):
    w = REAL_WORKLOADS[name]
    args = w.make_args(quick=True)
    grads = w.hand_grad_jit(*args)
    assert len(grads) == len(args)
    for k, g in enumerate(grads):
        if k in w.wrt:
            assert g is not None
            if isinstance(args[k], np.ndarray):
                assert np.shape(g) == args[k].shape
        else:
            assert g is None, (k, g)
    # every entry of every differentiated argument (quick sizes are small)
    assert finite_difference_check(w, args, grads, max_entries=10_000) == []


@pytest.mark.parametrize("name", NAMES)
def test_primal_compiled_equals_python(name):
    w = REAL_WORKLOADS[name]
    args = w.make_args(quick=True)
    assert np.isclose(w.primal_jit(*args), w.primal(*args), rtol=1e-12, atol=0.0)


def test_full_size_arguments_have_the_documented_sizes():
    sizes = {name: w.make_args(quick=False) for name, w in REAL_WORKLOADS.items()
             if name != "black_scholes_2m"}
    assert sizes["lj_energy"][0].shape == (300, 3)
    assert sizes["black_scholes"][0].shape == (200_000,)
    bs2m = REAL_WORKLOADS["black_scholes_2m"]
    assert bs2m.primal is REAL_WORKLOADS["black_scholes"].primal
    assert bs2m.hand_grad is REAL_WORKLOADS["black_scholes"].hand_grad
    assert sizes["moving_average"][0].shape == (1_000_000,)
    assert sizes["logistic_regression"][0].shape == (1000, 20)
    x0, v0, k, c, dt, T = sizes["damped_oscillator"]
    steps, t = 0, 0.0
    while t < T:
        t += dt
        steps += 1
    assert steps == 200_000


def _program_fd_direction(w, args, tangents, eps=1e-6):
    """Central difference of the program along the tangent direction."""
    prog_args = list(args[:-1])

    def at(sign):
        a = list(prog_args)
        for index, t in zip(w.wrt, tangents):
            a[index] = a[index] + sign * eps * t
        return w.program(*a)
    return (at(1.0) - at(-1.0)) / (2 * eps)


@pytest.mark.parametrize("name", ARRAY_NAMES)
def test_vjp_and_jvp(name):
    w = REAL_WORKLOADS[name]
    args = w.make_args(quick=True)
    ubar = args[-1]
    tangents = w.make_tangents(args)
    jvp = w.jvp(*args[:-1], *tangents)
    np.testing.assert_allclose(jvp, _program_fd_direction(w, args, tangents),
                               rtol=1e-6, atol=1e-8)
    vjp = w.vjp(*args)
    # <ubar, J t> = <J^T ubar, t>
    lhs = float(np.dot(ubar, jvp))
    rhs = sum(float(np.sum(np.asarray(g) * t)) for g, t in zip(vjp, tangents))
    assert np.isclose(lhs, rhs, rtol=1e-12, atol=1e-12)
    # the VJP is the gradient of the loss <ubar, program(...)>
    grads = w.hand_grad_jit(*args)
    for index, g in zip(w.wrt, vjp):
        np.testing.assert_allclose(g, grads[index], rtol=1e-14, atol=0.0)
    # the program returns the state the loss reads
    assert np.isclose(np.dot(ubar, w.program(*args[:-1])), w.primal_jit(*args), rtol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_jax_gradient_matches_hand(name):
    pytest.importorskip("jax")
    from benchmarks.peers import jax_real
    w = REAL_WORKLOADS[name]
    args = w.make_args(quick=True)
    assert compare(jax_real.build(w, args)(), w.hand_grad_jit(*args), w.wrt) is None


@pytest.mark.parametrize("name", ARRAY_NAMES)
def test_jax_vjp_and_jvp_match_hand(name):
    pytest.importorskip("jax")
    from benchmarks.peers import jax_real
    w = REAL_WORKLOADS[name]
    args = w.make_args(quick=True)
    want = w.vjp(*args)
    got = jax_real.build_vjp(w, args)()
    assert compare(got, want, range(len(want))) is None
    tangents = w.make_tangents(args)
    np.testing.assert_allclose(jax_real.build_jvp(w, args, tangents)(),
                               w.jvp(*args[:-1], *tangents), rtol=1e-10, atol=1e-12)


def test_bench_real_quick_smoke():
    # numba only (no grad_jit, no JAX): the run completes and reports ratios
    from benchmarks.bench_real import run
    doc = run(["moving_average", "advection_diffusion"], quick=True, repeat=2,
              use_ours=False, use_jax=False, log=lambda *_: None, steady=False)
    for name, entry in doc["workloads"].items():
        assert entry["finite_difference_check"] == "ok", name
        assert entry["over_primal"]["hand"] > 0
    assert "hand_vjp/program" in doc["workloads"]["advection_diffusion"]["over_primal"]
