"""GradBench's ``kmeans``: the k-means cost, each point's squared distance to its nearest
center summed, differentiated in the centers (gradbench/gradbench, tools/jax/kmeans.py,
whose ``dir`` also takes a Hessian-vector product; here the gradient). Sizes: n = 10000
points, k = 100 centers, d = 16."""
import numpy as np

SIZES = [{"n": 1000, "k": 10, "d": 16}, {"n": 10000, "k": 100, "d": 16}]


def inputs(n, k, d):
    rng = np.random.default_rng(5)
    return (rng.random((n, d)), rng.random((k, d)))


def kmeans_loops(points, centers):
    n, d = points.shape
    k = centers.shape[0]
    s = 0.0
    for i in range(n):
        best = np.inf
        for j in range(k):
            dist = 0.0
            for m in range(d):
                diff = points[i, m] - centers[j, m]
                dist += diff * diff
            if dist < best:
                best = dist
        s += best
    return s


def kmeans_numpy(points, centers):
    a_sqr = np.sum(points * points, axis=1)
    b_sqr = np.sum(centers * centers, axis=1)
    dists = a_sqr[:, None] + b_sqr[None, :] - 2.0 * (points @ centers.T)
    s = 0.0
    for i in range(points.shape[0]):
        s += np.min(dists[i])
    return s


def kmeans_jax(points, centers):
    import jax.numpy as jnp
    a_sqr = jnp.sum(points ** 2, 1)[None, :]
    b_sqr = jnp.sum(centers ** 2, 1)[:, None]
    dists = a_sqr + b_sqr - 2 * jnp.matmul(points, centers.T).T
    return jnp.min(dists, axis=0).sum()


STYLES = {"loops": kmeans_loops, "numpy": kmeans_numpy}
JAX = kmeans_jax
WRT = (1,)
GRAD_OPTIONS = {"wrt": (1,)}      # the centers' gradient only, as GradBench asks
