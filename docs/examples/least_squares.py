"""A least-squares fit over samples: a damped oscillation ``a exp(-b t) cos(w t + phi)``
fitted to noisy ``(t, y)`` samples. The loss is a sum over samples, so the loss and the
gradient of a data set are the sums of those of its chunks (``dask_fit.py`` computes them
on Dask's workers)."""
import numpy as np

import numba_adstack as nad

TRUE = np.array([1.5, 0.3, 2.0, 0.4])       # a, b, w, phi


@nad.grad_jit(cache=True, wrt=("params",))
def loss(params, samples):
    """Sum of squared residuals of the samples, an ``(m, 2)`` array of rows ``(t, y)``."""
    a, b, w, phi = params[0], params[1], params[2], params[3]
    s = 0.0
    for i in range(samples.shape[0]):
        t = samples[i, 0]
        r = a * np.exp(-b * t) * np.cos(w * t + phi) - samples[i, 1]
        s += r * r
    return s


def make_samples(m, seed=0):
    """``m`` noisy samples of the true curve at random times in [0, 10)."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, 10.0, m)
    y = TRUE[0] * np.exp(-TRUE[1] * t) * np.cos(TRUE[2] * t + TRUE[3])
    return np.stack([t, y + 0.05 * rng.standard_normal(m)], axis=1)
