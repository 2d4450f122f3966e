"""Fit a model to data held in chunks on a Dask cluster, with SciPy.

The loss of ``least_squares.py`` is a sum over samples: ``numba_adstack.dask.value_and_grad``
computes each chunk's value and gradient on the worker that holds it and sums them, and
``scipy.optimize.minimize(jac=True)`` takes both. ``loss`` is compiled with ``cache=True``:
this process compiles its gradient once, before the cluster starts, and the workers load
it from Numba's cache instead of compiling it.

Run it with ``python docs/examples/dask_fit.py`` (needs ``pip install ".[dask]"``
from the repository's root). On a real cluster, pass the scheduler's address to ``Client``;
the workers need numba_adstack and ``least_squares.py``, and share the cache if they share
the file system.
"""
import os
import sys

import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster
from scipy.optimize import minimize

import numba_adstack.dask as nad_dask

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from least_squares import TRUE, loss, make_samples  # noqa: E402


def fit(data, start):
    """Minimise the loss over the chunks of ``data`` (a dask array of rows ``(t, y)``)
    from ``start``: SciPy's result."""
    def value_and_grad(params):
        return nad_dask.value_and_grad(loss, params, data)
    return minimize(value_and_grad, start, jac=True, method="L-BFGS-B")


def main(m=200_000, chunk=25_000, workers=2):
    samples = make_samples(m)
    start = np.array([1.0, 0.2, 1.9, 0.2])
    loss.grad(start, samples[:10])          # compiled once, here, and cached
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        # The chunks go to the workers once and stay there for every call of the fit.
        data = da.from_array(samples, chunks=(chunk, 2)).persist()
        result = fit(data, start)
    print("fitted a, b, w, phi = %s (true %s) in %d evaluations"
          % (np.round(result.x, 3), TRUE, result.nfev))
    return result


if __name__ == "__main__":
    main()
