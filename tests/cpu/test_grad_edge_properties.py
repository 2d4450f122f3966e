"""Property-based test of the edges a user meets: random ``wrt`` values, argument kinds
(int, float, float32, 0-d array, empty array) and zero, NaN and infinite inputs, thrown
at a few functions. Every outcome must be one of:

* a documented error: ``ValueError`` for a bad ``wrt`` when decorating, or the error the
  function itself raises for these arguments;
* a right gradient: against central finite differences where inputs and differences are
  finite, else the IEEE value of the derivative's formula (NaN and inf propagate, as
  docs/errors.md says); None for integer arguments and those ``wrt`` leaves out, with an
  ``IntegerArgumentWarning`` allowed for integers in float arithmetic.

The suite runs a fixed, short sweep (the functions are compiled once per argument types
and ``wrt``); NUMBA_ADSTACK_PROPERTY_EXAMPLES=200 runs a longer one outside it.
"""
import math
import os
import warnings

import numpy as np
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

import numba_adstack as nad
from numba_adstack.ad.dispatch.wrt import wrt_indices

from conftest import fd_grad


def scalar_product(x, y):
    return x * y + np.sin(x)


def scalar_product_grad(x, y):
    return y + np.cos(x), x


def weighted_sines(a, s):
    return np.sum(np.sin(a) * s)


def weighted_sines_grad(a, s):
    # The adjoint reaching sin(a) is s: where it is 0, so is the contribution, whatever
    # cos(a) (an infinite a) is (docs/errors.md, a zero adjoint contributes zero).
    return np.where(s != 0.0, np.cos(a) * s, 0.0), np.sum(np.sin(a))


def recurrence(a, c):
    v = 0.0
    for i in range(a.shape[0]):
        v = v * c + a[i] * a[i]
    return v


def recurrence_grad(a, c):
    n = a.shape[0]
    ga = np.array([2.0 * a[i] * c ** (n - 1 - i) for i in range(n)])
    gc = sum(a[i] * a[i] * (n - 1 - i) * c ** (n - 2 - i) for i in range(n - 1))
    return ga, gc


FUNCTIONS = {f.__name__: (f, g) for f, g in ((scalar_product, scalar_product_grad),
                                              (weighted_sines, weighted_sines_grad),
                                              (recurrence, recurrence_grad))}
SLOTS = {"scalar_product": ("scalar", "scalar"), "weighted_sines": ("array", "scalar"),
         "recurrence": ("array", "scalar")}
WRTS = [None, 0, 1, -1, -2, "x", "y", "a", "s", "c", (0, 1), (1,), 2, -3, 1.5, "z", (0, 7),
        True]
VALUES = [0.0, -0.0, 0.5, -1.25, 2.0, math.nan, math.inf, -math.inf]
_DISPATCHERS = {}


def _dispatcher(name, wrt):
    """One grad_jit function per function and normalised ``wrt``."""
    fn = FUNCTIONS[name][0]
    key = (name, wrt_indices(fn, wrt))
    if key not in _DISPATCHERS:
        _DISPATCHERS[key] = nad.grad_jit(fn, wrt=wrt)
    return _DISPATCHERS[key]


@st.composite
def _argument(draw, slot):
    value = draw(st.sampled_from(VALUES))
    if slot == "scalar":
        kind = draw(st.sampled_from(["float", "int", "float32", "0-d"]))
        if kind == "int":
            return 0 if not math.isfinite(value) else int(value)
        return {"float": float, "float32": np.float32, "0-d": np.array}[kind](value)
    kind = draw(st.sampled_from(["float64", "float32", "empty", "0-d"]))
    if kind == "empty":
        return np.zeros(0)
    if kind == "0-d":
        return np.array(value)
    values = [value] + draw(st.lists(st.sampled_from(VALUES), min_size=0, max_size=2))
    return np.array(values, dtype=kind)


def _is_float_argument(a):
    return isinstance(a, float) or np.asarray(a).dtype.kind == "f"


def _finite(args):
    return all(np.all(np.isfinite(np.asarray(a, dtype=float))) for a in args)


def _check_gradient(name, args, wrt, got, primal=0.0):
    fn, analytic = FUNCTIONS[name]
    chosen = wrt_indices(fn, wrt)
    floats = [np.asarray(a, dtype=np.float64) if np.ndim(a) else float(a) for a in args]
    with np.errstate(all="ignore"):
        want_ieee = analytic(*floats)
        want_fd = fd_grad(fn, floats) if _finite(args) else (None,) * len(args)
    for k, (g, a) in enumerate(zip(got, args)):
        if not _is_float_argument(a) or (chosen is not None and k not in chosen):
            assert g is None, "argument %d: %r" % (k, g)
            continue
        assert np.shape(g) == np.shape(a), (k, np.shape(g))
        if isinstance(a, np.ndarray):
            assert isinstance(g, np.ndarray) and g.dtype == a.dtype, (k, type(g))
        wide = np.asarray(a).dtype == np.float32
        rtol, atol = (1e-4, 1e-5) if wide else (1e-6, 1e-8)
        fd = want_fd[k]
        if fd is not None and np.all(np.isfinite(fd)):
            np.testing.assert_allclose(np.asarray(g, dtype=float), fd, rtol=rtol, atol=atol,
                                       err_msg="argument %d against finite differences" % k)
        if np.isnan(primal) and np.all(np.isnan(g)):
            # The program's own arithmetic made NaN (``0.0 * c`` with an infinite ``c``,
            # which the formula written out never computes): its reverse reads that NaN.
            continue
        np.testing.assert_allclose(np.asarray(g, dtype=float), want_ieee[k], rtol=rtol,
                                   atol=atol, equal_nan=True,
                                   err_msg="argument %d against the formula" % k)


_EXAMPLES = int(os.environ.get("NUMBA_ADSTACK_PROPERTY_EXAMPLES", 0))


@settings(max_examples=_EXAMPLES or 25, deadline=None, database=None,
          derandomize=not _EXAMPLES, phases=(Phase.explicit, Phase.generate),
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_outcome_is_a_gradient_or_a_documented_error(data):
    name = data.draw(st.sampled_from(sorted(FUNCTIONS)))
    wrt = data.draw(st.sampled_from(WRTS))
    fn = FUNCTIONS[name][0]
    note("%s, wrt=%r" % (name, wrt))
    try:
        wrt_indices(fn, wrt)
    except ValueError:
        try:
            nad.grad_jit(fn, wrt=wrt)
        except ValueError as e:
            assert "is not an argument of %s" % name in str(e)
            return
        raise AssertionError("wrt=%r was accepted" % (wrt,))
    args = tuple(data.draw(_argument(slot)) for slot in SLOTS[name])
    note("args=%r" % (args,))
    f = _dispatcher(name, wrt)
    try:
        with np.errstate(all="ignore"):
            primal = fn(*args)
    except Exception as e:                  # the function's own error: grad raises too
        note("primal raised %r" % e)
        try:
            f.grad(*args)
        except Exception:
            return
        raise AssertionError("grad succeeded where %s raised %r" % (name, e))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value, got = f.value_and_grad(*args)
        except Exception as e:
            raise AssertionError("grad raised %r where %s returned %r" % (e, name, primal))
    for w in caught:       # the warning of an integer in float arithmetic, nothing else
        assert issubclass(w.category, nad.IntegerArgumentWarning), w
        assert any(isinstance(a, int) for a in args)
    np.testing.assert_allclose(value, primal, rtol=1e-5, equal_nan=True)
    _check_gradient(name, args, wrt, got, primal)
