"""Real losses of real arguments through complex arithmetic, as JAX reads them (a complex
value a pair of reals, its adjoint dL/dRe + i dL/dIm), against central finite differences;
complex arrays on the gradient path are refused by name, never a silent zero."""
import cmath

import numpy as np
import pytest

import numba_adstack as nad

from conftest import check_fd


@nad.grad_jit
def complex_scalars(a, b):
    z = complex(a, 1.0)
    w = a * 1j + b
    v = cmath.exp(1j * a) + a
    u = complex(a, b)
    return (abs(z) + abs(w) * abs(v) + (u * u).real + (u / (w + 2.0)).imag
            + abs(cmath.sqrt(u + 3.0)) + u.conjugate().imag * b + abs(cmath.log(u)))


def test_complex_scalar_arithmetic():
    check_fd(complex_scalars, 1.5, 0.5)
    check_fd(complex_scalars, -0.7, 1.3)


def test_complex_arrays_are_refused_by_name():
    def f(x):
        return np.sum(np.abs(x + 1j * x[::-1]))
    with pytest.raises(nad.NonDifferentiableError, match="no complex adjoint rule"):
        nad.grad_jit(f).grad(np.array([0.3, 0.7, 1.1]))
