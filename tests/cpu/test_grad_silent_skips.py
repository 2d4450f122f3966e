"""What grad once passed over or crashed on: print in the function, integer array
arguments, sums over no axis, np.kron of a number, a function taking *args. Gradients
against analytic values."""
import warnings

import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import IntegerArgumentWarning, NonDifferentiableError


@nad.grad_jit
def printing(a, n):
    print("start", n)
    s = 0.0
    for i in range(n):
        print("step", i)
        s += np.sum(a * a) * i
    return s


def test_print_runs_once_per_call_as_in_the_primal(capfd):
    a = np.array([1.0, 2.0])
    printing(a, 2)
    primal = capfd.readouterr().out
    assert primal.split() == ["start", "2", "step", "0", "step", "1"]
    g, _ = printing.grad(a, 2)
    assert capfd.readouterr().out == primal
    v, (g2, _) = printing.value_and_grad(a, 2)
    assert capfd.readouterr().out == primal
    np.testing.assert_allclose(g, 2.0 * a)          # d/da sum_i i * |a|^2, i = 0, 1
    np.testing.assert_allclose(g2, g)
    assert v == 5.0


def test_an_integer_array_in_float_arithmetic_warns_as_an_integer_does():
    def f(x, k):
        return np.sum(x * k[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gx, gk = nad.grad_jit(f).grad(np.array([0.5, 1.5]), np.array([3, 4]))
    assert gk is None
    np.testing.assert_allclose(gx, [3.0, 3.0])
    assert any(issubclass(w.category, IntegerArgumentWarning) and "'k'" in str(w.message)
               for w in caught)


def test_sum_over_no_axis_and_kron_of_a_number():
    def f(a, s):
        return np.sum(a.sum(axis=()) ** 2) + np.sum(np.kron(s, a) * a)
    a = np.array([0.3, 0.7, 1.1])
    ga, gs = nad.grad_jit(f).grad(a, 2.0)
    np.testing.assert_allclose(ga, 2 * a + 2 * 2.0 * a)
    np.testing.assert_allclose(gs, np.sum(a * a))


def test_a_function_taking_star_args_is_refused_with_what_to_write():
    def f(a, *args):
        return a.sum(*args)
    with pytest.raises(NonDifferentiableError, match=r"it takes \*args.*one tuple"):
        nad.grad_jit(f).grad(np.ones(3))


def test_a_gradient_compile_logs_its_phases(caplog):
    import logging

    @nad.grad_jit
    def logged(x):
        return np.sum(np.cos(x))
    with caplog.at_level(logging.INFO, logger="numba_adstack"):
        g, = logged.grad(np.array([0.5, 1.0]))
    np.testing.assert_allclose(g, -np.sin([0.5, 1.0]))
    text = caplog.text
    assert "gradient of" in text and "logged(array(float64, 1d, C))" in text
    assert "capturing the typed IR" in text and "compiled in" in text
