"""Gradients through the ways Numba libraries expose their code: functions read as module
attributes, ``@overload`` implementations, ``*args`` functions, ``@vectorize`` kernels,
and tuples and named tuples returned by jitted solvers; each against finite differences."""
import numpy as np
import pytest

import numba_adstack as nad

import lib_helpers
import lib_helpers as lh
from conftest import check_fd


# ---------------------------------------------------------------- module attributes
@nad.grad_jit
def through_module(x, y, k):
    # ``lh.energy``: an attribute of a module alias; ``lib_helpers.geometry.dist``: of
    # a submodule, as ``np.linalg.norm`` is written.
    return lh.energy(x, k) + lib_helpers.geometry.dist(x, y)


def test_module_attribute_calls():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=5), rng.normal(size=5)
    check_fd(through_module, x, y, 0.7)
