"""Functions as values: a jitted function passed to a solver, a quadrature routine or the
differentiated function itself, called with ``*args``, picked out of a tuple, nested;
and the NonDifferentiableError of what stays unsupported. Gradients against finite
differences (funcval_helpers.fd_tree) or analytic values."""
import math

import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

from funcval_helpers import (check_tree, golden_max, kepler, kepler_prime, newton,
                             newton_while, simpson)


# ---------------------------------------------------------------------- solvers
@nad.grad_jit
def orbit(M, e):
    total = 0.0
    for i in range(M.shape[0]):
        E = newton(kepler, M[i], kepler_prime, args=(e, M[i]))
        total += math.cos(E) - e
    return total


def test_newton_with_args_in_a_loop():
    check_tree(orbit, np.array([0.3, 1.1, 2.5]), 0.4, rtol=1e-6)


def _kepler_root_derivatives(e, M):
    E = newton(kepler, M, kepler_prime, args=(e, M))
    d = 1.0 - e * math.cos(E)
    return E, math.sin(E) / d, 1.0 / d


@nad.grad_jit
def eccentric_anomaly(e, M):
    return newton_while(kepler, M, kepler_prime, args=(e, M))


def test_newton_while_loop_matches_the_implicit_function_theorem():
    E, dE_de, dE_dM = _kepler_root_derivatives(0.3, 1.2)
    got = eccentric_anomaly.grad(0.3, 1.2)
    np.testing.assert_allclose(got, (dE_de, dE_dM), rtol=1e-9)
    assert eccentric_anomaly(0.3, 1.2) == pytest.approx(E, abs=1e-13)


@numba.njit
def utility(c, wealth, beta, R):
    return math.log(c) + beta * math.log(R * (wealth - c)) - 0.1 * (c - 1.0) ** 2


@nad.grad_jit
def best_utility(wealth, beta, R):
    c_star, v_star = golden_max(utility, 1e-6, wealth - 1e-6, args=(wealth, beta, R))
    return v_star


def test_golden_section_maximiser_with_a_jitted_objective():
    check_tree(best_utility, 3.0, 0.9, 1.05, rtol=1e-5)


@numba.njit
def gaussian_wave(x, a, b):
    return math.exp(-a * x * x) * math.cos(b * x)


@nad.grad_jit
def wave_integral(a, b, lo, hi):
    return simpson(gaussian_wave, lo, hi, 64, args=(a, b))


def test_quadrature_with_a_jitted_integrand():
    got = check_tree(wave_integral, 0.7, 1.3, -1.0, 2.0, rtol=1e-6)
    # The limits: the integrand there (up to the rule's error).
    assert got[3] == pytest.approx(gaussian_wave(2.0, 0.7, 1.3), rel=1e-4)
    assert got[2] == pytest.approx(-gaussian_wave(-1.0, 0.7, 1.3), rel=1e-4)


# ---------------------------------------------------------------------- nesting
@numba.njit
def inner_residual(y, a):
    return y * y * y + a * y - 1.0


@numba.njit
def inner_slope(y, a):
    return 3.0 * y * y + a


@numba.njit
def inner_root(a):
    return newton(inner_residual, 0.5, inner_slope, args=(a,))


@numba.njit
def outer_residual(a, target):
    return inner_root(a) - target


@numba.njit
def outer_slope(a, target):
    h = 1e-6
    return (inner_root(a + h) - inner_root(a - h)) / (2.0 * h)


# Constant trip counts multiply: 60 outer times 3 x 50 inner Newton steps of history is
# more than the frame budget holds.
@nad.grad_jit(storage="heap")
def solver_calling_solver(target, a0):
    # Which a makes the root of y^3 + a y = 1 equal to target? (a = 1/t - t^2.)
    return newton(outer_residual, a0, outer_slope, args=(target,), tol=1e-12, maxiter=60)


def test_solver_calling_solver():
    t = 0.6
    got = solver_calling_solver.grad(t, 1.0)
    assert solver_calling_solver(t, 1.0) == pytest.approx(1.0 / t - t * t, rel=1e-9)
    np.testing.assert_allclose(got[0], -1.0 / t ** 2 - 2.0 * t, rtol=1e-5)
    assert abs(got[1]) < 1e-6


@numba.njit
def run_solver(solver, func, fprime, x0, args):
    return solver(func, x0, fprime, args=args)


@nad.grad_jit
def solver_passed_down(e, M):
    return run_solver(newton, kepler, kepler_prime, M, (e, M)) ** 2


def test_a_solver_passed_as_a_value_to_a_function_that_calls_it():
    check_tree(solver_passed_down, 0.3, 1.2)


# ---------------------------------------------------------------------- own arguments
@nad.grad_jit
def apply(func, x, args):
    return func(x, *args)


@numba.njit
def cubic(x, a, b):
    return a * x ** 3 + b * x


def test_function_argument_gets_none_and_args_tuple_gets_a_tuple():
    got = check_tree(apply, cubic, 1.5, (2.0, -1.0))
    assert got[0] is None
    assert got[1] == pytest.approx(3 * 2.0 * 1.5 ** 2 - 1.0)
    assert got[2] == pytest.approx((1.5 ** 3, 1.5))


@numba.njit
def square_shift(x, a):
    return (x - a) ** 2


@nad.grad_jit
def root_solver_argument(func, fprime, args, x0):
    return newton(func, x0, fprime, args=args)


def test_functions_as_arguments_of_the_differentiated_function():
    E, dE_de, dE_dM = _kepler_root_derivatives(0.3, 1.2)
    got = root_solver_argument.grad(kepler, kepler_prime, (0.3, 1.2), 1.0)
    assert got[:2] == (None, None)
    np.testing.assert_allclose(got[2], (dE_de, dE_dM), rtol=1e-9)
    assert abs(got[3]) < 1e-9
    # Another function is another signature, with its own backward.
    assert apply.grad(square_shift, 2.0, (0.5,)) == (None, 3.0, (-3.0,))


@nad.grad_jit
def tuple_of_functions(fs, a):
    return fs[0](a, 1.0) + fs[1](a, 0.5)


def test_tuple_of_functions():
    got = tuple_of_functions.grad((square_shift, cubic_1), 2.0)
    assert got[0] == (None, None)
    assert got[1] == pytest.approx(2.0 * (2.0 - 1.0) + 3.0 * (2.0 - 0.5) ** 2)


@numba.njit
def cubic_1(x, a):
    return (x - a) ** 3


@numba.njit
def make_args(a):
    return (a, 2.0 * a)


@numba.njit
def two_terms(x, a, b):
    return a * x + b * x * x


@nad.grad_jit
def star_args_from_a_helper(x, a):
    args = make_args(a)
    return two_terms(x, *args)


def test_star_args_tuple_returned_by_a_helper():
    assert star_args_from_a_helper.grad(1.5, 0.5) == pytest.approx((3.5, 6.0))


# ---------------------------------------------------------------------- refusals
def _refused(fn, *args):
    with pytest.raises(NonDifferentiableError) as exc:
        nad.grad_jit(fn).grad(*args)
    return str(exc.value)


def _pick(x, a, c):
    f = square_shift if c > 0 else cubic_1
    return f(x, a)


def _unknown_length(x, a, n):
    args = (a,)
    if n > 2:
        args = (2.0 * a,)
    return square_shift(x, *args)


@numba.njit
def star_params(x, *ps, scale=1.0):
    return x * ps[0] * scale


def _calls_star_params(x, a):
    return star_params(x, a, a)


@pytest.mark.parametrize("fn, args, what", [
    (_pick, (1.5, 0.5, 1.0), "function value chosen at run time"),
    (_unknown_length, (1.5, 0.5, 3), "with *args whose length is not known"),
    (_calls_star_params, (1.5, 0.5), "keyword-only parameters after *ps"),
], ids=["chosen at run time", "*args of unknown length", "callee with *params, scale="])
def test_unsupported_function_values_are_refused_with_function_and_line(fn, args, what):
    numba.njit(fn)(*args)      # Numba compiles them
    msg = _refused(fn, *args)
    assert msg.startswith("cannot differentiate %r" % fn.__name__)
    assert what in msg
    assert "test_grad_funcvals.py\", line" in msg
    assert "Failed in" not in msg


def test_the_documentation_examples_run(tmp_path):
    import re
    from pathlib import Path
    doc = Path(__file__).resolve().parents[2] / "docs" / "functions_as_values.md"
    code = "\n".join(re.findall(r"^```python\n(.*?)^```", doc.read_text(),
                                re.MULTILINE | re.DOTALL))
    path = tmp_path / "functions_as_values.py"     # numba needs the source in a file
    path.write_text(code)
    ns = {"__name__": "functions_as_values_doc"}
    exec(compile(code, str(path), "exec"), ns)
    e, M = 0.3, 1.2
    E = ns["anomaly"](e, M)
    want = (math.sin(E) / (1 - e * math.cos(E)), 1 / (1 - e * math.cos(E)))
    np.testing.assert_allclose(ns["anomaly"].grad(e, M), want, rtol=1e-9)
    np.testing.assert_allclose(ns["anomaly_implicit"].grad(e, M), want, rtol=1e-9)
    np.testing.assert_allclose(ns["anomaly_secant"].grad(e, M), want, rtol=1e-9)
    assert ns["dk"] > 0.0 and ns["dx"].shape == (4,)


# ---------------------------------------------------------------------- cache=True
CACHED_MODEL = '''
import math, numba
import numba_adstack as nad

@numba.njit
def residual(x, a):
    return x * x * x + a * x - 1.0

@numba.njit
def apply_twice(func, x, args):
    return func(func(x, *args), *args)

@nad.grad_jit(cache=True)
def model(func, x, args):
    return apply_twice(func, x, args) + args[0]
'''

CACHED_RUN = '''
import json
import model
g = model.model.grad(model.residual, 0.5, (2.0,))
bw = next(iter(model.model._backwards.values()))
print(json.dumps({"grad": [g[1], list(g[2])], "from_disk": bw.from_disk}))
'''


def _run_cached(src):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(nad.__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("NUMBA_CACHE_DIR", None)
    r = subprocess.run([sys.executable, "run.py"], cwd=src, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_cache_keys_a_function_argument_by_its_source(tmp_path):
    (tmp_path / "model.py").write_text(CACHED_MODEL)
    (tmp_path / "run.py").write_text(CACHED_RUN)
    cold, warm = _run_cached(tmp_path), _run_cached(tmp_path)
    assert not cold["from_disk"] and warm["from_disk"]
    assert warm["grad"] == cold["grad"]
    # y = r(r(x)), r(x) = x^3 + a x - 1: dy/dx = r'(r(x)) r'(x), plus 1 for args[0].
    x, a = 0.5, 2.0
    r1 = x ** 3 + a * x - 1.0
    assert cold["grad"][0] == pytest.approx((3 * r1 ** 2 + a) * (3 * x ** 2 + a))
    (tmp_path / "model.py").write_text(CACHED_MODEL.replace("a * x - 1.0", "a * x - 2.0"))
    edited = _run_cached(tmp_path)
    assert not edited["from_disk"] and edited["grad"] != cold["grad"]
