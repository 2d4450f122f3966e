"""The realistic-program corpus (tests/realistic_programs.py): each program compiled by
numba.njit computes what its pure-Python version computes, its finite-difference
reference is stable (no kink or jump near the chosen arguments), and grad_jit either
refuses it with NonDifferentiableError or gets its gradient right: never a wrong one.
Where grad_jit stands on each case: scripts/realistic_report.py."""
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError, config
from conftest import FULL_SWEEP

from realistic_programs import (all_cases, check_primal, copy_args, gradient_error,
                                reference_gradient)

CASES = all_cases()
IDS = [c.name for c in CASES]

# grad_jit raises something other than NonDifferentiableError on these today.
RAISES_OTHER_ERRORS = set()

# Programs grad_jit differentiates today: a refusal of one of these is a regression.
# Among them, issue 14's: helpers on row views (lennard_jones, coulomb), option pricing
# returning two arrays (black_scholes_loop), zip loops (kde_zip), small-vector n-body,
# regressions trained by gradient descent, solvers taking a jitted objective and its args
# (newton_kepler, golden_section_max), Gauss quadrature built with array arithmetic,
# Jacobi relaxation swapping two arrays (laplace2d), and the enumerate / ndindex / flat /
# row loop forms.
MUST_DIFFERENTIATE = {
    "lennard_jones", "coulomb", "nbody", "laplace2d", "heat2d_slices", "advection_diffusion",
    "bouncing_ball", "damped_oscillator", "exp_series_break_continue",
    "black_scholes_loop", "kde_zip", "logistic_regression_gd", "linear_regression_gd",
    "moving_average", "ema", "mlp_mse", "newton_kepler", "golden_section_max",
    "gauss_legendre", "enumerate_discount", "ndindex_huber", "flat_logsumexp",
    "rows_gaussian_nll", "rnn_history", "ufuncs_on_scalars", "tuple_params",
    "tuple_argument", "helper_tuple_of_arrays", "array_in_loop",
    "rk4_pendulum", "interp_resample", "arc_length_diff",
    # Whole-array NumPy: two index arrays, broadcasting with np.newaxis and masks, norms.
    "cross_entropy_gather", "kmeans_inertia", "power_iteration",
}


def test_the_corpus_is_the_documented_size():
    assert 25 <= len(CASES) <= 40
    assert len(set(IDS)) == len(IDS)
    assert MUST_DIFFERENTIATE <= set(IDS)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_numba_equals_python(case):
    assert check_primal(case) == []
    for a in case.make_args():
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            assert a.dtype == np.float64


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_finite_difference_reference_is_stable(case):
    fine = reference_gradient(case, eps=1e-6)
    coarse = reference_gradient(case, eps=1e-5)
    assert gradient_error(fine, coarse, case.wrt) < 1e-6


# Every other case compiles its backward checked (NUMBA_ADSTACK_CHECKED: each accumulation's
# shapes, each adjoint read); NUMBA_ADSTACK_TESTS_FULL=1 checks them all.
CHECKED = {c.name for k, c in enumerate(CASES) if FULL_SWEEP or k % 2}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grad_jit_refuses_or_is_right(case):
    if case.name in RAISES_OTHER_ERRORS:
        pytest.xfail("grad_jit raises an error other than NonDifferentiableError")
    f = nad.grad_jit(case.target, wrt=case.wrt)
    args = case.make_args()
    call_args = copy_args(args)
    try:
        with config.checking(case.name in CHECKED):
            got = f.grad(*call_args)
    except NonDifferentiableError:
        if case.name in MUST_DIFFERENTIATE:
            raise
        return
    for a, b in zip(call_args, args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg="f.grad changed an argument")
    err = gradient_error(got, reference_gradient(case), case.wrt)
    assert err <= case.rtol, "max normwise relative error %.3g" % err
