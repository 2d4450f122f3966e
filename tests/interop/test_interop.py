"""PyTorch and JAX interop (``numba_adstack.torch``, ``numba_adstack.jax``): gradients through
``.backward()``, ``jax.grad`` and ``jax.jit`` against finite differences and the
libraries' own gradient checks. Skipped where a library is missing."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import numba_adstack as nad
from funcval_helpers import fd_tree
from test_vjp import nested, polar, trajectory

STATE = np.array([1.0, 0.2])
RNG = np.random.default_rng(20)


def fd_loss(k, c, state, steps):
    """d/d(k, c, state) of sum(trajectory ** 2), by finite differences of the primal."""
    return fd_tree(lambda k, c, s: float(np.sum(trajectory.py_func(k, c, s, steps) ** 2)),
                   (k, c, state))


# ---------------------------------------------------------------------- PyTorch
def test_torch_backward_and_gradcheck():
    torch = pytest.importorskip("torch")
    import numba_adstack.torch as nat

    traj = nat.function(trajectory)
    k = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    c = torch.tensor(0.4, dtype=torch.float64, requires_grad=True)
    s = torch.tensor(STATE, requires_grad=True)
    (traj(k, c, s, 8) ** 2).sum().backward()
    want = fd_loss(3.0, 0.4, STATE, 8)
    np.testing.assert_allclose([k.grad.item(), c.grad.item()], want[:2], rtol=1e-6)
    np.testing.assert_allclose(s.grad.numpy(), want[2], rtol=1e-6)
    assert torch.autograd.gradcheck(lambda k, c, s: traj(k, c, s, 5), (k, c, s))
    r = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64, requires_grad=True)
    theta = torch.tensor([0.1, 1.2, -0.7], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(nat.function(polar), (r, theta))
    # A nested tuple with an integer output: the integer comes back without a gradient.
    out = nat.function(nested)(k, r)
    assert not out[0][1][1].requires_grad and out[0][1][1].item() == 3
    assert torch.autograd.gradcheck(
        lambda x, a: (lambda o: (o[0][0], o[0][1][0], o[1]))(nat.function(nested)(x, a)),
        (k, r))


def test_torch_float32():
    torch = pytest.importorskip("torch")
    import numba_adstack.torch as nat

    r = torch.tensor([1.0, 2.0, 0.5], requires_grad=True)
    theta = torch.tensor([0.1, 1.2, -0.7], requires_grad=True)
    x, y = nat.function(polar)(r, theta)
    assert x.dtype == torch.float32
    (2.0 * x + y).sum().backward()
    assert r.grad.dtype == torch.float32
    want = 2.0 * np.cos(theta.detach().numpy()) + np.sin(theta.detach().numpy())
    np.testing.assert_allclose(r.grad.numpy(), want, rtol=1e-6)


def test_torch_second_derivatives_gradgradcheck():
    """Double backward (f.hvp and f.jvp underneath) against PyTorch's finite differences
    of the gradient: scalar and array arguments, a tuple output, a nested tuple with an
    integer output, float32 against float64."""
    torch = pytest.importorskip("torch")
    import numba_adstack.torch as nat

    k = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    c = torch.tensor(0.4, dtype=torch.float64, requires_grad=True)
    s = torch.tensor(STATE, requires_grad=True)
    traj = nat.function(trajectory)
    assert torch.autograd.gradgradcheck(lambda k, c, s: traj(k, c, s, 5), (k, c, s))
    r = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64, requires_grad=True)
    theta = torch.tensor([0.1, 1.2, -0.7], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(nat.function(polar), (r, theta))
    assert torch.autograd.gradgradcheck(
        lambda x, a: (lambda o: (o[0][0], o[0][1][0], o[1]))(nat.function(nested)(x, a)),
        (k, r))

    def second(r, theta):
        x, y = nat.function(polar)(r, theta)
        g = torch.autograd.grad((x * y).sum(), (r, theta), create_graph=True)
        return torch.autograd.grad(g[0].sum() + 2.0 * g[1].sum(), (r, theta))
    want = second(r, theta)
    got = second(*[t.detach().float().requires_grad_() for t in (r, theta)])
    for g, w in zip(got, want):
        assert g.dtype == torch.float32
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_torch_documented_second_derivative_and_third_refused():
    """The page's PyTorch block: its first derivatives against finite differences of the
    function, its Hessian row against finite differences of the gradient; a third
    derivative raises ThirdDerivativeError (not a silently partial value)."""
    torch = pytest.importorskip("torch")
    from numba_adstack.errors import ThirdDerivativeError

    ns = {}
    exec(interop_code("torch"), ns)
    want = doc_loss_grad(3.0, [1.0, 0.0])
    np.testing.assert_allclose(ns["dk"].item(), want[0], rtol=1e-6)
    np.testing.assert_allclose(ns["ds"].detach().numpy(), want[1], rtol=1e-6, atol=1e-7)

    def grad_k(k, s):
        kt = torch.tensor(k, dtype=torch.float64, requires_grad=True)
        st = torch.tensor(s, dtype=torch.float64, requires_grad=True)
        return torch.autograd.grad((ns["traj_t"](kt, st, 50) ** 2).sum(), kt)[0].item()
    h, s0 = 1e-6, np.array([1.0, 0.0])
    np.testing.assert_allclose(ns["d2k"].item(),
                               (grad_k(3.0 + h, s0) - grad_k(3.0 - h, s0)) / (2 * h), rtol=1e-5)
    fd_row = [(grad_k(3.0, s0 + h * e) - grad_k(3.0, s0 - h * e)) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(ns["d2s"].numpy(), fd_row, rtol=1e-5, atol=1e-6)

    k, s = ns["k"], ns["s"]
    loss = (ns["traj_t"](k, s, 50) ** 2).sum()
    dk, = torch.autograd.grad(loss, k, create_graph=True)
    d2k, = torch.autograd.grad(dk, k, create_graph=True)
    with pytest.raises(ThirdDerivativeError, match=r"trajectory .*third order"):
        torch.autograd.grad(d2k, k)


# ---------------------------------------------------------------------- JAX
def test_jax_grad_inside_jit_and_check_grads():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.test_util import check_grads
    import numba_adstack.jax as naj

    traj = naj.function(trajectory, static_argnums=3)
    with jax.enable_x64(True):
        s = jnp.array(STATE)
        loss = jax.jit(lambda k, c, s: jnp.sum(traj(k, c, s, 8) ** 2))
        got = jax.grad(loss, argnums=(0, 1, 2))(3.0, 0.4, s)
        want = fd_loss(3.0, 0.4, STATE, 8)
        np.testing.assert_allclose([float(got[0]), float(got[1])], want[:2], rtol=1e-6)
        np.testing.assert_allclose(np.asarray(got[2]), want[2], rtol=1e-6)
        check_grads(lambda k, c, s: traj(k, c, s, 5), (3.0, 0.4, s), order=1, modes=["rev"])
        check_grads(naj.function(polar), (jnp.array([1.0, 2.0]), jnp.array([0.3, 0.4])),
                    order=1, modes=["rev"])
        n = naj.function(nested)
        check_grads(lambda x, a: (lambda o: (o[0][0], o[0][1][0], o[1]))(n(x, a)),
                    (1.3, jnp.array([0.3, -1.1, 2.0])), order=1, modes=["rev"])


def test_jax_float32_by_default():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    import numba_adstack.jax as naj

    with jax.enable_x64(False):
        p = naj.function(polar)
        r, theta = jnp.array([1.0, 2.0, 0.5]), jnp.array([0.1, 1.2, -0.7])
        g = jax.jit(jax.grad(lambda r, t: jnp.sum(2.0 * p(r, t)[0] + p(r, t)[1])))(r, theta)
        assert g.dtype == jnp.float32
        want = 2.0 * np.cos(np.asarray(theta)) + np.sin(np.asarray(theta))
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5)


INTEROP_MD = Path(__file__).resolve().parents[2] / "docs" / "interop.md"


def interop_blocks():
    """The page's Python blocks: the vjp example, then PyTorch's and JAX's."""
    return re.findall(r"^```python\n(.*?)^```", INTEROP_MD.read_text(), re.MULTILINE | re.DOTALL)


def interop_code(library):
    """The vjp example and the block that imports ``library``, as one program."""
    first, *rest = interop_blocks()
    block, = [b for b in rest if re.search(r"^import %s" % library, b, re.MULTILINE)]
    return first + block


def doc_loss_grad(k, s):
    """The gradient of the page's loss ``sum(trajectory(k, s, 50) ** 2)``, by finite
    differences of the pure-Python function."""
    ns = {}
    exec(interop_blocks()[0], ns)
    py = ns["trajectory"].py_func
    return fd_tree(lambda k, s: float(np.sum(py(k, s, 50) ** 2)), (k, np.asarray(s, float)))


def test_jax_documented_example_on_a_default_install():
    """The page's code as written, in a fresh process where JAX computes in float32: the
    float64 output of ``trajectory`` reaches JAX as float32 and its float32 cotangent is
    converted back. Against finite differences of the pure-Python function."""
    pytest.importorskip("jax")
    report = ("\nimport json\nprint(json.dumps({'x64': jax.config.jax_enable_x64, "
              "'dtype': str(dk.dtype), 'dk': float(dk), 'ds': [float(v) for v in ds], "
              "'dks': [float(v) for v in dks]}))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    root = str(INTEROP_MD.parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, "-c", interop_code("jax") + report],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["x64"] is False and got["dtype"] == "float32"
    want = doc_loss_grad(3.0, [1.0, 0.0])
    np.testing.assert_allclose(got["dk"], want[0], rtol=1e-5)
    np.testing.assert_allclose(got["ds"], want[1], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got["dks"], [doc_loss_grad(k, [1.0, 0.0])[0]
                                            for k in (2.0, 3.0, 4.0)], rtol=1e-5)


def test_jax_float64_output_in_float32_mode():
    """A float64 output (``np.empty`` in ``trajectory``) under float32 JAX: float32 to JAX,
    the gradient against finite differences."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    import numba_adstack.jax as naj

    traj = naj.function(trajectory, static_argnums=3)
    with jax.enable_x64(False):
        s = jnp.array(STATE)
        assert traj(3.0, 0.4, s, 8).dtype == jnp.float32
        got = jax.grad(lambda k, c, s: jnp.sum(traj(k, c, s, 8) ** 2), argnums=(0, 1, 2))(
            3.0, 0.4, s)
    assert got[2].dtype == jnp.float32
    want = fd_loss(3.0, 0.4, np.asarray(s, np.float64), 8)
    np.testing.assert_allclose([float(got[0]), float(got[1])], want[:2], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got[2]), want[2], rtol=1e-5)


@pytest.mark.parametrize("numba_loop", [True, False], ids=["numba-loop", "python-loop"])
def test_jax_vmap_values_gradients_and_jacrev(numba_loop, monkeypatch):
    """``jax.vmap`` of the function and of its gradient, mapped and unmapped arguments,
    nested maps, and ``jax.jacrev`` (a map over the pullback): against single calls and
    finite differences; the batch run in one Numba loop, and once per element from
    Python (where the loop cannot be used)."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    import numba_adstack.jax as naj
    from numba_adstack import jax_batch
    from test_vjp import squares_in_place

    looped = set()
    for name in ("primal", "vjp"):
        def spy(*a, _name=name, _run=getattr(jax_batch, name)):
            out = _run(*a) if numba_loop else None
            if out is not None:
                looped.add(_name)
            return out
        monkeypatch.setattr(jax_batch, name, spy)

    traj = naj.function(trajectory, static_argnums=3)
    ks, cs = np.array([2.0, 3.0, 4.5]), np.array([0.1, 0.4, 0.2])
    states = np.array([[1.0, 0.2], [0.5, -0.1], [-0.3, 0.7]])
    with jax.enable_x64(True):
        out = jax.vmap(lambda k, s: traj(k, 0.4, s, 6))(jnp.array(ks), jnp.array(states))
        for b in range(3):
            np.testing.assert_array_equal(np.asarray(out[b]),
                                          trajectory(ks[b], 0.4, states[b].copy(), 6))
        loss = jax.grad(lambda k, c, s: jnp.sum(traj(k, c, s, 6) ** 2), argnums=(0, 1, 2))
        # every argument mapped; then the state shared (not mapped), under jit
        got = jax.vmap(loss)(jnp.array(ks), jnp.array(cs), jnp.array(states))
        shared = jax.jit(jax.vmap(loss, in_axes=(0, 0, None)))(
            jnp.array(ks), jnp.array(cs), jnp.array(STATE))
        for b in range(3):
            want = fd_loss(ks[b], cs[b], states[b], 6)
            np.testing.assert_allclose([got[0][b], got[1][b]], want[:2], rtol=1e-6)
            np.testing.assert_allclose(np.asarray(got[2][b]), want[2], rtol=1e-6)
            want = fd_loss(ks[b], cs[b], STATE, 6)
            np.testing.assert_allclose([shared[0][b], shared[1][b]], want[:2], rtol=1e-6)
            np.testing.assert_allclose(np.asarray(shared[2][b]), want[2], rtol=1e-6)
        jac = jax.jacrev(lambda s: traj(3.0, 0.4, s, 6))(jnp.array(STATE))
        want = np.stack([fd_tree(lambda s: float(trajectory.py_func(3.0, 0.4, s, 6)[i]),
                                 (STATE,))[0] for i in np.ndindex(6, 2)]).reshape(6, 2, 2)
        np.testing.assert_allclose(np.asarray(jac), want, rtol=1e-6, atol=1e-9)
        p = naj.function(polar)
        r, theta = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 3, 4))
        g = jax.vmap(jax.vmap(jax.grad(lambda r, t: jnp.sum(p(r, t)[1]), argnums=1)))(
            jnp.array(r), jnp.array(theta))
        np.testing.assert_allclose(np.asarray(g), r * np.cos(theta), rtol=1e-12)
        # a nested tuple with an integer output, the float argument shared
        n = naj.function(nested)
        a = RNG.standard_normal((4, 3))
        vals = jax.vmap(n, in_axes=(None, 0))(1.3, jnp.array(a))
        ct_m = RNG.standard_normal((2, 3))
        loss = jax.grad(lambda x, a: (lambda o: 0.7 * o[0][0] + jnp.sum(ct_m * o[0][1][0])
                                      - 1.5 * o[1])(n(x, a)), argnums=(0, 1))
        grads = jax.vmap(loss, in_axes=(None, 0))(1.3, jnp.array(a))
        for b in range(4):
            want = nested(1.3, a[b])
            np.testing.assert_allclose(np.asarray(vals[0][0][b]), want[0][0], rtol=1e-14)
            np.testing.assert_allclose(np.asarray(vals[0][1][0][b]), want[0][1][0], rtol=1e-14)
            assert int(vals[0][1][1][b]) == 3
            fd = fd_tree(lambda x, a: (lambda o: 0.7 * o[0][0] + np.sum(ct_m * o[0][1][0])
                                       - 1.5 * o[1])(nested.py_func(x, a)), (1.3, a[b]))
            np.testing.assert_allclose(float(grads[0][b]), fd[0], rtol=1e-6)
            np.testing.assert_allclose(np.asarray(grads[1][b]), fd[1], rtol=1e-6, atol=1e-9)
        # a function writing into its argument: each element on its own copy
        xs = RNG.standard_normal((3, 4))
        sq = naj.function(squares_in_place)
        np.testing.assert_allclose(np.asarray(jax.vmap(sq)(jnp.array(xs))), xs ** 2)
        g = jax.vmap(jax.grad(lambda x: jnp.sum(sq(x) * jnp.arange(4.0))))(jnp.array(xs))
        np.testing.assert_allclose(np.asarray(g), 2.0 * xs * np.arange(4.0), rtol=1e-14)
    assert looped == ({"primal", "vjp"} if numba_loop else set())


# ---------------------------------------------------------------------- the worked example
def test_worked_example_fits_the_spring():
    """docs/examples/torch_spring.py: its gradient against finite differences, then Adam
    recovers the parameters the data were made with."""
    torch = pytest.importorskip("torch")
    from test_docs import DOCS, load

    ex = load(DOCS / "examples" / "torch_spring.py")
    observed = ex.observations()
    params = torch.tensor([2.5, 1.0], dtype=torch.float64, requires_grad=True)
    loss = torch.mean((ex.simulate(params, ex.DT, ex.STEPS, 60) - observed) ** 2)
    loss.backward()
    want = fd_tree(lambda p: float(np.mean((ex.positions.py_func(p, ex.DT, ex.STEPS, 60)
                                            - observed.numpy()) ** 2)),
                   (np.array([2.5, 1.0]),))[0]
    np.testing.assert_allclose(params.grad.numpy(), want, rtol=1e-6)
    fitted, losses = ex.fit(observed)
    np.testing.assert_allclose(fitted, ex.TRUE, atol=0.02)
    assert losses[-1] < 0.01 * losses[0]


def test_a_function_writing_into_its_argument_leaves_the_tensor_and_array_alone():
    from test_vjp import squares_in_place
    x = np.array([1.0, 2.0, 3.0])
    torch = pytest.importorskip("torch")
    import numba_adstack.torch as nat
    t = torch.tensor(x, requires_grad=True)
    (nat.function(squares_in_place)(t) * torch.tensor([1.0, -2.0, 0.5])).sum().backward()
    np.testing.assert_array_equal(t.detach().numpy(), x)
    np.testing.assert_allclose(t.grad.numpy(), 2.0 * x * [1.0, -2.0, 0.5])
    jax = pytest.importorskip("jax")
    import numba_adstack.jax as naj
    with jax.enable_x64(True):
        g = jax.grad(lambda a: naj.function(squares_in_place)(a).sum())(jax.numpy.array(x))
    np.testing.assert_allclose(np.asarray(g), 2.0 * x)


def test_jax_result_shape_given():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    import numba_adstack.jax as naj

    with jax.enable_x64(True):
        r, theta = jnp.array([1.0, 2.0, 0.5]), jnp.array([0.1, 1.2, -0.7])
        spec = jax.ShapeDtypeStruct((3,), jnp.float64)
        for shape in ((spec, spec), lambda r, t: (spec, spec)):
            p = naj.function(polar, result_shape=shape)
            g = jax.jit(jax.grad(lambda r, t: jnp.sum(p(r, t)[1])))(r, theta)
            np.testing.assert_allclose(np.asarray(g), np.sin(np.asarray(theta)), rtol=1e-12)
        # a shape other than the one declared: an error, alone and under vmap, not a
        # reshaped or broadcast value
        wrong = jax.ShapeDtypeStruct((1,), jnp.float64)
        p = naj.function(polar, result_shape=(wrong, wrong))
        for fn, x in ((p, r), (jax.vmap(p), jnp.stack([r, r]))):
            with pytest.raises(Exception, match="shape other than the one given to JAX"):
                jax.block_until_ready(fn(x, x))


@nad.grad_jit
def gather_squares(x, idx):
    out = np.empty(idx.shape[0])
    for j in range(idx.shape[0]):
        out[j] = x[idx[j]] ** 2
    return out


def test_jax_integer_array_argument_gets_no_cotangent():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    import numba_adstack.jax as naj

    with jax.enable_x64(True):
        f = naj.function(gather_squares)
        x, idx = jnp.array([1.0, 2.0, 3.0]), jnp.array([0, 2, 2])
        g = jax.jit(jax.grad(lambda x, i: jnp.sum(f(x, i) * jnp.array([1.0, 2.0, 3.0]))))(
            x, idx)
    np.testing.assert_allclose(np.asarray(g), [2.0, 0.0, 2 * 3.0 * (2.0 + 3.0)])
