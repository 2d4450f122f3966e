"""Gradients through the ways Numba libraries expose their code: functions read as module
attributes, ``@overload`` implementations, ``*args`` functions, ``@vectorize`` kernels,
and tuples and named tuples returned by jitted solvers; each against finite differences."""
import math

import numpy as np
import pytest

import numba_adstack as nad

import lib_helpers
import lib_helpers as lh
from conftest import assert_grads_close, check_fd, fd_grad


def check_fd_compiled(f, *args, rtol=1e-6, atol=1e-8):
    """f.grad against finite differences of the compiled primal: library code written
    for Numba only (a method of arrays, an overloaded stub) does not run in Python."""
    got = f.grad(*args)
    assert_grads_close(got, fd_grad(f, args), args, rtol=rtol, atol=atol)
    return got


# ---------------------------------------------------------------- module attributes
@nad.grad_jit
def through_module(x, y, k):
    # ``lh.energy``: an attribute of a module alias; ``lib_helpers.geometry.dist``: of
    # a submodule, as ``np.linalg.norm`` is written.
    return lh.energy(x, k) + lib_helpers.geometry.dist(x, y)


def test_module_attribute_calls():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=5), rng.normal(size=5)
    check_fd(through_module, x, y, 0.7)


# ---------------------------------------------------------------- @overload, *args
@nad.grad_jit
def through_overloads(x, w):
    # The stub on an array and on a float: two implementations, chosen by Numba.
    y = lh.softplus(x)
    s = lh.softplus(w * x[0])
    return y.sum() * s + x.weighted_norm2(w)


def test_overload_and_overload_method():
    x = np.array([0.3, -1.2, 0.8, 2.0])
    check_fd_compiled(through_overloads, x, 0.7)


@nad.grad_jit
def through_star_args(x, a, b):
    t = (x, a)
    return lh.head_sum(x, a, b) + lh.head_sum(*t, b) + lh.affine(x) + lh.affine(x, a, b, b)


def test_star_args_callees():
    got = check_fd(through_star_args, 1.5, 0.3, 0.7)
    # 2x + ab twice, 2x, xa + 2: the derivatives by hand.
    np.testing.assert_allclose(got, (6.3, 2.9, 0.6))




# ---------------------------------------------------------------- @vectorize
@nad.grad_jit
def through_vectorize(x, y, k):
    # On floats (its kernel), on an array and a float, on two arrays of one shape; with
    # and without explicit signatures.
    return (lh.logistic(x[0], k) + np.sum(lh.logistic(x, k) * x) + np.sum(lh.logistic(x, y))
            + np.sum(lh.softsign_scaled(x, y)) + lh.softsign_scaled(x[1], k))


def test_vectorize_on_scalars_and_arrays():
    x = np.array([0.3, -1.0, 2.0])
    y = np.array([1.0, 2.0, 0.5])
    check_fd(through_vectorize, x, y, 1.3)


# ---------------------------------------------------------------- solvers' results
newton_implicit = nad.implicit_root(lh.newton, func="func")


@nad.grad_jit
def root_by_field(e, M):
    return lh.newton(lh.kepler, M, lh.kepler_prime, args=(e, M)).root


@nad.grad_jit
def root_by_index(e, M):
    res = lh.newton(lh.kepler, M, lh.kepler_prime, args=(e, M))
    return res[0] * 2.0 + res.root


@nad.grad_jit
def root_unpacked(e, M):
    r, n = lh.newton_pair(lh.kepler, M, lh.kepler_prime, args=(e, M))
    return r


@nad.grad_jit
def root_implicit(e, M):
    res = newton_implicit(lh.kepler, M, lh.kepler_prime, args=(e, M))
    return res.root + res[0]


@nad.grad_jit
def roots_in_a_loop(e, Ms):
    # The solver's named tuple made in every iteration; its fields read under a branch.
    s = 0.0
    for i in range(Ms.shape[0]):
        res = lh.newton(lh.kepler, Ms[i], lh.kepler_prime, args=(e, Ms[i]))
        if res.converged:
            s += res.root * res.root
    return s


def test_solver_results_read_in_a_loop():
    Ms = np.array([0.7, 1.2, 2.0])
    ge, gM = roots_in_a_loop.grad(0.3, Ms)
    roots = np.array([lh.newton(lh.kepler, M, lh.kepler_prime, args=(0.3, M)).root
                      for M in Ms])
    dE = np.array([_kepler_derivatives(0.3, M) for M in Ms])
    np.testing.assert_allclose(ge, np.sum(2 * roots * dE[:, 0]), rtol=1e-10)
    np.testing.assert_allclose(gM, 2 * roots * dE[:, 1], rtol=1e-10)


def _kepler_derivatives(e, M):
    """dE/de and dE/dM at the root of E - e sin E = M, by the implicit function theorem."""
    E = lh.newton(lh.kepler, M, lh.kepler_prime, args=(e, M)).root
    d = 1.0 - e * np.cos(E)
    return np.sin(E) / d, 1.0 / d


@pytest.mark.parametrize("fn, scale", [(root_by_field, 1.0), (root_by_index, 3.0),
                                       (root_unpacked, 1.0), (root_implicit, 2.0)],
                         ids=["named tuple .root", "res[0] and res.root",
                              "tuple from two returns", "implicit_root, named tuple"])
def test_roots_read_from_solver_results(fn, scale):
    got = fn.grad(0.3, 1.2)
    want = _kepler_derivatives(0.3, 1.2)
    np.testing.assert_allclose(got, (scale * want[0], scale * want[1]), rtol=1e-10)
    assert_grads_close(got, fd_grad(fn, (0.3, 1.2)), (0.3, 1.2), rtol=1e-6)


# ---------------------------------------------------------------- numba-stats
# Its public functions are @overload stubs; called here as its documentation calls them.
numba_stats = pytest.importorskip("numba_stats")
from numba_stats import expon, norm  # noqa: E402


@nad.grad_jit
def unbinned_nll(x, mu, sigma, tau, f):
    # A Gaussian signal on an exponential background, fitted to the events x.
    ls = norm.logpdf(x, mu, sigma)
    lb = expon.logpdf(x, 0.0, tau)
    return -np.sum(np.log(f * np.exp(ls) + (1.0 - f) * np.exp(lb)))


@nad.grad_jit
def binned_nll(counts, edges, mu, sigma, tau, f, n):
    # The expected count of each bin from the cdfs at its edges (Poisson likelihood).
    cs = norm.cdf(edges, mu, sigma)
    cb = expon.cdf(edges, 0.0, tau)
    m = n * (f * (cs[1:] - cs[:-1]) + (1.0 - f) * (cb[1:] - cb[:-1]))
    return np.sum(m - counts * np.log(m))


@nad.grad_jit
def scalar_densities(x, mu, sigma):
    # A float variate: numba-stats' other implementation of the same stubs.
    return norm.logpdf(x, mu, sigma) + norm.pdf(x, mu, sigma) + norm.cdf(x, mu, sigma)


def test_numba_stats_unbinned_fit():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(1.5, 0.3, 30), rng.exponential(2.0, 70)])
    check_fd(unbinned_nll, x, 1.4, 0.35, 1.8, 0.3, rtol=1e-5)


def test_numba_stats_binned_fit():
    rng = np.random.default_rng(2)
    edges = np.linspace(0.1, 5.0, 11)     # not 0, where expon.cdf has a kink
    counts = rng.poisson(20.0, 10).astype(np.float64)
    check_fd(binned_nll, counts, edges, 1.5, 0.4, 2.0, 0.3, 200.0, rtol=1e-5)


def test_numba_stats_float_variate():
    check_fd(scalar_densities, 0.7, 0.2, 1.3)


def test_scipy_special_function_pointers():
    # norm.ppf calls SciPy's ndtri through Numba's WrapperAddressProtocol: a primitive
    # with a rule (ad/calls/scipy_special.py); voigt's voigt_profile has none.
    @nad.grad_jit
    def quantile_sum(p, mu, sigma):
        return np.sum(norm.ppf(p, mu, sigma) ** 2)
    check_fd(quantile_sum, np.array([0.2, 0.6]), 0.1, 1.2)
    from numba_stats import voigt

    @nad.grad_jit
    def voigt_sum(x, gamma, mu, sigma):
        return np.sum(voigt.pdf(x, gamma, mu, sigma))
    with pytest.raises(nad.NonDifferentiableError,
                       match=r"cython_special's voigt_profile through a function "
                             r"pointer.*custom_vjp"):
        voigt_sum.grad(np.array([0.2, 0.6]), 0.5, 0.1, 1.2)


# ---------------------------------------------------------------- interpolation
# ``interp(*args)`` is an njit function with *args calling an overload, whose
# implementation calls further overloads on tuples of the grid.
interpolation = pytest.importorskip("interpolation")
GRID = np.linspace(0.0, 2.0, 9)


@nad.grad_jit
def interpolated_loss(ys, t, target):
    d = interpolation.interp(GRID, ys, t) - target
    return d * d


def test_interpolation_interp():
    ys = np.cos(GRID)
    # Away from the grid points, where the interpolant is smooth in t.
    check_fd_compiled(interpolated_loss, ys, 0.61, 0.2)


# ``eval_linear``/``eval_cubic`` through the package's public API: overloads chosen by
# the number of arguments, ``numba.literally`` of their options, code generated per grid.
from interpolation.splines import UCGrid, eval_cubic, eval_linear, filter_cubic  # noqa: E402

UCGRID = UCGrid((0.0, 1.0, 10))


@nad.grad_jit
def spline_loss(values, coeffs, p):
    pts = np.array([[p], [p * 0.5]])
    return np.sum(eval_linear(UCGRID, values, pts)) + np.sum(eval_cubic(UCGRID, coeffs, pts))


def test_interpolation_eval_linear_and_eval_cubic():
    values = np.sin(np.linspace(0.0, 1.0, 10))
    check_fd_compiled(spline_loss, values, filter_cubic(UCGRID, values), 0.33)


# ---------------------------------------------------------------- refusals
def test_cython_special_pointer_is_refused_by_name():
    import ctypes
    pytest.importorskip("scipy.special.cython_special")
    from numba.extending import get_cython_function_address
    addr = get_cython_function_address("scipy.special.cython_special", "gammaln")
    gammaln = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(addr)
    addr = get_cython_function_address("scipy.special.cython_special", "struve")
    struve = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double)(addr)

    def through_pointer(x):
        return gammaln(x) * 2.0

    def without_rule(x):
        return struve(1.0, x) * 2.0

    # gammaln has a rule (ad/calls/scipy_special.py): digamma
    got = nad.grad_jit(through_pointer).grad(2.5)[0]
    assert abs(got - 2.0 * (math.lgamma(2.5 + 1e-6) - math.lgamma(2.5 - 1e-6)) / 2e-6) < 1e-7
    with pytest.raises(nad.NonDifferentiableError) as exc:
        nad.grad_jit(without_rule).grad(2.5)
    msg = str(exc.value)
    assert msg.startswith("cannot differentiate 'test_cython_special_pointer_is_refused")
    assert "cython_special's struve" in msg
    assert "a compiled SciPy function with no derivative rule" in msg
    assert "test_grad_libraries.py\", line" in msg
