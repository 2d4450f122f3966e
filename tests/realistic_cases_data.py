"""Realistic programs, part 2: finance, statistics, regression and small networks."""
import math

import numba
import numpy as np

from realistic_programs import Case


def _rng(seed):
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------
# Black-Scholes, one loop over options, math.erf/exp/log/sqrt (all arrays)
# --------------------------------------------------------------------------
@numba.njit
def cnd(d):
    return 0.5 * (1.0 + math.erf(d / math.sqrt(2.0)))


@numba.njit
def black_scholes(S, K, T, r, sigma):
    n = S.shape[0]
    call = np.empty(n)
    put = np.empty(n)
    for i in range(n):
        sqrt_t = math.sqrt(T[i])
        d1 = (math.log(S[i] / K[i]) + (r[i] + 0.5 * sigma[i] * sigma[i]) * T[i]) / (
            sigma[i] * sqrt_t)
        d2 = d1 - sigma[i] * sqrt_t
        cnd_d1 = cnd(d1)
        cnd_d2 = cnd(d2)
        exp_rt = math.exp(-r[i] * T[i])
        call[i] = S[i] * cnd_d1 - K[i] * exp_rt * cnd_d2
        put[i] = K[i] * exp_rt * (1.0 - cnd_d2) - S[i] * (1.0 - cnd_d1)
    return call, put


@numba.njit
def black_scholes_loss(S, K, T, r, sigma):
    c, p = black_scholes(S, K, T, r, sigma)
    return c.sum() + 2 * p.sum()


def _bs_args(n=5, seed=6):
    rng = _rng(seed)
    return (rng.uniform(80, 120, n), rng.uniform(90, 110, n), rng.uniform(0.25, 2.0, n),
            rng.uniform(0.01, 0.05, n), rng.uniform(0.1, 0.4, n))


# --------------------------------------------------------------------------
# Black-Scholes, vectorised (Numba's example: polynomial CND with np.where),
# scalar rate and volatility
# --------------------------------------------------------------------------
RSQRT2PI = 0.39894228040143267794


@numba.njit
def cnd_vec(d):
    A1 = 0.31938153
    A2 = -0.356563782
    A3 = 1.781477937
    A4 = -1.821255978
    A5 = 1.330274429
    K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    ret_val = (RSQRT2PI * np.exp(-0.5 * d * d)
               * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    return np.where(d > 0, 1.0 - ret_val, ret_val)


@numba.njit
def black_scholes_vec(stock_price, strike, years, riskfree, volatility):
    S = stock_price
    X = strike
    T = years
    R = riskfree
    V = volatility
    sqrt_t = np.sqrt(T)
    d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrt_t)
    d2 = d1 - V * sqrt_t
    cnd_d1 = cnd_vec(d1)
    cnd_d2 = cnd_vec(d2)
    exp_rt = np.exp(-R * T)
    call = S * cnd_d1 - X * exp_rt * cnd_d2
    put = X * exp_rt * (1.0 - cnd_d2) - S * (1.0 - cnd_d1)
    return call, put


@numba.njit
def black_scholes_vec_loss(stock_price, strike, years, riskfree, volatility):
    c, p = black_scholes_vec(stock_price, strike, years, riskfree, volatility)
    return c.sum() + 2 * p.sum()


def _bs_vec_args():
    S, K, T, _, _ = _bs_args(5, 7)
    return (S, K, T, 0.02, 0.3)


# --------------------------------------------------------------------------
# Kernel density estimate with zip loops; loss = log-likelihood at points
# --------------------------------------------------------------------------
@numba.njit
def kde(points, x, w, bandwidth):
    out = np.empty(points.shape[0])
    norm = 1.0 / (bandwidth * math.sqrt(2.0 * math.pi))
    total_w = 0.0
    for wi in w:
        total_w += wi
    for k in range(points.shape[0]):
        p = points[k]
        s = 0.0
        for xi, wi in zip(x, w):
            z = (p - xi) / bandwidth
            s += wi * math.exp(-0.5 * z * z)
        out[k] = norm * s / total_w
    return out


@numba.njit
def kde_loss(points, x, w, bandwidth):
    density = kde(points, x, w, bandwidth)
    s = 0.0
    for k in range(density.shape[0]):
        s += math.log(density[k])
    return s


def _kde_args():
    rng = _rng(8)
    return (np.linspace(-1, 1, 4), rng.normal(0, 0.7, 6), rng.uniform(0.5, 1.5, 6), 0.5)


# --------------------------------------------------------------------------
# Logistic regression (Numba's example, updating w in place) and linear
# regression with @ and .T
# --------------------------------------------------------------------------
@numba.njit
def logistic_regression(Y, X, w, iterations):
    for i in range(iterations):
        w -= np.dot(((1.0 / (1.0 + np.exp(-Y * np.dot(X, w))) - 1.0) * Y), X) / X.shape[0]
    return w


@numba.njit
def logistic_regression_loss(Y, X, w, iterations):
    w = logistic_regression(Y, X, w, iterations)
    s = 0.0
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(X.shape[1]):
            z += X[i, j] * w[j]
        s += math.log(1.0 + math.exp(-Y[i] * z))
    return s


def _logistic_args():
    rng = _rng(9)
    X = rng.normal(0, 1, (6, 3))
    Y = np.where(rng.uniform(0, 1, 6) > 0.5, 1.0, -1.0)
    return (Y, X, rng.normal(0, 0.1, 3), 5)


@numba.njit
def linear_regression(X, y, w0, alpha, iters):
    w = w0.copy()
    n = X.shape[0]
    for _ in range(iters):
        err = X @ w - y
        w -= alpha * (X.T @ err) / n
    return w


@numba.njit
def linear_regression_loss(X, y, w0, alpha, iters):
    w = linear_regression(X, y, w0, alpha, iters)
    s = 0.0
    for i in range(X.shape[0]):
        r = -y[i]
        for j in range(X.shape[1]):
            r += X[i, j] * w[j]
        s += r * r
    for j in range(w.shape[0]):
        s += 1.0 / (1.0 + math.exp(-w[j]))
    return s


def _linear_args():
    rng = _rng(10)
    X = rng.normal(0, 1, (6, 3))
    return (X, X @ np.array([0.5, -1.0, 2.0]) + rng.normal(0, 0.1, 6),
            np.zeros(3), 0.1, 6)


# --------------------------------------------------------------------------
# Moving average (running window sum) and exponential moving average
# --------------------------------------------------------------------------
@numba.njit
def moving_average(x, window):
    n = x.shape[0]
    out = np.empty(n - window + 1)
    s = 0.0
    for i in range(window):
        s += x[i]
    out[0] = s / window
    for i in range(window, n):
        s += x[i] - x[i - window]
        out[i - window + 1] = s / window
    return out


@numba.njit
def moving_average_loss(x, window):
    avg = moving_average(x, window)
    s = 0.0
    for i in range(avg.shape[0]):
        s += (i + 1) * avg[i]
    return s


@numba.njit
def ema(x, alpha):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = alpha * x[i] + (1.0 - alpha) * out[i - 1]
    return out


@numba.njit
def ema_loss(x, alpha):
    e = ema(x, alpha)
    s = 0.0
    for i in range(e.shape[0]):
        s += e[i] * e[i]
    return s


# --------------------------------------------------------------------------
# Small MLP and softmax cross-entropy (row max by a loop: Numba's np.max has
# no axis argument)
# --------------------------------------------------------------------------
@numba.njit
def mlp(X, W1, b1, W2):
    return np.tanh(X @ W1 + b1) @ W2


@numba.njit
def mlp_mse(X, W1, b1, W2, y):
    pred = mlp(X, W1, b1, W2)
    s = 0.0
    for i in range(y.shape[0]):
        s += (pred[i] - y[i]) ** 2
    return s / y.shape[0]


def _mlp_args():
    rng = _rng(11)
    return (rng.normal(0, 1, (5, 3)), rng.normal(0, 0.5, (3, 4)), rng.normal(0, 0.1, 4),
            rng.normal(0, 0.5, 4), rng.normal(0, 1, 5))


@numba.njit
def log_softmax(z):
    m = np.empty(z.shape[0])
    for i in range(z.shape[0]):
        m[i] = np.max(z[i])
    zs = z - m.reshape((-1, 1))
    return zs - np.log(np.sum(np.exp(zs), axis=1)).reshape((-1, 1))


@numba.njit
def softmax_cross_entropy(X, W, labels):
    lp = log_softmax(X @ W)
    total = 0.0
    for i in range(labels.shape[0]):
        total -= lp[i, labels[i]]
    return total / labels.shape[0]


@numba.njit
def cross_entropy_gather(X, W, labels):
    """The usual vectorised form: the labels' probabilities picked by two index arrays."""
    z = X @ W
    z = z - z.max()
    p = np.exp(z)
    p = p / p.sum(axis=1).reshape(-1, 1)
    return -np.mean(np.log(p[np.arange(X.shape[0]), labels]))


@numba.njit
def kmeans_inertia(X, C):
    """One k-means assignment step: distances by broadcasting, np.argmin, boolean masks."""
    d = ((X[:, np.newaxis, :] - C[np.newaxis, :, :]) ** 2).sum(axis=2)
    nearest = np.argmin(d, axis=1)
    total = 0.0
    for k in range(C.shape[0]):
        members = nearest == k
        if members.any():
            total += np.sum((X[members] - C[k]) ** 2)
    return total


def _kmeans_args():
    rng = _rng(21)
    return (rng.normal(0, 1, (8, 2)), rng.normal(0, 1, (3, 2)))


def _softmax_args():
    rng = _rng(12)
    return (rng.normal(0, 1, (5, 3)), rng.normal(0, 1, (3, 4)),
            np.array([0, 3, 1, 2, 3]))


# --------------------------------------------------------------------------
# Ridge regression by np.linalg.solve; np.interp resampling; arc length
# with np.diff
# --------------------------------------------------------------------------
@numba.njit
def ridge(X, y, lam):
    A = X.T @ X + lam * np.eye(X.shape[1])
    return np.linalg.solve(A, X.T @ y)


@numba.njit
def ridge_loss(X, y, lam):
    w = ridge(X, y, lam)
    s = 0.0
    for j in range(w.shape[0]):
        s += w[j] * w[j]
        for i in range(X.shape[0]):
            s += X[i, j] * w[j]
    return s


@numba.njit
def resample(t_new, t, y):
    return np.interp(t_new, t, y)


@numba.njit
def resample_loss(t_new, t, y):
    z = resample(t_new, t, y)
    s = 0.0
    for i in range(z.shape[0]):
        s += z[i] * z[i]
    return s


@numba.njit
def arc_length(x, y):
    dx = np.diff(x)
    dy = np.diff(y)
    return np.sum(np.sqrt(dx * dx + dy * dy))


CASES = [
    Case("black_scholes_loop", "Black-Scholes, one loop over options, math.erf/exp/log/"
         "sqrt, returns (call, put); loss = sum(call) + 2 sum(put)",
         black_scholes, _bs_args, (0, 1, 2, 3, 4), loss=black_scholes_loss),
    Case("black_scholes_vectorized", "Black-Scholes on whole arrays (np.exp/np.log/"
         "np.sqrt, polynomial CND with np.abs and np.where), scalar rate and volatility",
         black_scholes_vec, _bs_vec_args, (0, 1, 2, 3, 4), loss=black_scholes_vec_loss),
    Case("kde_zip", "Gaussian KDE, for xi, wi in zip(x, w); loss = sum of log density",
         kde, _kde_args, (0, 1, 2, 3), loss=kde_loss),
    Case("logistic_regression_gd", "Numba's logistic regression example: w -= np.dot(..., "
         "X) in place, 5 steps; gradient in the data and the initial weights",
         logistic_regression, _logistic_args, (0, 1, 2), loss=logistic_regression_loss),
    Case("linear_regression_gd", "gradient descent with X @ w and X.T @ err, w -= alpha * "
         "...; gradient in the data, the initial weights and alpha",
         linear_regression, _linear_args, (0, 1, 2, 3), loss=linear_regression_loss),
    Case("moving_average", "running window sum over a signal", moving_average,
         lambda: (_rng(13).normal(0, 1, 9), 3), (0,), loss=moving_average_loss),
    Case("ema", "exponential moving average, out[i] from out[i - 1]", ema,
         lambda: (_rng(14).normal(0, 1, 8), 0.3), (0, 1), loss=ema_loss),
    Case("mlp_mse", "np.tanh(X @ W1 + b1) @ W2, mean squared error", mlp, _mlp_args,
         (0, 1, 2, 3, 4), loss=mlp_mse, program_args=lambda a: a[:4]),
    Case("softmax_cross_entropy", "log-softmax with a row-max loop, np.exp, np.log(np.sum("
         "..., axis=1)), integer labels", softmax_cross_entropy, _softmax_args, (0, 1)),
    Case("cross_entropy_gather", "softmax of X @ W, then p[np.arange(n), labels] (two "
         "index arrays), np.mean(np.log(...))", cross_entropy_gather, _softmax_args, (0, 1)),
    Case("kmeans_inertia", "k-means step: X[:, np.newaxis, :] - C[np.newaxis], .sum(axis=2), "
         "np.argmin, X[members] with a boolean mask", kmeans_inertia, _kmeans_args, (0, 1)),
    Case("ridge_solve", "ridge regression by np.linalg.solve(X.T @ X + lam * I, X.T @ y)",
         ridge, lambda: (_rng(15).normal(0, 1, (6, 3)), _rng(16).normal(0, 1, 6), 0.5),
         (0, 1, 2), loss=ridge_loss),
    Case("interp_resample", "np.interp resampling; gradient in the query points and "
         "the values", resample,
         lambda: (np.array([0.15, 0.4, 0.7, 0.9]), np.linspace(0, 1, 5),
                  _rng(17).normal(0, 1, 5)), (0, 2), loss=resample_loss),
    Case("arc_length_diff", "length of a polyline, np.diff and np.sqrt on arrays",
         arc_length, lambda: (np.cos(np.linspace(0, 2, 6)), np.sin(np.linspace(0, 3, 6))),
         (0, 1)),
]
