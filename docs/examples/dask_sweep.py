"""Map ``value_and_grad`` over a parameter sweep on a Dask cluster.

The loss of the tutorial's spring (``spring_fit.py``) and its gradient are evaluated at
every point of a grid of (stiffness, damping) values, one task per point, on the worker
processes of a local Dask cluster; the best point then starts a fit. ``loss`` is compiled
with ``cache=True``: this process compiles its gradient once and writes it to Numba's
cache, and each worker loads it from there instead of compiling it again.

Run it with ``python docs/examples/dask_sweep.py`` (needs ``pip install ".[dask]"``
from the repository's root). On a real cluster, pass the scheduler's address to ``Client``
instead of starting a ``LocalCluster``; the workers need numba_adstack and this directory's
modules, and share the cache if they share the file system.
"""
import os
import sys

import numpy as np
from dask.distributed import Client, LocalCluster

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spring_fit import DT, STEPS, fit, loss, observations  # noqa: E402


def sweep(client, observed, ks, cs):
    """Loss and gradient at every (k, c) of the grid ``ks x cs``, computed on the
    workers: arrays of shape (len(ks), len(cs)) and (len(ks), len(cs), 2)."""
    grid = [np.array([k, c]) for k in ks for c in cs]
    data = client.scatter(observed, broadcast=True)     # sent to each worker once
    futures = client.map(loss.value_and_grad, grid, observed=data, dt=DT, steps=STEPS)
    results = client.gather(futures)
    values = np.array([value for value, _ in results]).reshape(len(ks), len(cs))
    grads = np.array([grads[0] for _, grads in results]).reshape(len(ks), len(cs), 2)
    return values, grads


def main():
    observed = observations()
    ks = np.linspace(1.0, 8.0, 8)
    cs = np.linspace(0.1, 1.5, 5)
    loss.grad(np.array([ks[0], cs[0]]), observed, DT, STEPS)   # compile and cache once
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        values, grads = sweep(client, observed, ks, cs)
    i, j = np.unravel_index(np.argmin(values), values.shape)
    print("best grid point k = %.2f, c = %.2f: loss %.4f, gradient %s"
          % (ks[i], cs[j], values[i, j], grads[i, j]))
    result = fit(observed, np.array([ks[i], cs[j]]))
    print("fitted from there: k = %.3f, c = %.3f" % tuple(result.x))


if __name__ == "__main__":
    main()
