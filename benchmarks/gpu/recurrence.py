"""Forward and backward time of the per-thread recurrence kernel on a GPU.

    y[i] = f^n(x[i]),  f(v) = sin(v) * w[0]       (one thread per element)

The kernel is written once and decorated with ``numba_adstack.cuda.grad_jit``; its backward
is the kernel numba_adstack generates: the forward replay pushes the carried values onto
per-thread adstacks in local memory, the reverse loop pops them, and every thread adds its
share of w_bar[0] atomically. Reported: the forward time, the backward time (``k.grad``,
which also reads the overflow flag back, and the generated kernel launched alone), their
ratios to the forward, a hand-written backward for comparison, the local memory per thread
(driver figure and the stacks' bytes) and the gradient error against the analytic values.

    python benchmarks/gpu/recurrence.py [--threads 1048576] [--steps 100] [--repeat 20]

Under NUMBA_ENABLE_CUDASIM=1 it runs in the simulator (use a few hundred threads): a check
that the script works, not a measurement.
"""
import argparse
import json
import math
import os
import re
import sys
import time

import numpy as np
from numba import cuda

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numba_adstack as nad  # noqa: E402
import numba_adstack.cuda as nadc  # noqa: E402
from numba_adstack.typing.types import AdStackType  # noqa: E402


def recurrence(x, w, y, n):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for _ in range(n):
            v = math.sin(v) * w[0]
        y[i] = v


HAND_BACKWARD = '''
def backward(x, w, y, n, x_bar, w_bar, y_bar, flag):
    i = cuda.grid(1)
    if i < x.shape[0]:
        st = adstack(np.float64, AD_STACK_SIZE)
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
'''


def _time(fn, repeat):
    """Median and minimum wall time of ``fn`` (synchronised), after one warm-up call."""
    fn()
    cuda.synchronize()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), float(np.min(times))


def reference(x, w0, n, y_bar):
    """Analytic adjoints of sum(y_bar * y) by the chain rule, in NumPy."""
    vs = [x]
    for _ in range(n):
        vs.append(np.sin(vs[-1]) * w0)
    v_bar, w_bar = y_bar.copy(), 0.0
    for k in range(n - 1, -1, -1):
        w_bar += float(np.sum(v_bar * np.sin(vs[k])))
        v_bar = v_bar * w0 * np.cos(vs[k])
    return v_bar, w_bar


def stack_bytes_of(source):
    """Bytes of the adstacks declared in a generated backward kernel's source."""
    from numba.core import types
    return sum(nadc.stack_bytes(AdStackType(getattr(types, dt), int(cap)))
               for dt, cap in re.findall(r"adstack\(np\.(\w+), (\d+)\)", source))


def _local_bytes(dispatcher):
    got = nadc.local_memory_per_thread(dispatcher)
    if isinstance(got, dict):
        got = max(got.values()) if got else None
    return got


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1 << 20)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--block", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    n = size = args.steps
    grid = (args.threads + args.block - 1) // args.block
    launch = (grid, args.block)

    kern = nad.cuda.grad_jit(recurrence, ad_stack_size=size)
    hand = nadc.compile_kernel_source(HAND_BACKWARD, "backward", {"AD_STACK_SIZE": size})

    rng = np.random.default_rng(0)
    x_h = rng.uniform(-1.0, 1.0, args.threads)
    w_h = np.array([1.1])
    y_bar_h = np.ones(args.threads)
    x, w, y_bar = cuda.to_device(x_h), cuda.to_device(w_h), cuda.to_device(y_bar_h)
    y = cuda.device_array_like(x)
    x_bar, w_bar = cuda.to_device(np.zeros(args.threads)), cuda.to_device(np.zeros(1))
    flag = cuda.to_device(np.zeros(1, np.int32))

    bw = kern.backward((x, w, y, n))           # the generated backward's launcher
    # The backward consumes the seed (y_bar[i] = 0 after it); the work per launch does not
    # depend on the values, so the timed launches reuse the arrays as they are.
    t_fwd = _time(lambda: kern[launch](x, w, y, n), args.repeat)
    t_grad = _time(lambda: kern.grad[launch](x, w, y, n, x_bar, w_bar, y_bar), args.repeat)
    t_bwd = _time(lambda: bw.dispatcher[launch](x, w, y, n, x_bar, w_bar, y_bar, flag),
                  args.repeat)
    t_hand = _time(lambda: hand[launch](x, w, y, n, x_bar, w_bar, y_bar, flag), args.repeat)

    # One clean backward for the error check.
    x_bar.copy_to_device(np.zeros(args.threads))
    w_bar.copy_to_device(np.zeros(1))
    y_bar.copy_to_device(y_bar_h)
    kern.grad[launch](x, w, y, n, x_bar, w_bar, y_bar)
    x_bar_ref, w_bar_ref = reference(x_h, w_h[0], n, y_bar_h)
    err_x = float(np.max(np.abs(x_bar.copy_to_host() - x_bar_ref)))
    err_w = float(abs(w_bar.copy_to_host()[0] - w_bar_ref) / max(1.0, abs(w_bar_ref)))

    report = {
        "device": str(cuda.get_current_device().name) if nadc.have_gpu() else "simulator",
        "threads": args.threads, "steps": n, "ad_stack_size": size, "block": args.block,
        "forward_ms": t_fwd[0] * 1e3, "forward_min_ms": t_fwd[1] * 1e3,
        "grad_ms": t_grad[0] * 1e3, "grad_min_ms": t_grad[1] * 1e3,
        "backward_kernel_ms": t_bwd[0] * 1e3, "backward_kernel_min_ms": t_bwd[1] * 1e3,
        "hand_backward_ms": t_hand[0] * 1e3,
        "grad_over_forward": t_grad[0] / t_fwd[0],
        "backward_kernel_over_forward": t_bwd[0] / t_fwd[0],
        "backward_kernel_over_forward_min": t_bwd[1] / t_fwd[1],
        "hand_backward_over_forward": t_hand[0] / t_fwd[0],
        "local_bytes_per_thread": _local_bytes(bw.dispatcher),
        "hand_local_bytes_per_thread": _local_bytes(hand),
        "stack_bytes_per_thread": stack_bytes_of(bw.source),
        "hand_stack_bytes_per_thread": 8 + 8 * size,
        "max_abs_err_x_bar": err_x, "rel_err_w_bar": err_w,
    }
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
