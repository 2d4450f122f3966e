"""Demo: the gradient of a damped pendulum simulation whose step count is known only at run
time, checked against central finite differences.

Run it with ``python -m numba_adstack.demo``. It exits with status 1 when a gradient entry
disagrees with the finite-difference estimate.
"""
import math
import sys
import time

import numba
import numpy as np

import numba_adstack as nad


@numba.njit
def acceleration(theta, omega, g_over_l, damping):
    """Angular acceleration of a damped pendulum (a plain njit function, differentiated
    through by inlining)."""
    return -g_over_l * math.sin(theta) - damping * omega


@nad.grad_jit
def pendulum_loss(state, params, t_end, target):
    """Integrate the pendulum from ``state = [theta, omega]`` until ``t_end`` with
    semi-implicit Euler; return the squared miss of ``target`` plus the time-averaged kinetic
    energy. The number of steps comes from ``t_end`` at run time: a ``while`` loop."""
    theta = state[0]
    omega = state[1]
    g_over_l = params[0]
    damping = params[1]
    dt = 0.01
    t = 0.0
    kinetic = 0.0
    while t < t_end:
        omega += dt * acceleration(theta, omega, g_over_l, damping)
        theta += dt * omega
        kinetic += dt * 0.5 * omega * omega
        t += dt
    miss = theta - target
    return miss * miss + kinetic / t_end


def central_difference(f, args, i, k=None, h=1e-6):
    """Central finite difference of ``f(*args)`` in ``args[i]`` (element ``k`` of an array)."""
    plus = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    minus = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    if k is None:
        plus[i] += h
        minus[i] -= h
    else:
        plus[i][k] += h
        minus[i][k] -= h
    return (f(*plus) - f(*minus)) / (2.0 * h)


def main(t_end=5.0, rtol=1e-5, atol=1e-7):
    state = np.array([1.2, 0.0])          # initial angle (rad) and angular velocity (rad/s)
    params = np.array([9.81, 0.35])       # g / l (1/s^2) and damping (1/s)
    target = 0.1
    args = (state, params, t_end, target)
    steps, t = 0, 0.0
    while t < t_end:
        steps, t = steps + 1, t + 0.01

    print("numba_adstack %s demo: damped pendulum, %d time steps chosen at run time "
          "(while t < t_end)" % (nad.__version__, steps))

    t0 = time.perf_counter()
    value, grads = pendulum_loss.value_and_grad(*args)
    first = time.perf_counter() - t0

    t0 = time.perf_counter()
    value, grads = pendulum_loss.value_and_grad(*args)
    warm = time.perf_counter() - t0

    pendulum_loss(*args)                  # compiles the primal
    t0 = time.perf_counter()
    pendulum_loss(*args)
    primal = time.perf_counter() - t0

    print("loss = %.12g" % value)
    print()
    print("%-22s %20s %20s %10s" % ("gradient entry", "reverse mode", "finite diff.", "rel. err"))
    ok = True
    rows = [("d loss / d theta0", grads[0][0], central_difference(pendulum_loss, args, 0, 0)),
            ("d loss / d omega0", grads[0][1], central_difference(pendulum_loss, args, 0, 1)),
            ("d loss / d (g/l)", grads[1][0], central_difference(pendulum_loss, args, 1, 0)),
            ("d loss / d damping", grads[1][1], central_difference(pendulum_loss, args, 1, 1)),
            ("d loss / d target", grads[3], central_difference(pendulum_loss, args, 3))]
    for name, ad, fd in rows:
        err = abs(ad - fd) / max(abs(fd), 1e-300)
        good = abs(ad - fd) <= atol + rtol * abs(fd)
        ok &= bool(good)
        print("%-22s %20.12g %20.12g %10.2e %s" % (name, ad, fd, err, "ok" if good else "MISMATCH"))
    # t_end also sets the step count, a step function: its gradient covers
    # only its smooth use, `kinetic / t_end`, and is not compared with finite differences.
    print()
    print("time: value_and_grad first call %.3f s (compiles forward and backward), "
          "warm call %.1f us; primal warm call %.1f us"
          % (first, warm * 1e6, primal * 1e6))
    if not ok:
        print("FAILED: reverse-mode gradient disagrees with finite differences")
        return 1
    print("OK: reverse-mode gradient matches central finite differences "
          "(rtol %g)" % rtol)
    return 0


if __name__ == "__main__":
    sys.exit(main())
