"""Corpus: the Numba project's example programs (github numba/numba-examples), verbatim.

Source: github numba/numba-examples at commit c423f54: the benchmark examples under
examples/ (kernel density estimation, histogram, Black-Scholes, Lennard-Jones, zero
suppression) and the older programs under legacy/ (KDE, Jacobi relaxation, linear and
logistic regression, 2-d sum, vectorized discriminant, image filters, filterbank
correlation, Harris corners, Gaussian blur, solar radiation, 2-d wave stencil). Functions
under test are plain functions; the helpers they call keep their authors' decorators
(``@numba.jit(nopython=True)``, ``@jit``, ``@njit``, ``@stencil()``).
"""
import math

import numba
import numpy
import numpy as np
from numba import jit, njit, prange, stencil

SRC = "numba/numba-examples@c423f54:"

run_parallel = numba.config.NUMBA_NUM_THREADS > 1


# ---------------------------------------------------------------- examples/density_estimation

def numpy_kde(eval_points, samples, bandwidths):
    # This uses a lot of RAM and doesn't scale to larger datasets
    rescaled_x = (eval_points[:, np.newaxis] - samples[np.newaxis, :]) / bandwidths[np.newaxis, :]
    gaussian = np.exp(-0.5 * rescaled_x**2) / np.sqrt(2 * np.pi) / bandwidths[np.newaxis, :]
    return gaussian.sum(axis=1) / len(samples)


@numba.jit(nopython=True)
def gaussian(x):
    return np.exp(-0.5 * x**2) / np.sqrt(2 * np.pi)


def numba_kde(eval_points, samples, bandwidths):
    result = np.zeros_like(eval_points)

    for i, eval_x in enumerate(eval_points):
        for sample, bandwidth in zip(samples, bandwidths):
            result[i] += gaussian((eval_x - sample) / bandwidth) / bandwidth
        result[i] /= len(samples)

    return result


def numba_kde_multithread(eval_points, samples, bandwidths):
    result = np.zeros_like(eval_points)

    # SPEEDTIP: Parallelize over evaluation points with prange()
    for i in numba.prange(len(eval_points)):
        eval_x = eval_points[i]
        for sample, bandwidth in zip(samples, bandwidths):
            result[i] += gaussian((eval_x - sample) / bandwidth) / bandwidth
        result[i] /= len(samples)

    return result



@numba.jit(nopython=True)
def get_bin_edges(a, bins):
    bin_edges = np.zeros((bins+1,), dtype=np.float64)
    a_min = a.min()
    a_max = a.max()
    delta = (a_max - a_min) / bins
    for i in range(bin_edges.shape[0]):
        bin_edges[i] = a_min + i * delta

    bin_edges[-1] = a_max  # Avoid roundoff error on last point
    return bin_edges


@numba.jit(nopython=True)
def compute_bin(x, bin_edges):
    # assuming uniform bins for now
    n = bin_edges.shape[0] - 1
    a_min = bin_edges[0]
    a_max = bin_edges[-1]

    # special case to mirror NumPy behavior for last bin
    if x == a_max:
        return n - 1 # a_max always in last bin

    bin = int(n * (x - a_min) / (a_max - a_min))

    if bin < 0 or bin >= n:
        return None
    else:
        return bin


def numba_histogram(a, bins):
    hist = np.zeros((bins,), dtype=np.intp)
    bin_edges = get_bin_edges(a, bins)

    for x in a.flat:
        bin = compute_bin(x, bin_edges)
        if bin is not None:
            hist[int(bin)] += 1

    return hist, bin_edges



# ---------------------------------------------------------------- examples/finance, physics, waveforms

@jit
def cnd_numba(d):
    A1 = 0.31938153
    A2 = -0.356563782
    A3 = 1.781477937
    A4 = -1.821255978
    A5 = 1.330274429
    RSQRT2PI = 0.39894228040143267793994605993438
    K = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    ret_val = (RSQRT2PI * math.exp(-0.5 * d * d) *
               (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val


def black_scholes_numba(stockPrice, optionStrike,
                        optionYears, Riskfree, Volatility):
    callResult = np.empty_like(stockPrice)
    putResult = np.empty_like(stockPrice)

    S = stockPrice
    X = optionStrike
    T = optionYears
    R = Riskfree
    V = Volatility
    for i in range(len(S)):
        sqrtT = math.sqrt(T[i])
        d1 = (math.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (V * sqrtT)
        d2 = d1 - V * sqrtT
        cndd1 = cnd_numba(d1)
        cndd2 = cnd_numba(d2)

        expRT = math.exp((-1. * R) * T[i])
        callResult[i] = (S[i] * cndd1 - X[i] * expRT * cndd2)
        putResult[i] = (X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1))

    return callResult, putResult



@numba.njit
def lj_numba_scalar(r):
    sr6 = (1./r)**6
    pot = 4.*(sr6*sr6 - sr6)
    return pot


@numba.njit
def distance_numba_scalar(atom1, atom2):
    dx = atom2[0] - atom1[0]
    dy = atom2[1] - atom1[1]
    dz = atom2[2] - atom1[2]

    r = (dx * dx + dy * dy + dz * dz) ** 0.5

    return r


def potential_numba_scalar(cluster):
    energy = 0.0
    for i in range(len(cluster)-1):
        for j in range(i + 1, len(cluster)):
            r = distance_numba_scalar(cluster[i], cluster[j])
            e = lj_numba_scalar(r)
            energy += e

    return energy



@numba.njit
def lj_numba_array(r):
    sr6 = (1./r)**6
    pot = 4.*(sr6*sr6 - sr6)
    return pot


@numba.njit
def distances_numba_array(cluster):
    # Original: diff = cluster[:, np.newaxis, :] - cluster[np.newaxis, :, :]
    # Since np.newaxis is not supported, we use reshape to do this
    diff = (cluster.reshape(cluster.shape[0], 1, cluster.shape[1]) -
            cluster.reshape(1, cluster.shape[0], cluster.shape[1]))
    mat = (diff * diff)
    # Original: mat = mat.sum(-1)
    # Since axis argument is not supported, we write the loop out
    out = np.empty(mat.shape[:2], dtype=mat.dtype)
    for i in np.ndindex(out.shape):
        out[i] = mat[i].sum()

    return np.sqrt(out)


def potential_numba_array(cluster):
    d = distances_numba_array(cluster)
    # Original: dtri = np.triu(d)
    # np.triu is not supported; so write my own loop to clear the
    # lower triangle
    for i in range(d.shape[0]):
        for j in range(d.shape[1]):
            if i > j:
                d[i, j] = 0
    # Original: lj_numba_array(d[d > 1e-6]).sum()
    # d[d > 1e-6] is not supported due to the indexing with boolean
    # array.  Replace with custom loop.
    energy = 0.0
    for v in d.flat:
        if v > 1e-6:
            energy += lj_numba_array(v)
    return energy



@numba.njit
def lj_numba_scalar_prange(r):
    sr6 = (1./r)**6
    pot = 4.*(sr6*sr6 - sr6)
    return pot


@numba.njit
def distance_numba_scalar_prange(atom1, atom2):
    dx = atom2[0] - atom1[0]
    dy = atom2[1] - atom1[1]
    dz = atom2[2] - atom1[2]

    r = (dx * dx + dy * dy + dz * dz) ** 0.5

    return r


def potential_numba_scalar_prange(cluster):
    energy = 0.0
    # numba.prange requires parallel=True flag to compile.
    # It causes the loop to run in parallel in multiple threads.
    for i in numba.prange(len(cluster)-1):
        for j in range(i + 1, len(cluster)):
            r = distance_numba_scalar_prange(cluster[i], cluster[j])
            e = lj_numba_scalar_prange(r)
            energy += e

    return energy



def numpy_zero_suppression(values, threshold):
    cond = np.less(np.absolute(values), threshold)
    return np.where(cond, 0, values)


def numba_zero_suppression(values, threshold):
    if np.abs(values) >= threshold:
        return values
    else:
        return 0.0



# ---------------------------------------------------------------- legacy/

def kde(X):
    b = 0.5
    points = np.array([-1.0, 2.0, 5.0])
    N = points.shape[0]
    n = X.shape[0]
    exps = 0
    # prange in a not-parallel jitted function is identical to "range"
    for i in prange(n):
        p = X[i]
        d = (-(p-points)**2)/(2*b**2)
        m = np.min(d)
        exps += m-np.log(b*N)+np.log(np.sum(np.exp(d-m)))
    return exps



def jacobi_relax_core(A, Anew):
    error = 0.0
    n = A.shape[0]
    m = A.shape[1]
    for j in range(1, n - 1):
        for i in range(1, m - 1):
            Anew[j, i] = 0.25 * ( A[j, i + 1] + A[j, i - 1] \
                                + A[j - 1, i] + A[j + 1, i])
            error = max(error, abs(Anew[j, i] - A[j, i]))
    return error



def linear_regression(Y, X, w, iterations, alphaN):
    for i in range(iterations):
        w -= alphaN * np.dot(X.T, np.dot(X,w)-Y)
    return w



def logistic_regression(Y, X, w, iterations):
    for i in range(iterations):
        w -= np.dot(((1.0 / (1.0 + np.exp(-Y * np.dot(X, w))) - 1.0) * Y), X)
    return w



def sum2d(arr):
    M, N = arr.shape
    result = 0.0
    for i in range(M):
        for j in range(N):
            result += arr[i,j]
    return result



def discriminant(a, b, c):
    '''a ufunc kernel to compute the discriminant of quadratic equation
    '''
    return math.sqrt(b ** 2 - 4 * a * c)



@jit(nopython=True)
def filter2d_core(image, filt, result):
    M, N = image.shape
    Mf, Nf = filt.shape
    Mf2 = Mf // 2
    Nf2 = Nf // 2
    for i in range(Mf2, M - Mf2):
        for j in range(Nf2, N - Nf2):
            num = 0
            for ii in range(Mf):
                for jj in range(Nf):
                    num += (filt[Mf-1-ii, Nf-1-jj] * image[i-Mf2+ii,j-Nf2+jj])
            result[i, j] = num


def filter2d(image, filt):
    result = numpy.zeros_like(image)
    filter2d_core(image, filt, result)
    return result



def fbcorr(imgs, filters, output):
    n_imgs, n_rows, n_cols, n_channels = imgs.shape
    n_filters, height, width, n_ch2 = filters.shape

    for ii in range(n_imgs):
        for rr in range(n_rows - height + 1):
            for cc in range(n_cols - width + 1):
                for hh in range(height):
                    for ww in range(width):
                        for jj in range(n_channels):
                            for ff in range(n_filters):
                                imgval = imgs[ii, rr + hh, cc + ww, jj]
                                filterval = filters[ff, hh, ww, jj]
                                output[ii, ff, rr, cc] += imgval * filterval



@njit
def xsten(a):
    ret = np.zeros_like(a)
    ashape = a.shape
    for i in range(1,ashape[0]-1):
        for j in range(1,ashape[1]-1):
            ret[i,j] = ((a[i-1,j-1] * -1.0) + (a[i-1,j] * -2.0) + (a[i-1,j+1] * -1.0) + a[i+1,j-1] + (a[i+1,j] * 2.0) + a[i+1,j+1]) / 12.0
    return ret


@njit
def ysten(a):
    ret = np.zeros_like(a)
    ashape = a.shape
    for i in range(1,ashape[0]-1):
        for j in range(1,ashape[1]-1):
            ret[i,j] = ((a[i-1,j-1] * -1.0) + (a[i,j-1] * -2.0) + (a[i+1,j-1] * -1.0) + a[i-1,j+1] + (a[i,j+1] * 2.0) + a[i+1,j+1]) / 12.0
    return ret


@njit
def harris_common(a):
    ret = np.zeros_like(a)
    ashape = a.shape
    for i in range(1,ashape[0]-1):
        for j in range(1,ashape[1]-1):
            ret[i,j] = (a[i-1,j-1] + a[i-1,j] + a[i-1,j+1] + a[i,j-1] + a[i,j] + a[i,j+1] + a[i+1,j-1] + a[i+1,j] + a[i+1,j+1])
    return ret


def harris(Iin):
    Ix = xsten(Iin)
    Iy = ysten(Iin)
    Ixx = Ix * Ix
    Iyy = Iy * Iy
    Ixy = Ix * Iy
    Sxx = harris_common(Ixx)
    Syy = harris_common(Iyy)
    Sxy = harris_common(Ixy)
    det = (Sxx * Syy) - (Sxy * Sxy)
    trace = Sxx + Syy
    return det - (0.04 * trace * trace)



def gaussian_blur_std(a, res):
    ashape = a.shape
    for i in range(2,ashape[0]-2):
        for j in range(2,ashape[1]-2):
            res[i,j] = (a[i-2,j-2] * 0.003  + a[i-1,j-2] * 0.0133 + a[i,j-2] * 0.0219 + a[i+1,j-2] * 0.0133 + a[i+2,j-2] * 0.0030 +
                        a[i-2,j-1] * 0.0133 + a[i-1,j-1] * 0.0596 + a[i,j-1] * 0.0983 + a[i+1,j-1] * 0.0596 + a[i+2,j-1] * 0.0133 +
                        a[i-2,j+0] * 0.0219 + a[i-1,j+0] * 0.0983 + a[i,j+0] * 0.1621 + a[i+1,j+0] * 0.0983 + a[i+2,j+0] * 0.0219 +
                        a[i-2,j+1] * 0.0133 + a[i-1,j+1] * 0.0596 + a[i,j+1] * 0.0983 + a[i+1,j+1] * 0.0596 + a[i+2,j+1] * 0.0133 +
                        a[i-2,j+2] * 0.003  + a[i-1,j+2] * 0.0133 + a[i,j+2] * 0.0219 + a[i+1,j+2] * 0.0133 + a[i+2,j+2] * 0.0030)
    return res



def ra_numba(doy, lat):
    ra = np.zeros_like(lat)
    Gsc = 0.0820

    pi = math.pi

    dr = 1 + 0.033 * math.cos( 2 * pi / 365 * doy)
    decl = 0.409 * math.sin( 2 * pi / 365 * doy - 1.39 )
    tan_decl = math.tan(decl)
    cos_decl = math.cos(decl)
    sin_decl = math.sin(decl)

    for idx, latval in np.ndenumerate(lat):
        ws = math.acos(-math.tan(latval) * tan_decl)
        ra[idx] = 24 * 60 / pi * Gsc * dr * ( ws * math.sin(latval) * sin_decl + math.cos(latval) * cos_decl * math.sin(ws)) * 11.6

    return ra


def ra_numpy(doy, lat):
    Gsc = 0.0820

    pi = math.pi

    dr = 1 + 0.033 * np.cos( 2 * pi / 365 * doy)
    decl = 0.409 * np.sin( 2 * pi / 365 * doy - 1.39 )
    ws = np.arccos(-np.tan(lat) * np.tan(decl))

    ra = 24 * 60 / pi * Gsc * dr * ( ws * np.sin(lat) * np.sin(decl) + np.cos(lat) * np.cos(decl) * np.sin(ws)) * 11.6

    return ra



@stencil()
def rws_kernel(p, c, r):
    return 2 * c[0, 0] - p[0, 0] + r * r * (c[-1, 0] + c[1, 0] + c[0, -1] + c[0, 1] - 4*c[0, 0])


def runWaveStencil(p, c, f, r, t, n, s2, s4, s):
    rws_kernel(p, c, r, out=f)

    # Dynamic source
    f[s2+s4-2:s2+s4+1, 0:2] = 1.5 * np.sin(t*n)
    f[s2-s4-2:s2-s4+1, 0:2] = 1.5 * np.sin(t*n)
    f[1:s-1, 0:2] = 1.0

    # Transparent boundary handling
    f[1:s-1, 0]   = (2.0 * c[1:s-1, 0]   + (r-1.0) * p[1:s-1, 0]   + 2.0*r*r*(c[1:s-1, 1]   + c[2:s, 0]   + c[0:s-2, 0]   - 3.0 * c[1:s-1, 0]))   / (1.0+r) # Y:1
    f[1:s-1, s-1] = (2.0 * c[1:s-1, s-1] + (r-1.0) * p[1:s-1, s-1] + 2.0*r*r*(c[1:s-1, s-2] + c[2:s, s-1] + c[0:s-2, s-1] - 3.0 * c[1:s-1, s-1])) / (1.0+r) # Y:s
    f[0, 1:s-1]   = (2.0 * c[0, 1:s-1]   + (r-1.0) * p[0, 1:s-1]   + 2.0*r*r*(c[1, 1:s-1]   + c[0, 2:s]   + c[0, 0:s-2]   - 3.0 * c[0, 1:s-1]))   / (1.0+r) # X:1
    f[s-1, 1:s-1] = (2.0 * c[s-1, 1:s-1] + (r-1.0) * p[s-1, 1:s-1] + 2.0*r*r*(c[s-2, 1:s-1] + c[s-1, 2:s] + c[s-1, 0:s-2] - 3.0 * c[s-1, 1:s-1])) / (1.0+r) # Y:s



# ---------------------------------------------------------------- records

def _e(name, fn, args, path, **kw):
    d = dict(name="numba_examples." + name, source=SRC + path, fn=fn, args=args,
             group="numba-examples")
    d.update(kw)
    return d


KDE = "examples/density_estimation/kernel/impl.py"
HIST = "examples/density_estimation/histogram/impl.py"
LJ = "examples/physics/lennard_jones/"


def _kde_args(r):
    samples = r.normal(0.0, 5.0, 12)
    return r.normal(0.0, 5.0, 6), samples, np.full_like(samples, 1.06 * 12 ** 0.2 * 5.0)


def _cluster(r, n=5):
    # atoms on a jittered lattice, about 1.1 apart (no two closer than the LJ core)
    base = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1]], dtype=np.float64)[:n]
    return (1.1 * base + 0.05 * r.standard_normal((n, 3)),)


def _bs(r):
    return r.uniform(5, 30, 6), r.uniform(1, 100, 6), r.uniform(0.25, 10, 6), 0.02, 0.30


ENTRIES = [
    _e("numpy_kde", numpy_kde, _kde_args, KDE),
    _e("numba_kde", numba_kde, _kde_args, KDE),
    _e("numba_kde_multithread", numba_kde_multithread, _kde_args, KDE, options={"parallel": True}),
    _e("get_bin_edges", get_bin_edges.py_func, lambda r: (r.normal(0, 5, 20), 6), HIST),
    _e("numba_histogram", numba_histogram, lambda r: (r.normal(0, 5, 20), 6), HIST),
    _e("cnd_numba", cnd_numba.py_func, lambda r: (float(r.standard_normal()),),
       "examples/finance/blackscholes/blackscholes_numba.py"),
    _e("black_scholes_numba", black_scholes_numba, _bs, "examples/finance/blackscholes/blackscholes_numba.py"),
    _e("potential_numba_scalar", potential_numba_scalar, _cluster, LJ + "numba_scalar_impl.py"),
    _e("potential_numba_array", potential_numba_array, _cluster, LJ + "numba_array_impl.py"),
    _e("distances_numba_array", distances_numba_array.py_func, _cluster, LJ + "numba_array_impl.py"),
    _e("potential_numba_scalar_prange", potential_numba_scalar_prange, _cluster,
       LJ + "numba_scalar_prange_impl.py", options={"parallel": True}),
    _e("numpy_zero_suppression", numpy_zero_suppression, lambda r: (r.normal(0, 5, 10), 4.0),
       "examples/waveforms/zero_suppression/impl.py"),
    # the @numba.vectorize kernel, as a scalar function
    _e("numba_zero_suppression_kernel", numba_zero_suppression,
       lambda r: (float(r.uniform(2.0, 5.0)) * (1 if r.uniform() > 0.5 else -1), 1.0),
       "examples/waveforms/zero_suppression/impl.py"),
    _e("legacy_kde", kde, lambda r: (r.uniform(0, 1, 10),),
       "legacy/kernel-density-estimation/kernel_density_estimation_numba.py"),
    _e("jacobi_relax_core", jacobi_relax_core, lambda r: (r.standard_normal((5, 6)), np.zeros((5, 6))),
       "legacy/laplace2d/laplace2d-numba.py", outputs=(1,)),
    _e("linear_regression", linear_regression,
       lambda r: (r.random((10, 2)), r.random((10, 3)), np.zeros((3, 2)), 4, 0.01 / 10),
       "legacy/linear_regression/linear_regression_numba.py"),
    _e("logistic_regression", logistic_regression,
       lambda r: (r.random(10), r.random((10, 3)), 2.0 * np.ones(3) - 1.3, 5),
       "legacy/logistic-regression/logistic_regression.py",
       options={"parallel": run_parallel, "fastmath": True}),
    _e("sum2d", sum2d, lambda r: (r.standard_normal((4, 5)),), "legacy/sum.py"),
    _e("discriminant", discriminant, lambda r: (float(r.random()), float(r.random() + 10), float(r.random())),
       "legacy/vectorize/polynomial.py"),
    _e("filter2d", filter2d, lambda r: (r.standard_normal((7, 8)), r.standard_normal((3, 3))),
       "legacy/blur_image.py"),
    _e("filter2d_core", filter2d_core.py_func,
       lambda r: (r.standard_normal((7, 8)), r.standard_normal((3, 3)), np.zeros((7, 8))),
       "legacy/blur_image.py", outputs=(2,)),
    _e("fbcorr", fbcorr, lambda r: (r.standard_normal((2, 5, 5, 2)), r.standard_normal((3, 2, 2, 2)),
                                    np.zeros((2, 3, 4, 4))), "legacy/fbcorr.py", outputs=(2,)),
    _e("harris", harris, lambda r: (r.standard_normal((6, 7)),), "legacy/harris/harris_numba.py"),
    _e("gaussian_blur_std", gaussian_blur_std, lambda r: (r.standard_normal((7, 8)), np.zeros((7, 8))),
       "legacy/gaussian-blur/gaussian-blur.py"),
    _e("ra_numba", ra_numba, lambda r: (120, np.deg2rad(r.uniform(20, 60, (3, 4)))), "legacy/ra24.py"),
    _e("ra_numpy", ra_numpy, lambda r: (120, np.deg2rad(r.uniform(20, 60, (3, 4)))), "legacy/ra24.py"),
    _e("runWaveStencil", runWaveStencil,
       lambda r: (r.standard_normal((8, 8)), r.standard_normal((8, 8)), np.zeros((8, 8)), 0.1, 0.0, 300, 4, 2, 8),
       "legacy/wave-2d/wave_2d_numba.py", outputs=(2,)),
]
