"""The buffer idioms of explicit time stepping (buffer_idioms.py), each differentiated with
default options, checked (NUMBA_ADSTACK_CHECKED: every accumulation's shapes, every
adjoint read), and compared with central differences of what Numba computes. The
default run takes every other idiom in 1-d, with loops or whole-array expressions in
turn (compiles are the suite's time; the 2-d forms compile the most);
NUMBA_ADSTACK_TESTS_FULL=1 runs every idiom in all four forms."""
import numba
import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import config
from conftest import FULL_SWEEP, assert_grads_close, fd_grad

import buffer_idioms as B

FORMS = [(1, "loop"), (1, "array"), (2, "array"), (2, "loop")]
CASES = [(name, ndim, style) for k, name in enumerate(B.IDIOMS)
         for j, (ndim, style) in enumerate(FORMS)
         if FULL_SWEEP or (k % 2 == 0 and j == (k // 2) % 2)]
#: What the rewrite refuses, by the construct the message names (none now).
REFUSED = {}


@pytest.mark.parametrize("name,ndim,style", CASES, ids=["%s-%dd-%s" % c for c in CASES])
def test_buffer_idiom(name, ndim, style):
    fn = B.program(name, ndim, style)
    args = B.arguments(ndim)
    g = nad.grad_jit(fn)
    if name in REFUSED:
        with pytest.raises(nad.NonDifferentiableError, match=REFUSED[name]):
            g.grad(*args)
        return
    primal = numba.njit(fn)
    with config.checking():         # every accumulation of the backward checked
        value, grads = g.value_and_grad(*args)
    np.testing.assert_allclose(value, primal(*args), rtol=1e-12)
    assert_grads_close(grads, fd_grad(primal, args), args, rtol=2e-6, atol=1e-8)
