"""``f.grad`` and ``f.value_and_grad`` called from Python: the backward of each argument type
signature is found by Numba's C dispatch (numba_adstack/ad/dispatch/signatures.py) once the first
call has built it. Every call below goes through that table or past it (keywords, defaults,
tuples, a wrong count), and gives what the interpreter's path gives."""
import math
import warnings

import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import AdStackOverflowError, IntegerArgumentWarning
from conftest import assert_grads_close, check_fd, fd_grad

RNG = np.random.default_rng(22)


@nad.grad_jit
def scaled_norm(x, a=2.0):
    s = 0.0
    for i in range(x.shape[0]):
        s += a * x[i] * x[i]
    return math.sqrt(s)


@nad.grad_jit
def smooth_in_place(x, n):
    # Writes into its argument: the caller's array must stay as it was.
    for _ in range(n):
        for i in range(1, x.shape[0]):
            x[i] = 0.5 * (x[i] + math.sin(x[i - 1]))
    return x.sum()


@nad.grad_jit(storage="frame", ad_stack_size=4)
def fixed(x, n):
    v = x[0]
    for _ in range(n):
        v = math.sin(v) * 1.01
    return v


def _sum_pair(p, x):
    return p[0] * x.sum() + p[1] * (x * x).sum()


sum_pair = nad.grad_jit(_sum_pair)


def test_repeated_calls_of_several_signatures_match_finite_differences():
    x = RNG.uniform(0.5, 1.5, 5)
    for _ in range(3):                          # the first call builds, the others find
        check_fd(scaled_norm, x, 3.0)
        check_fd(scaled_norm, x[::2], 3.0)      # a non-contiguous array: its own backward
        check_fd(scaled_norm, x.astype(np.float32), 3.0, rtol=1e-4, atol=1e-5)
        got = scaled_norm.value_and_grad(x, 3.0)
        assert got[0] == pytest.approx(scaled_norm.py_func(x, 3.0), rel=1e-14)
        assert_grads_close(got[1], fd_grad(scaled_norm.py_func, (x, 3.0)), (x, 3.0))


def test_an_integer_argument_is_not_converted_to_a_float_signature():
    x = RNG.uniform(0.5, 1.5, 4)
    float_grad = scaled_norm.grad(x, 2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ints = [scaled_norm.grad(x, 2) for _ in range(3)]
    # The integer gets None (not the float signature's 2.0 converted), warned once, at
    # the caller's line.
    assert all(g[1] is None for g in ints)
    warned = [w for w in caught if issubclass(w.category, IntegerArgumentWarning)]
    assert len(warned) == 1 and warned[0].filename == __file__
    np.testing.assert_allclose(ints[0][0], float_grad[0], rtol=1e-15)
    assert_grads_close(float_grad, fd_grad(scaled_norm.py_func, (x, 2.0)), (x, 2.0))


def test_keywords_defaults_and_wrong_counts_bind_as_python_does():
    x = RNG.uniform(0.5, 1.5, 4)
    want = fd_grad(lambda x: scaled_norm.py_func(x), (x,))
    assert_grads_close((scaled_norm.grad(x)[0],), want, (x,))
    assert_grads_close(scaled_norm.grad(x, a=2.0), scaled_norm.grad(x, 2.0), (x, 2.0),
                       rtol=1e-15)
    with pytest.raises(TypeError, match="too many positional arguments"):
        scaled_norm.grad(x, 1.0, 2.0)
    with pytest.raises(TypeError, match="missing a required argument"):
        scaled_norm.grad()
    with pytest.raises(TypeError, match="unexpected keyword argument 'b'"):
        scaled_norm.grad(x, b=1.0)


def test_the_callers_arrays_are_not_changed():
    x = RNG.uniform(0.5, 1.5, 6)
    for _ in range(3):
        check_fd(smooth_in_place, x, 2)


def test_tuple_arguments_take_the_interpreters_path():
    p, x = (0.5, 1.5), RNG.uniform(0.5, 1.5, 4)
    for _ in range(2):
        g = sum_pair.grad(p, x)
        assert g[0] == pytest.approx((x.sum(), (x * x).sum()), rel=1e-13)
        np.testing.assert_allclose(g[1], p[0] + 2 * p[1] * x, rtol=1e-13)


def test_overflow_is_named_on_every_call_and_the_next_call_that_fits_works():
    x = RNG.uniform(0.1, 0.9, 3)
    check_fd(fixed, x, 3)
    for _ in range(2):
        with pytest.raises(AdStackOverflowError,
                           match=r"backward pass of 'fixed' overflowed .*ad_stack_size=4"):
            fixed.grad(x, 10)
        with pytest.raises(AdStackOverflowError, match="backward pass of 'fixed'"):
            fixed.value_and_grad(x, 10)
    check_fd(fixed, x, 3)
