"""Corpus: functions from Numba's own parallel-loop tests (numba/tests/test_parfors.py).

Source: the numba 0.68.1 package, numba/tests/test_parfors.py. Most functions there are
defined inside the test methods (each named ``test_impl``); each is copied verbatim inside
a factory named after its test method (``test_parfor_slice3()`` returns the ``test_impl``
of ``TestParforsSlice.test_parfor_slice3``), as it sits in the test. The module-level
``blackscholes_impl``, ``lr_impl`` and ``example_kmeans_test`` are copied as they are. The
tests compile these functions with ``parallel=True``; the corpus compiles them with
``numba.njit`` and ``grad_jit`` as written, and a few with ``parallel=True`` too
(``options=``).
"""
import math
import operator
from functools import reduce

import numba
import numpy as np
from numba import njit, prange

SRC = "numba 0.68.1:numba/tests/test_parfors.py"


def blackscholes_impl(sptprice, strike, rate, volatility, timev):
    # blackscholes example
    logterm = np.log(sptprice / strike)
    powterm = 0.5 * volatility * volatility
    den = volatility * np.sqrt(timev)
    d1 = (((rate + powterm) * timev) + logterm) / den
    d2 = d1 - den
    NofXd1 = 0.5 + 0.5 * 2.0 * d1
    NofXd2 = 0.5 + 0.5 * 2.0 * d2
    futureValue = strike * np.exp(- rate * timev)
    c1 = futureValue * NofXd2
    call = sptprice * NofXd1 - c1
    put = call - futureValue + sptprice
    return put


def lr_impl(Y, X, w, iterations):
    # logistic regression example
    for i in range(iterations):
        w -= np.dot(((1.0 / (1.0 + np.exp(-Y * np.dot(X, w))) - 1.0) * Y), X)
    return w


def example_kmeans_test(A, numCenter, numIter, init_centroids):
    centroids = init_centroids
    N, D = A.shape

    for l in range(numIter):
        dist = np.array([[math.sqrt(np.sum((A[i,:]-centroids[j,:])**2))
                                for j in range(numCenter)] for i in range(N)])
        labels = np.array([dist[i,:].argmin() for i in range(N)])

        centroids = np.array([[np.sum(A[labels==i, j])/np.sum(labels==i)
                                 for j in range(D)] for i in range(numCenter)])

    return centroids



def test_simple18():  # TestParforBasic.test_simple18
    def test_impl(v1, v2, m1, m2):
        return m1.T + np.linalg.svd(m2)[1]
    return test_impl


def test_simple19():  # TestParforBasic.test_simple19
    def test_impl(v1, v2, m1, m2):
        return np.dot(m1, v2)
    return test_impl


def test_simple20():  # TestParforBasic.test_simple20
    def test_impl(v1, v2, m1, m2):
        return np.dot(m1, m2)
    return test_impl


def test_simple21():  # TestParforBasic.test_simple21
    def test_impl(v1, v2, m1, m2):
        return np.dot(v1, v1)
    return test_impl


def test_simple22():  # TestParforBasic.test_simple22
    def test_impl(v1, v2, m1, m2):
        return np.sum(v1 + v1)
    return test_impl


def test_simple_operator_17():  # TestParforBasic.test_simple_operator_17
    def test_impl(v1, v2, m1, m2):
        return operator.add(m2, v1)
    return test_impl


def test_mvdot():  # TestParforNumPy.test_mvdot
    def test_impl(a, v):
        return np.dot(a, v)
    return test_impl


def test_mean():  # TestParforNumPy.test_mean
    def test_impl(A):
        return A.mean()
    return test_impl


def test_var():  # TestParforNumPy.test_var
    def test_impl(A):
        return A.var()
    return test_impl


def test_std():  # TestParforNumPy.test_std
    def test_impl(A):
        return A.std()
    return test_impl


def test_min_1():  # TestParforNumPy.test_min
    def test_impl1(A):
        return A.min()
    return test_impl1


def test_min_2():  # TestParforNumPy.test_min
    def test_impl2(A):
        return np.min(A)
    return test_impl2


def test_max_1():  # TestParforNumPy.test_max
    def test_impl1(A):
        return A.max()
    return test_impl1


def test_max_2():  # TestParforNumPy.test_max
    def test_impl2(A):
        return np.max(A)
    return test_impl2


def test_reshape_with_neg_one():  # TestParforNumPy.test_reshape_with_neg_one
    def test_impl(a, b):
        result_matrix = np.zeros((b, b, 1), dtype=np.float64)
        sub_a = a[0:b]
        a = sub_a.size
        b = a / 1
        z = sub_a.reshape(-1, 1)
        result_data = sub_a / z
        result_matrix[:,:,0] = result_data
        return result_matrix
    return test_impl


def test_0d_array():  # TestParforNumPy.test_0d_array
    def test_impl(n):
        return np.sum(n) + np.prod(n) + np.min(n) + np.max(n) + np.var(n)
    return test_impl


def test_arraymap():  # TestParfors.test_arraymap
    def test_impl(a, x, y):
        return a * x + y
    return test_impl


def test_reduce_3():  # TestParfors.test_reduce
    def test_impl(A):
        return np.sum(A[A>=3])
    return test_impl


def test_reduce_4():  # TestParfors.test_reduce
    def test_impl(A):
        B = A[:,0]
        return np.sum(A[B>=3,1])
    return test_impl


def test_reduce_5():  # TestParfors.test_reduce
    def test_impl(A):
        B = A[:,0]
        return np.sum(A[B>=3,1:2])
    return test_impl


def test_reduce_6():  # TestParfors.test_reduce
    def test_impl(A):
        min_val = np.amin(A)
        return A - min_val
    return test_impl


def test_parfor_array_access4():  # TestParfors.test_parfor_array_access4
    def test_impl(A, b):
        return np.dot(A, b)
    return test_impl


def test_parfor_hoist_setitem():  # TestParfors.test_parfor_hoist_setitem
    def test_impl(out):
        for i in prange(10):
            out[0] = 2 * out[0]
        return out[0]
    return test_impl


def test_prange_side_effects():  # TestParfors.test_prange_side_effects
    def test_impl(a, b):
        data = np.empty(len(a), dtype=np.float64)
        size = len(data)
        for i in numba.prange(size):
            data[i] = a[i]
        for i in numba.prange(size):
            data[i] = data[i] + b[i]
        return data
    return test_impl


def test_tuple1():  # TestParfors.test_tuple1
    def test_impl(a):
        atup = (3, 4)
        b = 7
        for i in numba.prange(len(a)):
            a[i] += atup[0] + atup[1] + b
        return a
    return test_impl


def test_inplace_binop():  # TestParfors.test_inplace_binop
    def test_impl(a, b):
        b += a
        return b
    return test_impl


def test_partial_sum_1d_parallel():  # TestParfors.test_partial_sum_1d_parallel
    def test_impl(A):
        result = np.zeros(A.shape, dtype=A.dtype)
        for idx in numba.pndindex(A.shape):
            result[idx] = A[idx]
        return result
    return test_impl


def test_prange_index_calc1():  # TestParfors.test_prange_index_calc1
    def test_impl(u, size):
        for i in numba.prange(1, size - 1):
            for j in range((i + 1) % 2 + 1, size - 1, 2):
                u[i, j] = u[i + 1, j] + 1
        for i in numba.prange(1, size - 1):
            for j in range(i % 2 + 1, size - 1, 2):
                u[i, j] = u[i + 1, j] + 1
        return u
    return test_impl


def test_prange_reverse_order1():  # TestParfors.test_prange_reverse_order1
    def test_impl(a, b, size):
        for i in numba.prange(size):
            for j in range(size):
                a[i, j] = b[i, j] + 1
        for i in numba.prange(size):
            for j in range(size):
                b[j, i] = 3
        return a[0, 0] + b[0, 0]
    return test_impl


def test_prange_non_parfor_index_then_opposite():  # TestParfors.test_prange_non_parfor_index_then_opposite
    def test_impl(a, b, size):
        for i in numba.prange(size):
            b[i] = a[5]
        for i in numba.prange(size):
            a[i] = i
        # Need this to stop previous prange from being optimized away.
        b[0] += a[0]
        return b
    return test_impl


def test_untraced_value_parfor():  # TestParfors.test_untraced_value_parfor
    def test_impl(arr):
        a = (1.2, 1.3)
        n1 = len(arr)
        arr2 = np.empty(n1, np.float64)
        for i in prange(n1):
            arr2[i] = arr[i] * a[0]
        n2 = len(arr2)
        arr3 = np.empty(n2, np.float64)
        for j in prange(n2):
            arr3[j] = arr2[j] - a[1]
        total = 0.0
        n3 = len(arr3)
        for k in prange(n3):
            total += arr3[k]
        return total + a[0]
    return test_impl


def test_multiple_reduction_vars():  # TestParforsLeaks.test_multiple_reduction_vars
    def test_impl(arr):
        a = 0.
        b = 1.
        for i in prange(arr.size):
            a += arr[i]
            b += 1. / (arr[i] + 1)
        return a * b
    return test_impl


def test_parfor_slice1():  # TestParforsSlice.test_parfor_slice1
    def test_impl(a):
        (n,) = a.shape
        b = a[0:n-2] + a[1:n-1]
        return b
    return test_impl


def test_parfor_slice2():  # TestParforsSlice.test_parfor_slice2
    def test_impl(a, m):
        (n,) = a.shape
        b = a[0:n-2] + a[1:m]
        return b
    return test_impl


def test_parfor_slice3():  # TestParforsSlice.test_parfor_slice3
    def test_impl(a):
        (m,n) = a.shape
        b = a[0:m-1,0:n-1] + a[1:m,1:n]
        return b
    return test_impl


def test_parfor_slice4():  # TestParforsSlice.test_parfor_slice4
    def test_impl(a):
        (m,n) = a.shape
        b = a[:,0:n-1] + a[:,1:n]
        return b
    return test_impl


def test_parfor_slice5():  # TestParforsSlice.test_parfor_slice5
    def test_impl(a):
        (m,n) = a.shape
        b = a[0:m-1,:] + a[1:m,:]
        return b
    return test_impl


def test_parfor_slice6():  # TestParforsSlice.test_parfor_slice6
    def test_impl(a):
        b = a.transpose()
        c = a[1,:] + b[:,1]
        return c
    return test_impl


def test_parfor_slice7():  # TestParforsSlice.test_parfor_slice7
    def test_impl(a):
        b = a.transpose()
        c = a[1,:] + b[1,:]
        return c
    return test_impl


def test_parfor_slice8():  # TestParforsSlice.test_parfor_slice8
    def test_impl(a):
        (m,n) = a.shape
        b = a.transpose()
        b[1:m,1:n] = a[1:m,1:n]
        return b
    return test_impl


def test_parfor_slice9():  # TestParforsSlice.test_parfor_slice9
    def test_impl(a):
        (m,n) = a.shape
        b = a.transpose()
        b[1:n,1:m] = a[:,1:m]
        return b
    return test_impl


def test_parfor_slice10():  # TestParforsSlice.test_parfor_slice10
    def test_impl(a):
        (m,n) = a.shape
        b = a.transpose()
        b[2,1:m] = a[2,1:m]
        return b
    return test_impl


def test_parfor_slice11():  # TestParforsSlice.test_parfor_slice11
    def test_impl(a):
        (m,n,l) = a.shape
        b = a.copy()
        b[:,1,1:l] = a[:,2,1:l]
        return b
    return test_impl


def test_parfor_slice12():  # TestParforsSlice.test_parfor_slice12
    def test_impl(a):
        (m,n) = a.shape
        b = a.copy()
        b[1,1:-1] = a[0,:-2]
        return b
    return test_impl


def test_parfor_slice13():  # TestParforsSlice.test_parfor_slice13
    def test_impl(a):
        (m,n) = a.shape
        b = a.copy()
        c = -1
        b[1,1:c] = a[0,-n:c-1]
        return b
    return test_impl


def test_parfor_slice14():  # TestParforsSlice.test_parfor_slice14
    def test_impl(a):
        (m,n) = a.shape
        b = a.copy()
        b[1,:-1] = a[0,-3:4]
        return b
    return test_impl


def test_parfor_slice15():  # TestParforsSlice.test_parfor_slice15
    def test_impl(a):
        (m,n) = a.shape
        b = a.copy()
        b[1,-(n-1):] = a[0,-3:4]
        return b
    return test_impl


def test_parfor_slice16():  # TestParforsSlice.test_parfor_slice16
    def test_impl(a, b, n):
        assert(a.shape == b.shape)
        a[1:n] = 10
        b[0:(n-1)] = 10
        return a * b
    return test_impl


def test_parfor_slice17():  # TestParforsSlice.test_parfor_slice17
    def test_impl(m, A):
        B = np.zeros(m)
        n = len(A)
        B[-n:] = A
        return B
    return test_impl


def test_parfor_slice26():  # TestParforsSlice.test_parfor_slice26
    def test_impl(a):
        (n,) = a.shape
        b = a.copy()
        b[-(n-1):] = a[-3:4]
        return b
    return test_impl


def test_parfor_bitmask1():  # TestParforsBitMask.test_parfor_bitmask1
    def test_impl(a, n):
        b = a > n
        a[b] = 0
        return a
    return test_impl


def test_parfor_bitmask2():  # TestParforsBitMask.test_parfor_bitmask2
    def test_impl(a, b):
        a[b] = 0
        return a
    return test_impl


def test_parfor_bitmask3():  # TestParforsBitMask.test_parfor_bitmask3
    def test_impl(a, b):
        a[b] = a[b]
        return a
    return test_impl


def test_parfor_bitmask4():  # TestParforsBitMask.test_parfor_bitmask4
    def test_impl(a, b):
        a[b] = (2 * a)[b]
        return a
    return test_impl


def test_parfor_bitmask5():  # TestParforsBitMask.test_parfor_bitmask5
    def test_impl(a, b):
        a[b] = a[b] * a[b]
        return a
    return test_impl


def test_parfor_bitmask6():  # TestParforsBitMask.test_parfor_bitmask6
    def test_impl(a, b, c):
        a[b] = c
        return a
    return test_impl


def test_issue5167():  # TestParforsMisc.test_issue5167
    def ndvi_njit(img_nir, img_red):
        fillvalue = 0
        out_img = np.full(img_nir.shape, fillvalue, dtype=img_nir.dtype)
        dims = img_nir.shape
        for y in prange(dims[0]):
            for x in prange(dims[1]):
                out_img[y, x] = ((img_nir[y, x] - img_red[y, x]) /
                                 (img_nir[y, x] + img_red[y, x]))
        return out_img
    return ndvi_njit


def test_issue5065():  # TestParforsMisc.test_issue5065
    def reproducer(a, dist, dist_args):
        result = np.zeros((a.shape[0], a.shape[0]), dtype=np.float32)
        for i in prange(a.shape[0]):
            for j in range(i + 1, a.shape[0]):
                d = dist(a[i], a[j], *dist_args)
                result[i, j] = d
                result[j, i] = d
        return result
    return reproducer


def test_issue5065_euclidean():  # TestParforsMisc.test_issue5065
    @njit
    def euclidean(x, y):
        result = 0.0
        for i in range(x.shape[0]):
            result += (x[i] - y[i]) ** 2
        return np.sqrt(result)
    return euclidean


def test_issue6095_numpy_max():  # TestParforsMisc.test_issue6095_numpy_max
    @njit(parallel=True)
    def find_maxima_3D_jit(args):
        package = args
        for index in range(0, 10):
            z_stack = package[index, :, :]
        return np.max(z_stack)
    return find_maxima_3D_jit


def test_issue5942_1():  # TestParforsMisc.test_issue5942_1
    def test_impl(gg, gg_next):
        gs = gg.shape
        d = gs[0]
        for i_gg in prange(d):
            gg_next[i_gg, :]  = gg[i_gg, :]
            gg_next[i_gg, 0] += 1

        return gg_next
    return test_impl


def test_issue6102():  # TestParforsMisc.test_issue6102
    @njit(parallel=True)
    def f(r):
        for ir in prange(r.shape[0]):
            dist = np.inf
            tr = np.array([0, 0, 0], dtype=np.float32)
            for i in [1, 0, -1]:
                dist_t = np.linalg.norm(r[ir, :] + i)
                if dist_t < dist:
                    dist = dist_t
                    tr = np.array([i, i, i], dtype=np.float32)
            r[ir, :] += tr
        return r
    return f


def test_prange14():  # TestPrangeBasic.test_prange14
    def test_impl(A):
        s = 3
        for i in range(len(A)):
            s += A[i]*2
        return s
    return test_impl


def test_prange26():  # TestPrangeBasic.test_prange26
    def test_impl(A):
        B = A[::3]
        for i in range(len(B)):
            B[i] = i
        return A
    return test_impl


def test_prange28():  # TestPrangeBasic.test_prange28
    def test_impl(x, y):
        out = np.zeros(len(y))
        for idx in range(0, len(y)):
            i0 = y[idx, 0]
            i1 = y[idx, 1]
            Pt1 = x[i0]
            Pt2 = x[i1]
            v = Pt1 - Pt2
            vl2 = v[0] + v[1]
            out[idx] = vl2
        return out
    return test_impl


def test_prange30():  # TestPrangeBasic.test_prange30
    def test_impl(x, par, numthreads):
        n_par = par.shape[0]
        n_x = len(x)
        result = np.zeros((n_par, n_x), dtype=np.float64)
        chunklen = (len(x) + numthreads - 1) // numthreads

        for i in range(numthreads):
            start = i * chunklen
            stop = (i + 1) * chunklen
            result[:, start:stop] = x[start:stop] * par[:]

        return result
    return test_impl


def test_copy_global_for_parfor():  # TestPrangeSpecific.test_copy_global_for_parfor
    def test_impl(zz, tc):
        lh = np.zeros(len(tc))
        lc = np.zeros(len(tc))
        for i in range(1):
            nt = tc[i]
            for t in range(nt):
                lh += np.exp(zz[i, t])
            for t in range(nt):
                lc += np.exp(zz[i, t])
        return lh, lc
    return test_impl


def test_kde_example():  # TestPrangeSpecific.test_kde_example
    def test_impl(X):
        # KDE example
        b = 0.5
        points = np.array([-1.0, 2.0, 5.0])
        N = points.shape[0]
        n = X.shape[0]
        exps = 0
        for i in range(n):
            p = X[i]
            d = (-(p - points)**2) / (2 * b**2)
            m = np.min(d)
            exps += m - np.log(b * N) + np.log(np.sum(np.exp(d - m)))
        return exps
    return test_impl


def test_issue7578():  # TestPrangeSpecific.test_issue7578
    def test_impl(x):
        A = np.zeros_like(x)
        tmp = np.cos(x) # this can be any 1-arity ufunc

        for i in range(len(x)):
            A[i] = tmp.sum()

        return A
    return test_impl


def test_unsigned_refusal_to_vectorize_1():  # TestParforsVectorizer.test_unsigned_refusal_to_vectorize
    def will_not_vectorize(A):
        n = len(A)
        for i in range(-n, 0):
            A[i] = np.sqrt(A[i])
        return A
    return will_not_vectorize


def test_unsigned_refusal_to_vectorize_2():  # TestParforsVectorizer.test_unsigned_refusal_to_vectorize
    def will_vectorize(A):
        n = len(A)
        for i in range(n):
            A[i] = np.sqrt(A[i])
        return A
    return will_vectorize



# ---------------------------------------------------------------- records

_euclidean_5065 = test_issue5065_euclidean()


def _simple_args(r):
    # TestParforBasic.simple_args: [np.arange(3.), np.arange(4.), m, m.T] with m of shape (3, 4)
    m = r.standard_normal((3, 4))
    return r.standard_normal(3), r.standard_normal(4), m, r.standard_normal((4, 3))


def _entry(name, fn, args, **kw):
    d = dict(name="numba_tests.parfors." + name, source=SRC, fn=fn, args=args,
             group="numba tests: parfors")
    d.update(kw)
    return d


def _v(n=8, lo=None, hi=None):
    if lo is None:
        return lambda r: (r.standard_normal(n),)
    return lambda r: (r.uniform(lo, hi, n),)


def _m(shape):
    return lambda r: (r.standard_normal(shape),)


ENTRIES = [
    _entry("blackscholes_impl", blackscholes_impl,
           lambda r: (r.uniform(80, 120, 6), r.uniform(80, 120, 6), 0.02, 0.3, r.uniform(0.5, 2.0, 6))),
    _entry("lr_impl", lr_impl,
           lambda r: (np.sign(r.standard_normal(10)), r.standard_normal((10, 3)), 0.1 * r.standard_normal(3), 3)),
    _entry("example_kmeans_test", example_kmeans_test,
           lambda r: (np.concatenate([r.standard_normal((5, 2)), 4.0 + r.standard_normal((5, 2))]), 2, 3,
                      np.array([[0.0, 0.0], [4.0, 4.0]]) + 0.1 * r.standard_normal((2, 2)))),
    _entry("simple18_svd", test_simple18(), _simple_args),
    _entry("simple19_dot_mv", test_simple19(), _simple_args),
    _entry("simple20_dot_mm", test_simple20(), _simple_args),
    _entry("simple21_dot_vv", test_simple21(), _simple_args),
    _entry("simple22_sum", test_simple22(), _simple_args),
    _entry("simple_operator_17", test_simple_operator_17(), _simple_args),
    _entry("mvdot", test_mvdot(), lambda r: (r.standard_normal((4, 3)), r.standard_normal(3))),
    _entry("mean", test_mean(), _v()),
    _entry("var", test_var(), _m((3, 4))),
    _entry("std", test_std(), _m((3, 4))),
    _entry("min_method", test_min_1(), _v()),
    _entry("min_np", test_min_2(), _m((3, 4))),
    _entry("max_method", test_max_1(), _v()),
    _entry("max_np", test_max_2(), _m((3, 4))),
    _entry("reshape_with_neg_one", test_reshape_with_neg_one(), lambda r: (r.uniform(0.5, 2.0, 10), 3)),
    _entry("0d_array", test_0d_array(), lambda r: (np.array(r.uniform(0.5, 1.5)),)),
    _entry("arraymap", test_arraymap(), lambda r: (1.3, r.standard_normal(8), r.standard_normal(8))),
    _entry("reduce_mask", test_reduce_3(), _v(10, 0.0, 6.0)),
    _entry("reduce_mask_column", test_reduce_4(), lambda r: (r.uniform(0.0, 6.0, (8, 2)),)),
    _entry("reduce_mask_column_slice", test_reduce_5(), lambda r: (r.uniform(0.0, 6.0, (8, 2)),)),
    _entry("reduce_amin", test_reduce_6(), _v()),
    _entry("parfor_array_access4", test_parfor_array_access4(),
           lambda r: (r.standard_normal((4, 3)), r.standard_normal(3))),
    _entry("parfor_hoist_setitem", test_parfor_hoist_setitem(), _v(3), outputs=(0,)),
    _entry("prange_side_effects", test_prange_side_effects(),
           lambda r: (r.standard_normal(8), r.standard_normal(8))),
    _entry("tuple1", test_tuple1(), _v()),
    _entry("inplace_binop", test_inplace_binop(), lambda r: (r.standard_normal(8), r.standard_normal(8))),
    _entry("partial_sum_1d_parallel", test_partial_sum_1d_parallel(), _m((3, 4))),
    _entry("prange_index_calc1", test_prange_index_calc1(), lambda r: (r.standard_normal((6, 6)), 6)),
    _entry("prange_reverse_order1", test_prange_reverse_order1(),
           lambda r: (r.standard_normal((4, 4)), r.standard_normal((4, 4)), 4), outputs=(0, 1)),
    _entry("prange_non_parfor_index_then_opposite", test_prange_non_parfor_index_then_opposite(),
           lambda r: (r.standard_normal(8), r.standard_normal(8), 8), outputs=(0,)),
    _entry("untraced_value_parfor", test_untraced_value_parfor(), _v()),
    _entry("multiple_reduction_vars", test_multiple_reduction_vars(), _v(8, 0.5, 2.0)),
    _entry("multiple_reduction_vars_parallel", test_multiple_reduction_vars(), _v(8, 0.5, 2.0),
           options={"parallel": True}),
    _entry("parfor_slice1", test_parfor_slice1(), _v()),
    _entry("parfor_slice2", test_parfor_slice2(), lambda r: (r.standard_normal(8), 7)),
    _entry("parfor_slice3", test_parfor_slice3(), _m((4, 5))),
    _entry("parfor_slice4", test_parfor_slice4(), _m((4, 5))),
    _entry("parfor_slice5", test_parfor_slice5(), _m((4, 5))),
    _entry("parfor_slice6", test_parfor_slice6(), _m((4, 5))),
    _entry("parfor_slice7", test_parfor_slice7(), _m((4, 4))),
    _entry("parfor_slice8", test_parfor_slice8(), _m((3, 3))),
    _entry("parfor_slice9", test_parfor_slice9(), _m((3, 4))),
    _entry("parfor_slice10", test_parfor_slice10(), _m((3, 3))),
    _entry("parfor_slice11", test_parfor_slice11(), _m((3, 4, 5))),
    _entry("parfor_slice12", test_parfor_slice12(), _m((3, 4))),
    _entry("parfor_slice13", test_parfor_slice13(), _m((3, 4))),
    _entry("parfor_slice14", test_parfor_slice14(), _m((3, 4))),
    _entry("parfor_slice15", test_parfor_slice15(), _m((3, 4))),
    _entry("parfor_slice16", test_parfor_slice16(),
           lambda r: (r.standard_normal(8), r.standard_normal(8), 5), outputs=(0, 1)),
    _entry("parfor_slice17", test_parfor_slice17(), lambda r: (10, r.standard_normal(4))),
    _entry("parfor_slice26", test_parfor_slice26(), _v(4)),
    _entry("parfor_bitmask1", test_parfor_bitmask1(), lambda r: (r.standard_normal(8), 0.3)),
    _entry("parfor_bitmask2", test_parfor_bitmask2(), lambda r: (r.standard_normal(8), r.uniform(0, 1, 8) > 0.5)),
    _entry("parfor_bitmask3", test_parfor_bitmask3(), lambda r: (r.standard_normal(8), r.uniform(0, 1, 8) > 0.5)),
    _entry("parfor_bitmask4", test_parfor_bitmask4(), lambda r: (r.standard_normal(8), r.uniform(0, 1, 8) > 0.5)),
    _entry("parfor_bitmask5", test_parfor_bitmask5(), lambda r: (r.standard_normal(8), r.uniform(0, 1, 8) > 0.5)),
    _entry("parfor_bitmask6", test_parfor_bitmask6(),
           lambda r: (r.standard_normal(8), r.uniform(0, 1, 8) > 0.5, 2.5)),
    _entry("issue5167_ndvi", test_issue5167(),
           lambda r: (r.uniform(0.5, 2.0, (3, 4)), r.uniform(0.5, 2.0, (3, 4)))),
    _entry("issue5167_ndvi_parallel", test_issue5167(),
           lambda r: (r.uniform(0.5, 2.0, (3, 4)), r.uniform(0.5, 2.0, (3, 4))), options={"parallel": True}),
    _entry("issue5065_reproducer", test_issue5065(),
           lambda r: (r.standard_normal((5, 2)), _euclidean_5065, ())),
    _entry("issue5065_euclidean", _euclidean_5065.py_func,
           lambda r: (r.standard_normal(4), r.standard_normal(4))),
    _entry("issue6095_numpy_max", test_issue6095_numpy_max().py_func, _m((10, 3, 4))),
    _entry("issue5942_1", test_issue5942_1(), lambda r: (r.standard_normal((3, 4)), r.standard_normal((3, 4)))),
    _entry("issue6102", test_issue6102().py_func, _m((4, 3))),
    _entry("prange14", test_prange14(), _v()),
    _entry("prange14_parallel", test_prange14(), _v(), options={"parallel": True}),
    _entry("prange26", test_prange26(), _v(9)),
    _entry("prange28", test_prange28(),
           lambda r: (r.standard_normal((6, 2)), np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]]))),
    _entry("prange30", test_prange30(), lambda r: (r.standard_normal(6), r.standard_normal(3), 2)),
    _entry("copy_global_for_parfor", test_copy_global_for_parfor(),
           lambda r: (r.standard_normal((2, 5)), np.array([3, 2]))),
    _entry("kde_example", test_kde_example(), _v()),
    _entry("kde_example_parallel", test_kde_example(), _v(), options={"parallel": True}),
    _entry("issue7578", test_issue7578(), _v(6)),
    _entry("will_not_vectorize", test_unsigned_refusal_to_vectorize_1(), _v(8, 0.5, 2.0)),
    _entry("will_vectorize", test_unsigned_refusal_to_vectorize_2(), _v(8, 0.5, 2.0)),
]
