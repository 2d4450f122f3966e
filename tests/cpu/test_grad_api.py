"""Calling conventions of grad_jit functions: keyword arguments and defaults."""
import math

import numpy as np
import pytest

import numba_adstack as nad


@nad.grad_jit
def damped(x, n=5, scale=0.9):
    v = x[0]
    for _ in range(n):
        v = math.sin(v) * scale
    return v


def _reference(x0, n, scale):
    # d/dx0 and d/dscale of the recurrence, by the chain rule.
    v, dv_dx, dv_ds = x0, 1.0, 0.0
    for _ in range(n):
        c = math.cos(v)
        dv_dx, dv_ds = scale * c * dv_dx, math.sin(v) + scale * c * dv_ds
        v = math.sin(v) * scale
    return v, dv_dx, dv_ds


def test_keywords_and_defaults_bind_as_in_python():
    x = np.array([0.4])
    v, gx, gs = _reference(0.4, 5, 0.9)
    for call in (lambda: damped.grad(x), lambda: damped.grad(x, 5),
                 lambda: damped.grad(x, scale=0.9), lambda: damped.grad(x, n=5, scale=0.9)):
        g = call()
        assert g[0][0] == pytest.approx(gx, rel=1e-12)
        assert g[1] is None
        assert g[2] == pytest.approx(gs, rel=1e-12)
    value, g = damped.value_and_grad(x, n=3, scale=1.2)
    v3, gx3, gs3 = _reference(0.4, 3, 1.2)
    assert value == pytest.approx(v3, rel=1e-14)
    assert g[0][0] == pytest.approx(gx3, rel=1e-12)
    assert g[2] == pytest.approx(gs3, rel=1e-12)
    src = damped.inspect_adjoint(x, n=3)
    assert src == damped.inspect_adjoint(x, 3, 0.9)
    compile(src, "<adjoint>", "exec")
    with pytest.raises(TypeError):
        damped.grad(x, bogus=1)
