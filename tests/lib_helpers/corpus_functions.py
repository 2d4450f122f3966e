"""Functions of the corpus of public Numba code (benchmarks/corpus) as their authors wrote
them, for tests/cpu/test_grad_corpus_findings.py (a module of its own: pytest rewrites the
``assert`` statements of test files, which Numba cannot compile)."""
import numba
import numpy as np
from numpy import cos, sin

import numba_adstack as nad


# poliastro src/poliastro/core/util.py: a store into R[..., i, j] of a 2-d R is one element,
# and np.asarray of a float is a 0-d array whose adjoint starts at zero.
@numba.njit
def rotation_matrix(angle, axis):
    assert axis in (0, 1, 2)
    angle = np.asarray(angle)
    c = cos(angle)
    s = sin(angle)

    a1 = (axis + 1) % 3
    a2 = (axis + 2) % 3
    R = np.zeros(angle.shape + (3, 3))
    R[..., axis, axis] = 1.0
    R[..., a1, a1] = c
    R[..., a1, a2] = -s
    R[..., a2, a1] = s
    R[..., a2, a2] = c
    return R


@nad.grad_jit
def rotation_loss(angle):
    return np.sum(rotation_matrix(angle, 1) * np.arange(9.0).reshape(3, 3)) + \
        np.sum(rotation_matrix(angle * 0.5, 2) @ rotation_matrix(angle, 0))


# numba numba/tests/test_parfors.py, TestParforNumPy.test_0d_array.
def reductions_of_0d(n):
    return np.sum(n) + np.prod(n) + np.min(n) + np.max(n) + np.var(n)


# vectorbt vectorbt/generic/nb.py: `cumsum = 0` then `cumsum = cumsum + a[i]` (an integer
# and a float unified as a float).
@numba.njit
def rolling_mean_1d_nb(a, window, minp=None):
    if minp is None:
        minp = window
    if minp > window:
        raise ValueError("minp must be <= window")
    out = np.empty_like(a, dtype=np.float64)
    cumsum_arr = np.zeros_like(a)
    cumsum = 0
    nancnt_arr = np.zeros_like(a)
    nancnt = 0
    for i in range(a.shape[0]):
        if np.isnan(a[i]):
            nancnt = nancnt + 1
        else:
            cumsum = cumsum + a[i]
        nancnt_arr[i] = nancnt
        cumsum_arr[i] = cumsum
        if i < window:
            window_len = i + 1 - nancnt
            window_cumsum = cumsum
        else:
            window_len = window - (nancnt - nancnt_arr[i - window])
            window_cumsum = cumsum - cumsum_arr[i - window]
        if window_len < minp:
            out[i] = np.nan
        else:
            out[i] = window_cumsum / window_len
    return out


@nad.grad_jit
def rolling_loss(a, w):
    return np.sum(rolling_mean_1d_nb(a, 3, 1) * w)
