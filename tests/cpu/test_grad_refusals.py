"""grad_jit on the CPU, constructs that cannot be differentiated: a NonDifferentiableError
naming the function, the construct and its line, the primal unaffected; a call without a
rule off the gradient path is fine.
"""
import math
import re

import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

RNG = np.random.default_rng(1234)
X8 = RNG.uniform(0.1, 0.9, 8)


# ---------------------------------------------------------------------------------------
# Constructs that cannot be differentiated
# ---------------------------------------------------------------------------------------
def uses_spacing(x, n):
    s = 0.0
    for i in range(n):
        s += np.spacing(x[i]) * x[i]
    return s


def _line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return first + k
    raise AssertionError(text)


@pytest.mark.parametrize("fn,args,what,line", [
    (uses_spacing, (X8, 4), "spacing", "np.spacing"),
])
def test_non_differentiable_construct_raises(fn, args, what, line):
    f = nad.grad_jit(fn)
    with pytest.raises(NonDifferentiableError) as ei:
        f.grad(*args)
    msg = str(ei.value)
    assert fn.__name__ in msg
    assert what in msg
    assert re.search(r"(:|line )%d\b" % _line_of(fn, line), msg), msg
    # The primal is unaffected.
    assert f(*args) == pytest.approx(fn(*args), rel=1e-12)


def test_no_rule_off_the_gradient_path_is_fine():
    def f(x, n):
        s = 0.0
        for i in range(n):
            s += x[i] * math.gamma(float(i) + 0.5)
        return s
    g = nad.grad_jit(f)
    gx, _ = g.grad(X8.copy(), 4)
    want = np.zeros(8)
    want[:4] = [math.gamma(float(i) + 0.5) for i in range(4)]
    np.testing.assert_allclose(gx, want, rtol=1e-14)
