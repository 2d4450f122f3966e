"""Checked mode (``boundscheck=True``): the backward raises AdjointReadError where it reads
an adjoint array before anything was written into it, and gives the same gradients as
the unchecked backward otherwise (against central finite differences)."""
import numpy as np
import pytest
from numba.core import ir, types

import numba_adstack as nad
from numba_adstack.ad.emit.reverse import Reverse
from numba_adstack.ad.facts.array_facts import ArrayFacts

from conftest import check_fd

X = np.linspace(0.1, 0.9, 5)


def view_scaled_then_added(x):
    w = x * 1.0
    u = w[1:4]
    u *= 0.8
    u += 0.1 * x[0:3]
    return np.sum(w)


def copies_and_rebinding(x, A, n):
    y = np.sin(x)
    z = y.copy()
    y = 0.6 * z + 0.1 * np.sum(z)
    for _ in range(n):
        w = np.copy(y)
        w[1:3] *= 0.8
        y = np.tanh(A @ w) + 0.5 * y
    return np.sum(y * y)


def test_checked_backward_gives_the_gradient_of_copies_views_and_rebinding():
    f = nad.grad_jit(boundscheck=True)(copies_and_rebinding)
    A = np.random.default_rng(3).uniform(-1.0, 1.0, (5, 5))
    check_fd(f, X.copy(), A, 3)
    g = nad.grad_jit(boundscheck=True)(view_scaled_then_added)
    np.testing.assert_allclose(g.grad(X)[0], [1.1, 0.9, 0.9, 0.8, 1.0], rtol=1e-14)
    assert "written(" in g.inspect_adjoint(X)


def _is_view_of_a_getitem_only(self, name):
    """The test of views before in-place results of views counted as views: it lost the
    second in-place update of ``u`` and read its operand's adjoint unwritten."""
    e = self.def_expr(name)
    while isinstance(e, ir.Var):
        e = self.def_expr(e.name)
    return isinstance(e, ir.Expr) and e.op in ("getitem", "static_getitem") \
        and isinstance(self.ty(e.value), types.Array)


def test_a_lost_view_is_two_names_for_one_array_to_the_memory_model(monkeypatch):
    # That fault makes the in-place result of a view a value of its own while the array
    # it writes into is read later: the memory model refuses it before anything is lost.
    monkeypatch.setattr(ArrayFacts, "is_view", _is_view_of_a_getitem_only)
    f = nad.grad_jit(boundscheck=True)(view_scaled_then_added)
    with pytest.raises(nad.NonDifferentiableError, match="writing into 'u' while 'w'"):
        f.grad(X)


def read_in_a_branch(x, c):
    y = x * 2.0
    s = 1.0
    if c > 0:
        s = np.sum(y * y)
    return s + x[1]


def test_checked_backward_catches_an_adjoint_read_before_it_is_written(monkeypatch):
    # A rewrite that took y's adjoint for written where the branch reading y did not run
    # (emit/reverse.py makes it first where nothing may have reached it).
    monkeypatch.setattr(Reverse, "_reached_in_block", lambda self, label, stmt, name: True)
    f = nad.grad_jit(boundscheck=True)(read_in_a_branch)
    with pytest.raises(nad.AdjointReadError, match="'y' at line 65 of 'read_in_a_branch'"):
        f.grad(X, -1.0)


def test_an_adjoint_nothing_reached_is_made_first():
    f = nad.grad_jit(boundscheck=True)(read_in_a_branch)
    check_fd(f, X, -1.0)
    check_fd(f, X, 1.0)
