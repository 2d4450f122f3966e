"""Functions of the corpus of public Numba code (benchmarks/corpus) as their authors wrote
them, for tests/cpu/test_grad_corpus_findings.py (a module of its own: pytest rewrites the
``assert`` statements of test files, which Numba cannot compile)."""
import math

import numba
import numpy as np
from numpy import cos, sin

import numba_adstack as nad


# poliastro src/poliastro/core/util.py: a store into R[..., i, j] of a 2-d R is one element,
# and np.asarray of a float is a 0-d array whose adjoint starts at zero.
@numba.njit
def rotation_matrix(angle, axis):
    assert axis in (0, 1, 2)
    angle = np.asarray(angle)
    c = cos(angle)
    s = sin(angle)

    a1 = (axis + 1) % 3
    a2 = (axis + 2) % 3
    R = np.zeros(angle.shape + (3, 3))
    R[..., axis, axis] = 1.0
    R[..., a1, a1] = c
    R[..., a1, a2] = -s
    R[..., a2, a1] = s
    R[..., a2, a2] = c
    return R


@nad.grad_jit
def rotation_loss(angle):
    return np.sum(rotation_matrix(angle, 1) * np.arange(9.0).reshape(3, 3)) + \
        np.sum(rotation_matrix(angle * 0.5, 2) @ rotation_matrix(angle, 0))


# numba numba/tests/test_parfors.py, TestParforNumPy.test_0d_array.
def reductions_of_0d(n):
    return np.sum(n) + np.prod(n) + np.min(n) + np.max(n) + np.var(n)


# vectorbt vectorbt/generic/nb.py: `cumsum = 0` then `cumsum = cumsum + a[i]` (an integer
# and a float unified as a float).
@numba.njit
def rolling_mean_1d_nb(a, window, minp=None):
    if minp is None:
        minp = window
    if minp > window:
        raise ValueError("minp must be <= window")
    out = np.empty_like(a, dtype=np.float64)
    cumsum_arr = np.zeros_like(a)
    cumsum = 0
    nancnt_arr = np.zeros_like(a)
    nancnt = 0
    for i in range(a.shape[0]):
        if np.isnan(a[i]):
            nancnt = nancnt + 1
        else:
            cumsum = cumsum + a[i]
        nancnt_arr[i] = nancnt
        cumsum_arr[i] = cumsum
        if i < window:
            window_len = i + 1 - nancnt
            window_cumsum = cumsum
        else:
            window_len = window - (nancnt - nancnt_arr[i - window])
            window_cumsum = cumsum - cumsum_arr[i - window]
        if window_len < minp:
            out[i] = np.nan
        else:
            out[i] = window_cumsum / window_len
    return out


@nad.grad_jit
def rolling_loss(a, w):
    return np.sum(rolling_mean_1d_nb(a, 3, 1) * w)


# QuantEcon quantecon/quad.py (0.11.4; docstrings left out): ``pp`` is assigned in the
# ``for its`` loop and read after it, which a loop of no iteration would leave undefined.
@numba.vectorize
def fix(x):
    if x < 0:
        return math.ceil(x)
    else:
        return math.floor(x)


@numba.njit
def _qnwlege1(n, a, b):
    # import ipdb; ipdb.set_trace()
    maxit = 100
    m = int(fix((n + 1) / 2.0))
    xm = 0.5 * (b + a)
    xl = 0.5 * (b - a)
    nodes = np.zeros(n)

    weights = nodes.copy()
    i = np.arange(m)

    z = np.cos(np.pi * ((i + 1.0) - 0.25) / (n + 0.5))

    for its in range(maxit):
        p1 = np.ones_like(z)
        p2 = np.zeros_like(z)
        for j in range(1, n+1):
            p3 = p2
            p2 = p1
            p1 = ((2 * j - 1) * z * p2 - (j - 1) * p3) / j

        # https://github.com/QuantEcon/QuantEcon.py/issues/530
        top = n * (z * p1 - p2)
        bottom = z ** 2 - 1.0
        pp = top / bottom
        z1 = z.copy()
        z = z1 - p1/pp
        if np.all(np.abs(z - z1) < 1e-14):
            break

    if its == maxit - 1:
        raise ValueError("Maximum iterations in _qnwlege1")

    nodes[i] = xm - xl * z
    nodes[- i - 1] = xm + xl * z

    # https://github.com/QuantEcon/QuantEcon.py/issues/530
    weights[i] = 2 * xl / ((1 - z ** 2) * pp * pp)
    weights[- i - 1] = weights[i]

    return nodes, weights


@nad.grad_jit
def legendre_loss(a, b):
    nodes, weights = _qnwlege1(5, a, b)
    return np.sum(np.sin(nodes) * weights)


# UMAP umap/distances.py: returns the distance and its gradient, an array filled in a loop
# beside an early `return 1.0, np.zeros(...)` (the two arrays are distinct).
@numba.njit(fastmath=True)
def cosine_grad(x, y):
    result = 0.0
    norm_x = 0.0
    norm_y = 0.0

    for i in range(x.shape[0]):
        result += x[i] * y[i]
        norm_x += x[i] * x[i]
        norm_y += y[i] * y[i]

    if norm_x == 0.0 and norm_y == 0.0:
        return 0.0, np.zeros(x.shape, dtype=np.float32)

    if norm_x == 0.0 or norm_y == 0.0:
        return 1.0, np.zeros(x.shape, dtype=np.float32)

    nx = np.sqrt(norm_x)
    ny = np.sqrt(norm_y)

    dist = 1.0 - result / (nx * ny)
    grad = np.empty(x.shape[0], dtype=np.float32)

    inv_nx_ny = 1.0 / (nx * ny)
    inv_nx3_ny = 1.0 / (norm_x * nx * ny)

    for i in range(x.shape[0]):
        grad[i] = x[i] * result * inv_nx3_ny - y[i] * inv_nx_ny

    return dist, grad


@nad.grad_jit
def cosine_grad_loss(x, y, w):
    d, g = cosine_grad(x, y)
    return 0.3 * d + np.sum(g * w)


# Numba's numba/tests/test_blackscholes.py: the cumulative normal is a register_jitable
# function (an overload whose implementation is the function itself), scalar and array.
RSQRT2PI = 0.39894228040143267793994605993438
A1 = 0.31938153
A2 = -0.356563782
A3 = 1.781477937
A4 = -1.821255978
A5 = 1.330274429


@numba.extending.register_jitable
def cnd_array(d):
    K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    ret_val = (RSQRT2PI * np.exp(-0.5 * d * d) *
               (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    return np.where(d > 0, 1.0 - ret_val, ret_val)


@numba.extending.register_jitable
def cnd(d):
    K = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    ret_val = (RSQRT2PI * math.exp(-0.5 * d * d) *
               (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val


@numba.njit
def blackscholes_scalar(callResult, putResult, stockPrice, optionStrike,
                        optionYears, Riskfree, Volatility):
    S = stockPrice
    X = optionStrike
    T = optionYears
    R = Riskfree
    V = Volatility
    for i in range(len(S)):
        sqrtT = math.sqrt(T[i])
        d1 = (math.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (V * sqrtT)
        d2 = d1 - V * sqrtT
        cndd1 = cnd(d1)
        cndd2 = cnd(d2)

        expRT = math.exp((-1. * R) * T[i])
        callResult[i] = (S[i] * cndd1 - X[i] * expRT * cndd2)
        putResult[i] = (X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1))


@nad.grad_jit
def blackscholes_loss(S, X, T, R, V):
    call = np.zeros(S.shape[0])
    put = np.zeros(S.shape[0])
    blackscholes_scalar(call, put, S, X, T, R, V)
    d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * np.sqrt(T))
    return np.sum(call) + 0.5 * np.sum(put) + np.sum(cnd_array(d1) * X)


# arch arch/univariate/recursions_python.py (midas_recursion): the parameters unpacked from
# an array, `omega, alpha, gamma = parameters`.
@numba.njit
def midas_recursion(parameters, weights, resids, sigma2, nobs, backcast, var_bounds):
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


@nad.grad_jit
def midas_loss(parameters, weights, resids, backcast, var_bounds):
    sigma2 = np.zeros(resids.shape[0])
    s = midas_recursion(parameters, weights, resids, sigma2, resids.shape[0], backcast,
                        var_bounds)
    return np.sum(np.log(s) + resids * resids / s)

