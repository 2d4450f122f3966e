"""Arrays the sweep reads only for their shape (plan/shape_reads.py): the replay keeps
their shape, not the array, and the gradients stay those of finite differences."""
import numpy as np
import pytest

import numba_adstack as nad
from conftest import assert_grads_close, check_fd


def heat2d(u0, k, n):
    """benchmarks/bench_checkpoint.py's step (one primitive, capture/stencils.py)."""
    u = u0.copy()
    for t in range(n):
        lap = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
               - 4.0 * u[1:-1, 1:-1])
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + k * lap
    return np.sum(u * u)


def heat2d_bounds_of_shape(u0, k, n):
    """The same step with bounds read from the shape, reversed operation by operation:
    seven temporaries a step, one (``lap``) read by the sweep for its values."""
    u = u0.copy()
    a, b = u.shape
    for t in range(n):
        lap = (u[:a - 2, 1:b - 1] + u[2:, 1:b - 1] + u[1:a - 1, :b - 2] + u[1:a - 1, 2:]
               - 4.0 * u[1:a - 1, 1:b - 1])
        u[1:a - 1, 1:b - 1] = u[1:a - 1, 1:b - 1] + k * lap
    return np.sum(u * u)


def broadcasts(a, b, c, k, n):
    """Temporaries that broadcast into the carried state: ``r`` (r, 1), ``row`` (1, m)
    and ``c2`` (1,), so that their adjoints are sums over the axes they broadcast along."""
    u = a + b
    for t in range(n):
        r = a * k
        c2 = c * 2.0
        row = b - 0.5
        u = np.sin(u + r) + c2 + row
    return np.sum(u * u)


def shape_and_values(x, k, n):
    """``p`` is read for its shape (``p + x``) and for its values (``q * p``): kept."""
    u = x * 1.0
    for t in range(n):
        p = u * k
        q = p + x
        u = q * p
    return np.sum(u)


def mixed_ndim(m, v, n):
    """A 1-d temporary added to a 2-d state: summed over the leading axis."""
    u = m * 1.0
    for t in range(n):
        w = v * 0.5
        s = u + w
        u = np.tanh(s) * 1.5
    return np.sum(u * u)


def heat_while(u0, k, n):
    """A ``while`` loop: its history grows."""
    u = u0.copy()
    t = 0
    while t < n:
        lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u[1:-1] = u[1:-1] + k * lap
        t += 1
    return np.sum(u * u)


def loss_per_step(u0, k, n):
    """Sums of a step's temporaries (``np.sum`` reads its operand for its shape), over
    an axis too."""
    u = u0.copy()
    s = 0.0
    for t in range(n):
        u = u + k * np.sin(u)
        s += np.sum(np.sum(u * u, axis=1)) + np.sum(u * k)
    return s


_compiled = {}


def compiled(fn, **options):
    key = (fn.__name__, tuple(sorted(options.items())))
    if key not in _compiled:
        _compiled[key] = nad.grad_jit(**options)(fn)
    return _compiled[key]


def _grid(n):
    x = np.linspace(0.0, 1.0, n)
    return np.sin(3.0 * x)[:, None] * np.cos(2.0 * x)[None, :] + 0.1 * x[None, :]


def test_heat2d_keeps_one_array_per_step():
    src = compiled(heat2d, checkpoint="off").inspect_adjoint(_grid(6), 0.2, 3)
    assert src.count(".append(") == 1       # the state the stencil's primitive reads
    src = compiled(heat2d_bounds_of_shape, checkpoint="off").inspect_adjoint(
        _grid(6), 0.2, 3)
    # One list-stack push a step (``lap``, read for k's adjoint); the six other
    # temporaries keep their shape on an integer stack.
    assert src.count(".append(") == 1
    assert "sum_to(lap_bar, (" in src
    check_fd(compiled(heat2d_bounds_of_shape), _grid(6), 0.2, 3, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("options", [{"checkpoint": "off"}, {},
                                     {"checkpoint": "revolve", "snapshots": 2}])
def test_heat2d_gradient(options):
    args = (_grid(6), 0.2, 4)
    got = check_fd(compiled(heat2d, **options), *args, rtol=1e-6, atol=1e-8)
    full = compiled(heat2d, checkpoint="off").grad(*args)
    assert np.array_equal(got[0], full[0]) and got[1] == full[1]


def test_broadcast_operands_are_summed():
    rng = np.random.default_rng(3)
    a = rng.uniform(-0.5, 0.5, (4, 1))
    b = rng.uniform(-0.5, 0.5, (1, 3))
    c = rng.uniform(-0.5, 0.5, (1,))
    f = compiled(broadcasts)
    assert f.inspect_adjoint(a, b, c, 0.7, 3).count(".append(") <= 2
    check_fd(f, a, b, c, 0.7, 3, rtol=1e-6, atol=1e-8)


def test_value_read_for_shape_and_values_is_kept():
    rng = np.random.default_rng(4)
    x = rng.uniform(0.5, 1.0, (5,))
    f = compiled(shape_and_values)
    src = f.inspect_adjoint(x, 0.8, 3)
    assert src.count(".append(") >= 1
    check_fd(f, x, 0.8, 3, rtol=1e-6, atol=1e-8)


def test_operands_of_different_ndim():
    rng = np.random.default_rng(5)
    m = rng.uniform(-1.0, 1.0, (3, 4))
    v = rng.uniform(-1.0, 1.0, (4,))
    f = compiled(mixed_ndim)
    assert "(w_shape_0,)" in f.inspect_adjoint(m, v, 3)
    check_fd(f, m, v, 3, rtol=1e-6, atol=1e-8)


def test_while_loop():
    u0 = np.sin(np.linspace(0.0, 3.0, 9))
    f = compiled(heat_while)
    src = f.inspect_adjoint(u0, 0.2, 4)
    assert src.count(".append(") == 1
    check_fd(f, u0, 0.2, 4, rtol=1e-6, atol=1e-8)
    # No iteration: nothing kept, nothing popped.
    assert_grads_close(f.grad(u0, 0.2, 0), (2.0 * u0, 0.0, None), (u0, 0.2, 0))


def test_reductions_read_their_operand_for_its_shape():
    u0 = _grid(4)[:, :3]
    f = compiled(loss_per_step)
    src = f.inspect_adjoint(u0, 0.3, 3)
    assert "unreduce(" in src and "_shape_0,), None, False)" in src
    # Kept for their values: sin(u) (k's adjoint), u + k*sin(u), and u itself.
    assert src.count(".append(") == 3
    check_fd(f, u0, 0.3, 3, rtol=1e-6, atol=1e-8)


def log_barrier(u0, k, n):
    """The whole-array forms of the tidy pass (``broadcast_like`` of a sum's adjoint,
    ``acc_new`` of a first contribution) meet shapes kept instead of arrays."""
    u = u0.copy()
    s = 0.0
    for t in range(n):
        v = u * k
        w = np.exp(-v) + v
        s += np.sum(np.log(w))
        u = u + 0.1 * w
    return s


def test_whole_array_forms_take_kept_shapes():
    u0 = np.linspace(0.1, 1.0, 6)
    f = compiled(log_barrier)
    src = f.inspect_adjoint(u0, 0.3, 3)
    assert "broadcast_like(" in src and "acc_new(v_bar" in src and "(v_shape_0,))" in src
    check_fd(f, u0, 0.3, 3, rtol=1e-6, atol=1e-8)
