"""Realistic programs, part 3: solvers taking jitted functions, quadrature, iteration
idioms (enumerate, np.ndindex, .flat, rows) and smaller constructs."""
import math

import numba
import numpy as np

from realistic_programs import Case


def _rng(seed):
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------
# Newton's method taking a jitted objective and its args tuple (QuantEcon's
# signature): Kepler's equation E - e sin E = M
# --------------------------------------------------------------------------
@numba.njit
def newton(func, x0, fprime, args=(), tol=1e-13, maxiter=50):
    p0 = x0
    for _ in range(maxiter):
        fval = func(p0, *args)
        fder = fprime(p0, *args)
        p = p0 - fval / fder
        if abs(p - p0) < tol:
            return p
        p0 = p
    raise RuntimeError("Newton's method did not converge")


@numba.njit
def kepler(E, e, M):
    return E - e * math.sin(E) - M


@numba.njit
def kepler_prime(E, e, M):
    return 1.0 - e * math.cos(E)


@numba.njit
def orbit_x(M, e):
    total = 0.0
    for i in range(M.shape[0]):
        E = newton(kepler, M[i], kepler_prime, args=(e, M[i]))
        total += math.cos(E) - e
    return total


# --------------------------------------------------------------------------
# Golden-section maximiser taking a jitted objective; loss = the maximum
# (consumption choice: log utility now and of the savings)
# --------------------------------------------------------------------------
@numba.njit
def golden_section_max(func, a, b, args=(), tol=1e-10):
    invphi = (math.sqrt(5.0) - 1.0) / 2.0
    c = b - invphi * (b - a)
    d = a + invphi * (b - a)
    fc = func(c, *args)
    fd = func(d, *args)
    while abs(b - a) > tol:
        if fc > fd:
            b = d
            d = c
            fd = fc
            c = b - invphi * (b - a)
            fc = func(c, *args)
        else:
            a = c
            c = d
            fc = fd
            d = a + invphi * (b - a)
            fd = func(d, *args)
    x = 0.5 * (a + b)
    return x, func(x, *args)


@numba.njit
def utility(c, wealth, beta, R):
    return math.log(c) + beta * math.log(R * (wealth - c)) - 0.1 * (c - 1.0) ** 2


@numba.njit
def best_utility(wealth, beta, R):
    c_star, v_star = golden_section_max(utility, 1e-6, wealth - 1e-6,
                                        args=(wealth, beta, R))
    return v_star


# --------------------------------------------------------------------------
# Gauss-Legendre nodes by Newton iteration on Legendre polynomials (NumPy
# arrays), then a parametrised integral
# --------------------------------------------------------------------------
@numba.njit
def gauss_legendre(n):
    z = np.cos(np.pi * (np.arange(n) + 0.75) / (n + 0.5))
    z1 = z + 1.0
    pp = np.ones(n)
    it = 0
    while np.max(np.abs(z - z1)) > 1e-14 and it < 100:
        p1 = np.ones(n)
        p2 = np.zeros(n)
        for j in range(n):
            p3 = p2
            p2 = p1
            p1 = ((2.0 * j + 1.0) * z * p2 - j * p3) / (j + 1.0)
        pp = n * (z * p1 - p2) / (z * z - 1.0)
        z1 = z
        z = z1 - p1 / pp
        it += 1
    return z, 2.0 / ((1.0 - z * z) * pp * pp)


@numba.njit
def integrate_gaussian_wave(a, b, lo, hi, n):
    nodes, weights = gauss_legendre(n)
    x = 0.5 * (hi - lo) * nodes + 0.5 * (hi + lo)
    return 0.5 * (hi - lo) * np.sum(weights * np.exp(-a * x * x) * np.cos(b * x))


# --------------------------------------------------------------------------
# Iteration idioms
# --------------------------------------------------------------------------
@numba.njit
def discounted_return(rewards, gamma):
    total = 0.0
    for t, r in enumerate(rewards):
        total += gamma ** t * r
    return total


@numba.njit
def huber_ndindex(x, y, delta):
    s = 0.0
    for idx in np.ndindex(x.shape):
        d = x[idx] - y[idx]
        if abs(d) <= delta:
            s += 0.5 * d * d
        else:
            s += delta * (abs(d) - 0.5 * delta)
    return s


@numba.njit
def logsumexp_flat(x):
    m = -np.inf
    for v in x.flat:
        if v > m:
            m = v
    s = 0.0
    for v in x.flat:
        s += math.exp(v - m)
    return m + math.log(s)


@numba.njit
def gaussian_nll_rows(X, mu, log_sigma):
    sigma2 = math.exp(2.0 * log_sigma)
    total = 0.0
    for row in X:
        d = row - mu
        total += 0.5 * np.sum(d * d) / sigma2
    return total + X.shape[0] * X.shape[1] * log_sigma


# --------------------------------------------------------------------------
# Recurrent state history: a scalar written into a row, h[t + 1] = x[t]
# --------------------------------------------------------------------------
@numba.njit
def rnn_history(x, W, u, h0):
    T = x.shape[0]
    h = np.empty((T + 1, h0.shape[0]))
    h[0] = h0
    for t in range(T):
        h[t + 1] = x[t]
        h[t + 1] += np.tanh(W @ h[t]) * u
    return h


@numba.njit
def rnn_history_loss(x, W, u, h0):
    h = rnn_history(x, W, u, h0)
    T, n = h.shape
    s = 0.0
    for j in range(n):
        s += h[T - 1, j]
        for t in range(T):
            s += 0.1 * h[t, j] * h[t, j]
    return s


def _rnn_args():
    rng = _rng(20)
    return (rng.normal(0, 1, 4), rng.normal(0, 0.5, (3, 3)), rng.normal(0, 1, 3),
            rng.normal(0, 0.5, 3))


# --------------------------------------------------------------------------
# Smaller constructs
# --------------------------------------------------------------------------
@numba.njit
def ufuncs_on_scalars(x, k):
    e = 0.0
    for i in range(x.shape[0]):
        a = np.multiply(x[i], 3.0)
        b = np.add(a, k)
        e += np.square(b) + np.power(np.sqrt(np.abs(a) + 1.0), 3.0)
    return e


@numba.njit
def spring_chain_energy(x, params):
    k, rest = params
    e = 0.0
    for i in range(x.shape[0] - 1):
        d = x[i + 1] - x[i] - rest
        e += 0.5 * k * d * d
    return e


@numba.njit
def spring_chain_loss(x, k, rest):
    return spring_chain_energy(x, (k, rest))


@numba.njit
def gradient2d(u, h):
    gx = (u[2:, 1:-1] - u[:-2, 1:-1]) / (2.0 * h)
    gy = (u[1:-1, 2:] - u[1:-1, :-2]) / (2.0 * h)
    return gx, gy


@numba.njit
def total_variation(u, h, eps):
    gx, gy = gradient2d(u, h)
    return np.sum(np.sqrt(gx * gx + gy * gy + eps))


@numba.njit
def polyfit_residual(x, y, coef):
    s = 0.0
    for i in range(x.shape[0]):
        powers = np.empty(coef.shape[0])
        powers[0] = 1.0
        for k in range(1, coef.shape[0]):
            powers[k] = powers[k - 1] * x[i]
        r = np.sum(powers * coef) - y[i]
        s += r * r
    return s


@numba.njit
def power_iteration(A, v0):
    """The dominant eigenvalue of A + A.T by power iteration, normalised by np.linalg.norm."""
    B = A + A.T
    v = v0 / np.linalg.norm(v0)
    for it in range(10):
        v = B @ v
        v = v / np.linalg.norm(v)
    return v @ B @ v


CASES = [
    Case("power_iteration", "10 steps of v = B @ v; v = v / np.linalg.norm(v), then "
         "v @ B @ v", power_iteration,
         lambda: (_rng(31).normal(0, 1, (4, 4)), np.ones(4)), (0, 1)),
    Case("newton_kepler", "Newton's method newton(func, x0, fprime, args=(e, M)) calling "
         "func(x, *args), Kepler's equation per mean anomaly", orbit_x,
         lambda: (np.array([0.3, 1.1, 2.5]), 0.4), (0, 1)),
    Case("golden_section_max", "golden-section maximiser golden_section_max(func, a, b, "
         "args=...) returning (x, f(x)); loss = the maximum", best_utility,
         lambda: (3.0, 0.9, 1.05), (0, 1, 2)),
    Case("gauss_legendre", "Gauss-Legendre nodes by Newton on Legendre polynomials with "
         "NumPy arrays (helper returns a tuple of arrays), then a parametrised integral",
         integrate_gaussian_wave, lambda: (0.7, 1.3, -1.0, 2.0, 8), (0, 1, 2, 3)),
    Case("enumerate_discount", "for t, r in enumerate(rewards): total += gamma ** t * r",
         discounted_return, lambda: (_rng(21).normal(0, 1, 6), 0.9), (0, 1)),
    Case("ndindex_huber", "Huber loss over for idx in np.ndindex(x.shape)", huber_ndindex,
         lambda: (_rng(22).normal(0, 1, (3, 4)), _rng(23).normal(0, 1, (3, 4)), 0.8),
         (0, 1, 2)),
    Case("flat_logsumexp", "logsumexp of a 2-d array with two for v in x.flat loops",
         logsumexp_flat, lambda: (_rng(24).normal(0, 1, (3, 4)),), (0,)),
    Case("rows_gaussian_nll", "for row in X: d = row - mu (2-d rows)", gaussian_nll_rows,
         lambda: (_rng(25).normal(0, 1, (4, 3)), _rng(26).normal(0, 0.5, 3), 0.2),
         (0, 1, 2)),
    Case("rnn_history", "state history h 2-d: h[t + 1] = x[t] writes a scalar into a row, "
         "then h[t + 1] += np.tanh(W @ h[t]) * u", rnn_history, _rnn_args, (0, 1, 2, 3),
         loss=rnn_history_loss),
    Case("ufuncs_on_scalars", "np.multiply(x[i], 3.0), np.add, np.square, np.power, "
         "np.sqrt, np.abs on scalars", ufuncs_on_scalars,
         lambda: (_rng(27).normal(0, 1, 5), 0.4), (0, 1)),
    Case("tuple_params", "a tuple-of-floats argument unpacked k, rest = params",
         spring_chain_energy, lambda: (np.array([0.0, 1.1, 1.9, 3.2]), 2.0, 1.0), (0, 1, 2),
         loss=spring_chain_loss, program_args=lambda a: (a[0], (a[1], a[2]))),
    Case("tuple_argument", "the same program called with its tuple of floats; gradient "
         "in the array only", spring_chain_energy,
         lambda: (np.array([0.0, 1.1, 1.9, 3.2]), (2.0, 1.0)), (0,)),
    Case("helper_tuple_of_arrays", "helper returning a tuple of slice-difference arrays, "
         "total variation", total_variation,
         lambda: (_rng(28).normal(0, 1, (4, 5)), 0.5, 1e-3), (0, 1, 2)),
    Case("array_in_loop", "powers = np.empty(...) created inside the loop over samples",
         polyfit_residual, lambda: (np.linspace(-1, 1, 5), _rng(29).normal(0, 1, 5),
                                    np.array([0.1, -0.4, 0.7])), (0, 1, 2)),
]
