"""Module-level Numba functions read through a submodule: ``lib_helpers.geometry.dist``."""
import math

import numba


@numba.njit
def dist(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        d = a[i] - b[i]
        s += d * d
    return math.sqrt(s)
