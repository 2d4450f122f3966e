"""Property-based tests: gradients of small random programs against finite differences.

A tiny generator writes Python source with straight-line float code, loops (static, dynamic,
triangular, reversed, while), branches on floats and integers, break/continue, tuple swaps and
integer variables used as indices. A second generator adds a work array written in place in
every spelling Numba compiles (stores, ``out=`` by position and keyword, augmented operators
on the array and its views, ``operator.i*``, ``.flat[...] =``, slice stores, ``fill``) and
complex scalar intermediates. The operations have bounded derivatives, so central finite
differences of the pure-Python function are an accurate reference; examples that sit on a
branch threshold (where finite differences disagree with themselves) are discarded.
"""
import math
import operator
import os

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, assume, given, note, settings
from hypothesis import strategies as st

import numba_adstack as nad

from conftest import assert_grads_close, fd_grad

FLOATS = ("f0", "f1", "f2")

# NUMBA_ADSTACK_PROPERTY_EXAMPLES=200 runs a longer sweep of fresh programs outside the suite
# (pytest --hypothesis-seed=N reproduces one); the suite runs a fixed, short one.
_EXAMPLES = int(os.environ.get("NUMBA_ADSTACK_PROPERTY_EXAMPLES", 0))
_SWEEP = dict(deadline=None, database=None, derandomize=not _EXAMPLES,
              phases=(Phase.explicit, Phase.generate),
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


class _Gen:
    """Draws one program from hypothesis' ``data`` strategy."""

    def __init__(self, draw):
        self.draw = draw
        self.loop_depth = 0
        self.loop_vars = []
        self.in_for = False
        self.if_depth = 0
        self.budget = 12  # statements in the whole program, keeps compile times small

    def pick(self, seq):
        return self.draw(st.sampled_from(seq))

    def index(self):
        return self.pick(["i0"] + ["%s %% 3" % v for v in self.loop_vars])

    def fexpr(self):
        a, b = self.pick(FLOATS), self.pick(FLOATS)
        return self.pick([
            "math.sin(%s)" % a,
            "math.cos(%s)" % a,
            "math.tanh(%s + %s)" % (a, b),
            "%s * %s" % (a, b),
            "0.5 * (%s + %s)" % (a, b),
            "%s - 0.3 * %s" % (a, b),
            "x[%s] * %s" % (self.index(), a),
            "a * math.sin(%s)" % b,
            "(%s if %s > 0.1 else 0.5 * %s)" % (a, b, b),
        ])

    def stmt(self, ind):
        self.budget -= 1
        choices = ["assign", "assign", "carried", "swap", "int"]
        if self.budget > 0 and self.if_depth < 2:
            choices.append("if")
        if self.budget > 0 and self.loop_depth < 2:
            choices += ["for", "for", "while"]
        if self.in_for:
            choices += ["break", "continue"]
        kind = self.pick(choices)
        pad = "    " * ind
        t = self.pick(FLOATS)
        if kind == "assign":
            return [pad + "%s = 0.6 * %s" % (t, self.fexpr())]
        if kind == "carried":
            return [pad + "%s = 0.5 * %s + 0.4 * %s" % (t, t, self.fexpr())]
        if kind == "swap":
            u = self.pick([f for f in FLOATS if f != t])
            return [pad + "%s, %s = %s, 0.5 * %s + 0.4 * %s" % (t, u, u, t, self.fexpr())]
        if kind == "int":
            step = self.pick(["1", "2"] + self.loop_vars)
            return [pad + "i0 = (i0 + %s) %% 3" % step]
        if kind == "if":
            cond = self.pick(["%s > 0.2" % self.pick(FLOATS), "i0 == 1",
                              "%s < %s" % (self.pick(FLOATS), self.pick(FLOATS))]
                             + ["%s %% 2 == 0" % v for v in self.loop_vars])
            self.if_depth += 1
            out = [pad + "if %s:" % cond] + self.block(ind + 1)
            tail = self.pick(["", "else", "elif"])
            if tail == "elif":
                out += [pad + "elif %s > -0.2:" % self.pick(FLOATS)] + self.block(ind + 1)
            if tail:
                out += [pad + "else:"] + self.block(ind + 1)
            self.if_depth -= 1
            return out
        if kind == "break":
            return [pad + "if %s > 0.7:" % self.pick(FLOATS), pad + "    break"]
        if kind == "continue":
            return [pad + "if %s %% 2 == 1:" % self.loop_vars[-1], pad + "    continue"]
        v = "j%d" % self.loop_depth
        if kind == "for":
            rng = self.pick(["range(n)", "range(3)", "range(i0, n)", "range(n - 1, -1, -1)",
                             "range(1, n + 1, 2)"])
            head = [pad + "for %s in %s:" % (v, rng)]
            saved = self.in_for
            self.in_for = True
            self.loop_depth += 1
            self.loop_vars.append(v)
            body = self.block(ind + 1)
            self.loop_vars.pop()
            self.loop_depth -= 1
            self.in_for = saved
            return head + body
        # while: a counted while loop (rotated by CPython into guard + bottom test).
        saved = self.in_for
        self.in_for = False
        self.loop_depth += 1
        self.loop_vars.append(v)
        body = self.block(ind + 1)
        self.loop_vars.pop()
        self.loop_depth -= 1
        self.in_for = saved
        return ([pad + "%s = 0" % v, pad + "while %s < n:" % v] + body
                + [pad + "    %s += 1" % v])

    def block(self, ind):
        out = self.stmt(ind)
        for _ in range(self.draw(st.integers(0, 2))):
            if self.budget <= 0:
                break
            out += self.stmt(ind)
        return out

    def program(self):
        lines = ["def f(x, a, n):", "    f0 = x[0]", "    f1 = x[1]", "    f2 = a * x[2]",
                 "    i0 = 0"]
        for _ in range(self.draw(st.integers(1, 3))):
            lines += self.stmt(1)
        lines.append("    return f0 + 0.7 * f1 - 0.3 * f2")
        return "\n".join(lines) + "\n"


    def parallel_program(self):
        """The same statements inside the body of a ``prange`` loop over paths whose
        results are summed: the shape the parallel backward takes."""
        lines = ["def f(x, a, n):", "    total = 0.0",
                 "    for p in numba.prange(x.shape[0]):",
                 "        f0 = x[p]", "        f1 = x[(p + 1) % x.shape[0]]",
                 "        f2 = a * x[p]", "        i0 = 0"]
        self.budget = 8
        for _ in range(self.draw(st.integers(1, 2))):
            lines += self.stmt(2)
        lines.append("        total += f0 + 0.7 * f1 - 0.3 * f2")
        lines.append("    return total")
        return "\n".join(lines) + "\n"


class _ArrayGen(_Gen):
    """Programs that also write a work array ``w`` (a copy of ``x``) in place."""

    WRITES = (
        "w[{i}] = 0.6 * {e}",
        "w += 0.3 * {e}",
        "w[1:] *= 0.8 + 0.1 * w[:-1]",
        "w[:2] -= 0.2 * x[1:]",
        "np.sin(w, w)",
        "np.multiply(w, 0.5 + 0.3 * {e}, out=w)",
        "np.add(w, x, w)",
        "w.flat[{i}] = 0.5 * {e}",
        "operator.imul(w, 0.9)",
        "w[:] = 0.5 * w + 0.2 * x",
        "w.fill(0.4 * {e})",
        "{t} = 0.5 * abs(complex({e}, 0.5 * {u}))",
        "{t} = 0.6 * (w[{i}] * {u})",
        "{t} = 0.3 * np.sum(w)",
    )

    def stmt(self, ind):
        if self.budget > 0 and self.draw(st.integers(0, 2)) == 0:
            self.budget -= 1
            t, u = self.pick(FLOATS), self.pick(FLOATS)
            line = self.pick(self.WRITES).format(i=self.index(), e=self.fexpr(), t=t, u=u)
            return ["    " * ind + line]
        return super().stmt(ind)

    def program(self):
        lines = ["def f(x, a, n):", "    w = x * 1.0", "    f0 = x[0]", "    f1 = x[1]",
                 "    f2 = a * x[2]", "    i0 = 0"]
        for _ in range(self.draw(st.integers(1, 3))):
            lines += self.stmt(1)
        lines.append("    return f0 + 0.7 * f1 - 0.3 * f2 + 0.2 * np.sum(w * x)")
        return "\n".join(lines) + "\n"


@st.composite
def array_programs(draw):
    return _ArrayGen(draw).program()


@st.composite
def programs(draw):
    return _Gen(draw).program()


@st.composite
def parallel_programs(draw):
    return _Gen(draw).parallel_program()


def _fd_is_reliable(fn, args):
    """Finite differences with two step sizes agree: no branch threshold nearby."""
    g1 = fd_grad(fn, args, eps=1e-6)
    g2 = fd_grad(fn, args, eps=1e-4)
    for u, v in zip(g1, g2):
        if u is not None and not np.allclose(u, v, rtol=1e-3, atol=1e-5):
            return None
    return g1


def _check_program(src, seed, n, size=3, refusal_ok=False, **options):
    """The generated ``f(x, a, n)``'s value and gradient against Python and finite
    differences (an example on a branch threshold is discarded); with ``refusal_ok``, a
    refusal naming the construct and its line passes (never a wrong gradient)."""
    note(src)
    ns = {"math": math, "np": np, "numba": numba, "operator": operator}
    exec(compile(src, "<generated>", "exec"), ns)
    py = ns["f"]
    rng = np.random.default_rng(seed)
    args = (rng.uniform(-1.0, 1.0, size), float(rng.uniform(0.5, 1.5)), n)
    want = _fd_is_reliable(py, args)
    assume(want is not None)
    f = nad.grad_jit(py, **options)
    try:
        value, got = f.value_and_grad(*args)
    except nad.NonDifferentiableError as e:
        if not refusal_ok:
            raise
        assert "line" in str(e), str(e)
        return
    assert value == pytest.approx(py(*args), rel=1e-12, abs=1e-14)
    assert_grads_close(got, want, args, rtol=1e-5, atol=1e-7)


@settings(max_examples=_EXAMPLES or 10, **_SWEEP)
@given(src=programs(), seed=st.integers(0, 2 ** 16), n=st.sampled_from([2, 3, 1, 0]))
def test_random_program_gradient_matches_finite_differences(src, seed, n):
    _check_program(src, seed, n)


@settings(max_examples=_EXAMPLES or 4, **_SWEEP)
@given(src=parallel_programs(), seed=st.integers(0, 2 ** 16), n=st.sampled_from([2, 3, 0]))
def test_random_parallel_program_gradient_matches_finite_differences(src, seed, n):
    _check_program(src, seed, n, size=5, parallel=True)


@settings(max_examples=_EXAMPLES or 8, **_SWEEP)
@given(src=array_programs(), seed=st.integers(0, 2 ** 16), n=st.sampled_from([2, 3, 1, 0]))
def test_random_program_writing_arrays_matches_finite_differences(src, seed, n):
    _check_program(src, seed, n, refusal_ok=True)
