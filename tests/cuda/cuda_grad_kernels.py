"""Kernels differentiated by ``numba_adstack.cuda.grad_jit``, with NumPy references, shared
by the simulator and device cases (cuda_cases.py) and the PTX tests of the generated
backward kernels (test_cuda_grad_ptx.py). Importing this module needs numba-cuda; under
NUMBA_ENABLE_CUDASIM=1 the kernels run in the simulator."""
import math

import numpy as np
from numba import cuda

import numba_adstack as nad
import numba_adstack.cuda  # noqa: F401  (nad.cuda)

#: ad_stack_size of the recurrence kernels below.
SIZE = 16


@nad.cuda.grad_jit(ad_stack_size=SIZE)
def recurrence(x, w, y, n):
    """y[i] = f^n(x[i]), f(v) = sin(v) * w[0]: a per-thread loop of run-time length n;
    w[0] is read by every thread."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for _ in range(n):
            v = math.sin(v) * w[0]
        y[i] = v


@nad.cuda.grad_jit(ad_stack_size=SIZE)
def recurrence_marked(x, w, y, n):
    """``recurrence`` with its loop marked ``numba_adstack.checkpoint``, which a kernel
    does not honour (CheckpointIgnoredWarning): the same gradient."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for _ in nad.checkpoint(range(n), snapshots=2):
            v = math.sin(v) * w[0]
        y[i] = v


def recurrence_numpy(x, w0, n):
    v = np.asarray(x, dtype=np.float64).copy()
    for _ in range(n):
        v = np.sin(v) * w0
    return v


@nad.cuda.grad_jit(ad_stack_size=SIZE)
def private_recurrence(x, y, n):
    """Only thread-private elements: x[i] and y[i] with i = cuda.grid(1), no shared read."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for _ in range(n):
            v = math.sin(v) * 1.1 + 0.1
        y[i] = v


@nad.cuda.grad_jit(ad_stack_size=SIZE)
def shared_pair(x, y, n):
    """Threads 2k and 2k+1 both read x[k]: x's adjoint is shared and needs atomics."""
    i = cuda.grid(1)
    if i < y.shape[0]:
        v = x[i // 2]
        for _ in range(n):
            v = math.sin(v)
        y[i] = v


@nad.cuda.grad_jit(ad_stack_size=SIZE)
def add_into(x, y, n):
    """y[i] += f^n(x[i]): an update in place, the seed of y passes through."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for _ in range(n):
            v = math.sin(v) * 1.1 + 0.1
        y[i] += v


@nad.cuda.grad_jit
def overwrite_then_read(x, y):
    """y[i] written, read back and written again: the read is the value just stored."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        y[i] = x[i] * 2.0
        y[i] = y[i] * x[i] + math.sin(y[i])


@nad.cuda.grad_jit
def scale_in_place(x, y):
    """y[i] *= x[i]: the backward would need y's old value, which the launch overwrote."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        y[i] *= x[i]


@nad.cuda.grad_jit
def add_then_double(x, y):
    """y[i] += x[i]**2, then y[i] *= 2: the seed passes through both."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        y[i] += x[i] * x[i]
        y[i] *= 2.0


def private_numpy(x, n):
    v = np.asarray(x, dtype=np.float64).copy()
    for _ in range(n):
        v = np.sin(v) * 1.1 + 0.1
    return v


@nad.cuda.grad_jit
def shared_params(x, w, y):
    """y[i] = w[1] exp(w[0] x[i]) + w[2]: three parameters every thread reads, no loop."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        y[i] = w[1] * math.exp(w[0] * x[i]) + w[2]


def shared_params_grads(x, w, y_bar):
    """Analytic adjoints of sum(y_bar * y): per thread for x, summed over threads for w."""
    e = np.exp(w[0] * x)
    x_bar = y_bar * w[1] * w[0] * e
    w_bar = np.array([np.sum(y_bar * w[1] * x * e), np.sum(y_bar * e), np.sum(y_bar)])
    return x_bar, w_bar


@nad.cuda.grad_jit(ad_stack_size=SIZE)
def table_recurrence(x, W, y, n):
    """Every thread reads W[1, 0] (a constant index: its adjoint is summed per thread and
    added once) and W[0, j % 3] (an index that changes: added atomically each time)."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for j in range(n):
            v = math.sin(v) * W[0, j % 3] + W[1, 0] * v
        y[i] = v


def table_recurrence_numpy(x, W, n):
    v = np.asarray(x, dtype=np.float64).copy()
    for j in range(n):
        v = np.sin(v) * W[0, j % 3] + W[1, 0] * v
    return v


#: Iteration cap of the while loop of branch_while.
MAX_ITER = 20


@nad.cuda.grad_jit(ad_stack_size=32)
def branch_while(x, y):
    """A while loop whose trip count depends on the thread's value, with a branch inside."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        k = 0
        while v < 4.0 and k < MAX_ITER:
            if v > 1.0:
                v = v * v * 0.5 + 1.0
            else:
                v = v + math.exp(v) * 0.3
            k += 1
        y[i] = v


def branch_while_python(v):
    k = 0
    while v < 4.0 and k < MAX_ITER:
        if v > 1.0:
            v = v * v * 0.5 + 1.0
        else:
            v = v + math.exp(v) * 0.3
        k += 1
    return v


@cuda.jit(device=True)
def damped_sin(v, a):
    return math.sin(v) * a + 0.05 * v


@nad.cuda.grad_jit(ad_stack_size=SIZE)
def calls_device(x, w, y, n):
    """A device function called in the per-thread loop."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for _ in range(n):
            v = damped_sin(v, w[0])
        y[i] = v


def calls_device_numpy(x, w0, n):
    v = np.asarray(x, dtype=np.float64).copy()
    for _ in range(n):
        v = np.sin(v) * w0 + 0.05 * v
    return v


@nad.cuda.grad_jit(ad_stack_size=SIZE)
def local_state(x, w, y, n):
    """A per-thread state vector in cuda.local.array, stepped n times: its adjoint is
    per-thread too (no atomics)."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        s = cuda.local.array(3, np.float64)
        for k in range(3):
            s[k] = x[i] * (k + 1)
        for _ in range(n):
            for k in range(3):
                s[k] = math.sin(s[k]) * w[k]
        y[i] = s[0] * s[1] + s[2]


def local_state_numpy(x, w, n):
    s = [np.asarray(x, dtype=np.float64) * (k + 1) for k in range(3)]
    for _ in range(n):
        s = [np.sin(s[k]) * w[k] for k in range(3)]
    return s[0] * s[1] + s[2]


@nad.cuda.grad_jit(ad_stack_size=SIZE)
def shared_scratch(x, y):
    """A cuda.shared.array on the gradient path: refused."""
    i = cuda.grid(1)
    tmp = cuda.shared.array(32, np.float64)
    if i < x.shape[0]:
        tmp[cuda.threadIdx.x] = x[i] * 2.0
        y[i] = tmp[cuda.threadIdx.x]


def make_recurrence(ad_stack_size):
    """The recurrence kernel with another ``ad_stack_size``."""
    return nad.cuda.grad_jit(recurrence.py_func, ad_stack_size=ad_stack_size)


@nad.cuda.grad_jit
def root_where_large(x, y):
    """math.sqrt of every element, read only where it is over 0.25: at 0 its partial is
    infinite and the adjoint reaching it 0 (a zero adjoint contributes zero)."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        r = math.sqrt(v)
        if v > 0.25:
            y[i] = r
        else:
            y[i] = v * v


def root_where_large_slope(x):
    return np.where(x > 0.25, 0.5 / np.sqrt(np.maximum(x, 0.25)), 2.0 * x)


def fd_elementwise(fn, x, h=1e-6):
    """Central differences of an elementwise map (y[i] depends on x[i] only)."""
    x = np.asarray(x, dtype=np.float64)
    return (fn(x + h) - fn(x - h)) / (2 * h)


def fd_scalar(fn, a, h=1e-6):
    return (fn(a + h) - fn(a - h)) / (2 * h)


# ---------------------------------------------------------------- stacks sized at launch
# Default options: each launch sizes the stacks from the kernel's arguments.

@nad.cuda.grad_jit
def recurrence_auto(x, w, y, n):
    """recurrence with default options: n known at launch."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for _ in range(n):
            v = math.sin(v) * w[0]
        y[i] = v


@nad.cuda.grad_jit
def nested_auto(x, y, n, m):
    """Two nested loops of run-time lengths: n * (m - 1) steps per thread."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for _ in range(n):
            for b in range(1, m):
                v = math.sin(v) * 0.9 + 0.01 * b
        y[i] = v


def nested_numpy(x, n, m):
    v = np.asarray(x, dtype=np.float64).copy()
    for _ in range(n):
        for b in range(1, m):
            v = np.sin(v) * 0.9 + 0.01 * b
    return v


@nad.cuda.grad_jit
def grid2d_auto(x, y, n):
    """A 2-d launch: the global stacks are indexed by the thread's linear position."""
    i, j = cuda.grid(2)
    if i < x.shape[0] and j < x.shape[1]:
        v = x[i, j]
        for _ in range(n):
            v = math.sin(v) * 1.05 + 0.02
        y[i, j] = v


def grid2d_numpy(x, n):
    v = np.asarray(x, dtype=np.float64).copy()
    for _ in range(n):
        v = np.sin(v) * 1.05 + 0.02
    return v


def make_branch_while(while_cap):
    """branch_while with default options and this while_cap."""
    return nad.cuda.grad_jit(branch_while.py_func, while_cap=while_cap)


# ---------------------------------------------------------------- a device function's grad
def pair_energy_python(x, k, w, n):
    """A per-thread energy of a scalar x and a stiffness k: a loop of run-time length n
    that reads the array w."""
    v = x
    for j in range(n):
        v = math.sin(v) * k + w[j % w.shape[0]]
    return 0.5 * v * v


pair_energy = nad.cuda.grad_jit(device=True, ad_stack_size=SIZE)(pair_energy_python)
pair_energy_cpu = nad.grad_jit(pair_energy_python)


@cuda.jit
def pair_forces(x, k, w, n, f, dk):
    """Per thread: the force -dE/dx at x[i] and dE/dk, from ``pair_energy.grad``."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        g = pair_energy.grad(x[i], k, w, n)
        f[i] = -g[0]
        dk[i] = g[1]


@cuda.jit
def pair_energy_and_force(x, k, w, n, e, f):
    """Per thread: the energy at x[i] and the force, from ``pair_energy.value_and_grad``."""
    i = cuda.grid(1)
    if i < x.shape[0]:
        v, g = pair_energy.value_and_grad(x[i], k, w, n)
        e[i] = v
        f[i] = -g[0]
