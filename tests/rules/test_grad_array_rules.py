"""The array rules (rules/array_rules.py) through ``grad_jit``: selections, reductions with
``axis=``, linear algebra and shapes, by function, method and keyword, with broadcasting
and non-contiguous views as arguments, against central finite differences of the
pure-Python function. Several primitives share one compiled function (one compilation per
argument layout); NUMBA_ADSTACK_ARRAY_RULES_FULL=1 adds more shapes."""
import os

import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

from conftest import check_fd

RNG = np.random.default_rng(14)
FULL = os.environ.get("NUMBA_ADSTACK_ARRAY_RULES_FULL") == "1"


def rand(*shape):
    return RNG.uniform(-1.0, 1.0, shape)


def more(core, extra):
    """The cases of a test: ``core`` always, ``extra`` in the full sweep."""
    return list(core) + (list(extra) if FULL else [])


# ----------------------------------------------------------------------------- selections
@nad.grad_jit
def selections(x, y):
    """where, clip, maximum, minimum; x and y broadcast against each other."""
    a = np.where(x > 0.1, x, y) * 1.5
    b = np.clip(x, -0.4, 0.6)
    c = np.maximum(x, y) * np.minimum(y, x * 0.5)
    d = np.clip(x + y, y, 0.5)      # an array bound
    return np.sum(a * a) + np.sum(b * y) + np.sum(c) + np.sum(d * d)


@pytest.mark.parametrize("shapes", more(
    [((3, 4), (4,)), ((4,), (3, 1))], [((2, 3, 4), (3, 1)), ((5,), (5,))]),
    ids=str)
def test_selections_broadcast(shapes):
    check_fd(selections, rand(*shapes[0]), rand(*shapes[1]))


def test_selections_of_views():
    # Non-contiguous operands: every other row (and, in the full sweep, a transpose).
    check_fd(selections, rand(6, 4)[::2], rand(4, 2).T[1])
    if FULL:
        check_fd(selections, rand(4, 3).T, rand(8)[::2])


# ----------------------------------------------------------------------------- reductions
@nad.grad_jit
def reductions(x):
    """Every reduction of a 2-d array, with axes by position, keyword and method."""
    rows = np.sum(x, axis=0)
    cols = x.sum(axis=1)
    s = np.sum(rows * rows) + np.sum(cols * np.sin(cols)) + np.sum(np.sum(x, 1) ** 3)
    s += x.sum() * np.mean(x) + x.mean() + np.prod(x * 0.5 + 1.0)
    s += np.max(x) * 2.0 + x.min() + x.max() * np.min(x)
    s += np.var(x) + np.std(x) * 3.0 + x.var() + x.std()
    s += np.linalg.norm(x) + np.linalg.norm(x[0])
    c = np.cumsum(x)
    s += np.sum(c * c) + np.sum(np.cumsum(x, axis=1) ** 2) + np.sum(x.cumsum() * 0.3)
    return s + x.prod()


@pytest.mark.parametrize("x", more(
    [rand(3, 4), rand(6, 8)[::2, 1::3]],
    [rand(4, 3).T, rand(1, 5), rand(5, 1), rand(9, 9)[::4, ::-2]]),
    ids=lambda x: "x".join(map(str, x.shape)) + ("" if x.flags.c_contiguous else "v"))
def test_reductions(x):
    check_fd(reductions, x)


@nad.grad_jit
def reductions_3d(x):
    """Axes of a 3-d array, and reductions of views of it."""
    a = np.sum(x, axis=2)
    b = np.sum(x, axis=0)
    return np.sum(a * a) + np.sum(b ** 3) + np.sum(np.cumsum(x, axis=1) * x) \
        + np.max(x[0]) + np.mean(x[1])


def test_reductions_3d():
    check_fd(reductions_3d, rand(2, 3, 4))
    check_fd(reductions_3d, rand(4, 3, 8)[::2, :, ::2])


# ----------------------------------------------------------------------------- linear algebra
@nad.grad_jit
def linear_algebra(a, b, v):
    """dot and @ on 1-d and 2-d operands, outer, solve, inv, det, trace, diag."""
    s = np.sum(np.dot(a, v) ** 2) + np.sum((v @ a) * v) + np.dot(v, v * 2.0)
    s += np.sum((a @ b) * b) + np.sum(np.dot(b.T, a) ** 2) + np.sum(a.dot(v))
    s += np.sum(np.outer(v, np.dot(a, v)) * a)
    s += np.sum(np.linalg.solve(a, v) * v) + np.sum(np.linalg.solve(a, b) ** 2)
    s += np.sum(np.linalg.inv(a) * a) + np.linalg.det(a) + np.trace(a @ a)
    s += np.sum(np.diag(a) ** 3) + np.sum(np.diag(v) * a) + np.trace(a, 1)
    return s


def _well_conditioned(n):
    return rand(n, n) + 3.0 * np.eye(n)


def test_linear_algebra():
    check_fd(linear_algebra, _well_conditioned(3), rand(3, 4), rand(3))


@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaPerformanceWarning")
def test_linear_algebra_of_views():
    a = np.ascontiguousarray(_well_conditioned(4).T).T       # Fortran order
    check_fd(linear_algebra, a, rand(8, 6)[::2, ::2], rand(8)[1::2])


# ----------------------------------------------------------------------------- shapes
@nad.grad_jit
def shapes_any_layout(x, y):
    """Shape functions that take any layout (x 2-d, y 1-d with x's row length)."""
    s = np.sum(x.T * np.sin(x.T)) + np.sum(np.transpose(x) ** 2) + np.sum(x.transpose(1, 0))
    s += np.sum(np.concatenate((x, x * y), axis=0) ** 2)
    s += np.sum(np.concatenate((x, x * 2.0), 1) * np.concatenate((x, x), axis=1))
    s += np.sum(np.concatenate((y, np.sin(y))) ** 2)
    s += np.sum(np.stack((x[0], y)) ** 3) + np.sum(np.stack((y, y * y), axis=1) * 0.5)
    s += np.sum(np.atleast_2d(y) ** 2) + np.sum(np.atleast_3d(x) * np.atleast_1d(y))
    s += np.sum(np.expand_dims(y, 0) * x) + np.sum(np.expand_dims(y, axis=1) ** 2)
    s += np.sum(x.copy() * x) + np.sum(x.astype(np.float64) ** 3) + np.sum(np.copy(y) * y)
    return s + np.sum(x.flatten() ** 3) + np.sum(np.ravel(x) * 0.25)


@nad.grad_jit
def shapes_contiguous(x):
    """reshape by method (one tuple or separate sizes) and by function; ravel."""
    n, m = x.shape
    s = np.sum(x.reshape(m, n) * x.T) + np.sum(x.reshape((n * m,)) ** 3)
    s += np.sum(np.reshape(x, (m * n, 1)) * np.arange(m * n * 1.0).reshape(m * n, 1))
    s += np.sum(x.ravel() ** 2) + np.sum(x.reshape(-1) * 0.5)
    return s


def test_shapes():
    check_fd(shapes_any_layout, rand(3, 4), rand(4))
    check_fd(shapes_contiguous, rand(3, 4))


def test_shapes_of_views():
    check_fd(shapes_any_layout, rand(6, 4)[::2], rand(8)[::2])
    if FULL:                # (a transpose: Fortran order)
        check_fd(shapes_any_layout, rand(4, 3).T, rand(4))


# ----------------------------------------------------------------------------- in place
@nad.grad_jit
def in_place(x, y):
    """In-place operators on computed arrays and on a copy, with broadcasting."""
    z = x * 2.0
    z += y
    z *= np.exp(x)
    z -= np.sqrt(x * x + 1.0)
    w = x.copy()
    w /= y + 3.0
    w **= 2
    return np.sum(z * z) + np.sum(w)


def test_in_place_operators():
    check_fd(in_place, rand(3, 4), rand(4))


@nad.grad_jit
def read_then_written(x):
    """Rules that read an array which is written afterwards see the values it had."""
    y = x.copy()
    p = np.prod(y) + np.max(y) * np.linalg.norm(y)
    y *= 2.0
    y[0] = y[1] * y[2]
    return p * np.sum(y * y)


def test_rule_operands_written_afterwards():
    check_fd(read_then_written, rand(5) + 2.0)


@nad.grad_jit
def where_indices(x):
    """np.where(c) of one argument gives indices: another form than the rule's, used off
    the gradient path."""
    idx = np.where(x > 0.0)[0]
    s = 0.0
    for k in range(idx.size):
        s += x[idx[k]] ** 2
    return s


def test_where_of_one_argument_gives_indices():
    x = rand(6)
    (g,) = check_fd(where_indices, x)
    np.testing.assert_allclose(g, 2.0 * x * (x > 0.0), rtol=1e-12)


# ----------------------------------------------------------------------------- sequences
@nad.grad_jit
def differences(x, a):
    """np.diff of a vector (n = 1, 2 by position, 3 by keyword) and of a matrix (along its
    last axis)."""
    d1 = np.diff(x)
    s = np.sum(np.sqrt(d1 * d1 + 0.1)) + np.sum(np.diff(x, 2) ** 2)
    s += np.sum(np.diff(x, n=3) * x[3:])
    return s + np.sum(np.sin(np.diff(a)) * np.diff(a, 2).sum())


@pytest.mark.parametrize("n,shape", more([(6, (3, 4)), (9, (1, 5))], [(4, (5, 3))]), ids=str)
def test_diff(n, shape):
    check_fd(differences, rand(n), rand(*shape))


def test_diff_of_views():
    # Numba compiles np.diff of contiguous arrays only: a row, and a block of rows.
    check_fd(differences, rand(3, 7)[1], rand(5, 4)[1:4])


@nad.grad_jit
def interpolation(x, xp, fp, s):
    """np.interp of an array of points (inside and outside the knots) and of one point."""
    z = np.interp(x, xp, fp)
    return np.sum(z * z) + np.interp(s, xp, fp) ** 3 + np.sum(np.interp(x[:2], xp, fp * fp))


def _knots(n):
    return np.cumsum(RNG.uniform(0.2, 1.0, n)) - 0.5


@pytest.mark.parametrize("points,knots", more([(5, 4), (7, 6)], [(3, 2), (9, 8)]), ids=str)
def test_interp(points, knots):
    xp = _knots(knots)
    x = RNG.uniform(xp[0] - 0.3, xp[-1] + 0.3, points)
    check_fd(interpolation, x, xp, rand(knots), float(np.mean(xp)) + 0.01)


def test_interp_of_views():
    xp = _knots(5)
    x = RNG.uniform(xp[0] - 0.3, xp[-1] + 0.3, 12)
    check_fd(interpolation, x[::2], np.repeat(xp, 2)[::2], rand(10)[::-2], float(xp[1]) + 0.05)


def test_interp_gradient_in_the_values_is_the_hat_weights():
    # Analytic: d z_k / d fp_j is the hat function of knot j at x_k.
    xp, fp = np.array([0.0, 1.0, 3.0]), np.array([1.0, -2.0, 0.5])
    x = np.array([-1.0, 0.25, 2.0, 4.0])
    g = interpolation.grad(x, xp, fp, 0.5)
    z = np.interp(x, xp, fp)
    hats = np.array([[1.0, 0.0, 0.0], [0.75, 0.25, 0.0], [0.0, 0.5, 0.5], [0.0, 0.0, 1.0]])
    want_fp = 2.0 * z @ hats + 3.0 * np.interp(0.5, xp, fp) ** 2 * np.array([0.5, 0.5, 0.0])
    want_fp += 2.0 * fp * (hats[:2].sum(axis=0))
    np.testing.assert_allclose(g[2], want_fp, rtol=1e-12)
    # d/dx: the slope of each point's interval (0 outside); the last term adds the slope
    # of fp * fp at x[1] (x[0] is outside).
    slopes = np.array([0.0, -3.0, 1.25, 0.0])
    np.testing.assert_allclose(g[0], 2.0 * z * slopes + np.array([0.0, 3.0, 0.0, 0.0]),
                               rtol=1e-12)


@nad.grad_jit
def items(a, b, c, y):
    """np.array of a list, of a nested list (2-d) and of a tuple of floats."""
    v = np.array([a, b * c, np.sin(c), y[1]])
    m = np.array([[a, b], [c, a * b], [y[0], 2.0]])
    t = np.array((c, a))
    return np.sum(v * v) + np.sum(m ** 3) + np.linalg.det(m[:2]) + np.sum(np.exp(t)) * v[0]


def test_array_of_floats():
    check_fd(items, 0.3, -0.7, 1.1, rand(3))
    check_fd(items, -1.2, 0.4, 0.2, rand(6)[::-3])


@nad.grad_jit
def gathers(x, idx, mask):
    """x[idx] with integer indices (repeated, negative) and with a boolean mask."""
    r = x[idx]
    return np.sum(r * r * r) + np.sum(np.sin(x[mask]))


@pytest.mark.parametrize("shape", more([(6,), (6, 3)], [(6, 1, 2)]), ids=str)
def test_gather(shape):
    idx = np.array([4, 1, -1, 4, 0])
    mask = np.array([True, False, True, True, False, True])
    check_fd(gathers, rand(*shape), idx, mask)
    check_fd(gathers, rand(*((12,) + shape[1:]))[::2], idx, mask)


@nad.grad_jit
def mixed_gathers(x, idx, mask):
    """An index array beside integers and slices: x[idx, 1], x[idx, :], x[:, idx],
    x[1:3, idx], x[2, idx], x[mask, 1]; a 3-d x also gives x[1, :, idx] (the integer
    and the array apart: NumPy puts the gathered dimension first)."""
    s = np.sum(x[idx, 1] ** 3) + np.sum(np.sin(x[idx, :])) + np.sum(x[:, idx] ** 2)
    s += np.sum(x[1:3, idx] * x[2, idx]) + np.sum(np.cos(x[mask, 1]))
    if x.ndim == 3:
        s += np.sum(x[1, :, idx % 2] * np.arange(x.shape[1]))
    return s


def test_gather_with_integers_and_slices():
    idx = np.array([4, 1, -1, 4, 0])         # repeated and negative entries
    mask = np.array([True, False, True, True, False, True])
    check_fd(mixed_gathers, rand(6, 6), idx, mask)
    check_fd(mixed_gathers, rand(12, 6, 2)[::2], idx, mask)      # a 3-d view


# ----------------------------------------------------------------------------- refused
def _matrix_power(a):
    return np.sum(np.linalg.matrix_power(a, 3))


def _write_into_reshape(x):
    y = x * 2.0
    z = y.reshape(6)
    z[0] = 1.0
    return np.sum(y * y)


@pytest.mark.parametrize("fn,what,line", [
    (_write_into_reshape, "np.reshape", "z[0] = 1.0"),
    (_matrix_power, "matrix_power", "return np.sum(np.linalg.matrix_power(a, 3))"),
])
def test_primitives_without_rules_are_refused(fn, what, line):
    arg = {_matrix_power: _well_conditioned(4), _write_into_reshape: rand(2, 3)}.get(fn, rand(4))
    with pytest.raises(NonDifferentiableError) as ei:
        nad.grad_jit(fn).grad(arg)
    msg = str(ei.value)
    assert fn.__name__ in msg and what in msg and line in msg, msg


@nad.grad_jit
def _vector_matmul(u, v, a):
    return (u @ v) * (a @ u).sum() + np.sin(u) @ v


def test_matmul_of_two_vectors_is_a_dot_product():
    rng = np.random.default_rng(11)
    u, v, a = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal((3, 4))
    check_fd(_vector_matmul, u, v, a, rtol=1e-6, atol=1e-8)
