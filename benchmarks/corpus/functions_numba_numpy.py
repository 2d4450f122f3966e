"""Corpus: NumPy usecases of Numba's own test suite, copied verbatim.

Source: the numba 0.68.1 package, numba/tests/: test_array_reductions.py,
test_np_functions.py, test_linalg.py, test_array_methods.py, test_array_manipulation.py,
test_array_exprs.py, test_polynomial.py, matmul_usecase.py. These are the small functions
Numba's tests compile with ``njit`` to check each NumPy feature; each is copied as written
(``vaxy`` is the ``vectorize`` of ``axy`` that test_array_exprs.py makes).
"""
import numpy as np
from numba import vectorize
from numpy.polynomial import polynomial as poly

T = "numba 0.68.1:numba/tests/"


# ---------------------------------------------------------------- test_array_reductions.py

def array_cumprod(arr):
    return arr.cumprod()


def array_cumsum(arr):
    return arr.cumsum()


def array_sum(arr):
    return arr.sum()


def array_prod(arr):
    return arr.prod()


def array_mean(arr):
    return arr.mean()


def array_var(arr):
    return arr.var()


def array_std(arr):
    return arr.std()


def array_min(arr):
    return arr.min()


def array_max(arr):
    return arr.max()


def array_median_global(arr):
    return np.median(arr)


def array_nanmin(arr):
    return np.nanmin(arr)


def array_nanmean(arr):
    return np.nanmean(arr)


def array_nansum(arr):
    return np.nansum(arr)


def array_nanprod(arr):
    return np.nanprod(arr)


def array_nanstd(arr):
    return np.nanstd(arr)


def array_nanvar(arr):
    return np.nanvar(arr)


def array_percentile_global(arr, q):
    return np.percentile(arr, q)


def array_quantile_global(arr, q):
    return np.quantile(arr, q)


def array_ptp(a):
    return a.ptp()


def array_nancumsum(arr):
    return np.nancumsum(arr)


def array_nanmedian_global(arr):
    return np.nanmedian(arr)



# ---------------------------------------------------------------- test_np_functions.py

def sinc(x):
    return np.sinc(x)


def diff1(a):
    return np.diff(a)


def diff2(a, n):
    return np.diff(a, n)


def logspace3(start, stop, num=50):
    return np.logspace(start, stop, num=num)


def geomspace3(start, stop, num=50):
    return np.geomspace(start, stop, num=num)


def rot90(a):
    return np.rot90(a)


def correlate(a, v, mode="valid"):
    return np.correlate(a, v, mode=mode)


def convolve(a, v, mode="full"):
    return np.convolve(a, v, mode=mode)


def vander(x, N=None, increasing=False):
    return np.vander(x, N, increasing)


def partition(a, kth):
    return np.partition(a, kth)


def cov(m, y=None, rowvar=True, bias=False, ddof=None):
    return np.cov(m, y, rowvar, bias, ddof)


def corrcoef(x, y=None, rowvar=True):
    return np.corrcoef(x, y, rowvar)


def ediff1d(ary, to_end=None, to_begin=None):
    return np.ediff1d(ary, to_end, to_begin)


def roll(a, shift):
    return np.roll(a, shift)


def np_trapezoid(y):
    return np.trapezoid(y)


def np_trapezoid_x(y, x):
    return np.trapezoid(y, x)


def np_trapezoid_dx(y, dx):
    return np.trapezoid(y, dx=dx)


def np_average(a, axis=None, weights=None):
    return np.average(a, axis=axis, weights=weights)


def interp(x, xp, fp):
    return np.interp(x, xp, fp)


def np_repeat(a, repeats):
    return np.repeat(a, repeats)


def np_cross(a, b):
    return np.cross(a, b)


def unwrap(p, discont=None, axis=-1, period=6.283185307179586):
    return np.unwrap(p, discont, axis, period=period)


def nan_to_num(X, copy=True, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(X, copy=copy, nan=nan, posinf=posinf, neginf=neginf)


def diagflat1(v):
    return np.diagflat(v)


def flip(a):
    return np.flip(a)


def fliplr(a):
    return np.fliplr(a)


def np_kaiser(M, beta):
    return np.kaiser(M, beta)


def swapaxes(a, a1, a2):
    return np.swapaxes(a, a1, a2)


def moveaxis(a, source, destination):
    return np.moveaxis(a, source, destination)


def tril_m(m):
    return np.tril(m)


def triu_m_k(m, k=0):
    return np.triu(m, k)



# ---------------------------------------------------------------- test_linalg.py

def dot2(a, b):
    return np.dot(a, b)


def dot3(a, b, out):
    return np.dot(a, b, out=out)


def vdot(a, b):
    return np.vdot(a, b)


def invert_matrix(a):
    return np.linalg.inv(a)


def cholesky_matrix(a):
    return np.linalg.cholesky(a)


def eig_matrix(a):
    return np.linalg.eig(a)


def eigvals_matrix(a):
    return np.linalg.eigvals(a)


def eigh_matrix(a):
    return np.linalg.eigh(a)


def eigvalsh_matrix(a):
    return np.linalg.eigvalsh(a)


def svd_matrix(a, full_matrices=1):
    return np.linalg.svd(a, full_matrices)


def qr_matrix(a):
    return np.linalg.qr(a)


def lstsq_system(A, B, rcond=-1):
    return np.linalg.lstsq(A, B, rcond)


def solve_system(A, B):
    return np.linalg.solve(A, B)


def pinv_matrix(A, rcond=1e-15):  # 1e-15 from numpy impl
    return np.linalg.pinv(A)


def slogdet_matrix(a):
    return np.linalg.slogdet(a)


def det_matrix(a):
    return np.linalg.det(a)


def norm_matrix(a, ord=None):
    return np.linalg.norm(a, ord)


def cond_matrix(a, p=None):
    return np.linalg.cond(a, p)


def matrix_power_matrix(a, n):
    return np.linalg.matrix_power(a, n)


def trace_matrix(a, offset=0):
    return np.trace(a, offset)


def outer_matrix(a, b, out=None):
    return np.outer(a, b, out=out)


def kron_matrix(a, b):
    return np.kron(a, b)



# ---------------------------------------------------------------- matmul_usecase.py

def matmul_usecase(x, y):
    return x @ y


def imatmul_usecase(x, y):
    x @= y
    return x



# ---------------------------------------------------------------- test_array_methods.py

def np_clip(a, a_min, a_max, out=None):
    return np.clip(a, a_min, a_max, out)


def array_clip(a, a_min=None, a_max=None, out=None):
    return a.clip(a_min, a_max, out)


def array_dot(a, b):
    return a.dot(b)


def array_dot_chain(a, b):
    return a.dot(b).dot(b)


def array_take(arr, indices):
    return arr.take(indices)


def array_sum_axis_kws(a, axis):
    return a.sum(axis=axis)


def array_cumsum_kws(a, axis):
    return a.cumsum(axis=axis)


def np_where_3(c, x, y):
    return np.where(c, x, y)



# ---------------------------------------------------------------- test_array_manipulation.py

def expand_dims(a, axis):
    return np.expand_dims(a, axis)


def squeeze_array(a):
    return a.squeeze()


def numpy_broadcast_to(arr, shape):
    return np.broadcast_to(arr, shape)


def array_reshape(arr, newshape):
    return arr.reshape(newshape)


def flatten_array(a):
    return a.flatten()



# ---------------------------------------------------------------- test_array_exprs.py

def axy(a, x, y):
    return a * x + y



vaxy = vectorize(axy)


def pos_root(As, Bs, Cs):
    return (-Bs + (((Bs ** 2.) - (4. * As * Cs)) ** 0.5)) / (2. * As)


def neg_root_common_subexpr(As, Bs, Cs):
    _2As = 2. * As
    _4AsCs = 2. * _2As * Cs
    _Bs2_4AsCs = (Bs ** 2. - _4AsCs)
    return (-Bs - (_Bs2_4AsCs ** 0.5)) / _2As


def neg_root_complex_subexpr(As, Bs, Cs):
    _2As = 2. * As
    _4AsCs = 2. * _2As * Cs
    _Bs2_4AsCs = (Bs ** 2. - _4AsCs) + 0j # Force into the complex domain.
    return (-Bs - (_Bs2_4AsCs ** 0.5)) / _2As


def call_stuff(a0, a1):
    return np.cos(vaxy(a0, np.sin(a1) - 1., 1.))


def div_add(As, Bs, Cs):
    return As / Bs + Cs


def cube(As):
    return As ** 3


def explicit_output(a, b, out):
    np.cos(a, out)
    return np.add(out, b, out)


def variable_name_reuse(a, b, c, d):
    u = a + b
    u = u - a * b
    u = u * c + d
    return u


def distance_matrix(vectors):
    n_vectors = vectors.shape[0]
    result = np.empty((n_vectors, n_vectors), dtype=np.float64)

    for i in range(n_vectors):
        for j in range(i, n_vectors):
            result[i,j] = result[j,i] = np.sum(
                (vectors[i] - vectors[j]) ** 2) ** 0.5

    return result



# ---------------------------------------------------------------- test_polynomial.py

def polyadd(c1,c2):
    return poly.polyadd(c1,c2)


def polysub(c1,c2):
    return poly.polysub(c1,c2)


def polymul(c1,c2):
    return poly.polymul(c1,c2)


def polydiv(c1, c2):
    res = poly.polydiv(c1, c2)
    return res


def polyval2(x, c):
    res = poly.polyval(x, c)
    return res


def polyval3T(x, c):
    res = poly.polyval(x, c, True)
    return res


def polyint(c, m=1):
    res = poly.polyint(c, m)
    return res



# ---------------------------------------------------------------- records

def _e(name, fn, args, src, **kw):
    d = dict(name="numba_tests.np." + name, source=T + src, fn=fn, args=args,
             group="numba tests: NumPy usecases")
    d.update(kw)
    return d


def _v(n=8, lo=None, hi=None):
    if lo is None:
        return lambda r: (r.standard_normal(n),)
    return lambda r: (r.uniform(lo, hi, n),)


def _m(shape, lo=None, hi=None):
    if lo is None:
        return lambda r: (r.standard_normal(shape),)
    return lambda r: (r.uniform(lo, hi, shape),)


def _with_nan(r):
    a = r.standard_normal(8)
    a[[2, 5]] = np.nan
    return (a,)


def _spd(r, n=4):
    a = r.standard_normal((n, n))
    return (a @ a.T + n * np.eye(n),)


def _sym(r, n=4):
    a = r.standard_normal((n, n))
    return (a + a.T,)


def _triu_real_eig(r, n=4):
    # a matrix with distinct real eigenvalues (Numba's eig refuses complex ones)
    return (np.diag(np.arange(1.0, n + 1)) + 0.3 * np.triu(r.standard_normal((n, n)), 1)
            + 0.05 * r.standard_normal((n, n)),)


R = "test_array_reductions.py"
F = "test_np_functions.py"
L = "test_linalg.py"
AM = "test_array_methods.py"
MA = "test_array_manipulation.py"
AE = "test_array_exprs.py"
P = "test_polynomial.py"

ENTRIES = [
    # reductions
    _e("array_cumprod", array_cumprod, _v(6, 0.5, 1.5), R),
    _e("array_cumsum", array_cumsum, _m((3, 4)), R),
    _e("array_sum", array_sum, _m((3, 4)), R),
    _e("array_prod", array_prod, _v(6, 0.5, 1.5), R),
    _e("array_mean", array_mean, _m((3, 4)), R),
    _e("array_var", array_var, _v(), R),
    _e("array_std", array_std, _m((3, 4)), R),
    _e("array_min", array_min, _v(), R),
    _e("array_max", array_max, _m((3, 4)), R),
    _e("array_median_global", array_median_global, _v(9), R),
    _e("array_median_global_even", array_median_global, _v(8), R),
    _e("array_nanmin", array_nanmin, _with_nan, R),
    _e("array_nanmean", array_nanmean, _with_nan, R),
    _e("array_nansum", array_nansum, _with_nan, R),
    _e("array_nanprod", array_nanprod, _with_nan, R),
    _e("array_nanstd", array_nanstd, _with_nan, R),
    _e("array_nanvar", array_nanvar, _with_nan, R),
    _e("array_percentile_global", array_percentile_global, lambda r: (r.standard_normal(9), 30.0), R),
    _e("array_quantile_global", array_quantile_global,
       lambda r: (r.standard_normal(9), np.array([0.1, 0.55, 0.9])), R),
    _e("array_ptp", array_ptp, _v(), R),
    _e("array_nancumsum", array_nancumsum, _with_nan, R),
    _e("array_nanmedian_global", array_nanmedian_global, _with_nan, R),
    # np functions
    _e("sinc", sinc, _v(), F),
    _e("diff1", diff1, _m((3, 5)), F),
    _e("diff2", diff2, lambda r: (r.standard_normal(8), 2), F),
    _e("logspace3", logspace3, lambda r: (r.uniform(0, 1), r.uniform(1, 2), 6), F),
    _e("geomspace3", geomspace3, lambda r: (r.uniform(0.5, 1), r.uniform(2, 4), 6), F),
    _e("rot90", rot90, _m((3, 4)), F),
    _e("correlate", correlate, lambda r: (r.standard_normal(8), r.standard_normal(3)), F),
    _e("correlate_full", correlate, lambda r: (r.standard_normal(8), r.standard_normal(3), "full"), F),
    _e("convolve", convolve, lambda r: (r.standard_normal(8), r.standard_normal(3)), F),
    _e("convolve_same", convolve, lambda r: (r.standard_normal(8), r.standard_normal(3), "same"), F),
    _e("vander", vander, lambda r: (r.standard_normal(5), 4), F),
    _e("vander_increasing", vander, lambda r: (r.standard_normal(5), 4, True), F),
    _e("partition", partition, lambda r: (r.standard_normal(8), 3), F),
    _e("cov", cov, _m((3, 6)), F),
    _e("cov_xy", cov, lambda r: (r.standard_normal(6), r.standard_normal(6)), F),
    _e("corrcoef", corrcoef, _m((3, 6)), F),
    _e("ediff1d", ediff1d, _v(), F),
    _e("ediff1d_to_end", ediff1d, lambda r: (r.standard_normal(6), np.array([1.5, 2.5]), np.array([0.5])), F),
    _e("roll", roll, lambda r: (r.standard_normal(8), 3), F),
    _e("np_trapezoid", np_trapezoid, _v(), F),
    _e("np_trapezoid_x", np_trapezoid_x, lambda r: (r.standard_normal(8), np.sort(r.uniform(0, 3, 8))), F),
    _e("np_trapezoid_dx", np_trapezoid_dx, lambda r: (r.standard_normal(8), 0.3), F),
    _e("np_average_weights", np_average, lambda r: (r.standard_normal(8), None, r.uniform(0.5, 1.5, 8)), F),
    _e("interp", interp,
       lambda r: (r.uniform(0, 3, 5), np.linspace(0.0, 3.0, 7) + 0.01 * r.standard_normal(7),
                  r.standard_normal(7)), F),
    _e("np_repeat", np_repeat, lambda r: (r.standard_normal(4), 3), F),
    _e("np_cross", np_cross, lambda r: (r.standard_normal((4, 3)), r.standard_normal((4, 3))), F),
    _e("unwrap", unwrap, lambda r: (np.cumsum(r.uniform(0.5, 2.5, 8)),), F),
    _e("nan_to_num", nan_to_num, _with_nan, F),
    _e("diagflat1", diagflat1, _v(4), F),
    _e("flip", flip, _m((3, 4)), F),
    _e("fliplr", fliplr, _m((3, 4)), F),
    _e("np_kaiser", np_kaiser, lambda r: (6, r.uniform(1, 5)), F),
    _e("swapaxes", swapaxes, lambda r: (r.standard_normal((2, 3, 4)), 0, 2), F),
    _e("moveaxis", moveaxis, lambda r: (r.standard_normal((2, 3, 4)), 0, 2), F),
    _e("tril_m", tril_m, _m((4, 4)), F),
    _e("triu_m_k", triu_m_k, lambda r: (r.standard_normal((4, 4)), 1), F),
    # linalg
    _e("dot2", dot2, lambda r: (r.standard_normal((3, 4)), r.standard_normal((4, 2))), L),
    _e("dot3_out", dot3, lambda r: (r.standard_normal((3, 4)), r.standard_normal((4, 2)), np.zeros((3, 2))), L),
    _e("vdot", vdot, lambda r: (r.standard_normal(6), r.standard_normal(6)), L),
    _e("invert_matrix", invert_matrix, _spd, L),
    _e("cholesky_matrix", cholesky_matrix, _spd, L),
    _e("eig_matrix", eig_matrix, _triu_real_eig, L),
    _e("eigvals_matrix", eigvals_matrix, _triu_real_eig, L),
    _e("eigh_matrix", eigh_matrix, _sym, L),
    _e("eigvalsh_matrix", eigvalsh_matrix, _sym, L),
    _e("svd_matrix", svd_matrix, lambda r: (r.standard_normal((4, 3)), False), L),
    _e("svd_matrix_square", svd_matrix, _m((3, 3)), L),
    _e("qr_matrix", qr_matrix, _m((4, 3)), L),
    _e("lstsq_system", lstsq_system, lambda r: (r.standard_normal((6, 3)), r.standard_normal(6)), L),
    _e("solve_system", solve_system, lambda r: (_spd(r)[0], r.standard_normal(4)), L),
    _e("pinv_matrix", pinv_matrix, _m((4, 3)), L),
    _e("slogdet_matrix", slogdet_matrix, _spd, L),
    _e("det_matrix", det_matrix, _m((4, 4)), L),
    _e("norm_matrix", norm_matrix, _m((3, 4)), L),
    _e("norm_matrix_ord2", norm_matrix, lambda r: (r.standard_normal((3, 4)), 2), L),
    _e("norm_vector_ord1", norm_matrix, lambda r: (r.standard_normal(6), 1), L),
    _e("cond_matrix", cond_matrix, _spd, L),
    _e("matrix_power_matrix", matrix_power_matrix, lambda r: (0.5 * r.standard_normal((3, 3)), 3), L),
    _e("trace_matrix", trace_matrix, lambda r: (r.standard_normal((4, 4)), 1), L),
    _e("outer_matrix", outer_matrix, lambda r: (r.standard_normal(3), r.standard_normal(4)), L),
    _e("kron_matrix", kron_matrix, lambda r: (r.standard_normal((2, 2)), r.standard_normal((2, 3))), L),
    _e("matmul_usecase", matmul_usecase, lambda r: (r.standard_normal((3, 4)), r.standard_normal((4, 2))),
       "matmul_usecase.py"),
    _e("imatmul_usecase", imatmul_usecase, lambda r: (r.standard_normal((3, 3)), r.standard_normal((3, 3))),
       "matmul_usecase.py"),
    # array methods and manipulation
    _e("np_clip", np_clip, lambda r: (r.standard_normal(8), -0.5, 0.7), AM),
    _e("np_clip_arrays", np_clip, lambda r: (r.standard_normal(8), -0.5 + 0.1 * r.standard_normal(8),
                                             0.5 + 0.1 * r.standard_normal(8)), AM),
    _e("array_clip", array_clip, lambda r: (r.standard_normal(8), -0.5, 0.7), AM),
    _e("array_dot", array_dot, lambda r: (r.standard_normal((3, 4)), r.standard_normal(4)), AM),
    _e("array_dot_chain", array_dot_chain, lambda r: (r.standard_normal((3, 3)), r.standard_normal((3, 3))), AM),
    _e("array_take", array_take, lambda r: (r.standard_normal(8), np.array([1, 3, 3, 7, 0])), AM),
    _e("array_sum_axis_kws", array_sum_axis_kws, lambda r: (r.standard_normal((3, 4)), 1), AM),
    _e("array_cumsum_kws", array_cumsum_kws, lambda r: (r.standard_normal((3, 4)), 0), AM),
    _e("np_where_3", np_where_3, lambda r: (r.uniform(0, 1, 8) > 0.5, r.standard_normal(8), r.standard_normal(8)), AM),
    _e("expand_dims", expand_dims, lambda r: (r.standard_normal((3, 4)), 1), MA),
    _e("squeeze_array", squeeze_array, _m((3, 1, 4)), MA),
    _e("numpy_broadcast_to", numpy_broadcast_to, lambda r: (r.standard_normal(4), (3, 4)), MA),
    _e("array_reshape", array_reshape, lambda r: (r.standard_normal(12), (3, 4)), MA),
    _e("flatten_array", flatten_array, _m((3, 4)), MA),
    # array expressions
    _e("axy", axy, lambda r: (1.7, r.standard_normal(8), r.standard_normal(8)), AE),
    _e("pos_root", pos_root, lambda r: (r.uniform(0.5, 1, 6), r.uniform(3, 4, 6), r.uniform(0.5, 1, 6)), AE),
    _e("neg_root_common_subexpr", neg_root_common_subexpr,
       lambda r: (r.uniform(0.5, 1, 6), r.uniform(3, 4, 6), r.uniform(0.5, 1, 6)), AE),
    _e("neg_root_complex_subexpr", neg_root_complex_subexpr,
       lambda r: (r.uniform(0.5, 1, 6), r.uniform(0, 1, 6), r.uniform(0.5, 1, 6)), AE),
    _e("call_stuff", call_stuff, lambda r: (r.standard_normal(6), r.standard_normal(6)), AE),
    _e("div_add", div_add, lambda r: (r.standard_normal(6), r.uniform(0.5, 2, 6), r.standard_normal(6)), AE),
    _e("cube", cube, _v(), AE),
    _e("explicit_output", explicit_output,
       lambda r: (r.standard_normal(6), r.standard_normal(6), np.zeros(6)), AE),
    _e("variable_name_reuse", variable_name_reuse,
       lambda r: tuple(r.standard_normal(6) for _ in range(4)), AE),
    _e("distance_matrix", distance_matrix, _m((4, 3)), AE),
    # polynomial
    _e("polyadd", polyadd, lambda r: (r.standard_normal(4), r.standard_normal(3)), P),
    _e("polysub", polysub, lambda r: (r.standard_normal(4), r.standard_normal(3)), P),
    _e("polymul", polymul, lambda r: (r.standard_normal(4), r.standard_normal(3)), P),
    _e("polydiv", polydiv, lambda r: (r.standard_normal(5), np.array([1.0, 0.5]) + 0.1 * r.standard_normal(2)), P),
    _e("polyval2", polyval2, lambda r: (r.standard_normal(5), r.standard_normal(4)), P),
    _e("polyval2_scalar", polyval2, lambda r: (float(r.standard_normal()), r.standard_normal(4)), P),
    _e("polyval3T", polyval3T, lambda r: (r.standard_normal(5), r.standard_normal((4, 2))), P),
    _e("polyint", polyint, lambda r: (r.standard_normal(4), 2), P),
]
