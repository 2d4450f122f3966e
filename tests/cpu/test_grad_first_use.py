"""What a new user meets: constants in sets and dicts, dicts of differentiable values,
``cmath.polar``, refusals in the user's own names, the integer-argument warning, NumPy
functions of a float, 0-d results, ``max``/``min`` of one iterable, recursive functions
compiled for fixed signatures, a long compile saying what it compiles. Gradients against
central finite differences of the Python function, or analytic values."""
import cmath
import logging
import math
import warnings

import numpy as np
import pytest
from numpy.polynomial import polynomial as P

import numba_adstack as nad

from conftest import check_fd

X = np.array([0.7, -1.3, 0.4])


# ---------------------------------------------------------------- sets and dicts
@nad.grad_jit
def set_branch(x):
    st = {0, 2}
    s = 0.0
    for i in range(x.shape[0]):
        if i in st:
            s += x[i] * x[i]
        else:
            s += 3.0 * x[i]
    return s


@nad.grad_jit
def dict_of_constants(x):
    d = {"a": 2.0, "b": 3.0}
    return x[0] * d["a"] + x[1] ** 2 * d["b"]


@nad.grad_jit
def dict_of_values(x):
    d = {0: x[0] * 2.0, 1: x[1] ** 2}
    d[0] = d[0] * x[2]
    return d[0] + d[1] * x[2]


@nad.grad_jit
def dict_of_values_by_name(x):
    d = {"a": x[0] * 2.0, "b": x[1], "a": np.sin(x[2])}     # noqa: F601 (a key twice)
    return d["a"] * d["b"]


def test_a_set_of_ints_deciding_a_branch():
    check_fd(set_branch, X)


def test_a_dict_of_constants():
    check_fd(dict_of_constants, X)


def test_a_dict_made_of_differentiable_values():
    check_fd(dict_of_values, X)
    check_fd(dict_of_values_by_name, X)


def test_cmath_polar():
    @nad.grad_jit
    def polar(x):
        r, phi = cmath.polar(complex(x[0], x[1]))
        return r + 2.0 * phi * x[2]
    check_fd(polar, X)


# ---------------------------------------------------------------- messages
def test_a_refusal_names_no_temporary():
    @nad.grad_jit
    def whole_array(x):
        return np.sum(np.abs(np.exp(1j * x) + 0.5))
    with pytest.raises(nad.NonDifferentiableError) as e:
        whole_array.grad(X)
    msg = str(e.value)
    assert "`np.absolute` of a value of type array(complex128" in msg, msg
    assert "$" not in msg.split("\n")[0]

    @nad.grad_jit
    def carried(x):      # (refused before complex values could be kept: now right)
        z = complex(x[0], x[1])
        s = 0.0
        for i in range(3):
            z = z * z + 0.1
            s += abs(z * complex(x[i], 1.0))
        return s
    check_fd(carried, X)


def test_names_of_temporaries_versions_and_inlined_variables():
    from numba_adstack.ad.facts.names import is_generated, user_variable
    assert is_generated("$194call.20") and is_generated("h_v30__v38call_6")
    assert is_generated("g_v2_h_v30__v38call_6")
    assert not is_generated("w.1") and not is_generated("h_v30_s_1")
    assert user_variable("w.1") == ("w", None)
    assert user_variable("h_v30_s_1") == ("s", "h")


def test_the_integer_array_warning_says_what_fits_an_array():
    def scaled(x, k):
        return np.sum(x * 2.0) * k
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert nad.grad_jit(scaled).grad(np.array([1, 2, 3]), 2.0) == (None, 12.0)
    msg = " ".join(str(m.message) for m in w if m.category is nad.IntegerArgumentWarning)
    assert "integer array argument 'x'" in msg and "x.astype(np.float64)" in msg, msg
    assert "2.0, not 2" not in msg


# ---------------------------------------------------------------- NumPy functions of a float
def _numpy_of_floats(a, b):
    return (np.sum(np.diagflat(a)) + np.sum(P.polyadd(a, b)) + np.sum(P.polysub(a, b))
            + np.sum(P.polymul(a, b)) + np.cumsum(a) * b + np.percentile(a, 30.0)
            + np.quantile(b, 0.3) * a + np.ptp(a) * b + np.average(b) * a)


numpy_of_floats = nad.grad_jit(_numpy_of_floats)


def test_numpy_functions_of_a_float_differentiate_as_their_array_forms():
    check_fd(numpy_of_floats, 0.7, -1.3)
    ga, gb = numpy_of_floats.grad(0.7, -1.3)
    _, t = numpy_of_floats.jvp((0.7, -1.3), (1.0, 0.5))
    assert t == pytest.approx(ga + 0.5 * gb, rel=1e-12)


# ---------------------------------------------------------------- results and builtins
def max_usecase3(x):                  # numba/tests/test_builtins.py
    return max(x)


def min_usecase3(x):
    return min(x)


def test_max_and_min_of_one_tuple():
    tup = (1.5, float("nan"), 2.5)
    for fn, want in ((max_usecase3, (0.0, 0.0, 1.0)), (min_usecase3, (1.0, 0.0, 0.0))):
        for val in (tup, tup[::-1]):
            value, (g,) = nad.grad_jit(fn).value_and_grad(val)
            assert value == fn(val)
            assert g == (want if val is tup else want[::-1])


def test_a_zero_d_array_result_is_a_scalar_loss():
    @nad.grad_jit
    def zero_d(x):
        out = np.zeros(())
        out[()] = x[0] * x[1] + np.sin(x[2])
        return out
    value, grads = zero_d.value_and_grad(X)
    assert isinstance(value, float) and value == pytest.approx(float(zero_d.py_func(X)))
    check_fd(nad.grad_jit(lambda x: np.asarray(x[0] * np.cos(x[1])) * 2.0), X)
    np.testing.assert_allclose(grads[0], [X[1], X[0], math.cos(X[2])], rtol=1e-14)


def test_recursive_functions_compiled_for_fixed_signatures():
    # numba/tests/recursion_usecases.py: fib1 is @jit("i8(i8)"), calling itself by name.
    from numba.tests.recursion_usecases import fib1, fib2
    for fib in (fib1, fib2):
        with pytest.raises(nad.NonDifferentiableError,
                           match=r"returns int64 \(an integer or a boolean, which has no "
                                 r"derivative\)"):
            nad.grad_jit(fib).grad(10)
    with pytest.raises(nad.NonDifferentiableError,
                       match=r"the recursive call to fib1: fib1 is compiled for the "
                             r"signatures given to it only \(\(int64,\) -> int64\), and is "
                             r"called with \(float64\)"):
        nad.grad_jit(fib1).grad(10.0)

    @nad.grad_jit
    def scaled(x):
        return x * fib1(10)            # an integer factor: 55
    assert scaled.value_and_grad(2.0) == (110.0, (55.0,))


def _slow_to_compile(x, n):
    s = 0.0
    for i in range(n):
        s = s * 0.5 + np.sin(x[i % x.shape[0]])
    return s


def test_a_long_compile_says_what_it_compiles(monkeypatch, caplog):
    # Past the threshold, one line names the function and its argument types.
    monkeypatch.setenv("NUMBA_ADSTACK_COMPILE_NOTICE", "0.01")
    with caplog.at_level(logging.WARNING, logger="numba_adstack"):
        g = nad.grad_jit(_slow_to_compile).grad(X.copy(), 4)
    said = [r.getMessage() for r in caplog.records if r.name == "numba_adstack"]
    assert len(said) == 1, said
    assert said[0].startswith("compiling the gradient of _slow_to_compile(array(float64, "
                              "1d, C), int64)"), said
    assert np.isfinite(g[0]).all()
    caplog.clear()
    monkeypatch.setenv("NUMBA_ADSTACK_COMPILE_NOTICE", "0")      # never

    def another(x, n):
        s = 0.0
        for i in range(n):
            s = s * 0.25 + np.cos(x[i % x.shape[0]])
        return s
    with caplog.at_level(logging.WARNING, logger="numba_adstack"):
        nad.grad_jit(another).grad(X.copy(), 4)
    assert not [r for r in caplog.records if r.name == "numba_adstack"]
