"""Real losses of real inputs through complex arithmetic (rules/complex_rules.py), against
finite differences or analytic values; and what is refused, by name and line."""
import cmath
import math

import numpy as np
import pytest

import numba
import numba_adstack as nad
from numba_adstack import NonDifferentiableError
from conftest import check_fd


@numba.njit
def _square_plus_one(z):
    return z * z + 1.0


# Several constructs per function: each compiles once.
@nad.grad_jit
def construct_and_parts(a, b):
    z = complex(a, b)
    w = a * 1j + b
    return (abs(z) + (z * z).real + (z * w).imag + z.conjugate().imag
            + abs(_square_plus_one(z)) + abs(-z) + complex(a).real)


@nad.grad_jit
def arithmetic(a, b):
    z = complex(a, 0.5)
    w = complex(1.0, b)
    q = z / w + 2.0 / z - z * (1.0 - w) + w / 3.0
    p = z ** 2 + z ** w + w ** 0.5 + 1j ** a
    z *= 1j + a
    z += b
    z /= 2.0 + a * 1j
    z -= 1j
    return abs(q) + abs(p) + abs(z) + (2.0 * z).real


@nad.grad_jit
def cmath_functions(a, b):
    z = complex(a, b)
    return (abs(cmath.exp(1j * a) + a) + cmath.log(z).imag + abs(cmath.sqrt(z))
            + abs(cmath.sin(z)) + abs(cmath.cos(z)) + abs(cmath.tan(0.3 * z))
            + abs(cmath.sinh(z)) + abs(cmath.cosh(z)) + abs(cmath.tanh(z))
            + cmath.phase(z) + cmath.rect(a, b).imag + cmath.rect(b, a).real)


@nad.grad_jit
def numpy_on_complex_scalars(a, b):
    z = complex(a, b)
    return (np.real(np.exp(z)) + np.imag(np.conj(z * z)) + np.abs(z) + np.angle(z)
            + np.real(np.sqrt(z)) + np.imag(np.log(z)) + abs(np.sin(z)) + abs(np.cos(z)))


@nad.grad_jit
def complex_in_loop_and_branch(x):
    s = 0.0
    for i in range(x.shape[0]):
        z = cmath.exp(1j * x[i])
        if z.real > 0.0:
            s += abs(complex(x[i], 1.0) * x[i]) + z.imag * x[i]
        else:
            s -= abs(z + x[0])
    return s


@nad.grad_jit
def single_precision(a):
    z = np.complex64(complex(a, 1.0)) * np.float32(2.0)
    return abs(z)


def test_construct_parts_conjugate_and_callee():
    check_fd(construct_and_parts, 1.5, -0.7, rtol=1e-6)


def test_arithmetic_and_in_place_operators():
    check_fd(arithmetic, 0.8, 0.6, rtol=1e-6)


def test_cmath_functions():
    check_fd(cmath_functions, 0.7, 0.4, rtol=1e-6)


def test_numpy_ufuncs_on_complex_scalars():
    check_fd(numpy_on_complex_scalars, 0.9, -0.3, rtol=1e-6)


def test_loop_and_branch():
    check_fd(complex_in_loop_and_branch, np.array([0.3, 1.2, -0.7, 2.5]), rtol=1e-6)


def test_analytic_values_of_the_issue():
    # d|a + i|/da = a / |a + i|; d|a i|/da = sign(a); at a = 1.5.
    f = nad.grad_jit(lambda a: abs(complex(a, 1.0)))
    assert f.grad(1.5)[0] == pytest.approx(1.5 / math.hypot(1.5, 1.0), rel=1e-12)
    g = nad.grad_jit(lambda a: abs(a * 1j))
    assert g.grad(-1.5)[0] == pytest.approx(-1.0, rel=1e-12)
    # abs at 0 has gradient 0 (as JAX).
    assert g.grad(0.0)[0] == 0.0
    # complex64: 2 |a + i|, in single precision.
    assert single_precision.grad(0.7)[0] == pytest.approx(2 * 0.7 / math.hypot(0.7, 1.0),
                                                          rel=1e-6)


def _refusal(fn, args, *words):
    with pytest.raises(NonDifferentiableError) as ei:
        nad.grad_jit(fn).grad(*args)
    msg = str(ei.value)
    assert fn.__name__ in msg and "line" in msg, msg
    for w in words:
        assert w in msg, msg
    return msg


def _complex_array(x):
    return np.sum(np.abs(x + 1j * x[::-1]))


def _complex_array_real(x):
    c = x + 0j
    return np.sum(c.real)


def _complex_array_elements(x):
    c = np.zeros(x.shape[0], np.complex128)
    for i in range(x.shape[0]):
        c[i] = complex(x[i], 1.0)
    return abs(c[0])


def _written_through_real_view(x):
    c = np.zeros(x.shape[0], np.complex128)
    c.real[:] = x
    return np.sum(np.abs(c))


def _no_complex_rule(a):
    return abs(cmath.asin(complex(a, 0.1)))


def _complex_argument(z, a):
    return abs(z * a)


def _list_of_complex(a):
    values = [complex(a, 1.0), 1j]
    return abs(values[0])


X = np.array([0.3, 1.2, -0.7])


@pytest.mark.parametrize("fn,args,words", [
    (_complex_array, (X,), ("`np.absolute`", "array(complex128", "np.sum(np.abs(x + 1j"
                            )),
    (_complex_array_real, (X,), ("`.real`", "array(complex128", "return np.sum(c.real)")),
    (_complex_array_elements, (X,), ("array(complex128", "return abs(c[0])")),
    (_written_through_real_view, (X,), ("array(complex128", "np.sum(np.abs(c))")),
    (_no_complex_rule, (0.7,), ("`cmath.asin`", "complex128", "real and imaginary parts")),
    (_complex_argument, (1 + 2j, 1.5), ("complex argument 'z'", "wrt=")),
    (_list_of_complex, (0.7,), ("list(complex128)", "return abs(values[0])")),
])
def test_refused_by_name(fn, args, words):
    _refusal(fn, args, *words)


# ---------------------------------------------------------------- complex values kept
@nad.grad_jit
def carried_by_loop(a, n):
    z = complex(a, 0.1)
    for _ in range(n):
        z = z * z + 0.1j
    return abs(z)


@nad.grad_jit
def series_term_carried(x, n):
    # A hypergeometric-style series, its complex term carried from one step to the next.
    z = complex(x[0], x[1])
    term = 1.0 + 0.0j
    s = 0.0 + 0.0j
    for k in range(1, n):
        term = term * z * z * ((k - 0.5) / (k + 1.0))
        s += term / (k + x[2])
    return abs(s) + cmath.phase(s)


@nad.grad_jit
def state_stepped_in_a_while_loop(x, n):
    psi = complex(1.0, 0.0)
    t = 0
    while t < n:
        psi = psi * cmath.exp(1j * x[0] * t) + x[1] * psi * psi * 0.01
        t += 1
    return psi.real ** 2 + psi.imag * x[2]


def test_complex_values_carried_around_loops_are_kept():
    # On complex adstacks (complex128 entries), for and while loops alike.
    check_fd(carried_by_loop, 0.7, 3)
    x = np.array([0.3, 0.7, 1.1])
    check_fd(series_term_carried, x, 8)
    check_fd(state_stepped_in_a_while_loop, x, 6)


def test_complex_argument_outside_wrt_is_a_constant():
    f = nad.grad_jit(_complex_argument, wrt=(1,))
    got = f.grad(1 + 2j, 1.5)
    assert got[0] is None
    assert got[1] == pytest.approx(abs(1 + 2j), rel=1e-12)
