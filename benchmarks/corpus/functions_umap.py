"""Corpus: distances, gradients and layout kernels of UMAP (Leland McInnes), verbatim.

Source: github lmcinnes/umap at commit e82ed0d: umap/distances.py, umap/layouts.py,
umap/umap_.py, umap/utils.py. Functions under test are plain functions here; a function
that another one calls keeps its author's ``@numba.njit`` decorator and is tested through
its ``.py_func``. Module globals are copied as written.
"""
import numba
import numpy as np

SRC = "lmcinnes/umap@e82ed0d:umap/distances.py"
SRC_LAYOUTS = "lmcinnes/umap@e82ed0d:umap/layouts.py"
SRC_UMAP = "lmcinnes/umap@e82ed0d:umap/umap_.py"

_mock_identity = np.eye(2, dtype=np.float64)
_mock_cost = 1.0 - _mock_identity
_mock_ones = np.ones(2, dtype=np.float64)

SMOOTH_K_TOLERANCE = 1e-5
NPY_INFINITY = np.inf


# ---------------------------------------------------------------- helpers (as decorated)

@numba.njit("i4(i8[:])")
def tau_rand_int(state):
    """A fast (pseudo)-random number generator.

    Parameters
    ----------
    state: array of int64, shape (3,)
        The internal state of the rng

    Returns
    -------
    A (pseudo)-random int32 value
    """
    state[0] = (((state[0] & 4294967294) << 12) & 0xFFFFFFFF) ^ (
        (((state[0] << 13) & 0xFFFFFFFF) ^ state[0]) >> 19
    )
    state[1] = (((state[1] & 4294967288) << 4) & 0xFFFFFFFF) ^ (
        (((state[1] << 2) & 0xFFFFFFFF) ^ state[1]) >> 25
    )
    state[2] = (((state[2] & 4294967280) << 17) & 0xFFFFFFFF) ^ (
        (((state[2] << 3) & 0xFFFFFFFF) ^ state[2]) >> 11
    )

    return state[0] ^ state[1] ^ state[2]



@numba.njit()
def sign(a):
    if a < 0:
        return -1
    else:
        return 1


@numba.njit()
def softmax(z):
    n = z.shape[0]
    out = np.empty(n)

    zmax = z[0]
    for i in range(1, n):
        if z[i] > zmax:
            zmax = z[i]

    s = 0.0
    for i in range(n):
        out[i] = np.exp(z[i] - zmax)
        s += out[i]

    if s == 0.0:
        for i in range(n):
            out[i] = 1.0 / n
    else:
        invs = 1.0 / s
        for i in range(n):
            out[i] *= invs

    return out


@numba.njit()
def hellinger(x, y):
    result = 0.0
    l1_norm_x = 0.0
    l1_norm_y = 0.0

    for i in range(x.shape[0]):
        result += np.sqrt(x[i] * y[i])
        l1_norm_x += x[i]
        l1_norm_y += y[i]

    if l1_norm_x == 0 and l1_norm_y == 0:
        return 0.0
    elif l1_norm_x == 0 or l1_norm_y == 0:
        return 1.0
    else:
        return np.sqrt(1 - result / np.sqrt(l1_norm_x * l1_norm_y))


@numba.njit()
def hellinger_grad(x, y):
    result = 0.0
    l1_norm_x = 0.0
    l1_norm_y = 0.0

    grad_term = np.empty(x.shape[0])

    for i in range(x.shape[0]):
        grad_term[i] = np.sqrt(x[i] * y[i])
        result += grad_term[i]
        l1_norm_x += x[i]
        l1_norm_y += y[i]

    if l1_norm_x == 0.0 and l1_norm_y == 0.0:
        return 0.0, np.zeros(x.shape, dtype=np.float32)

    if l1_norm_x == 0.0 or l1_norm_y == 0.0:
        return 1.0, np.zeros(x.shape, dtype=np.float32)

    dist_denom = np.sqrt(l1_norm_x * l1_norm_y)
    inner = max(0.0, 1.0 - result / dist_denom)
    dist = np.sqrt(inner)

    if dist == 0.0:
        return dist, np.zeros(x.shape[0], dtype=np.float32)

    grad = np.empty(x.shape[0], dtype=np.float32)
    grad_denom = 2.0 * dist
    grad_numer_const = (l1_norm_y * result) / (2.0 * dist_denom**3)

    for i in range(x.shape[0]):
        if x[i] > 0.0 and grad_term[i] > 0:
            term = y[i] / (2.0 * grad_term[i] * dist_denom)
        else:
            term = 0.0

        grad[i] = (grad_numer_const - term) / grad_denom

    return dist, grad


@numba.njit()
def approx_log_Gamma(x):
    if x == 1:
        return 0
    # x2= 1/(x*x);
    return x * np.log(x) - x + 0.5 * np.log(2.0 * np.pi / x) + 1.0 / (x * 12.0)


@numba.njit()
def log_beta(x, y):
    a = min(x, y)
    b = max(x, y)
    if b < 5:
        value = -np.log(b)
        for i in range(1, int(a)):
            value += np.log(i) - np.log(b + i)
        return value
    else:
        return approx_log_Gamma(x) + approx_log_Gamma(y) - approx_log_Gamma(x + y)


@numba.njit()
def log_single_beta(x):
    return np.log(2.0) * (-2.0 * x + 0.5) + 0.5 * np.log(2.0 * np.pi / x) + 0.125 / x



@numba.njit()
def clip(val):
    """Standard clamping of a value into a fixed range (in this case -4.0 to
    4.0)

    Parameters
    ----------
    val: float
        The value to be clamped.

    Returns
    -------
    The clamped value, now fixed to be in the range -4.0 to 4.0.
    """
    if val > 4.0:
        return 4.0
    elif val < -4.0:
        return -4.0
    else:
        return val


@numba.njit(
    "f4(f4[::1],f4[::1])",
    fastmath=True,
    cache=True,
    locals={
        "result": numba.types.float32,
        "diff": numba.types.float32,
        "dim": numba.types.intp,
        "i": numba.types.intp,
    },
)
def rdist(x, y):
    """Reduced Euclidean distance.

    Parameters
    ----------
    x: array of shape (embedding_dim,)
    y: array of shape (embedding_dim,)

    Returns
    -------
    The squared euclidean distance between x and y
    """
    result = 0.0
    dim = x.shape[0]
    for i in range(dim):
        diff = x[i] - y[i]
        result += diff * diff

    return result



# ---------------------------------------------------------------- functions under test

def euclidean(x, y):
    r"""Standard euclidean distance.

    ..math::
        D(x, y) = \sqrt{\sum_i (x_i - y_i)^2}
    """
    result = 0.0
    for i in range(x.shape[0]):
        result += (x[i] - y[i]) ** 2
    return np.sqrt(result)


def standardised_euclidean(x, y, sigma=_mock_ones):
    r"""Euclidean distance standardised against a vector of standard
    deviations per coordinate.

    ..math::
        D(x, y) = \sqrt{\sum_i \frac{(x_i - y_i)**2}{v_i}}
    """
    result = 0.0
    for i in range(x.shape[0]):
        result += ((x[i] - y[i]) ** 2) / sigma[i]

    return np.sqrt(result)


def manhattan(x, y):
    r"""Manhattan, taxicab, or l1 distance.

    ..math::
        D(x, y) = \sum_i |x_i - y_i|
    """
    result = 0.0
    for i in range(x.shape[0]):
        result += np.abs(x[i] - y[i])

    return result


def chebyshev(x, y):
    r"""Chebyshev or l-infinity distance.

    ..math::
        D(x, y) = \max_i |x_i - y_i|
    """
    result = 0.0
    for i in range(x.shape[0]):
        result = max(result, np.abs(x[i] - y[i]))

    return result


def minkowski(x, y, p=2):
    r"""Minkowski distance.

    ..math::
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


def weighted_minkowski(x, y, w=_mock_ones, p=2):
    r"""A weighted version of Minkowski distance.

    ..math::
        D(x, y) = \left(\sum_i w_i |x_i - y_i|^p\right)^{\frac{1}{p}}

    If weights w_i are inverse standard deviations of data in each dimension
    then this represented a standardised Minkowski distance (and is
    equivalent to standardised Euclidean distance for p=1).
    """
    result = 0.0
    for i in range(x.shape[0]):
        result += w[i] * np.abs(x[i] - y[i]) ** p

    return result ** (1.0 / p)


def mahalanobis(x, y, vinv=_mock_identity):
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
    result = 0.0
    for i in range(x.shape[0]):
        denominator = np.abs(x[i]) + np.abs(y[i])
        if denominator > 0:
            result += np.abs(x[i] - y[i]) / denominator

    return result


def bray_curtis(x, y):
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
    if x.shape[0] != 2:
        raise ValueError("haversine is only defined for 2 dimensional data")
    sin_lat = np.sin(0.5 * (x[0] - y[0]))
    sin_long = np.sin(0.5 * (x[1] - y[1]))
    result = np.sqrt(sin_lat**2 + np.cos(x[0]) * np.cos(y[0]) * sin_long**2)
    return 2.0 * np.arcsin(result)


def cosine(x, y):
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


def correlation(x, y):
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


def euclidean_grad(x, y):
    r"""Standard euclidean distance and its gradient.

    ..math::
        D(x, y) = \sqrt{\sum_i (x_i - y_i)^2}
        \frac{dD(x, y)}{dx} = (x_i - y_i)/D(x,y)
    """
    result = 0.0
    for i in range(x.shape[0]):
        result += (x[i] - y[i]) ** 2
    d = np.sqrt(result)
    grad = (x - y) / (1e-6 + d)
    return d, grad


def standardised_euclidean_grad(x, y, sigma=_mock_ones):
    r"""Euclidean distance standardised against a vector of standard
    deviations per coordinate with gradient.

    ..math::
        D(x, y) = \sqrt{\sum_i \frac{(x_i - y_i)**2}{v_i}}
    """
    result = 0.0
    for i in range(x.shape[0]):
        result += (x[i] - y[i]) ** 2 / sigma[i]
    d = np.sqrt(result)
    grad = (x - y) / (1e-6 + d * sigma)
    return d, grad


def manhattan_grad(x, y):
    r"""Manhattan, taxicab, or l1 distance with gradient.

    ..math::
        D(x, y) = \sum_i |x_i - y_i|
    """
    result = 0.0
    grad = np.zeros(x.shape)
    for i in range(x.shape[0]):
        result += np.abs(x[i] - y[i])
        grad[i] = np.sign(x[i] - y[i])
    return result, grad


def chebyshev_grad(x, y):
    r"""Chebyshev or l-infinity distance with gradient.

    ..math::
        D(x, y) = \max_i |x_i - y_i|
    """
    result = 0.0
    max_i = 0
    for i in range(x.shape[0]):
        v = np.abs(x[i] - y[i])
        if v > result:
            result = v
            max_i = i
    grad = np.zeros(x.shape)
    grad[max_i] = np.sign(x[max_i] - y[max_i])

    return result, grad


def minkowski_grad(x, y, p=2.0):
    r"""Minkowski distance.

    ..math::
        D(x, y) = \left(\sum_i |x_i - y_i|^p\right)^{\frac{1}{p}}

    This is a general distance. For p=1 it is equivalent to
    manhattan distance, for p=2 it is Euclidean distance, and
    for p=infinity it is Chebyshev distance. In general it is better
    to use the more specialised functions for those distances.
    """
    S = 0.0
    for i in range(x.shape[0]):
        S += np.abs(x[i] - y[i]) ** p

    dist = S ** (1.0 / p)
    grad = np.zeros(x.shape[0], dtype=np.float32)

    if S == 0.0:
        return dist, grad

    inv_denom = pow(S, (1.0 - p) / p)
    for i in range(x.shape[0]):
        grad[i] = pow(np.abs(x[i] - y[i]), p - 1.0) * sign(x[i] - y[i]) * inv_denom

    return dist, grad


def poincare(u, v):
    r"""Poincare distance.

    ..math::
        \delta (u, v) = 2 \frac{ \lVert  u - v \rVert ^2 }{ ( 1 - \lVert  u \rVert ^2 ) ( 1 - \lVert  v \rVert ^2 ) }
        D(x, y) = \operatorname{arcosh} (1+\delta (u,v))
    """
    sq_u_norm = np.sum(u * u)
    sq_v_norm = np.sum(v * v)
    sq_dist = np.sum(np.power(u - v, 2))
    return np.arccosh(1 + 2 * (sq_dist / ((1 - sq_u_norm) * (1 - sq_v_norm))))


def hyperboloid_grad(x, y):
    s = np.sqrt(1 + np.sum(x**2))
    t = np.sqrt(1 + np.sum(y**2))

    B = s * t
    for i in range(x.shape[0]):
        B -= x[i] * y[i]

    if B <= 1:
        B = 1.0 + 1e-8

    grad_coeff = 1.0 / (np.sqrt(B - 1) * np.sqrt(B + 1))

    # return np.arccosh(B), np.zeros(x.shape[0])

    grad = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        grad[i] = grad_coeff * (((x[i] * t) / s) - y[i])

    return np.arccosh(B), grad


def weighted_minkowski_grad(x, y, w=_mock_ones, p=2.0):
    r"""A weighted version of Minkowski distance with gradient.

    ..math::
        D(x, y) = \left(\sum_i w_i |x_i - y_i|^p\right)^{\frac{1}{p}}

    If weights w_i are inverse standard deviations of data in each dimension
    then this represents a standardised Minkowski distance (and is
    equivalent to standardised Euclidean distance for p=1).
    """
    S = 0.0
    for i in range(x.shape[0]):
        S += w[i] * (np.abs(x[i] - y[i])) ** p

    dist = S ** (1.0 / p)
    grad = np.zeros(x.shape[0], dtype=np.float32)

    if S == 0.0:
        return dist, grad

    inv_denom = pow(S, (1.0 - p) / p)
    for i in range(x.shape[0]):
        grad[i] = (
            w[i] * pow(np.abs(x[i] - y[i]), p - 1.0) * sign(x[i] - y[i]) * inv_denom
        )

    return dist, grad


def mahalanobis_grad(x, y, vinv=_mock_identity):
    result = 0.0

    diff = np.empty(x.shape[0], dtype=np.float32)

    for i in range(x.shape[0]):
        diff[i] = x[i] - y[i]

    grad_tmp = np.zeros(x.shape)
    for i in range(x.shape[0]):
        tmp = 0.0
        for j in range(x.shape[0]):
            tmp += vinv[i, j] * diff[j]
            grad_tmp[i] += vinv[i, j] * diff[j]
        result += tmp * diff[i]
    dist = np.sqrt(result)
    grad = grad_tmp / (1e-6 + dist)
    return dist, grad


def canberra_grad(x, y):
    result = 0.0
    grad = np.zeros(x.shape)
    for i in range(x.shape[0]):
        denominator = np.abs(x[i]) + np.abs(y[i])
        if denominator > 0:
            result += np.abs(x[i] - y[i]) / denominator
            grad[i] = (
                np.sign(x[i] - y[i]) / denominator
                - np.abs(x[i] - y[i]) * np.sign(x[i]) / denominator**2
            )

    return result, grad


def bray_curtis_grad(x, y):
    numerator = 0.0
    denominator = 0.0
    for i in range(x.shape[0]):
        numerator += np.abs(x[i] - y[i])
        denominator += np.abs(x[i] + y[i])

    if denominator > 0.0:
        dist = float(numerator) / denominator
        grad = (np.sign(x - y) - dist) / denominator
    else:
        dist = 0.0
        grad = np.zeros(x.shape)

    return dist, grad


def haversine_grad(x, y):
    # spectral initialization puts many points near the poles
    # currently, adding pi/2 to the latitude avoids problems
    # TODO: reimplement with quaternions to avoid singularity

    if x.shape[0] != 2:
        raise ValueError("haversine is only defined for 2 dimensional data")
    sin_lat = np.sin(0.5 * (x[0] - y[0]))
    cos_lat = np.cos(0.5 * (x[0] - y[0]))
    sin_long = np.sin(0.5 * (x[1] - y[1]))
    cos_long = np.cos(0.5 * (x[1] - y[1]))

    a_0 = np.cos(x[0] + np.pi / 2) * np.cos(y[0] + np.pi / 2) * sin_long**2
    a_1 = a_0 + sin_lat**2

    d = 2.0 * np.arcsin(np.sqrt(min(max(abs(a_1), 0), 1)))
    denom = np.sqrt(abs(a_1 - 1)) * np.sqrt(abs(a_1))
    grad = np.array(
        [
            (
                sin_lat * cos_lat
                - np.sin(x[0] + np.pi / 2) * np.cos(y[0] + np.pi / 2) * sin_long**2
            ),
            (np.cos(x[0] + np.pi / 2) * np.cos(y[0] + np.pi / 2) * sin_long * cos_long),
        ]
    ) / (denom + 1e-6)
    return d, grad


def cosine_grad(x, y):
    result = 0.0
    norm_x = 0.0
    norm_y = 0.0

    for i in range(x.shape[0]):
        result += x[i] * y[i]
        norm_x += x[i] * x[i]
        norm_y += y[i] * y[i]

    if norm_x == 0.0 and norm_y == 0.0:
        return 0.0, np.zeros(x.shape, dtype=np.float32)

    if norm_x == 0.0 or norm_y == 0.0:
        return 1.0, np.zeros(x.shape, dtype=np.float32)

    nx = np.sqrt(norm_x)
    ny = np.sqrt(norm_y)

    dist = 1.0 - result / (nx * ny)
    grad = np.empty(x.shape[0], dtype=np.float32)

    inv_nx_ny = 1.0 / (nx * ny)
    inv_nx3_ny = 1.0 / (norm_x * nx * ny)

    for i in range(x.shape[0]):
        grad[i] = x[i] * result * inv_nx3_ny - y[i] * inv_nx_ny

    return dist, grad


def softmax_hellinger(x, y):
    """
    Hellinger distance between softmax(x) and softmax(y).
    """
    p = softmax(x)
    q = softmax(y)

    return hellinger(p, q)


def softmax_hellinger_grad(x, y):
    """
    Hellinger distance and grad between softmax(x) and softmax(y).
    """
    p = softmax(x)
    q = softmax(y)

    dist, g_p = hellinger_grad(p, q)

    dot_gp_p = 0.0
    for i in range(p.shape[0]):
        dot_gp_p += g_p[i] * p[i]

    grad_x = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        grad_x[i] = p[i] * (g_p[i] - dot_gp_p)

    return dist, grad_x


def ll_dirichlet(data1, data2):
    """The symmetric relative log likelihood of rolling data2 vs data1
    in n trials on a die that rolled data1 in sum(data1) trials.

    ..math::
        D(data1, data2) = DirichletMultinomail(data2 | data1)
    """

    n1 = np.sum(data1)
    n2 = np.sum(data2)

    log_b = 0.0
    self_denom1 = 0.0
    self_denom2 = 0.0

    for i in range(data1.shape[0]):
        if data1[i] * data2[i] > 0.9:
            log_b += log_beta(data1[i], data2[i])
            self_denom1 += log_single_beta(data1[i])
            self_denom2 += log_single_beta(data2[i])

        else:
            if data1[i] > 0.9:
                self_denom1 += log_single_beta(data1[i])

            if data2[i] > 0.9:
                self_denom2 += log_single_beta(data2[i])

    return np.sqrt(
        1.0 / n2 * (log_b - log_beta(n1, n2) - (self_denom2 - log_single_beta(n2)))
        + 1.0 / n1 * (log_b - log_beta(n2, n1) - (self_denom1 - log_single_beta(n1)))
    )


def symmetric_kl(x, y, z=1e-11):  # pragma: no cover
    r"""
    symmetrized KL divergence between two probability distributions

    ..math::
        D(x, y) = \frac{D_{KL}\left(x \Vert y\right) + D_{KL}\left(y \Vert x\right)}{2}
    """
    n = x.shape[0]
    x_sum = 0.0
    y_sum = 0.0
    kl1 = 0.0
    kl2 = 0.0

    for i in range(n):
        x[i] += z
        x_sum += x[i]
        y[i] += z
        y_sum += y[i]

    for i in range(n):
        x[i] /= x_sum
        y[i] /= y_sum

    for i in range(n):
        kl1 += x[i] * np.log(x[i] / y[i])
        kl2 += y[i] * np.log(y[i] / x[i])

    return (kl1 + kl2) / 2


def symmetric_kl_grad(x, y, z=1e-11):  # pragma: no cover
    """
    symmetrized KL divergence and its gradient

    """
    n = x.shape[0]
    x_sum = 0.0
    y_sum = 0.0
    kl1 = 0.0
    kl2 = 0.0

    for i in range(n):
        x[i] += z
        x_sum += x[i]
        y[i] += z
        y_sum += y[i]

    for i in range(n):
        x[i] /= x_sum
        y[i] /= y_sum

    for i in range(n):
        kl1 += x[i] * np.log(x[i] / y[i])
        kl2 += y[i] * np.log(y[i] / x[i])

    dist = (kl1 + kl2) / 2
    grad = (np.log(y / x) - (x / y) + 1) / 2

    return dist, grad


def correlation_grad(x, y):
    n = x.shape[0]

    mu_x = 0.0
    mu_y = 0.0
    for i in range(n):
        mu_x += x[i]
        mu_y += y[i]
    mu_x /= n
    mu_y /= n

    dot = 0.0
    norm_x = 0.0
    norm_y = 0.0

    for i in range(n):
        cx = x[i] - mu_x
        cy = y[i] - mu_y
        dot += cx * cy
        norm_x += cx * cx
        norm_y += cy * cy

    if norm_x == 0.0 and norm_y == 0.0:
        return 0.0, np.zeros(n, dtype=np.float32)

    if norm_x == 0.0 or norm_y == 0.0:
        return 1.0, np.zeros(n, dtype=np.float32)

    nx = np.sqrt(norm_x)
    ny = np.sqrt(norm_y)

    dist = 1.0 - dot / (nx * ny)
    grad = np.empty(n, dtype=np.float32)

    inv_nx_ny = 1.0 / (nx * ny)
    inv_nx3_ny = 1.0 / (norm_x * nx * ny)

    mean_grad = 0.0
    for i in range(n):
        cx = x[i] - mu_x
        grad[i] = cx * dot * inv_nx3_ny - (y[i] - mu_y) * inv_nx_ny
        mean_grad += grad[i]

    mean_grad /= n
    for i in range(n):
        grad[i] -= mean_grad

    return dist, grad


def sinkhorn_distance(
    x, y, M=_mock_identity, cost=_mock_cost, maxiter=64
):  # pragma: no cover
    p = (x / x.sum()).astype(np.float32)
    q = (y / y.sum()).astype(np.float32)

    u = np.ones(p.shape, dtype=np.float32)
    v = np.ones(q.shape, dtype=np.float32)

    for n in range(maxiter):
        t = M @ v
        u[t > 0] = p[t > 0] / t[t > 0]
        t = M.T @ u
        v[t > 0] = q[t > 0] / t[t > 0]

    pi = np.diag(v) @ M @ np.diag(u)
    result = 0.0
    for i in range(pi.shape[0]):
        for j in range(pi.shape[1]):
            if pi[i, j] > 0:
                result += pi[i, j] * cost[i, j]

    return result


def spherical_gaussian_energy_grad(x, y):  # pragma: no cover
    mu_1 = x[0] - y[0]
    mu_2 = x[1] - y[1]

    sigma = np.abs(x[2]) + np.abs(y[2])
    sign_sigma = np.sign(x[2])

    dist = (mu_1**2 + mu_2**2) / (2 * sigma) + np.log(sigma) + np.log(2 * np.pi)
    grad = np.empty(3, np.float32)

    grad[0] = mu_1 / sigma
    grad[1] = mu_2 / sigma
    grad[2] = sign_sigma * (1.0 / sigma - (mu_1**2 + mu_2**2) / (2 * sigma**2))

    return dist, grad


def diagonal_gaussian_energy_grad(x, y):  # pragma: no cover
    mu_1 = x[0] - y[0]
    mu_2 = x[1] - y[1]

    sigma_11 = np.abs(x[2]) + np.abs(y[2])
    sigma_12 = 0.0
    sigma_22 = np.abs(x[3]) + np.abs(y[3])

    det = sigma_11 * sigma_22
    sign_s1 = np.sign(x[2])
    sign_s2 = np.sign(x[3])

    if det == 0.0:
        # TODO: figure out the right thing to do here
        return mu_1**2 + mu_2**2, np.array([0.0, 0.0, 1.0, 1.0], dtype=np.float32)

    cross_term = 2 * sigma_12
    m_dist = (
        np.abs(sigma_22) * (mu_1**2)
        - cross_term * mu_1 * mu_2
        + np.abs(sigma_11) * (mu_2**2)
    )

    dist = (m_dist / det + np.log(np.abs(det))) / 2.0 + np.log(2 * np.pi)
    grad = np.empty(6, dtype=np.float32)

    grad[0] = (2 * sigma_22 * mu_1 - cross_term * mu_2) / (2 * det)
    grad[1] = (2 * sigma_11 * mu_2 - cross_term * mu_1) / (2 * det)
    grad[2] = sign_s1 * (sigma_22 * (det - m_dist) + det * mu_2**2) / (2 * det**2)
    grad[3] = sign_s2 * (sigma_11 * (det - m_dist) + det * mu_1**2) / (2 * det**2)

    return dist, grad


def gaussian_energy_grad(x, y):  # pragma: no cover
    mu_1 = x[0] - y[0]
    mu_2 = x[1] - y[1]

    # Ensure width are positive
    x[2] = np.abs(x[2])
    y[2] = np.abs(y[2])

    # Ensure heights are positive
    x[3] = np.abs(x[3])
    y[3] = np.abs(y[3])

    # Ensure angle is in range -pi,pi
    x[4] = np.arcsin(np.sin(x[4]))
    y[4] = np.arcsin(np.sin(y[4]))

    # Covariance entries for y
    a = y[2] * np.cos(y[4]) ** 2 + y[3] * np.sin(y[4]) ** 2
    b = (y[2] - y[3]) * np.sin(y[4]) * np.cos(y[4])
    c = y[3] * np.cos(y[4]) ** 2 + y[2] * np.sin(y[4]) ** 2

    # Sum of covariance matrices
    sigma_11 = x[2] * np.cos(x[4]) ** 2 + x[3] * np.sin(x[4]) ** 2 + a
    sigma_12 = (x[2] - x[3]) * np.sin(x[4]) * np.cos(x[4]) + b
    sigma_22 = x[2] * np.sin(x[4]) ** 2 + x[3] * np.cos(x[4]) ** 2 + c

    # Determinant of the sum of covariances
    det_sigma = np.abs(sigma_11 * sigma_22 - sigma_12**2)
    x_inv_sigma_y_numerator = (
        sigma_22 * mu_1**2 - 2 * sigma_12 * mu_1 * mu_2 + sigma_11 * mu_2**2
    )

    if det_sigma < 1e-32:
        return (
            mu_1**2 + mu_2**2,
            np.array([0.0, 0.0, 1.0, 1.0, 0.0], dtype=np.float32),
        )

    dist = x_inv_sigma_y_numerator / det_sigma + np.log(det_sigma) + np.log(2 * np.pi)

    grad = np.zeros(5, np.float32)
    grad[0] = (2 * sigma_22 * mu_1 - 2 * sigma_12 * mu_2) / det_sigma
    grad[1] = (2 * sigma_11 * mu_2 - 2 * sigma_12 * mu_1) / det_sigma

    grad[2] = mu_2 * (mu_2 * np.cos(x[4]) ** 2 - mu_1 * np.cos(x[4]) * np.sin(x[4]))
    grad[2] += mu_1 * (mu_1 * np.sin(x[4]) ** 2 - mu_2 * np.cos(x[4]) * np.sin(x[4]))
    grad[2] *= det_sigma
    grad[2] -= x_inv_sigma_y_numerator * np.cos(x[4]) ** 2 * sigma_22
    grad[2] -= x_inv_sigma_y_numerator * np.sin(x[4]) ** 2 * sigma_11
    grad[2] += x_inv_sigma_y_numerator * 2 * sigma_12 * np.sin(x[4]) * np.cos(x[4])
    grad[2] /= det_sigma**2 + 1e-8

    grad[3] = mu_1 * (mu_1 * np.cos(x[4]) ** 2 - mu_2 * np.cos(x[4]) * np.sin(x[4]))
    grad[3] += mu_2 * (mu_2 * np.sin(x[4]) ** 2 - mu_1 * np.cos(x[4]) * np.sin(x[4]))
    grad[3] *= det_sigma
    grad[3] -= x_inv_sigma_y_numerator * np.sin(x[4]) ** 2 * sigma_22
    grad[3] -= x_inv_sigma_y_numerator * np.cos(x[4]) ** 2 * sigma_11
    grad[3] -= x_inv_sigma_y_numerator * 2 * sigma_12 * np.sin(x[4]) * np.cos(x[4])
    grad[3] /= det_sigma**2 + 1e-8

    grad[4] = (x[3] - x[2]) * (
        2 * mu_1 * mu_2 * np.cos(2 * x[4]) - (mu_1**2 - mu_2**2) * np.sin(2 * x[4])
    )
    grad[4] *= det_sigma
    grad[4] -= x_inv_sigma_y_numerator * (x[3] - x[2]) * np.sin(2 * x[4]) * sigma_22
    grad[4] -= x_inv_sigma_y_numerator * (x[2] - x[3]) * np.sin(2 * x[4]) * sigma_11
    grad[4] -= x_inv_sigma_y_numerator * 2 * sigma_12 * (x[2] - x[3]) * np.cos(2 * x[4])
    grad[4] /= det_sigma**2 + 1e-8

    return dist, grad


def spherical_gaussian_grad(x, y):  # pragma: no cover
    mu_1 = x[0] - y[0]
    mu_2 = x[1] - y[1]

    sigma = x[2] + y[2]
    sigma_sign = np.sign(sigma)

    if sigma == 0:
        return 10.0, np.array([0.0, 0.0, -1.0], dtype=np.float32)

    dist = (
        (mu_1**2 + mu_2**2) / np.abs(sigma)
        + 2 * np.log(np.abs(sigma))
        + np.log(2 * np.pi)
    )
    grad = np.empty(3, dtype=np.float32)

    grad[0] = (2 * mu_1) / np.abs(sigma)
    grad[1] = (2 * mu_2) / np.abs(sigma)
    grad[2] = sigma_sign * (-(mu_1**2 + mu_2**2) / (sigma**2) + (2 / np.abs(sigma)))

    return dist, grad



def init_transform(indices, weights, embedding):
    """Given indices and weights and an original embeddings
    initialize the positions of new points relative to the
    indices and weights (of their neighbors in the source data).

    Parameters
    ----------
    indices: array of shape (n_new_samples, n_neighbors)
        The indices of the neighbors of each new sample

    weights: array of shape (n_new_samples, n_neighbors)
        The membership strengths of associated 1-simplices
        for each of the new samples.

    embedding: array of shape (n_samples, dim)
        The original embedding of the source data.

    Returns
    -------
    new_embedding: array of shape (n_new_samples, dim)
        An initial embedding of the new sample points.
    """
    result = np.zeros((indices.shape[0], embedding.shape[1]), dtype=np.float32)

    for i in range(indices.shape[0]):
        for j in range(indices.shape[1]):
            for d in range(embedding.shape[1]):
                result[i, d] += weights[i, j] * embedding[indices[i, j], d]

    return result


def reprocess_row(probabilities, k=15, n_iters=32):
    target = np.log2(k)

    lo = 0.0
    hi = NPY_INFINITY
    mid = 1.0

    for n in range(n_iters):

        psum = 0.0
        for j in range(probabilities.shape[0]):
            psum += pow(probabilities[j], mid)

        if np.fabs(psum - target) < SMOOTH_K_TOLERANCE:
            break

        if psum < target:
            hi = mid
            mid = (lo + hi) / 2.0
        else:
            lo = mid
            if hi == NPY_INFINITY:
                mid *= 2
            else:
                mid = (lo + hi) / 2.0

    return np.power(probabilities, mid)


def fast_intersection(rows, cols, values, target, unknown_dist=1.0, far_dist=5.0):
    """Under the assumption of categorical distance for the intersecting
    simplicial set perform a fast intersection.

    Parameters
    ----------
    rows: array
        An array of the row of each non-zero in the sparse matrix
        representation.

    cols: array
        An array of the column of each non-zero in the sparse matrix
        representation.

    values: array
        An array of the value of each non-zero in the sparse matrix
        representation.

    target: array of shape (n_samples)
        The categorical labels to use in the intersection.

    unknown_dist: float (optional, default 1.0)
        The distance an unknown label (-1) is assumed to be from any point.

    far_dist float (optional, default 5.0)
        The distance between unmatched labels.

    Returns
    -------
    None
    """
    for nz in range(rows.shape[0]):
        i = rows[nz]
        j = cols[nz]
        if (target[i] == -1) or (target[j] == -1):
            values[nz] *= np.exp(-unknown_dist)
        elif target[i] != target[j]:
            values[nz] *= np.exp(-far_dist)

    return


def _densmap_original_densities(
    head, tail, graph_data, dists_indptr, dists_indices, dists_data, ro, mu_sum
):
    for i in range(len(head)):
        j = head[i]
        k = tail[i]
        d_val = 0.0
        for idx in range(dists_indptr[j], dists_indptr[j + 1]):
            if dists_indices[idx] == k:
                d_val = dists_data[idx]
                break
        D = d_val * d_val
        mu = graph_data[i]
        ro[j] += mu * D
        ro[k] += mu * D
        mu_sum[j] += mu
        mu_sum[k] += mu



def _optimize_layout_euclidean_single_epoch(
    head_embedding,
    tail_embedding,
    head,
    tail,
    n_vertices,
    epochs_per_sample,
    a,
    b,
    rng_state_per_sample,
    gamma,
    dim,
    move_other,
    alpha,
    epochs_per_negative_sample,
    epoch_of_next_negative_sample,
    epoch_of_next_sample,
    n,
    densmap_flag,
    dens_phi_sum,
    dens_re_sum,
    dens_re_cov,
    dens_re_std,
    dens_re_mean,
    dens_lambda,
    dens_R,
    dens_mu,
    dens_mu_tot,
):
    for i in numba.prange(epochs_per_sample.shape[0]):
        if epoch_of_next_sample[i] <= n:
            j = head[i]
            k = tail[i]

            current = head_embedding[j]
            other = tail_embedding[k]

            dist_squared = rdist(current, other)

            if densmap_flag:
                phi = 1.0 / (1.0 + a * pow(dist_squared, b))
                dphi_term = (
                    a * b * pow(dist_squared, b - 1) / (1.0 + a * pow(dist_squared, b))
                )

                q_jk = phi / dens_phi_sum[k]
                q_kj = phi / dens_phi_sum[j]

                drk = q_jk * (
                    (1.0 - b * (1 - phi)) / np.exp(dens_re_sum[k]) + dphi_term
                )
                drj = q_kj * (
                    (1.0 - b * (1 - phi)) / np.exp(dens_re_sum[j]) + dphi_term
                )

                re_std_sq = dens_re_std * dens_re_std
                weight_k = (
                    dens_R[k]
                    - dens_re_cov * (dens_re_sum[k] - dens_re_mean) / re_std_sq
                )
                weight_j = (
                    dens_R[j]
                    - dens_re_cov * (dens_re_sum[j] - dens_re_mean) / re_std_sq
                )

                grad_cor_coeff = (
                    dens_lambda
                    * dens_mu_tot
                    * (weight_k * drk + weight_j * drj)
                    / (dens_mu[i] * dens_re_std)
                    / n_vertices
                )

            if dist_squared > 0.0:
                grad_coeff = -2.0 * a * b * pow(dist_squared, b - 1.0)
                grad_coeff /= a * pow(dist_squared, b) + 1.0
            else:
                grad_coeff = 0.0

            for d in range(dim):
                grad_d = clip(grad_coeff * (current[d] - other[d]))

                if densmap_flag:
                    # FIXME: grad_cor_coeff might be referenced before assignment

                    grad_d += clip(2 * grad_cor_coeff * (current[d] - other[d]))

                current[d] += grad_d * alpha
                if move_other:
                    other[d] += -grad_d * alpha

            epoch_of_next_sample[i] += epochs_per_sample[i]

            n_neg_samples = int(
                (n - epoch_of_next_negative_sample[i]) / epochs_per_negative_sample[i]
            )

            for p in range(n_neg_samples):
                k = tau_rand_int(rng_state_per_sample[j]) % n_vertices

                other = tail_embedding[k]

                dist_squared = rdist(current, other)

                if dist_squared > 0.0:
                    grad_coeff = 2.0 * gamma * b
                    grad_coeff /= (0.001 + dist_squared) * (
                        a * pow(dist_squared, b) + 1
                    )
                elif j == k:
                    continue
                else:
                    grad_coeff = 0.0

                for d in range(dim):
                    if grad_coeff > 0.0:
                        grad_d = clip(grad_coeff * (current[d] - other[d]))
                    else:
                        grad_d = 0
                    current[d] += grad_d * alpha

            epoch_of_next_negative_sample[i] += (
                n_neg_samples * epochs_per_negative_sample[i]
            )



# ---------------------------------------------------------------- records

def _xy(rng, n=8):
    return rng.standard_normal(n), rng.standard_normal(n)


def _pos(rng, n=8):
    return rng.uniform(0.2, 1.5, n), rng.uniform(0.2, 1.5, n)


def _entry(name, fn, args, source=SRC, **kw):
    d = dict(name="umap." + name, source=source, fn=fn, args=args, group="UMAP")
    d.update(kw)
    return d


def _layout_args(rng):
    n_vertices = 5
    head = np.array([0, 1, 2, 3, 4, 0])
    tail = np.array([1, 2, 3, 4, 0, 2])
    return (
        rng.standard_normal((n_vertices, 2)),       # head_embedding
        rng.standard_normal((n_vertices, 2)),       # tail_embedding
        head, tail, n_vertices,
        np.ones(6),                                 # epochs_per_sample
        1.577, 0.895,                               # a, b
        (np.arange(15, dtype=np.int64).reshape(5, 3) * 7919 + 12345),  # rng_state_per_sample
        1.0, 2, True, 0.1,                          # gamma, dim, move_other, alpha
        np.full(6, 0.45),                           # epochs_per_negative_sample
        np.zeros(6), np.zeros(6),                   # epoch_of_next_negative_sample, epoch_of_next_sample
        1, False,                                   # n, densmap_flag
        np.ones(5), np.ones(5), 0.0, 1.0, 0.0, 0.0,  # dens_phi_sum, dens_re_sum, cov, std, mean, lambda
        np.ones(5), np.ones(6), 1.0,                # dens_R, dens_mu, dens_mu_tot
    )


ENTRIES = [
    _entry("euclidean", euclidean, _xy),
    _entry("standardised_euclidean", standardised_euclidean,
           lambda r: _xy(r) + (r.uniform(0.5, 2.0, 8),)),
    _entry("manhattan", manhattan, _xy),
    _entry("chebyshev", chebyshev, _xy),
    _entry("minkowski", minkowski, lambda r: _xy(r) + (3,)),
    _entry("weighted_minkowski", weighted_minkowski,
           lambda r: _xy(r) + (r.uniform(0.5, 2.0, 8), 3)),
    _entry("mahalanobis", mahalanobis,
           lambda r: _xy(r, 4) + (np.eye(4) + 0.1 * np.ones((4, 4)),)),
    _entry("canberra", canberra, _xy),
    _entry("bray_curtis", bray_curtis, _pos),
    _entry("haversine", haversine, lambda r: (r.uniform(-1, 1, 2), r.uniform(-1, 1, 2))),
    _entry("cosine", cosine, _xy),
    _entry("correlation", correlation, _xy),
    _entry("hellinger", hellinger.py_func, _pos),
    _entry("softmax", softmax.py_func, lambda r: (r.standard_normal(8),)),
    _entry("approx_log_Gamma", approx_log_Gamma.py_func, lambda r: (r.uniform(2.0, 9.0),)),
    _entry("log_beta_small", log_beta.py_func, lambda r: (r.uniform(1.5, 4.5), r.uniform(1.5, 4.5))),
    _entry("log_beta_large", log_beta.py_func, lambda r: (r.uniform(5.5, 9.0), r.uniform(5.5, 9.0))),
    _entry("log_single_beta", log_single_beta.py_func, lambda r: (r.uniform(1.0, 5.0),)),
    _entry("ll_dirichlet", ll_dirichlet, lambda r: (r.uniform(1.0, 6.0, 6), r.uniform(1.0, 6.0, 6))),
    _entry("symmetric_kl", symmetric_kl, lambda r: _pos(r) + (1e-11,)),
    _entry("sinkhorn_distance", sinkhorn_distance,
           lambda r: _pos(r, 4) + (np.exp(-np.abs(np.subtract.outer(np.arange(4.0), np.arange(4.0)))),
                                   np.abs(np.subtract.outer(np.arange(4.0), np.arange(4.0))), 16)),
    _entry("poincare", poincare, lambda r: (0.3 * r.uniform(-1, 1, 3), 0.3 * r.uniform(-1, 1, 3))),
    # functions returning (distance, gradient): the loss weighs both
    _entry("euclidean_grad", euclidean_grad, _xy),
    _entry("standardised_euclidean_grad", standardised_euclidean_grad,
           lambda r: _xy(r) + (r.uniform(0.5, 2.0, 8),)),
    _entry("manhattan_grad", manhattan_grad, _xy),
    _entry("chebyshev_grad", chebyshev_grad, _xy),
    _entry("minkowski_grad", minkowski_grad, lambda r: _xy(r) + (3.0,)),
    _entry("hyperboloid_grad", hyperboloid_grad, _xy),
    _entry("weighted_minkowski_grad", weighted_minkowski_grad,
           lambda r: _xy(r) + (r.uniform(0.5, 2.0, 8), 3.0)),
    _entry("mahalanobis_grad", mahalanobis_grad,
           lambda r: _xy(r, 4) + (np.eye(4) + 0.1 * np.ones((4, 4)),)),
    _entry("canberra_grad", canberra_grad, _xy),
    _entry("bray_curtis_grad", bray_curtis_grad, _pos),
    _entry("haversine_grad", haversine_grad, lambda r: (r.uniform(-1, 1, 2), r.uniform(-1, 1, 2))),
    _entry("cosine_grad", cosine_grad, _xy),
    _entry("hellinger_grad", hellinger_grad.py_func, _pos),
    _entry("softmax_hellinger", softmax_hellinger, _xy),
    _entry("softmax_hellinger_grad", softmax_hellinger_grad, _xy),
    _entry("symmetric_kl_grad", symmetric_kl_grad, lambda r: _pos(r) + (1e-11,)),
    _entry("correlation_grad", correlation_grad, _xy),
    _entry("spherical_gaussian_energy_grad", spherical_gaussian_energy_grad,
           lambda r: (r.uniform(0.3, 1.5, 3), r.uniform(0.3, 1.5, 3))),
    # grad[4:6] of this one is np.empty memory never written: the loss weighs the distance only
    _entry("diagonal_gaussian_energy_grad", diagonal_gaussian_energy_grad,
           lambda r: (r.uniform(0.3, 1.5, 4), r.uniform(0.3, 1.5, 4)), ret_items=(0,)),
    _entry("gaussian_energy_grad", gaussian_energy_grad,
           lambda r: (r.uniform(0.3, 1.5, 5), r.uniform(0.3, 1.5, 5))),
    _entry("spherical_gaussian_grad", spherical_gaussian_grad,
           lambda r: (r.uniform(0.3, 1.5, 3), r.uniform(0.3, 1.5, 3))),
    # layouts.py and umap_.py kernels
    _entry("clip", clip.py_func, lambda r: (3.0 * float(r.standard_normal()),), source=SRC_LAYOUTS),
    _entry("rdist", rdist.py_func, _xy, source=SRC_LAYOUTS),
    _entry("optimize_layout_euclidean_single_epoch", _optimize_layout_euclidean_single_epoch,
           _layout_args, source=SRC_LAYOUTS, outputs=(0, 1)),
    _entry("init_transform", init_transform,
           lambda r: (r.integers(0, 6, (3, 4)), r.uniform(0, 1, (3, 4)), r.standard_normal((6, 2))),
           source=SRC_UMAP),
    _entry("reprocess_row", reprocess_row, lambda r: (r.uniform(0.05, 0.95, 10), 5, 32),
           source=SRC_UMAP),
    _entry("fast_intersection", fast_intersection,
           lambda r: (np.array([0, 0, 1, 2, 3, 4]), np.array([1, 2, 3, 4, 0, 1]),
                      r.uniform(0.1, 1.0, 6), np.array([0, 1, 1, -1, 0]), 1.0, 5.0),
           source=SRC_UMAP, outputs=(2,)),
    _entry("densmap_original_densities", _densmap_original_densities,
           lambda r: (np.array([0, 1, 2, 3]), np.array([1, 2, 3, 0]), r.uniform(0.1, 1.0, 4),
                      np.array([0, 2, 4, 6, 8]), np.array([1, 3, 2, 0, 3, 1, 0, 2]),
                      r.uniform(0.5, 2.0, 8), np.zeros(4), np.zeros(4)),
           source=SRC_UMAP, outputs=(6, 7)),
]
