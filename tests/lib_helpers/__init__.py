"""A small library of Numba functions, imported by the library tests as a module
(``import lib_helpers as lh; lh.energy(...)``), with a submodule (``lib_helpers.geometry``),
its overloads and its ``*args`` functions, as published Numba libraries write them."""
import math

import numba

from . import geometry  # noqa: F401  (read as lib_helpers.geometry.f)


@numba.njit
def energy(x, k):
    s = 0.0
    for i in range(x.shape[0]):
        s += k * x[i] * x[i] + math.sin(x[i])
    return s
