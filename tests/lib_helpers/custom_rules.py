"""Functions with derivatives of their own (numba_adstack.custom_vjp), at module level so
that a cached backward finds them again."""
import math

import numba
import numpy as np

import numba_adstack as nad


@nad.custom_vjp
@numba.njit
def softplus(x):
    return math.log1p(math.exp(-abs(x))) + max(x, 0.0)


@softplus.defvjp
@numba.njit
def softplus_vjp(x, g):
    return (g / (1.0 + math.exp(-x)),)


@nad.custom_vjp
@numba.njit
def straight_through_round(x, s):
    # A step function, given the identity's derivative in x (a straight-through estimator).
    return np.round(x * s) / s


@straight_through_round.defvjp
@numba.njit
def straight_through_round_vjp(x, s, g):
    return (g.copy(), 0.0)


@nad.custom_vjp
@numba.njit
def scaled_norm2(x, w):
    return w * np.sum(x * x)


@scaled_norm2.defvjp
@numba.njit
def scaled_norm2_vjp(x, w, g):
    return (2.0 * g * w * x, g * np.sum(x * x))


@scaled_norm2.defjvp
@numba.njit
def scaled_norm2_jvp(x, w, dx, dw):
    return 2.0 * w * np.sum(x * dx) + dw * np.sum(x * x)
