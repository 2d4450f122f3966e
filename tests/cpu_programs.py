"""Programs that several of the CPU gradient test files use (test_grad_loops.py,
test_grad_calls_and_updates.py, test_grad_dispatcher.py, test_grad_stack_storage.py):
defined once, so that a worker running those files compiles each once.
"""
import math

import numpy as np

import numba_adstack as nad


@nad.grad_jit
def decay(x, n):
    v = x[0]
    for _ in range(n):
        v = v * 0.9 + 0.1 * x[1]
    return v


@nad.grad_jit
def sinrec(x, n):
    s = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        for j in range(n):
            v = math.sin(v) * 1.01
        s += v
    return s


def sinrec_analytic(x, n):
    g = np.ones_like(x, dtype=np.float64)
    v = x.astype(np.float64)
    for _ in range(n):
        g = g * 1.01 * np.cos(v)
        v = np.sin(v) * 1.01
    return g


@nad.grad_jit
def branch_carried(x, n):
    v = x[0]
    for i in range(n):
        if v > 1.0:
            v = v * 0.5 + x[1]
        elif v > 0.5:
            v = v * v + 0.3
        else:
            v = v + x[1] * x[1]
    return v


@nad.grad_jit
def newton_sqrt(x):
    s = 0.0
    for i in range(x.shape[0]):
        a = x[i]
        y = a
        k = 0
        while abs(y * y - a) > 1e-14 * a and k < 100:
            y = 0.5 * (y + a / y)
            k += 1
        s += y
    return s


@nad.grad_jit
def spring_copy(x0, v0, k, steps):
    n = x0.shape[0]
    x = np.empty_like(x0)
    v = np.empty_like(v0)
    for i in range(n):
        x[i] = x0[i]
        v[i] = v0[i]
    dt = 0.01
    for t in range(steps):
        for i in range(n):
            left = x[i - 1] if i > 0 else 0.0
            right = x[i + 1] if i < n - 1 else 0.0
            a = -k * (2.0 * x[i] - left - right) - 0.1 * v[i]
            v[i] += dt * a
        for i in range(n):
            x[i] += dt * v[i]
    e = 0.0
    for i in range(n):
        e += (i + 1.0) * x[i] + 0.5 * v[i] * v[i]
    return e


X0S = np.array([0.1, -0.2, 0.3, 0.05])
V0S = np.array([0.5, 0.0, -0.4, 0.2])
