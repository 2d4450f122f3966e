"""Corpus: numerical kernels of published Numba libraries.

Two kinds of source:

* installed packages (numba-stats 1.14.0, QuantEcon 0.11.4, interpolation 2.2.7): the
  function under test is the library's own Python function, taken from its jitted object
  (``dispatcher.py_func``) exactly as the installed package defines it, so it runs with the
  library's own helpers (their decorators, signatures and ``@overload``s unchanged). The
  numba-stats functions are compiled with the ``error_model="numpy"`` their decorator
  uses (``options=``), and ``gini_coefficient`` with its ``parallel=True``; QuantEcon's
  root finders take the njit test functions of QuantEcon's own test suite
  (quantecon/optimize/tests/test_root_finding.py, copied below).
* arch (github bashtage/arch at commit 543f44c, arch/univariate/recursions_python.py): the
  volatility recursions copied verbatim, with the module's ``jit(..., nopython=True)``
  wrapping of each (arch imports ``jit`` from ``arch.compat.numba``, which is Numba's when
  Numba is installed) and its constants; its array type aliases (from ``arch._typing``)
  are defined as ``np.ndarray`` so the annotations evaluate.
"""
import importlib

import numpy as np
from numba import jit, njit

import numba_stats.argus as _argus
import numba_stats.bernstein as _bernstein
import numba_stats.cmsshape as _cmsshape
import numba_stats.cruijff as _cruijff
import numba_stats.crystalball as _crystalball
import numba_stats.expon as _expon
import numba_stats.exponnorm as _exponnorm
import numba_stats.laplace as _laplace
import numba_stats.lognorm as _lognorm
import numba_stats.norm as _norm
import numba_stats.novosibirsk as _novosibirsk
import numba_stats.poisson as _poisson
import numba_stats.qgaussian as _qgaussian
import numba_stats.skewnorm as _skewnorm
import numba_stats.t as _t
import numba_stats.truncexpon as _truncexpon
import numba_stats.truncnorm as _truncnorm
import numba_stats.tsallis as _tsallis
import numba_stats.uniform as _uniform
import numba_stats.voigt as _voigt

import quantecon._gridtools as _qe_gridtools
import quantecon._inequality as _qe_inequality
import quantecon._lss as _qe_lss
import quantecon.quad as _qe_quad
from quantecon.optimize import newton, newton_halley, newton_secant

import interpolation.complete_poly as _ip_complete_poly
import interpolation.splines.eval_cubic_numba as _ip_eval_cubic
import interpolation.splines.filter_cubic as _ip_filter_cubic

_qe_gth = importlib.import_module("quantecon.markov.gth_solve")
_qe_approx = importlib.import_module("quantecon.markov.approximation")


# ---------------------------------------------------------------- quantecon/optimize/tests/test_root_finding.py

@njit
def func(x):
    """
    Function for testing on.
    """
    return (x**3 - 1)


@njit
def func_prime(x):
    """
    Derivative for func.
    """
    return (3*x**2)


@njit
def func_prime2(x):
    """
    Second order derivative for func.
    """
    return 6*x


@njit
def func_two(x):
    """
    Harder function for testing on.
    """
    return np.sin(4 * (x - 1/4)) + x + x**20 - 1


@njit
def func_two_prime(x):
    """
    Derivative for func_two.
    """
    return 4*np.cos(4*(x - 1/4)) + 20*x**19 + 1


@njit
def func_two_prime2(x):
    """
    Second order derivative for func_two
    """
    return 380*x**18 - 16*np.sin(4*(x - 1/4))


# ---------------------------------------------------------------- arch/univariate/recursions_python.py

Float64Array = Float64Array1D = Float64Array2D = Int32Array = np.ndarray  # arch._typing aliases

LNSIGMA_MAX = float(np.log(np.finfo(np.double).max) - 0.1)
SQRT2_OV_PI = 0.79788456080286541  # E[abs(e)], e~N(0,1)


def bounds_check_python(sigma2: float, var_bounds: Float64Array2D) -> float:
    if sigma2 < var_bounds[0]:
        sigma2 = var_bounds[0]
    elif sigma2 > var_bounds[1]:
        if not np.isinf(sigma2):
            sigma2 = var_bounds[1] + np.log(sigma2 / var_bounds[1])
        else:
            sigma2 = var_bounds[1] + 1000
    return sigma2



bounds_check = jit(bounds_check_python, nopython=True, inline="always")


def harch_recursion_python(
    parameters: Float64Array1D,
    resids: Float64Array1D,
    sigma2: Float64Array1D,
    lags: Int32Array,
    nobs: int,
    backcast: float,
    var_bounds: Float64Array2D,
) -> Float64Array:
    """
    Parameters
    ----------
    parameters : ndarray
        Model parameters
    resids : ndarray
        Residuals to use in the recursion
    sigma2 : ndarray
        Conditional variances with same shape as resids
    lags : ndarray
        Lag lengths in the HARCH
    nobs : int
        Length of resids
    backcast : float
        Value to use when initializing the recursion
    var_bounds : ndarray
        nobs by 2-element array of upper and lower bounds for conditional
        variances for each time period
    """

    for t in range(nobs):
        sigma2[t] = parameters[0]
        for i in range(lags.shape[0]):
            param = parameters[i + 1] / lags[i]
            for j in range(lags[i]):
                if (t - j - 1) >= 0:
                    sigma2[t] += param * resids[t - j - 1] * resids[t - j - 1]
                else:
                    sigma2[t] += param * backcast

        sigma2[t] = bounds_check(sigma2[t], var_bounds[t])

    return sigma2



harch_recursion = jit(harch_recursion_python, nopython=True)


def arch_recursion_python(
    parameters: Float64Array1D,
    resids: Float64Array1D,
    sigma2: Float64Array1D,
    p: int,
    nobs: int,
    backcast: float,
    var_bounds: Float64Array2D,
) -> Float64Array:
    """
    Parameters
    ----------
    parameters : ndarray
        Model parameters
    resids : ndarray
        Residuals to use in the recursion
    sigma2 : ndarray
        Conditional variances with same shape as resids
    p : int
        Number of lags in ARCH model
    nobs : int
        Length of resids
    backcast : float
        Value to use when initializing the recursion
    var_bounds : 2-d array
        nobs by 2-element array of upper and lower bounds for conditional
        variances for each time period
    """

    for t in range(nobs):
        sigma2[t] = parameters[0]
        for i in range(p):
            if (t - i - 1) < 0:
                sigma2[t] += parameters[i + 1] * backcast
            else:
                sigma2[t] += parameters[i + 1] * resids[t - i - 1] ** 2
        sigma2[t] = bounds_check(sigma2[t], var_bounds[t])

    return sigma2



arch_recursion = jit(arch_recursion_python, nopython=True)


def garch_recursion_python(
    parameters: Float64Array1D,
    fresids: Float64Array1D,
    sresids: Float64Array1D,
    sigma2: Float64Array1D,
    p: int,
    o: int,
    q: int,
    nobs: int,
    backcast: float,
    var_bounds: Float64Array2D,
) -> Float64Array:
    """
    Compute variance recursion for GARCH and related models

    Parameters
    ----------
    parameters : ndarray
        Model parameters
    fresids : ndarray
        Absolute value of residuals raised to the power in the model.  For
        example, in a standard GARCH model, the power is 2.0.
    sresids : ndarray
        Variable containing the sign of the residuals (-1.0, 0.0, 1.0)
    sigma2 : ndarray
        Conditional variances with same shape as resids
    p : int
        Number of symmetric innovations in model
    o : int
        Number of asymmetric innovations in model
    q : int
        Number of lags of the (transformed) variance in the model
    nobs : int
        Length of resids
    backcast : float
        Value to use when initializing the recursion
    var_bounds : 2-d array
        nobs by 2-element array of upper and lower bounds for conditional
        transformed variances for each time period
    """

    for t in range(nobs):
        loc = 0
        sigma2[t] = parameters[loc]
        loc += 1
        for j in range(p):
            if (t - 1 - j) < 0:
                sigma2[t] += parameters[loc] * backcast
            else:
                sigma2[t] += parameters[loc] * fresids[t - 1 - j]
            loc += 1
        for j in range(o):
            if (t - 1 - j) < 0:
                sigma2[t] += parameters[loc] * 0.5 * backcast
            else:
                sigma2[t] += (
                    parameters[loc] * fresids[t - 1 - j] * (sresids[t - 1 - j] < 0)
                )
            loc += 1
        for j in range(q):
            if (t - 1 - j) < 0:
                sigma2[t] += parameters[loc] * backcast
            else:
                sigma2[t] += parameters[loc] * sigma2[t - 1 - j]
            loc += 1
        sigma2[t] = bounds_check(sigma2[t], var_bounds[t])

    return sigma2



garch_recursion = jit(garch_recursion_python, nopython=True)


def egarch_recursion_python(
    parameters: Float64Array1D,
    resids: Float64Array1D,
    sigma2: Float64Array1D,
    p: int,
    o: int,
    q: int,
    nobs: int,
    backcast: float,
    var_bounds: Float64Array2D,
    lnsigma2: Float64Array1D,
    std_resids: Float64Array1D,
    abs_std_resids: Float64Array1D,
) -> Float64Array:
    """
    Compute variance recursion for EGARCH models

    Parameters
    ----------
    parameters : ndarray
        Model parameters
    resids : ndarray
        Residuals to use in the recursion
    sigma2 : ndarray
        Conditional variances with same shape as resids
    p : int
        Number of symmetric innovations in model
    o : int
        Number of asymmetric innovations in model
    q : int
        Number of lags of the (transformed) variance in the model
    nobs : int
        Length of resids
    backcast : float
        Value to use when initializing the recursion
    var_bounds : 2-d array
        nobs by 2-element array of upper and lower bounds for conditional
        variances for each time period
    lnsigma2 : ndarray
        Temporary array (overwritten) with same shape as resids
    std_resids : ndarray
        Temporary array (overwritten) with same shape as resids
    abs_std_resids : ndarray
        Temporary array (overwritten) with same shape as resids
    """

    for t in range(nobs):
        loc = 0
        lnsigma2[t] = parameters[loc]
        loc += 1
        for j in range(p):
            if (t - 1 - j) >= 0:
                lnsigma2[t] += parameters[loc] * (
                    abs_std_resids[t - 1 - j] - SQRT2_OV_PI
                )
            loc += 1
        for j in range(o):
            if (t - 1 - j) >= 0:
                lnsigma2[t] += parameters[loc] * std_resids[t - 1 - j]
            loc += 1
        for j in range(q):
            if (t - 1 - j) < 0:
                lnsigma2[t] += parameters[loc] * backcast
            else:
                lnsigma2[t] += parameters[loc] * lnsigma2[t - 1 - j]
            loc += 1
        lnsigma2[t] = min(lnsigma2[t], LNSIGMA_MAX)
        sigma2[t] = np.exp(lnsigma2[t])
        if sigma2[t] < var_bounds[t, 0]:
            sigma2[t] = var_bounds[t, 0]
            lnsigma2[t] = np.log(sigma2[t])
        elif sigma2[t] > var_bounds[t, 1]:
            sigma2[t] = var_bounds[t, 1] + np.log(sigma2[t]) - np.log(var_bounds[t, 1])
            lnsigma2[t] = np.log(sigma2[t])
        std_resids[t] = resids[t] / np.sqrt(sigma2[t])
        abs_std_resids[t] = np.abs(std_resids[t])

    return sigma2



egarch_recursion = jit(egarch_recursion_python, nopython=True)


def midas_recursion_python(
    parameters: Float64Array1D,
    weights: Float64Array,
    resids: Float64Array1D,
    sigma2: Float64Array1D,
    nobs: int,
    backcast: float,
    var_bounds: Float64Array2D,
) -> Float64Array:
    """
    Parameters
    ----------
    parameters : ndarray
        Model parameters of the form (omega, alpha, gamma) where omega is the
        intercept, alpha is the scale for all shocks and gamma is the shock
        to negative returns (can be 0.0) for a symmetric model.
    weights : ndarray
        The weights on the lagged squared returns. Should sum to 1
    resids : ndarray
        Residuals to use in the recursion
    sigma2 : ndarray
        Conditional variances with same shape as resids
    nobs : int
        Length of resids
    backcast : float
        Value to use when initializing the recursion
    var_bounds : ndarray
        nobs by 2-element array of upper and lower bounds for conditional
        variances for each time period
    """
    omega, alpha, gamma = parameters

    m = weights.shape[0]
    aw = np.zeros(m)
    gw = np.zeros(m)
    for i in range(m):
        aw[i] = alpha * weights[i]
        gw[i] = gamma * weights[i]

    resids2 = np.zeros(nobs)

    for t in range(nobs):
        resids2[t] = resids[t] * resids[t]
        sigma2[t] = omega
        for i in range(m):
            if (t - i - 1) >= 0:
                sigma2[t] += (aw[i] + gw[i] * (resids[t - i - 1] < 0)) * resids2[
                    t - i - 1
                ]
            else:
                sigma2[t] += (aw[i] + 0.5 * gw[i]) * backcast
        if sigma2[t] < var_bounds[t, 0]:
            sigma2[t] = var_bounds[t, 0]
        elif sigma2[t] > var_bounds[t, 1]:
            if np.isinf(sigma2[t]):
                sigma2[t] = var_bounds[t, 1] + 1000
            else:
                sigma2[t] = var_bounds[t, 1] + np.log(sigma2[t] / var_bounds[t, 1])

    return sigma2



midas_recursion = jit(midas_recursion_python, nopython=True)


def figarch_weights_python(
    parameters: Float64Array1D, p: int, q: int, trunc_lag: int
) -> Float64Array:
    r"""
    Parameters
    ----------
    parameters : ndarray
        Model parameters of the form (phi, d, beta) where omega is the
        intercept, d is the fractional integration coefficient and phi and beta
        are parameters of the volatility process.
    p : int
        0 or 1 to indicate whether the model contains phi
    q : int
        0 or 1 to indicate whether the model contains beta
    trunc_lag : int
        Truncation lag for the ARCH approximations

    Returns
    -------
    lam : ndarray
        ARCH(:math:`\infty`) coefficients used to approximate model dynamics
    """
    phi = parameters[0] if p else 0.0
    d = parameters[1] if p else parameters[0]
    beta = parameters[p + q] if q else 0.0

    # Recursive weight computation
    lam = np.empty(trunc_lag)
    delta = np.empty(trunc_lag)
    lam[0] = phi - beta + d
    delta[0] = d
    for i in range(1, trunc_lag):
        delta[i] = (i - d) / (i + 1) * delta[i - 1]
        lam[i] = beta * lam[i - 1] + (delta[i] - phi * delta[i - 1])

    return lam



figarch_weights = jit(figarch_weights_python, nopython=True)


def figarch_recursion_python(
    parameters: Float64Array1D,
    fresids: Float64Array1D,
    sigma2: Float64Array1D,
    p: int,
    q: int,
    nobs: int,
    trunc_lag: int,
    backcast: float,
    var_bounds: Float64Array2D,
) -> Float64Array:
    """
    Parameters
    ----------
    parameters : ndarray
        Model parameters of the form (omega, phi, d, beta) where omega is the
        intercept, d is the fractional integration coefficient and phi and beta
        are parameters of the volatility process.
    fresids : ndarray
        Absolute value of residuals raised to the power in the model.  For
        example, in a standard GARCH model, the power is 2.0.
    sigma2 : ndarray
        Conditional variances with same shape as resids
    p : int
        0 or 1 to indicate whether the model contains phi
    q : int
        0 or 1 to indicate whether the model contains beta
    nobs : int
        Length of resids
    trunc_lag : int
        Truncation lag for the ARCH approximations
    backcast : float
        Value to use when initializing the recursion
    var_bounds : ndarray
        nobs by 2-element array of upper and lower bounds for conditional
        variances for each time period

    Returns
    -------
    sigma2 : ndarray
        Conditional variances
    """

    omega = parameters[0]
    beta = parameters[1 + p + q] if q else 0.0
    omega_tilde = omega / (1 - beta)
    lam = figarch_weights(parameters[1:], p, q, trunc_lag)
    for t in range(nobs):
        bc_weight = 0.0
        for i in range(t, trunc_lag):
            bc_weight += lam[i]
        sigma2[t] = omega_tilde + bc_weight * backcast
        for i in range(min(t, trunc_lag)):
            sigma2[t] += lam[i] * fresids[t - i - 1]
        sigma2[t] = bounds_check(sigma2[t], var_bounds[t])

    return sigma2



figarch_recursion = jit(figarch_recursion_python, nopython=True)


def aparch_recursion_python(
    parameters: Float64Array1D,
    resids: Float64Array1D,
    abs_resids: Float64Array1D,
    sigma2: Float64Array1D,
    sigma_delta: Float64Array,
    p: int,
    o: int,
    q: int,
    nobs: int,
    backcast: float,
    var_bounds: Float64Array2D,
) -> Float64Array:
    """
    Compute variance recursion for GARCH and related models

    Parameters
    ----------
    parameters : ndarray
        Model parameters
    resids : ndarray
        Residuals.
    abs_resids : ndarray
        Absolute value of residuals.
    sigma2 : ndarray
        Conditional variances with same shape as resids
    sigma_delta : ndarray
        Conditional variance to the power delta with same shape as resids
    p : int
        Number of symmetric innovations in model
    o : int
        Number of asymmetric innovations in model
    q : int
        Number of lags of the (transformed) variance in the model
    nobs : int
        Length of resids
    backcast : float
        Value to use when initializing the recursion
    var_bounds : 2-d array
        nobs by 2-element array of upper and lower bounds for conditional
        transformed variances for each time period
    """
    delta = parameters[1 + p + o + q]
    for t in range(nobs):
        sigma_delta[t] = parameters[0]
        for j in range(p):
            if (t - 1 - j) < 0:
                shock = backcast**0.5
            else:
                shock = abs_resids[t - 1 - j]
                if o > j:
                    shock -= parameters[1 + p + j] * resids[t - 1 - j]
            sigma_delta[t] += parameters[1 + j] * (shock**delta)
        for j in range(q):
            if (t - 1 - j) < 0:
                sigma_delta[t] += parameters[1 + p + o + j] * backcast ** (delta / 2.0)
            else:
                sigma_delta[t] += parameters[1 + p + o + j] * sigma_delta[t - 1 - j]
        sigma2[t] = sigma_delta[t] ** (2.0 / delta)
        sigma2[t] = bounds_check(sigma2[t], var_bounds[t])
        sigma_delta[t] = sigma2[t] ** (delta / 2.0)
    return sigma2



aparch_recursion = jit(aparch_recursion_python, nopython=True)


# ---------------------------------------------------------------- records

NS = "numba-stats 1.14.0 (installed):numba_stats/"
QE = "QuantEcon 0.11.4 (installed):quantecon/"
IP = "interpolation 2.2.7 (installed):interpolation/"
ARCH = "bashtage/arch@543f44c:arch/univariate/recursions_python.py"

_NUMPY_ERRORS = {"error_model": "numpy"}   # numba-stats' _jit_custom passes error_model='numpy'


def _e(name, fn, args, source, group, **kw):
    d = dict(name=name, source=source, fn=fn, args=args, group=group)
    d.update(kw)
    return d


def _ns(name, dispatcher, args, module):
    return _e("numba_stats." + name, dispatcher.py_func, args, NS + module, "numba-stats",
              options=_NUMPY_ERRORS)


def _qe(name, dispatcher, args, module, **kw):
    return _e("quantecon." + name, dispatcher.py_func, args, QE + module, "QuantEcon", **kw)


def _ip(name, dispatcher, args, module, **kw):
    return _e("interpolation." + name, dispatcher.py_func, args, IP + module, "interpolation", **kw)


def _arch(name, fn, args, **kw):
    return _e("arch." + name, fn, args, ARCH, "arch volatility recursions", **kw)


def _x(lo=-2.0, hi=2.0, n=8):
    return lambda r: r.uniform(lo, hi, n)


def _garch_data(r, nobs=10):
    resids = r.standard_normal(nobs)
    var_bounds = np.tile(np.array([1e-6, 1e6]), (nobs, 1))
    return resids, var_bounds


def _harch(r):
    resids, vb = _garch_data(r)
    return np.array([0.1, 0.3, 0.2]), resids, np.zeros(10), np.array([1, 5], dtype=np.int32), 10, 1.0, vb


def _archr(r):
    resids, vb = _garch_data(r)
    return np.array([0.1, 0.3, 0.2]), resids, np.zeros(10), 2, 10, 1.0, vb


def _garch(r):
    resids, vb = _garch_data(r)
    return (np.array([0.1, 0.1, 0.05, 0.8]), resids ** 2, np.sign(resids), np.zeros(10), 1, 1, 1, 10, 1.0, vb)


def _egarch(r):
    resids, vb = _garch_data(r)
    return (np.array([0.0, 0.1, -0.05, 0.9]), resids, np.zeros(10), 1, 1, 1, 10, 0.0, vb,
            np.zeros(10), np.zeros(10), np.zeros(10))


def _midas(r):
    resids, vb = _garch_data(r)
    w = r.uniform(0.5, 1.0, 5)
    return np.array([0.1, 0.8, 0.1]), w / w.sum(), resids, np.zeros(10), 10, 1.0, vb


def _figarch(r):
    resids, vb = _garch_data(r)
    return np.array([0.1, 0.2, 0.4, 0.3]), resids ** 2, np.zeros(10), 1, 1, 10, 10, 1.0, vb


def _aparch(r):
    resids, vb = _garch_data(r)
    return (np.array([0.1, 0.1, 0.1, 0.8, 1.5]), resids, np.abs(resids), np.zeros(10), np.zeros(10),
            1, 1, 1, 10, 1.0, vb)


def _markov(r, n=4):
    P = r.uniform(0.1, 1.0, (n, n))
    return P / P.sum(axis=1)[:, None]


ENTRIES = [
    # numba-stats: the distributions' array implementations
    _ns("norm._logpdf", _norm._logpdf, lambda r: (_x()(r), 0.3, 1.2), "norm.py"),
    _ns("norm._pdf", _norm._pdf, lambda r: (_x()(r), 0.3, 1.2), "norm.py"),
    _ns("norm._cdf", _norm._cdf, lambda r: (_x()(r), 0.3, 1.2), "norm.py"),
    _ns("norm._ppf", _norm._ppf, lambda r: (_x(0.05, 0.95)(r), 0.3, 1.2), "norm.py"),
    _ns("expon._logpdf", _expon._logpdf, lambda r: (_x(0.5, 3.0)(r), 0.2, 1.5), "expon.py"),
    _ns("expon._cdf", _expon._cdf, lambda r: (_x(0.5, 3.0)(r), 0.2, 1.5), "expon.py"),
    _ns("laplace._logpdf", _laplace._logpdf, lambda r: (_x()(r), 0.3, 1.2), "laplace.py"),
    _ns("lognorm._logpdf", _lognorm._logpdf, lambda r: (_x(0.5, 3.0)(r), 0.7, 0.1, 1.3), "lognorm.py"),
    _ns("cruijff._density", _cruijff._density, lambda r: (_x()(r), 0.1, 0.2, 0.3, 1.1, 0.8), "cruijff.py"),
    _ns("crystalball._logpdf", _crystalball._logpdf, lambda r: (_x(-4.0, 2.0)(r), 1.5, 3.0, 0.0, 1.0),
        "crystalball.py"),
    _ns("crystalball._cdf", _crystalball._cdf, lambda r: (_x(-4.0, 2.0)(r), 1.5, 3.0, 0.0, 1.0), "crystalball.py"),
    _ns("qgaussian._logpdf", _qgaussian._logpdf, lambda r: (_x()(r), 1.5, 0.2, 1.1), "qgaussian.py"),
    _ns("t._logpdf", _t._logpdf, lambda r: (_x()(r), 4.0, 0.2, 1.1), "t.py"),
    _ns("truncnorm._logpdf", _truncnorm._logpdf, lambda r: (_x(-0.9, 1.9)(r), -1.0, 2.0, 0.3, 1.2),
        "truncnorm.py"),
    _ns("truncexpon._logpdf", _truncexpon._logpdf, lambda r: (_x(0.6, 2.9)(r), 0.5, 3.0, 0.2, 1.5),
        "truncexpon.py"),
    _ns("cmsshape._logpdf", _cmsshape._logpdf, lambda r: (_x(0.5, 3.0)(r), 1.2, 0.5, 1.0), "cmsshape.py"),
    _ns("tsallis._pdf", _tsallis._pdf, lambda r: (_x(0.2, 3.0)(r), 1.0, 2.0, 5.0), "tsallis.py"),
    _ns("bernstein._density", _bernstein._density,
        lambda r: (_x(0.1, 0.9)(r), r.uniform(0.5, 2.0, 4), 0.0, 1.0), "bernstein.py"),
    _ns("uniform._logpdf", _uniform._logpdf, lambda r: (_x(0.1, 0.9)(r), 0.0, 1.3), "uniform.py"),
    _ns("voigt._pdf", _voigt._pdf, lambda r: (_x()(r), 0.5, 0.2, 1.1), "voigt.py"),
    _ns("exponnorm._logpdf", _exponnorm._logpdf, lambda r: (_x()(r), 1.5, 0.2, 1.1), "exponnorm.py"),
    _ns("argus._logpdf", _argus._logpdf, lambda r: (_x(0.1, 0.9)(r), 1.0, 1.0, 0.5), "argus.py"),
    _ns("skewnorm._logpdf", _skewnorm._logpdf, lambda r: (_x()(r), 2.0, 0.2, 1.1), "skewnorm.py"),
    _ns("novosibirsk._logpdf", _novosibirsk._logpdf, lambda r: (_x(-1.0, 1.0)(r), 0.3, 0.1, 1.2),
        "novosibirsk.py"),
    _ns("poisson._logpmf", _poisson._logpmf, lambda r: (np.arange(8.0), float(r.uniform(1.0, 5.0))),
        "poisson.py"),
    # QuantEcon
    _qe("quad._qnwcheb1", _qe_quad._qnwcheb1, lambda r: (5, float(r.uniform(-1, 0)), float(r.uniform(1, 2))),
        "quad.py"),
    _qe("quad._qnwlege1", _qe_quad._qnwlege1, lambda r: (5, float(r.uniform(-1, 0)), float(r.uniform(1, 2))),
        "quad.py"),
    _qe("quad._qnwsimp1", _qe_quad._qnwsimp1, lambda r: (5, float(r.uniform(-1, 0)), float(r.uniform(1, 2))),
        "quad.py"),
    _qe("quad._qnwtrap1", _qe_quad._qnwtrap1, lambda r: (5, float(r.uniform(-1, 0)), float(r.uniform(1, 2))),
        "quad.py"),
    _qe("quad._qnwbeta1", _qe_quad._qnwbeta1, lambda r: (5, float(r.uniform(1.5, 3)), float(r.uniform(1.5, 3))),
        "quad.py"),
    _qe("quad._qnwgamma1", _qe_quad._qnwgamma1,
        lambda r: (5, float(r.uniform(1.5, 3)), float(r.uniform(0.5, 2)), 3e-14), "quad.py",
        nofd=(3,)),   # the tolerance 3e-14: the function raises when it is made negative
    _qe("lorenz_curve", _qe_inequality.lorenz_curve, lambda r: (r.pareto(3.0, 8) + 0.1,), "_inequality.py"),
    _qe("gini_coefficient", _qe_inequality.gini_coefficient, lambda r: (r.pareto(3.0, 8) + 0.1,),
        "_inequality.py", options={"parallel": True}),
    _qe("simulate_linear_model", _qe_lss.simulate_linear_model,
        lambda r: (0.3 * r.standard_normal((3, 3)), r.standard_normal(3), r.standard_normal((3, 5)), 6),
        "_lss.py"),
    _qe("markov._gth_solve_jit", _qe_gth._gth_solve_jit, lambda r: (_markov(r), np.zeros(4)),
        "markov/gth_solve.py", outputs=(1,)),
    _qe("markov._fill_tauchen", _qe_approx._fill_tauchen,
        lambda r: (np.linspace(-2, 2, 5) + 0.01 * r.standard_normal(5), np.zeros((5, 5)), 5, 0.9, 0.5, 0.5),
        "markov/approximation.py", outputs=(1,)),
    _qe("markov.std_norm_cdf", _qe_approx.std_norm_cdf, lambda r: (float(r.standard_normal()),),
        "markov/approximation.py"),
    _qe("_repeat_1d", _qe_gridtools._repeat_1d, lambda r: (r.standard_normal(3), 2, np.zeros(12)),
        "_gridtools.py", outputs=(2,)),
    _qe("optimize.newton", newton, lambda r: (func_two, float(r.uniform(0.3, 0.6)), func_two_prime),
        "optimize/root_finding.py"),
    _qe("optimize.newton_halley", newton_halley,
        lambda r: (func, float(r.uniform(0.8, 1.3)), func_prime, func_prime2), "optimize/root_finding.py"),
    _qe("optimize.newton_secant", newton_secant, lambda r: (func, float(r.uniform(0.8, 1.3))),
        "optimize/root_finding.py"),
    # interpolation
    _ip("eval_cubic_spline_1", _ip_eval_cubic.eval_cubic_spline_1,
        lambda r: (np.array([0.0]), np.array([1.0]), np.array([8]), r.standard_normal(10),
                   np.array([r.uniform(0.05, 0.95)])), "splines/eval_cubic_numba.py"),
    _ip("eval_cubic_spline_2", _ip_eval_cubic.eval_cubic_spline_2,
        lambda r: (np.array([0.0, -1.0]), np.array([1.0, 1.0]), np.array([5, 6]), r.standard_normal((7, 8)),
                   np.array([r.uniform(0.05, 0.95), r.uniform(-0.9, 0.9)])), "splines/eval_cubic_numba.py"),
    _ip("vec_eval_cubic_spline_1", _ip_eval_cubic.vec_eval_cubic_spline_1,
        lambda r: (np.array([0.0]), np.array([1.0]), np.array([8]), r.standard_normal(10),
                   r.uniform(0.05, 0.95, (4, 1)), np.zeros(4)), "splines/eval_cubic_numba.py", outputs=(5,)),
    _ip("filter_coeffs_1d", _ip_filter_cubic.filter_coeffs_1d,
        lambda r: (np.array([7.0]), r.standard_normal(8)), "splines/filter_cubic.py"),
    _ip("filter_coeffs_2d", _ip_filter_cubic.filter_coeffs_2d,
        lambda r: (np.array([4.0, 5.0]), r.standard_normal((5, 6))), "splines/filter_cubic.py"),
    _ip("_complete_poly_impl", _ip_complete_poly._complete_poly_impl,
        lambda r: (r.standard_normal((2, 4)), 2, np.zeros((6, 4))), "complete_poly.py", outputs=(2,)),
    # arch
    _arch("harch_recursion", harch_recursion_python, _harch),
    _arch("arch_recursion", arch_recursion_python, _archr),
    _arch("garch_recursion", garch_recursion_python, _garch),
    _arch("egarch_recursion", egarch_recursion_python, _egarch),
    _arch("midas_recursion", midas_recursion_python, _midas),
    _arch("figarch_weights", figarch_weights_python, lambda r: (np.array([0.2, 0.4, 0.3]), 1, 1, 10)),
    _arch("figarch_recursion", figarch_recursion_python, _figarch),
    _arch("aparch_recursion", aparch_recursion_python, _aparch),
    _arch("bounds_check", bounds_check_python,
          lambda r: (float(r.uniform(0.5, 3.0)), np.array([0.1, 1.0]))),
]
