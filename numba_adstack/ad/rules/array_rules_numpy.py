"""Array rules of the rest of the NumPy that Numba compiles: the NaN-skipping reductions
and scans, ``np.ptp``, ``np.trapezoid``, ``np.convolve``, ``np.correlate``, ``np.cov``,
``np.corrcoef``, ``np.ediff1d``, ``np.unwrap``, ``np.vander``, ``np.diagflat``,
``np.polynomial.polynomial.polyval``, ``polyint`` and ``polydiv``'s items, float
``np.arange``, ``np.logspace`` and ``np.geomspace``, ``np.linalg.cond`` and the items of
``np.linalg.qr`` and ``np.linalg.lstsq``. Written as ``array_rules.py``'s entries are;
``array_rules`` adds them to ``ARRAY_RULES`` (helpers: ``vjp_nan.py``, ``vjp_signal.py``,
``vjp_poly.py``, ``vjp_decomp.py``, ``vjp_lstsq.py``).
"""
import numpy as np
import numpy.polynomial.polynomial as _poly

from . import vjp_decomp as D
from . import vjp_lstsq as LS
from . import vjp_poly as P

_LN10 = "2.302585092994046"


def _scalar(vjp):
    """The tangent of a float result whose adjoint is ``vjp`` (with ``{g}`` in it): the
    sum of its weights times the tangent, a weight of 0 contributing 0 (a NaN element,
    which the NaN-skipping reductions leave out, may have a NaN tangent)."""
    return "np.sum(zmultiply(%s, {d}))" % vjp.replace("{g}", "1.0")


def _pair(vjp):
    return {"vjp": vjp, "jvp": _scalar(vjp)}


def numpy_rules(rule, ew):
    """The entries, made by ``array_rules``' ``_rule`` and ``_ew``."""
    def reduction(params, vjp, **kw):
        return rule(params, vjp, jvps={params.split()[0]: _scalar(vjp)}, **kw)

    conv = {"a": "conv_vjp({g}, {a}, {v}, {mode}, %s, True)",
            "v": "conv_vjp({g}, {a}, {v}, {mode}, %s, False)"}
    out = {
        # NaN elements get no gradient; an all-NaN operand none anywhere.
        np.nansum: reduction("a", "nansum_vjp({g}, {a})"),
        np.nanmean: reduction("a", "nanmean_vjp({g}, {a})"),
        np.nanvar: reduction("a axis=None dtype=None out=None ddof=0",
                             "nanvar_vjp({g}, {a}, {ddof})"),
        np.nanstd: reduction("a axis=None dtype=None out=None ddof=0",
                             "nanstd_vjp({g}, {y}, {a}, {ddof})"),
        np.nanmax: reduction("a", "nanextreme_vjp({g}, {y}, {a})"),
        np.nanmin: reduction("a", "nanextreme_vjp({g}, {y}, {a})"),
        np.nanprod: reduction("a", "nanprod_vjp({g}, {y}, {a})"),
        np.nanmedian: reduction("a", "nanmedian_vjp({g}, {a})"),
        np.nanpercentile: rule("a q", "nanpercentile_vjp_a({g}, {a}, {q}, 100.0)",
                               "nanpercentile_vjp_q({g}, {a}, {q}, 100.0)",
                               jvps={"a": "nanpercentile_jvp_a({a}, {q}, {d}, 100.0)",
                                     "q": "nanpercentile_jvp_q({a}, {q}, {d}, 100.0)"}),
        np.nanquantile: rule("a q", "nanpercentile_vjp_a({g}, {a}, {q}, 1.0)",
                             "nanpercentile_vjp_q({g}, {a}, {q}, 1.0)",
                             jvps={"a": "nanpercentile_jvp_a({a}, {q}, {d}, 1.0)",
                                   "q": "nanpercentile_jvp_q({a}, {q}, {d}, 1.0)"}),
        # Flat, as Numba's.
        np.nancumsum: rule("a", "nancumsum_vjp({g}, {a})",
                           jvps={"a": "nancumsum_jvp({a}, {d})"}),
        np.nancumprod: rule("a", "nancumprod_vjp({g}, {a})",
                            jvps={"a": "nancumprod_jvp({a}, {d})"}),
        np.ptp: reduction("a", "ptp_vjp({g}, {a})"),
        np.convolve: rule("a v mode='full'", conv["a"] % "False", conv["v"] % "False",
                          jvps={"a": "np.convolve({d}, {v}, {mode})",
                                "v": "np.convolve({a}, {d}, {mode})"}),
        np.correlate: rule("a v mode='valid'", conv["a"] % "True", conv["v"] % "True",
                           jvps={"a": "np.correlate({d}, {v}, {mode})",
                                 "v": "np.correlate({a}, {d}, {mode})"}),
        # np.cov's and np.trapezoid's y is named y_ here, {y} being the result (so
        # passed by position).
        np.cov: rule("m y_=None rowvar=True bias=False ddof=None",
                     "cov_vjp({g}, {m}, {y_}, {rowvar}, {bias}, {ddof}, True)",
                     "cov_vjp({g}, {m}, {y_}, {rowvar}, {bias}, {ddof}, False)",
                     jvps={"m": "cov_jvp({m}, {y_}, {rowvar}, {bias}, {ddof}, {d}, True)",
                           "y_": "cov_jvp({m}, {y_}, {rowvar}, {bias}, {ddof}, {d}, False)"}),
        np.corrcoef: rule("x y_=None rowvar=True",
                          "corrcoef_vjp({g}, {x}, {y_}, {rowvar}, True)",
                          "corrcoef_vjp({g}, {x}, {y_}, {rowvar}, False)",
                          jvps={"x": "corrcoef_jvp({x}, {y_}, {rowvar}, {d}, True)",
                                "y_": "corrcoef_jvp({x}, {y_}, {rowvar}, {d}, False)"}),
        # Piecewise the identity: whole periods added where the phase jumps, as many at
        # each element as (y - p) / period (which jumps are counted moves with discont
        # only at isolated values: no derivative there).
        np.unwrap: rule("p discont=None axis=-1 period=6.283185307179586", "{g}",
                        "{g} * 0.0", None, "{g} * (({y} - {p}) / {period})",
                        jvps={"p": "{d}", "discont": "0.0 * {y}",
                              "period": "{d} * (({y} - {p}) / {period})"}),
        np.vander: rule("x N=None increasing=False", "vander_vjp({g}, {x}, {N}, {increasing})",
                        jvps={"x": "vander_jvp({x}, {N}, {increasing}, {d})"}),
        np.diagflat: rule("v k=0", "np.ascontiguousarray(np.diag({g}, {k}))"
                                   ".reshape(vector_of({v}).shape)",
                          jvps={"v": "np.diagflat({d}, {k})"}),
        np.ediff1d: rule("ary to_end=None to_begin=None",
                         "ediff1d_vjp({g}, {ary}, {to_begin})",
                         "ediff1d_part(ediff1d_vjp_end({g}, {ary}, {to_end}, {to_begin}, True),"
                         " {to_end})",
                         "ediff1d_part(ediff1d_vjp_end({g}, {ary}, {to_end}, {to_begin}, False),"
                         " {to_begin})",
                         jvps={"ary": "np.ediff1d({d}, zeros_like_of({to_end}), "
                                      "zeros_like_of({to_begin}))",
                               "to_end": "np.ediff1d(np.zeros({ary}.shape), {d}, "
                                         "zeros_like_of({to_begin}))",
                               "to_begin": "np.ediff1d(np.zeros({ary}.shape), "
                                           "zeros_like_of({to_end}), {d})"}),
        # y = sum_k c_k x^k; c of several dimensions with tensor=True: one polynomial per
        # column of c, at every x.
        _poly.polyval: rule("x c tensor=True", "polyval_vjp_x({g}, {x}, {c}, {tensor})",
                            "polyval_vjp_c({g}, {x}, {c}, {tensor})",
                            jvps={"x": "polyval_jvp_x({d}, {x}, {c}, {tensor})",
                                  "c": "polyval_jvp_c({x}, {d}, {tensor})"}),
        # start + i step; np.arange(stop) has no gradient.
        np.arange: rule("start stop=None step=None dtype=None",
                        "arange_vjp_start({g}, {stop})", None, "arange_vjp_step({g})",
                        jvps={"start": "arange_jvp_start({y}, {stop}, {d})",
                              "stop": "np.zeros({y}.shape)",
                              "step": "{d} * np.arange({y}.size)"}),
        # 10 ** (start (1 - t) + stop t); start (stop / start) ** t.
        np.logspace: rule("start stop num=50",
                          "np.sum({g} * {y} * linspace_weights({num}, True)) * " + _LN10,
                          "np.sum({g} * {y} * linspace_weights({num}, False)) * " + _LN10,
                          jvps={"start": "{d} * {y} * linspace_weights({num}, True) * " + _LN10,
                                "stop": "{d} * {y} * linspace_weights({num}, False) * "
                                        + _LN10}),
        np.geomspace: rule("start stop num=50",
                           "np.sum({g} * {y} * linspace_weights({num}, True)) / {start}",
                           "np.sum({g} * {y} * linspace_weights({num}, False)) / {stop}",
                           jvps={"start": "{d} * {y} * linspace_weights({num}, True) / {start}",
                                 "stop": "{d} * {y} * linspace_weights({num}, False) / {stop}"}),
    }
    # x 2**n, n an integer (not a float ufunc of two operands): the same power of two.
    out[np.ldexp] = ew("x n", "{g} * np.ldexp(1.0, {n})", None,
                       jvps={"x": "{d} * np.ldexp(1.0, {n})"})
    # np.polynomial.polynomial's sums and product of 1-d coefficient arrays: padded with
    # zeros, added (or convolved), then trailing zeros trimmed.
    # (a number given for coefficients is one coefficient: vector_of)
    full = "leading_part({g}, vector_of({c1}).size + vector_of({c2}).size - 1)"
    out[_poly.polyadd] = rule("c1 c2", "leading_part({g}, vector_of({c1}).size)",
                              "leading_part({g}, vector_of({c2}).size)",
                              jvps={"c1": "leading_part(vector_of({d}), {y}.size)",
                                    "c2": "leading_part(vector_of({d}), {y}.size)"})
    out[_poly.polysub] = rule("c1 c2", "leading_part({g}, vector_of({c1}).size)",
                              "-leading_part({g}, vector_of({c2}).size)",
                              jvps={"c1": "leading_part(vector_of({d}), {y}.size)",
                                    "c2": "-leading_part(vector_of({d}), {y}.size)"})
    out[_poly.polymul] = rule("c1 c2",
                              "conv_vjp(%s, vector_of({c1}), vector_of({c2}), 'full', False, "
                              "True)" % full,
                              "conv_vjp(%s, vector_of({c1}), vector_of({c2}), 'full', False, "
                              "False)" % full,
                              jvps={"c1": "leading_part(np.convolve(vector_of({d}), "
                                          "vector_of({c2})), {y}.size)",
                                    "c2": "leading_part(np.convolve(vector_of({c1}), "
                                          "vector_of({d})), {y}.size)"})
    # np.take(a, idx) (and a.take(idx)): a's flat elements at the index array idx; its
    # adjoint adds g back at those positions (repeated indices add up).
    out[np.take] = rule("a indices",
                        "take_vjp({g}, np.ravel({a}), np.asarray({indices}))"
                        ".reshape({a}.shape)",
                        jvps={"a": "np.take({d}, {indices})"})
    # A broadcast view of a: its adjoint summed back to a's shape.
    out[np.broadcast_to] = rule("a shape", "sum_to({g}, {a})",
                                jvps={"a": "np.broadcast_to({d}, {shape}).copy()"})
    # Along the last axis; x None, of the last axis' length or of y's shape.
    trap = rule("y_ x=None dx=1.0", "trapezoid_vjp_y({g}, {y_}, {x}, {dx})",
                "trapezoid_vjp_x({g}, {y_}, {x}, {dx})",
                "trapezoid_vjp_dx({g}, {y_}, {x}, {dx})",
                jvps={"y_": "np.trapezoid({d}, {x}, {dx})",
                      "x": "np.trapezoid({y_}, {d})",
                      "dx": "trapezoid_jvp_dx({y_}, {x}, {d})"})
    # m integrations of the coefficients (their trailing zeros trimmed: none to them).
    out[_poly.polyint] = rule("c m=1", "polyint_vjp({g}, {c}, {m})",
                              jvps={"c": "polyint_jvp({d}, {m}, {y}.shape[0])"})
    # The items of np.linalg.qr, np.linalg.lstsq and polydiv, as functions of their own
    # (capture rewrites np.linalg.qr(a)[0] as qr_q(a): ad/capture/numpy_items.py).
    # Reduced QR of a square or tall a (the helpers raise ValueError for a wide one).
    out[D.qr_q] = rule("a", "qr_q_vjp({g}, {a})", jvps={"a": "qr_q_jvp({a}, {d})"})
    out[D.qr_r] = rule("a", "qr_r_vjp({g}, {a})", jvps={"a": "qr_r_jvp({a}, {d})"})
    # lstsq's solution A+ b (constant rank), its residuals, a's singular values; the rank
    # is an integer.
    lst = "{a}, {b}, {rcond}"
    out[LS.lstsq_solution] = rule("a b rcond=-1.0", "lstsq_solution_vjp_a({g}, %s)" % lst,
                                 "lstsq_solution_vjp_b({g}, %s)" % lst,
                                 jvps={"a": "lstsq_solution_jvp_a(%s, {d})" % lst,
                                       "b": "lstsq_solution_jvp_b(%s, {d})" % lst})
    out[LS.lstsq_residuals] = rule(
        "a b rcond=-1.0", "lstsq_residuals_vjp_a({g}, %s)" % lst,
        "lstsq_residuals_vjp_b({g}, %s)" % lst,
        jvps={"a": "lstsq_residuals_jvp(%s, {d}, np.zeros({b}.shape))" % lst,
              "b": "lstsq_residuals_jvp(%s, np.zeros({a}.shape), {d})" % lst})
    out[LS.lstsq_sv] = rule("a b rcond=-1.0", "svd_values_vjp({g}, {a})",
                           jvps={"a": "svd_values_jvp({a}, {d})",
                                 "b": "np.zeros({y}.shape)"})
    out[LS.lstsq_rank] = rule("a b rcond=-1.0", jvps={"a": "0.0", "b": "0.0"})
    # The condition number: through the extreme singular values (p None, 2, -2), else
    # norm(a, p) norm(inv(a), p).
    out[np.linalg.cond] = rule("x p=None", "{g} * cond_grad({x}, {p})",
                               jvps={"x": "np.sum(cond_grad({x}, {p}) * {d})"})
    # c1 = q c2 + r: linear in c1 for a fixed c2, and in c2 as c1 = -q dc2.
    for item, quotient in ((P.polydiv_quotient, "True"), (P.polydiv_remainder, "False")):
        first = "{g}, np.zeros(0)" if quotient == "True" else "np.zeros(0), {g}"
        out[item] = rule(
            "c1 c2", "polydiv_vjp(%s, {c1}, {c2}, True)" % first,
            "polydiv_vjp(%s, {c1}, {c2}, False)" % first,
            jvps={"c1": "polydiv_jvp({c1}, {c2}, {d}, np.zeros({c2}.size), {y}.size, %s)"
                        % quotient,
                  "c2": "polydiv_jvp({c1}, {c2}, np.zeros({c1}.size), {d}, {y}.size, %s)"
                        % quotient})
    for name in ("trapezoid", "trapz"):     # trapz: NumPy before 2.4
        if hasattr(np, name):
            out[getattr(np, name)] = trap
    return out
