"""Special functions and the rest of the NumPy that Numba compiles, through ``grad_jit``:
``math.lgamma``/``math.gamma`` (their rules call rules/special.py's digamma and trigamma),
NumPy functions of float input, tuple-returning linear algebra read by index, and the
shape functions, against central finite differences of the pure-Python function, in
reverse mode, forward mode and (for the special functions) forward over reverse.
Several primitives share one compiled function."""
import math
import operator

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError
from numba_adstack.ad.rules.special import digamma, trigamma

from conftest import check_fd, fd_grad, full_sweep

#: np.row_stack, an alias of np.vstack, is gone in NumPy 2.5.
row_stack = getattr(np, "row_stack", np.vstack)

RNG = np.random.default_rng(23)


def rand(*shape):
    return RNG.uniform(-1.0, 1.0, shape)


def fd_jvp(f, args, tangents):
    """The directional derivative of ``f.py_func`` by finite differences of the gradient's
    definition: sum over arguments of the FD gradient times the tangent."""
    grads = fd_grad(f.py_func, args)
    return sum(float(np.sum(g * t)) for g, t in zip(grads, tangents) if g is not None)


# ------------------------------------------------------------------------ special functions
def test_digamma_trigamma_against_known_values():
    # psi(1) = -Euler's gamma, psi(1/2) = -gamma - 2 ln 2, psi1(1) = pi^2/6,
    # psi1(1/2) = pi^2/2; the recurrence psi(x+1) = psi(x) + 1/x and the reflection
    # formulas carry them to the rest of the line.
    euler = 0.5772156649015329
    assert digamma(1.0) == pytest.approx(-euler, abs=1e-15)
    assert digamma(0.5) == pytest.approx(-euler - 2 * math.log(2.0), abs=1e-15)
    assert trigamma(1.0) == pytest.approx(math.pi ** 2 / 6, abs=1e-15)
    assert trigamma(0.5) == pytest.approx(math.pi ** 2 / 2, abs=1e-15)
    for x in (1e-6, 0.3, 2.5, 9.99, 10.0, 31.7, 1e6, -0.4, -3.7, -20.25):
        scale = 1e-13 * max(1.0, abs(1.0 / x))      # the sum's rounding
        assert digamma(x + 1.0) == pytest.approx(digamma(x) + 1.0 / x, abs=scale)
        assert trigamma(x + 1.0) == pytest.approx(trigamma(x) - 1.0 / (x * x),
                                                  abs=scale / abs(x))
        if x < 0:                    # the reflection formulas, with the positive side
            cot = math.cos(math.pi * x) / math.sin(math.pi * x)
            assert digamma(1.0 - x) - digamma(x) == pytest.approx(math.pi * cot, rel=1e-12)
    for x in (3.3, -2.6, 0.07):      # trigamma is digamma's derivative
        h = 1e-5
        assert trigamma(x) == pytest.approx((digamma(x + h) - digamma(x - h)) / (2 * h),
                                            rel=1e-7)
    assert math.isnan(digamma(0.0)) and math.isnan(digamma(-3.0))
    assert math.isnan(trigamma(-1.0)) and math.isnan(digamma(math.nan))


@nad.grad_jit
def gammas(x, a):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.lgamma(x[i] * a) + 0.1 * math.gamma(x[i] + 0.5)
    return s


GAMMA_X = np.array([0.3, 1.7, 4.2, -0.6, -2.3, 7.5])


def test_lgamma_gamma_reverse_and_forward():
    check_fd(gammas, GAMMA_X, 1.1)
    tangents = (np.linspace(-1.0, 1.0, GAMMA_X.size), 0.5)
    _, t = gammas.jvp((GAMMA_X, 1.1), tangents)
    assert t == pytest.approx(fd_jvp(gammas, (GAMMA_X, 1.1), tangents), rel=1e-6)


def test_lgamma_gamma_hvp_uses_trigamma():
    v = (np.linspace(-1.0, 1.0, GAMMA_X.size), 0.5)
    hx, ha = gammas.hvp((GAMMA_X, 1.1), v)
    eps = 1e-5
    gp = gammas.grad(GAMMA_X + eps * v[0], 1.1 + eps * v[1])
    gm = gammas.grad(GAMMA_X - eps * v[0], 1.1 - eps * v[1])
    np.testing.assert_allclose(hx, (gp[0] - gm[0]) / (2 * eps), rtol=1e-6)
    assert ha == pytest.approx((gp[1] - gm[1]) / (2 * eps), rel=1e-6)


# ------------------------------------------------------------------- NumPy of float input
@nad.grad_jit
def float_input(x, a):
    """np.sinc, real, imag, conj, conjugate, angle of floats and float arrays (the angle
    away from 0, where it jumps); operator.mul and the like called as functions."""
    s = np.sinc(a) + np.real(a) * np.conj(a) + np.conjugate(a) + np.imag(a) \
        + np.angle(a - 3.0)
    for i in range(x.shape[0]):
        s += np.sinc(x[i]) * np.real(x[i]) + np.angle(x[i] - 3.0) * np.imag(x[i])
    y = np.sinc(x) * np.real(x) + np.conj(x) * np.conjugate(x) + np.imag(x) \
        + np.angle(x - 3.0) * np.angle(x * x + 1.0)
    y = y + x.real * x.conj() + x.imag + x.conjugate()
    # operators called as functions take their operators' rules
    s += operator.mul(a, 2.0) + operator.truediv(operator.neg(a), 3.0) + operator.pow(a, 2)
    return s + np.sum(y * y)


@pytest.mark.parametrize("a", [0.7, 0.0, -2.5])
def test_float_input_functions(a):
    x = np.array([0.3, -1.7, 0.0, 2.5, -0.45])      # sinc's derivative is 0 at 0
    check_fd(float_input, x, a)
    tangents = (np.linspace(-1.0, 1.0, x.size), 0.5)
    _, t = float_input.jvp((x, a), tangents)
    assert t == pytest.approx(fd_jvp(float_input, (x, a), tangents), rel=1e-6)


@nad.grad_jit
def no_gradient_factors(x):
    # Operands of calls whose rules give them no gradient get no adjoint of their own.
    y = x * 2.0 + np.floor(x * x + 1.0) * np.sign(x - 3.0)
    return np.sum(y * y)


def test_operands_without_gradient_get_no_adjoint():
    check_fd(no_gradient_factors, np.array([0.3, -1.7, 0.1, 2.5, -0.45]))


# ------------------------------------------------------------ decompositions, tuple items
@nad.grad_jit
def decompositions(a, b):
    """Items of eigh, svd and slogdet read by index and by unpacking; cholesky, pinv."""
    w = np.linalg.eigh(a)[0]
    _, v = np.linalg.eigh(a)
    s = np.linalg.svd(b)[1]
    sign, logabs = np.linalg.slogdet(a)
    low = np.linalg.cholesky(a)
    p = np.linalg.pinv(b)
    c = np.array([1.0, -2.0, 0.5])
    # (v * v: the loss does not depend on the eigenvectors' signs)
    return np.sum(w * c) + np.sum(v * v * a) + np.sum(s * s * s) + logabs * sign \
        + np.sum(low * low * a) + np.sum(np.sin(p))


def _spd_not_symmetric(n, rng):
    m = rng.uniform(-1.0, 1.0, (n, n))
    a = m @ m.T + n * np.eye(n)
    a[0, n - 1] += 0.3          # eigh and cholesky do not read the upper triangle
    return a


@pytest.mark.parametrize("b_shape", [(4, 3), pytest.param((3, 5), marks=full_sweep)])
def test_decompositions_reverse_and_forward(b_shape):
    a = _spd_not_symmetric(3, RNG)
    b = rand(*b_shape)
    check_fd(decompositions, a, b, rtol=1e-5)
    tangents = (rand(3, 3), rand(*b_shape))
    _, t = decompositions.jvp((a, b), tangents)
    assert t == pytest.approx(fd_jvp(decompositions, (a, b), tangents), rel=1e-5)


@nad.grad_jit
def histogram_of(a):
    h, edges = np.histogram(a)
    return np.sum(h * a[0]) + np.sum(edges)


def test_tuple_item_without_rule_is_refused_naming_the_function():
    with pytest.raises(NonDifferentiableError,
                       match=r"item [01] of the tuple returned by .*np\.histogram"):
        histogram_of.grad(rand(3, 3))


# ------------------------------------------------------------------ arranging elements
@nad.grad_jit
def arrange(a, b, v, s, e):
    """kron (2-d by 2-d, 1-d by 2-d), cross, moveaxis, rot90, repeat (a count, counts),
    nan_to_num, linspace of float endpoints, append along axes, row_stack."""
    k = np.kron(a, b)
    k1 = np.kron(v, a)
    c = np.cross(v, v * v + 1.0)
    m = np.moveaxis(a.reshape((3, 2, 2)), 0, 2)
    r = np.rot90(a) + np.rot90(a, 3) * 0.5 + np.rot90(a, 2).T
    rp = np.repeat(v, 2) + np.repeat(a[0, :3], np.array([1, 0, 5]))
    n = np.nan_to_num(np.log(v), nan=2.0) + np.nan_to_num(np.log(s))
    ls = np.linspace(s, e, 7)
    ap = np.append(a, b, axis=0)
    ap2 = np.append(a, a[:, 1:3] * 2.0, axis=1) + np.append(a, np.sin(a[:, :2]), axis=-1)
    rs = row_stack((v, v * 2.0))
    return (np.sum(k * k) + np.sum(np.sin(k1)) + np.sum(c * c) + np.sum(m * m * m)
            + np.sum(r * r) + np.sum(rp * rp) + np.sum(n * n) + np.sum(ls * ls)
            + np.sum(np.sin(ap)) + np.sum(ap2 * ap2) + np.sum(rs * rs * rs))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")     # np.row_stack
def test_arrange_reverse_and_forward():
    args = (rand(3, 4), rand(2, 4), np.array([0.5, -0.3, 1.2]), 0.7, 2.1)   # log(-0.3): NaN
    check_fd(arrange, *args)
    tangents = tuple(rand(*np.shape(x)) if isinstance(x, np.ndarray) else 0.3 for x in args)
    _, t = arrange.jvp(args, tangents)
    assert t == pytest.approx(fd_jvp(arrange, args, tangents), rel=1e-6)


@nad.grad_jit
def pieces(x, m):
    """Items of np.split and np.array_split, read by constant index, also from a name."""
    p = np.split(x, 3)
    q = np.array_split(m, 2)[1]
    a, b = np.split(x, 3)[0], np.array_split(x, 4)[3]
    return np.sum(p[1] * p[2]) + np.sum(q * q * q) + np.sum(a * a) + np.sum(np.sin(b))


def test_split_items_reverse_and_forward():
    args = (rand(6), rand(5, 2))
    check_fd(pieces, *args)
    tangents = (rand(6), rand(5, 2))
    _, t = pieces.jvp(args, tangents)
    assert t == pytest.approx(fd_jvp(pieces, args, tangents), rel=1e-6)


@numba.njit
def _vertical_pieces(m):
    return np.vsplit(m, 2)


@nad.grad_jit
def selections_and_pieces(x, m, t, n, k):
    """np.select of lists written at the call (with and without a default, the default a
    float argument); hsplit, vsplit, dsplit; split and array_split along an axis, by
    position and keyword; sections and the item's index known only at run time; the
    pieces of a list an njit helper returns."""
    s1 = np.select([x > 0.2, x < -0.5], [x * x, np.sin(x)], t)
    s2 = np.select((m > 0.0,), (m * 3.0,))
    h = np.hsplit(m, 2)[1] * np.hsplit(x, 3)[0].sum()
    v = np.vsplit(m, 2)[0]
    d = np.dsplit(m.reshape((2, 2, 6)), 3)[2]
    a = np.split(m, 3, axis=1)[2] + np.array_split(m, 4, 1)[k] * np.split(m, 2, -1)[0][:, :2]
    p = np.split(x, n)
    b = np.array_split(x, n)[n - 1]
    vp = _vertical_pieces(m)            # the list returned by a helper
    v = v + vp[1] * vp[0]
    return (np.sum(s1 * s1) + np.sum(np.sin(s2)) + np.sum(h * h) + np.sum(v ** 3)
            + np.sum(d * d * d) + np.sum(np.cos(a)) + np.sum(p[k] * p[0]) + np.sum(b * b))


def test_select_and_splits_reverse_and_forward():
    x = np.array([0.3, -1.7, 0.6, 2.5, -0.45, 0.1])   # away from the conditions' edges
    args = (x, rand(4, 6), 0.7, 3, 1)
    check_fd(selections_and_pieces, *args)
    tangents = (rand(6), rand(4, 6), 0.5, None, None)
    _, t = selections_and_pieces.jvp(args, tangents)
    assert t == pytest.approx(fd_jvp(selections_and_pieces, args, tangents), rel=1e-6)


@nad.grad_jit
def select_of_a_grown_list(x):
    conds = [x > 0.2]
    conds.append(x < -0.5)          # not the list written at the call: not expanded
    return np.sum(np.select(conds, [x * x, np.sin(x)]))


@nad.grad_jit
def piece_of_a_shortened_list(x):
    p = np.split(x, 3)
    p.pop(0)                        # p[0] is no longer piece 0
    return np.sum(p[0] * p[0])


@nad.grad_jit
def pieces_in_a_loop(x, n):
    p = np.split(x, n)
    s = 0.0
    for i in range(len(p)):
        s += np.sum(p[i] * p[i]) * (i + 1.0)
    return s


def test_lists_changed_in_place_are_refused_naming_the_function():
    with pytest.raises(NonDifferentiableError, match=r"np\.select"):
        select_of_a_grown_list.grad(np.array([0.3, -1.7, 0.6]))
    with pytest.raises(NonDifferentiableError, match=r"item 0 .*np\.split.*not changed"):
        piece_of_a_shortened_list.grad(rand(6))
    check_fd(pieces_in_a_loop, rand(6), 3)      # only read: each item is its piece


@nad.grad_jit
def clipped_and_expanded(x, lo, hi):
    w = np.arange(6.0).reshape(3, 2)
    return (np.sum(np.clip(x, lo, hi) * w) + np.sum(np.expand_dims(x, 0) ** 2)
            + np.sum(np.atleast_2d(x[0]) ** 3) + np.sum(np.atleast_1d(x) * w)
            + np.average(x[0], weights=hi) * np.linalg.norm(x) + np.linalg.norm(x[1], 1))


def test_clip_added_axes_average_and_norm_in_forward_mode():
    x = np.array([[0.3, -1.7], [0.9, 2.5], [-0.45, 0.1]])     # away from the bounds
    args = (x, -0.5, np.array([0.2, 1.0]))
    check_fd(clipped_and_expanded, *args)
    tangents = (rand(3, 2), 0.3, rand(2))
    _, t = clipped_and_expanded.jvp(args, tangents)
    assert t == pytest.approx(fd_jvp(clipped_and_expanded, args, tangents), rel=1e-6)
