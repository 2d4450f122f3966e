"""``f.vjp`` and ``f.vjp_call``: outputs that are floats, arrays and (nested) tuples, against
central finite differences of ``<cotangent, f.py_func(*args)>``; ``wrt``; no recompilation
in a loop; clear errors for cotangents of the wrong shape, dtype or structure."""
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack.errors import AdjointArgumentError, NonDifferentiableError

from funcval_helpers import assert_tree_close, fd_tree


def inner(c, y):
    """``<c, y>`` over the float leaves of an output (None: no cotangent)."""
    if c is None:
        return 0.0
    if isinstance(y, tuple):
        return sum(inner(ci, yi) for ci, yi in zip(c, y))
    return float(np.sum(np.asarray(c) * np.asarray(y)))


def assert_same_output(got, want):
    """``got`` is what Numba returned: same structure, types and values."""
    assert type(got) is type(want)
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same_output(g, w)
    else:
        np.testing.assert_array_equal(got, want)


def check_vjp(f, args, cotangent, rtol=1e-6, atol=1e-8):
    """``f.vjp`` and ``f.vjp_call`` against finite differences; returns the cotangents."""
    value, pullback = f.vjp(*args)
    assert_same_output(value, f(*args))
    got = pullback(cotangent)
    want = fd_tree(lambda *a: inner(cotangent, f.py_func(*a)), args)
    assert_tree_close(got, want, rtol, atol)
    assert_tree_close(f.vjp_call(*args, cotangent), got, 1e-12, 0.0)
    return got


@nad.grad_jit
def trajectory(k, c, state, steps):
    """Positions and velocities of a damped spring, one row per time step."""
    out = np.empty((steps, 2))
    x = state[0]
    v = state[1]
    for i in range(steps):
        v += 0.05 * (-k * x - c * v)
        x += 0.05 * v
        out[i, 0] = x
        out[i, 1] = v
    return out


STATE = np.array([1.0, 0.2])
RNG = np.random.default_rng(3)


def test_trajectory_of_a_time_stepping_function():
    ct = RNG.standard_normal((7, 2))
    value, _ = trajectory.vjp(3.0, 0.4, STATE, 7)
    np.testing.assert_array_equal(value, trajectory(3.0, 0.4, STATE, 7))
    got = check_vjp(trajectory, (3.0, 0.4, STATE, 7), ct)
    assert got[3] is None                       # the integer argument


@nad.grad_jit
def energy(x, k):
    e = 0.0
    for i in range(x.shape[0] - 1):
        e += k * (x[i + 1] - x[i]) ** 2
    return e


def test_float_output_is_the_gradient_scaled():
    x = np.array([0.0, 0.5, 1.7, 2.0])
    got = check_vjp(energy, (x, 2.0), 2.5)
    g = energy.grad(x, 2.0)
    np.testing.assert_allclose(got[0], 2.5 * g[0])
    assert got[1] == pytest.approx(2.5 * g[1])


@nad.grad_jit
def polar(r, theta):
    """A tuple of two arrays."""
    return r * np.cos(theta), r * np.sin(theta)


def test_tuple_of_arrays():
    r, theta = np.array([1.0, 2.0, 0.5]), np.array([0.1, 1.2, -0.7])
    ct = (RNG.standard_normal(3), RNG.standard_normal(3))
    got = check_vjp(polar, (r, theta), ct)
    np.testing.assert_allclose(got[0], ct[0] * np.cos(theta) + ct[1] * np.sin(theta))


@nad.grad_jit
def nested(x, a):
    """A nested tuple of a float, a 2-d array, an integer, and a float."""
    m = np.empty((2, a.shape[0]))
    for j in range(a.shape[0]):
        m[0, j] = x * a[j]
        m[1, j] = np.sin(a[j])
    return (x * a[0], (m, a.shape[0])), np.sum(a * a)


def test_nested_tuple_with_an_integer_output():
    a = np.array([0.3, -1.1, 2.0])
    for n_ct in (None, 0):          # the integer output takes no cotangent
        ct = ((0.7, (RNG.standard_normal((2, 3)), n_ct)), -1.5)
        check_vjp(nested, (1.3, a), ct)


def test_wrt_leaves_the_other_arguments_alone():
    only_k = nad.grad_jit(trajectory.py_func, wrt="k")
    ct = RNG.standard_normal((5, 2))
    got = only_k.vjp_call(3.0, 0.4, STATE, 5, ct)
    assert got[1] is None and got[2] is None and got[3] is None
    assert got[0] == pytest.approx(trajectory.vjp_call(3.0, 0.4, STATE, 5, ct)[0], rel=1e-12)


def compiled_signatures(f):
    """How many signatures ``f`` and the backwards of its vjp are compiled for."""
    return len(f.signatures) + sum(len(bw.njit_fn.signatures)
                                   for sum_fn in getattr(f, "_vjp_sums", {}).values()
                                   for bw in sum_fn._backwards.values())


def test_vjp_call_in_a_loop_compiles_once():
    ct = np.zeros((6, 2))
    trajectory.vjp_call(3.0, 0.4, STATE, 6, ct)
    compiled = compiled_signatures(trajectory)
    for step in range(6):
        ct[:] = 0.0
        ct[step, 0] = 1.0            # row by row: d x(step) / d (k, c, state)
        got = trajectory.vjp_call(3.0, 0.4, STATE, 6, ct)
        want = fd_tree(lambda k, c, s, n: trajectory.py_func(k, c, s, n)[step, 0],
                       (3.0, 0.4, STATE, 6))
        assert_tree_close(got, want, 1e-6, 1e-8)
    trajectory.vjp(3.0, 0.4, STATE, 6)[1](ct[::-1])     # not contiguous: copied
    assert compiled_signatures(trajectory) == compiled


def test_cotangent_of_the_wrong_shape_names_the_output():
    msg = r"cotangent for output 1 of polar has shape \(2,\), expected \(3,\)"
    x = np.ones(3)
    with pytest.raises(AdjointArgumentError, match=msg):
        polar.vjp(x, x)[1]((np.ones(3), np.ones(2)))
    with pytest.raises(AdjointArgumentError, match=msg):       # found by the backward
        polar.vjp_call(x, x, (np.ones(3), np.ones(2)))
    with pytest.raises(AdjointArgumentError, match="expected a 2-d array"):
        trajectory.vjp_call(3.0, 0.4, STATE, 4, np.ones(8))


def test_cotangent_of_the_wrong_dtype_or_structure():
    x = np.ones(3)
    with pytest.raises(AdjointArgumentError,
                       match="output 0 of polar has dtype float32, expected float64"):
        polar.vjp_call(x, x, (np.ones(3, np.float32), np.ones(3)))
    with pytest.raises(AdjointArgumentError, match="tuple of 2 items"):
        polar.vjp_call(x, x, np.ones(3))
    with pytest.raises(AdjointArgumentError,
                       match=r"output \[0\]\[1\]\[1\] of nested is int64 and takes no"):
        nested.vjp_call(1.0, x, ((1.0, (np.ones((2, 3)), 2)), 1.0))


@nad.grad_jit
def as_list(x):
    return [x, 2.0 * x]


def test_outputs_that_take_no_cotangent_are_refused():
    with pytest.raises(NonDifferentiableError, match="the output of as_list has type list"):
        as_list.vjp(1.0)


def test_vjp_benchmark_runs_and_agrees_with_jax():
    # Tiny sizes; the cotangents are compared with JAX's inside measure() when JAX is
    # installed. No timing is asserted.
    from benchmarks import bench_vjp
    (row,) = bench_vjp.run(bench_vjp.QUICK_SIZES, repeat=1)
    assert row["ours_vjp_s"] > 0 and ("jax_vjp_s" in row or row["jax"] == "not installed")
    assert "| 4 | 20 |" in bench_vjp.markdown([row])


@nad.grad_jit
def squares_in_place(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * x[i]
    return x


def test_function_writing_into_its_argument():
    x = np.array([1.0, 2.0, 3.0])
    value, pullback = squares_in_place.vjp(x)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])        # the caller's array
    np.testing.assert_array_equal(value, [1.0, 4.0, 9.0])
    ct = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(pullback(ct)[0], 2.0 * x * ct)
    np.testing.assert_allclose(squares_in_place.vjp_call(x, ct)[0], 2.0 * x * ct)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
