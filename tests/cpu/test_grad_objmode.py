"""`with numba.objmode()` blocks: run as they are where they touch no value the gradient
differentiates; refused by name where they would feed it, or where they sit in a called
function (against the analytic gradient)."""
import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError


@nad.grad_jit
def logged(x):
    n = x.shape[0]
    with numba.objmode(scale="float64"):
        scale = float(2 * n)          # reads an integer only
    return np.sum(x * x) * scale


@nad.grad_jit
def through_objmode(x):
    with numba.objmode(y="float64"):
        y = float(np.sum(x))
    return y * x[0]


@numba.njit
def _fft_in_a_callee(s):
    with numba.objmode(cc="float64[:]"):
        cc = np.fft.ifft(np.fft.fft(s) * 2.0).real
    return cc


@nad.grad_jit
def calls_a_block(s):
    return np.sum(_fft_in_a_callee(s))


def test_a_block_on_inactive_values_runs():
    x = np.linspace(0.1, 0.9, 4)
    value, (g,) = logged.value_and_grad(x)
    assert value == pytest.approx(8.0 * np.sum(x * x))
    np.testing.assert_allclose(g, 16.0 * x)


def test_a_block_feeding_the_gradient_is_refused_by_name():
    with pytest.raises(NonDifferentiableError, match=r"objmode.*object mode has no derivative"):
        through_objmode.grad(np.ones(3))


def test_a_block_in_a_called_function_is_refused_with_the_fix():
    with pytest.raises(NonDifferentiableError,
                       match=r"_fft_in_a_callee, which has a `with numba.objmode\(\)` block"
                             r".*custom_vjp"):
        calls_a_block.grad(np.ones(4))
