"""Corpus: distance functions of pynndescent (Leland McInnes), copied verbatim.

Source: github lmcinnes/pynndescent at commit bd4caca, files pynndescent/distances.py,
pynndescent/optimal_transport.py and pynndescent/utils.py. The functions under test are
plain functions here (their ``@numba.njit(...)`` decorators, some with float32 signatures
and ``locals``, are left off: the harness compiles them with ``numba.njit`` in float64);
the helpers they call keep their authors' decorators. Module globals they read are copied
as written.
"""
import numba
import numpy as np

SRC = "lmcinnes/pynndescent@bd4caca:pynndescent/distances.py"
SRC_OT = "lmcinnes/pynndescent@bd4caca:pynndescent/optimal_transport.py"

_mock_identity = np.eye(2, dtype=np.float32)
_mock_ones = np.ones(2, dtype=np.float32)
_dummy_cost = np.zeros((2, 2), dtype=np.float64)

FLOAT32_EPS = np.finfo(np.float32).eps
FLOAT32_MAX = np.finfo(np.float32).max

INFINITY = np.finfo(np.float64).max


# ---------------------------------------------------------------- helpers (as decorated)

@numba.njit(fastmath=True)
def minkowski(x, y, p=2):
    r"""Minkowski distance.

    .. math::
        D(x, y) = \left(\sum_i |x_i - y_i|^p\right)^{\frac{1}{p}}

    This is a general distance. For p=1 it is equivalent to
    manhattan distance, for p=2 it is Euclidean distance, and
    for p=infinity it is Chebyshev distance. In general it is better
    to use the more specialised functions for those distances.
    """
    result = 0.0
    for i in range(x.shape[0]):
        result += (np.abs(x[i] - y[i])) ** p

    return result ** (1.0 / p)



@numba.njit(fastmath=True, parallel=True, cache=False)
def K_from_cost(cost, regularization):
    i_dim = cost.shape[0]
    j_dim = cost.shape[1]
    result = np.empty_like(cost)
    for i in numba.prange(i_dim):
        for j in range(j_dim):
            scaled_cost = cost[i, j] / regularization
            result[i, j] = np.exp(-scaled_cost)

    return result


@numba.njit(fastmath=True, parallel=True, cache=False)
def precompute_K_prime(K, x):
    i_dim = K.shape[0]
    j_dim = K.shape[1]
    result = np.empty_like(K)
    for i in numba.prange(i_dim):
        if x[i] > 0.0:
            x_i_inverse = 1.0 / x[i]
        else:
            x_i_inverse = INFINITY
        for j in range(j_dim):
            result[i, j] = x_i_inverse * K[i, j]

    return result


@numba.njit(fastmath=True, parallel=True, locals={"result": numba.float32}, cache=False)
def relative_change_in_plan(old_u, old_v, new_u, new_v):
    i_dim = old_u.shape[0]
    j_dim = old_v.shape[0]
    result = 0.0
    for i in numba.prange(i_dim):
        for j in range(j_dim):
            old_uv = old_u[i] * old_v[j]
            result += np.float32(np.abs(old_uv - new_u[i] * new_v[j]) / old_uv)

    return result / (i_dim * j_dim)


@numba.njit(
    fastmath=True,
    parallel=True,
    locals={"diff": numba.float32, "result": numba.float32},
    cache=False,
)
def right_marginal_error(u, K, v, y):
    uK = u @ K
    result = 0.0
    for i in numba.prange(uK.shape[0]):
        diff = y[i] - uK[i] * v[i]
        result += diff * diff
    return np.sqrt(result)


@numba.njit(fastmath=True, cache=True)
def sinkhorn_iterations(
    x, y, u, v, K, max_iter=1000, error_tolerance=1e-9, change_tolerance=1e-9
):
    K_prime = precompute_K_prime(K, x)

    prev_u = u
    prev_v = v

    for iteration in range(max_iter):

        next_v = y / (K.T @ u)

        if np.any(~np.isfinite(next_v)):
            break

        next_u = 1.0 / (K_prime @ next_v)

        if np.any(~np.isfinite(next_u)):
            break

        u = next_u
        v = next_v

        if iteration % 20 == 0:
            # Check if values in plan have changed significantly since last 20 iterations
            relative_change = relative_change_in_plan(prev_u, prev_v, next_u, next_v)
            if relative_change <= change_tolerance:
                break

            prev_u = u
            prev_v = v

        if iteration % 10 == 0:
            # Check if right marginal error is less than tolerance every 10 iterations
            err = right_marginal_error(u, K, v, y)
            if err <= error_tolerance:
                break

    return u, v


@numba.njit(fastmath=True, parallel=True, cache=False)
def transport_plan(K, u, v):
    i_dim = K.shape[0]
    j_dim = K.shape[1]
    result = np.empty_like(K)
    for i in numba.prange(i_dim):
        for j in range(j_dim):
            result[i, j] = u[i] * K[i, j] * v[j]

    return result


@numba.njit(fastmath=True, cache=True)
def sinkhorn_transport_plan(
    x,
    y,
    cost=_dummy_cost,
    regularization=1.0,
    max_iter=1000,
    error_tolerance=1e-9,
    change_tolerance=1e-9,
):
    dim_x = x.shape[0]
    dim_y = y.shape[0]
    u = np.full(dim_x, 1.0 / dim_x, dtype=cost.dtype)
    v = np.full(dim_y, 1.0 / dim_y, dtype=cost.dtype)

    K = K_from_cost(cost, regularization)
    u, v = sinkhorn_iterations(
        x,
        y,
        u,
        v,
        K,
        max_iter=max_iter,
        error_tolerance=error_tolerance,
        change_tolerance=change_tolerance,
    )

    return transport_plan(K, u, v)



# ---------------------------------------------------------------- functions under test

def euclidean(x, y):
    r"""Standard euclidean distance.

    .. math::
        D(x, y) = \\sqrt{\sum_i (x_i - y_i)^2}
    """
    result = 0.0
    for i in range(x.shape[0]):
        result += (x[i] - y[i]) ** 2
    return np.sqrt(result)


def squared_euclidean(x, y):
    r"""Squared euclidean distance.

    .. math::
        D(x, y) = \sum_i (x_i - y_i)^2
    """
    result = 0.0
    dim = x.shape[0]
    for i in range(dim):
        diff = x[i] - y[i]
        result += diff * diff

    return result


def standardised_euclidean(x, y, sigma=_mock_ones):
    r"""Euclidean distance standardised against a vector of standard
    deviations per coordinate.

    .. math::
        D(x, y) = \sqrt{\sum_i \frac{(x_i - y_i)**2}{v_i}}
    """
    result = 0.0
    for i in range(x.shape[0]):
        result += ((x[i] - y[i]) ** 2) / sigma[i]

    return np.sqrt(result)


def manhattan(x, y):
    r"""Manhattan, taxicab, or l1 distance.

    .. math::
        D(x, y) = \sum_i |x_i - y_i|
    """
    result = 0.0
    for i in range(x.shape[0]):
        result += np.abs(x[i] - y[i])

    return result


def chebyshev(x, y):
    r"""Chebyshev or l-infinity distance.

    .. math::
        D(x, y) = \max_i |x_i - y_i|
    """
    result = 0.0
    for i in range(x.shape[0]):
        result = max(result, np.abs(x[i] - y[i]))

    return result


def weighted_minkowski(x, y, w=_mock_ones, p=2):
    r"""A weighted version of Minkowski distance.

    .. math::
        D(x, y) = \left(\sum_i w_i |x_i - y_i|^p\right)^{\frac{1}{p}}

    If weights w_i are inverse standard deviations of graph_data in each dimension
    then this represented a standardised Minkowski distance (and is
    equivalent to standardised Euclidean distance for p=1).
    """
    result = 0.0
    for i in range(x.shape[0]):
        result += w[i] * np.abs(x[i] - y[i]) ** p

    return result ** (1.0 / p)


def mahalanobis(x, y, vinv=_mock_identity):
    r"""Mahalanobis distance.

    .. math::
        D(x, y) = \sqrt{(x - y)^T V^{-1} (x - y)}

    where V is the covariance matrix. This is equivalent to Euclidean distance
    after transforming the space by the inverse square root of the covariance.
    """
    result = 0.0

    diff = np.empty(x.shape[0], dtype=np.float32)

    for i in range(x.shape[0]):
        diff[i] = x[i] - y[i]

    for i in range(x.shape[0]):
        tmp = 0.0
        for j in range(x.shape[0]):
            tmp += vinv[i, j] * diff[j]
        result += tmp * diff[i]

    return np.sqrt(result)


def canberra(x, y):
    r"""Canberra distance.

    A weighted version of Manhattan distance where each term is divided
    by the sum of absolute values.

    .. math::
        D(x, y) = \sum_i \frac{|x_i - y_i|}{|x_i| + |y_i|}
    """
    result = 0.0
    for i in range(x.shape[0]):
        denominator = np.abs(x[i]) + np.abs(y[i])
        if denominator > 0:
            result += np.abs(x[i] - y[i]) / denominator

    return result


def bray_curtis(x, y):
    r"""Bray-Curtis distance.

    A distance measure commonly used in ecology to quantify the compositional
    dissimilarity between two samples.

    .. math::
        D(x, y) = \frac{\sum_i |x_i - y_i|}{\sum_i |x_i + y_i|}
    """
    numerator = 0.0
    denominator = 0.0
    for i in range(x.shape[0]):
        numerator += np.abs(x[i] - y[i])
        denominator += np.abs(x[i] + y[i])

    if denominator > 0.0:
        return float(numerator) / denominator
    else:
        return 0.0


def haversine(x, y):
    r"""Haversine (great circle) distance.

    The angular distance between two points on a sphere, given their
    latitudes and longitudes in radians. Only valid for 2D data where
    x[0], y[0] are latitudes and x[1], y[1] are longitudes.

    .. math::
        D(x, y) = 2 \arcsin\left(\sqrt{\sin^2\left(\frac{\phi_1 - \phi_2}{2}\right) + \cos(\phi_1)\cos(\phi_2)\sin^2\left(\frac{\lambda_1 - \lambda_2}{2}\right)}\right)

    where :math:`\phi` is latitude and :math:`\lambda` is longitude.
    """
    if x.shape[0] != 2:
        raise ValueError("haversine is only defined for 2 dimensional graph_data")
    sin_lat = np.sin(0.5 * (x[0] - y[0]))
    sin_long = np.sin(0.5 * (x[1] - y[1]))
    result = np.sqrt(sin_lat**2 + np.cos(x[0]) * np.cos(y[0]) * sin_long**2)
    return 2.0 * np.arcsin(result)


def cosine(x, y):
    r"""Cosine distance.

    One minus the cosine of the angle between two vectors. Measures the
    angular difference between vectors, independent of their magnitudes.

    .. math::
        D(x, y) = 1 - \frac{\langle x, y \rangle}{\|x\| \|y\|}

    Returns 0 if both vectors are zero, 1 if one is zero.
    """
    result = 0.0
    norm_x = 0.0
    norm_y = 0.0
    for i in range(x.shape[0]):
        result += x[i] * y[i]
        norm_x += x[i] ** 2
        norm_y += y[i] ** 2

    if norm_x == 0.0 and norm_y == 0.0:
        return 0.0
    elif norm_x == 0.0 or norm_y == 0.0:
        return 1.0
    else:
        return 1.0 - (result / np.sqrt(norm_x * norm_y))


def alternative_cosine(x, y):
    r"""Alternative cosine distance using log transform.

    A transformed version of cosine distance suitable for the bounded-radius
    search algorithm. Uses negative log of the cosine similarity.

    .. math::
        D_{alt}(x, y) = \log_2\left(\frac{\|x\| \|y\|}{\langle x, y \rangle}\right)

    Returns FLOAT32_MAX for non-positive cosine similarities (treating them
    as infinitely far). Use `correct_alternative_cosine` to convert back
    to standard cosine distance.
    """
    result = 0.0
    norm_x = 0.0
    norm_y = 0.0
    dim = x.shape[0]
    for i in range(dim):
        result += x[i] * y[i]
        norm_x += x[i] * x[i]
        norm_y += y[i] * y[i]

    if norm_x == 0.0 and norm_y == 0.0:
        return 0.0
    elif norm_x == 0.0 or norm_y == 0.0:
        return FLOAT32_MAX
    elif result <= 0.0:
        return FLOAT32_MAX
    else:
        result = np.sqrt(norm_x * norm_y) / result
        return np.log2(result)


def dot(x, y):
    r"""Dot product distance for normalized vectors.

    One minus the dot product. This is equivalent to cosine distance when
    vectors are normalized to unit length. For unnormalized vectors, use
    `inner_product` distance instead.

    .. math::
        D(x, y) = 1 - \langle x, y \rangle

    Returns 1.0 for non-positive dot products.
    """
    result = 0.0
    dim = x.shape[0]
    for i in range(dim):
        result += x[i] * y[i]

    if result <= 0.0:
        return 1.0
    else:
        return 1.0 - result


def alternative_dot(x, y):
    r"""Alternative dot product distance using log transform.

    A transformed version of dot product distance suitable for the bounded-radius
    search algorithm. Uses negative log of the dot product.

    .. math::
        D_{alt}(x, y) = -\log_2(\langle x, y \rangle)

    Returns FLOAT32_MAX for non-positive dot products (treating them as
    infinitely far). Use `correct_alternative_cosine` to convert back
    to standard dot distance.
    """
    result = 0.0
    dim = x.shape[0]
    for i in range(dim):
        result += x[i] * y[i]

    if result <= 0.0:
        return FLOAT32_MAX
    else:
        return -np.log2(result)


def inner_product(x, y):
    r"""Inner product distance (negative inner product).

    This is useful for retrieval tasks where the inner product represents
    similarity (higher = more similar). The distance is simply the negation
    of the inner product, so that higher similarity becomes lower distance.

    Note: Unlike dot product distance, this does NOT assume normalized vectors.
    For normalized vectors, use the `dot` distance instead which is bounded [0, 1].

    .. math::
        D(x, y) = -\sum_i x_i y_i
    """
    result = 0.0
    dim = x.shape[0]
    for i in range(dim):
        result += x[i] * y[i]

    return -result


def proxy_inner_product(x, y):
    r"""A proxy for inner product distance (negative inner product).

    Inner product distance has undesirable properties for nearest neighbor
    graph based search, and NNDescent in general. This is a proxy function
    that behaves similarly to inner product distance for ranking neighbors,
    but avoids some of the pitfalls.

    This is to be used internally, and results should use reranking with true
    inner product distance.
    """
    ip_result = 0.0
    norm_x = 0.0
    norm_y = 0.0
    dim = x.shape[0]

    for i in range(dim):
        ip_result += x[i] * y[i]
        norm_x += x[i] * x[i]
        norm_y += y[i] * y[i]

    if norm_x == 0 or norm_y == 0:
        return FLOAT32_MAX

    cosine_result = -np.log2(ip_result / np.sqrt(norm_x * norm_y))
    if ip_result >= 0:
        return cosine_result + 1.0 / np.sqrt(ip_result)
    else:
        return FLOAT32_MAX


def proxy_wasserstein_1d(x, y):
    r"""A proxy for 1D Wasserstein distance.

    Uses L1 distance on the cumulative distribution functions, which is
    exactly equal to Wasserstein-1 distance for 1D distributions. This
    avoids the more expensive Minkowski computation with allocation.

    For Wasserstein-p with p > 1, this is a lower bound and correlates
    well for nearest neighbor search.

    .. math::
        D_{proxy}(x, y) = \sum_i |F_x(i) - F_y(i)|

    where :math:`F_x, F_y` are the cumulative distribution functions.

    Results should be reranked with true wasserstein_1d distance if p > 1.
    """
    l1_norm_x = 0.0
    l1_norm_y = 0.0
    dim = x.shape[0]

    for i in range(dim):
        l1_norm_x += x[i]
        l1_norm_y += y[i]

    if l1_norm_x == 0.0 or l1_norm_y == 0.0:
        return FLOAT32_MAX

    # Compute CDF difference inline to avoid allocation
    cdf_x = 0.0
    cdf_y = 0.0
    result = 0.0

    for i in range(dim):
        cdf_x += x[i] / l1_norm_x
        cdf_y += y[i] / l1_norm_y
        result += np.abs(cdf_x - cdf_y)

    return result


def proxy_jensen_shannon(x, y):
    r"""A proxy for Jensen-Shannon divergence.

    Jensen-Shannon requires computing logs and the mixture distribution,
    which is expensive. This proxy uses squared Hellinger distance, which
    is also a proper divergence on probability distributions and much
    cheaper to compute (no logs required).

    .. math::
        D_{proxy}(x, y) = 1 - \left(\sum_i \sqrt{p_i q_i}\right)^2

    where p, q are the normalized distributions.

    Results should be reranked with true jensen_shannon_divergence.
    """
    l1_norm_x = 0.0
    l1_norm_y = 0.0
    dim = x.shape[0]

    for i in range(dim):
        l1_norm_x += x[i]
        l1_norm_y += y[i]

    if l1_norm_x == 0.0 or l1_norm_y == 0.0:
        return FLOAT32_MAX

    # Bhattacharyya coefficient
    bc = 0.0
    for i in range(dim):
        bc += np.sqrt((x[i] / l1_norm_x) * (y[i] / l1_norm_y))

    # Squared Hellinger-like distance: 1 - BC^2
    # This spreads values more than standard Hellinger and correlates
    # well with Jensen-Shannon divergence
    return 1.0 - bc * bc


def proxy_symmetric_kl(x, y):
    r"""A proxy for symmetric KL divergence.

    Symmetric KL requires computing logs which is expensive. This proxy
    uses triangular discrimination (symmetric chi-squared divergence),
    which is a second-order approximation to KL divergence and much cheaper.

    .. math::
        D_{proxy}(x, y) = \sum_i \frac{(p_i - q_i)^2}{p_i + q_i}

    Results should be reranked with true symmetric_kl_divergence.
    """
    l1_norm_x = 0.0
    l1_norm_y = 0.0
    dim = x.shape[0]

    for i in range(dim):
        l1_norm_x += x[i]
        l1_norm_y += y[i]

    if l1_norm_x == 0.0 or l1_norm_y == 0.0:
        return FLOAT32_MAX

    # Triangular discrimination / symmetric chi-squared
    result = 0.0
    for i in range(dim):
        px = x[i] / l1_norm_x
        py = y[i] / l1_norm_y
        denom = px + py
        if denom > 0:
            diff = px - py
            result += (diff * diff) / denom

    return result


def proxy_sinkhorn(x, y):
    r"""A proxy for Sinkhorn (entropy-regularized optimal transport) distance.

    Sinkhorn distance requires iterative matrix scaling which is expensive.
    This proxy uses the same combination as proxy_kantorovich since Sinkhorn
    approximates Kantorovich.

    Results should be reranked with true sinkhorn distance.
    """
    l1_norm_x = 0.0
    l1_norm_y = 0.0
    dim = x.shape[0]

    for i in range(dim):
        l1_norm_x += x[i]
        l1_norm_y += y[i]

    if l1_norm_x == 0.0 or l1_norm_y == 0.0:
        return FLOAT32_MAX

    # Total variation distance + Hellinger-like term
    tv_result = 0.0
    hellinger_result = 0.0

    for i in range(dim):
        px = x[i] / l1_norm_x
        py = y[i] / l1_norm_y
        tv_result += np.abs(px - py)
        hellinger_result += np.sqrt(px * py)

    return 0.5 * tv_result + (1.0 - hellinger_result)


def tsss(x, y):
    r"""Triangle Area Similarity - Sector Area Similarity (TS-SS) distance.

    A distance metric that combines both magnitude and angular information.
    It multiplies a triangle area (capturing angular difference) by a sector
    area (capturing both angular and magnitude differences).

    Useful when both the direction and magnitude of vectors are important.
    """
    d_euc_squared = 0.0
    d_cos = 0.0
    norm_x = 0.0
    norm_y = 0.0
    dim = x.shape[0]

    for i in range(dim):
        diff = x[i] - y[i]
        d_euc_squared += diff * diff
        d_cos += x[i] * y[i]
        norm_x += x[i] * x[i]
        norm_y += y[i] * y[i]

    norm_x = np.sqrt(norm_x)
    norm_y = np.sqrt(norm_y)
    magnitude_difference = np.abs(norm_x - norm_y)
    d_cos /= norm_x * norm_y
    theta = np.arccos(d_cos) + np.radians(10)  # Add 10 degrees as an "epsilon" to
    # avoid problems
    sector = ((np.sqrt(d_euc_squared) + magnitude_difference) ** 2) * theta
    triangle = norm_x * norm_y * np.sin(theta) / 2.0
    return triangle * sector


def true_angular(x, y):
    r"""True angular distance.

    The actual angle between two vectors, normalized to [0, 1].
    Unlike cosine distance which uses 1 - cos(θ), this returns 1 - θ/π.

    .. math::
        D(x, y) = 1 - \frac{\arccos\left(\frac{\langle x, y \rangle}{\|x\| \|y\|}\right)}{\pi}

    Returns 0 for identical directions, approaches 1 for opposite directions.
    """
    result = 0.0
    norm_x = 0.0
    norm_y = 0.0
    dim = x.shape[0]
    for i in range(dim):
        result += x[i] * y[i]
        norm_x += x[i] * x[i]
        norm_y += y[i] * y[i]

    if norm_x == 0.0 and norm_y == 0.0:
        return 0.0
    elif norm_x == 0.0 or norm_y == 0.0:
        return FLOAT32_MAX
    elif result <= 0.0:
        return FLOAT32_MAX
    else:
        result = result / np.sqrt(norm_x * norm_y)
        return 1.0 - (np.arccos(result) / np.pi)


def correlation(x, y):
    r"""Correlation distance.

    One minus the Pearson correlation coefficient. Measures how linearly
    related two vectors are after centering (subtracting their means).

    .. math::
        D(x, y) = 1 - \frac{\langle x - \bar{x}, y - \bar{y} \rangle}{\|x - \bar{x}\| \|y - \bar{y}\|}

    Equivalent to cosine distance on mean-centered data.
    """
    mu_x = 0.0
    mu_y = 0.0
    norm_x = 0.0
    norm_y = 0.0
    dot_product = 0.0

    for i in range(x.shape[0]):
        mu_x += x[i]
        mu_y += y[i]

    mu_x /= x.shape[0]
    mu_y /= x.shape[0]

    for i in range(x.shape[0]):
        shifted_x = x[i] - mu_x
        shifted_y = y[i] - mu_y
        norm_x += shifted_x**2
        norm_y += shifted_y**2
        dot_product += shifted_x * shifted_y

    if norm_x == 0.0 and norm_y == 0.0:
        return 0.0
    elif dot_product == 0.0:
        return 1.0
    else:
        return 1.0 - (dot_product / np.sqrt(norm_x * norm_y))


def hellinger(x, y):
    r"""Hellinger distance.

    A distance for probability distributions, based on the Bhattacharyya
    coefficient. Input vectors are treated as (unnormalized) probability
    distributions.

    .. math::
        D(x, y) = \sqrt{1 - \frac{\sum_i \sqrt{x_i y_i}}{\sqrt{\sum_i x_i \cdot \sum_i y_i}}}

    Returns values in [0, 1].
    """
    result = 0.0
    l1_norm_x = 0.0
    l1_norm_y = 0.0
    dim = x.shape[0]

    for i in range(dim):
        result += np.sqrt(x[i] * y[i])
        l1_norm_x += x[i]
        l1_norm_y += y[i]

    if l1_norm_x == 0 and l1_norm_y == 0:
        return 0.0
    elif l1_norm_x == 0 or l1_norm_y == 0:
        return 1.0
    else:
        return np.sqrt(1 - result / np.sqrt(l1_norm_x * l1_norm_y))


def alternative_hellinger(x, y):
    r"""Alternative Hellinger distance using log transform.

    A transformed version of Hellinger distance suitable for the bounded-radius
    search algorithm.

    .. math::
        D_{alt}(x, y) = \log_2\left(\frac{\sqrt{\sum_i x_i \cdot \sum_i y_i}}{\sum_i \sqrt{x_i y_i}}\right)

    Use `correct_alternative_hellinger` to convert back to standard Hellinger distance.
    """
    result = 0.0
    l1_norm_x = 0.0
    l1_norm_y = 0.0
    dim = x.shape[0]

    for i in range(dim):
        result += np.sqrt(x[i] * y[i])
        l1_norm_x += x[i]
        l1_norm_y += y[i]

    if l1_norm_x == 0 and l1_norm_y == 0:
        return 0.0
    elif l1_norm_x == 0 or l1_norm_y == 0:
        return FLOAT32_MAX
    elif result <= 0:
        return FLOAT32_MAX
    else:
        result = np.sqrt(l1_norm_x * l1_norm_y) / result
        return np.log2(result)


def sinkhorn(x, y, cost=_dummy_cost, regularization=1.0):
    r"""Sinkhorn distance (entropy-regularized optimal transport).

    An approximation to the Kantorovich distance using entropy regularization.
    Faster to compute than exact optimal transport for large distributions.

    Parameters
    ----------
    x, y : array-like
        Input vectors treated as probability distributions (will be normalized).
    cost : array-like
        Cost matrix where cost[i,j] is the cost of moving mass from bin i to bin j.
    regularization : float
        Entropy regularization parameter. Smaller values give results closer
        to exact Kantorovich distance but may be less stable.

    Returns
    -------
    float
        The entropy-regularized optimal transport distance.
    """
    row_mask = x != 0
    col_mask = y != 0

    a = x[row_mask].astype(np.float64)
    b = y[col_mask].astype(np.float64)

    a_sum = a.sum()
    b_sum = b.sum()

    a /= a_sum
    b /= b_sum

    sub_cost = cost[row_mask, :][:, col_mask]

    transport_plan = sinkhorn_transport_plan(
        x, y, cost=sub_cost, regularization=regularization
    )
    dim_i = transport_plan.shape[0]
    dim_j = transport_plan.shape[1]
    result = 0.0
    for i in range(dim_i):
        for j in range(dim_j):
            result += transport_plan[i, j] * cost[i, j]

    return result


def jensen_shannon_divergence(x, y):
    r"""Jensen-Shannon divergence.

    A symmetrized and smoothed version of KL divergence. Measures the
    similarity between two probability distributions.

    .. math::
        D(x, y) = \frac{1}{2} \left( D_{KL}(x \| m) + D_{KL}(y \| m) \right)

    where :math:`m = \frac{1}{2}(x + y)` and :math:`D_{KL}` is KL divergence.
    Input vectors are normalized to probability distributions.
    """
    result = 0.0
    l1_norm_x = 0.0
    l1_norm_y = 0.0
    dim = x.shape[0]

    for i in range(dim):
        l1_norm_x += x[i]
        l1_norm_y += y[i]

    l1_norm_x += FLOAT32_EPS * dim
    l1_norm_y += FLOAT32_EPS * dim

    pdf_x = (x + FLOAT32_EPS) / l1_norm_x
    pdf_y = (y + FLOAT32_EPS) / l1_norm_y
    m = 0.5 * (pdf_x + pdf_y)

    for i in range(dim):
        result += 0.5 * (
            pdf_x[i] * np.log(pdf_x[i] / m[i]) + pdf_y[i] * np.log(pdf_y[i] / m[i])
        )

    return result


def wasserstein_1d(x, y, p=1):
    r"""1-dimensional Wasserstein distance.

    The p-Wasserstein distance for 1D distributions, computed efficiently
    via the CDF. Input vectors are treated as histograms over ordered bins.

    .. math::
        W_p(x, y) = \left( \sum_i |F_x(i) - F_y(i)|^p \right)^{1/p}

    where :math:`F_x, F_y` are the cumulative distribution functions.

    Parameters
    ----------
    x, y : array-like
        Input vectors treated as probability distributions (will be normalized).
    p : int
        The order of the Wasserstein distance (default 1).
    """
    x_sum = 0.0
    y_sum = 0.0
    for i in range(x.shape[0]):
        x_sum += x[i]
        y_sum += y[i]

    x_cdf = x / x_sum
    y_cdf = y / y_sum

    for i in range(1, x_cdf.shape[0]):
        x_cdf[i] += x_cdf[i - 1]
        y_cdf[i] += y_cdf[i - 1]

    return minkowski(x_cdf, y_cdf, p)


def circular_kantorovich(x, y, p=1):
    r"""Circular Kantorovich distance.

    The Wasserstein distance for distributions on a circle (periodic domain).
    Useful for cyclic data like angles, time of day, or periodic histograms.

    Parameters
    ----------
    x, y : array-like
        Input vectors treated as probability distributions (will be normalized).
    p : int
        The order of the Wasserstein distance (default 1).
    """
    x_sum = 0.0
    y_sum = 0.0
    for i in range(x.shape[0]):
        x_sum += x[i]
        y_sum += y[i]

    x_cdf = x / x_sum
    y_cdf = y / y_sum

    for i in range(1, x_cdf.shape[0]):
        x_cdf[i] += x_cdf[i - 1]
        y_cdf[i] += y_cdf[i - 1]

    mu = np.median((x_cdf - y_cdf) ** p)

    # Now we just want minkowski distance on the CDFs shifted by mu
    result = 0.0
    if p > 2:
        for i in range(x_cdf.shape[0]):
            result += np.abs(x_cdf[i] - y_cdf[i] - mu) ** p

        return result ** (1.0 / p)

    elif p == 2:
        for i in range(x_cdf.shape[0]):
            val = x_cdf[i] - y_cdf[i] - mu
            result += val * val

        return np.sqrt(result)

    elif p == 1:
        for i in range(x_cdf.shape[0]):
            result += np.abs(x_cdf[i] - y_cdf[i] - mu)

        return result

    else:
        raise ValueError("Invalid p supplied to Kantorvich distance")


def symmetric_kl_divergence(x, y):
    r"""Symmetric Kullback-Leibler divergence.

    The sum of KL divergences in both directions, making it symmetric.

    .. math::
        D(x, y) = D_{KL}(x \| y) + D_{KL}(y \| x)

    where :math:`D_{KL}(p \| q) = \sum_i p_i \log(p_i / q_i)`.
    Input vectors are normalized to probability distributions.
    """
    result = 0.0
    l1_norm_x = 0.0
    l1_norm_y = 0.0
    dim = x.shape[0]

    for i in range(dim):
        l1_norm_x += x[i]
        l1_norm_y += y[i]

    l1_norm_x += FLOAT32_EPS * dim
    l1_norm_y += FLOAT32_EPS * dim

    pdf_x = (x + FLOAT32_EPS) / l1_norm_x
    pdf_y = (y + FLOAT32_EPS) / l1_norm_y

    for i in range(dim):
        result += pdf_x[i] * np.log(pdf_x[i] / pdf_y[i]) + pdf_y[i] * np.log(
            pdf_y[i] / pdf_x[i]
        )

    return result



# ---------------------------------------------------------------- records

def _xy(rng, n=8):
    return rng.standard_normal(n), rng.standard_normal(n)


def _pos(rng, n=8):
    return rng.uniform(0.2, 1.5, n), rng.uniform(0.2, 1.5, n)


def _entry(name, fn, args, source=SRC, **kw):
    d = dict(name="pynndescent." + name, source=source, fn=fn, args=args,
             group="pynndescent distances")
    d.update(kw)
    return d


ENTRIES = [
    _entry("euclidean", euclidean, _xy),
    _entry("squared_euclidean", squared_euclidean, _xy),
    _entry("standardised_euclidean", standardised_euclidean,
           lambda r: _xy(r) + (r.uniform(0.5, 2.0, 8),)),
    _entry("manhattan", manhattan, _xy),
    _entry("chebyshev", chebyshev, _xy),
    _entry("minkowski", minkowski.py_func, lambda r: _xy(r) + (3,)),
    _entry("minkowski_float_p", minkowski.py_func, lambda r: _xy(r) + (2.5,)),
    _entry("weighted_minkowski", weighted_minkowski,
           lambda r: _xy(r) + (r.uniform(0.5, 2.0, 8), 3)),
    _entry("mahalanobis", mahalanobis,
           lambda r: _xy(r, 4) + (np.eye(4) + 0.1 * np.ones((4, 4)),)),
    _entry("canberra", canberra, _xy),
    _entry("bray_curtis", bray_curtis, _pos),
    _entry("haversine", haversine, lambda r: (r.uniform(-1, 1, 2), r.uniform(-1, 1, 2))),
    _entry("cosine", cosine, _xy),
    _entry("alternative_cosine", alternative_cosine, _pos),
    _entry("dot", dot, lambda r: (r.uniform(0, 0.3, 8), r.uniform(0, 0.3, 8))),
    _entry("alternative_dot", alternative_dot, lambda r: (r.uniform(0, 0.3, 8), r.uniform(0, 0.3, 8))),
    _entry("inner_product", inner_product, _xy),
    _entry("proxy_inner_product", proxy_inner_product, _pos),
    _entry("proxy_wasserstein_1d", proxy_wasserstein_1d, _pos),
    _entry("proxy_jensen_shannon", proxy_jensen_shannon, _pos),
    _entry("proxy_symmetric_kl", proxy_symmetric_kl, _pos),
    _entry("proxy_sinkhorn", proxy_sinkhorn, _pos),
    _entry("tsss", tsss, _xy),
    _entry("true_angular", true_angular, _pos),
    _entry("correlation", correlation, _xy),
    _entry("hellinger", hellinger, _pos),
    _entry("alternative_hellinger", alternative_hellinger, _pos),
    _entry("sinkhorn", sinkhorn,
           lambda r: _pos(r, 5) + (np.abs(np.subtract.outer(np.arange(5.0), np.arange(5.0))), 1.0)),
    _entry("jensen_shannon_divergence", jensen_shannon_divergence, _pos),
    _entry("wasserstein_1d", wasserstein_1d, lambda r: _pos(r) + (2,)),
    _entry("circular_kantorovich", circular_kantorovich, lambda r: _pos(r) + (1,)),
    _entry("circular_kantorovich_p2", circular_kantorovich, lambda r: _pos(r) + (2,)),
    _entry("symmetric_kl_divergence", symmetric_kl_divergence, _pos),
]
