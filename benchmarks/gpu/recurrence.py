"""Forward and backward time of the per-thread recurrence kernel on a GPU.

    y[i] = f^n(x[i]),  f(v) = sin(v) * w[0]       (one thread per element)

The backward is the adjoint as numba_adstack builds it: the forward replay pushes the
carried value onto a per-thread adstack in local memory, the reverse loop pops it, and
every thread adds its share of w_bar[0] atomically. Reported: the forward time, the
backward time (kernel alone, and with the overflow-flag check of OverflowCheckedKernel),
their ratio to the forward, the local memory per thread and the largest gradient error
against the analytic values.

    python benchmarks/gpu/recurrence.py [--threads 1048576] [--steps 100] [--repeat 20]
"""
import argparse
import json
import os
import sys
import time

import numpy as np
from numba import cuda

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numba_adstack.cuda as nadc  # noqa: E402

FORWARD = '''
def forward(x, w, y, n):
    i = cuda.grid(1)
    if i < x.shape[0]:
        v = x[i]
        for _ in range(n):
            v = math.sin(v) * w[0]
        y[i] = v
'''

BACKWARD = '''
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
    fn()
    cuda.synchronize()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def reference(x, w0, n, y_bar):
    vs = [x]
    for _ in range(n):
        vs.append(np.sin(vs[-1]) * w0)
    v_bar, w_bar = y_bar.copy(), 0.0
    for k in range(n - 1, -1, -1):
        w_bar += float(np.sum(v_bar * np.sin(vs[k])))
        v_bar = v_bar * w0 * np.cos(vs[k])
    return v_bar, w_bar


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1 << 20)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--block", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    n, size = args.steps, args.steps
    grid = (args.threads + args.block - 1) // args.block

    fwd = nadc.compile_kernel_source(FORWARD, "forward")
    bwd = nadc.compile_kernel_source(BACKWARD, "backward", {"AD_STACK_SIZE": size})
    checked = nadc.OverflowCheckedKernel(bwd, "backward", size)

    rng = np.random.default_rng(0)
    x_h = rng.uniform(-1.0, 1.0, args.threads)
    w_h = np.array([1.1])
    y_bar_h = np.ones(args.threads)
    x, w, y_bar = cuda.to_device(x_h), cuda.to_device(w_h), cuda.to_device(y_bar_h)
    y = cuda.device_array_like(x)
    x_bar, w_bar = cuda.device_array_like(x), cuda.to_device(np.zeros(1))
    flag = cuda.to_device(np.zeros(1, np.int32))

    t_fwd = _time(lambda: fwd[grid, args.block](x, w, y, n), args.repeat)
    t_bwd = _time(lambda: bwd[grid, args.block](x, w, y, n, x_bar, w_bar, y_bar, flag),
                  args.repeat)
    t_chk = _time(lambda: checked[grid, args.block](x, w, y, n, x_bar, w_bar, y_bar),
                  args.repeat)

    # One clean backward for the error check.
    x_bar.copy_to_device(np.zeros(args.threads))
    w_bar.copy_to_device(np.zeros(1))
    checked[grid, args.block](x, w, y, n, x_bar, w_bar, y_bar)
    x_bar_ref, w_bar_ref = reference(x_h, w_h[0], n, y_bar_h)
    err_x = float(np.max(np.abs(x_bar.copy_to_host() - x_bar_ref)))
    err_w = float(abs(w_bar.copy_to_host()[0] - w_bar_ref) / max(1.0, abs(w_bar_ref)))

    report = {
        "device": str(cuda.get_current_device().name) if nadc.have_gpu() else "simulator",
        "threads": args.threads, "steps": n, "ad_stack_size": size, "block": args.block,
        "forward_ms": t_fwd * 1e3, "backward_ms": t_bwd * 1e3,
        "backward_checked_ms": t_chk * 1e3,
        "backward_over_forward": t_bwd / t_fwd,
        "backward_checked_over_forward": t_chk / t_fwd,
        "local_bytes_per_thread": nadc.local_memory_per_thread(bwd),
        "stack_bytes_per_thread": 8 + 8 * size,
        "max_abs_err_x_bar": err_x, "rel_err_w_bar": err_w,
    }
    if isinstance(report["local_bytes_per_thread"], dict):
        report["local_bytes_per_thread"] = max(report["local_bytes_per_thread"].values())
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
