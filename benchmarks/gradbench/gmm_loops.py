"""GradBench's GMM objective (gradbench/gradbench, ADBench's C++ reference `gmm_objective`)
written with loops, as the C++ reference writes it: the triangular d(d-1)/2 inner loop
applies the lower-triangular factor of each component's inverse covariance."""
import math

import numpy as np
import numba

from .lse import lse_loops

logsumexp = numba.njit(lse_loops)       # (GradBench's lse, written with loops)


@numba.njit
def log_gamma_distrib(a, p):
    out = 0.25 * p * (p - 1) * math.log(math.pi)
    for j in range(1, p + 1):
        out += math.lgamma(a + 0.5 * (1 - j))
    return out


def gmm_objective(alpha, means, icf, x, wishart_gamma, wishart_m):
    d = x.shape[1]
    k = alpha.shape[0]
    n = x.shape[0]
    l_sz = d * (d - 1) // 2
    CONSTANT = -n * d * 0.5 * math.log(2 * math.pi)
    Qdiags = np.empty((k, d))
    sum_qs = np.zeros(k)
    for ik in range(k):
        for j in range(d):
            Qdiags[ik, j] = math.exp(icf[ik, j])
            sum_qs[ik] += icf[ik, j]
    xcentered = np.empty(d)
    Qxcentered = np.empty(d)
    main_term = np.empty(k)
    slse = 0.0
    for ix in range(n):
        for ik in range(k):
            for j in range(d):
                xcentered[j] = x[ix, j] - means[ik, j]
            for j in range(d):
                Qxcentered[j] = Qdiags[ik, j] * xcentered[j]
            lparam = d
            for i in range(d):
                for j in range(i + 1, d):
                    Qxcentered[j] = Qxcentered[j] + icf[ik, lparam] * xcentered[i]
                    lparam += 1
            sq = 0.0
            for j in range(d):
                sq += Qxcentered[j] * Qxcentered[j]
            main_term[ik] = alpha[ik] + sum_qs[ik] - 0.5 * sq
        slse += logsumexp(main_term)
    err = CONSTANT + slse - n * logsumexp(alpha)
    nn = d + wishart_m + 1
    C = nn * d * (math.log(wishart_gamma) - 0.5 * math.log(2)) - log_gamma_distrib(0.5 * nn, d)
    out = 0.0
    for ik in range(k):
        frob = 0.0
        for j in range(d):
            frob += Qdiags[ik, j] * Qdiags[ik, j]
        for j in range(d, d + l_sz):
            frob += icf[ik, j] * icf[ik, j]
        out += 0.5 * wishart_gamma * wishart_gamma * frob - wishart_m * sum_qs[ik]
    return err - out + k * C
