"""Array-level adjoint rules (JAX's VJPs): one record per NumPy primitive on arrays.

``ARRAY_RULES`` maps a primitive (a function object, a NumPy ufunc, an ``operator``
function; methods and ``.T`` through ``METHODS``) to an ``ArrayRule``:

* ``params``: its parameter names in positional order, as NumPy and Numba name them (the
  arguments of a call bind to them by position or keyword; a method's receiver is the
  first). ``defaults``: parameter -> default, as source text.
* ``vjps``: parameter -> source template of its contribution to that operand's adjoint,
  or None (no gradient: axes, shapes, conditions, integer arguments). Placeholders:
  ``{g}`` the result's adjoint, ``{y}`` the result, ``{<param>}`` the argument. Templates
  call NumPy functions Numba compiles and the helpers of ``helpers.RULE_HELPERS`` (put that dict in
  the generated code's namespace, beside ``np``).
* ``elementwise``: the result is the broadcast of the operands. Templates are then plain
  array expressions shaped like the result, which Numba fuses into one loop; an operand
  whose shape may differ from the result's (fewer dimensions, or a size-1 dimension, or a
  scalar) needs ``sum_to(<template>, {param})``, which returns its argument unchanged when
  the shapes match. Other rules give exactly the operand's shape.
* ``shared``: ``((name, template), ...)`` values computed once before the contributions,
  which read them as ``{name}`` (the solve of ``np.linalg.solve``'s adjoint).
* ``accumulate``: parameter -> cheaper template whose value only broadcasts to the
  operand's shape (``np.sum``: ``{g}`` rather than an array full of it): valid as the
  right side of ``x_bar += ...``, not as an assignment.
* ``into``: parameter -> template that adds the contribution in place into ``{out}``, an
  adjoint array of the operand's shape that exists already (any strides), with no
  temporary (``np.dot``: ``add_dot_vjp_a({out}, ...)``, whose outer product goes straight
  into the adjoint); it reads the same values as the ``vjps`` template.
* ``jvps``: parameter -> forward mode's term of the tangent of the result along that
  operand's tangent ``{d}`` (the tangent is the sum of the terms of the varied operands),
  for primitives that are not linear (linear ones take the tangent in place of the
  operand: tangent/tangents.py); element-wise rules need none, their scalar rule is
  their tangent.
* ``literal``: None, or a function of {parameter: value} for the arguments that are
  compile-time constants, giving templates that replace ``vjps`` entries
  (``x ** 2`` -> ``zmultiply({g}, 2.0 * {a})``, no ``pow``): rules/powers.py's, lifted.

The element-wise rules of ufuncs and operators are not written here: each is its scalar
rule (rules/scalar.py) lifted to arrays by rules/template.py (``math.cos`` -> ``np.cos``,
a branch -> a mask), so one line there serves floats, arrays and forward mode. Templates
written here are parsed once, when their rule is made (``ArrayRule``).

A contribution may be ``g`` itself or a view of it: add it into the adjoint, never write
into it. ``instantiate`` fills a rule's templates in.
"""
import builtins
import math
import operator
import sys
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from . import vjp_decomp as D
from . import vjp_split as S
from . import vjp_elementwise
from .powers import LITERAL_RULES, specialise
from .scalar import BINOP_RULES, CALL_RULES, INPLACE_TO_BINOP, UNARY_RULES
from .template import lift_rule, substitute, template


@dataclass(frozen=True)
class ArrayRule:
    params: tuple
    vjps: dict
    defaults: dict = field(default_factory=dict)
    elementwise: bool = False
    shared: tuple = ()
    accumulate: dict = field(default_factory=dict)
    literal: Optional[Callable] = None
    into: dict = field(default_factory=dict)
    jvps: dict = field(default_factory=dict)

    def __post_init__(self):
        # Templates written as text are parsed here, once (rules/template.py).
        for name in ("vjps", "accumulate", "into", "jvps"):
            object.__setattr__(self, name, {p: template(t) for p, t in
                                            getattr(self, name).items()})
        object.__setattr__(self, "shared", tuple((n, template(t)) for n, t in self.shared))


def _rule(params, *templates, **kw):
    """A rule whose parameters are ``params`` (``"name=default"`` for a default) and whose
    templates are given in the same order (fewer: the rest get no gradient)."""
    names, defaults = [], {}
    for p in params.split():
        name, *default = p.split("=", 1)
        names.append(name)
        if default:
            defaults[name] = default[0]
    vjps = dict.fromkeys(names)
    vjps.update(zip(names, templates))
    return ArrayRule(tuple(names), vjps, defaults, **kw)


def _ew(params, *templates, **kw):
    return _rule(params, *templates, elementwise=True, **kw)


def _named(scalar_rule, params):
    """A scalar rule (rules/scalar.py) lifted to arrays (rules/template.py), its operands
    ``{0}``, ``{1}``... named ``params``; None when it does not lift."""
    lifted = lift_rule(scalar_rule)
    if lifted is None:
        return None
    names = {str(k): "{%s}" % p for k, p in enumerate(params)}
    return tuple(None if t is None else substitute(t, names) for t in lifted)


def _literal_rule(fn, params):
    """The specialisation of ``fn``'s rule to compile-time constant operands
    (rules/powers.py: ``x ** 2`` -> ``zmultiply({g}, 2.0 * {a})``, no pow), lifted; None when
    ``fn`` has none."""
    if fn not in LITERAL_RULES:
        return None

    def special(literals):
        scalar = specialise(fn, [literals.get(p) for p in params])
        if scalar is None:
            return {}
        return {p: t for p, t in zip(params, _named(scalar, params)) if p not in literals}
    return special


def _elementwise(fn, scalar_rule, params):
    """The element-wise array rule of ``fn`` from its scalar rule, or None."""
    templates = _named(scalar_rule, params)
    if templates is None:
        return None
    return _ew(" ".join(params), *templates, literal=_literal_rule(fn, params))


# Element-wise ufuncs: the scalar rule of the ufunc (rules/scalar.py) lifted to arrays.
# Our erf and erfc ufuncs take the rules of math.erf and math.erfc, zmultiply those of
# zmul (the guarded product of the generated code, rules/template.py); np.sign has none.
_ARRAY_TWINS = {vjp_elementwise.erf: math.erf, vjp_elementwise.erfc: math.erfc,
                 vjp_elementwise.zmultiply: vjp_elementwise.zmul}
_UFUNCS = {fn: rule for fn, rule in CALL_RULES.items() if isinstance(fn, np.ufunc)}
_UFUNCS.update({f: CALL_RULES[m] for f, m in _ARRAY_TWINS.items()})
_UFUNCS[np.sign] = (None,)
_PARAMS = {1: ("x",), 2: ("x1", "x2")}

# Python operators on arrays (operator.add(a, b)); in-place forms share them.
_OPERATORS = {
    operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
    operator.truediv: np.divide, operator.pow: np.power, operator.mod: np.mod,
    operator.floordiv: np.floor_divide,
}


_DOT = ("dot_vjp_a({g}, {a}, {b})", "dot_vjp_b({g}, {a}, {b})")
_DOT_INTO = {"a": "add_dot_vjp_a({out}, {g}, {a}, {b})",
             "b": "add_dot_vjp_b({out}, {g}, {a}, {b})"}
_RESHAPE = "np.ascontiguousarray({g}).reshape({a}.shape)"
_EXTREME = "extreme_vjp({g}, {y}, {a})"

ARRAY_RULES = {
    **{f: _elementwise(f, r, _PARAMS[f.nin]) for f, r in _UFUNCS.items()},
    **{op: _elementwise(op, BINOP_RULES[op], ("a", "b")) for op in _OPERATORS},
    **{op: _elementwise(op, r, ("a",)) for op, r in UNARY_RULES.items()},
    # np.where's operands are positional-only in NumPy; the third is named y_ here
    # because {y} is the result.
    # NumPy functions (not ufuncs) whose scalar rule lifts. Of float arrays: real is the
    # array, imag and angle zeros.
    np.sinc: _elementwise(np.sinc, CALL_RULES[np.sinc], ("x",)),
    np.real: _rule("val", "{g}"),
    np.imag: _rule("val"),
    # Rounding is a step function: no gradient (as np.floor).
    np.round: _rule("a decimals=0"), np.around: _rule("a decimals=0"),
    np.angle: _rule("z deg=False"),
    np.where: _ew("condition x y_", None, "{g} * ({condition} != 0)",
                  "{g} * ({condition} == 0)",
                  jvps={"x": "np.where({condition}, {d}, 0.0)",
                        "y_": "np.where({condition}, 0.0, {d})"}),
    # A value on a bound counts as inside: the gradient goes to a (see clip_vjp); crossed
    # bounds give a_max (clip_bounds_vjp).
    np.clip: _ew("a a_min a_max", "clip_vjp({g}, {a}, {a_min}, {a_max})",
                 "clip_bounds_vjp({g}, {a}, {a_min}, {a_max}, True)",
                 "clip_bounds_vjp({g}, {a}, {a_min}, {a_max}, False)",
                 # (the adjoints are masks times g: the same masks times the tangent)
                 jvps={"a": "clip_vjp({d}, {a}, {a_min}, {a_max})",
                       "a_min": "clip_bounds_vjp({d}, {a}, {a_min}, {a_max}, True)",
                       "a_max": "clip_bounds_vjp({d}, {a}, {a_min}, {a_max}, False)"}),

    # Reductions. Numba 0.68 takes an axis for np.sum and np.cumsum only.
    np.sum: _rule("a axis=None dtype=None", "unreduce({g}, {a}, {axis}, False)",
                  accumulate={"a": "reduced_view({g}, {a}, {axis})"}),
    np.mean: _rule("a", "np.full({a}.shape, {g} / {a}.size)",
                   accumulate={"a": "{g} / {a}.size"}),
    np.prod: _rule("a", "prod_vjp({g}, {y}, {a})",
                   jvps={"a": "np.sum(prod_vjp(1.0, {y}, {a}) * {d})"}),
    # Numba's np.average takes no axis (but a None one): one weighted mean of all of a.
    np.average: _rule("a axis=None weights=None", "average_vjp_a({g}, {a}, {weights})",
                      None, "average_vjp_weights({g}, {y}, {a}, {weights})",
                      jvps={"a": "np.sum(average_vjp_a(1.0, {a}, {weights}) * {d})",
                            "weights": "np.sum(average_vjp_weights(1.0, {y}, {a}, "
                                       "{weights}) * {d})"}),
    # Ties split the gradient equally (as JAX).
    # Draws of `size` numbers at scalar parameters (rules/scalar.py: the same, summed).
    np.random.normal: _rule("loc scale size", "np.sum({g})",
                            "np.sum({g} * (({y} - {loc}) / {scale}))"),
    np.random.uniform: _rule("low high size", "np.sum({g} * (({high} - {y}) / ({high} - {low})))",
                             "np.sum({g} * (({y} - {low}) / ({high} - {low})))"),
    np.random.exponential: _rule("scale size", "np.sum({g} * ({y} / {scale}))"),
    # x.item() of an array of one element: that element.
    np.ndarray.item: _rule("a", "np.full({a}.shape, {g})", jvps={"a": "np.sum({d})"}),
    # The builtins over an array iterate its first axis: sum(X) of a matrix is a row.
    # (sum(a, start) is start + a[0] + a[1] + ...: start gets g, summed to its shape.)
    builtins.sum: _rule("a start=0", "unreduce({g}, {a}, 0, False)", "sum_to({g}, {start})"),
    builtins.max: _rule("a", _EXTREME), builtins.min: _rule("a", _EXTREME),
    np.max: _rule("a", _EXTREME), np.amax: _rule("a", _EXTREME),
    np.min: _rule("a", _EXTREME), np.amin: _rule("a", _EXTREME),
    np.var: _rule("a", "np.ascontiguousarray({g} * (2.0 / {a}.size) * ({a} - np.mean({a})))",
                  jvps={"a": "np.sum(({a} - np.mean({a})) * {d}) * (2.0 / {a}.size)"}),
    # (at no spread the partial is 0 / 0: a zero adjoint or tangent contributes zero)
    np.std: _rule("a", "np.ascontiguousarray(zmultiply({g}, ({a} - np.mean({a})) / "
                       "({a}.size * {y})))",
                  jvps={"a": "zmul(np.sum(({a} - np.mean({a})) * {d}), "
                             "1.0 / ({a}.size * {y}))"}),
    np.cumsum: _rule("a axis=None", "cumsum_vjp({g}, {a}, {axis})"),
    np.cumprod: _rule("a", "cumprod_vjp({g}, {a})", jvps={"a": "cumprod_jvp({a}, {d})"}),
    np.diff: _rule("a n=1", "diff_vjp({g}, {a}, {n})"),
    # Piecewise linear: at a knot, the slope of the interval it starts (NumPy's formula
    # there); outside the knots, the end value and no slope.
    np.interp: _rule("x xp fp", "interp_vjp_x({g}, {x}, {xp}, {fp})",
                     "interp_vjp_xp({g}, {x}, {xp}, {fp})",
                     "interp_vjp_fp({g}, {x}, {xp}, {fp})",
                     jvps={"x": "interp_jvp({x}, {xp}, {fp}, {d}, None, None)",
                           "xp": "interp_jvp({x}, {xp}, {fp}, None, {d}, None)",
                           "fp": "interp_jvp({x}, {xp}, {fp}, None, None, {d})"}),
    # x[idx] with a 1-d array of integers or booleans (a gather; rule_binding binds it).
    operator.getitem: _rule("a index", "take_vjp({g}, {a}, {index})"),
    np.linalg.norm: _rule("x ord=None", "norm_vjp({g}, {y}, {x}, {ord})",
                          jvps={"x": "np.sum(norm_vjp(1.0, {y}, {x}, {ord}) * {d})"}),

    # Linear algebra (np.dot and @ on 1-d and 2-d operands).
    np.dot: _rule("a b", *_DOT, into=_DOT_INTO),
    operator.matmul: _rule("a b", *_DOT, into=_DOT_INTO),
    np.outer: _rule("a b", "outer_vjp_a({g}, {a}, {b})", "outer_vjp_b({g}, {a}, {b})"),
    np.linalg.solve: _rule(
        "a b", "solve_vjp_a({_gb}, {y})", "{_gb}",
        # a.T made C-contiguous: the primal's specialisation of solve serves again.
        shared=(("_gb", "np.ascontiguousarray(np.linalg.solve("
                        "np.ascontiguousarray({a}.T), like_dtype({g}, {a})))"),),
        # a y = b: a dy = db - da y
        jvps={"a": "-np.linalg.solve({a}, np.dot({d}, {y}))",
              "b": "np.linalg.solve({a}, {d})"}),
    np.linalg.inv: _rule("a", "-np.dot(np.dot({y}.T, like_dtype({g}, {y})), {y}.T)",
                         jvps={"a": "-np.dot(np.dot({y}, {d}), {y})"}),
    np.linalg.det: _rule("a", "np.ascontiguousarray(({g} * {y}) * np.linalg.inv({a}).T)",
                         jvps={"a": "{y} * np.sum(np.linalg.inv({a}).T * {d})"}),
    # Decompositions (rules/vjp_decomp.py). The items of eigh, svd and slogdet that have
    # a derivative are functions of their own there (capture rewrites eigh(a)[0]); the
    # pieces of np.split... are in rules/vjp_split.py.
    D.eigh_values: _rule("a", "eigh_values_vjp({g}, {a})",
                         jvps={"a": "eigh_values_jvp({a}, {d})"}),
    D.eigh_vectors: _rule("a", "eigh_vectors_vjp({g}, {a})",
                          jvps={"a": "eigh_vectors_jvp({a}, {d})"}),
    np.linalg.eigvalsh: _rule("a", "eigh_values_vjp({g}, {a})",
                              jvps={"a": "eigh_values_jvp({a}, {d})"}),
    D.svd_values: _rule("a full_matrices=True", "svd_values_vjp({g}, {a})",
                        jvps={"a": "svd_values_jvp({a}, {d})"}),
    # The vectors past min(m, n) of a non-square a with full_matrices have no derivative:
    # the helpers raise ValueError naming np.linalg.svd.
    D.svd_u: _rule("a full_matrices=True", "svd_u_vjp({g}, {a}, {full_matrices})",
                   jvps={"a": "svd_u_jvp({a}, {d}, {full_matrices})"}),
    D.svd_vh: _rule("a full_matrices=True", "svd_vh_vjp({g}, {a}, {full_matrices})",
                    jvps={"a": "svd_vh_jvp({a}, {d}, {full_matrices})"}),
    # eig of a real matrix with real eigenvalues (Numba raises for complex ones).
    D.eig_values: _rule("a", "eig_values_vjp({g}, {a})",
                        jvps={"a": "eig_values_jvp({a}, {d})"}),
    np.linalg.eigvals: _rule("a", "eig_values_vjp({g}, {a})",
                             jvps={"a": "eig_values_jvp({a}, {d})"}),
    D.eig_vectors: _rule("a", "eig_vectors_vjp({g}, {a})",
                         jvps={"a": "eig_vectors_jvp({a}, {d})"}),
    D.slogdet_logabs: _rule("a", "slogdet_vjp({g}, {a})",
                            jvps={"a": "slogdet_jvp({a}, {d})"}),
    D.slogdet_sign: _rule("a", jvps={"a": "0.0"}),
    S.split_item: _rule("ary sections index axis=0",
                        "split_item_vjp({g}, {ary}, {sections}, {index}, {axis}, False)"),
    S.array_split_item: _rule("ary sections index axis=0",
                              "split_item_vjp({g}, {ary}, {sections}, {index}, {axis}, True)"),
    # Linear: the tangent is the same piece of the tangent.
    S.hsplit_item: _rule("ary sections index", "hsplit_item_vjp({g}, {ary}, {sections}, {index})",
                         jvps={"ary": "hsplit_item({d}, {sections}, {index})"}),
    S.vsplit_item: _rule("ary sections index",
                         "split_item_vjp({g}, {ary}, {sections}, {index}, 0, False)",
                         jvps={"ary": "vsplit_item({d}, {sections}, {index})"}),
    S.dsplit_item: _rule("ary sections index",
                         "split_item_vjp({g}, {ary}, {sections}, {index}, 2, False)",
                         jvps={"ary": "dsplit_item({d}, {sections}, {index})"}),
    np.linalg.cholesky: _rule("a", "cholesky_vjp({g}, {y})",
                              jvps={"a": "cholesky_jvp({y}, {d})"}),
    np.linalg.pinv: _rule("a rcond=1e-15", "pinv_vjp({g}, {y}, {a})",
                          jvps={"a": "pinv_jvp({y}, {a}, {d})"}),
    np.trace: _rule("a offset=0", "trace_vjp({g}, {a}, {offset})"),
    np.diag: _rule("v k=0", "diag_vjp({g}, {v}, {k})"),

    # Shapes and copies.
    np.reshape: _rule("a shape", _RESHAPE),
    np.ravel: _rule("a", _RESHAPE),
    np.ndarray.flatten: _rule("a", _RESHAPE),
    np.atleast_1d: _rule("a", _RESHAPE, jvps={"a": "np.atleast_1d({d})"}),
    np.atleast_2d: _rule("a", _RESHAPE, jvps={"a": "np.atleast_2d({d})"}),
    np.atleast_3d: _rule("a", _RESHAPE, jvps={"a": "np.atleast_3d({d})"}),
    np.expand_dims: _rule("a axis", _RESHAPE, jvps={"a": "np.expand_dims({d}, {axis})"}),
    np.transpose: _rule("a axes=None", "transpose_vjp({g}, {a}, {axes})"),
    # The contribution to a tuple of arrays is a tuple: one per array, in order.
    np.concatenate: _rule("arrays axis=0", "concatenate_vjp({g}, {arrays}, {axis})"),
    np.stack: _rule("arrays axis=0", "stack_vjp({g}, {arrays}, {axis})"),
    np.hstack: _rule("tup", "hstack_vjp({g}, {tup})"),
    np.vstack: _rule("tup", "vstack_vjp({g}, {tup})"),
    np.column_stack: _rule("tup", "column_stack_vjp({g}, {tup})"),
    # Numba's np.flip and np.roll take no axis: all axes, the flattened array.
    np.flip: _rule("m", "np.flip({g})"),
    np.fliplr: _rule("m", "np.fliplr({g})"),
    np.flipud: _rule("m", "np.flipud({g})"),
    np.roll: _rule("a shift", "np.roll({g}, -{shift})"),
    np.swapaxes: _rule("a axis1 axis2", "np.swapaxes({g}, {axis1}, {axis2})"),
    np.triu: _rule("m k=0", "tri_vjp({g}, {m}, {k}, True)"),
    np.tril: _rule("m k=0", "tri_vjp({g}, {m}, {k}, False)"),
    # Flattened without an axis, as NumPy.
    np.append: _rule("arr values axis=None",
                     "append_axis_vjp_arr({g}, {arr}, {values}, {axis})",
                     "append_axis_vjp_values({g}, {arr}, {values}, {axis})"),
    np.moveaxis: _rule("a source destination",
                       "np.moveaxis({g}, {destination}, {source})"),
    np.rot90: _rule("m k=1", "np.ascontiguousarray(np.rot90({g}, -{k}))"),
    # Numba's np.repeat takes no axis: flattened.
    np.repeat: _rule("a repeats", "repeat_vjp({g}, {a}, {repeats})"),
    np.kron: _rule("a b", "kron_vjp_a({g}, {a}, {b})", "kron_vjp_b({g}, {a}, {b})"),
    # <g, a x b> = <a, b x g> = <b, g x a>; broadcast operands summed back.
    np.cross: _rule("a b", "sum_to(np.cross({b}, {g}), {a})",
                    "sum_to(np.cross({g}, {a}), {b})"),
    # Of its float endpoints: point i is start (1 - t) + stop t, t = i / (num - 1).
    np.linspace: _rule("start stop num=50",
                       "np.sum({g} * linspace_weights({num}, True))",
                       "np.sum({g} * linspace_weights({num}, False))",
                       jvps={"start": "{d} * linspace_weights({num}, True)",
                             "stop": "{d} * linspace_weights({num}, False)"}),
    # Non-finite values are replaced by constants.
    np.nan_to_num: _ew("x copy=True nan=0.0 posinf=None neginf=None",
                       "{g} * np.isfinite({x})",
                       jvps={"x": "{d} * np.isfinite({x})"}),
    np.sort: _rule("a", "sort_vjp({g}, {a})", jvps={"a": "sort_jvp({a}, {d})"}),
    np.median: _rule("a", "median_vjp({g}, {a})",
                     jvps={"a": "np.sum(median_vjp(1.0, {a}) * {d})"}),
    np.partition: _rule("a kth", "partition_vjp({g}, {y}, {a})",
                        jvps={"a": "partition_jvp({y}, {a}, {d})"}),
    # Of all of a; linear between the two neighbours in sorted order (Numba's method).
    np.percentile: _rule("a q", "percentile_vjp_a({g}, {a}, {q}, 100.0)",
                         "percentile_vjp_q({g}, {a}, {q}, 100.0)",
                         jvps={"a": "percentile_jvp_a({a}, {q}, {d}, 100.0)",
                               "q": "percentile_jvp_q({a}, {q}, {d}, 100.0)"}),
    np.quantile: _rule("a q", "percentile_vjp_a({g}, {a}, {q}, 1.0)",
                       "percentile_vjp_q({g}, {a}, {q}, 1.0)",
                       jvps={"a": "percentile_jvp_a({a}, {q}, {d}, 1.0)",
                             "q": "percentile_jvp_q({a}, {q}, {d}, 1.0)"}),
    np.vdot: _rule("a b", "np.ascontiguousarray({g} * {b}).reshape({a}.shape)",
                   "np.ascontiguousarray({g} * {a}).reshape({b}.shape)"),
    np.copy: _rule("a", "{g}"),
    np.asarray: _rule("a", "{g}"),
    np.ascontiguousarray: _rule("a", "{g}"),
    np.ndarray.astype: _rule("a dtype", "{g}"),
}
if hasattr(np, "row_stack"):        # an alias of np.vstack, gone in NumPy 2.5
    ARRAY_RULES[np.row_stack] = ARRAY_RULES[np.vstack]
# The NaN-skipping reductions, np.trapezoid, np.convolve, np.cov... (array_rules_numpy.py).
from .array_rules_numpy import numpy_rules  # noqa: E402
ARRAY_RULES.update(numpy_rules(_rule, _ew))
_ITEM_RULES = {}


def array_of_items(shape):
    """The rule of ``np.array`` of a (nested) list or tuple of floats of ``shape``, one
    parameter per float in C order: each gets its element of ``{g}``."""
    if shape not in _ITEM_RULES:
        cells = [", ".join(map(str, idx)) for idx in np.ndindex(*shape)]
        _ITEM_RULES[shape] = _rule(" ".join("e%d" % k for k in range(len(cells))),
                                   *("{g}[%s]" % c for c in cells))
    return _ITEM_RULES[shape]


for _inplace, _op in INPLACE_TO_BINOP.items():
    ARRAY_RULES[_inplace] = ARRAY_RULES[_op]
ARRAY_RULES[operator.imatmul] = ARRAY_RULES[operator.matmul]

# Methods and attributes of arrays, by name: the receiver is the rule's first parameter.
# ``x.reshape(3, 4)`` and ``x.transpose(1, 0)`` pass their shape / axes as one tuple.
METHODS = {
    "sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
    "var": np.var, "std": np.std, "cumsum": np.cumsum, "cumprod": np.cumprod, "dot": np.dot,
    "T": np.transpose, "transpose": np.transpose, "reshape": np.reshape, "ravel": np.ravel,
    "flatten": np.ndarray.flatten, "copy": np.copy, "astype": np.ndarray.astype,
    "clip": np.clip, "round": np.round, "item": np.ndarray.item, "real": np.real, "imag": np.imag, "conj": np.conjugate,
    "conjugate": np.conjugate, "take": np.take,
}

# scipy.special.erf / erfc (Numba compiles them with numba-scipy installed) share the rules
# of our ufuncs; found by rule_of without importing scipy.special here.
_SCIPY_TWINS = {"erf": vjp_elementwise.erf, "erfc": vjp_elementwise.erfc}


def rule_of(fn):
    """The rule of a primitive: a function object, or a method / attribute name; None
    when there is none."""
    if isinstance(fn, str):
        fn = METHODS.get(fn)
    try:
        rule = ARRAY_RULES.get(fn)
    except TypeError:                  # unhashable: no rule
        return None
    name = getattr(fn, "__name__", None)
    if rule is None and name in _SCIPY_TWINS:
        special = sys.modules.get("scipy.special")
        if special is not None and getattr(special, name, None) is fn:
            rule = ARRAY_RULES[_SCIPY_TWINS[name]]
    return rule


def bind(rule, args=(), kwargs=None):
    """Parameter -> argument (source text) of a call ``f(*args, **kwargs)``, defaults
    filled in. Raises TypeError for a missing or unknown argument."""
    if len(args) > len(rule.params):
        raise TypeError("too many arguments: %d for %s" % (len(args), rule.params))
    bound = dict(zip(rule.params, args))
    for name, value in (kwargs or {}).items():
        if name not in rule.params or name in bound:
            raise TypeError("unexpected or repeated argument %r" % name)
        bound[name] = value
    for name in rule.params:
        if name not in bound:
            if name not in rule.defaults:
                raise TypeError("missing argument %r" % name)
            bound[name] = rule.defaults[name]
    return bound


def placeholders(tpl):
    """The names a template reads (``g``, ``y``, parameters, shared values)."""
    return set(template(tpl).reads)


def templates(rule, literals=None, accumulate=False, into=False):
    """Parameter -> template (None: no gradient), with the rule's specialisations for
    the compile-time constant arguments ``literals`` (parameter -> value) and, with
    ``accumulate``, its cheaper broadcasting forms; with ``into``, only its in-place
    forms (``{out}``), None where it has none."""
    if into:
        return {p: rule.into.get(p) for p in rule.params}
    out = dict(rule.vjps)
    if accumulate:
        out.update(rule.accumulate)
    if rule.literal is not None and literals:
        out.update(rule.literal(literals))
    return out


def default_wrap(rule):
    """The operands whose contributions go through ``sum_to`` unless told otherwise: every
    operand of an element-wise rule of several operands (a one-operand element-wise
    result has its operand's shape)."""
    return rule.params if rule.elementwise and len(rule.params) > 1 else ()


def reads(rule, wanted=None, literals=None, accumulate=False, wrap=None):
    """The parameters, and ``"y"`` for the result, that the contributions to ``wanted``
    (default: all operands) read, shared values included: the primal values the
    reverse sweep needs (an operand wrapped in ``sum_to`` is read for its shape)."""
    tpls = templates(rule, literals, accumulate)
    wanted = rule.params if wanted is None else wanted
    names = set()
    for p in wanted:
        if tpls.get(p):
            names |= placeholders(tpls[p])
            if p in (default_wrap(rule) if wrap is None else wrap):
                names.add(p)
    for name, tpl in rule.shared:
        if name in names:
            names |= placeholders(tpl)
    return {n for n in names if n in rule.params or n == "y"}


def instantiate(rule, args, g, y=None, wanted=None, wrap=None, literals=None,
                accumulate=False, shared_names=None):
    """The source of the contributions of a call's operands to their adjoints.

    ``args``: parameter -> argument source (``bind``); ``g``, ``y``: the sources of the
    result's adjoint and value; ``wanted``: the parameters to differentiate (default: all
    with a template, constants left out); ``wrap``: the parameters of an element-wise rule
    whose contribution goes through ``sum_to`` (default: ``default_wrap``);
    ``shared_names``: name -> variable for the shared values (default: the names).
    Returns ``(prelude, contributions)``: ``prelude`` lists ``(variable, source)``
    assignments to run first, ``contributions`` maps each wanted parameter to its
    expression.
    """
    tpls = templates(rule, literals, accumulate)
    if wanted is None:                 # every operand but the constants
        wanted = [p for p in rule.params if p not in (literals or {})]
    wanted = [p for p in wanted if tpls.get(p)]
    shared_names = dict(shared_names or {})
    for name, _ in rule.shared:
        shared_names.setdefault(name, name)
    values = dict(args, g=g, **shared_names)
    if y is not None:
        values["y"] = y
    used = set().union(*(placeholders(tpls[p]) for p in wanted)) if wanted else set()
    if "y" in reads(rule, wanted, literals, accumulate, wrap) and y is None:
        raise ValueError("the adjoint of %s reads the result: pass y" % (wanted,))
    prelude = [(shared_names[name], str(substitute(tpl, values)))
               for name, tpl in rule.shared if name in used]
    contributions = {}
    for p in wanted:
        src = substitute(tpls[p], values)
        if p in (default_wrap(rule) if wrap is None else wrap):
            src = substitute("sum_to({c}, {a})", {"c": src, "a": args[p]})
        contributions[p] = str(src)
    return prelude, contributions


def by_operand(rule, args, accumulate=False, into=False):
    """The rule's templates written over operand positions, as the rewrite's scalar rules
    are (``{0}``, ``{1}``... for the operands, ``{g}``, ``{y}``): parameter -> template.

    ``args`` maps each parameter to its argument: an operand position (int), a tuple of
    positions (arguments packed into one tuple: ``x.reshape(3, 4)``), or source text (a
    default). Shared values are written out where they are read.
    """
    key = (id(rule), tuple(sorted(args.items())), accumulate, into)
    found = _BY_OPERAND.get(key)
    if found is not None and found[0] is rule:
        return found[1]
    values = {}
    for p, a in args.items():
        if isinstance(a, int):
            values[p] = "{%d}" % a
        elif isinstance(a, tuple):
            values[p] = "(%s,)" % ", ".join("{%d}" % k for k in a)
        else:
            values[p] = a
    for name, tpl in rule.shared:
        values[name] = substitute(tpl, values)
    out = {p: None if t is None else substitute(t, values)
           for p, t in templates(rule, accumulate=accumulate, into=into).items()}
    _BY_OPERAND[key] = (rule, out)
    return out


_BY_OPERAND = {}
