"""GradBench's ``gmm``: the negative log-likelihood of a Gaussian mixture with a Wishart
prior, each component's inverse covariance given by the log of its diagonal and its
strictly lower triangle (``icf``, ADBench's layout). Loop style: gmm_loops.py (ADBench's
C++ reference); NumPy style here, a component at a time; JAX as GradBench's
tools/jax/gmm_objective.py. Sizes: GradBench's n = 1000 with (d, K) = (10, 25), (20, 50)."""
import math

import numpy as np

from .gmm_loops import gmm_objective as gmm_loops, log_gamma_distrib

SIZES = [{"d": 10, "k": 25, "n": 1000}, {"d": 20, "k": 50, "n": 1000}]


def inputs(d, k, n):
    rng = np.random.default_rng(4)
    return (rng.standard_normal(k), rng.standard_normal((k, d)),
            rng.standard_normal((k, d + d * (d - 1) // 2)) * 0.1,
            rng.standard_normal((n, d)), 1.0, 0)


def gmm_numpy(alpha, means, icf, x, wishart_gamma, wishart_m):
    n, d = x.shape
    k = alpha.shape[0]
    Qdiags = np.exp(icf[:, :d])
    sum_qs = np.sum(icf[:, :d], axis=1)
    main_term = np.empty((n, k))
    for ik in range(k):
        L = np.zeros((d, d))
        lparam = d
        for i in range(d):
            for j in range(i + 1, d):
                L[j, i] = icf[ik, lparam]
                lparam += 1
        xc = x - means[ik]
        Lx = Qdiags[ik] * xc + xc @ L.T
        main_term[:, ik] = alpha[ik] + sum_qs[ik] - 0.5 * np.sum(Lx * Lx, axis=1)
    slse = 0.0
    for ix in range(n):
        row = main_term[ix]
        mx = np.max(row)
        slse += np.log(np.sum(np.exp(row - mx))) + mx
    mx = np.max(alpha)
    lse_alpha = np.log(np.sum(np.exp(alpha - mx))) + mx
    CONSTANT = -n * d * 0.5 * math.log(2 * math.pi)
    nn = d + wishart_m + 1
    C = nn * d * (math.log(wishart_gamma) - 0.5 * math.log(2)) - \
        log_gamma_distrib(0.5 * nn, d)
    frob = np.sum(Qdiags * Qdiags) + np.sum(icf[:, d:] * icf[:, d:])
    prior = 0.5 * wishart_gamma * wishart_gamma * frob - wishart_m * np.sum(sum_qs)
    return CONSTANT + slse - n * lse_alpha - prior + k * C


def gmm_jax(alpha, means, icf, x, wishart_gamma, wishart_m):
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp, multigammaln
    n, d = x.shape
    k = alpha.shape[0]
    q, l = icf[:, :d], icf[:, d:]
    Qdiags = jnp.exp(q)
    sum_qs = jnp.sum(q, axis=1)
    cols = np.repeat(np.arange(d - 1), np.arange(d - 1, 0, -1))
    rows = np.concatenate([np.arange(c + 1, d) for c in range(d - 1)])
    Ls = jnp.zeros((k, d, d)).at[:, rows, cols].set(l)
    xc = x[:, None, :] - means[None, ...]
    Lx = Qdiags * xc + jnp.einsum("ijk,mik->mij", Ls, xc)
    slse = jnp.sum(logsumexp(alpha + sum_qs - 0.5 * jnp.sum(Lx ** 2, axis=2), axis=1))
    nn = d + wishart_m + 1
    prior = jnp.sum(0.5 * wishart_gamma ** 2 * (jnp.sum(Qdiags ** 2, axis=1) +
                                                jnp.sum(l ** 2, axis=1))
                    - wishart_m * sum_qs)
    C = nn * d * jnp.log(wishart_gamma / math.sqrt(2))
    return (-n * d * 0.5 * math.log(2 * math.pi) + slse - n * logsumexp(alpha)
            - prior + k * (C - multigammaln(0.5 * nn, d)))


STYLES = {"loops": gmm_loops, "numpy": gmm_numpy}
JAX = gmm_jax
WRT = (0, 1, 2)
STATIC = (4, 5)
