"""Real-code workloads taken from libraries, written as their authors write them.

* ``numba_stats_nll``: an unbinned maximum-likelihood fit through numba-stats' public
  ``norm.logpdf`` and ``expon.logpdf`` (their own njit ``_logpdf``, as published).
* ``numba_stats_norm`` / ``numba_stats_norm_params``: ``-np.sum(norm.logpdf(x, mu,
  sigma))``, the gradient in every argument / in ``mu`` and ``sigma``.
* ``move_mean``: the moving mean of the Numba examples, ``move_mean(a, window_width,
  out)`` writing into an ``out`` the caller allocates; loss ``sum (i + 1) out[i] ** 2``.
* ``cosine_16`` / ``cosine_256`` (and ``_into``, through ``grad_into``): pynndescent's
  cosine distance, its gradient called from
  a jitted loop over 100k pairs (``f.grad`` from njit code) against UMAP's own
  hand-written ``cosine_grad``.
* ``gini``: QuantEcon's ``gini_coefficient`` (``parallel=True``, a ``prange`` loop).
* ``heat_2d``: a 2-d heat equation in whole-array NumPy (shifted slices of both
  dimensions, a Laplacian temporary) in a time loop.

Same contract as :mod:`.workloads_real`. ``JitLoopWorkload.ours`` builds the call timed for
``grad_jit`` when it is not ``grad_jit(primal)`` itself (a jitted loop calling ``f.grad``);
``jit_options`` are given to ``numba.njit`` and ``grad_jit`` alike (``parallel=True``).
"""
import math
from dataclasses import dataclass, field
from typing import Callable

import numba
import numpy as np

from .workloads import Workload

try:
    from numba_stats import expon, norm
except ImportError:         # the row is left out
    expon = norm = None


@dataclass
class JitLoopWorkload(Workload):
    ours: Callable = None            # () -> jitted function of the args, or None
    jit_options: dict = field(default_factory=dict)

    @property
    def primal_jit(self):
        return _jitted(self.primal, self.jit_options)

    @property
    def hand_grad_jit(self):
        return _jitted(self.hand_grad, self.jit_options)


_JIT_CACHE = {}


def _jitted(fn, options):
    key = (fn, tuple(sorted(options.items())))
    if key not in _JIT_CACHE:
        _JIT_CACHE[key] = numba.njit(**options)(fn)
    return _JIT_CACHE[key]


# --------------------------------------------------------------------------
# g. numba-stats: Gaussian signal on an exponential background, 1M events
# --------------------------------------------------------------------------
def numba_stats_nll(x, mu, sigma, tau, f):
    ls = norm.logpdf(x, mu, sigma)
    lb = expon.logpdf(x, 0.0, tau)
    return -np.sum(np.log(f * np.exp(ls) + (1.0 - f) * np.exp(lb)))


HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def numba_stats_nll_grad(x, mu, sigma, tau, f):
    # One pass over the events: each event's two densities, their mixture and its share
    # of the four derivatives.
    inv_s = 1.0 / sigma
    inv_t = 1.0 / tau
    log_s = math.log(sigma)
    log_t = math.log(tau)
    g_mu = 0.0
    g_sigma = 0.0
    g_tau = 0.0
    g_f = 0.0
    for i in range(x.shape[0]):
        z = (x[i] - mu) * inv_s
        ps = math.exp(-0.5 * z * z - HALF_LOG_2PI - log_s)
        pb = math.exp(-x[i] * inv_t - log_t) if x[i] >= 0.0 else 0.0
        w = 1.0 / (f * ps + (1.0 - f) * pb)
        a = f * ps * w
        b = (1.0 - f) * pb * w
        g_f -= (ps - pb) * w
        g_mu -= a * z * inv_s
        g_sigma -= a * (z * z - 1.0) * inv_s
        g_tau -= b * (x[i] * inv_t - 1.0) * inv_t
    return None, g_mu, g_sigma, g_tau, g_f


def _nll_args(quick):
    n = 200 if quick else 1_000_000
    rng = np.random.default_rng(41)
    k = int(0.3 * n)
    x = np.concatenate([rng.normal(1.5, 0.3, k), rng.exponential(2.0, n - k)])
    return (x, 1.4, 0.35, 1.8, 0.3)


# --------------------------------------------------------------------------
# g'. numba-stats' norm.logpdf under a sum: a Gaussian's negative log-likelihood
# --------------------------------------------------------------------------
def numba_stats_norm(x, mu, sigma):
    return -np.sum(norm.logpdf(x, mu, sigma))


def numba_stats_norm_grad(x, mu, sigma):
    # z = (x - mu) / sigma; -log pdf = z^2 / 2 + log(sigma) + const.
    inv = 1.0 / sigma
    g_x = np.empty_like(x)
    g_mu = 0.0
    g_sigma = 0.0
    for i in range(x.shape[0]):
        z = (x[i] - mu) * inv
        g_x[i] = z * inv
        g_mu -= z
        g_sigma -= z * z - 1.0
    return g_x, g_mu * inv, g_sigma * inv


def numba_stats_norm_params_grad(x, mu, sigma):
    inv = 1.0 / sigma
    g_mu = 0.0
    g_sigma = 0.0
    for i in range(x.shape[0]):
        z = (x[i] - mu) * inv
        g_mu -= z
        g_sigma -= z * z - 1.0
    return None, g_mu * inv, g_sigma * inv


def _norm_args(quick):
    n = 200 if quick else 1_000_000
    return (np.random.default_rng(45).normal(1.5, 0.3, n), 1.4, 0.35)


# --------------------------------------------------------------------------
# h. the Numba examples' moving mean, writing into the caller's ``out``
# --------------------------------------------------------------------------
@numba.njit
def move_mean(a, window_width, out):
    asum = 0.0
    count = 0
    for i in range(window_width):
        asum += a[i]
        count += 1
        out[i] = asum / count
    for i in range(window_width, len(a)):
        asum += a[i] - a[i - window_width]
        out[i] = asum / count


def move_mean_loss(a, window):
    out = np.empty_like(a)
    move_mean(a, window, out)
    total = 0.0
    for i in range(out.shape[0]):
        total += (i + 1) * out[i] * out[i]
    return total


def move_mean_grad(a, window):
    # out[i] = s_i / c_i, s_i the sum of the window of a[i] (a[i - w + 1 .. i], fewer at
    # the start), c_i its length. A forward pass keeps the seeds d loss / d s_i =
    # 2 (i + 1) s_i / c_i^2; a[j] lies in the windows of outputs j .. j + w - 1, so its
    # gradient is a running sum of the seeds, taken from the end (one add on its chain).
    n = a.shape[0]
    seed = np.empty(n)
    asum = 0.0
    for i in range(window):
        asum += a[i]
        seed[i] = 2.0 * (i + 1) * asum / ((i + 1) * (i + 1))
    inv = 2.0 / (window * window)
    for i in range(window, n):
        asum += a[i] - a[i - window]
        seed[i] = inv * (i + 1) * asum
    ga = np.empty(n)
    run = 0.0
    for j in range(n - 1, max(n - window, 0) - 1, -1):
        run += seed[j]
        ga[j] = run
    for j in range(n - window - 1, -1, -1):
        run += seed[j] - seed[j + window]
        ga[j] = run
    return ga, None


def _move_mean_args(quick):
    n, window = (40, 5) if quick else (1_000_000, 50)
    rng = np.random.default_rng(42)
    return (rng.standard_normal(n), window)


# --------------------------------------------------------------------------
# i. pynndescent's cosine distance over 100k pairs of 16 or 256 elements; the
#    gradient in the first point of each pair, called from a jitted loop
# --------------------------------------------------------------------------
def cosine(x, y):
    result = 0.0
    norm_x = 0.0
    norm_y = 0.0
    for i in range(x.shape[0]):
        result += x[i] * y[i]
        norm_x += x[i] ** 2
        norm_y += y[i] ** 2

    if norm_x == 0.0 and norm_y == 0.0:
        return 0.0
    elif norm_x == 0.0 or norm_y == 0.0:
        return 1.0
    else:
        return 1.0 - (result / np.sqrt(norm_x * norm_y))


cosine_jit = numba.njit(fastmath=True)(cosine)


@numba.njit(fastmath=True)
def cosine_grad(x, y):
    # UMAP's own (umap/distances.py): the distance and its gradient in x (UMAP returns
    # the negative gradient, for its layout's convention; the sign is the only change).
    result = 0.0
    norm_x = 0.0
    norm_y = 0.0
    for i in range(x.shape[0]):
        result += x[i] * y[i]
        norm_x += x[i] ** 2
        norm_y += y[i] ** 2

    if norm_x == 0.0 and norm_y == 0.0:
        dist = 0.0
        grad = np.zeros(x.shape)
    elif norm_x == 0.0 or norm_y == 0.0:
        dist = 1.0
        grad = np.zeros(x.shape)
    else:
        grad = (x * result - y * norm_x) / np.sqrt(norm_x ** 3 * norm_y)
        dist = 1.0 - (result / np.sqrt(norm_x * norm_y))
    return dist, grad


def cosine_pairs(X, Y, heads, tails):
    total = 0.0
    for k in range(heads.shape[0]):
        total += cosine_jit(X[heads[k]], Y[tails[k]])
    return total


def cosine_pairs_grad(X, Y, heads, tails):
    G = np.zeros_like(X)
    for k in range(heads.shape[0]):
        _, g = cosine_grad(X[heads[k]], Y[tails[k]])
        G[heads[k]] += g
    return G, None, None, None


def cosine_pairs_ours():
    import numba_adstack as nad
    dist = nad.grad_jit(cosine, wrt="x", fastmath=True)

    @numba.njit
    def pairs(X, Y, heads, tails):
        G = np.zeros_like(X)
        for k in range(heads.shape[0]):
            gx, _ = dist.grad(X[heads[k]], Y[tails[k]])
            G[heads[k]] += gx
        return G, None, None, None
    return pairs


def cosine_pairs_ours_into():
    import numba_adstack as nad
    dist = nad.grad_jit(cosine, wrt="x", fastmath=True)

    @numba.njit
    def pairs(X, Y, heads, tails):
        G = np.zeros_like(X)
        for k in range(heads.shape[0]):
            dist.grad_into(G[heads[k]], X[heads[k]], Y[tails[k]])
        return G, None, None, None
    return pairs


def _cosine_args(dim):
    def make(quick):
        points, pairs = (6, 10) if quick else (2_000, 100_000)
        rng = np.random.default_rng(43)
        return (rng.standard_normal((points, dim)), rng.standard_normal((points, dim)),
                rng.integers(0, points, pairs), rng.integers(0, points, pairs))
    return make


# --------------------------------------------------------------------------
# j. QuantEcon's Gini coefficient, parallel=True
# --------------------------------------------------------------------------
def gini_coefficient(y):
    n = len(y)
    i_sum = np.zeros(n)
    for i in numba.prange(n):
        for j in range(n):
            i_sum[i] += abs(y[i] - y[j])
    return np.sum(i_sum) / (2 * n * np.sum(y))


def gini_coefficient_grad(y):
    # G = S / (2 n Y), S = sum |y_i - y_j|, Y = sum y: dS/dy_k = 2 sum_j sign(y_k - y_j)
    n = len(y)
    i_sum = np.zeros(n)
    signs = np.zeros(n)
    for i in numba.prange(n):
        a = 0.0
        b = 0.0
        for j in range(n):
            d = y[i] - y[j]
            a += abs(d)
            b += (d > 0.0) - (d < 0.0)
        i_sum[i] = a
        signs[i] = b
    S = np.sum(i_sum)
    Y = np.sum(y)
    c = 1.0 / (2 * n * Y)
    g = np.empty(n)
    for k in numba.prange(n):
        g[k] = 2.0 * signs[k] * c - S * c / Y
    return (g,)


def _gini_args(quick):
    n = 12 if quick else 4_000
    return (np.random.default_rng(44).lognormal(0.0, 0.8, n),)


# --------------------------------------------------------------------------
# k. 2-d heat equation, whole-array NumPy in a time loop
# --------------------------------------------------------------------------
def heat_2d(u0, D, dx, dt, steps):
    u = u0.copy()
    for _ in range(steps):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + dt * D * lap / dx ** 2
    return np.sum(u * u)


def heat_2d_grad(u0, D, dx, dt, steps):
    # The states kept per step; in reverse, one loop nest over the interior per step
    # (the adjoint of the new interior read from a copy, zero on the border), then the
    # border cells' shares of their interior neighbours.
    n, m = u0.shape
    hist = np.empty((steps, n, m))
    u = u0.copy()
    c = dt * D / dx ** 2
    for t in range(steps):
        hist[t] = u
        un = hist[t]
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                u[i, j] = un[i, j] + c * (un[i + 1, j] + un[i - 1, j] + un[i, j + 1]
                                          + un[i, j - 1] - 4.0 * un[i, j])
    ub = 2.0 * u
    g = np.zeros((n, m))
    cb = 0.0
    for t in range(steps - 1, -1, -1):
        un = hist[t]
        g[1:n - 1, 1:m - 1] = ub[1:n - 1, 1:m - 1]
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                gij = g[i, j]
                cb += gij * (un[i + 1, j] + un[i - 1, j] + un[i, j + 1] + un[i, j - 1]
                             - 4.0 * un[i, j])
                ub[i, j] = gij * (1.0 - 4.0 * c) + c * (g[i + 1, j] + g[i - 1, j]
                                                        + g[i, j + 1] + g[i, j - 1])
        for j in range(1, m - 1):
            ub[0, j] += c * g[1, j]
            ub[n - 1, j] += c * g[n - 2, j]
        for i in range(1, n - 1):
            ub[i, 0] += c * g[i, 1]
            ub[i, m - 1] += c * g[i, m - 2]
    return ub, cb * dt / dx ** 2, None, None, None


def _heat_2d_args(quick):
    n, steps = (8, 5) if quick else (200, 100)
    x = np.linspace(0.0, 1.0, n)
    dx = 1.0 / (n - 1)
    D = 1e-3
    u0 = np.exp(-40.0 * ((x[:, None] - 0.4) ** 2 + (x[None, :] - 0.6) ** 2))
    return (u0, D, dx, 0.2 * dx * dx / D, steps)


LIBRARY_WORKLOADS = [w for w in [
    Workload(
        "numba_stats_nll", "g. numba-stats unbinned NLL, 1M events",
        "-sum(log(f norm.pdf + (1 - f) expon.pdf)) through numba-stats' public "
        "norm.logpdf and expon.logpdf (their njit _logpdf, as published), 1M events; "
        "gradient in mu, sigma, tau and f.",
        numba_stats_nll, numba_stats_nll_grad, _nll_args, (1, 2, 3, 4), lambda a: 16),
    Workload(
        "numba_stats_norm", "g'. numba-stats -sum(norm.logpdf), 1M events",
        "-np.sum(norm.logpdf(x, mu, sigma)) through numba-stats' public norm.logpdf (its "
        "njit _logpdf: _trans, then a prange loop over the elements), 1M events; "
        "gradient in x, mu and sigma (every argument: the default).",
        numba_stats_norm, numba_stats_norm_grad, _norm_args, (0, 1, 2), lambda a: 16),
    Workload(
        "numba_stats_norm_params", "g''. numba-stats -sum(norm.logpdf), in mu and sigma",
        "as numba_stats_norm, gradient in mu and sigma only (wrt=(1, 2)).",
        numba_stats_norm, numba_stats_norm_params_grad, _norm_args, (1, 2), lambda a: 16),
    Workload(
        "move_mean", "h. the Numba examples' move_mean into out, 1M values",
        "move_mean(a, 50, out) as the Numba examples write it (out allocated by the "
        "caller, a running window sum); loss = sum (i + 1) out[i]**2; gradient in a.",
        move_mean_loss, move_mean_grad, _move_mean_args, (0,), lambda a: 16),
    JitLoopWorkload(
        "cosine_16", "i. cosine distance gradient from a jitted loop, 16 elements",
        "pynndescent's cosine (fastmath) over 100k pairs of 2,000 points of 16 "
        "elements; a jitted loop calls dist.grad per pair (against UMAP's cosine_grad) "
        "and adds it into the gradient of the first point.",
        cosine_pairs, cosine_pairs_grad, _cosine_args(16), (0,), lambda a: 16,
        ours=cosine_pairs_ours),
    JitLoopWorkload(
        "cosine_256", "i'. cosine distance gradient from a jitted loop, 256 elements",
        "as cosine_16 with 256 elements.",
        cosine_pairs, cosine_pairs_grad, _cosine_args(256), (0,), lambda a: 16,
        ours=cosine_pairs_ours),
    JitLoopWorkload(
        "cosine_16_into", "i''. as cosine_16, the gradient added into G's row (grad_into)",
        "as cosine_16, the jitted loop calling dist.grad_into(G[heads[k]], X[heads[k]], "
        "Y[tails[k]]): nothing allocated per pair.",
        cosine_pairs, cosine_pairs_grad, _cosine_args(16), (0,), lambda a: 16,
        ours=cosine_pairs_ours_into),
    JitLoopWorkload(
        "cosine_256_into", "i'''. as cosine_256, with grad_into",
        "as cosine_16_into with 256 elements.",
        cosine_pairs, cosine_pairs_grad, _cosine_args(256), (0,), lambda a: 16,
        ours=cosine_pairs_ours_into),
    JitLoopWorkload(
        "gini", "j. QuantEcon's Gini coefficient, parallel=True, 4,000 values",
        "gini_coefficient(y) as QuantEcon writes it (a prange loop of sums into "
        "i_sum[i]), parallel=True; gradient in y.",
        gini_coefficient, gini_coefficient_grad, _gini_args, (0,), lambda a: 16,
        jit_options={"parallel": True}),
    Workload(
        "heat_2d", "k. 2-d heat equation, whole-array NumPy, 200 x 200 cells",
        "lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 u[1:-1, 1:-1]; "
        "u[1:-1, 1:-1] = u[1:-1, 1:-1] + dt D lap / dx**2 in a 100-step loop over 200 x "
        "200 cells (whole-array NumPy as a user writes it); loss = sum(u * u); gradient "
        "in u0 and D.",
        heat_2d, heat_2d_grad, _heat_2d_args, (0, 1), lambda a: a[4] + 16),
] if norm is not None or not w.name.startswith("numba_stats")]
