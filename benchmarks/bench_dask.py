"""The distributed gradient of a loss summed over samples (numba_adstack.dask) against
one process, on local clusters of 1, 2 and 4 worker processes.

    python -m benchmarks.bench_dask [--samples 4000000] [--chunks 16] [--repeats 5]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=4_000_000)
    ap.add_argument("--chunks", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--workers", default="1,2,4")
    a = ap.parse_args(argv)
    import dask.array as da
    from dask.distributed import Client, LocalCluster
    import numba_adstack.dask as nad_dask
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "docs", "examples"))
    from least_squares import loss, make_samples
    samples = make_samples(a.samples)
    params = np.array([1.2, 0.25, 1.9, 0.3])
    loss.value_and_grad(params, samples[:10])

    def timed(call):
        call()
        times = []
        for _ in range(a.repeats):
            t = time.perf_counter()
            call()
            times.append(time.perf_counter() - t)
        return statistics.median(times)
    one = timed(lambda: loss.value_and_grad(params, samples))
    print("%d samples in %d chunks, %d CPU cores: one process %.4f s"
          % (a.samples, a.chunks, os.cpu_count(), one))
    print("| workers | distributed call (s) | / one process |")
    print("|---:|---:|---:|")
    for w in [int(x) for x in a.workers.split(",")]:
        with LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster):
            data = da.from_array(samples, chunks=(-(-a.samples // a.chunks), 2)).persist()
            t = timed(lambda: nad_dask.value_and_grad(loss, params, data))
        print("| %d | %.4f | %.2f |" % (w, t, t / one), flush=True)


if __name__ == "__main__":
    main()
