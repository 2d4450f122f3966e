"""Rule templates as trees (numba_adstack/ad/rules/template.py): each derivative is
written once and serves reverse mode, forward mode and arrays; ``np.cumprod``, added by
one table entry and its helpers, is differentiated both ways against finite differences."""
import math
import operator

import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack.ad.rules import array_rules as A
from numba_adstack.ad.rules import template as T
from numba_adstack.ad.rules.scalar import BINOP_RULES, CALL_RULES, UNARY_RULES

from conftest import check_fd


# ---------------------------------------------------------------------- the trees
def test_templates_are_parsed_once_and_read_their_placeholders():
    rule = CALL_RULES[math.atan2]
    assert all(isinstance(t, T.Template) for t in rule)
    assert rule[0].reads == {"g", "0", "1"} and rule[0].operands == {0, 1}
    assert T.template("{g} * math.cos({0})") is T.template("{g} * math.cos({0})")
    with pytest.raises(ValueError, match="not a Python expression"):
        T.template("{g} * (")


def test_every_scalar_rule_is_linear_in_the_adjoint():
    # The written tables; the primitives made at run time (implicit roots, second-order
    # and checkpointed calls) call a function of the adjoint, linear but not {g} * (...).
    from numba_adstack.ad.calls import implicit
    for table in (CALL_RULES, BINOP_RULES, UNARY_RULES):
        for fn, rule in table.items():
            if id(fn) in implicit._PRIMITIVES:
                continue
            assert all(t is None or T.linear_in_adjoint(t) for t in rule), rule
    assert not T.linear_in_adjoint("{g} * {g}")
    assert not T.linear_in_adjoint("math.sin({g})")
    assert not T.linear_in_adjoint("({g} if {g} > 0.0 else 0.0)")
    assert T.linear_in_adjoint("zmul(-{g}, math.sin({0}))")
    assert not T.linear_in_adjoint("zmul({g}, {g})")
    with pytest.raises(ValueError, match="not linear"):
        T.check_linear({math.sin: T.rule(["{g} + 1.0"])}, "here")


def test_matchers_read_the_tree_not_the_spelling():
    # The partial of {g} * P, whatever the spacing; none where P reads the result.
    assert T.adjoint_factor("{g}*math.cos({0})") == "math.cos({0})"
    assert T.adjoint_factor("{g} * (0.5 / {y})") is None
    # A guarded rule keeps its guard around the kept partial.
    assert T.adjoint_factor(CALL_RULES[math.log][0]) == "1.0 / {0}"
    assert T.with_factor(CALL_RULES[math.log][0], "p") == "zmul({g}, {p})"
    assert T.with_factor(CALL_RULES[math.erf][0], "p") == "{g} * {p}"
    assert T.adjoint_factor("-{g} * math.sin({0})") is None
    assert T.calls_module(T.adjoint_factor(CALL_RULES[math.erf][0]), "math")
    # c / v -> c * q, for a number or an operand over the slot, anywhere in the tree.
    assert T.by_reciprocal("{g} * (0.5 / {y})", "y", "q") == "{g} * (0.5 * {q})"
    assert T.by_reciprocal("{g} * ({0} /{y})", "y", "q") == "{g} * ({0} * {q})"
    assert T.by_reciprocal("{g} * (-{0} / ({1} * {1}))", "1", "q") is None
    assert T.by_reciprocal(CALL_RULES[math.sqrt][0], "y", "q") == "zmul({g}, 0.5 * {q})"
    assert T.is_adjoint("{g}") and not T.is_adjoint("-{g}")


def test_lifting_to_arrays():
    # On arrays a partial that reads a value is guarded (NaN data that np.nansum skips
    # meets it); a mask or a constant is not.
    assert T.lift(CALL_RULES[math.sin][0]) == "zmultiply({g}, np.cos({0}))"
    assert T.lift(CALL_RULES[math.cos][0]) == "zmultiply(-{g}, np.sin({0}))"
    assert T.lift(CALL_RULES[math.sqrt][0]) == "zmultiply({g}, 0.5 / {y})"
    assert T.lift(CALL_RULES[math.radians][0]) == "{g} * 0.017453292519943295"
    assert T.lift(CALL_RULES[np.nan_to_num][0]) == "{g} * np.isfinite({0})"
    assert T.lift(CALL_RULES[np.maximum][0]) == "{g} * (({0} >= {1}) | np.isnan({0}))"
    assert T.lift(CALL_RULES[np.maximum][1]) == \
        "{g} * np.logical_not(({0} >= {1}) | np.isnan({0}))"
    assert T.lift("({0} if {1} < {0} else {1})") == "np.where({1} < {0}, {0}, {1})"
    assert T.lift("{g} * abs({0})") is None          # a builtin on floats only
    assert T.lift("{g} * {y}") == "zmultiply({g}, {y})"


def test_zero_safe_rules_and_their_forms_in_generated_code():
    # The rules whose partial may be infinite at finite operands are guarded, the others
    # plain products (no cost in a loop's adjoint chain).
    for fn in (math.sqrt, math.log, math.asin, math.acos, math.atan2, math.pow, np.cbrt):
        assert all(t is None or T.calls_module(t, "math") or "zmul(" in t
                   for t in CALL_RULES[fn]) and "zmul(" in CALL_RULES[fn][0], fn
    assert all("zmul(" in t for t in BINOP_RULES[operator.truediv])
    for fn in (math.sin, math.exp, math.tanh, math.erf):
        assert "zmul" not in CALL_RULES[fn][0], fn
    assert BINOP_RULES[operator.mul] == ("{g} * {1}", "{g} * {0}")
    assert T.zero_safe("-{g} * math.sin({0})") == "zmul(-{g}, math.sin({0}))"
    with pytest.raises(ValueError, match="zero_safe"):
        T.zero_safe("{g} + 1.0")
    # In generated code: plain products (ieee_products=True), or branches (CUDA).
    import ast
    tree = ast.parse("a = zmul(g, 0.5 / y) + zmultiply(h, x)")
    assert ast.unparse(T.ieee_products(tree)) == "a = g * (0.5 / y) + h * x"
    tree = ast.parse("a = zmul(-g[i], 0.5 / y)")
    assert ast.unparse(T.guards_as_branches(tree)) == \
        "a = -g[i] * (0.5 / y) if g[i] != 0.0 else 0.0"
    # Outside loops, code that runs once: the select form; in loops, the branch.
    fn = ast.parse("def f(g, y):\n    a = zmul(g, y)\n    for i in range(3):\n"
                   "        a += zmul(a, y)\n    return zmul(a, y)\n").body[0]
    assert ast.unparse(T.guards_outside_loops(fn)).count("zmul_select(") == 2
    assert "a += zmul(a, y)" in ast.unparse(fn)


def test_elementwise_array_rules_are_the_scalar_rules_lifted():
    for fn in (np.sin, np.log, np.arctan2, np.divide, np.power, np.maximum, np.fmod):
        rule = A.rule_of(fn)
        names = {str(k): "{%s}" % p for k, p in enumerate(rule.params)}
        lifted = [t and T.substitute(T.lift(t), names) for t in CALL_RULES[fn]]
        assert list(rule.vjps.values()) == lifted, fn
    # Operators have the rules of their ufuncs; literal powers those of rules/powers.py.
    assert A.rule_of(operator.truediv).vjps["b"] == \
        "zmultiply({g}, -{a} * (1.0 / {b}) * (1.0 / {b}))"
    assert A.templates(A.rule_of(operator.pow), {"b": 3})["a"] == \
        "zmultiply({g}, 3.0 * ({a} * {a}))"
    assert A.rule_of(operator.add).vjps["a"] == "{g}"


# ---------------------------------------------------------------------- np.cumprod
def cumprod_of(x, w):
    return np.sum(np.cumprod(x * w) * np.sin(x).ravel())


def cumprod_method(x):
    return np.sum(x.cumprod() ** 2)


_cumprod_of = nad.grad_jit(cumprod_of)
_cumprod_method = nad.grad_jit(cumprod_method)


@pytest.mark.parametrize("x", [np.array([0.7, -1.3, 2.1, 0.4]),
                               np.array([0.7, 0.0, 2.1, 0.0, 1.5]),
                               np.array([[0.5, 1.2], [-0.8, 1.1]])],
                         ids=["plain", "zeros", "matrix"])
def test_cumprod_reverse_mode(x):
    check_fd(_cumprod_of, x, np.full(x.shape, 1.1), rtol=1e-6, atol=1e-8)
    check_fd(_cumprod_method, x, rtol=1e-6, atol=1e-8)


def test_cumprod_forward_mode():
    x = np.array([0.7, 0.0, -1.3, 2.1])
    w = np.array([1.1, 0.9, 1.2, 0.8])
    dx = np.array([0.3, -0.5, 1.0, 0.2])
    dw = np.array([-0.2, 0.4, 0.1, 0.6])
    h = 1e-6
    for tangents in ((dx, None), (None, dw), (dx, dw)):
        def along(s):
            return cumprod_of(*[a if t is None else a + s * t for a, t in zip((x, w), tangents)])
        want = (along(h) - along(-h)) / (2 * h)
        value, got = _cumprod_of.jvp((x, w), tangents)
        assert value == pytest.approx(cumprod_of(x, w), rel=1e-12)
        assert got == pytest.approx(want, rel=1e-6, abs=1e-8)
    # The method form, along one tangent.
    want = (cumprod_method(x + h * dx) - cumprod_method(x - h * dx)) / (2 * h)
    assert _cumprod_method.jvp((x,), (dx,))[1] == pytest.approx(want, rel=1e-6, abs=1e-8)
