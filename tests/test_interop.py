"""PyTorch and JAX interop (``numba_adstack.torch``, ``numba_adstack.jax``): gradients through
``.backward()``, ``jax.grad`` and ``jax.jit`` against finite differences and the
libraries' own gradient checks. Skipped where a library is missing."""
import numpy as np
import pytest

import numba_adstack as nad
from funcval_helpers import fd_tree
from test_vjp import nested, polar, trajectory

STATE = np.array([1.0, 0.2])


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
