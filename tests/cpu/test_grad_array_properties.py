"""Property-based tests: gradients of small random whole-array programs against finite
differences of the pure-Python function.

The generator writes programs over a matrix ``A`` (3 x 4), vectors ``u`` (4) and ``v`` (3),
a float ``s`` and a run-time trip count ``n``: element-wise arithmetic and ufuncs with
broadcasting between matrices, vectors and scalars, ``np.sum``, ``np.dot`` and ``@``,
``.T``, slices such as ``x[1:]`` read and written (``x[1:] = x[1:] + y``, ``x[1:] += y``,
``x[1:] *= y``...), views taken under a name and updated in place once or twice (``w =
p[1:]; w *= c; w += e``), in-place ``+=``, ``-=`` and ``*=`` on whole arrays and their
``operator.iadd``/``isub``/``imul`` forms (on slices too), writes through a ufunc's
``out`` (positional, keyword, aliased with its input) and through ``.flat``, copies
(``np.copy(e)``, ``e.copy()``, ``z = p.copy()`` then ``p`` rebound from ``z``), matrix
products, ``np.zeros`` scratch arrays, and arrays updated or rebound to fresh values in
``for`` loops over ``range(n)`` (``p = np.sin(...)``, a time step), also where the loop
writes into them through slices. It leaves out what the rewrite refuses with a clear error
(an argument updated in place inside a loop).
Every expression has a shape class (``M`` 3 x 4, ``K`` 4, ``R`` 3, ``S`` a float) that the
generator keeps, so every program is well-typed. The functions used are smooth with
bounded derivatives near the inputs, so central differences are an accurate reference.

``NUMBA_ADSTACK_PROPERTY_EXAMPLES=60`` runs a longer sweep of fresh programs outside the
suite (``pytest --hypothesis-seed=N`` reproduces one); the suite runs a fixed, short one,
since every example compiles a primal and its backward.
"""
import operator
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

import numba_adstack as nad

from conftest import assert_grads_close, fd_grad

_EXAMPLES = int(os.environ.get("NUMBA_ADSTACK_PROPERTY_EXAMPLES", 0))
_SWEEP = dict(deadline=None, database=None, derandomize=not _EXAMPLES,
              phases=(Phase.explicit, Phase.generate),
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Variables of the generated function by shape class: the arguments first, then the
# locals the preamble creates (the only names statements assign to, besides in-place
# updates of the argument vectors).
ARGUMENTS = {"M": ["A"], "K": ["u"], "R": ["v"], "S": ["s"]}
LOCALS = {"M": ["B"], "K": ["p"], "R": ["q"], "S": ["t"]}
PREAMBLE = ["    B = np.zeros((3, 4))", "    p = 0.5 * u", "    q = np.zeros(3)",
            "    t = 0.5 * s"]
UFUNCS = ["np.sin(%s)", "np.cos(%s)", "np.tanh(%s)", "np.log(1.0 + %s * %s)",
          "np.sqrt(1.0 + %s * %s)", "np.exp(0.3 * np.tanh(%s))"]


class _ArrayGen:
    """Draws one program from hypothesis' ``data`` strategy."""

    def __init__(self, draw):
        self.draw = draw
        self.fresh = 0   # numbers the copies and views the program names
        self.loop_depth = 0
        self.budget = 7  # statements in the whole program: compile time grows with it
        # Locals written through slices inside loops are never updated in place as a
        # whole inside loops; the others are never sliced.
        self.sliced = {cls for cls in ("M", "K", "R") if draw(st.booleans())}
        # ... unless rebound to a fresh value (arithmetic, a copy): no second name exists.
        self.rebind_sliced = draw(st.booleans())

    def pick(self, seq):
        return self.draw(st.sampled_from(seq))

    def name(self, cls):
        return self.pick(ARGUMENTS[cls] + LOCALS[cls])

    def ufunc(self, inner):
        return self.pick(UFUNCS).replace("%s", "(%s)" % inner)

    def expr(self, cls, depth=0):
        """An expression of shape class ``cls``."""
        if depth >= 2:
            return self.name(cls)
        sub = depth + 1
        common = ["name", "ufunc", "scale", "binop", "binop"]
        extra = {
            "M": ["broadcast_vec", "broadcast_scalar", "transpose", "copy", "mat_mat"],
            "K": ["vec_mat", "mat_t_vec", "broadcast_scalar", "copy"],
            "R": ["mat_vec", "broadcast_scalar", "copy", "mat_mat"],
            "S": ["sum", "dot", "slice_dot", "sum_matrix", "sum_slice"],
        }[cls]
        kind = self.pick(common + extra)
        if kind == "name":
            return self.name(cls)
        if kind == "ufunc":
            return self.ufunc(self.expr(cls, sub))
        if kind == "scale":
            return "(%s * %s)" % (self.pick(["0.5", "-0.7", "1.3"]), self.expr(cls, sub))
        if kind == "binop":
            op = self.pick(["+", "-", "*"])
            return "(%s %s %s)" % (self.expr(cls, sub), op, self.expr(cls, sub))
        if kind == "broadcast_vec":      # (3, 4) with (4,)
            op = self.pick(["+", "-", "*"])
            pair = [self.expr("M", sub), self.expr("K", sub)]
            if self.draw(st.booleans()):
                pair.reverse()
            return "(%s %s %s)" % (pair[0], op, pair[1])
        if kind == "broadcast_scalar":
            op = self.pick(["+", "-", "*"])
            return "(%s %s %s)" % (self.expr(cls, sub), op, self.expr("S", sub))
        if kind == "transpose":          # (4, 3) times (3,) broadcasts along rows of M.T
            return "(0.5 * ((%s).T * %s).T)" % (self.expr("M", sub), self.expr("R", sub))
        if kind == "copy":               # a fresh copy of a name or of a computed array
            inner = self.pick([self.name(cls), self.expr(cls, sub)])
            return self.pick(["np.copy(%s)", "(%s).copy()"]) % inner
        if kind == "mat_mat":            # (3, 3) @ (3, 4) or (3, 3) @ (3,), scaled down
            a, b = self.expr("M", sub), self.expr("M", sub)
            return "(0.3 * ((%s) @ (%s).T) @ %s)" % (a, b, self.expr(cls, sub))
        if kind == "vec_mat":
            a, b = self.expr("R", sub), self.expr("M", sub)
            return self.pick(["np.dot(%s, %s)", "(%s @ %s)"]) % (a, b)
        if kind == "mat_t_vec":
            a, b = self.expr("M", sub), self.expr("R", sub)
            return self.pick(["np.dot((%s).T, %s)", "((%s).T @ %s)"]) % (a, b)
        if kind == "mat_vec":
            a, b = self.expr("M", sub), self.expr("K", sub)
            return self.pick(["np.dot(%s, %s)", "(%s @ %s)"]) % (a, b)
        if kind == "sum":
            return "np.sum(%s)" % self.expr(self.pick(["K", "R"]), sub)
        if kind == "dot":                # of two vectors: np.dot only (`x @ y` is refused)
            c = self.pick(["K", "R"])
            return "np.dot(%s, %s)" % (self.expr(c, sub), self.expr(c, sub))
        if kind == "slice_dot":          # x[1:] and x[:-1] of one vector
            x = self.name("K")
            return "np.sum(%s[1:] * %s[:-1])" % (x, x)
        if kind == "sum_matrix":
            return "np.sum(%s)" % self.expr("M", sub)
        x = self.name("M")               # sum_slice
        return "np.sum(%s[1:] * %s[:-1])" % (x, x)

    def stmt(self, ind):
        self.budget -= 1
        choices = ["assign", "inplace", "inplace", "slice_update", "copy_rebind",
                   "view_update"]
        if self.loop_depth:
            choices.append("step")
        if self.budget > 0 and self.loop_depth < 2:
            choices += ["for", "for"]
        kind = self.pick(choices)
        pad = "    " * ind
        cls = self.pick(["M", "K", "R", "S"])
        rebinds = ("assign", "inplace", "copy_rebind", "step")
        if kind in rebinds and cls in self.sliced and self.loop_depth and (
                kind == "inplace" or not self.rebind_sliced):
            kind = "slice_update"
        elif kind in ("slice_update", "view_update") and cls not in self.sliced:
            kind = "inplace"
        elif kind in ("copy_rebind", "step") and cls == "S":
            kind = "assign"
        if kind == "assign":
            target = LOCALS[cls][0]
            keep = "0.5 * %s + " % target if self.loop_depth else ""
            return [pad + "%s = %s0.5 * %s" % (target, keep, self.expr(cls))]
        if kind == "copy_rebind":        # z = y.copy(), then y rebound from the copy
            target, z = LOCALS[cls][0], self.fresh_name("z")
            copied = self.pick([target, target, self.expr(cls)])
            out = [pad + "%s = %s" % (z, self.pick(["np.copy(%s)", "(%s).copy()"]) % copied)]
            if self.draw(st.booleans()):     # the copy changed in place: y must not see it
                out.append(pad + "%s *= (1.0 + 0.3 * np.tanh(%s))" % (z, self.expr(cls)))
            out.append(pad + "%s = 0.6 * %s + 0.2 * %s" % (
                target, z, self.pick([self.expr("S"), self.expr(cls)])))
            return out
        if kind == "step":               # y = f(g(A) @ y): a time step, nothing kept
            target = LOCALS[cls][0]
            return [pad + "%s = %s" % (target, self.ufunc(self.expr(cls)))]
        if kind == "view_update":        # w = y[1:]; w op= e; w op= e': y changes
            return self.view_update(pad, cls)
        if kind == "inplace":
            if cls == "S":
                return [pad + "t += 0.5 * %s" % self.expr("S")]
            # the argument vectors too, outside loops (inside one, an argument updated in
            # place and read after the loop is refused: the program must copy it first)
            given = ARGUMENTS[cls] if cls != "M" and not self.loop_depth else []
            target = self.pick(LOCALS[cls] + given)
            op = self.pick(["+=", "-=", "*="])
            rhs_cls = self.pick([cls, "S"] + (["K"] if cls == "M" else []))
            rhs = self.expr(rhs_cls)
            if op == "*=":               # a factor near 1 keeps the values bounded
                rhs = "(1.0 + 0.3 * np.tanh(%s))" % rhs
            else:
                rhs = "0.5 * %s" % rhs
            if self.draw(st.booleans()):     # the function form writes the same memory
                return [pad + "operator.%s(%s, %s)" % (
                    {"+=": "iadd", "-=": "isub", "*=": "imul"}[op], target, rhs)]
            return [pad + "%s %s %s" % (target, op, rhs)]
        if kind == "slice_update":
            op = self.pick(["+", "-"])
            if cls == "M":
                target, src = "B", "0.5 * %s[:-1]" % self.name("M")
            else:
                target = LOCALS[cls][0]
                # x[1:] of a 4-vector has the length of an R vector; of an R vector, 2
                other = self.expr("R") if cls == "K" else self.expr("S")
                src = "0.5 * %s" % self.pick(["%s[:-1]" % self.name(cls), other])
            form = self.pick(["written", "augmented", "scaled", "out", "function", "flat"])
            if form == "out":            # into the whole array through a ufunc's out
                e = self.expr(cls)
                return [pad + self.pick(["np.tanh(%s, %s)" % (e, target),
                                         "np.sin(%s, out=%s)" % (e, target),
                                         "np.multiply(%s, 0.5, %s)" % (target, target)])]
            if form == "function":       # operator.i* on the view
                return [pad + "operator.i%s(%s[1:], %s)" % (
                    {"+": "add", "-": "sub"}[op], target, src)]
            if form == "flat":           # one element through .flat
                return [pad + "%s.flat[1] = 0.5 * %s" % (target, self.expr("S"))]
            if form == "written":
                return [pad + "%s[1:] = %s[1:] %s %s" % (target, target, op, src)]
            if form == "augmented":
                return [pad + "%s[1:] %s= %s" % (target, op, src)]
            # *= and /= by a factor near 1 keep the values bounded
            return [pad + "%s[1:] %s= (1.0 + 0.3 * np.tanh(%s))" % (
                target, self.pick(["*", "/"]), src)]
        v = "j%d" % self.loop_depth
        self.loop_depth += 1
        body = self.block(ind + 1)
        self.loop_depth -= 1
        return [pad + "for %s in range(n):" % v] + body

    def fresh_name(self, stem):
        self.fresh += 1
        return "%s%d" % (stem, self.fresh)

    def view_update(self, pad, cls):
        """A view of a sliced local, updated in place once or twice through its name."""
        w = self.fresh_name("w")
        if cls == "M":
            view, rhs = self.pick([("B[1:]", ["0.5 * %s[:-1]" % self.name("M"),
                                              self.expr("K"), self.expr("S")]),
                                   ("B[:, 1:]", ["0.5 * %s[:, :-1]" % self.name("M"),
                                                 self.expr("S")])])
        elif cls == "K":
            view, rhs = "p[1:]", ["%s[:-1]" % self.name("K"), self.expr("R"),
                                  self.expr("S")]
        else:
            view, rhs = "q[1:]", ["%s[:-1]" % self.name("R"), self.expr("S")]
        out = [pad + "%s = %s" % (w, view)]
        for _ in range(self.draw(st.integers(1, 2))):
            op = self.pick(["+=", "-=", "*="])
            e = self.pick(rhs)
            e = "(1.0 + 0.3 * np.tanh(%s))" % e if op == "*=" else "0.5 * %s" % e
            out.append(pad + "%s %s %s" % (w, op, e))
        return out

    def block(self, ind):
        out = self.stmt(ind)
        for _ in range(self.draw(st.integers(0, 2))):
            if self.budget <= 0:
                break
            out += self.stmt(ind)
        return out

    def program(self):
        lines = ["def f(A, u, v, s, n):"] + PREAMBLE
        for _ in range(self.draw(st.integers(1, 3))):
            lines += self.stmt(1)
        lines.append("    return (np.sum(np.sin(B) * A) + np.dot(p, u) + np.sum(q * v) + t"
                     " + 0.3 * np.sum(u))")
        return "\n".join(lines) + "\n"


@st.composite
def array_programs(draw):
    return _ArrayGen(draw).program()


def _arguments(seed, n):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1.0, 1.0, (3, 4)), rng.uniform(-1.0, 1.0, 4),
            rng.uniform(-1.0, 1.0, 3), float(rng.uniform(0.5, 1.5)), n)


def check_program(src, seed, n):
    """``grad_jit`` of the program ``src`` against central differences of its Python
    function at random arguments."""
    ns = {"np": np, "operator": operator}
    exec(compile(src, "<generated>", "exec"), ns)
    py = ns["f"]
    args = _arguments(seed, n)
    want = fd_grad(py, args)
    f = nad.grad_jit(py)
    value, got = f.value_and_grad(*args)
    assert value == pytest.approx(py(*args), rel=1e-12, abs=1e-12)
    scale = max(1.0, max(float(np.max(np.abs(w))) for w in want if w is not None))
    assert_grads_close(got, want, args, rtol=1e-5, atol=1e-7 * scale)


@settings(max_examples=_EXAMPLES or 3, **_SWEEP)
@given(src=array_programs(), seed=st.integers(0, 2 ** 16), n=st.sampled_from([2, 3, 0, 1]))
def test_random_array_program_gradient_matches_finite_differences(src, seed, n):
    note(src)
    check_program(src, seed, n)
