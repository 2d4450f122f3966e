"""The array-level adjoint rules (numba_adstack/ad/rules/array_rules.py) and their njit
helpers (rules/helpers.py, RULE_HELPERS): each rule's templates, instantiated and compiled
with numba.njit, against central finite differences of ``np.sum(g * f(...))`` in NumPy,
over several shapes, NumPy broadcasting, scalar operands and non-contiguous views.

These tests check values, not speed: LLVM optimises at -O0 while they run, which compiles
their small functions about twice as fast (floating-point results do not depend on the
level without fast-math). Every rule runs; NUMBA_ADSTACK_ARRAY_RULES_FULL=1 adds more shapes,
layouts and arguments per rule (a few minutes)."""
import builtins
import functools
import operator
import os

import numba
import numpy as np
import pytest
from numba import njit

from numba_adstack.ad.rules import array_rules as A
from numba_adstack.ad.rules import vjp_decomp as D
from numba_adstack.ad.rules import vjp_split as S
from numba_adstack.ad.rules.array_rules_numpy import numpy_rules

NUMPY_ORDINARY = set(numpy_rules(A._rule, A._ew))
from numba_adstack.ad.rules.scalar import CALL_RULES
from numba_adstack.ad.rules.helpers import RULE_HELPERS, erf, erfc, sum_to, unreduce
from numba_adstack.ad.rules.vjp_core import suspend_helper_cache

RNG = np.random.default_rng(20240611)
FULL = os.environ.get("NUMBA_ADSTACK_ARRAY_RULES_FULL") == "1"


def ident(v):
    """A short test id: arrays by shape (and ``v`` for a non-contiguous view)."""
    if isinstance(v, np.ndarray):
        return "x".join(map(str, v.shape)) + ("" if v.flags.c_contiguous else "v")
    if isinstance(v, tuple) and v and isinstance(v[0], np.ndarray):
        return "+".join(map(ident, v))
    return getattr(v, "__name__", str(v))


def more(core, extra):
    """The cases of a test: ``core`` always, ``extra`` in the full sweep."""
    return list(core) + (list(extra) if FULL else [])


@pytest.fixture(scope="module", autouse=True)
def _compile_at_O0():
    # (the helpers' disk cache is for code at the process's level: not written meanwhile)
    old = numba.config.OPT
    if int(old) == 0:           # the suite's own level
        yield
        return
    numba.config.OPT = type(old)(0)
    with suspend_helper_cache():
        yield
    numba.config.OPT = old


def rand(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape) if shape else float(RNG.uniform(lo, hi))


# ----------------------------------------------------------------------------- machinery
@functools.lru_cache(maxsize=None)
def _compiled(source):
    ns = dict(RULE_HELPERS, np=np)
    exec(source, ns)
    return njit(no_cfunc_wrapper=True)(ns["vjp"])


def vjp_function(rule, bound, wanted, literals=None, accumulate=False):
    """An njit ``vjp(g, y, *operands)`` returning the contributions to ``wanted``, from
    the rule's templates; also the names of the operands it takes."""
    names = [p for p in rule.params
             if p in A.reads(rule, wanted, literals, accumulate) and bound[p] == p]
    prelude, contribs = A.instantiate(rule, bound, "g", "y", wanted=wanted,
                                      literals=literals, accumulate=accumulate)
    lines = ["def vjp(g, y, %s):" % ", ".join(names)]
    lines += ["    %s = %s" % item for item in prelude]
    lines.append("    return (%s,)" % ", ".join(contribs[p] for p in wanted))
    return _compiled("\n".join(lines)), names


def numeric_vjp(f, args, kwargs, g, k, eps=1e-6):
    """d sum(g * f(...)) / d args[k] by central differences (element i of a tuple
    argument when k is (j, i))."""
    def loss(value):
        a = list(args)
        if isinstance(k, tuple):
            parts = list(a[k[0]])
            parts[k[1]] = value
            a[k[0]] = tuple(parts)
        else:
            a[k] = value
        return float(np.sum(g * f(*a, **kwargs)))
    x0 = args[k[0]][k[1]] if isinstance(k, tuple) else args[k]
    if np.isscalar(x0):
        h = eps * max(1.0, abs(x0))
        return (loss(x0 + h) - loss(x0 - h)) / (2 * h)
    x0 = np.array(x0, dtype=np.float64)
    out = np.zeros(x0.shape)
    for idx in np.ndindex(x0.shape):
        h = eps * max(1.0, abs(x0[idx]))
        xp, xm = x0.copy(), x0.copy()
        xp[idx] += h
        xm[idx] -= h
        out[idx] = (loss(xp) - loss(xm)) / (2 * h)
    return out


def check(key, *args, f=None, rtol=1e-6, atol=1e-8, constant=(), **kwargs):
    """The rule of ``key`` against finite differences, for every float operand; the
    parameters named in ``constant`` are written into the source as constants."""
    rule = A.rule_of(key)
    assert rule is not None, key
    f = f or key
    bound = A.bind(rule, [p for p in rule.params[:len(args)]], {k: k for k in kwargs})
    for p, v in zip(rule.params, args):
        if p in constant:
            bound[p] = repr(v)
    values = dict(zip(rule.params, args), **kwargs)
    y = f(*args, **kwargs)
    g = rand(*np.shape(y)) if np.ndim(y) else rand()
    wanted = [p for p in rule.params[:len(args)] if rule.vjps[p] is not None
              and _is_float(values[p])]
    assert wanted, key
    fn, names = vjp_function(rule, bound, wanted)
    got = fn(g, y, *[values[n] if n in values else _default(rule, n) for n in names])
    for p, contribution in zip(wanted, got):
        k = rule.params.index(p)
        if isinstance(values[p], tuple):
            assert isinstance(contribution, tuple) and len(contribution) == len(values[p])
            for i, (c, a) in enumerate(zip(contribution, values[p])):
                _compare(c, a, numeric_vjp(f, args, kwargs, g, (k, i)), key, p, rtol, atol)
        else:
            _compare(contribution, values[p], numeric_vjp(f, args, kwargs, g, k),
                     key, p, rtol, atol)
    return got


def _is_float(v):
    if isinstance(v, tuple):
        return all(_is_float(x) for x in v)
    return isinstance(v, float) or (isinstance(v, np.ndarray) and v.dtype.kind == "f")


def _default(rule, name):
    return eval(rule.defaults[name], {"np": np})


def _compare(got, operand, want, key, param, rtol, atol):
    msg = "%s, %s" % (getattr(key, "__name__", key), param)
    if isinstance(operand, float):
        assert isinstance(got, float), msg
    else:
        assert isinstance(got, np.ndarray) and got.shape == operand.shape, msg
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=msg)


def spd(n):
    m = rand(n, n)
    return m @ m.T + n * np.eye(n)


# ----------------------------------------------------------------------------- element-wise
# Inputs inside each function's domain, away from kinks.
_DOMAIN = {np.arcsin: (-0.9, 0.9), np.arccos: (-0.9, 0.9), np.arctanh: (-0.9, 0.9),
           np.arccosh: (1.2, 3.0), np.log: (0.2, 2.0), np.log10: (0.2, 2.0),
           np.log2: (0.2, 2.0), np.log1p: (0.2, 2.0), np.sqrt: (0.2, 2.0),
           np.cbrt: (0.2, 2.0), np.reciprocal: (0.5, 2.0), np.tan: (-1.2, 1.2)}
# One key per rule (scipy.special.erf shares the rule of our erf).
UNARY = list({id(r): f for f, r in reversed(list(A.ARRAY_RULES.items()))
              if r.params == ("x",)}.values())


@pytest.mark.parametrize("fn", UNARY, ids=lambda f: f.__name__)
def test_unary_elementwise(fn):
    lo, hi = _DOMAIN.get(fn, (-1.5, 1.5))
    x = rand(3, 4, lo=lo, hi=hi)
    if A.rule_of(fn).vjps["x"] is None:          # piecewise constant: no gradient
        assert fn in (np.floor, np.ceil, np.trunc, np.rint, np.sign)
        return
    check(fn, x)


@pytest.mark.parametrize("x", more([rand(6)[::2], rand(4, 3).T, rand()],
                                   [rand(3, 4)[:, 1]]), ids=ident)
def test_unary_views_and_scalars(x):
    check(np.sin, x)


def _positive(*shape):
    return rand(*shape, lo=0.5, hi=2.0)


UFUNCS2 = [f for f, r in A.ARRAY_RULES.items() if r.params == ("x1", "x2")]
# Operand shapes: equal, broadcast both ways, scalars, non-contiguous views.
SHAPES = {
    "same": lambda: (_positive(3, 4), _positive(3, 4)),
    "col-row": lambda: (_positive(3, 1), _positive(4)),
    "row-matrix": lambda: (_positive(4), _positive(3, 4)),
    "scalar-array": lambda: (float(_positive()), _positive(3, 4)),
    "array-scalar": lambda: (_positive(2, 3), float(_positive())),
    "views": lambda: (_positive(8)[::2], _positive(4, 3).T[1]),
    "transposed": lambda: (_positive(4, 3).T, _positive(3, 1)),
}


@pytest.mark.parametrize("fn", UFUNCS2, ids=lambda f: f.__name__)
def test_binary_ufuncs(fn):
    if fn in A._OPERATORS.values():
        return                                   # the templates of test_operators
    if not any(A.rule_of(fn).vjps.values()):
        return                                   # floor division: no gradient
    a, b = SHAPES["same"]()
    if fn in (np.maximum, np.minimum, np.fmax, np.fmin):
        b = a + np.where(rand(3, 4) > 0, 0.3, -0.3)      # no ties
    if fn in (np.mod, np.fmod):
        a = a * 5.0                              # away from the jumps of a mod b
        a = np.where(np.abs(np.mod(a, b) - b / 2) > 0.45 * b, a + 0.5 * b, a)
    check(fn, a, b)


OPERATORS = {operator.add: "col-row", operator.sub: "scalar-array",
             operator.mul: "col-row", operator.truediv: "array-scalar",
             operator.pow: "row-matrix", operator.mod: "same"}


@pytest.mark.parametrize("fn", list(OPERATORS), ids=lambda f: f.__name__)
def test_operators(fn):
    """Operators have their ufunc's templates, with operands named a and b."""
    ufunc = A._OPERATORS[fn]
    renamed = {k: v and v.replace("{x1}", "{a}").replace("{x2}", "{b}")
               for k, v in zip(("a", "b"), A.rule_of(ufunc).vjps.values())}
    assert A.rule_of(fn).vjps == renamed
    a, b = SHAPES[OPERATORS[fn]]()
    if fn is operator.mod:
        a = np.array([[1.3, 2.2], [0.4, 3.6]])
        b = np.array([[1.0, 0.9], [0.7, 1.1]])
    check(fn, a, b)


@pytest.mark.parametrize("shapes", more(["views", "transposed"],
                                        ["same", "col-row", "scalar-array", "row-matrix",
                                         "array-scalar"]))
def test_broadcasting_products(shapes):
    check(operator.mul, *SHAPES[shapes]())


@pytest.mark.parametrize("fn, shapes", more([(operator.pow, "transposed")], [
    (operator.truediv, "scalar-array"), (operator.truediv, "col-row"),
    (operator.pow, "array-scalar"), (np.arctan2, "views")]),
    ids=lambda v: getattr(v, "__name__", v))
def test_broadcasting(fn, shapes):
    check(fn, *SHAPES[shapes]())


def test_negation_and_inplace_operators():
    x = rand(3, 4)
    check(operator.neg, x)
    check(operator.pos, x)
    assert A.rule_of(operator.iadd) is A.rule_of(operator.add)
    assert A.rule_of(operator.itruediv) is A.rule_of(operator.truediv)
    assert A.rule_of(operator.imatmul) is A.rule_of(operator.matmul)


def test_erf_ufuncs_and_their_rules():
    x = rand(3, 4)
    import math
    np.testing.assert_allclose(erf(x), np.vectorize(math.erf)(x), rtol=1e-15)
    np.testing.assert_allclose(erfc(x), np.vectorize(math.erfc)(x), rtol=1e-15)
    check(erf, x)
    check(erfc, x[::2].T)


@pytest.mark.parametrize("exponent", more([0, 2, 3, 0.5], [1, -1, -2, 1.5]))
def test_power_with_a_literal_exponent(exponent):
    rule = A.rule_of(operator.pow)
    x = _positive(3, 4)
    g = rand(3, 4)
    tpl = A.templates(rule, {"b": exponent})["a"]
    if tpl is None:                              # x ** 0: constant
        assert exponent == 0
        return
    assert "**" not in tpl or exponent in (3, -2, 1.5)
    fn, names = vjp_function(rule, {"a": "a", "b": "b"}, ["a"], literals={"b": exponent})
    (got,) = fn(g, x ** exponent, *[{"a": x, "b": exponent}[n] for n in names])
    np.testing.assert_allclose(got, g * exponent * x ** (exponent - 1.0), rtol=1e-12)
    assert A.instantiate(rule, {"a": "x", "b": "2"}, "g", "y",
                         literals={"b": 2})[1] == {"a": "sum_to(zmultiply(g, 2.0 * x), x)"}


def test_where():
    c = rand(3, 4) > 0
    check(np.where, c, rand(3, 4), rand(3, 4))
    check(np.where, c, rand(4), rand(3, 1))              # broadcast operands
    check(np.where, c, rand(), rand(4, 3).T)             # scalar, transposed
    check(np.where, rand(4) > 0, rand(3, 4), rand())     # broadcast condition


def _away_from(a, *bounds):
    for b in bounds:
        a = np.where(np.abs(a - b) < 0.05, a + 0.1, a)
    return a


def test_clip():
    a = _away_from(rand(3, 4), -0.4, 0.5)
    check(np.clip, a, -0.4, 0.5)
    check(np.clip, a, None, 0.5)
    check(np.clip, a, -0.4, None)
    lo = _away_from(rand(4, lo=-0.6, hi=-0.2), *a.ravel())
    check(np.clip, a, lo, 0.5)                           # an array bound, broadcast
    check(np.clip, a[:, ::2].T, -0.4, np.full((3,), 0.5))
    check(np.clip, a, lo + 1.2, 0.5)                     # crossed bounds: a_max wins


def test_clip_ties_go_to_the_operand():
    a = np.array([[-1.0, 0.0, 0.5, 2.0]])
    fn, names = vjp_function(A.rule_of(np.clip), {"a": "a", "a_min": "a_min",
                                                   "a_max": "a_max"}, ["a", "a_min", "a_max"])
    ga, glo, ghi = fn(np.ones((1, 4)), None, a, 0.0, 0.5)
    np.testing.assert_array_equal(ga, [[0.0, 1.0, 1.0, 0.0]])
    assert (glo, ghi) == (1.0, 1.0)


def test_maximum_ties_go_to_the_first_operand():
    x = np.array([1.0, 2.0, 3.0])
    fn, _ = vjp_function(A.rule_of(np.maximum), {"x1": "x1", "x2": "x2"}, ["x1", "x2"])
    g1, g2 = fn(np.ones(3), None, x, np.array([0.0, 2.0, 4.0]))
    np.testing.assert_array_equal(g1, [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(g2, [0.0, 0.0, 1.0])


# ----------------------------------------------------------------------------- reductions
@pytest.mark.parametrize("a, axis", more(
    [(rand(3, 4), None), (rand(4, 3).T, 1), (rand(5), 0)],
    [(rand(3, 4), 0), (rand(2, 3, 4), -2), (rand(8)[::2], None)]), ids=ident)
def test_sum(a, axis):
    check(np.sum, a, axis=axis)


def test_sum_accumulates_without_materialising():
    rule = A.rule_of("sum")
    a, g = rand(3, 4), rand(4)
    fn, names = vjp_function(rule, {"a": "a", "axis": "axis"}, ["a"], accumulate=True)
    (view,) = fn(g, None, a, 0)
    assert view.shape == (1, 4)
    np.testing.assert_array_equal(np.zeros((3, 4)) + view, np.broadcast_to(g, (3, 4)))
    assert fn(2.5, None, a, None) == (2.5,)
    assert A.instantiate(A.rule_of(np.mean), {"a": "x"}, "g", accumulate=True)[1] == \
        {"a": "g / x.size"}


@pytest.mark.parametrize("key", more([np.mean, np.var, np.std, "sum"],
                                     ["mean", "var", "std"]), ids=ident)
def test_moments(key):
    f = key if callable(key) else (lambda a, _m=key: getattr(a, _m)())
    check(key, rand(3, 4), f=f)
    if key is np.var:
        check(key, rand(4, 3).T)


def test_prod_with_and_without_zeros():
    check(np.prod, rand(3, 4, lo=0.5, hi=1.5))
    a = rand(2, 3, lo=0.5, hi=1.5)
    a[1, 1] = 0.0                                # exact products of the others
    check(np.prod, a)
    a[0, 2] = 0.0
    check(np.prod, a[:, ::2].T)


@pytest.mark.parametrize("key", more([np.max, np.min], [np.amax, np.amin, "max", "min"]),
                         ids=ident)
def test_extremes(key):
    f = key if callable(key) else (lambda a, _m=key: getattr(a, _m)())
    check(key, rand(3, 4), f=f)


def test_extreme_ties_split_equally():
    a = np.array([[1.0, 3.0], [3.0, 0.5]])
    fn, names = vjp_function(A.rule_of(np.max), {"a": "a"}, ["a"])
    (got,) = fn(2.0, 3.0, a)
    np.testing.assert_array_equal(got, [[0.0, 1.0], [1.0, 0.0]])


@pytest.mark.parametrize("a, axis", more([(rand(3, 4), None), (rand(4, 3).T, -1)],
                                         [(rand(3, 4), 0), (rand(2, 3, 4), 1)]), ids=ident)
def test_cumsum(a, axis):
    check(np.cumsum, a, axis=axis)


@pytest.mark.parametrize("a", [rand(5), rand(3, 4).T, np.array([0.7, 0.0, 1.3, 0.0])],
                         ids=["vector", "transposed", "zeros"])
def test_cumprod(a):
    check(np.cumprod, a)


@pytest.mark.parametrize("ord", more([None, 1, 3, np.inf], [1.5, -np.inf, 0]), ids=ident)
def test_vector_norms(ord):
    x = np.array([0.3, -1.2, 0.7, 2.1, -0.4])
    check(np.linalg.norm, x, ord)
    if ord is None:
        check(np.linalg.norm, rand(6)[::2])


@pytest.mark.parametrize("ord", more([None, 1], [-2, np.inf, -np.inf]), ids=ident)
def test_matrix_norms(ord):
    x = np.array([[0.3, -1.2, 0.7], [2.1, -0.4, 0.9], [-0.5, 0.8, 1.7], [1.1, 0.2, -0.6]])
    check(np.linalg.norm, x, ord, constant=("ord",) if ord in (1, -1, 2, -2) else ())
    if ord is None:
        check(np.linalg.norm, x.T)


def test_norm_at_zero_is_zero():
    fn, names = vjp_function(A.rule_of(np.linalg.norm), {"x": "x", "ord": "ord"}, ["x"])
    (got,) = fn(1.0, 0.0, np.zeros(3), None)
    np.testing.assert_array_equal(got, np.zeros(3))


# ----------------------------------------------------------------------------- linear algebra
DOT_OPERANDS = {
    "vec.vec": lambda: (rand(4), rand(4)),
    "mat.vec": lambda: (rand(3, 4), rand(4)),
    "vec.mat": lambda: (rand(3), rand(3, 4)),
    "mat.mat": lambda: (rand(3, 4), rand(4, 2)),
    "views": lambda: (rand(4, 3).T, rand(8)[::2]),
}


@pytest.mark.parametrize("kind", list(DOT_OPERANDS))
@pytest.mark.parametrize("fn", [np.dot, operator.matmul], ids=["dot", "matmul"])
def test_dot_and_matmul(fn, kind):
    check(fn, *DOT_OPERANDS[kind]())


def test_outer():
    check(np.outer, rand(3), rand(4))
    check(np.outer, rand(2, 2), rand(8)[::2])    # NumPy flattens the operands
    if FULL:
        check(np.outer, rand(3), 1.7)


@pytest.mark.parametrize("b", more([rand(3)], [rand(2, 3).T]), ids=ident)
def test_solve(b):
    check(np.linalg.solve, spd(3) + 0.3 * rand(3, 3), b, rtol=1e-5)


def test_inverse_and_determinant():
    a = spd(3) + 0.3 * rand(3, 3)
    check(np.linalg.inv, a, rtol=1e-5)
    check(np.linalg.det, a, rtol=1e-5)
    check(np.linalg.det, a.T, rtol=1e-5)


def test_decompositions():
    # eigh and cholesky read the lower triangle: an upper one that differs is not read.
    a = spd(3) + 0.2 * np.triu(rand(3, 3), 1)
    for key in (D.eigh_values, D.eigh_vectors, np.linalg.cholesky, D.slogdet_logabs):
        check(key, a, rtol=1e-5)
    check(D.slogdet_logabs, spd(3) - 4.0 * np.eye(3), rtol=1e-5)     # det < 0
    check(np.linalg.eigvalsh, a, rtol=1e-5)
    for b in (rand(4, 3), rand(3, 5), rand(6, 3)[::2]):
        check(D.svd_values, b, rtol=1e-5)
        check(np.linalg.pinv, b, rtol=1e-5)
        # (LAPACK's signs of the singular vectors hold under the small steps)
        check(D.svd_u, b, False, constant=("full_matrices",), rtol=1e-5)
        check(D.svd_vh, b, False, constant=("full_matrices",), rtol=1e-5)
    check(D.svd_u, rand(3, 3), rtol=1e-5)          # full_matrices of a square matrix
    check(D.svd_vh, rand(3, 3), rtol=1e-5)
    # eig of a matrix that is not symmetric, with real eigenvalues 1, 2.5, 4.
    p = np.eye(3) + 0.3 * rand(3, 3)
    general = p @ np.diag([1.0, 2.5, 4.0]) @ np.linalg.inv(p)
    for key in (D.eig_values, D.eig_vectors, np.linalg.eigvals):
        check(key, general, rtol=1e-5)


def test_parts_of_floats():
    check(np.real, rand(3, 2))


def test_arranging_elements():
    a, b, v = rand(3, 4), rand(2, 3), rand(3)
    check(np.kron, a, b)
    check(np.kron, v, a)
    check(np.cross, v, rand(2, 3))               # broadcast: summed back
    check(np.moveaxis, rand(2, 3, 4), 0, 2, constant=("source", "destination"))
    check(np.rot90, a, 3, constant=("k",))
    check(np.repeat, v, 3, constant=("repeats",))
    check(np.repeat, v, np.array([2, 0, 1]))
    x = np.array([0.5, np.nan, -1.0, 2.0])       # (an inf becomes 1.8e308: no FD)
    check(np.nan_to_num, x, f=lambda x: np.nan_to_num(x))
    check(np.linspace, 0.3, 1.7, 5, constant=("num",))
    check(np.append, a, b.T[:, :2], 1, constant=("axis",))
    check(np.append, a, b.ravel(), f=lambda a, b: np.append(a, b))
    if hasattr(np, "row_stack"):        # gone in NumPy 2.5
        check(np.row_stack, (v, rand(3)), f=np.vstack)
    check(S.split_item, rand(6, 2), 3, 1, constant=("sections", "index"))
    check(S.array_split_item, rand(5), 2, 1, constant=("sections", "index"))
    check(S.split_item, rand(2, 6), 3, 2, 1, constant=("sections", "index", "axis"))
    check(S.array_split_item, rand(2, 5), 2, 0, -1, constant=("sections", "index", "axis"))
    check(S.hsplit_item, rand(3, 4), 2, 1, constant=("sections", "index"))
    check(S.hsplit_item, rand(6), 3, 2, constant=("sections", "index"))
    check(S.vsplit_item, rand(4, 3), 2, 0, constant=("sections", "index"))
    check(S.dsplit_item, rand(2, 2, 6), 3, 1, constant=("sections", "index"))


def test_order_statistics():
    check(np.partition, rand(7), 2, constant=("kth",))
    check(np.partition, rand(3, 5), 1, constant=("kth",))
    check(np.percentile, rand(7), 37.0)
    check(np.percentile, rand(2, 3), np.array([10.0, 55.0, 99.0]))
    check(np.quantile, rand(6), 0.3)
    check(np.quantile, rand(6), np.array([0.02, 0.45]))


@pytest.mark.parametrize("offset", [0, 1, -1])
def test_trace(offset):
    check(np.trace, rand(3, 4), offset)


@pytest.mark.parametrize("v, k", more([(rand(3), 1), (rand(3, 4), -1)],
                                      [(rand(3), 0), (rand(3), -2), (rand(3, 4), 0),
                                       (rand(4, 3), 1)]), ids=ident)
def test_diag(v, k):
    check(np.diag, v, k)


# ----------------------------------------------------------------------------- sequences
@pytest.mark.parametrize("a, n", more([(rand(6), 1), (rand(3, 5), 2)],
                                      [(rand(7), 3), (rand(2, 3, 4), 1), (rand(4), 0)]),
                         ids=ident)
def test_diff(a, n):
    check(np.diff, a, n)


def _interp_case(points, knots, scalar=False):
    xp = np.cumsum(RNG.uniform(0.2, 1.0, knots)) - 0.5
    x = RNG.uniform(xp[0] - 0.3, xp[-1] + 0.3, points)
    return (float(x[0]) if scalar else x), xp, rand(knots)


@pytest.mark.parametrize("x, xp, fp", more(
    [_interp_case(6, 4), _interp_case(1, 5, scalar=True)],
    [_interp_case(9, 2), _interp_case(4, 7)]), ids=ident)
def test_interp(x, xp, fp):
    check(np.interp, x, xp, fp)


def test_interp_of_views():
    x, xp, fp = _interp_case(10, 6)
    check(np.interp, x[::2], xp, np.repeat(fp, 2)[::2])


@pytest.mark.parametrize("a, index", [
    (rand(6), np.array([4, 1, -1, 4])), (rand(5, 3), np.array([0, 4, 0])),
    (rand(8)[::2], np.array([True, False, True, True])),
    (rand(4, 2), np.array([False, True, True, False]))], ids=ident)
def test_gather(a, index):
    check(operator.getitem, a, index)


# ----------------------------------------------------------------------------- shapes
def _method(name, *extra):
    return lambda a: getattr(a, name)(*extra)


@pytest.mark.parametrize("key, a, extra", [
    (np.reshape, rand(3, 4), ((2, 6),)),
    (np.reshape, rand(4, 3).T, ((12,),)),
    (np.ravel, rand(3, 4)[:, ::2], ()),
    (np.ndarray.flatten, rand(2, 3), ()),
    (np.atleast_1d, rand(3), ()),
    (np.atleast_2d, rand(3), ()),
    (np.atleast_3d, rand(3, 2), ()),
    (np.expand_dims, rand(3, 2), (1,)),
    (np.copy, rand(4, 3).T, ()),
    (np.asarray, rand(3), ()),
    (np.ascontiguousarray, rand(3, 4).T, ()),
    (np.ndarray.astype, rand(3, 2), (np.float64,)),
], ids=lambda v: getattr(v, "__name__", "")[:12] or None)
def test_reshapes_and_copies(key, a, extra):
    check(key, a, *extra)


@pytest.mark.parametrize("a, axes", more([(rand(3, 4), None),
                                          (rand(4, 3, 2)[:, ::2].T, (-1, 0, 1))],
                                         [(rand(2, 3, 4), (1, 2, 0))]), ids=ident)
def test_transpose(a, axes):
    check(np.transpose, a, axes)


def test_methods_map_to_functions():
    for name, fn in A.METHODS.items():
        assert A.rule_of(name) is A.rule_of(fn)
    check("T", rand(3, 4), f=lambda a: a.T)


@pytest.mark.parametrize("arrays, axis", more(
    [((rand(2, 3), rand(2, 1), rand(4, 2).T), 1), ((rand(3), rand(6)[::2]), -1)],
    [((rand(2, 3), rand(4, 3)), 0)]), ids=ident)
def test_concatenate(arrays, axis):
    check(np.concatenate, arrays, axis)


@pytest.mark.parametrize("arrays, axis", more(
    [((rand(2, 3), rand(3, 2).T, rand(2, 3)), 2)], [((rand(3), rand(6)[::2]), 0)]),
    ids=ident)
def test_stack(arrays, axis):
    check(np.stack, arrays, axis)


@pytest.mark.parametrize("key, arrays", [
    (np.hstack, (rand(2, 3), rand(4, 2).T)), (np.hstack, (rand(3), rand(6)[::2])),
    (np.vstack, (rand(3), rand(2, 3), rand(3))), (np.column_stack, (rand(3), rand(2, 3).T)),
], ids=lambda v: getattr(v, "__name__", None) or ident(v))
def test_stacks_of_mixed_ranks(key, arrays):
    check(key, arrays)


@pytest.mark.parametrize("key, args", [
    (np.flip, (rand(3, 4),)), (np.fliplr, (rand(3, 4)[:, ::2],)), (np.flipud, (rand(3, 2),)),
    (np.roll, (rand(3, 4), 5)), (np.roll, (rand(6), -2)), (np.swapaxes, (rand(2, 3, 4), 0, 2)),
    (np.triu, (rand(4, 4), 1)), (np.tril, (rand(3, 5), -1)), (np.triu, (rand(4), 0)),
    (np.append, (rand(3, 2), rand(4))), (np.append, (rand(3), 0.5)),
    (np.sort, (rand(3, 5),)), (np.sort, (rand(7)[::2],)), (np.median, (rand(7),)),
    (np.median, (rand(2, 3),)), (np.vdot, (rand(2, 3), rand(3, 2))), (np.average, (rand(5),)),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_orders_flips_and_pieces(key, args):
    check(key, *args)


def test_average_with_weights():
    check(np.average, rand(5), weights=rand(5, lo=0.5, hi=1.5))
    # as Numba's own tests spell it: axis given, as None (the only axis Numba takes)
    check(np.average, rand(5), axis=None, weights=rand(5, lo=0.5, hi=1.5))


@pytest.mark.parametrize("a, index", [
    (rand(5, 4), (np.array([0, 3, 3, -1]), 1)), (rand(5, 4), (slice(1, 4), np.array([2, 0, 2]))),
    (rand(5, 4, 2), (1, slice(None), np.array([1, 0, 1]))),
    (rand(5, 4), (np.array([0, 2, 4]), np.array([3, 3, 0]))),
    (rand(5, 4), (np.array([True, False, True, True, False]), slice(0, 3))),
], ids=lambda v: ident(v) if isinstance(v, np.ndarray) else "index")
def test_gather_by_a_tuple_index(a, index):
    check(operator.getitem, a, index)


# ----------------------------------------------------------------------------- the table
# Rules with tests of their own above (the element-wise ones are found in the table).
DEDICATED = {
    np.where, np.clip, np.sum, np.mean, np.prod, np.max, np.amax, np.min, np.amin, np.var,
    np.std, np.cumsum, np.cumprod, np.linalg.norm, np.dot, operator.matmul, np.outer, np.linalg.solve,
    np.linalg.inv, np.linalg.det, np.trace, np.diag, np.reshape, np.ravel,
    np.ndarray.flatten, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.expand_dims,
    np.transpose, np.concatenate, np.stack, np.copy, np.asarray, np.ascontiguousarray,
    np.ndarray.astype, operator.neg, operator.pos, np.diff, np.interp, operator.getitem,
    np.hstack, np.vstack, np.column_stack, np.flip, np.fliplr, np.flipud, np.roll,
    np.swapaxes, np.triu, np.tril, np.append, np.sort, np.median, np.vdot, np.average,
    np.real, np.linalg.cholesky, np.linalg.pinv, D.eigh_values, D.eigh_vectors,
    D.svd_values, D.slogdet_logabs, np.kron, np.cross, np.moveaxis, np.rot90, np.repeat,
    np.nan_to_num, np.linspace, S.split_item, S.array_split_item,
    np.linalg.eigvalsh, D.svd_u, D.svd_vh, D.eig_values, D.eig_vectors, np.linalg.eigvals,
    S.hsplit_item, S.vsplit_item, S.dsplit_item, np.partition, np.percentile, np.quantile,
    *([np.row_stack] if hasattr(np, "row_stack") else []),
    # (tests/rules/test_grad_builtins.py)
    builtins.sum, builtins.max, builtins.min, np.ndarray.item,
    # (tests/cpu/test_grad_random.py)
    np.random.normal, np.random.uniform, np.random.exponential,
    # (tests/rules/test_grad_numpy_ordinary.py)
    *NUMPY_ORDINARY}


# In-place operators share their operator's rule; floor division has no gradient.
SHARED_OR_NONE = set(A.INPLACE_TO_BINOP) | {operator.imatmul, operator.floordiv, np.imag,
                                             np.angle, D.slogdet_sign, np.round, np.around}


def test_every_rule_is_tested():
    from numba_adstack.ad.calls import implicit
    found = set(UNARY) | set(UFUNCS2) | set(OPERATORS) | DEDICATED | SHARED_OR_NONE
    # (and the users' own, numba_adstack.custom_vjp, made at run time)
    made = {k for k in A.ARRAY_RULES if implicit.is_primitive(k)}
    assert set(A.ARRAY_RULES) - found - made == set()


def test_every_numpy_function_of_the_scalar_rules_has_an_array_rule():
    for fn in CALL_RULES:
        if isinstance(fn, np.ufunc):
            assert A.rule_of(fn) is not None, fn.__name__


def test_templates_name_only_parameters_helpers_and_numpy():
    import ast
    for key, rule in A.ARRAY_RULES.items():
        shared = {name for name, _ in rule.shared}
        tpls = [t for t in list(rule.vjps.values()) + list(rule.accumulate.values())
                + [t for _, t in rule.shared] if t]
        for tpl in tpls:
            assert A.placeholders(tpl) <= set(rule.params) | {"g", "y"} | shared, (key, tpl)
            names = {n: n for n in A.placeholders(tpl)}
            tree = ast.parse(tpl.format(**names), mode="eval")
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    assert node.func.id in RULE_HELPERS, (key, node.func.id)
                if isinstance(node, ast.Name):
                    assert node.id in names or node.id in RULE_HELPERS or node.id == "np", \
                        (key, node.id)
        assert set(rule.vjps) == set(rule.params)
        assert set(rule.defaults) <= set(rule.params)


def test_the_documented_examples():
    import pathlib
    import re
    text = (pathlib.Path(__file__).parents[2] / "docs" / "array_rules.md").read_text()
    block = re.search(r"```pycon\n(.*?)```", text, re.DOTALL).group(1)
    ns = {"np": np, "operator": operator, **vars(A)}
    for stmt, shown in re.findall(r">>> (.*)\n((?:[^>].*\n)*)", block):
        if shown.strip():
            assert eval(stmt, ns) == eval(shown, ns), stmt
        else:
            exec(stmt, ns)


def test_sum_to_returns_its_argument_when_nothing_was_broadcast():
    @njit
    def alias(g, x):
        r = sum_to(g, x)
        r[0, 0] = 7.0
        return g[0, 0]
    assert alias(np.zeros((2, 3)), np.ones((2, 3))) == 7.0
    assert alias(np.zeros((2, 3)), np.ones((2, 1))) == 0.0    # summed: a new array
    assert sum_to(np.ones((2, 3)), 1.5) == 6.0
    np.testing.assert_array_equal(sum_to(np.ones((4, 2, 3)), np.ones((2, 1))), [[12.], [12.]])


def test_sum_to_and_unreduce_against_numpy():
    """Shapes that merge to 1, 2 and 3 dimensions (and more, in the full sweep)."""
    cases = more([((1, 4), (4,)), ((2, 3, 4), (2, 1, 4)), ((2, 3, 4), (1, 1, 1)),
                  ((2, 3, 4), (3, 1))], [((2, 1, 4), (1, 4)), ((5, 2, 3, 4), (2, 1, 4))])
    for gshape, shape in cases:
        g = rand(*gshape)
        lead = len(gshape) - len(shape)
        want = g.sum(axis=tuple(range(lead))).sum(
            axis=tuple(k for k, n in enumerate(shape) if n == 1), keepdims=True)
        np.testing.assert_allclose(sum_to(g, np.zeros(shape)), want.reshape(shape),
                                   rtol=1e-13)
    g = rand(4, 3, 2).T                          # not contiguous
    np.testing.assert_allclose(sum_to(g, np.zeros((3, 1))), g.sum(axis=(0, 2))[:, None],
                               rtol=1e-13)
    for axis in range(3):
        r = g.sum(axis=axis)
        np.testing.assert_array_equal(
            unreduce(r, g, axis, False), np.broadcast_to(np.expand_dims(r, axis), g.shape))


# ----------------------------------------------------------------------------- disk cache
@pytest.fixture
def helper_cache_on(monkeypatch, tmp_path):
    """The helper cache as a process at the default optimisation level has it (this
    module compiles at -O0 with it suspended), with a cache directory of its own: the
    source tree may be read-only where the tests run, and an earlier test of the same
    process may have checked the directories already."""
    from numba_adstack.ad.rules import vjp_core
    monkeypatch.setattr(vjp_core, "HELPER_CACHE", True)
    monkeypatch.setattr(vjp_core, "_OPT_AT_IMPORT", str(numba.config.OPT))
    monkeypatch.setattr(vjp_core, "_checked_cache_dirs", {})
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    return vjp_core


def test_helpers_of_source_files_are_cached_but_not_those_written_by_exec(helper_cache_on):
    ns = {}
    exec("def impl(g):\n    return g\n", ns)
    assert helper_cache_on.cacheable(helper_cache_on.sum_to_shape.py_func)
    assert not helper_cache_on.cacheable(ns["impl"])


def test_without_a_writable_cache_directory_helpers_compile_uncached(helper_cache_on,
                                                                     monkeypatch):
    def no_locator(fn):     # what Numba raises when no cache directory can be written
        raise RuntimeError("cannot cache function: no locator available")
    monkeypatch.setattr(helper_cache_on, "FunctionCache", no_locator)
    assert not helper_cache_on.cacheable(helper_cache_on.sum_to_shape.py_func)


def test_cached_helpers_of_other_sources_are_dropped(tmp_path, monkeypatch):
    from numba_adstack.ad.rules import vjp_core
    monkeypatch.setattr(vjp_core, "_checked_cache_dirs", {})
    (tmp_path / "vjp_core.gather-1.py311.nbi").write_text("old")
    (tmp_path / "vjp_core.gather-1.py311.1.nbc").write_text("old")
    (tmp_path / "user.f-3.py311.nbi").write_text("not ours")
    (tmp_path / vjp_core._DIGEST_FILE).write_text("another version of the rules")
    assert vjp_core._check_cache_dir(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        vjp_core._DIGEST_FILE, "user.f-3.py311.nbi"]
    assert (tmp_path / vjp_core._DIGEST_FILE).read_text() == vjp_core._rules_digest()
    # Same sources: kept.
    (tmp_path / "vjp_core.gather-1.py311.nbi").write_text("new")
    monkeypatch.setattr(vjp_core, "_checked_cache_dirs", {})
    assert vjp_core._check_cache_dir(str(tmp_path))
    assert (tmp_path / "vjp_core.gather-1.py311.nbi").exists()
