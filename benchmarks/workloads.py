"""The benchmark workloads.

Each workload has
  * ``primal``: a plain Python function written the way one writes code for
    ``numba.njit`` (explicit loops, ``math`` functions) returning a float;
  * ``hand_grad``: the same gradient written by hand in numba (the forward
    pass stores the history it needs in an array, then a backward loop),
    returning a tuple with one entry per argument of ``primal``: an array for
    a float array argument, a float for a float scalar, ``None`` otherwise
    (arguments it does not differentiate are ``None`` too);
  * ``make_args(quick)``: the arguments, full size or tiny (smoke mode);
  * ``wrt``: the indices of the arguments whose gradient is compared;
  * ``ad_stack_size(args)``: the capacity given to tools whose stacks for
    loops of run-time length have a fixed size (ours, Taichi, Quadrants):
    the pushes one stack sees within one iteration of the outermost loop,
    plus slack (Taichi needs a few slots more than the trip count).  The
    command line can override it (``--ad-stack-size WORKLOAD=N``).

Everything is float64.
"""
import math
from dataclasses import dataclass
from typing import Callable, Tuple

import numba
import numpy as np


@dataclass
class Workload:
    name: str
    title: str
    description: str
    primal: Callable
    hand_grad: Callable
    make_args: Callable
    wrt: Tuple[int, ...]
    ad_stack_size: Callable

    @property
    def primal_jit(self):
        return _jitted(self.primal)

    @property
    def hand_grad_jit(self):
        return _jitted(self.hand_grad)


_JIT_CACHE = {}


def _jitted(fn):
    if fn not in _JIT_CACHE:
        _JIT_CACHE[fn] = numba.njit(fn)
    return _JIT_CACHE[fn]


# --------------------------------------------------------------------------
# 1. sin recurrence: 1000 values, 100 steps of v = sin(v) * 1.01, loss = sum
# --------------------------------------------------------------------------
def sin_recurrence(x, steps):
    total = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        for _ in range(steps):
            v = math.sin(v) * 1.01
        total += v
    return total


def sin_recurrence_grad(x, steps):
    n = x.shape[0]
    gx = np.empty(n)
    history = np.empty(steps)
    for i in range(n):
        v = x[i]
        for t in range(steps):
            history[t] = v
            v = math.sin(v) * 1.01
        dv = 1.0
        for t in range(steps - 1, -1, -1):
            dv *= math.cos(history[t]) * 1.01
        gx[i] = dv
    return gx, None


def _sin_recurrence_args(quick):
    n, steps = (8, 5) if quick else (1000, 100)
    rng = np.random.default_rng(1)
    return (rng.uniform(-1.0, 1.0, n), steps)


# --------------------------------------------------------------------------
# 2. long scalar recurrence: v = sin(v) * 1.01 + 0.1 * w, 10,000 steps.
#    x is a 1-element array (v starts at x[0]), w a float scalar.
# --------------------------------------------------------------------------
def long_recurrence(x, w, steps):
    v = x[0]
    for _ in range(steps):
        v = math.sin(v) * 1.01 + 0.1 * w
    return v


def long_recurrence_grad(x, w, steps):
    history = np.empty(steps)
    v = x[0]
    for t in range(steps):
        history[t] = v
        v = math.sin(v) * 1.01 + 0.1 * w
    dv = 1.0
    dw = 0.0
    for t in range(steps - 1, -1, -1):
        dw += 0.1 * dv
        dv *= math.cos(history[t]) * 1.01
    gx = np.zeros_like(x)
    gx[0] = dv
    return gx, dw, None


def _long_recurrence_args(quick):
    steps = 20 if quick else 10_000
    return (np.array([0.3]), 0.5, steps)


# --------------------------------------------------------------------------
# 3. Newton's square root to convergence (a while loop), 1000 values.
# --------------------------------------------------------------------------
def newton_sqrt(a):
    total = 0.0
    for i in range(a.shape[0]):
        ai = a[i]
        x = ai
        while abs(x * x - ai) >= 1e-12 * ai:
            x = 0.5 * (x + ai / x)
        total += x
    return total


NEWTON_MAX_ITERATIONS = 200


def newton_sqrt_grad(a):
    n = a.shape[0]
    ga = np.empty(n)
    history = np.empty(NEWTON_MAX_ITERATIONS)
    for i in range(n):
        ai = a[i]
        x = ai
        k = 0
        while abs(x * x - ai) >= 1e-12 * ai:
            history[k] = x
            k += 1
            x = 0.5 * (x + ai / x)
        dx = 1.0
        da = 0.0
        for j in range(k - 1, -1, -1):
            xj = history[j]
            da += dx * 0.5 / xj
            dx *= 0.5 * (1.0 - ai / (xj * xj))
        ga[i] = da + dx  # x started at ai
    return (ga,)


def _newton_args(quick):
    n = 8 if quick else 1000
    rng = np.random.default_rng(3)
    return (rng.uniform(0.5, 100.0, n),)


# --------------------------------------------------------------------------
# 4. mass-spring chain: 32 particles on a line, 500 semi-implicit Euler steps
#    with in-place state updates; loss = sum of squared final positions.
#    Gradient in the initial velocities v0 and the spring constant k.
# --------------------------------------------------------------------------
def mass_spring(x0, v0, k, rest, mass, dt, steps):
    n = x0.shape[0]
    x = np.empty(n)
    v = np.empty(n)
    f = np.empty(n)
    for i in range(n):
        x[i] = x0[i]
        v[i] = v0[i]
    for t in range(steps):
        for i in range(n):
            f[i] = 0.0
        for i in range(n - 1):
            s = k * (x[i + 1] - x[i] - rest)
            f[i] += s
            f[i + 1] -= s
        for i in range(n):
            v[i] += dt * f[i] / mass
            x[i] += dt * v[i]
    loss = 0.0
    for i in range(n):
        loss += x[i] * x[i]
    return loss


def mass_spring_grad(x0, v0, k, rest, mass, dt, steps):
    n = x0.shape[0]
    xs = np.empty((steps, n))  # positions at the start of each step
    x = x0.copy()
    v = v0.copy()
    f = np.empty(n)
    for t in range(steps):
        for i in range(n):
            xs[t, i] = x[i]
            f[i] = 0.0
        for i in range(n - 1):
            s = k * (x[i + 1] - x[i] - rest)
            f[i] += s
            f[i + 1] -= s
        for i in range(n):
            v[i] += dt * f[i] / mass
            x[i] += dt * v[i]
    gx = 2.0 * x
    gv = np.zeros(n)
    gk = 0.0
    for t in range(steps - 1, -1, -1):
        for i in range(n):
            gv[i] += dt * gx[i]          # x[i] += dt * v[i]
        for i in range(n - 1):
            gs = (gv[i] - gv[i + 1]) * dt / mass  # f -> v, then f[i] += s, f[i+1] -= s
            gk += gs * (xs[t, i + 1] - xs[t, i] - rest)
            gx[i + 1] += gs * k
            gx[i] -= gs * k
    return gx, gv, gk, None, None, None, None


def _mass_spring_args(quick):
    n, steps = (4, 10) if quick else (32, 500)
    rng = np.random.default_rng(4)
    x0 = np.arange(n, dtype=np.float64) + rng.uniform(-0.1, 0.1, n)
    v0 = rng.uniform(-0.5, 0.5, n)
    return (x0, v0, 10.0, 1.0, 1.0, 0.01, steps)


# --------------------------------------------------------------------------
# 5. Monte Carlo option price: geometric Brownian motion with fixed normals
#    Z[p, t]; discounted mean of max(S_T - K, 0). Pathwise gradient in S0,
#    sigma and r.
# --------------------------------------------------------------------------
def mc_option(S0, sigma, r, K, T, Z):
    n_paths, n_steps = Z.shape
    dt = T / n_steps
    drift = (r - 0.5 * sigma * sigma) * dt
    vol = sigma * math.sqrt(dt)
    total = 0.0
    for p in range(n_paths):
        s = S0
        for t in range(n_steps):
            s = s * math.exp(drift + vol * Z[p, t])
        total += max(s - K, 0.0)
    return math.exp(-r * T) * total / n_paths


def mc_option_grad(S0, sigma, r, K, T, Z):
    n_paths, n_steps = Z.shape
    dt = T / n_steps
    drift = (r - 0.5 * sigma * sigma) * dt
    vol = sigma * math.sqrt(dt)
    disc = math.exp(-r * T)
    s_hist = np.empty(n_steps + 1)
    growth = np.empty(n_steps)
    total = 0.0
    g_S0 = 0.0
    g_drift = 0.0
    g_vol = 0.0
    for p in range(n_paths):
        s = S0
        s_hist[0] = s
        for t in range(n_steps):
            growth[t] = math.exp(drift + vol * Z[p, t])
            s = s * growth[t]
            s_hist[t + 1] = s
        if s > K:
            total += s - K
            gs = disc / n_paths
            for t in range(n_steps - 1, -1, -1):
                g_exponent = gs * s_hist[t + 1]
                g_drift += g_exponent
                g_vol += g_exponent * Z[p, t]
                gs *= growth[t]
            g_S0 += gs
    price = disc * total / n_paths
    g_sigma = g_drift * (-sigma * dt) + g_vol * math.sqrt(dt)
    g_r = g_drift * dt - T * price
    return g_S0, g_sigma, g_r, None, None, None


def _mc_option_args(quick):
    n_paths, n_steps = (16, 4) if quick else (10_000, 50)
    Z = np.random.default_rng(5).standard_normal((n_paths, n_steps))
    return (100.0, 0.2, 0.05, 105.0, 1.0, Z)


# --------------------------------------------------------------------------
# 6. Logistic regression trained by gradient descent, written with whole
#    arrays (np.exp, np.dot, X.T, w -= ...): X 1000 x 20, 100 epochs of
#    full-batch steps; loss = mean log-loss of the trained weights.
#    Gradient in the data X and the initial weights w0.
# --------------------------------------------------------------------------
def logistic_regression(X, y, w0, lr, epochs):
    n = X.shape[0]
    w = w0.copy()
    for _ in range(epochs):
        p = 1.0 / (1.0 + np.exp(-np.dot(X, w)))
        w -= lr * np.dot(X.T, p - y) / n
    z = np.dot(X, w)
    return np.sum(np.log(1.0 + np.exp(z)) - y * z) / n


def logistic_regression_grad(X, y, w0, lr, epochs):
    # w_{t+1} = w_t - c X^T (p_t - y), p_t = sigmoid(X w_t), c = lr / n: the forward
    # keeps every w_t and p_t; the sweep adds e_t gr^T + gz_t w_t^T to gX row by row.
    n, d = X.shape
    c = lr / n
    ws = np.empty((epochs + 1, d))
    ps = np.empty((epochs, n))
    w = w0.copy()
    for t in range(epochs):
        ws[t] = w
        z = np.dot(X, w)
        for i in range(n):
            ps[t, i] = 1.0 / (1.0 + math.exp(-z[i]))
        w -= c * np.dot(X.T, ps[t] - y)
    z = np.dot(X, w)
    gz = np.empty(n)
    for i in range(n):
        gz[i] = (1.0 / (1.0 + math.exp(-z[i])) - y[i]) / n
    gw = np.dot(X.T, gz)
    gX = np.outer(gz, w)
    for t in range(epochs - 1, -1, -1):
        gr = -c * gw
        ge = np.dot(X, gr)
        pt = ps[t]
        wt = ws[t]
        for i in range(n):
            e = pt[i] - y[i]
            gzi = ge[i] * pt[i] * (1.0 - pt[i])
            gz[i] = gzi
            for j in range(d):
                gX[i, j] += e * gr[j] + gzi * wt[j]
        gw += np.dot(X.T, gz)
    return gX, None, gw, None, None


def _logistic_regression_args(quick):
    n, d, epochs = (12, 3, 4) if quick else (1000, 20, 100)
    rng = np.random.default_rng(6)
    X = rng.standard_normal((n, d))
    w_true = rng.standard_normal(d)
    y = (rng.uniform(0.0, 1.0, n) < 1.0 / (1.0 + np.exp(-X @ w_true))).astype(np.float64)
    return (X, y, 0.1 * rng.standard_normal(d), 0.5, epochs)


WORKLOADS = {
    w.name: w
    for w in [
        Workload(
            "sin_recurrence", "1. sin recurrence",
            "1000 values, 100 steps of v = sin(v) * 1.01 each, loss = sum of final v; "
            "gradient in x.",
            sin_recurrence, sin_recurrence_grad, _sin_recurrence_args, (0,),
            lambda args: args[1] + 16),
        Workload(
            "long_recurrence", "2. long scalar recurrence",
            "10,000 steps of v = sin(v) * 1.01 + 0.1 * w from v = x[0] (x a 1-element "
            "array, w a float scalar), loss = v; gradient in x and w.",
            long_recurrence, long_recurrence_grad, _long_recurrence_args, (0, 1),
            lambda args: args[2] + 16),
        Workload(
            "newton_sqrt", "3. Newton's square root (while loop)",
            "x = 0.5 * (x + a / x) from x = a until |x*x - a| < 1e-12 * a, for 1000 values "
            "a in [0.5, 100], loss = sum of the roots; gradient in a.",
            newton_sqrt, newton_sqrt_grad, _newton_args, (0,),
            lambda args: 64),
        Workload(
            "mass_spring", "4. mass-spring chain",
            "32 particles on a line, neighbour springs (k = 10, rest length 1), 500 "
            "semi-implicit Euler steps (dt = 0.01) updating v and x in place, loss = sum "
            "of squared final positions; gradient in v0 and k.",
            mass_spring, mass_spring_grad, _mass_spring_args, (1, 2),
            lambda args: args[6] + 16),
        Workload(
            "mc_option", "5. Monte Carlo option price",
            "10,000 paths x 50 steps of geometric Brownian motion with fixed normals "
            "Z (seeded), payoff max(S_T - K, 0), discounted mean; pathwise gradient in "
            "S0, sigma and r.",
            mc_option, mc_option_grad, _mc_option_args, (0, 1, 2),
            lambda args: args[5].shape[1] + 8),
        Workload(
            "logistic_regression", "6. logistic regression (whole arrays)",
            "X 1000 x 20, 100 epochs of full-batch gradient descent written with whole "
            "arrays: p = 1 / (1 + np.exp(-np.dot(X, w))), w -= lr * np.dot(X.T, p - y) / n "
            "(lr = 0.5); loss = mean log-loss of the trained weights; gradient in the data X "
            "and the initial weights w0.",
            logistic_regression, logistic_regression_grad, _logistic_regression_args, (0, 2),
            lambda args: args[4] + 8),
    ]
}


def finite_difference_check(workload, args, grads, rel_step=1e-6, rtol=1e-4,
                            max_entries=4):
    """Compare ``grads`` (the hand-written gradient) with central differences of
    the numba primal on a few entries of each differentiated argument.
    Returns a list of mismatch descriptions (empty when everything agrees)."""
    f = workload.primal_jit
    problems = []
    for index in workload.wrt:
        value = args[index]
        if isinstance(value, np.ndarray):
            flat = value.reshape(-1)
            picks = np.linspace(0, flat.size - 1, min(max_entries, flat.size)).astype(int)
            for j in picks:
                h = rel_step * max(1.0, abs(flat[j]))
                plus, minus = flat.copy(), flat.copy()
                plus[j] += h
                minus[j] -= h
                args_p = list(args); args_p[index] = plus.reshape(value.shape)
                args_m = list(args); args_m[index] = minus.reshape(value.shape)
                fd = (f(*args_p) - f(*args_m)) / (2 * h)
                got = np.asarray(grads[index]).reshape(-1)[j]
                if not np.isclose(got, fd, rtol=rtol, atol=1e-7):
                    problems.append(f"arg {index}[{j}]: hand-written {got!r}, "
                                    f"finite difference {fd!r}")
        else:
            h = rel_step * max(1.0, abs(value))
            args_p = list(args); args_p[index] = value + h
            args_m = list(args); args_m[index] = value - h
            fd = (f(*args_p) - f(*args_m)) / (2 * h)
            got = grads[index]
            if not np.isclose(got, fd, rtol=rtol, atol=1e-7):
                problems.append(f"arg {index}: hand-written {got!r}, "
                                f"finite difference {fd!r}")
    return problems
