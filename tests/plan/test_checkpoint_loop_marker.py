"""numba_adstack.checkpoint on a loop: ``for t in nad.checkpoint(range(n)):`` checkpoints
that loop whatever the memory budget. Gradients equal, bit for bit, those keeping the whole
history (``checkpoint="off"``, which turns the marker off) and finite differences; the
primal is the loop as written; a marked loop that cannot be checkpointed is refused."""
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

from conftest import assert_grads_close, fd_grad


def heat(u0, k, n):
    u = u0.copy()
    for t in nad.checkpoint(range(n), snapshots=3):     # state: u, written in place
        lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u[1:-1] = u[1:-1] + k * lap - 0.01 * u[1:-1] ** 3
    return np.sum(u * u)


def decay(x, p, n):
    s = 0.0
    for t in nad.checkpoint(range(n)):  # the function's options: snapshots=4
        x = np.sin(x) * p + 0.1 * x
        s += x * x
        if s > 50.0:                    # left by break: the online schedule
            break
    return s


heat_marked = nad.grad_jit(heat)
heat_full = nad.grad_jit(checkpoint="off")(heat)
decay_marked = nad.grad_jit(snapshots=4)(decay)
decay_full = nad.grad_jit(checkpoint="off")(decay)

U0 = np.sin(np.linspace(0.0, 3.0, 12))


def test_the_marker_is_the_iterable_in_python_and_in_jitted_code():
    assert list(nad.checkpoint(range(3))) == [0, 1, 2]
    assert heat_marked(U0, 0.2, 9) == heat(U0, 0.2, 9)
    assert decay_marked(0.4, 1.3, 30) == decay(0.4, 1.3, 30)


def test_a_marked_loop_is_checkpointed_with_its_snapshots():
    args = (U0, 0.2, 9)
    src = heat_marked.inspect_adjoint(*args)
    assert "checkpointed (marked numba_adstack.checkpoint), binomial (revolve) schedule: " \
        "3 snapshots, segments of one iteration" in src, src.splitlines()[0]
    assert "checkpoint" not in heat_full.inspect_adjoint(*args).splitlines()[0]
    got = heat_marked.grad(*args)
    want = heat_full.grad(*args)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]
    assert_grads_close(got, fd_grad(heat, args), args, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n", [3, 25])      # left by break at 25, exhausted at 3
def test_a_marked_loop_left_by_break(n):
    args = (0.4, 1.3, n)
    src = decay_marked.inspect_adjoint(*args)
    assert "checkpointed (marked numba_adstack.checkpoint), online schedule" in src
    got = decay_marked.grad(*args)
    assert got[:2] == decay_full.grad(*args)[:2]
    assert_grads_close(got, fd_grad(decay, args), args, rtol=1e-6, atol=1e-8)


def test_a_marked_loop_that_cannot_be_checkpointed_is_refused():
    def nested(x, n):
        s = 0.0
        for i in range(n):
            for j in nad.checkpoint(range(n)):
                s = np.sin(s * x + j)      # carried: a history to keep
        return s

    with pytest.raises(NonDifferentiableError) as info:
        nad.grad_jit(nested).grad(0.3, 4)
    msg = str(info.value)
    assert "marked numba_adstack.checkpoint cannot be checkpointed: it is inside another " \
        "loop" in msg and "line" in msg, msg
