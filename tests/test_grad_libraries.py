"""Gradients through the ways Numba libraries expose their code: functions read as module
attributes, ``@overload`` implementations, ``*args`` functions, ``@vectorize`` kernels,
and tuples and named tuples returned by jitted solvers; each against finite differences."""
import numpy as np
import pytest

import numba_adstack as nad

import lib_helpers
import lib_helpers as lh
from conftest import assert_grads_close, check_fd, fd_grad


def check_fd_compiled(f, *args, rtol=1e-6, atol=1e-8):
    """f.grad against finite differences of the compiled primal: library code written
    for Numba only (a method of arrays, an overloaded stub) does not run in Python."""
    got = f.grad(*args)
    assert_grads_close(got, fd_grad(f, args), args, rtol=rtol, atol=atol)
    return got


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


# ---------------------------------------------------------------- @overload, *args
@nad.grad_jit
def through_overloads(x, w):
    # The stub on an array and on a float: two implementations, chosen by Numba.
    y = lh.softplus(x)
    s = lh.softplus(w * x[0])
    return y.sum() * s + x.weighted_norm2(w)


def test_overload_and_overload_method():
    x = np.array([0.3, -1.2, 0.8, 2.0])
    check_fd_compiled(through_overloads, x, 0.7)


@nad.grad_jit
def through_star_args(x, a, b):
    t = (x, a)
    return lh.head_sum(x, a, b) + lh.head_sum(*t, b) + lh.affine(x) + lh.affine(x, a, b, b)


def test_star_args_callees():
    got = check_fd(through_star_args, 1.5, 0.3, 0.7)
    # 2x + ab twice, 2x, xa + 2: the derivatives by hand.
    np.testing.assert_allclose(got, (6.3, 2.9, 0.6))
