"""Hand-written CUDA kernels with adstacks, shared by the PTX tests, the simulator cases and
scripts/gpu_check.py. Importing this module needs numba-cuda; under NUMBA_ENABLE_CUDASIM=1
the intrinsics imported from numba_adstack.cuda are the simulator ones."""
import math

import numpy as np
from numba import cuda

from numba_adstack.cuda import adstack, push, pop, top, size, overflowed  # noqa: F401

#: Capacity of the stacks of the recurrence kernels.
CAP = 16


def recurrence_forward(x, w, y, n):
    """y[i] = f^n(x[i]) with f(v) = sin(v) * w[0]: one dynamic loop per thread."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for _ in range(n):
            v = math.sin(v) * w[0]
        y[i] = v


def recurrence_backward(x, w, y, n, x_bar, w_bar, y_bar, flag):
    """The adjoint of recurrence_forward, as the rewrite should produce it: the forward
    replay pushes the carried value, the reverse loop pops it; w[0] is read by every
    thread, so its adjoint is accumulated with an atomic add."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        st = adstack(np.float64, CAP)
        v = x[i]
        for _ in range(n):
            push(st, v)
            v = math.sin(v) * w[0]
        v_bar = y_bar[i]
        w_acc = 0.0
        for _ in range(n):
            v = pop(st)
            w_acc += v_bar * math.sin(v)
            v_bar = v_bar * w[0] * math.cos(v)
        x_bar[i] += v_bar
        cuda.atomic.add(w_bar, 0, w_acc)
        if overflowed(st):
            flag[0] = 1


def recurrence_reference(x, w0, n, y_bar):
    """Analytic gradient of sum(y_bar * y) by the chain rule, in NumPy:
    dv'/dv = w cos(v), dv'/dw = sin(v)."""
    vs = [np.asarray(x, dtype=np.float64)]
    for _ in range(n):
        vs.append(np.sin(vs[-1]) * w0)
    v_bar = np.asarray(y_bar, dtype=np.float64).copy()
    w_bar = 0.0
    for k in range(n - 1, -1, -1):
        w_bar += float(np.sum(v_bar * np.sin(vs[k])))
        v_bar = v_bar * w0 * np.cos(vs[k])
    return vs[-1], v_bar, w_bar


def two_stacks(x, n, out, flag):
    """A float64 stack of CAP and a bool stack of 7 (branch flags): known local depot."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        st = adstack(np.float64, CAP)
        br = adstack(np.bool_, 7)
        v = x[i]
        for _ in range(n):
            push(st, v)
            push(br, v > 0.5)
            if v > 0.5:
                v = v * 0.5
            else:
                v = v * 1.5 + 0.1
        acc = 0.0
        for _ in range(n):
            b = pop(br)
            u = pop(st)
            if b:
                acc += u
        out[i] = acc + size(st)
        if overflowed(st) or overflowed(br):
            flag[0] = 1


def empty_pop(x, out, flag):
    """pop and top on an empty stack: 0, and the flag."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        st = adstack(np.float64, 4)
        out[i] = pop(st) + top(st) + x[i]
        if overflowed(st):
            flag[0] = 1


def make_big_stack_kernel(capacity, nstacks=1):
    """A kernel whose ``nstacks`` float64 stacks of ``capacity`` carry a value (bytes:
    nstacks * 8 * capacity)."""
    src = ["def big_stacks(x, n, flag):",
           "    i = cuda.grid(1)"]
    for k in range(nstacks):
        src.append("    s%d = adstack(np.float64, %d)" % (k, capacity))
    src += ["    v = x[i]",
            "    for _ in range(n):"]
    for k in range(nstacks):
        src.append("        push(s%d, v)" % k)
    src.append("        v = math.sin(v)")
    src.append("    for _ in range(n):")
    for k in range(nstacks):
        src.append("        v += pop(s%d)" % k)
    src.append("    x[i] = v")
    ns = {"cuda": cuda, "np": np, "math": math, "adstack": adstack, "push": push, "pop": pop}
    exec("\n".join(src), ns)
    return ns["big_stacks"]


@cuda.jit(device=True)
def step_device(v, w):
    """A device function with a stack of its own (a short inner history)."""
    st = adstack(np.float64, 4)
    for _ in range(3):
        push(st, v)
        v = math.sin(v) * w
    return v + pop(st) * 0.0


def calls_device(x, w, y, n):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for _ in range(n):
            v = step_device(v, w[0])
        y[i] = v
