"""The njit helpers that array adjoint rules call, gathered in ``RULE_HELPERS``.

The generated backward's namespace gets ``RULE_HELPERS`` (name -> Numba dispatcher), so
the templates of ``array_rules.py`` can call ``sum_to(...)``, ``unreduce(...)``... by name.
Conventions (see ``vjp_core``): a helper returns the contribution to ONE operand's adjoint,
shaped exactly like that operand; a new array is C-contiguous, a scalar operand gets a
float; some are ``g`` or a view of it (``sum_to`` when no broadcasting happened, the
reshapes): add contributions into adjoints, never write into them.

* ``vjp_core``: ``sum_to`` (undo broadcasting), ``unreduce`` (undo a reduction),
  ``reduced_view`` (the same, unmaterialised, for ``x_bar += ...``);
* ``special``: ``digamma``, ``trigamma`` (the scalar rules of ``math.lgamma``,
  ``math.gamma``);
* ``vjp_arrange``: ``kron_vjp_a``/``_b``, ``repeat_vjp``, ``linspace_weights``,
  ``append_axis_vjp_arr``/``_values`` (``np.append`` with or without an axis);
* ``vjp_decomp``: the items of ``eigh``/``eig``/``svd``/``slogdet``/``qr``
  (``eigh_values``, ``qr_q``...), and the adjoints and tangents of those and of
  ``cholesky``, ``pinv``, ``cond``;
* ``vjp_lstsq``: the items of ``lstsq`` (``lstsq_solution``...), their adjoints and
  tangents;
* ``vjp_split``: the pieces of the splits (``split_item``...) and their adjoints;
* ``vjp_order``: ``partition_vjp``, ``percentile_vjp_a``/``_q`` (also ``np.quantile``)
  and their tangents;
* ``vjp_elementwise``: ``clip_vjp``, ``clip_bounds_vjp``, the ufuncs ``erf``, ``erfc``,
  and the guarded products ``zmul`` (of numbers: zero where the first is; ``zmul_select``
  for code that runs once) and ``zmultiply`` (its ufunc);
* ``vjp_reduce``: ``prod_vjp``, ``extreme_vjp`` (max/min), ``cumsum_vjp``,
  ``cumprod_vjp`` (and ``cumprod_jvp``, the forward mode's), ``norm_vjp``,
  ``average_vjp_a``/``_weights``;
* ``vjp_linalg``: ``dot_vjp_a``/``dot_vjp_b`` (also ``@``), ``outer_vjp_a``/``_b``,
  ``solve_vjp_a``, ``trace_vjp``, ``diag_vjp``, ``like_dtype`` (an adjoint in an operand's
  dtype, for BLAS); and, apart in ``IN_PLACE`` (they write
  into their first argument), ``add_dot_vjp_a``/``add_dot_vjp_b``;
* ``vjp_shape``: ``transpose_vjp``, ``concatenate_vjp``, ``stack_vjp``, ``hstack_vjp``,
  ``vstack_vjp``, ``column_stack_vjp``, ``sort_vjp`` (and ``sort_jvp``, the forward
  mode's), ``median_vjp``, ``tri_vjp``
  (``np.triu``/``np.tril``), ``append_vjp_arr``/``_values``;
* ``vjp_sequence``: ``diff_vjp``, ``interp_vjp_x``/``_xp``/``_fp`` (and ``interp_jvp``, the
  forward mode's, and ``interp_vjp_x_jvp``/``_xp_jvp``/``_fp_jvp``, the tangents of the
  three adjoints, for ``hvp``), ``take_vjp`` (``x[idx]``, ``x[idx, 1]``), ``last_writes``
  (``x[idx] = v``).
"""
from .special import digamma, trigamma
from . import vjp_decomp, vjp_lstsq, vjp_split
from .vjp_core import reduced_view, sum_to, unreduce
from .vjp_elementwise import clip_bounds_vjp, clip_vjp, erf, erfc, zmul, zmul_select, zmultiply
from .vjp_linalg import (add_dot_vjp_a, add_dot_vjp_b, diag_vjp, dot_vjp_a, dot_vjp_b,
                         like_dtype, outer_vjp_a, outer_vjp_b, solve_vjp_a, trace_vjp)
from .vjp_reduce import (average_vjp_a, average_vjp_weights, cumprod_jvp, cumprod_vjp,
                         cumsum_vjp, extreme_vjp, norm_vjp, prod_vjp)
from .vjp_shape import (append_vjp_arr, append_vjp_values, column_stack_vjp,
                        concatenate_vjp, hstack_vjp, median_vjp, sort_jvp, sort_vjp, stack_vjp,
                        transpose_vjp, tri_vjp, vstack_vjp)

RULE_HELPERS = {f.__name__: f for f in (
    sum_to, unreduce, reduced_view, clip_vjp, clip_bounds_vjp, erf, erfc, prod_vjp, extreme_vjp,
    cumsum_vjp, norm_vjp, dot_vjp_a, dot_vjp_b, like_dtype, outer_vjp_a, outer_vjp_b, solve_vjp_a,
    trace_vjp, diag_vjp, transpose_vjp, concatenate_vjp, stack_vjp, hstack_vjp, vstack_vjp,
    column_stack_vjp, sort_vjp, sort_jvp, median_vjp, tri_vjp, append_vjp_arr,
    append_vjp_values,
    average_vjp_a, average_vjp_weights, cumprod_vjp, cumprod_jvp, digamma, trigamma)}
# The guarded products (rules/template.py, zero_safe): an intrinsic has no __name__.
RULE_HELPERS.update(zmul=zmul, zmul_select=zmul_select, zmultiply=zmultiply)

# kron, repeat, linspace, append along an axis: vjp_arrange.
from .vjp_arrange import append_axis_vjp_arr, append_axis_vjp_values, kron_vjp_a, kron_vjp_b, linspace_weights, repeat_vjp

RULE_HELPERS.update({f.__name__: f for f in (
    append_axis_vjp_arr, append_axis_vjp_values, kron_vjp_a, kron_vjp_b, linspace_weights,
    repeat_vjp)})

# np.linalg's decompositions: vjp_decomp (the items of eigh, svd and slogdet too, which
# the replay calls), vjp_lstsq; the pieces of the splits: vjp_split.
RULE_HELPERS.update({name: getattr(vjp_decomp, name) for name in (
    "eigh_values", "eigh_vectors", "svd_values", "slogdet_sign", "slogdet_logabs",
    "eigh_values_vjp", "eigh_values_jvp", "eigh_vectors_vjp", "eigh_vectors_jvp",
    "svd_values_vjp", "svd_values_jvp", "slogdet_vjp", "slogdet_jvp", "cholesky_vjp",
    "cholesky_jvp", "pinv_vjp", "pinv_jvp",
    "svd_u", "svd_vh", "svd_u_vjp", "svd_vh_vjp", "svd_u_jvp", "svd_vh_jvp", "eig_values",
    "eig_vectors", "eig_values_vjp", "eig_values_jvp", "eig_vectors_vjp", "eig_vectors_jvp",
    "qr_q", "qr_r", "qr_q_vjp", "qr_r_vjp", "qr_q_jvp", "qr_r_jvp", "cond_grad")})
RULE_HELPERS.update({name: getattr(vjp_lstsq, name) for name in (
    "lstsq_solution", "lstsq_residuals", "lstsq_rank", "lstsq_sv", "lstsq_solution_vjp_a",
    "lstsq_solution_vjp_b", "lstsq_solution_jvp_a", "lstsq_solution_jvp_b",
    "lstsq_residuals_vjp_a", "lstsq_residuals_vjp_b", "lstsq_residuals_jvp")})
RULE_HELPERS.update({name: getattr(vjp_split, name) for name in (
    "split_item", "array_split_item", "hsplit_item", "vsplit_item", "dsplit_item",
    "split_item_vjp", "hsplit_item_vjp")})

# np.diff, np.interp and x[idx]: vjp_sequence.
from .vjp_sequence import diff_vjp, interp_jvp, interp_vjp_fp, interp_vjp_fp_jvp, interp_vjp_x, interp_vjp_x_jvp, interp_vjp_xp, interp_vjp_xp_jvp, last_writes, take_vjp

RULE_HELPERS.update({f.__name__: f for f in (
    diff_vjp, interp_vjp_x, interp_vjp_xp, interp_vjp_fp, take_vjp, interp_jvp,
    interp_vjp_x_jvp, interp_vjp_xp_jvp, interp_vjp_fp_jvp, last_writes)})

# np.partition, np.percentile, np.quantile: vjp_order.
from .vjp_order import partition_jvp, partition_vjp, percentile_jvp_a, percentile_jvp_q, percentile_vjp_a, percentile_vjp_q

RULE_HELPERS.update({f.__name__: f for f in (
    partition_vjp, partition_jvp, percentile_vjp_a, percentile_vjp_q, percentile_jvp_a,
    percentile_jvp_q)})

#: Helpers that add a contribution into the adjoint array given first (``add_dot_vjp_a``
#: for the rules' ``into`` templates): they write memory, so they are kept apart from the
#: pure ``RULE_HELPERS``.
IN_PLACE = {f.__name__: f for f in (add_dot_vjp_a, add_dot_vjp_b)}
# The reversed loop of an in-place operator between views of one array (vjp_overlap).
from .vjp_overlap import overlap_sum_vjp, overlap_update_jvp, overlap_update_vjp  # noqa: E402
IN_PLACE.update(overlap_sum_vjp=overlap_sum_vjp, overlap_update_vjp=overlap_update_vjp,
                overlap_update_jvp=overlap_update_jvp)

# The NaN-skipping reductions and np.ptp (vjp_nan); np.trapezoid, np.convolve,
# np.correlate, np.cov, np.corrcoef, np.ediff1d, np.vander, np.arange (vjp_signal);
# np.polynomial.polynomial's polyval, polyint, polydiv and its items, and the sums'
# leading_part (vjp_poly).
from . import vjp_nan, vjp_poly, vjp_signal  # noqa: E402

RULE_HELPERS.update({name: getattr(vjp_nan, name) for name in (
    "nansum_vjp", "nanmean_vjp", "nanvar_vjp", "nanstd_vjp", "nanextreme_vjp",
    "nanprod_vjp", "nanmedian_vjp", "nanpercentile_vjp_a", "nanpercentile_vjp_q",
    "nanpercentile_jvp_a", "nanpercentile_jvp_q", "nancumsum_vjp", "nancumsum_jvp",
    "nancumprod_vjp", "nancumprod_jvp", "ptp_vjp")})
RULE_HELPERS.update({name: getattr(vjp_signal, name) for name in (
    "trapezoid_vjp_y", "trapezoid_vjp_x", "trapezoid_vjp_dx", "trapezoid_jvp_dx",
    "conv_vjp", "cov_vjp", "cov_jvp", "corrcoef_vjp", "corrcoef_jvp", "ediff1d_vjp",
    "ediff1d_vjp_end", "ediff1d_part", "zeros_like_of", "vander_vjp", "vander_jvp",
    "arange_vjp_start", "arange_vjp_step", "arange_jvp_start")})
RULE_HELPERS.update({name: getattr(vjp_poly, name) for name in (
    "polyval_vjp_x", "polyval_vjp_c", "polyval_jvp_x", "polyval_jvp_c", "leading_part",
    "vector_of",
    "polyint_vjp", "polyint_jvp", "polydiv_vjp", "polydiv_jvp", "polydiv_quotient",
    "polydiv_remainder")})
