"""Benchmark workloads written the way Numba users write real programs.

Same ``Workload`` contract as ``benchmarks/workloads.py`` (``primal`` is a plain Python
function returning the scalar loss, compiled with ``numba.njit``; ``hand_grad`` is the
gradient written by hand in numba, one entry per argument, ``None`` for arguments not in
``wrt``), but the programs use what real Numba code uses: ``@numba.njit`` helpers taking
row views, functions returning arrays or tuples of arrays, ``np.dot``, ``while`` loops
with a run-time step.  When the program returns arrays, ``primal`` is the scalar loss
that calls it and the array-returning program is a module-level ``@numba.njit``
function.

The hand-written adjoints are written the way an experienced person writes a reverse
sweep: values shared between the forward and the reverse are computed once, history is
stored in preallocated arrays, loops are fused.  They use no identity specific to the
mathematics of one workload (for example ``S n(d1) = K exp(-rT) n(d2)`` in Black-Scholes),
so they are the bar a generated backward can be held to.

``advection_diffusion`` (an ``ArrayWorkload``) also has a hand-written VJP and JVP of the
array-returning program.  Everything is float64.
"""
import math
from dataclasses import dataclass
from typing import Callable

import numba
import numpy as np

from .workloads import Workload
from .workloads_library import LIBRARY_WORKLOADS

RSQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)
RSQRT2 = 1.0 / math.sqrt(2.0)


@dataclass
class ArrayWorkload(Workload):
    """A workload whose program returns an array. The last argument is a cotangent
    ``ubar`` of the result: ``program(*args[:-1])`` is the array, the scalar ``primal``
    is ``<ubar, program(*args[:-1])>``; ``vjp(*args)`` returns the cotangents of the
    arguments in ``wrt``; ``jvp(*args[:-1], *make_tangents(args))`` the tangent of the
    result for one tangent per argument in ``wrt``."""
    program: Callable = None
    vjp: Callable = None
    jvp: Callable = None
    make_tangents: Callable = None


# --------------------------------------------------------------------------
# a. Lennard-Jones energy of n = 300 atoms, helpers taking row views
# --------------------------------------------------------------------------
@numba.njit
def distance(a, b):
    s = 0.0
    for k in range(a.shape[0]):
        d = a[k] - b[k]
        s += d * d
    return s ** 0.5


@numba.njit
def lj_pair(r):
    ir6 = (1. / r) ** 6
    return 4.0 * (ir6 * ir6 - ir6)


def lj_energy(pos):
    n = pos.shape[0]
    energy = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            energy += lj_pair(distance(pos[i], pos[j]))
    return energy


def lj_energy_grad(pos):
    # The primal's chain s = |d|^2, r = s ** 0.5, ir = 1/r, ir6 = ir**6, e = 4 (ir6^2 - ir6)
    # reversed: de/ds = 4 (2 ir6 - 1) * 6 ir6 r * (-ir^2) * 0.5 ir = -12 (2 ir6 - 1) ir6 ir^2.
    # (Working in s alone, with no square root, is about 1.4x faster still; that is a
    # rewrite of the mathematics, which no AD tool makes, so the bar keeps the root.)
    n = pos.shape[0]
    g = np.zeros((n, 3))
    for i in range(n):
        xi = pos[i, 0]
        yi = pos[i, 1]
        zi = pos[i, 2]
        gx = 0.0
        gy = 0.0
        gz = 0.0
        for j in range(i + 1, n):
            dx = xi - pos[j, 0]
            dy = yi - pos[j, 1]
            dz = zi - pos[j, 2]
            ir = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
            ir2 = ir * ir
            ir6 = ir2 * ir2 * ir2
            s = -24.0 * (2.0 * ir6 - 1.0) * ir6 * ir2  # 2 de/ds: ds/ddx = 2 dx
            fx = s * dx
            fy = s * dy
            fz = s * dz
            gx += fx
            gy += fy
            gz += fz
            g[j, 0] -= fx
            g[j, 1] -= fy
            g[j, 2] -= fz
        g[i, 0] += gx
        g[i, 1] += gy
        g[i, 2] += gz
    return (g,)


def _lj_args(quick):
    n = 8 if quick else 300
    side = int(math.ceil(n ** (1.0 / 3.0)))
    pts = [(i, j, k) for i in range(side) for j in range(side) for k in range(side)][:n]
    rng = np.random.default_rng(31)
    return (1.12 * np.array(pts, dtype=np.float64) + rng.uniform(-0.05, 0.05, (n, 3)),)


# --------------------------------------------------------------------------
# b. Black-Scholes returning (call, put); loss = sum(call) + 0.5 sum(put)
# --------------------------------------------------------------------------
CALL_WEIGHT = 1.0
PUT_WEIGHT = 0.5


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


def black_scholes_loss(S, K, T, r, sigma):
    call, put = black_scholes(S, K, T, r, sigma)
    return CALL_WEIGHT * call.sum() + PUT_WEIGHT * put.sum()


def black_scholes_grad(S, K, T, r, sigma):
    n = S.shape[0]
    gS = np.empty(n)
    gK = np.empty(n)
    gT = np.empty(n)
    gr = np.empty(n)
    gsig = np.empty(n)
    wc = CALL_WEIGHT
    wp = PUT_WEIGHT
    for i in range(n):
        s, k, t, rr, v = S[i], K[i], T[i], r[i], sigma[i]
        sqrt_t = math.sqrt(t)
        vs = v * sqrt_t
        num = math.log(s / k) + (rr + 0.5 * v * v) * t
        d1 = num / vs
        d2 = d1 - vs
        n1 = 0.5 * (1.0 + math.erf(d1 * RSQRT2))
        n2 = 0.5 * (1.0 + math.erf(d2 * RSQRT2))
        e = math.exp(-rr * t)
        # loss_i = wc (s n1 - k e n2) + wp (k e (1 - n2) - s (1 - n1))
        g_n1 = (wc + wp) * s
        g_n2 = -(wc + wp) * k * e
        g_e = k * (wp - (wc + wp) * n2)
        g_s = (wc + wp) * n1 - wp
        g_k = e * (wp - (wc + wp) * n2)
        g_d2 = g_n2 * RSQRT2PI * math.exp(-0.5 * d2 * d2)
        g_d1 = g_n1 * RSQRT2PI * math.exp(-0.5 * d1 * d1) + g_d2
        g_vs = -g_d2 - g_d1 * d1 / vs
        g_num = g_d1 / vs
        gS[i] = g_s + g_num / s
        gK[i] = g_k - g_num / k
        gr[i] = g_num * t - t * e * g_e
        gsig[i] = g_num * v * t + g_vs * sqrt_t
        gT[i] = g_num * (rr + 0.5 * v * v) - rr * e * g_e + g_vs * v * 0.5 / sqrt_t
    return gS, gK, gT, gr, gsig


def _black_scholes_args(n):
    rng = np.random.default_rng(32)
    return (rng.uniform(80.0, 120.0, n), rng.uniform(90.0, 110.0, n),
            rng.uniform(0.25, 2.0, n), rng.uniform(0.01, 0.05, n), rng.uniform(0.1, 0.4, n))


# --------------------------------------------------------------------------
# c. Moving average over 1M values; loss = weighted sum of the averages
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


def moving_average_loss(x, weights, window):
    avg = moving_average(x, window)
    total = 0.0
    for i in range(avg.shape[0]):
        total += weights[i] * avg[i]
    return total


def moving_average_grad(x, weights, window):
    n = x.shape[0]
    m = n - window + 1
    gx = np.empty(n)
    gw = np.empty(m)
    s = 0.0
    for i in range(window):
        s += x[i]
    gw[0] = s / window
    for i in range(window, n):
        s += x[i] - x[i - window]
        gw[i - window + 1] = s / window
    inv = 1.0 / window
    for j in range(max(m - 1, 0), n):  # the entries the sweep below adds to first
        gx[j] = 0.0
    gs = 0.0
    for k in range(m - 1, 0, -1):  # s_k = s_{k-1} + x[k + window - 1] - x[k - 1]
        gs += weights[k] * inv
        gx[k + window - 1] += gs
        gx[k - 1] = -gs            # the first time the sweep reaches entry k - 1
    gs += weights[0] * inv
    for i in range(window):
        gx[i] += gs
    return gx, gw, None


def _moving_average_args(quick):
    n, window = (40, 5) if quick else (1_000_000, 50)
    rng = np.random.default_rng(33)
    return (rng.standard_normal(n), rng.uniform(0.0, 1.0, n - window + 1), window)


# --------------------------------------------------------------------------
# d. Damped oscillator, while t < T with a run-time dt (200k steps)
# --------------------------------------------------------------------------
def damped_oscillator(x0, v0, k, c, dt, T):
    x = x0
    v = v0
    t = 0.0
    work = 0.0
    while t < T:
        a = -k * x - c * v
        v += a * dt
        x += v * dt
        work += c * v * v * dt
        t += dt
    return x + work


def damped_oscillator_grad(x0, v0, k, c, dt, T):
    steps = 0
    t = 0.0
    while t < T:  # the same additions as the primal: the same step count
        t += dt
        steps += 1
    xs = np.empty(steps)
    vs = np.empty(steps + 1)
    x = x0
    v = v0
    for i in range(steps):
        xs[i] = x
        vs[i] = v
        v += (-k * x - c * v) * dt
        x += v * dt
    vs[steps] = v
    gx = 1.0
    gv = 0.0
    gk = 0.0
    gc = 0.0
    for i in range(steps - 1, -1, -1):
        v1 = vs[i + 1]
        gv += 2.0 * c * v1 * dt + gx * dt  # work += c v1^2 dt; x += v1 dt
        gc += v1 * v1 * dt
        ga = gv * dt                       # v1 = v + a dt
        gx -= k * ga
        gk -= xs[i] * ga
        gc -= vs[i] * ga
        gv -= c * ga
    return gx, gv, gk, gc, None, None


def _oscillator_args(quick):
    steps = 50 if quick else 200_000
    dt = 1e-4
    return (1.0, 0.0, 4.0, 0.3, dt, (steps - 0.5) * dt)


# --------------------------------------------------------------------------
# e. Logistic regression trained by 20 steps of gradient descent (X 1000 x 20)
#    loss = training log-loss of the final weights
# --------------------------------------------------------------------------
LOGREG_STEPS = 20
LOGREG_ALPHA = 0.5


def logistic_regression(X, y, w0):
    n = X.shape[0]
    w = w0.copy()
    for _ in range(LOGREG_STEPS):
        p = 1.0 / (1.0 + np.exp(-np.dot(X, w)))
        w -= LOGREG_ALPHA * np.dot(X.T, p - y) / n
    z = np.dot(X, w)
    loss = 0.0
    for i in range(n):
        loss += math.log(1.0 + math.exp(z[i])) - y[i] * z[i]
    return loss / n


def logistic_regression_grad(X, y, w0):
    n, d = X.shape
    steps = LOGREG_STEPS
    c = LOGREG_ALPHA / n
    ws = np.empty((steps + 1, d))
    ps = np.empty((steps, n))
    w = w0.copy()
    for t in range(steps):
        ws[t] = w
        z = np.dot(X, w)
        for i in range(n):
            ps[t, i] = 1.0 / (1.0 + math.exp(-z[i]))
        w -= c * np.dot(X.T, ps[t] - y)
    ws[steps] = w
    z = np.dot(X, w)
    gy = np.empty(n)
    gz = np.empty(n)
    for i in range(n):
        gz[i] = (1.0 / (1.0 + math.exp(-z[i])) - y[i]) / n
        gy[i] = -z[i] / n
    gw = np.dot(X.T, gz)
    gX = np.outer(gz, w)
    for t in range(steps - 1, -1, -1):
        # w_{t+1} = w_t - c X^T e,  e = p_t - y,  p_t = sigmoid(X w_t)
        gr = -c * gw
        ge = np.dot(X, gr)
        pt = ps[t]
        wt = ws[t]
        for i in range(n):
            gy[i] -= ge[i]
            e = pt[i] - y[i]
            gzi = ge[i] * pt[i] * (1.0 - pt[i])
            gz[i] = gzi
            for j in range(d):
                gX[i, j] += e * gr[j] + gzi * wt[j]
        gw += np.dot(X.T, gz)
    return gX, gy, gw


def _logistic_args(quick):
    n, d = (12, 3) if quick else (1000, 20)
    rng = np.random.default_rng(34)
    X = rng.standard_normal((n, d))
    w_true = rng.standard_normal(d)
    y = (rng.uniform(0.0, 1.0, n) < 1.0 / (1.0 + np.exp(-X @ w_true))).astype(np.float64)
    return (X, y, 0.1 * rng.standard_normal(d))


# --------------------------------------------------------------------------
# f. 1-d advection-diffusion, explicit scheme, returns the final state;
#    VJP and JVP by hand
# --------------------------------------------------------------------------
@numba.njit
def advection_diffusion(u0, vel, nu, dx, dt, steps):
    u = u0.copy()
    n = u.shape[0]
    un = np.empty(n)
    for _ in range(steps):
        un[:] = u
        for i in range(1, n - 1):
            u[i] = (un[i] - vel * dt / dx * (un[i] - un[i - 1])
                    + nu * dt / dx ** 2 * (un[i + 1] - 2 * un[i] + un[i - 1]))
    return u


def advection_diffusion_loss(u0, vel, nu, dx, dt, steps, ubar):
    u = advection_diffusion(u0, vel, nu, dx, dt, steps)
    total = 0.0
    for i in range(u.shape[0]):
        total += ubar[i] * u[i]
    return total


@numba.njit
def advection_diffusion_vjp(u0, vel, nu, dx, dt, steps, ubar):
    """Cotangents of (u0, vel, nu) for the cotangent ``ubar`` of the final state
    (4 points or more)."""
    n = u0.shape[0]
    a = vel * dt / dx
    b = nu * dt / dx ** 2
    hist = np.empty((steps, n))  # the state before each step
    u = u0.copy()
    for t in range(steps):
        prev = u[0]
        hist[t, 0] = prev
        for i in range(1, n - 1):
            cur = u[i]
            hist[t, i] = cur
            u[i] = cur - a * (cur - prev) + b * (u[i + 1] - 2.0 * cur + prev)
            prev = cur
        hist[t, n - 1] = u[n - 1]
    # one step: u'[i] = c0 h[i] + c1 h[i-1] + b h[i+1] for 0 < i < n-1, ends kept; so
    # h_bar[j] = (g[j] at the ends, c0 g[j] inside) + c1 g[j+1] + b g[j-1] (neighbours
    # inside only), computed in place left to right keeping the old g[j-1]. The sums
    # for vel and nu use two accumulators each (even and odd i).
    c0 = 1.0 - a - 2.0 * b
    c1 = a + b
    g = ubar.copy()
    ga0 = 0.0
    ga1 = 0.0
    gb0 = 0.0
    gb1 = 0.0
    for t in range(steps - 1, -1, -1):
        h = hist[t]
        g[0] = g[0] + c1 * g[1]
        left = 0.0  # g[0] belongs to an end: it does not feed g[1]
        for i in range(1, n - 2):
            gi = g[i]
            hm = h[i - 1]
            hc = h[i]
            if i & 1:
                ga0 += gi * (hm - hc)
                gb0 += gi * (h[i + 1] - 2.0 * hc + hm)
            else:
                ga1 += gi * (hm - hc)
                gb1 += gi * (h[i + 1] - 2.0 * hc + hm)
            g[i] = c0 * gi + b * left + c1 * g[i + 1]
            left = gi
        i = n - 2  # its right neighbour is an end
        gi = g[i]
        ga0 += gi * (h[i - 1] - h[i])
        gb0 += gi * (h[i + 1] - 2.0 * h[i] + h[i - 1])
        g[i] = c0 * gi + b * left
        g[n - 1] += b * gi
    return g, (ga0 + ga1) * dt / dx, (gb0 + gb1) * dt / dx ** 2


@numba.njit
def advection_diffusion_jvp(u0, vel, nu, dx, dt, steps, u0_dot, vel_dot, nu_dot):
    """The tangent of the final state for tangents of (u0, vel, nu). Each step is one
    in-place pass carrying the left neighbour's old value, where the program first copies
    the state (``un[:] = u``): this JVP can take less time than the program itself."""
    n = u0.shape[0]
    a = vel * dt / dx
    b = nu * dt / dx ** 2
    a_dot = vel_dot * dt / dx
    b_dot = nu_dot * dt / dx ** 2
    u = u0.copy()
    ud = u0_dot.copy()
    for _ in range(steps):
        prev = u[0]
        prev_d = ud[0]
        for i in range(1, n - 1):
            cur = u[i]
            cur_d = ud[i]
            lap = u[i + 1] - 2.0 * cur + prev
            adv = cur - prev
            u[i] = cur - a * adv + b * lap
            ud[i] = (cur_d - a * (cur_d - prev_d) + b * (ud[i + 1] - 2.0 * cur_d + prev_d)
                     - a_dot * adv + b_dot * lap)
            prev = cur
            prev_d = cur_d
    return ud


def advection_diffusion_grad(u0, vel, nu, dx, dt, steps, ubar):
    g, gvel, gnu = advection_diffusion_vjp(u0, vel, nu, dx, dt, steps, ubar)
    return g, gvel, gnu, None, None, None, None


def _advection_args(quick):
    n, steps = (12, 6) if quick else (1000, 1000)
    x = np.linspace(0.0, 1.0, n)
    dx = 1.0 / (n - 1)
    vel, nu = 1.0, 0.01
    dt = 0.2 * min(dx / vel, dx * dx / nu)
    ubar = np.random.default_rng(35).standard_normal(n)
    return (np.exp(-100.0 * (x - 0.3) ** 2), vel, nu, dx, dt, steps, ubar)


# --------------------------------------------------------------------------
# f'. 1-d reaction-diffusion, whole-array NumPy in a time loop (Fisher-KPP)
# --------------------------------------------------------------------------
def reaction_diffusion(u0, D, k, dx, dt, steps):
    u = u0.copy()
    for step in range(steps):
        u[1:-1] = u[1:-1] + dt * (D * (u[2:] - 2.0 * u[1:-1] + u[:-2]) / dx ** 2
                                  + k * u[1:-1] * (1.0 - u[1:-1]))
    return np.sum(u * u)


def reaction_diffusion_grad(u0, D, k, dx, dt, steps):
    n = u0.shape[0]
    hist = np.empty((steps, n))
    u = u0.copy()
    c = D / dx ** 2
    for t in range(steps):
        hist[t] = u
        un = hist[t]
        for i in range(1, n - 1):
            u[i] = un[i] + dt * (c * (un[i + 1] - 2.0 * un[i] + un[i - 1])
                                 + k * un[i] * (1.0 - un[i]))
    ub = 2.0 * u
    g = np.zeros(n)             # the adjoint of the interior, zero at the ends
    dtc = dt * c
    cb = kb = 0.0
    for t in range(steps - 1, -1, -1):
        un = hist[t]
        g[1:n - 1] = ub[1:n - 1]
        ub[0] += dtc * g[1]
        ub[n - 1] += dtc * g[n - 2]
        for i in range(1, n - 1):
            ui = un[i]
            cb += g[i] * (un[i + 1] - 2.0 * ui + un[i - 1])
            kb += g[i] * ui * (1.0 - ui)
            ub[i] = g[i] * (1.0 + dt * (k * (1.0 - 2.0 * ui) - 2.0 * c)) \
                + dtc * (g[i - 1] + g[i + 1])
    return ub, cb * dt / dx ** 2, kb * dt, None, None, None


def _reaction_diffusion_args(quick):
    n, steps = (64, 10) if quick else (20_000, 200)
    x = np.linspace(0.0, 1.0, n)
    dx = 1.0 / (n - 1)
    D = 1e-3
    return (0.5 + 0.4 * np.sin(6.0 * np.pi * x), D, 2.0, dx, 0.2 * dx * dx / D, steps)


def _advection_tangents(args):
    rng = np.random.default_rng(36)
    return (rng.standard_normal(args[0].shape[0]), 0.3, -0.002)


REAL_WORKLOADS = {
    w.name: w
    for w in [
        Workload(
            "lj_energy", "a. Lennard-Jones energy (row-view helpers)",
            "300 atoms near a cubic lattice, energy = sum over pairs of lj_pair(distance("
            "pos[i], pos[j])) with njit helpers taking row views, (1./r)**6 and ** 0.5; "
            "gradient in the positions.",
            lj_energy, lj_energy_grad, _lj_args, (0,), lambda args: 64),
        Workload(
            "black_scholes", "b. Black-Scholes (call, put arrays), 200k options",
            "black_scholes(S, K, T, r, sigma) returns the call and put price arrays "
            "(math.erf/exp/log/sqrt, one loop over options); loss = sum(call) + "
            "0.5 sum(put); gradient in all five arrays.",
            black_scholes_loss, black_scholes_grad,
            lambda quick: _black_scholes_args(64 if quick else 200_000), (0, 1, 2, 3, 4),
            lambda args: 16),
        Workload(
            "black_scholes_2m", "b'. Black-Scholes (call, put arrays), 2M options",
            "as black_scholes, 2,000,000 options.",
            black_scholes_loss, black_scholes_grad,
            lambda quick: _black_scholes_args(64 if quick else 2_000_000), (0, 1, 2, 3, 4),
            lambda args: 16),
        Workload(
            "moving_average", "c. moving average over 1M values",
            "moving_average(x, 50) with a running window sum returns the averages; loss = "
            "weighted sum of the averages; gradient in x and the weights.",
            moving_average_loss, moving_average_grad, _moving_average_args, (0, 1),
            lambda args: 16),
        Workload(
            "damped_oscillator", "d. damped oscillator, while t < T (200k steps)",
            "semi-implicit Euler of x'' = -k x - c v with a run-time dt until t >= T "
            "(200,000 steps), loss = final x plus the work of the damping; gradient in "
            "x0, v0, k and c.",
            damped_oscillator, damped_oscillator_grad, _oscillator_args, (0, 1, 2, 3),
            lambda args: int(args[5] / args[4]) + 16),
        Workload(
            "logistic_regression", "e. logistic regression, 20 gradient-descent steps",
            "X 1000 x 20, p = 1 / (1 + np.exp(-np.dot(X, w))), w -= alpha * np.dot(X.T, "
            "p - y) / n, 20 steps, loss = training log-loss of the final weights; gradient "
            "in X, y and the initial weights.",
            logistic_regression, logistic_regression_grad, _logistic_args, (0, 1, 2),
            lambda args: LOGREG_STEPS + 8),
        ArrayWorkload(
            "advection_diffusion", "f. 1-d advection-diffusion (returns the state)",
            "explicit upwind advection + diffusion on 1000 points, 1000 steps (un[:] = u "
            "then a stencil loop), returns the final state; loss = <ubar, u>; gradient "
            "(the VJP) in u0, vel and nu; a JVP as well.",
            advection_diffusion_loss, advection_diffusion_grad, _advection_args, (0, 1, 2),
            lambda args: args[5] + 16,
            program=advection_diffusion, vjp=advection_diffusion_vjp,
            jvp=advection_diffusion_jvp, make_tangents=_advection_tangents),
        Workload(
            "reaction_diffusion", "f'. 1-d reaction-diffusion, whole-array NumPy, 20k cells",
            "u[1:-1] = u[1:-1] + dt * (D * (u[2:] - 2 u[1:-1] + u[:-2]) / dx**2 + k u[1:-1] "
            "(1 - u[1:-1])) in a 200-step loop over 20,000 cells (Fisher-KPP, whole-array "
            "NumPy as a user writes it); loss = sum(u * u); gradient in u0, D and k.",
            reaction_diffusion, reaction_diffusion_grad, _reaction_diffusion_args, (0, 1, 2),
            lambda args: args[5] + 16),
    ] + LIBRARY_WORKLOADS
}
