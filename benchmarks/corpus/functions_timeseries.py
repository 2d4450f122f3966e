"""Corpus: time-series kernels of tslearn, numbagg and vectorbt, copied verbatim.

Sources:
* tslearn (github tslearn-team/tslearn at commit 4658696): tslearn/metrics/_dtw.py,
  dtw_variants.py, soft_dtw_fast.py, cycc.py (DTW cost matrices, soft-DTW, envelopes).
* numbagg (github numbagg/numbagg at commit 988fa46): numbagg/moving.py, moving_exp.py,
  funcs.py: the scalar kernels that numbagg's decorators (``ndmove``, ``ndmoveexp``,
  ``ndaggregate``, ``ndreduce``, ``ndquantile``, ``ndmatrix``) turn into gufuncs; here
  the kernel itself is the function under test, its ``out`` argument measured through
  ``outputs=``.
* vectorbt (github polakowo/vectorbt at commit f989752): vectorbt/generic/nb.py and
  vectorbt/returns/nb.py, the 1-d ``*_nb`` functions; the helpers they call keep their
  ``@njit(cache=True)``. vectorbt's returns module calls generic helpers as
  ``generic_nb.<name>``: ``generic_nb`` here is a module object holding the copied helpers.

``from __future__ import annotations`` (as numbagg's funcs.py has) keeps the authors'
type annotations (``tp.Array1d``, ``T``, ``FloatArray``) unevaluated.
"""
from __future__ import annotations

import types

import numpy
import numpy as np
from numba import njit, objmode, prange

TSL = "tslearn-team/tslearn@4658696:tslearn/metrics/"
NBG = "numbagg/numbagg@988fa46:numbagg/"
VBT = "polakowo/vectorbt@f989752:vectorbt/"

DBL_MAX = np.finfo("double").max
_INV_COND_TOL = np.finfo(np.float64).eps * 1e3


# ---------------------------------------------------------------- tslearn

@njit(nogil=True)
def _njit_softmin3(a, b, c, gamma):
    r"""Compute softmin of 3 input variables with parameter gamma.

    In the limit case :math:`\gamma = 0`, the softmin operator reduces to
    a hard-min operator.

    Parameters
    ----------
    a : float64
        First input variable.
    b : float64
        Second input variable.
    c : float64
        Third input variable.
    gamma : float64
        Regularization parameter.

    Returns
    -------
    softmin_value : float64
        Softmin value.
    """
    a /= -gamma
    b /= -gamma
    c /= -gamma

    max_val = max(max(a, b), c)

    tmp = 0
    tmp += np.exp(a - max_val)
    tmp += np.exp(b - max_val)
    tmp += np.exp(c - max_val)
    softmin_value = -gamma * (np.log(tmp) + max_val)
    return softmin_value



@njit()
def _njit_local_squared_dist(x, y):
    """Compute the squared distance between two vectors.

    Parameters
    ----------
    x : array-like, shape=(d,)
        A vector.
    y : array-like, shape=(d,)
        Another vector.

    Returns
    -------
    dist : float
        Squared distance between x and y.
    """
    dist = 0.0
    for di in range(x.shape[0]):
        diff = x[di] - y[di]
        dist += diff * diff
    return dist



def _njit_accumulated_matrix(s1, s2, mask):
    l1 = s1.shape[0]
    l2 = s2.shape[0]
    cum_sum = numpy.full((l1 + 1, l2 + 1), numpy.inf)
    cum_sum[0, 0] = 0.0

    for i in range(l1):
        for j in range(l2):
            if mask[i, j]:
                dist = 0.0
                for di in range(s1[i].shape[0]):
                    diff = s1[i][di] - s2[j][di]
                    dist += diff * diff
                cum_sum[i + 1, j + 1] = dist
                cum_sum[i + 1, j + 1] += min(
                    cum_sum[i, j + 1],
                    cum_sum[i + 1, j],
                    cum_sum[i, j]
                )
    return cum_sum[1:, 1:]


def _njit_acc_matrix_from_dist_matrix(D, mask):
    l1, l2 = D.shape
    cum_sum = numpy.full((l1 + 1, l2 + 1), numpy.inf)
    cum_sum[0, 0] = 0.0

    for i in range(l1):
        for j in range(l2):
            if mask[i, j]:
                cum_sum[i + 1, j + 1] = D[i, j]
                cum_sum[i + 1, j + 1] += min(
                    cum_sum[i, j + 1],
                    cum_sum[i + 1, j],
                    cum_sum[i, j]
                )
    return cum_sum[1:, 1:]



def _njit_subsequence_cost_matrix(subseq, longseq):
    """Compute the accumulated cost matrix score between a subsequence and
    a reference time series.

    Parameters
    ----------
    subseq : array-like, shape=(sz1, d)
        Subsequence time series.
    longseq : array-like, shape=(sz2, d)
        Reference time series.

    Returns
    -------
    mat : array-like, shape=(sz1, sz2)
        Accumulated cost matrix.
    """
    l1 = subseq.shape[0]
    l2 = longseq.shape[0]
    cum_sum = numpy.full((l1 + 1, l2 + 1), numpy.inf)
    cum_sum[0, :] = 0.0

    for i in range(l1):
        for j in range(l2):
            cum_sum[i + 1, j + 1] = _njit_local_squared_dist(subseq[i], longseq[j])
            cum_sum[i + 1, j + 1] += min(
                cum_sum[i, j + 1], cum_sum[i + 1, j], cum_sum[i, j]
            )
    return cum_sum[1:, 1:]


def _njit_lb_envelope(time_series, radius):
    """Compute time series envelope as required by LB_Keogh.

    Parameters
    ----------
    time_series : array-like, shape=(sz, d)
        Time series for which the envelope should be computed.
    radius : int
        Radius to be used for the envelope generation (the envelope at time
        index i will be generated based on all observations from the time series
        at indices comprised between i-radius and i+radius).

    Returns
    -------
    envelope_down : array-like, shape=(sz, d)
        Lower-side of the envelope.
    envelope_up : array-like, shape=(sz, d)
        Upper-side of the envelope.
    """
    sz, d = time_series.shape
    envelope_up = numpy.empty((sz, d))
    envelope_down = numpy.empty((sz, d))

    for i in prange(sz):
        min_idx = i - radius
        max_idx = i + radius + 1
        if min_idx < 0:
            min_idx = 0
        if max_idx > sz:
            max_idx = sz
        for di in prange(d):
            envelope_down[i, di] = numpy.min(time_series[min_idx:max_idx, di])
            envelope_up[i, di] = numpy.max(time_series[min_idx:max_idx, di])

    return envelope_down, envelope_up



def _njit_soft_dtw(D, R, gamma):
    """Compute soft dynamic time warping.

    Parameters
    ----------
    D : array-like, shape=(m, n), dtype=float64
    R : array-like, shape=(m+2, n+2), dtype=float64
    gamma : float64
        Regularization parameter.
    """
    m = D.shape[0]
    n = D.shape[1]

    # Initialization.
    R[: m + 1, 0] = DBL_MAX
    R[0, : n + 1] = DBL_MAX
    R[0, 0] = 0

    # DP recursion.
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            # D is indexed starting from 0.
            R[i, j] = D[i - 1, j - 1] + _njit_softmin3(
                R[i - 1, j], R[i - 1, j - 1], R[i, j - 1], gamma
            )


def _njit_jacobian_product_sq_euc(X, Y, E, G):
    """Compute the square Euclidean product between the Jacobian
    (a linear map from m x d to m x n) and a matrix E.

    Parameters
    ----------
    X: array-like, shape=(m, d), dtype=float64
        First time series.
    Y: array-like, shape=(n, d), dtype=float64
        Second time series.
    E: array-like, shape=(m, n), dtype=float64
    G: array-like, shape=(m, d), dtype=float64
        Product with Jacobian.
        ([m x d, m x n] * [m x n] = [m x d]).
    """
    m = X.shape[0]
    n = Y.shape[0]
    d = X.shape[1]

    for i in prange(m):
        for j in range(n):
            for k in range(d):
                G[i, k] += E[i, j] * 2 * (X[i, k] - Y[j, k])



def normalized_cc(s1, s2, norm1=-1.0, norm2=-1.0):
    """Normalize cc.

    Parameters
    ----------
    s1 : array-like, shape=(sz, d), dtype=float64
        A time series.
    s2 : array-like, shape=(sz, d), dtype=float64
        Another time series.
    norm1 : float64, default=-1.0
    norm2 : float64, default=-1.0

    Returns
    -------
    norm_cc : array-like, shape=(2 * sz - 1), dtype=float64
    """
    assert s1.shape[1] == s2.shape[1]
    sz = s1.shape[0]
    n_bits = 1 + int(np.log2(2 * sz - 1))
    fft_sz = 2**n_bits

    if norm1 < 0.0:
        norm1 = np.linalg.norm(s1)
    if norm2 < 0.0:
        norm2 = np.linalg.norm(s2)

    denom = norm1 * norm2
    if denom < 1e-9:  # To avoid NaNs
        denom = np.inf

    with objmode(cc="float64[:, :]"):
        cc = np.real(
            np.fft.ifft(
                np.fft.fft(s1, fft_sz, axis=0)
                * np.conj(np.fft.fft(s2, fft_sz, axis=0)),
                axis=0,
            )
        )
    cc = np.vstack((cc[-(sz - 1) :], cc[:sz]))
    norm_cc = np.real(cc).sum(axis=-1) / denom
    return norm_cc



# ---------------------------------------------------------------- numbagg

def move_mean(a: T, window: int, min_count: int, out: T) -> None:
    asum = 0.0
    count = 0
    min_count = max(min_count, 1)

    # We previously had an initial loop which filled NaNs before `min_count`, but it
    # didn't have a discernible effect on performance.

    for i in range(window):
        ai = a[i]
        if not np.isnan(ai):
            asum += ai
            count += 1
        out[i] = asum / count if count >= min_count else np.nan

    for i in range(window, len(a)):
        ai = a[i]
        aold = a[i - window]

        ai_valid: bool = not np.isnan(ai)
        aold_valid: bool = not np.isnan(aold)

        # We previously had a single operation where both variables are valid, but it
        # caused some numerical instability for float32 values. For example the
        # `test_numerical_issues_float32_move_mean_1` test fails. While it had a 10%
        # performance impact relative to the previous if / elif, the current mode with
        # just two `if` branches is about 10% faster than the previous mode; maybe it
        # can execute both branches in parallel?

        # if ai_valid and aold_valid:
        #     asum += ai - aold
        # elif ...

        if aold_valid:
            asum -= aold
            count -= 1
        if ai_valid:
            asum += ai
            count += 1

        out[i] = asum / count if count >= min_count else np.nan


def move_sum(a: T, window: int, min_count: int, out: T) -> None:
    asum = 0.0
    count = 0

    # We don't generally split these up into two loops, but in `move_sum` & `move_mean`,
    # they're sufficiently different that it's worthwhile.

    for i in range(window):
        ai = a[i]
        if not np.isnan(ai):
            asum += ai
            count += 1
        out[i] = asum if count >= min_count else np.nan

    for i in range(window, len(a)):
        ai = a[i]
        aold = a[i - window]

        ai_valid: bool = not np.isnan(ai)
        aold_valid: bool = not np.isnan(aold)

        # Similar to the comment in `move_mean`, we previously had a single operation if
        # both were valid. That causes numerical instability for float32 values with a
        # window of 1.
        #
        # But possibly — particularly with a sum — the old and new values are likely to
        # be closer to each other than to the accumulator, so the numerical instability
        # is worse with this approach. When testing — for example with
        # `test_numerical_issues_float32_move_sum_100`, both approaches seem to fail
        # when increasing the multiplier at approximately the same rate.

        if ai_valid:
            asum += ai
            count += 1
        if aold_valid:
            asum -= aold
            count -= 1

        out[i] = asum if count >= min_count else np.nan


def move_std(a: T, window: int, min_count: int, out: T) -> None:
    asum = 0.0
    asum_sq = 0.0
    count = 0
    min_count = max(min_count, 2)

    for i in range(len(a)):
        ai = a[i]

        if i >= window:
            aold = a[i - window]
            if not np.isnan(aold):
                asum -= aold
                asum_sq -= aold * aold
                count -= 1

        if not np.isnan(ai):
            asum += ai
            asum_sq += ai * ai
            count += 1

        if count >= min_count:
            variance = (asum_sq - asum**2 / count) / (count - 1)
            out[i] = np.sqrt(variance)
        else:
            out[i] = np.nan


def move_var(a: T, window: int, min_count: int, out: T) -> None:
    asum = 0.0
    asum_sq = 0.0
    count = 0
    min_count = max(min_count, 2)

    for i in range(len(a)):
        ai = a[i]

        if i >= window:
            aold = a[i - window]
            if not np.isnan(aold):
                asum -= aold
                asum_sq -= aold * aold
                count -= 1

        if not np.isnan(ai):
            asum += ai
            asum_sq += ai * ai
            count += 1

        if count >= min_count:
            out[i] = (asum_sq - asum**2 / count) / (count - 1)
        else:
            out[i] = np.nan


def move_cov(a: T, b: T, window: int, min_count: int, out: T) -> None:
    asum = 0.0
    bsum = 0.0
    prodsum = (
        0.0  # This will store the sum of products of corresponding values in a and b
    )
    count = 0
    min_count = max(min_count, 2)

    for i in range(len(a)):
        ai = a[i]
        bi = b[i]

        if i >= window:
            aold = a[i - window]
            bold = b[i - window]
            if not (np.isnan(aold) or np.isnan(bold)):
                asum -= aold
                bsum -= bold
                prodsum -= aold * bold
                count -= 1

        if not (np.isnan(ai) or np.isnan(bi)):
            asum += ai
            bsum += bi
            prodsum += ai * bi
            count += 1
        if count >= min_count:
            out[i] = (prodsum - asum * bsum / count) / (count - 1)
        else:
            out[i] = np.nan


def move_corr(a: T, b: T, window: int, min_count: int, out: T) -> None:
    asum = 0.0
    bsum = 0.0
    prodsum = 0.0
    asum_sq = 0.0
    bsum_sq = 0.0
    count = 0

    min_count = max(min_count, 1)

    for i in range(len(a)):
        ai = a[i]
        bi = b[i]

        if i >= window:
            aold = a[i - window]
            bold = b[i - window]
            if not (np.isnan(aold) or np.isnan(bold)):
                asum -= aold
                bsum -= bold
                prodsum -= aold * bold
                asum_sq -= aold * aold
                bsum_sq -= bold * bold
                count -= 1

        if not (np.isnan(ai) or np.isnan(bi)):
            asum += ai
            bsum += bi
            prodsum += ai * bi
            asum_sq += ai * ai
            bsum_sq += bi * bi
            count += 1
        if count >= min_count:
            count_reciprocal = 1.0 / count
            avg_a = asum * count_reciprocal
            avg_b = bsum * count_reciprocal
            var_a = asum_sq * count_reciprocal - avg_a**2
            var_b = bsum_sq * count_reciprocal - avg_b**2
            cov_ab = prodsum * count_reciprocal - avg_a * avg_b
            var_a_var_b = var_a * var_b
            if var_a_var_b > 0:
                out[i] = cov_ab / np.sqrt(var_a_var_b)
            else:
                out[i] = np.nan

        else:
            out[i] = np.nan



def move_exp_nanmean(a: T, alpha: FloatArray, min_weight: float, out: T) -> None:
    """
    Exponentially weighted moving mean
    """
    N: int = len(a)

    numer = denom = weight = 0.0

    for i in range(N):
        a_i = a[i]
        alpha_i = alpha[i]
        decay = 1.0 - alpha_i

        numer *= decay
        denom *= decay
        weight *= decay

        if not np.isnan(a_i):
            numer += a_i
            denom += 1.0
            weight += alpha_i

        if weight >= min_weight:
            out[i] = numer / denom
        else:
            out[i] = np.nan


def move_exp_nansum(a: T, alpha: FloatArray, min_weight: float, out: T) -> None:
    N: int = len(a)

    numer = weight = 0.0
    zero_count = True

    for i in range(N):
        a_i = a[i]
        alpha_i = alpha[i]
        decay = 1.0 - alpha_i

        numer *= decay
        weight *= decay

        if not np.isnan(a_i):
            zero_count = False
            numer += a_i
            weight += alpha_i

        if weight >= min_weight and not zero_count:
            out[i] = numer
        else:
            out[i] = np.nan


def move_exp_nanvar(a: T, alpha: FloatArray, min_weight: float, out: T) -> None:
    N: int = len(a)

    # sum_x: decayed sum of the sequence values.
    # sum_x_2: decayed sum of the squared sequence values.
    # sum_weight: decayed count of non-missing values observed so far in the sequence.
    # sum_weight_2: decayed sum of the (already-decayed) weights of non-missing values.
    sum_x_2 = sum_x = sum_weight = sum_weight_2 = weight = 0.0

    for i in range(N):
        a_i = a[i]
        alpha_i = alpha[i]
        decay = 1.0 - alpha_i

        # decay the values
        sum_x_2 *= decay
        sum_x *= decay
        sum_weight *= decay
        # We decay this twice because we want the weight^2, so need to decay again
        # (We could explain this better; contributions welcome...)
        sum_weight_2 *= decay**2
        weight *= decay

        if not np.isnan(a_i):
            sum_x_2 += a_i**2
            sum_x += a_i
            sum_weight += 1.0
            sum_weight_2 += 1.0
            weight += alpha_i

        var_biased = (sum_x_2 / sum_weight) - ((sum_x / sum_weight) ** 2)

        # - Ultimately we want `sum(weights_norm**2)`, where `weights_norm` is
        #   `weights / sum(weights)`:
        #
        #   sum(weights_norm**2)
        #   = sum(weights**2 / sum(weights)**2)
        #   = sum(weights**2) / sum(weights)**2
        #   = sum_weight_2 / sum_weight**2
        bias = 1 - sum_weight_2 / (sum_weight**2)

        if weight >= min_weight and bias > 0:
            out[i] = var_biased / bias
        else:
            out[i] = np.nan


def move_exp_nanstd(a: T, alpha: FloatArray, min_weight: float, out: T) -> None:
    """
    Calculates the exponentially decayed standard deviation.

    Note that technically the unbiased weighted standard deviation is not exactly the
    same as the square root of the unbiased weighted variance, since the bias is
    concave. But it's close, and it's what pandas does.

    (If anyone knows the math well and wants to take a pass at improving it,
    contributions are welcome.)
    """
    # This is very similar to `move_exp_nanvar`, but square-roots in the final step. It
    # could be implemented as a wrapper around `move_exp_nanvar`, but it causes a couple
    # of small complications around warnings for `np.sqrt` on invalid values, and passing
    # the `axis` parameter, such that it was easier to just copy-pasta.

    N: int = len(a)

    # sum_x: decayed sum of the sequence values.
    # sum_x_2: decayed sum of the squared sequence values.
    # sum_weight: decayed count of non-missing values observed so far in the sequence.
    # sum_weight_2: decayed sum of the (already-decayed) weights of non-missing values.
    sum_x_2 = sum_x = sum_weight = sum_weight_2 = weight = 0.0

    for i in range(N):
        a_i = a[i]
        alpha_i = alpha[i]
        decay = 1.0 - alpha_i

        # decay the values
        sum_x_2 *= decay
        sum_x *= decay
        sum_weight *= decay
        # We decay this twice because we want the weight^2, so need to decay again
        # (We could explain this better; contributions welcome...)
        sum_weight_2 *= decay**2
        weight *= decay

        if not np.isnan(a_i):
            sum_x_2 += a_i**2
            sum_x += a_i
            sum_weight += 1.0
            sum_weight_2 += 1.0
            weight += alpha_i

        var_biased = (sum_x_2 / sum_weight) - ((sum_x / sum_weight) ** 2)

        # - Ultimately we want `sum(weights_norm**2)`, where `weights_norm` is
        #   `weights / sum(weights)`:
        #
        #   sum(weights_norm**2)
        #   = sum(weights**2 / sum(weights)**2)
        #   = sum(weights**2) / sum(weights)**2
        #   = sum_weight_2 / sum_weight**2
        bias = 1 - sum_weight_2 / (sum_weight**2)

        if weight >= min_weight and bias > 0:
            out[i] = np.sqrt(var_biased / bias)
        else:
            out[i] = np.nan


def move_exp_nancov(a1: T, a2: T, alpha: FloatArray, min_weight: float, out: T) -> None:
    N: int = len(a1)

    # sum_x1: decayed sum of the sequence values for a1.
    # sum_x2: decayed sum of the sequence values for a2.
    # sum_x1x2: decayed sum of the product of sequence values for a1 and a2.
    # sum_weight: decayed count of non-missing values observed so far in the sequence.
    # sum_weight_2: decayed sum of the (already-decayed) weights of non-missing values.
    sum_x1 = sum_x2 = sum_x1x2 = sum_weight = sum_weight_2 = weight = 0.0

    for i in range(N):
        a1_i = a1[i]
        a2_i = a2[i]
        alpha_i = alpha[i]
        decay = 1.0 - alpha_i

        # decay the values
        sum_x1 *= decay
        sum_x2 *= decay
        sum_x1x2 *= decay
        sum_weight *= decay
        sum_weight_2 *= decay**2
        weight *= decay

        if not (np.isnan(a1_i) or np.isnan(a2_i)):
            sum_x1 += a1_i
            sum_x2 += a2_i
            sum_x1x2 += a1_i * a2_i
            sum_weight += 1
            sum_weight_2 += 1
            weight += alpha_i

        cov_biased = ((sum_x1x2) - (sum_x1 * sum_x2 / sum_weight)) / sum_weight

        # Adjust for the bias. (explained in `move_exp_nanvar`)
        bias = 1 - sum_weight_2 / (sum_weight**2)

        if weight >= min_weight and bias > 0:
            out[i] = cov_biased / bias
        else:
            out[i] = np.nan


def move_exp_nancorr(
    a1: T, a2: T, alpha: FloatArray, min_weight: float, out: T
) -> None:
    N: int = len(a1)

    sum_x1 = sum_x2 = sum_x1x2 = sum_weight = sum_weight_2 = 0
    weight = sum_x1_2 = sum_x2_2 = 0

    for i in range(N):
        a1_i = a1[i]
        a2_i = a2[i]
        alpha_i = alpha[i]
        decay = 1.0 - alpha_i

        sum_x1 *= decay
        sum_x2 *= decay
        sum_x1x2 *= decay
        sum_weight *= decay
        sum_weight_2 *= decay**2
        weight *= decay

        sum_x1_2 *= decay
        sum_x2_2 *= decay

        if not (np.isnan(a1_i) or np.isnan(a2_i)):
            sum_x1 += a1_i
            sum_x2 += a2_i
            sum_x1x2 += a1_i * a2_i
            sum_weight += 1
            sum_weight_2 += 1
            weight += alpha_i
            sum_x1_2 += a1_i**2
            sum_x2_2 += a2_i**2

        # The bias cancels out, so we don't need to adjust for it

        cov = sum_x1x2 - (sum_x1 * sum_x2 / sum_weight)
        var_a1 = sum_x1_2 - (sum_x1**2 / sum_weight)
        var_a2 = sum_x2_2 - (sum_x2**2 / sum_weight)

        # TODO: we don't need to compute this for the output, but if we don't, then we
        # get an error around numerical precision that causes us to produce values when
        # we shouldn't. Would be good to be able to remove it. (This is well-tested, so
        # if we can remove it while passing tests, then we can.)
        bias = 1 - sum_weight_2 / (sum_weight**2)

        if weight >= min_weight and bias > 0:
            denominator = np.sqrt(var_a1 * var_a2)
            if denominator > 0:
                out[i] = cov / denominator
            else:
                out[i] = np.nan
        else:
            out[i] = np.nan



def nansum(a, out):
    asum = a.dtype.type(0)
    for ai in a:
        if not np.isnan(ai):
            asum += ai
    out[0] = asum


def nanmean(a, out):
    asum = 0.0
    count = 0
    for ai in a:
        if not np.isnan(ai):
            asum += ai
            count += 1
    if count > 0:
        out[0] = asum / count
    else:
        out[0] = np.nan


def nanvar(a: F, ddof: int, out: F) -> None:
    # Running two loops might seem inefficient, but it's 3x faster than a Welford's
    # algorithm. And if we don't compute the mean first, we get numerical instability
    # (which our tests capture so is easy to observe).

    asum = 0
    count = 0
    for ai in a:
        if not np.isnan(ai):
            asum += ai
            count += 1
    if count > ddof:
        amean = asum / count
        asum = 0
        for ai in a:
            if not np.isnan(ai):
                ai -= amean
                asum += ai * ai
        out[0] = asum / (count - ddof)
    else:
        out[0] = np.nan


def nanstd(a: F, ddof: int, out: F) -> None:
    asum = 0
    count = 0
    for ai in a:
        if not np.isnan(ai):
            asum += ai
            count += 1
    if count > ddof:
        amean = asum / count
        asum = 0
        for ai in a:
            if not np.isnan(ai):
                ai -= amean
                asum += ai * ai
        out[0] = np.sqrt(asum / (count - ddof))
    else:
        out[0] = np.nan


def nanmax(a):
    if not a.size:
        raise ValueError(
            "zero-size array to reduction operation fmax which has no identity"
        )
    amax = -np.inf
    all_missing = True
    for ai in a.flat:
        # If we check for `isnan` here, the function becomes much slower (by about 4x!)
        if ai >= amax:
            amax = ai
            all_missing = False
    if all_missing:
        amax = np.nan
    return amax


def nanmin(a):
    if not a.size:
        raise ValueError(
            "zero-size array to reduction operation fmin which has no identity"
        )
    amin = np.inf
    all_missing = True
    for ai in a.flat:
        if ai <= amin:
            amin = ai
            all_missing = False
    if all_missing:
        amin = np.nan
    return amin


def nanquantile(
    arr: NDArray[np.float64], quantile: NDArray[np.float64], out: NDArray[np.float64]
) -> None:
    nans = np.isnan(arr)
    valid_obs = arr.size - np.sum(nans)

    if valid_obs == 0:
        out[:] = np.nan
        return

    # replace NaN with maximum
    max_val = np.nanmax(arr)

    # and we need to use `where` to avoid modifying the original array
    arr = np.where(nans, max_val, arr)

    # two columns for indexes — floor and ceiling
    indexes = np.zeros((len(quantile), 2), dtype=np.int32)
    # store ranks as floats
    ranks = np.zeros(len(quantile), dtype=np.float64)

    for i in range(len(quantile)):
        if np.isnan(quantile[i]):
            continue
        rank = (valid_obs - 1) * quantile[i]
        ranks[i] = rank
        indexes[i] = [int(np.floor(rank)), int(np.ceil(rank))]

    # `partition` is similar to a `sort`, but only ensures that the indexes passed to
    # kth are in the correct positions
    unique_indices = np.unique(indexes)
    sorted = np.partition(arr, kth=unique_indices)

    for i in range(len(quantile)):
        if np.isnan(quantile[i]):
            out[i] = np.nan
            continue
        # linear interpolation (like numpy percentile) takes the fractional part of
        # desired position
        proportion = ranks[i] - indexes[i, 0]

        floor_val, ceil_val = sorted[indexes[i]]

        result = floor_val + proportion * (ceil_val - floor_val)

        out[i] = result


def nancovmatrix(a: F, out: F) -> None:
    """
    Compute covariance matrix treating NaN as missing values.

    Dimension conventions:
    - Input: (n_vars, n_obs) - variables as rows, observations as columns
    - Output: (n_vars, n_vars) - square covariance matrix
    - Broadcasting: Supports arbitrary leading dimensions via NumPy's gufunc system

    Uses pairwise complete observations (like pandas.DataFrame.cov).
    Cache-friendly implementation: processes observations sequentially for better locality.

    Unlike NumPy's cov, this function broadcasts over higher dimensions:

    Examples:
    - 2D: (3, 100) -> (3, 3)
    - 3D: (batch=5, vars=3, obs=100) -> (5, 3, 3)
    - 4D: (2, 5, 3, 100) -> (2, 5, 3, 3)
    """
    n_vars, n_obs = a.shape

    # Allocate arrays for all pairs - optimized for cache locality
    sums_i = np.zeros((n_vars, n_vars), dtype=a.dtype)
    sums_j = np.zeros((n_vars, n_vars), dtype=a.dtype)
    sums_ij = np.zeros((n_vars, n_vars), dtype=a.dtype)
    counts = np.zeros((n_vars, n_vars), dtype=np.int64)

    # Single pass through observations (excellent cache locality)
    for k in range(n_obs):
        # Load entire observation into cache once
        obs = a[:, k]

        # Process all variable pairs for this observation
        for i in range(n_vars):
            val_i = obs[i]
            if not np.isnan(val_i):
                for j in range(i, n_vars):  # Only upper triangle
                    val_j = obs[j]
                    if not np.isnan(val_j):
                        sums_i[i, j] += val_i
                        sums_j[i, j] += val_j
                        sums_ij[i, j] += val_i * val_j
                        counts[i, j] += 1

    # Compute final covariances from accumulated statistics
    for i in range(n_vars):
        for j in range(i, n_vars):
            count = counts[i, j]
            if count > 1:
                mean_i = sums_i[i, j] / count
                mean_j = sums_j[i, j] / count
                # Covariance: E[XY] - E[X]E[Y], scaled to unbiased estimator
                cov = (sums_ij[i, j] / count) - (mean_i * mean_j)
                cov_unbiased = cov * count / (count - 1)
                out[i, j] = cov_unbiased
                out[j, i] = cov_unbiased  # Symmetric
            else:
                out[i, j] = np.nan
                out[j, i] = np.nan



# ---------------------------------------------------------------- vectorbt/generic/nb.py

@njit(cache=True)
def _add_var_nb(
    val: float,
    nobs: float,
    mean: float,
    m2: float,
    compensation: float,
    numerically_unstable: bool,
) -> tp.Tuple:
    """Add a value to a rolling variance state."""
    if np.isnan(val):
        return nobs, mean, m2, compensation, numerically_unstable
    prev_m2 = m2
    nobs += 1
    prev_mean = mean - compensation
    y = val - compensation
    delta = y - mean
    compensation = delta + mean - y
    mean += delta / nobs
    m2 += (val - prev_mean) * (val - mean)
    if prev_m2 * _INV_COND_TOL > m2:
        numerically_unstable = True
    return nobs, mean, m2, compensation, numerically_unstable


@njit(cache=True)
def _remove_var_nb(
    val: float,
    nobs: float,
    mean: float,
    m2: float,
    compensation: float,
    numerically_unstable: bool,
) -> tp.Tuple:
    """Remove a value from a rolling variance state."""
    if np.isnan(val):
        return nobs, mean, m2, compensation, numerically_unstable
    prev_m2 = m2
    nobs -= 1
    if nobs:
        prev_mean = mean - compensation
        y = val - compensation
        delta = y - mean
        compensation = delta + mean - y
        mean -= delta / nobs
        m2 -= (val - prev_mean) * (val - mean)
        if prev_m2 * _INV_COND_TOL > m2:
            numerically_unstable = True
    else:
        mean = 0.0
        m2 = 0.0
        numerically_unstable = False
    return nobs, mean, m2, compensation, numerically_unstable


@njit(cache=True)
def nanstd_1d_nb(a: tp.Array1d, ddof: int = 0) -> float:
    """Numba-equivalent of `np.nanstd`."""
    cnt = a.shape[0] - np.count_nonzero(np.isnan(a))
    rcount = max(cnt - ddof, 0)
    if rcount == 0:
        return np.nan
    return np.sqrt(np.nanvar(a) * cnt / rcount)


@njit(cache=True)
def expanding_max_1d_nb(a: tp.Array1d, minp: int = 1) -> tp.Array1d:
    """Return expanding max.

    Numba equivalent to `pd.Series(a).expanding(min_periods=minp).max()`."""
    out = np.empty_like(a, dtype=np.float64)
    maxv = a[0]
    cnt = 0
    for i in range(a.shape[0]):
        if np.isnan(maxv) or a[i] > maxv:
            maxv = a[i]
        if not np.isnan(a[i]):
            cnt += 1
        if cnt < minp:
            out[i] = np.nan
        else:
            out[i] = maxv
    return out



def diff_1d_nb(a: tp.Array1d, n: int = 1) -> tp.Array1d:
    """Return the 1-th discrete difference.

    Numba equivalent to `pd.Series(a).diff()`."""
    out = np.empty_like(a, dtype=np.float64)
    out[:n] = np.nan
    out[n:] = a[n:] - a[:-n]
    return out


def pct_change_1d_nb(a: tp.Array1d, n: int = 1) -> tp.Array1d:
    """Return the percentage change.

    Numba equivalent to `pd.Series(a).pct_change()`."""
    out = np.empty_like(a, dtype=np.float64)
    out[:n] = np.nan
    out[n:] = a[n:] / a[:-n] - 1
    return out


@njit(cache=True)
def rolling_mean_1d_nb(a: tp.Array1d, window: int, minp: tp.Optional[int] = None) -> tp.Array1d:
    """Return rolling mean.

    Numba equivalent to `pd.Series(a).rolling(window, min_periods=minp).mean()`."""
    if minp is None:
        minp = window
    if minp > window:
        raise ValueError("minp must be <= window")
    out = np.empty_like(a, dtype=np.float64)
    cumsum_arr = np.zeros_like(a)
    cumsum = 0
    nancnt_arr = np.zeros_like(a)
    nancnt = 0
    for i in range(a.shape[0]):
        if np.isnan(a[i]):
            nancnt = nancnt + 1
        else:
            cumsum = cumsum + a[i]
        nancnt_arr[i] = nancnt
        cumsum_arr[i] = cumsum
        if i < window:
            window_len = i + 1 - nancnt
            window_cumsum = cumsum
        else:
            window_len = window - (nancnt - nancnt_arr[i - window])
            window_cumsum = cumsum - cumsum_arr[i - window]
        if window_len < minp:
            out[i] = np.nan
        else:
            out[i] = window_cumsum / window_len
    return out


@njit(cache=True)
def rolling_std_1d_nb(a: tp.Array1d, window: int, minp: tp.Optional[int] = None, ddof: int = 0) -> tp.Array1d:
    """Return rolling standard deviation.

    Numba equivalent to `pd.Series(a).rolling(window, min_periods=minp).std(ddof=ddof)`.

    Uses pandas' Kahan-compensated Welford algorithm for numerical stability."""
    if minp is None:
        minp = window
    if minp > window:
        raise ValueError("minp must be <= window")
    minp = max(minp, 1)
    out = np.empty_like(a, dtype=np.float64)
    mean = 0.0
    m2 = 0.0
    nobs = 0.0
    compensation_add = 0.0
    compensation_remove = 0.0
    numerically_unstable = False
    for i in range(a.shape[0]):
        requires_recompute = i == 0 or window == 0
        if not requires_recompute:
            if i >= window:
                nobs, mean, m2, compensation_remove, numerically_unstable = _remove_var_nb(
                    a[i - window], nobs, mean, m2, compensation_remove, numerically_unstable
                )
            nobs, mean, m2, compensation_add, numerically_unstable = _add_var_nb(
                a[i], nobs, mean, m2, compensation_add, numerically_unstable
            )
        if requires_recompute or numerically_unstable:
            mean = 0.0
            m2 = 0.0
            nobs = 0.0
            compensation_add = 0.0
            compensation_remove = 0.0
            start = max(0, i - window + 1)
            for j in range(start, i + 1):
                nobs, mean, m2, compensation_add, numerically_unstable = _add_var_nb(
                    a[j], nobs, mean, m2, compensation_add, numerically_unstable
                )
            numerically_unstable = False
        if nobs >= minp and nobs > ddof:
            out[i] = np.sqrt(m2 / (nobs - ddof))
        else:
            out[i] = np.nan
    return out


def ewm_mean_1d_nb(a: tp.Array1d, span: int, minp: int = 0, adjust: bool = False) -> tp.Array1d:
    """Return exponential weighted average.

    Numba equivalent to `pd.Series(a).ewm(span=span, min_periods=minp, adjust=adjust).mean()`.

    Adaptation of `pd._libs.window.aggregations.window_aggregations.ewma` with default arguments."""
    if minp is None:
        minp = span
    if minp > span:
        raise ValueError("minp must be <= span")
    N = len(a)
    out = np.empty(N, dtype=np.float64)
    if N == 0:
        return out
    com = (span - 1) / 2.0
    alpha = 1.0 / (1.0 + com)
    old_wt_factor = 1.0 - alpha
    new_wt = 1.0 if adjust else alpha
    weighted_avg = a[0]
    is_observation = weighted_avg == weighted_avg
    nobs = int(is_observation)
    out[0] = weighted_avg if (nobs >= minp) else np.nan
    old_wt = 1.0

    for i in range(1, N):
        cur = a[i]
        is_observation = cur == cur
        nobs += is_observation
        if weighted_avg == weighted_avg:
            old_wt *= old_wt_factor
            if is_observation:
                # avoid numerical errors on constant series
                if weighted_avg != cur:
                    weighted_avg = ((old_wt * weighted_avg) + (new_wt * cur)) / (old_wt + new_wt)
                if adjust:
                    old_wt += new_wt
                else:
                    old_wt = 1.0
        elif is_observation:
            weighted_avg = cur
        out[i] = weighted_avg if (nobs >= minp) else np.nan
    return out


def ewm_std_1d_nb(a: tp.Array1d, span: int, minp: int = 0, adjust: bool = False, ddof: int = 0) -> tp.Array1d:
    """Return exponential weighted standard deviation.

    Numba equivalent to `pd.Series(a).ewm(span=span, min_periods=minp).std(ddof=ddof)`.

    Adaptation of `pd._libs.window.aggregations.window_aggregations.ewmcov` with default arguments."""
    if minp is None:
        minp = span
    if minp > span:
        raise ValueError("minp must be <= span")
    N = len(a)
    out = np.empty(N, dtype=np.float64)
    if N == 0:
        return out
    com = (span - 1) / 2.0
    alpha = 1.0 / (1.0 + com)
    old_wt_factor = 1.0 - alpha
    new_wt = 1.0 if adjust else alpha
    mean_x = a[0]
    mean_y = a[0]
    is_observation = (mean_x == mean_x) and (mean_y == mean_y)
    nobs = int(is_observation)
    if not is_observation:
        mean_x = np.nan
        mean_y = np.nan
    out[0] = np.nan
    cov = 0.0
    sum_wt = 1.0
    sum_wt2 = 1.0
    old_wt = 1.0

    for i in range(1, N):
        cur_x = a[i]
        cur_y = a[i]
        is_observation = (cur_x == cur_x) and (cur_y == cur_y)
        nobs += is_observation
        if mean_x == mean_x:
            sum_wt *= old_wt_factor
            sum_wt2 *= old_wt_factor * old_wt_factor
            old_wt *= old_wt_factor
            if is_observation:
                old_mean_x = mean_x
                old_mean_y = mean_y

                # avoid numerical errors on constant series
                if mean_x != cur_x:
                    mean_x = ((old_wt * old_mean_x) + (new_wt * cur_x)) / (old_wt + new_wt)

                # avoid numerical errors on constant series
                if mean_y != cur_y:
                    mean_y = ((old_wt * old_mean_y) + (new_wt * cur_y)) / (old_wt + new_wt)
                cov = (
                    (old_wt * (cov + ((old_mean_x - mean_x) * (old_mean_y - mean_y))))
                    + (new_wt * ((cur_x - mean_x) * (cur_y - mean_y)))
                ) / (old_wt + new_wt)
                sum_wt += new_wt
                sum_wt2 += new_wt * new_wt
                old_wt += new_wt
                if not adjust:
                    sum_wt /= old_wt
                    sum_wt2 /= old_wt * old_wt
                    old_wt = 1.0
        elif is_observation:
            mean_x = cur_x
            mean_y = cur_y

        if nobs >= minp:
            numerator = sum_wt * sum_wt
            denominator = numerator - sum_wt2
            if denominator > 0.0:
                out[i] = (numerator / denominator) * cov
            else:
                out[i] = np.nan
        else:
            out[i] = np.nan
    return np.sqrt(out)


def expanding_mean_1d_nb(a: tp.Array1d, minp: int = 1) -> tp.Array1d:
    """Return expanding mean.

    Numba equivalent to `pd.Series(a).expanding(min_periods=minp).mean()`."""
    return rolling_mean_1d_nb(a, a.shape[0], minp=minp)


def expanding_std_1d_nb(a: tp.Array1d, minp: int = 1, ddof: int = 0) -> tp.Array1d:
    """Return expanding standard deviation.

    Numba equivalent to `pd.Series(a).expanding(min_periods=minp).std(ddof=ddof)`."""
    return rolling_std_1d_nb(a, a.shape[0], minp=minp, ddof=ddof)



generic_nb = types.ModuleType("vectorbt.generic.nb")   # the module the returns functions call into
generic_nb.nanstd_1d_nb = nanstd_1d_nb
generic_nb.expanding_max_1d_nb = expanding_max_1d_nb


# ---------------------------------------------------------------- vectorbt/returns/nb.py

@njit(cache=True)
def get_return_nb(input_value: float, output_value: float) -> float:
    """Calculate return from input and output value."""
    if input_value == 0:
        if output_value == 0:
            return 0.0
        return np.inf * np.sign(output_value)
    return_value = (output_value - input_value) / input_value
    if input_value < 0:
        return_value *= -1
    return return_value


@njit(cache=True)
def cum_returns_final_1d_nb(returns: tp.Array1d, start_value: float = 0.0) -> float:
    """Total return."""
    out = np.nanprod(returns + 1.0)
    if start_value == 0.0:
        return out - 1.0
    return out * start_value



def returns_1d_nb(value: tp.Array1d, init_value: float) -> tp.Array1d:
    """Calculate returns from value."""
    out = np.empty(value.shape, dtype=np.float64)
    input_value = init_value
    for i in range(out.shape[0]):
        output_value = value[i]
        out[i] = get_return_nb(input_value, output_value)
        input_value = output_value
    return out


@njit(cache=True)
def cum_returns_1d_nb(returns: tp.Array1d, start_value: float) -> tp.Array1d:
    """Cumulative returns."""
    out = np.empty_like(returns, dtype=np.float64)
    cumprod = 1
    for i in range(returns.shape[0]):
        if not np.isnan(returns[i]):
            cumprod *= returns[i] + 1
        out[i] = cumprod
    if start_value == 0.0:
        return out - 1.0
    return out * start_value


@njit(cache=True)
def annualized_return_1d_nb(returns: tp.Array1d, ann_factor: float) -> float:
    """Mean annual growth rate of returns.

    This is equivalent to the compound annual growth rate."""
    if returns.shape[0] == 0:
        return np.nan
    end_value = cum_returns_final_1d_nb(returns, 1.0)
    return end_value ** (ann_factor / returns.shape[0]) - 1


def annualized_volatility_1d_nb(
    returns: tp.Array1d,
    ann_factor: float,
    levy_alpha: float = 2.0,
    ddof: int = 1,
) -> float:
    """Annualized volatility of a strategy."""
    if returns.shape[0] < 2:
        return np.nan

    return generic_nb.nanstd_1d_nb(returns, ddof) * ann_factor ** (1.0 / levy_alpha)


@njit(cache=True)
def drawdown_1d_nb(returns: tp.Array1d) -> tp.Array1d:
    """Drawdown of cumulative returns."""
    cum_returns = cum_returns_1d_nb(returns, start_value=100.0)
    max_returns = generic_nb.expanding_max_1d_nb(cum_returns, minp=1)
    return cum_returns / max_returns - 1


@njit(cache=True)
def max_drawdown_1d_nb(returns: tp.Array1d) -> float:
    """Total maximum drawdown (MDD)."""
    return np.min(drawdown_1d_nb(returns))


def calmar_ratio_1d_nb(returns: tp.Array1d, ann_factor: float) -> float:
    """Calmar ratio, or drawdown ratio, of a strategy."""
    max_drawdown = max_drawdown_1d_nb(returns)
    if max_drawdown == 0.0:
        return np.nan
    annualized_return = annualized_return_1d_nb(returns, ann_factor)
    if max_drawdown == 0.0:
        return np.inf
    return annualized_return / np.abs(max_drawdown)


def omega_ratio_1d_nb(
    returns: tp.Array1d,
    ann_factor: float,
    risk_free: float = 0.0,
    required_return: float = 0.0,
) -> float:
    """Omega ratio of a strategy.."""
    if ann_factor == 1:
        return_threshold = required_return
    elif ann_factor <= -1:
        return np.nan
    else:
        return_threshold = (1 + required_return) ** (1.0 / ann_factor) - 1
    returns_less_thresh = returns - risk_free - return_threshold
    numer = np.sum(returns_less_thresh[returns_less_thresh > 0.0])
    denom = -1.0 * np.sum(returns_less_thresh[returns_less_thresh < 0.0])
    if denom == 0.0:
        return np.inf
    return numer / denom


def sharpe_ratio_1d_nb(returns: tp.Array1d, ann_factor: float, risk_free: float = 0.0, ddof: int = 1) -> float:
    """Sharpe ratio of a strategy."""
    if returns.shape[0] < 2:
        return np.nan

    returns_risk_adj = returns - risk_free
    mean = np.nanmean(returns_risk_adj)
    std = generic_nb.nanstd_1d_nb(returns_risk_adj, ddof)
    if std == 0.0:
        return np.inf
    return mean / std * np.sqrt(ann_factor)


@njit(cache=True)
def downside_risk_1d_nb(returns: tp.Array1d, ann_factor: float, required_return: float = 0.0) -> float:
    """Downside deviation below a threshold."""
    adj_returns = returns - required_return
    adj_returns[adj_returns > 0] = 0
    return np.sqrt(np.nanmean(adj_returns**2)) * np.sqrt(ann_factor)


def sortino_ratio_1d_nb(returns: tp.Array1d, ann_factor: float, required_return: float = 0.0) -> float:
    """Sortino ratio of a strategy."""
    if returns.shape[0] < 2:
        return np.nan

    adj_returns = returns - required_return
    average_annualized_return = np.nanmean(adj_returns) * ann_factor
    downside_risk = downside_risk_1d_nb(returns, ann_factor, required_return)
    if downside_risk == 0.0:
        return np.inf
    return average_annualized_return / downside_risk


def information_ratio_1d_nb(returns: tp.Array1d, benchmark_rets: tp.Array1d, ddof: int = 1) -> float:
    """Information ratio of a strategy."""
    if returns.shape[0] < 2:
        return np.nan

    active_return = returns - benchmark_rets
    mean = np.nanmean(active_return)
    std = generic_nb.nanstd_1d_nb(active_return, ddof)
    if std == 0.0:
        return np.inf
    return mean / std


@njit(cache=True)
def beta_1d_nb(returns: tp.Array1d, benchmark_rets: tp.Array1d) -> float:
    """Beta."""
    if benchmark_rets.shape[0] < 2:
        return np.nan

    independent = np.where(
        np.isnan(returns),
        np.nan,
        benchmark_rets,
    )
    ind_residual = independent - np.nanmean(independent)
    covariances = np.nanmean(ind_residual * returns)
    ind_residual = ind_residual**2
    ind_variances = np.nanmean(ind_residual)
    if ind_variances < 1.0e-30:
        ind_variances = np.nan
    if ind_variances == 0.0:
        return np.inf
    return covariances / ind_variances


def alpha_1d_nb(returns: tp.Array1d, benchmark_rets: tp.Array1d, ann_factor: float, risk_free: float = 0.0) -> float:
    """Annualized alpha."""
    if returns.shape[0] < 2:
        return np.nan

    adj_returns = returns - risk_free
    adj_benchmark_rets = benchmark_rets - risk_free
    beta = beta_1d_nb(returns, benchmark_rets)
    alpha_series = adj_returns - (beta * adj_benchmark_rets)
    return (np.nanmean(alpha_series) + 1) ** ann_factor - 1


def tail_ratio_1d_nb(returns: tp.Array1d) -> float:
    """Ratio between the right (95%) and left tail (5%)."""
    returns = returns[~np.isnan(returns)]
    if len(returns) < 1:
        return np.nan
    perc_95 = np.abs(np.percentile(returns, 95))
    perc_5 = np.abs(np.percentile(returns, 5))
    if perc_5 == 0.0:
        return np.inf
    return perc_95 / perc_5


def value_at_risk_1d_nb(returns: tp.Array1d, cutoff: float = 0.05) -> float:
    """Value at risk (VaR) of a returns stream."""
    returns = returns[~np.isnan(returns)]
    if len(returns) < 1:
        return np.nan
    return np.percentile(returns, 100 * cutoff)


def cond_value_at_risk_1d_nb(returns: tp.Array1d, cutoff: float = 0.05) -> float:
    """Conditional value at risk (CVaR) of a returns stream."""
    if len(returns) == 0:
        return np.nan
    cutoff_index = int((len(returns) - 1) * cutoff)
    return np.mean(np.partition(returns, cutoff_index)[: cutoff_index + 1])


def capture_1d_nb(returns: tp.Array1d, benchmark_rets: tp.Array1d, ann_factor: float) -> float:
    """Capture ratio."""
    annualized_return1 = annualized_return_1d_nb(returns, ann_factor)
    annualized_return2 = annualized_return_1d_nb(benchmark_rets, ann_factor)
    if annualized_return2 == 0.0:
        return np.inf
    return annualized_return1 / annualized_return2



# ---------------------------------------------------------------- records

def _e(name, fn, args, source, group, **kw):
    d = dict(name=name, source=source, fn=fn, args=args, group=group)
    d.update(kw)
    return d


def _tsl(name, fn, args, path, **kw):
    return _e("tslearn." + name, fn, args, TSL + path, "tslearn", **kw)


def _nbg(name, fn, args, path, **kw):
    return _e("numbagg." + name, fn, args, NBG + path, "numbagg", **kw)


def _vbt(name, fn, args, path, **kw):
    return _e("vectorbt." + name, fn, args, VBT + path, "vectorbt", **kw)


def _series(r, n=10):
    return np.cumsum(r.standard_normal(n)) + 5.0


def _rets(r, n=12):
    return 0.02 * r.standard_normal(n) + 0.001


def _alpha(r, n=10):
    return np.full(n, 0.3)


ENTRIES = [
    # tslearn
    _tsl("_njit_softmin3", _njit_softmin3.py_func, lambda r: tuple(float(v) for v in r.uniform(0, 3, 3)) + (0.5,),
         "soft_dtw_fast.py"),
    _tsl("_njit_local_squared_dist", _njit_local_squared_dist.py_func,
         lambda r: (r.standard_normal(3), r.standard_normal(3)), "dtw_variants.py"),
    _tsl("_dtw._njit_accumulated_matrix", _njit_accumulated_matrix,
         lambda r: (r.standard_normal((5, 2)), r.standard_normal((6, 2)), np.ones((5, 6), dtype=np.bool_)),
         "_dtw.py"),
    _tsl("_dtw._njit_acc_matrix_from_dist_matrix", _njit_acc_matrix_from_dist_matrix,
         lambda r: (r.uniform(0, 2, (5, 6)), np.ones((5, 6), dtype=np.bool_)), "_dtw.py"),
    _tsl("_njit_subsequence_cost_matrix", _njit_subsequence_cost_matrix,
         lambda r: (r.standard_normal((3, 2)), r.standard_normal((7, 2))), "dtw_variants.py"),
    _tsl("_njit_lb_envelope", _njit_lb_envelope, lambda r: (r.standard_normal((8, 2)), 2), "dtw_variants.py"),
    # soft-DTW's value is R[m, n] (tslearn's SoftDTW.compute returns self.R_[m, n]): the loss reads it
    _tsl("_njit_soft_dtw", _njit_soft_dtw,
         lambda r: (r.uniform(0, 2, (4, 5)), np.zeros((6, 7)), 0.7), "soft_dtw_fast.py",
         outputs=(1,), loss_expr="_o1[4, 5]"),
    _tsl("_njit_jacobian_product_sq_euc", _njit_jacobian_product_sq_euc,
         lambda r: (r.standard_normal((4, 2)), r.standard_normal((5, 2)), r.uniform(0, 1, (4, 5)), np.zeros((4, 2))),
         "soft_dtw_fast.py", outputs=(3,), options={"parallel": True, "fastmath": True}),
    _tsl("normalized_cc", normalized_cc, lambda r: (r.standard_normal((6, 2)), r.standard_normal((6, 2))),
         "cycc.py"),
    # numbagg kernels (min_count 1 so that every output is defined)
    _nbg("move_mean", move_mean, lambda r: (_series(r), 3, 1, np.zeros(10)), "moving.py", outputs=(3,)),
    _nbg("move_sum", move_sum, lambda r: (_series(r), 3, 1, np.zeros(10)), "moving.py", outputs=(3,)),
    _nbg("move_std", move_std, lambda r: (_series(r), 3, 1, np.zeros(10)), "moving.py", outputs=(3,),
         loss_sum="nansum"),
    _nbg("move_var", move_var, lambda r: (_series(r), 3, 1, np.zeros(10)), "moving.py", outputs=(3,),
         loss_sum="nansum"),
    _nbg("move_cov", move_cov, lambda r: (_series(r), _series(r), 4, 1, np.zeros(10)), "moving.py",
         outputs=(4,), loss_sum="nansum"),
    _nbg("move_corr", move_corr, lambda r: (_series(r), _series(r), 4, 1, np.zeros(10)), "moving.py",
         outputs=(4,), loss_sum="nansum"),
    _nbg("move_exp_nanmean", move_exp_nanmean, lambda r: (_series(r), _alpha(r), 0.0, np.zeros(10)),
         "moving_exp.py", outputs=(3,)),
    _nbg("move_exp_nansum", move_exp_nansum, lambda r: (_series(r), _alpha(r), 0.0, np.zeros(10)),
         "moving_exp.py", outputs=(3,)),
    _nbg("move_exp_nanvar", move_exp_nanvar, lambda r: (_series(r), _alpha(r), 0.0, np.zeros(10)),
         "moving_exp.py", outputs=(3,), loss_sum="nansum"),
    _nbg("move_exp_nanstd", move_exp_nanstd, lambda r: (_series(r), _alpha(r), 0.0, np.zeros(10)),
         "moving_exp.py", outputs=(3,), loss_sum="nansum"),
    _nbg("move_exp_nancov", move_exp_nancov, lambda r: (_series(r), _series(r), _alpha(r), 0.0, np.zeros(10)),
         "moving_exp.py", outputs=(4,), loss_sum="nansum"),
    _nbg("move_exp_nancorr", move_exp_nancorr, lambda r: (_series(r), _series(r), _alpha(r), 0.0, np.zeros(10)),
         "moving_exp.py", outputs=(4,), loss_sum="nansum"),
    _nbg("nansum", nansum, lambda r: (r.standard_normal(8), np.zeros(1)), "funcs.py", outputs=(1,)),
    _nbg("nanmean", nanmean, lambda r: (r.standard_normal(8), np.zeros(1)), "funcs.py", outputs=(1,)),
    _nbg("nanvar", nanvar, lambda r: (r.standard_normal(8), 1, np.zeros(1)), "funcs.py", outputs=(2,)),
    _nbg("nanstd", nanstd, lambda r: (r.standard_normal(8), 1, np.zeros(1)), "funcs.py", outputs=(2,)),
    _nbg("nanmax", nanmax, lambda r: (r.standard_normal(8),), "funcs.py"),
    _nbg("nanmin", nanmin, lambda r: (r.standard_normal((2, 4)),), "funcs.py"),
    _nbg("nanquantile", nanquantile, lambda r: (r.standard_normal(9), np.array([0.1, 0.55, 0.77]), np.zeros(3)),
         "funcs.py", outputs=(2,)),
    _nbg("nancovmatrix", nancovmatrix, lambda r: (r.standard_normal((3, 8)), np.zeros((3, 3))), "funcs.py",
         outputs=(1,)),
    # vectorbt generic
    _vbt("generic.nanstd_1d_nb", nanstd_1d_nb.py_func, lambda r: (r.standard_normal(8), 1), "generic/nb.py"),
    _vbt("generic.diff_1d_nb", diff_1d_nb, lambda r: (_series(r), 1), "generic/nb.py", loss_sum="nansum"),
    _vbt("generic.pct_change_1d_nb", pct_change_1d_nb, lambda r: (_series(r), 1), "generic/nb.py",
         loss_sum="nansum"),
    _vbt("generic.rolling_mean_1d_nb", rolling_mean_1d_nb.py_func, lambda r: (_series(r), 3, 1), "generic/nb.py"),
    _vbt("generic.rolling_std_1d_nb", rolling_std_1d_nb.py_func, lambda r: (_series(r), 3, 2, 1), "generic/nb.py",
         loss_sum="nansum"),
    _vbt("generic.ewm_mean_1d_nb", ewm_mean_1d_nb, lambda r: (_series(r), 4, 0, False), "generic/nb.py"),
    _vbt("generic.ewm_std_1d_nb", ewm_std_1d_nb, lambda r: (_series(r), 4, 0, False, 0), "generic/nb.py",
         loss_sum="nansum"),
    _vbt("generic.expanding_mean_1d_nb", expanding_mean_1d_nb, lambda r: (_series(r), 1), "generic/nb.py"),
    _vbt("generic.expanding_std_1d_nb", expanding_std_1d_nb, lambda r: (_series(r), 2, 1), "generic/nb.py",
         loss_sum="nansum"),
    _vbt("generic.expanding_max_1d_nb", expanding_max_1d_nb.py_func, lambda r: (_series(r), 1), "generic/nb.py"),
    # vectorbt returns
    _vbt("returns.get_return_nb", get_return_nb.py_func, lambda r: (float(r.uniform(90, 110)), float(r.uniform(90, 110))),
         "returns/nb.py"),
    _vbt("returns.returns_1d_nb", returns_1d_nb, lambda r: (_series(r) + 10.0, 12.0), "returns/nb.py"),
    _vbt("returns.cum_returns_1d_nb", cum_returns_1d_nb.py_func, lambda r: (_rets(r), 100.0), "returns/nb.py"),
    _vbt("returns.cum_returns_final_1d_nb", cum_returns_final_1d_nb.py_func, lambda r: (_rets(r), 100.0),
         "returns/nb.py"),
    _vbt("returns.annualized_return_1d_nb", annualized_return_1d_nb.py_func, lambda r: (_rets(r), 252.0),
         "returns/nb.py"),
    _vbt("returns.annualized_volatility_1d_nb", annualized_volatility_1d_nb, lambda r: (_rets(r), 252.0, 2.0, 1),
         "returns/nb.py"),
    _vbt("returns.drawdown_1d_nb", drawdown_1d_nb.py_func, lambda r: (_rets(r),), "returns/nb.py"),
    _vbt("returns.max_drawdown_1d_nb", max_drawdown_1d_nb.py_func, lambda r: (_rets(r),), "returns/nb.py"),
    _vbt("returns.calmar_ratio_1d_nb", calmar_ratio_1d_nb, lambda r: (_rets(r), 252.0), "returns/nb.py"),
    _vbt("returns.omega_ratio_1d_nb", omega_ratio_1d_nb, lambda r: (_rets(r), 252.0, 0.0, 0.0), "returns/nb.py"),
    _vbt("returns.sharpe_ratio_1d_nb", sharpe_ratio_1d_nb, lambda r: (_rets(r), 252.0, 0.0, 1), "returns/nb.py"),
    _vbt("returns.downside_risk_1d_nb", downside_risk_1d_nb.py_func, lambda r: (_rets(r), 252.0, 0.0),
         "returns/nb.py"),
    _vbt("returns.sortino_ratio_1d_nb", sortino_ratio_1d_nb, lambda r: (_rets(r), 252.0, 0.0), "returns/nb.py"),
    _vbt("returns.information_ratio_1d_nb", information_ratio_1d_nb, lambda r: (_rets(r), _rets(r), 1),
         "returns/nb.py"),
    _vbt("returns.beta_1d_nb", beta_1d_nb.py_func, lambda r: (_rets(r), _rets(r)), "returns/nb.py"),
    _vbt("returns.alpha_1d_nb", alpha_1d_nb, lambda r: (_rets(r), _rets(r), 252.0, 0.0), "returns/nb.py"),
    _vbt("returns.tail_ratio_1d_nb", tail_ratio_1d_nb, lambda r: (_rets(r, 20),), "returns/nb.py"),
    _vbt("returns.value_at_risk_1d_nb", value_at_risk_1d_nb, lambda r: (_rets(r, 20), 0.1), "returns/nb.py"),
    _vbt("returns.cond_value_at_risk_1d_nb", cond_value_at_risk_1d_nb, lambda r: (_rets(r, 20), 0.1),
         "returns/nb.py"),
    _vbt("returns.capture_1d_nb", capture_1d_nb, lambda r: (_rets(r), _rets(r), 252.0), "returns/nb.py"),
]
