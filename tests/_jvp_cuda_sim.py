"""The tangent kernel of a ``numba_adstack.cuda.grad_jit`` kernel in the CUDA simulator,
against central finite differences of the kernel itself; run in a process of its own by
test_jvp.py (NUMBA_ENABLE_CUDASIM must be set before numba.cuda is imported). Prints one
JSON object: the largest relative error of each case."""
import json
import math
import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")   # "0" on a GPU (test_cuda_device.py)

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

import numba_adstack.cuda as nadc  # noqa: E402


@nadc.grad_jit
def relax(x, w, out, total, n):
    i = cuda.grid(1)
    if i < x.shape[0]:
        s = x[i]
        k = 0
        while k < n:
            s = s - 0.1 * (math.sin(s) * w[i] - s * s * 0.05)
            k += 1
        out[i] = s
        cuda.atomic.add(total, 0, s * s)


def run(x, w, n):
    out, total = np.zeros_like(x), np.zeros(1)
    relax[1, 32](x, w, out, total, n)
    return out, total


def main():
    rng = np.random.default_rng(0)
    x, w = rng.uniform(0.2, 1.0, 20), rng.uniform(0.5, 1.5, 20)
    dx, dw = rng.standard_normal(20), rng.standard_normal(20)
    out, total = np.zeros_like(x), np.zeros(1)
    dout, dtotal = np.zeros_like(x), np.zeros(1)
    relax.jvp[1, 32](x, w, out, total, 7, dx, dw, dout, dtotal)
    h = 1e-6
    plus, minus = run(x + h * dx, w + h * dw, 7), run(x - h * dx, w - h * dw, 7)
    errors = {}
    for name, got, p, m in (("out", dout, plus[0], minus[0]),
                            ("total", dtotal, plus[1], minus[1])):
        want = (p - m) / (2 * h)
        errors[name] = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    errors["value"] = float(np.max(np.abs(out - run(x, w, 7)[0])))
    print(json.dumps(errors))


if __name__ == "__main__":
    main()
