"""grad_jit takes every way numba.njit is spelled: signatures (a string, a list, a
Signature), locals=, pipeline_class=, Numba's options; under NUMBA_DISABLE_JIT=1 the
function runs as Python. Each against numba.njit's primal and the analytic gradient."""
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

import numba_adstack as nad


def f(x):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += np.sin(x[i]) * x[i]
    return acc


X = np.array([0.3, 0.7, 1.1])
WANT = np.sin(X) + X * np.cos(X)

SPELLINGS = {
    "signature string": (("f8(f8[:])",), {}),
    "list of signatures": ((["f8(f8[:])", "f4(f4[:])"],), {}),
    "Signature object": ((numba.float64(numba.float64[:]),), {}),
    "locals": ((), {"locals": {"acc": numba.float32}}),
    "pipeline_class": ((), {"pipeline_class": numba.core.compiler.Compiler}),
    "Numba's options": ((), {"boundscheck": True, "debug": False, "inline": "never",
                             "no_cpython_wrapper": False, "no_cfunc_wrapper": True,
                             "forceinline": False, "_nrt": True, "fastmath": False}),
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_every_spelling_of_njit(spelling):
    args, kwargs = SPELLINGS[spelling]
    g = nad.grad_jit(*args, **kwargs)(f)
    assert g(X) == numba.njit(*args, **kwargs)(f)(X)
    rtol = 1e-6 if "locals" in kwargs else 1e-12       # a float32 accumulator
    np.testing.assert_allclose(g.grad(X)[0], WANT, rtol=rtol)
    if args:                                            # compiled now, for those only
        assert len(g.signatures) == (len(args[0]) if isinstance(args[0], list) else 1)


def test_disable_jit_runs_the_function_as_python():
    code = ("import numpy as np, numba_adstack as nad\n"
            "@nad.grad_jit\n"
            "def f(x):\n"
            "    return float(np.sum(x * x))\n"
            "assert not hasattr(f, 'signatures') and f(np.ones(3)) == 3.0\n"
            "try:\n"
            "    f.grad(np.ones(3))\n"
            "except RuntimeError as e:\n"
            "    assert 'NUMBA_DISABLE_JIT' in str(e), e\n"
            "else:\n"
            "    raise AssertionError('grad ran')\n")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)
