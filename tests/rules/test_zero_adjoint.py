"""A zero adjoint contributes zero (docs/errors.md): where the adjoint reaching an operation
is exactly 0, its contribution is exactly 0 whatever its local partial, so the gradient is
finite where finite differences are (IEEE arithmetic, and JAX and PyTorch, give 0 * inf =
NaN). In reverse mode, forward mode (a zero tangent contributes zero) and forward over
reverse; ``ieee_products=True`` gives the IEEE product back. The kernels' case runs in
tests/cuda (cuda_cases.py)."""
import math
import warnings

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack.ad.dispatch import cache as disk_cache
from benchmarks.corpus.functions_numba_examples import _cluster, potential_numba_array

from conftest import assert_grads_close, check_fd, fd_grad


@pytest.fixture(autouse=True)
def _quiet_numpy():
    # (the finite differences evaluate np.sqrt, np.log... where they are not defined,
    # as the functions do before choosing)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


# ---------------------------------------------------------------- numba-examples' LJ
# numba-examples' Lennard-Jones, array version, as published (benchmarks/corpus): np.sqrt of
# every pairwise squared distance, the diagonal's zeros included, and the energy skips
# v <= 1e-6 afterwards. Every entry of the gradient was NaN.
lj = nad.grad_jit(potential_numba_array)
CLUSTER = _cluster(np.random.default_rng(0))[0]


def test_lennard_jones_array_version_as_published():
    g, = check_fd(lj, CLUSTER, rtol=1e-6, atol=1e-7)
    assert np.all(np.isfinite(g)) and np.max(np.abs(g)) > 1.0


def test_ieee_products_give_the_nan_back():
    # The option gives the IEEE product: the same gradient, NaN where 0 meets inf.
    ieee = nad.grad_jit(potential_numba_array, ieee_products=True)
    g, = ieee.grad(CLUSTER)
    assert np.all(np.isnan(g))
    assert "zmul" not in ieee.inspect_adjoint(CLUSTER)
    assert "zmul" in lj.inspect_adjoint(CLUSTER)


# ---------------------------------------------------------------- a transit table
def transit_table(p, z, w):
    """A uniform-source transit (Mandel & Agol 2002) on a table of impact parameters z: b,
    the depth of the planet's limb past the star's, and sqrt(2 b), the small-depth form of
    the overlap's half-chord, are computed at every node; the nodes out of transit (b = 0)
    read neither."""
    total = 0.0
    for i in range(z.shape[0]):
        zi = z[i]
        b = max(0.0, 1.0 + p - zi)
        chord = math.sqrt(2.0 * b)
        if b == 0.0:
            continue
        if zi <= 1.0 - p:
            lam = p * p
        elif b < 1e-2:
            lam = 4.0 / 3.0 * chord * b * math.sqrt(p / (1.0 + p)) / math.pi
        else:
            k0 = math.acos((p * p + zi * zi - 1.0) / (2.0 * p * zi))
            k1 = math.acos((1.0 - p * p + zi * zi) / (2.0 * zi))
            lam = (p * p * k0 + k1
                   - 0.5 * math.sqrt(4.0 * zi * zi - (1.0 + zi * zi - p * p) ** 2)) / math.pi
        total += w[i] * lam
    return total


transit = nad.grad_jit(transit_table)
# in transit, grazing (b = 0.005), in ingress, and out of transit (b = 0: sqrt(0))
Z = np.array([0.3, 0.7, 1.095, 0.98, 1.2, 1.5, 2.0])
W = np.linspace(0.5, 1.5, Z.size)


def test_a_square_root_of_zero_that_nothing_reads():
    gp, gz, gw = check_fd(transit, 0.1, Z, W, rtol=1e-6, atol=1e-8)
    assert math.isfinite(gp) and gp != 0.0
    assert np.all(gz[4:] == 0.0)          # out of transit: no gradient


def test_a_zero_tangent_contributes_zero():
    dz = np.linspace(-1.0, 1.0, Z.size)
    value, tangent = transit.jvp((0.1, Z, W), (1.0, dz, None))
    gp, gz, _ = transit.grad(0.1, Z, W)
    assert value == pytest.approx(transit_table(0.1, Z, W))
    assert tangent == pytest.approx(gp + gz @ dz, rel=1e-12)


# ---------------------------------------------------------------- whole arrays
@nad.grad_jit
def masked_root(x, w):
    """The masked branch of np.where: np.sqrt of the negative entries is NaN, and its
    partial too (JAX's "double where")."""
    return np.sum(w * np.where(x > 0, np.sqrt(x), 0.0))


X = np.array([-1.0, -2.0, 0.5, 2.0, -0.3])


def test_where_masks_a_nan_partial():
    gx, gw = check_fd(masked_root, X, np.linspace(1.0, 2.0, X.size))
    assert np.all(np.isfinite(gx)) and np.all(gx[[0, 1, 4]] == 0.0)


def test_where_masks_a_nan_partial_in_forward_mode():
    w = np.linspace(1.0, 2.0, X.size)
    dx = np.array([1.0, -2.0, 0.5, 1.0, 3.0])
    _, tangent = masked_root.jvp((X, w), (dx, None))
    assert tangent == pytest.approx(0.5 / np.sqrt(X[2:4]) @ (w * dx)[2:4], rel=1e-12)


def line_residuals(params, t, data):
    r = data - (params[0] * t + params[1])
    return np.nansum(r * r) + 0.5 * np.nanmean((data - params[1]) ** 2)


nan_sums = nad.grad_jit(line_residuals)
T = np.linspace(0.0, 1.0, 6)
DATA = np.array([0.1, 0.5, np.nan, 1.2, 1.4, 2.1])


def test_nan_data_skipped_by_the_nan_reductions():
    # The value is finite; each parameter's gradient was NaN (0 * NaN through r * r).
    params = np.array([1.7, 0.2])
    g, _, gdata = nan_sums.grad(params, T, DATA)
    want = fd_grad(line_residuals, (params, T, DATA))
    np.testing.assert_allclose(g, want[0], rtol=1e-6)
    assert gdata[2] == 0.0 and np.all(np.isfinite(gdata))
    np.testing.assert_allclose(gdata[[0, 1, 3, 4, 5]], want[2][[0, 1, 3, 4, 5]], rtol=1e-6)
    _, tangent = nan_sums.jvp((params, T, DATA), (np.array([1.0, -1.0]), None, None))
    assert tangent == pytest.approx(g[0] - g[1], rel=1e-12)


# ---------------------------------------------------------------- scalar partials
def defined_where_read(x, c, u):
    """Each quantity is computed for every element and read only where it is defined,
    as code that computes a formula before it chooses: the log, the reciprocal, a
    quotient, x ** -2 and x ** c at x == 0, arcsin and arccos at +-1."""
    s = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        lg = np.log(v)
        inv = np.divide(1.0, v)
        q = np.divide(c, v)
        p2 = np.power(v, -2.0)
        pw = v ** c
        if v > 0.5:
            s += lg + inv + q + p2 + pw
        else:
            s += 0.5 * v
        a = np.arcsin(u[i]) + 2.0 * np.arccos(u[i])
        if abs(u[i]) < 0.99:
            s += a
        else:
            s += 0.25 * u[i]
    return s


partials = nad.grad_jit(defined_where_read)
XS = np.array([0.0, 0.7, 0.0, 1.3])
US = np.array([1.0, 0.3, -1.0, -0.6])


def test_partials_infinite_where_the_value_is_not_read():
    gx, gc, gu = check_fd(partials, XS, 0.5, US)
    assert np.all(np.isfinite(gx)) and math.isfinite(gc) and np.all(np.isfinite(gu))
    assert gx[0] == 0.5 and gu[0] == 0.25 and gu[2] == 0.25


def test_partials_infinite_where_the_value_is_not_read_in_forward_mode():
    gx, gc, gu = partials.grad(XS, 0.5, US)
    dx, du = np.array([1.0, 2.0, -1.0, 0.5]), np.array([0.5, -1.0, 2.0, 1.0])
    _, tangent = partials.jvp((XS, 0.5, US), (dx, 1.5, du))
    assert tangent == pytest.approx(gx @ dx + 1.5 * gc + gu @ du, rel=1e-12)


# ---------------------------------------------------------------- forward over reverse
@nad.grad_jit
def fitted(x):
    # At x = 2 the residual is 0: so is the adjoint reaching log and sqrt, whose
    # tangent is not (the Hessian is 2 / x**2 = 0.5, not 0).
    return (math.log(x[0]) - math.log(2.0)) ** 2 + (math.sqrt(x[1]) - 2.0) ** 2


def test_hvp_where_an_adjoint_is_zero():
    x = np.array([2.0, 4.0])
    assert_grads_close(fitted.grad(x), (np.zeros(2),), (x,))
    hv, = fitted.hvp((x,), (np.array([1.0, 1.0]),))
    np.testing.assert_allclose(hv, [0.5, 0.125], rtol=1e-12)


# ---------------------------------------------------------------- the option
def squared(x):
    return x * x


def test_the_cache_key_covers_ieee_products(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    keys = {disk_cache.lookup(nad.grad_jit(squared, cache=True, ieee_products=ieee),
                              (numba.float64,), False).key for ieee in (False, True)}
    assert len(keys) == 2
