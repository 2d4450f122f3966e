"""Taichi and Quadrants (a Taichi fork) share one API: ``field``, ``kernel``,
``kernel.grad()``, ``ad.Tape``.  The kernels are written once against the
module ``ti`` that is passed in.

Loop-carried scalars inside a kernel go through the adstack, whose capacity is
``ad_stack_size`` of ``init``; the default (32) crashes the process on longer
loops, so each workload passes its own size.  Trip counts are Python constants
captured by the kernels (Quadrants refuses a range whose bound is a kernel
argument in reverse mode: "Cannot use non static range in Backwards mode").
"""
import numpy as np

from . import Unsupported


def _init(ti, workload, args):
    options = dict(arch=ti.cpu, default_fp=ti.f64, offline_cache=False,
                   ad_stack_size=int(workload.ad_stack_size(args)))
    if ti.__name__ == "quadrants":
        # Quadrants keeps the adstack behind a flag; without it a dynamic
        # inner loop is refused in reverse mode.
        options["ad_stack_experimental_enabled"] = True
    ti.init(**options)
    ti.set_logging_level(ti.ERROR)


def _scalar(ti):
    return ti.field(dtype=ti.f64, shape=(), needs_grad=True)


def build(ti, workload, args):
    builder = globals().get("_build_" + workload.name)
    if builder is None:
        raise Unsupported("not written for this peer (whole-array programs are not "
                          "Taichi's style)")
    _init(ti, workload, args)
    return builder(ti, args)


def _build_sin_recurrence(ti, args):
    x_np, steps = args
    n = x_np.shape[0]
    x = ti.field(dtype=ti.f64, shape=n, needs_grad=True)
    loss = _scalar(ti)
    x.from_numpy(x_np)

    @ti.kernel
    def run():
        for i in range(n):
            v = x[i]
            for _ in range(steps):
                v = ti.sin(v) * 1.01
            loss[None] += v

    def grad():
        loss[None] = 0.0
        x.grad.fill(0.0)
        loss.grad[None] = 1.0
        run()
        run.grad()
        return x.grad.to_numpy(), None

    return grad


def _build_long_recurrence(ti, args):
    x_np, w_val, steps = args
    x = ti.field(dtype=ti.f64, shape=1, needs_grad=True)
    w = _scalar(ti)
    loss = _scalar(ti)
    x.from_numpy(x_np)
    w[None] = w_val

    @ti.kernel
    def run():
        for _ in range(1):  # the outermost loop is the parallel one
            v = x[0]
            for _t in range(steps):
                v = ti.sin(v) * 1.01 + 0.1 * w[None]
            loss[None] += v

    def grad():
        loss[None] = 0.0
        x.grad.fill(0.0)
        w.grad[None] = 0.0
        loss.grad[None] = 1.0
        run()
        run.grad()
        return x.grad.to_numpy(), float(w.grad[None]), None

    return grad


def _build_newton_sqrt(ti, args):
    (a_np,) = args
    n = a_np.shape[0]
    a = ti.field(dtype=ti.f64, shape=n, needs_grad=True)
    loss = _scalar(ti)
    a.from_numpy(a_np)

    @ti.kernel
    def run():
        for i in range(n):
            ai = a[i]
            x = ai
            while abs(x * x - ai) >= 1e-12 * ai:
                x = 0.5 * (x + ai / x)
            loss[None] += x

    def grad():
        loss[None] = 0.0
        a.grad.fill(0.0)
        loss.grad[None] = 1.0
        run()
        run.grad()
        return (a.grad.to_numpy(),)

    return grad


def _build_mass_spring(ti, args):
    # The in-place update of one state array across steps breaks the global
    # data access rule of reverse mode, so, as in Taichi's own differentiable
    # simulations, the state has a time axis and one kernel launch per step
    # is recorded on a Tape.
    x0_np, v0_np, k_val, rest, mass, dt, steps = args
    n = x0_np.shape[0]
    x = ti.field(dtype=ti.f64, shape=(steps + 1, n), needs_grad=True)
    v = ti.field(dtype=ti.f64, shape=(steps + 1, n), needs_grad=True)
    f = ti.field(dtype=ti.f64, shape=(steps, n), needs_grad=True)
    v0 = ti.field(dtype=ti.f64, shape=n, needs_grad=True)
    k = _scalar(ti)
    loss = _scalar(ti)
    x0_padded = np.zeros((steps + 1, n))
    x0_padded[0] = x0_np
    v0.from_numpy(v0_np)
    k[None] = k_val

    @ti.kernel
    def start():
        for i in range(n):
            v[0, i] = v0[i]

    @ti.kernel
    def forces(t: ti.i32):
        for i in range(n - 1):
            s = k[None] * (x[t, i + 1] - x[t, i] - rest)
            f[t, i] += s
            f[t, i + 1] -= s

    @ti.kernel
    def advance(t: ti.i32):
        for i in range(n):
            v[t + 1, i] = v[t, i] + dt * f[t, i] / mass
            x[t + 1, i] = x[t, i] + dt * v[t + 1, i]

    @ti.kernel
    def compute_loss():
        for i in range(n):
            loss[None] += x[steps, i] ** 2

    def grad():
        x.from_numpy(x0_padded)
        f.fill(0.0)
        loss[None] = 0.0
        with ti.ad.Tape(loss=loss):
            start()
            for t in range(steps):
                forces(t)
                advance(t)
            compute_loss()
        gx0 = x.grad.to_numpy()[0]
        return gx0, v0.grad.to_numpy(), float(k.grad[None]), None, None, None, None

    return grad


def _build_mc_option(ti, args):
    S0_val, sigma_val, r_val, K, T, Z_np = args
    n_paths, n_steps = Z_np.shape
    Z = ti.field(dtype=ti.f64, shape=Z_np.shape)
    S0, sigma, r = _scalar(ti), _scalar(ti), _scalar(ti)
    loss = _scalar(ti)
    Z.from_numpy(Z_np)
    S0[None], sigma[None], r[None] = S0_val, sigma_val, r_val
    dt = T / n_steps
    sqrt_dt = dt ** 0.5

    @ti.kernel
    def run():
        for p in range(n_paths):
            s = S0[None]
            for t in range(n_steps):
                s = s * ti.exp((r[None] - 0.5 * sigma[None] * sigma[None]) * dt
                               + sigma[None] * sqrt_dt * Z[p, t])
            loss[None] += ti.exp(-r[None] * T) * ti.max(s - K, 0.0) / n_paths

    def grad():
        loss[None] = 0.0
        for field in (S0, sigma, r):
            field.grad[None] = 0.0
        loss.grad[None] = 1.0
        run()
        run.grad()
        return (float(S0.grad[None]), float(sigma.grad[None]), float(r.grad[None]),
                None, None, None)

    return grad
