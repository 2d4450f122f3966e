"""The gradient of a device function called per thread in a kernel, against a hand-written
one, on a GPU.

    E(x, k) = 0.5 v_n^2,  v_0 = x,  v_{j+1} = sin(v_j) * k + w[j % len(w)]

``energy`` is decorated with ``numba_adstack.cuda.grad_jit(device=True)``; the kernel
``forces`` calls ``energy.grad(x[i], k, w, n)`` in each thread (a loop of run-time length
``n``, its history on a per-thread adstack). The hand-written kernel keeps the same history
in a ``cuda.local.array`` and walks it backwards. Reported: the energy kernel's time, both
gradient kernels' times and their ratios, and the largest difference between the two
gradients (they must agree to rounding).

    python benchmarks/gpu/device_grad.py [--threads 1048576] [--steps 32] [--repeat 20]

Under NUMBA_ENABLE_CUDASIM=1 it runs in the simulator (use a few hundred threads): a check
that the script works, not a measurement.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
from numba import cuda

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numba_adstack as nad  # noqa: E402
import numba_adstack.cuda as nadc  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recurrence import _time  # noqa: E402  (median and minimum of synchronised runs)

CAP = 64        # the steps the stacks hold, ours and the hand-written one's


def energy_python(x, k, w, n):
    v = x
    for j in range(n):
        v = math.sin(v) * k + w[j % w.shape[0]]
    return 0.5 * v * v


energy = nad.cuda.grad_jit(device=True, ad_stack_size=CAP)(energy_python)
energy_value = cuda.jit(device=True)(energy_python)


@cuda.jit
def energies(x, k, w, n, e):
    i = cuda.grid(1)
    if i < x.shape[0]:
        e[i] = energy_value(x[i], k, w, n)


@cuda.jit
def forces(x, k, w, n, f, dk):
    i = cuda.grid(1)
    if i < x.shape[0]:
        g = energy.grad(x[i], k, w, n)
        f[i] = -g[0]
        dk[i] = g[1]


@cuda.jit
def forces_by_hand(x, k, w, n, f, dk):
    i = cuda.grid(1)
    if i < x.shape[0]:
        hist = cuda.local.array(CAP, np.float64)
        v = x[i]
        for j in range(n):
            hist[j] = v
            v = math.sin(v) * k + w[j % w.shape[0]]
        v_bar = v
        k_bar = 0.0
        for j in range(n - 1, -1, -1):
            u = hist[j]
            k_bar += v_bar * math.sin(u)
            v_bar = v_bar * k * math.cos(u)
        f[i] = -v_bar
        dk[i] = k_bar


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1 << 20)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--block", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    n = min(args.steps, CAP)
    launch = ((args.threads + args.block - 1) // args.block, args.block)

    rng = np.random.default_rng(0)
    x = cuda.to_device(rng.uniform(-1.0, 1.0, args.threads))
    w = cuda.to_device(np.array([0.1, -0.2, 0.3]))
    k = 0.9
    e = cuda.device_array(args.threads)
    f, dk = cuda.device_array(args.threads), cuda.device_array(args.threads)
    f2, dk2 = cuda.device_array(args.threads), cuda.device_array(args.threads)

    t_e = _time(lambda: energies[launch](x, k, w, n, e), args.repeat)
    t_ours = _time(lambda: forces[launch](x, k, w, n, f, dk), args.repeat)
    t_hand = _time(lambda: forces_by_hand[launch](x, k, w, n, f2, dk2), args.repeat)
    diff = max(float(np.max(np.abs(f.copy_to_host() - f2.copy_to_host()))),
               float(np.max(np.abs(dk.copy_to_host() - dk2.copy_to_host()))))
    report = {
        "device": str(cuda.get_current_device().name) if nadc.have_gpu() else "simulator",
        "threads": args.threads, "steps": n, "block": args.block,
        "energy_ms": t_e[0] * 1e3, "ours_ms": t_ours[0] * 1e3, "hand_ms": t_hand[0] * 1e3,
        "ours_min_ms": t_ours[1] * 1e3, "hand_min_ms": t_hand[1] * 1e3,
        "ours_over_energy": t_ours[0] / t_e[0], "hand_over_energy": t_hand[0] / t_e[0],
        "ours_over_hand": t_ours[0] / t_hand[0],
        "ours_over_hand_min": t_ours[1] / t_hand[1],
        "max_abs_difference": diff,
    }
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
