"""Realistic programs, part 1: particles, grids and time stepping."""
import math

import numba
import numpy as np

from realistic_programs import Case


def _rng(seed):
    return np.random.default_rng(seed)


def _lattice(n, spacing, jitter, seed):
    """``n`` points near a cubic lattice: no two atoms too close."""
    side = int(math.ceil(n ** (1.0 / 3.0)))
    pts = [(i, j, k) for i in range(side) for j in range(side) for k in range(side)][:n]
    return spacing * np.array(pts, dtype=np.float64) + _rng(seed).uniform(-jitter, jitter,
                                                                           (n, 3))


# --------------------------------------------------------------------------
# Lennard-Jones: helpers on row views, (1./r)**6, ** 0.5
# --------------------------------------------------------------------------
@numba.njit
def distance(a, b):
    s = 0.0
    for k in range(a.shape[0]):
        d = a[k] - b[k]
        s += d * d
    return s ** 0.5


@numba.njit
def lj_pair(r, epsilon, sigma):
    sr6 = sigma ** 6 * (1. / r) ** 6
    return 4.0 * epsilon * (sr6 * sr6 - sr6)


@numba.njit
def lennard_jones(pos, epsilon, sigma):
    n = pos.shape[0]
    energy = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            energy += lj_pair(distance(pos[i], pos[j]), epsilon, sigma)
    return energy


# --------------------------------------------------------------------------
# Coulomb energy: vectorised helper on the difference of two rows
# --------------------------------------------------------------------------
@numba.njit
def norm(v):
    return np.sqrt(np.sum(v * v))


@numba.njit
def coulomb(pos, q):
    n = pos.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            e += q[i] * q[j] / norm(pos[i] - pos[j])
    return e


# --------------------------------------------------------------------------
# n-body: small-vector arithmetic, a force array created in the loop
# --------------------------------------------------------------------------
@numba.njit
def accelerations(p, m, soft):
    n = p.shape[0]
    acc = np.zeros_like(p)
    for i in range(n):
        f = np.zeros(3)
        for j in range(n):
            if i == j:
                continue
            r = p[j] - p[i]
            d2 = np.dot(r, r) + soft * soft
            s = m[j] / (d2 * math.sqrt(d2))
            f += r * s
        acc[i] = f
    return acc


@numba.njit
def nbody(p0, v0, m, dt, steps):
    p = p0.copy()
    v = v0.copy()
    for _ in range(steps):
        a = accelerations(p, m, 0.1)
        v += dt * a
        p += dt * v
    return p, v


@numba.njit
def nbody_loss(p0, v0, m, dt, steps):
    p, v = nbody(p0, v0, m, dt, steps)
    e = 0.0
    for i in range(p.shape[0]):
        for k in range(3):
            e += p[i, k] * p[i, k] + 0.5 * m[i] * v[i, k] * v[i, k]
    return e


def _nbody_args():
    rng = _rng(3)
    return (rng.uniform(-1, 1, (4, 3)), rng.uniform(-0.2, 0.2, (4, 3)),
            rng.uniform(0.5, 1.5, 4), 0.01, 3)


# --------------------------------------------------------------------------
# Jacobi relaxation (Numba's laplace2d example): a helper updating Anew in
# place, a while loop on the error, and the swap A, Anew = Anew, A
# --------------------------------------------------------------------------
@numba.njit
def jacobi_relax_core(A, Anew):
    error = 0.0
    n, m = A.shape
    for j in range(1, n - 1):
        for i in range(1, m - 1):
            Anew[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1] + A[j - 1, i] + A[j + 1, i])
            error = max(error, abs(Anew[j, i] - A[j, i]))
    return error


@numba.njit
def laplace2d(A0, tol, iter_max):
    A = A0.copy()
    Anew = A0.copy()
    error = 1.0
    it = 0
    while error > tol and it < iter_max:
        error = jacobi_relax_core(A, Anew)
        A, Anew = Anew, A
        it += 1
    return A


@numba.njit
def laplace2d_loss(A0, tol, iter_max):
    return np.sum(laplace2d(A0, tol, iter_max))


def _laplace_args():
    A0 = _rng(4).uniform(0.0, 1.0, (5, 6))
    return (A0, 1e-3, 12)


# --------------------------------------------------------------------------
# 2-d heat equation with slices
# --------------------------------------------------------------------------
@numba.njit
def heat2d(u0, c, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + c * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:]
                                             + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1])
    return u


@numba.njit
def heat2d_loss(u0, c, steps):
    u = heat2d(u0, c, steps)
    s = 0.0
    for i in range(u.shape[0]):
        for j in range(u.shape[1]):
            s += u[i, j] + i * u[i, j] * u[i, j]
    return s


# --------------------------------------------------------------------------
# 1-d advection-diffusion, explicit scheme with un = u.copy() each step
# --------------------------------------------------------------------------
@numba.njit
def advection_diffusion(u0, vel, nu, dx, dt, steps):
    u = u0.copy()
    n = u.shape[0]
    for _ in range(steps):
        un = u.copy()
        for i in range(1, n - 1):
            u[i] = (un[i] - vel * dt / dx * (un[i] - un[i - 1])
                    + nu * dt / dx ** 2 * (un[i + 1] - 2 * un[i] + un[i - 1]))
    return u


@numba.njit
def advection_diffusion_loss(u0, vel, nu, dx, dt, steps):
    u = advection_diffusion(u0, vel, nu, dx, dt, steps)
    s = 0.0
    for i in range(u.shape[0]):
        s += i * u[i] * u[i]
    return s


def _advection_args():
    x = np.linspace(0.0, 1.0, 8)
    return (np.exp(-20 * (x - 0.4) ** 2), 1.0, 0.05, 1.0 / 7, 0.02, 6)


# --------------------------------------------------------------------------
# Pendulum with RK4: the right-hand side returns a new array
# --------------------------------------------------------------------------
@numba.njit
def pendulum_rhs(y, g_over_l, damping):
    return np.array([y[1], -g_over_l * np.sin(y[0]) - damping * y[1]])


@numba.njit
def rk4_pendulum(y0, g_over_l, damping, dt, steps):
    traj = np.empty((steps + 1, 2))
    y = y0.copy()
    traj[0] = y
    for i in range(steps):
        k1 = pendulum_rhs(y, g_over_l, damping)
        k2 = pendulum_rhs(y + 0.5 * dt * k1, g_over_l, damping)
        k3 = pendulum_rhs(y + 0.5 * dt * k2, g_over_l, damping)
        k4 = pendulum_rhs(y + dt * k3, g_over_l, damping)
        y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        traj[i + 1] = y
    return traj


@numba.njit
def rk4_pendulum_loss(y0, g_over_l, damping, dt, steps):
    traj = rk4_pendulum(y0, g_over_l, damping, dt, steps)
    s = traj[-1, 1]
    for i in range(traj.shape[0]):
        s += traj[i, 0] ** 2
    return s


# --------------------------------------------------------------------------
# Bouncing ball: while True with a data-dependent number of steps and break
# --------------------------------------------------------------------------
@numba.njit
def bouncing_ball(h0, v0, restitution, dt):
    g = 9.81
    x = h0
    v = v0
    travelled = 0.0
    while True:
        v -= g * dt
        x_new = x + v * dt
        if x_new < 0.0:
            x_new = -x_new * restitution
            v = -v * restitution
            if abs(v) < 1.0:
                break
        travelled += abs(x_new - x)
        x = x_new
    return travelled


# --------------------------------------------------------------------------
# Damped oscillator: while t < T with a run-time dt
# --------------------------------------------------------------------------
@numba.njit
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


# --------------------------------------------------------------------------
# Taylor series of exp with break on a small term, continue on masked entries
# --------------------------------------------------------------------------
@numba.njit
def exp_series_sum(x, mask, tol):
    total = 0.0
    for i in range(x.shape[0]):
        if mask[i] == 0:
            continue
        term = 1.0
        s = 0.0
        for k in range(1, 200):
            s += term
            term *= x[i] / k
            if abs(term) < tol:
                break
        total += s
    return total


CASES = [
    Case("lennard_jones", "pairwise LJ energy, helpers distance(pos[i], pos[j]) and "
         "lj_pair with (1./r)**6 and ** 0.5",
         lennard_jones, lambda: (_lattice(5, 1.12, 0.08, 1), 1.0, 1.0), (0, 1, 2)),
    Case("coulomb", "pairwise Coulomb energy, np.sqrt(np.sum(v * v)) of pos[i] - pos[j]",
         coulomb, lambda: (_lattice(5, 1.0, 0.1, 2), _rng(2).uniform(-1, 1, 5)), (0, 1)),
    Case("nbody", "3 n-body steps: r = p[j] - p[i], f = np.zeros(3) in the loop, f += r * s, "
         "returns (p, v)", nbody, _nbody_args, (0, 1, 2, 3), loss=nbody_loss),
    Case("laplace2d", "Jacobi relaxation (while error > tol) with a helper writing Anew "
         "and the swap A, Anew = Anew, A; loss = sum of the final grid",
         laplace2d, _laplace_args, (0,), loss=laplace2d_loss),
    Case("heat2d_slices", "2-d heat equation, u[1:-1, 1:-1] = u[1:-1, 1:-1] + c * (...)",
         heat2d, lambda: (_rng(5).uniform(0, 1, (5, 5)), 0.2, 4), (0, 1), loss=heat2d_loss),
    Case("advection_diffusion", "1-d advection-diffusion, un = u.copy() per step, returns u",
         advection_diffusion, _advection_args, (0, 1, 2), loss=advection_diffusion_loss),
    Case("rk4_pendulum", "RK4 on a pendulum; rhs returns np.array([...]); trajectory "
         "rows written traj[i + 1] = y", rk4_pendulum,
         lambda: (np.array([0.8, 0.0]), 9.81, 0.3, 0.05, 10), (0, 1, 2),
         loss=rk4_pendulum_loss),
    Case("bouncing_ball", "while True until the ball stops bouncing (break), abs, "
         "data-dependent step count", bouncing_ball, lambda: (1.3, 0.4, 0.7, 0.01),
         (0, 1, 2)),
    Case("damped_oscillator", "while t < T with a run-time dt, scalar state",
         damped_oscillator, lambda: (1.0, 0.0, 4.0, 0.3, 0.01, 2.0), (0, 1, 2, 3)),
    Case("exp_series_break_continue", "Taylor series of exp per entry: continue on "
         "masked entries, break when the term is small", exp_series_sum,
         lambda: (np.array([0.3, -1.2, 2.0, 0.7]), np.array([1, 1, 0, 1]), 1e-14), (0,)),
]
