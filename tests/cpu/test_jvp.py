"""Forward mode: ``f.jvp``, ``f.hvp`` and ``numba_adstack.jacobian``.

Every derivative is compared with one computed another way: central finite differences
of the pure-Python function (``f.py_func``) along the tangent, the reverse-mode gradient,
or an analytic Hessian.
"""
import math

import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError


def _along(args, tangents, h):
    out = []
    for a, t in zip(args, tangents):
        if t is None or isinstance(a, int):
            out.append(a.copy() if isinstance(a, np.ndarray) else a)
        else:
            out.append(a + h * t)
    return out


def _diff(p, m, h):
    if isinstance(p, tuple):
        return tuple(_diff(a, b, h) for a, b in zip(p, m))
    if isinstance(p, (float, np.ndarray)):
        return (np.asarray(p) - np.asarray(m)) / (2 * h)
    return None


def fd_jvp(f, args, tangents, h=1e-6):
    """Central finite difference of ``f.py_func`` along the tangents."""
    return _diff(f.py_func(*_along(args, tangents, h)),
                 f.py_func(*_along(args, tangents, -h)), h)


def assert_tree_close(got, want, rtol=1e-6, atol=1e-7):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_tree_close(g, w, rtol, atol)
    elif want is None:
        assert got is None
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------- scalar programs
@nad.grad_jit
def branchy(x, y, n):
    s = 0.0
    for i in range(n):
        if s > 1.0:
            s = s * 0.5 + math.sin(x * i)
        else:
            s += x * y + math.exp(-y)
    k = 0
    while s < 10.0:
        s = s * 1.5 + x
        k += 1
        if k > 20:
            break
    return s ** 2 + math.sqrt(y) * k


@pytest.mark.parametrize("tangents", [(1.0, 0.0, None), (0.0, 1.0, None),
                                      (0.3, -2.0, None), (1.0, None, 0)])
def test_scalar_loops_branches_while_break(tangents):
    args = (0.3, 0.7, 5)
    value, tangent = branchy.jvp(args, tangents)
    assert value == pytest.approx(branchy.py_func(*args))
    assert tangent == pytest.approx(fd_jvp(branchy, args, tangents), rel=1e-6)


@nad.grad_jit
def early_return(x, n):
    s = x
    for i in range(n):
        s = s * s * 0.5 + math.cos(s)
        if s > 3.0:
            return s * 2.0          # out of the loop nest
        for j in range(3):
            if j == 1:
                continue
            s += 0.1 * x * j
    return -s


@nad.grad_jit
def halvings(x):
    k = 0
    while x > 1.0:
        x = x / 2.0
        k += 1
    return k


@pytest.mark.parametrize("x", [0.3, 2.5])
def test_return_and_continue_inside_loops(x):
    _, tangent = early_return.jvp((x, 6), (1.0, None))
    assert tangent == pytest.approx(fd_jvp(early_return, (x, 6), (1.0, None)), rel=1e-6)


def test_an_integer_result_has_no_tangent():
    assert halvings.jvp((10.0,), (1.0,)) == (4, None)


def test_jvp_is_the_gradient_along_the_tangent():
    args = (0.9, 1.3, 7)
    gx, gy, _ = branchy.grad(*args)
    _, tangent = branchy.jvp(args, (0.25, -1.5, None))
    assert tangent == pytest.approx(0.25 * gx - 1.5 * gy, rel=1e-12)


# ---------------------------------------------------------------------- arrays
@nad.grad_jit
def heat(u, dt, n):
    """Explicit time stepping, two buffers swapped each step; returns the last state."""
    m = u.shape[0]
    v = u.copy()
    w = np.zeros(m)
    for t in range(n):
        for i in range(1, m - 1):
            w[i] = v[i] + dt * (v[i - 1] - 2.0 * v[i] + v[i + 1]) - dt * math.sin(v[i])
        w[0] = v[0]
        w[m - 1] = v[m - 1]
        v, w = w, v
    return v


U = np.linspace(0.0, 1.0, 9)
DU = np.cos(np.arange(9.0))


@pytest.mark.parametrize("tangents", [(DU, None, None), (DU, 0.5, None),
                                      (None, 1.0, None)])
def test_array_in_array_out_time_stepping(tangents):
    args = (U, 0.1, 6)
    value, tangent = heat.jvp(args, tangents)
    np.testing.assert_allclose(value, heat.py_func(*args))
    assert_tree_close(tangent, fd_jvp(heat, args, tangents))


@nad.grad_jit
def whole_arrays(x, y):
    z = np.sin(x) * y + x @ x
    s = np.sum(z * z) + z.mean() + np.dot(x, y)
    q = x.copy()
    q *= 2.0
    q += y
    r = q[1:]                       # a view: written below through it
    r -= np.exp(x[:-1])
    total = 0.0
    for v in q:
        total += v * v
    return (s, (q, total), 3)


X = np.linspace(0.1, 1.0, 4)
Y = np.linspace(1.0, 2.0, 4)


def test_whole_array_expressions_views_and_nested_tuple_output():
    args = (X, Y)
    tangents = (np.full(4, 0.3), np.arange(4.0))
    value, tangent = whole_arrays.jvp(args, tangents)
    assert_tree_close(value, whole_arrays.py_func(*args), atol=0)
    assert tangent[2] is None       # an integer output has no tangent
    assert_tree_close(tangent[:2], fd_jvp(whole_arrays, args, tangents)[:2], rtol=1e-5)


@nad.grad_jit
def writes_its_argument(a, c):
    for i in range(a.shape[0]):
        a[i] = a[i] * c + 1.0
    return a.sum() * c


def test_arguments_written_by_the_function_are_left_as_given():
    a = np.array([1.0, 2.0, 3.0])
    ta = np.array([1.0, 0.0, -1.0])
    before, tbefore = a.copy(), ta.copy()
    value, tangent = writes_its_argument.jvp((a, 2.0), (ta, 0.5))
    np.testing.assert_array_equal(a, before)
    np.testing.assert_array_equal(ta, tbefore)
    assert tangent == pytest.approx(fd_jvp(writes_its_argument, (a, 2.0), (ta, 0.5)))


# ---------------------------------------------------------------------- hvp
@nad.grad_jit
def rosenbrock(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def rosenbrock_hessian(x):
    n = x.shape[0]
    h = np.zeros((n, n))
    for i in range(n - 1):
        h[i, i] += 1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0
        h[i + 1, i + 1] += 200.0
        h[i, i + 1] -= 400.0 * x[i]
        h[i + 1, i] -= 400.0 * x[i]
    return h


def test_hvp_rosenbrock_against_the_analytic_hessian():
    x = np.array([0.3, -0.5, 1.2, 0.8, -1.1])
    v = np.array([1.0, 2.0, -1.0, 0.5, 0.25])
    (hv,) = rosenbrock.hvp((x,), (v,))
    np.testing.assert_allclose(hv, rosenbrock_hessian(x) @ v, rtol=1e-12)


def test_hessian_by_columns_of_hvp():
    x = np.array([0.3, -0.5, 1.2, 0.8, -1.1])
    np.testing.assert_allclose(nad.hessian(rosenbrock)(x), rosenbrock_hessian(x),
                               rtol=1e-12)
    # d2/dx2 of branchy against a central difference of its gradient
    h = 1e-6
    want = (branchy.grad(0.4 + h, 0.8, 4)[0] - branchy.grad(0.4 - h, 0.8, 4)[0]) / (2 * h)
    assert nad.hessian(branchy)(0.4, 0.8, 4) == pytest.approx(want, rel=1e-5)


@nad.grad_jit
def quadratic(x, a, b):
    return 0.5 * np.dot(x, np.dot(a, x)) + b * np.sum(x) ** 2


def test_hvp_quadratic_against_the_analytic_hessian():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3))
    x, v = rng.standard_normal(3), rng.standard_normal(3)
    hv, ha, hb = quadratic.hvp((x, a, 1.5), (v, None, None))
    want = 0.5 * (a + a.T) @ v + 2.0 * 1.5 * np.sum(v) * np.ones(3)
    np.testing.assert_allclose(hv, want, rtol=1e-12)
    # d/db (grad_x . v) = 2 sum(x) sum(v)
    assert hb == pytest.approx(2.0 * np.sum(x) * np.sum(v), rel=1e-12)


def test_hvp_against_finite_differences_of_the_gradient():
    args, v, h = (0.4, 0.8, 4), (0.6, -1.0, None), 1e-6
    got = branchy.hvp(args, v)
    plus = branchy.grad(*_along(args, v, h))
    minus = branchy.grad(*_along(args, v, -h))
    for k in range(2):
        assert got[k] == pytest.approx((plus[k] - minus[k]) / (2 * h), rel=1e-5)
    assert got[2] is None


def test_hvp_needs_a_scalar_result():
    with pytest.raises(NonDifferentiableError, match="needs a function returning a float scalar"):
        heat.hvp((U, 0.1, 2), (DU, None, None))


# ---------------------------------------------------------------------- jacobian
@nad.grad_jit
def small_outputs(a, x):
    out = np.empty(3)
    out[0] = a * x[0] * x[1]
    out[1] = math.sin(a) + x[2]
    out[2] = x[0] ** 3
    return out


def fd_jacobian(f, args, k, h=1e-6):
    x = args[k]
    cols = []
    for j in range(np.size(x)):
        t = [None] * len(args)
        if np.isscalar(x):
            t[k] = 1.0
        else:
            t[k] = np.zeros_like(x)
            t[k].flat[j] = 1.0
        cols.append(np.asarray(fd_jvp(f, args, t, h)))
    return np.stack(cols, axis=-1).reshape(np.shape(f.py_func(*args)) + np.shape(x))


def test_jacobian_forward_columns_against_finite_differences():
    args = (0.7, np.array([0.5, -1.0, 2.0]))
    ja, jx = nad.jacobian(small_outputs, argnums=(0, 1), mode="forward")(*args)
    np.testing.assert_allclose(ja, fd_jacobian(small_outputs, args, 0), rtol=1e-6)
    np.testing.assert_allclose(jx, fd_jacobian(small_outputs, args, 1), rtol=1e-6,
                               atol=1e-8)
    assert jx.shape == (3, 3) and ja.shape == (3,)


def test_jacobian_reverse_rows_for_a_scalar_result():
    x = np.array([0.3, -0.5, 1.2, 0.8])
    rows = nad.jacobian(rosenbrock, mode="reverse")(x)
    cols = nad.jacobian(rosenbrock, mode="forward")(x)
    auto = nad.jacobian(rosenbrock)(x)
    np.testing.assert_allclose(rows, fd_jacobian(rosenbrock, (x,), 0), rtol=1e-6)
    np.testing.assert_allclose(cols, rows, rtol=1e-12)
    np.testing.assert_allclose(auto, rows, rtol=1e-12)


class _CountingVJP:
    """``small_outputs`` with its ``vjp``, counting the pullbacks ``jacobian`` runs."""

    def __init__(self, f):
        self.f, self.py_func, self.jvp = f, f.py_func, f.jvp
        self.calls = 0

    def __call__(self, *args):
        return self.f(*args)

    def vjp(self, *args):
        value, pullback = self.f.vjp(*args)

        def counted(cotangent):
            self.calls += 1
            return pullback(cotangent)
        return value, counted


def test_jacobian_uses_rows_by_vjp_when_outputs_are_fewer():
    g = _CountingVJP(small_outputs)
    args = (0.7, np.array([0.5, -1.0, 2.0]))
    ja, jx = nad.jacobian(g, argnums=(0, 1))(*args)      # 4 inputs, 3 outputs: rows
    assert g.calls == 3
    np.testing.assert_allclose(jx, fd_jacobian(small_outputs, args, 1), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(ja, fd_jacobian(small_outputs, args, 0), rtol=1e-6)


def test_jacobian_of_an_integer_argument_is_refused():
    with pytest.raises(TypeError, match="argument 'n'"):
        nad.jacobian(heat, argnums=2)(U, 0.1, 3)


# ---------------------------------------------------------------------- bad input
def test_tangent_of_the_wrong_shape_names_the_argument():
    with pytest.raises(ValueError, match=r"argument 'u' of heat has shape \(3,\)"):
        heat.jvp((U, 0.1, 2), (np.ones(3), None, None))


def test_tangent_of_the_wrong_dtype_names_the_argument():
    with pytest.raises(TypeError, match="argument 'u' of heat has dtype int64"):
        heat.jvp((U, 0.1, 2), (np.ones(9, dtype=np.int64), None, None))
    with pytest.raises(TypeError, match="argument 'dt' of heat must be a float"):
        heat.jvp((U, 0.1, 2), (None, "x", None))


def test_integer_arguments_take_no_tangent():
    with pytest.raises(TypeError, match="argument 'n' of heat must be None"):
        heat.jvp((U, 0.1, 2), (DU, None, 1.0))


def test_one_tangent_per_argument():
    with pytest.raises(TypeError, match="takes 3 arguments; 2 tangents"):
        heat.jvp((U, 0.1, 2), (DU, None))


@nad.grad_jit
def no_rule(x):
    return np.spacing(x) * 2.0


def test_a_call_without_a_rule_is_refused_with_its_line():
    with pytest.raises(NonDifferentiableError, match=r"(?s)spacing.*line \d+.*np.spacing"):
        no_rule.jvp((1.5,), (1.0,))


# ---------------------------------------------------------------------- the benchmark
def test_benchmark_program_and_report(tmp_path):
    from benchmarks import bench_jvp
    f = bench_jvp.reaction_diffusion
    u = np.linspace(0.2, 0.8, 12)
    args, tangents = (u, 0.2, 0.1, 4), (np.sin(np.arange(12.0)), 1.0, None, None)
    assert_tree_close(f.jvp(args, tangents)[1], fd_jvp(f, args, tangents))
    rows = bench_jvp.run([(12, 4)], repeat=1)      # checks ours against JAX's if present
    text = bench_jvp.write_all(rows, tmp_path)[1].read_text()
    assert "| 12 | 4 |" in text


@nad.grad_jit
def overwritten_in_a_while_loop(x, c):
    """Each step overwrites s, which the backward keeps on a stack of floats."""
    s = x
    k = 0
    while k < 12 or s < 0.0:
        s = math.sin(s) * c + 0.1 * s * s
        k += 1
    return s * x


@nad.grad_jit
def descent(w0, target, lr):
    """Arrays rebound in a loop: the backward keeps them on a list of arrays."""
    w = w0.copy()
    for it in range(5):
        g = w * w * w - target
        w = w - lr * np.tanh(g)
    return np.sum(w * w)


@pytest.mark.parametrize("f, args, v", [
    (overwritten_in_a_while_loop, (0.7, 1.3), (1.0, -0.5)),
    (descent, (np.array([0.5, -0.3, 0.8]), np.array([0.1, 0.2, 0.3]), 0.3),
     (np.array([1.0, 0.5, -2.0]), None, 0.7)),
])
def test_hvp_through_kept_values_against_finite_differences_of_the_gradient(f, args, v):
    h = 1e-6
    got = f.hvp(args, v)
    plus, minus = f.grad(*_along(args, v, h)), f.grad(*_along(args, v, -h))
    for k, g in enumerate(got):
        if plus[k] is None:
            assert g is None
        else:
            np.testing.assert_allclose(g, (plus[k] - minus[k]) / (2 * h), rtol=1e-5,
                                       atol=1e-8)


# ---------------------------------------------------------------------- tuple arguments
@nad.grad_jit
def spring(x, params):
    k, (rest, n) = params
    e = 0.0
    for i in range(n):
        d = x[i + 1] - x[i] - rest
        e += 0.5 * k * d * d * d
    return e


XS = np.array([0.0, 1.1, 1.9, 3.2])


def test_tuple_arguments_take_tuples_of_tangents():
    args = (XS, (2.0, (1.0, 3)))
    tangents = (np.array([0.1, -0.2, 0.3, 0.0]), (0.5, (-1.0, None)))
    flat = lambda a, t: (a[0] + t * tangents[0],
                         (a[1][0] + t * 0.5, (a[1][1][0] - t * 1.0, 3)))
    h = 1e-6
    want = (spring.py_func(*flat(args, h)) - spring.py_func(*flat(args, -h))) / (2 * h)
    assert spring.jvp(args, tangents)[1] == pytest.approx(want, rel=1e-6)
    with pytest.raises(TypeError, match=r"argument 'params\[1\]' of spring must be a tuple"):
        spring.jvp(args, (None, (0.5, 1.0)))
    with pytest.raises(TypeError, match=r"argument 'params\[1\]\[1\]' of spring must be "
                                        r"None"):
        spring.jvp(args, (None, (0.5, (1.0, 2))))


def test_hvp_with_a_tuple_argument_against_finite_differences_of_the_gradient():
    args = (XS, (2.0, (1.0, 3)))
    v = (np.array([0.1, -0.2, 0.3, 0.0]), (0.5, (-1.0, None)))
    hv = spring.hvp(args, v)
    h = 1e-6
    shifted = lambda t: (XS + t * v[0], (2.0 + t * 0.5, (1.0 - t, 3)))
    plus, minus = spring.grad(*shifted(h)), spring.grad(*shifted(-h))
    np.testing.assert_allclose(hv[0], (plus[0] - minus[0]) / (2 * h), rtol=1e-5)
    assert hv[1][0] == pytest.approx((plus[1][0] - minus[1][0]) / (2 * h), rel=1e-5)
    assert hv[1][1][0] == pytest.approx((plus[1][1][0] - minus[1][1][0]) / (2 * h),
                                        rel=1e-5)
    assert hv[1][1][1] is None


def test_jacobian_beside_a_tuple_argument_in_both_modes():
    args = (XS, (2.0, (1.0, 3)))
    grad = spring.grad(*args)[0]
    for mode in ("forward", "reverse"):
        np.testing.assert_allclose(nad.jacobian(spring, mode=mode)(*args), grad,
                                   rtol=1e-12)


# ---------------------------------------------------------------------- realistic programs
# Programs of the corpus (tests/realistic_programs.py) that use what forward mode adds
# (np.array of a list, np.max, np.linalg.solve, whole-array arithmetic, np.interp, np.diff);
# the whole corpus was checked the same way once (29 agree, 6 refused for their loop forms
# or np.interp, which now has its tangent).
CORPUS = ["rk4_pendulum", "softmax_cross_entropy", "ridge_solve", "interp_resample",
          "arc_length_diff"]


@nad.grad_jit
def interpolated(x, xp, fp, s):
    z = np.interp(x, xp, fp)
    return np.sum(z * z) + np.interp(s, xp, fp) ** 2 + np.sum(z[1:] * np.diff(x))


def test_interp_tangent_in_points_knots_and_values():
    rng = np.random.default_rng(5)
    xp = np.cumsum(rng.uniform(0.2, 1.0, 5))
    args = (rng.uniform(xp[0] - 0.3, xp[-1] + 0.3, 7), xp, rng.standard_normal(5),
            float(xp[2]) + 0.1)
    for tangents in [(rng.standard_normal(7), rng.standard_normal(5),
                      rng.standard_normal(5), 0.7), (None, None, np.ones(5), None),
                     (np.ones(7), None, None, -1.0)]:
        _, got = interpolated.jvp(args, tangents)
        assert got == pytest.approx(fd_jvp(interpolated, args, tangents), rel=1e-6, abs=1e-8)


def test_hvp_through_interp_against_finite_differences_of_the_gradient():
    """Forward over reverse through the three adjoints of np.interp: the points, the knots
    and the values all move (no point on a knot, where the Hessian jumps)."""
    rng = np.random.default_rng(8)
    xp = np.cumsum(rng.uniform(0.2, 1.0, 5))
    args = (rng.uniform(xp[0] - 0.3, xp[-1] + 0.3, 7), xp, rng.standard_normal(5),
            float(xp[2]) + 0.1)
    h = 1e-6
    for v in [(rng.standard_normal(7), rng.standard_normal(5), rng.standard_normal(5), 0.7),
              (None, rng.standard_normal(5), None, None)]:
        got = interpolated.hvp(args, v)
        plus = interpolated.grad(*_along(args, v, h))
        minus = interpolated.grad(*_along(args, v, -h))
        for k, g in enumerate(got):
            np.testing.assert_allclose(g, (plus[k] - minus[k]) / (2 * h), rtol=1e-5,
                                       atol=1e-7, err_msg="argument %d" % k)


@nad.grad_jit
def reordered(a, x):
    """Adjoints the backward builds with helpers linear in the adjoint (inv's, stacks',
    sort's, triangles') and NumPy's flips and rolls."""
    s = np.sum(np.linalg.inv(a) * a) + np.linalg.det(a) + np.sum(np.hstack((x, x * x)) ** 2)
    s += np.sum(np.sort(x) * np.arange(5.0) * x) + np.sum(np.triu(a, 1) ** 3)
    return s + np.sum(np.flip(a) * a * a) + np.sum(np.roll(x, 2) * np.sin(x))


def test_hvp_through_reordering_rules_against_finite_differences_of_the_gradient():
    rng = np.random.default_rng(9)
    args = (rng.standard_normal((3, 3)) + 3.0 * np.eye(3), rng.standard_normal(5))
    v, h = (rng.standard_normal((3, 3)), rng.standard_normal(5)), 1e-6
    got = reordered.hvp(args, v)
    plus = reordered.grad(*_along(args, v, h))
    minus = reordered.grad(*_along(args, v, -h))
    for k, g in enumerate(got):
        np.testing.assert_allclose(g, (plus[k] - minus[k]) / (2 * h), rtol=1e-5, atol=1e-7,
                                   err_msg="argument %d" % k)


@pytest.mark.parametrize("name", CORPUS)
def test_realistic_programs_against_finite_differences(name):
    from realistic_programs import copy_args, get_case, pure_python
    case = get_case(name)
    args = case.make_args()
    rng = np.random.default_rng(1)
    tangents = [None] * len(args)
    for k in case.wrt:
        a = args[k]
        tangents[k] = rng.standard_normal(a.shape) if isinstance(a, np.ndarray) \
            else float(rng.standard_normal())
    _, got = nad.grad_jit(case.target).jvp(copy_args(args), tangents)
    py, h = pure_python(case.target), 1e-6
    want = (py(*_along(args, tangents, h)) - py(*_along(args, tangents, -h))) / (2 * h)
    assert got == pytest.approx(want, rel=1e-5, abs=1e-8)


# ---------------------------------------------------------------------- CUDA kernels
def test_tangent_kernel_in_the_cuda_simulator():
    """k.jvp[grid, block] of a kernel with a while loop and an atomic add, against finite
    differences of the kernel (tests/_jvp_cuda_sim.py, in a process of its own)."""
    pytest.importorskip("numba_cuda", reason="numba-cuda is not installed")
    import json
    import os
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(here)),
                                                    env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, os.path.join(here, "..", "_jvp_cuda_sim.py")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    errors = json.loads(proc.stdout.strip().splitlines()[-1])
    assert errors["value"] == 0.0
    assert errors["out"] < 1e-6 and errors["total"] < 1e-6, errors
