"""Corpus: scalar and small-array usecases of Numba's own test suite, copied verbatim.

Source: the numba 0.68.1 package, numba/tests/: test_mathlib.py, test_builtins.py,
test_maxmin.py, test_nested_calls.py, test_flow_control.py, test_blackscholes.py,
usecases.py, complex_usecases.py, test_closure.py, doc_examples/test_examples.py,
test_array_exprs.py. Functions defined inside a test method are copied verbatim inside a
factory named after that method (with the test's own local values they close over, e.g.
``_OUTER_SCOPE_VAR = 9``); helpers keep their decorators (``@jit(nopython=True)``,
``@register_jitable``) and the module constants they read are copied as written.
"""
import cmath
import math

import numpy
import numpy as np
from numba import guvectorize, int32, int64, jit, njit
from numba.extending import register_jitable
from numba.tests.support import IRPreservingTestPipeline

T = "numba 0.68.1:numba/tests/"

# test_blackscholes.py constants
RISKFREE = 0.02
VOLATILITY = 0.30

A1 = 0.31938153
A2 = -0.356563782
A3 = 1.781477937
A4 = -1.821255978
A5 = 1.330274429
RSQRT2PI = 0.39894228040143267793994605993438


# ---------------------------------------------------------------- test_mathlib.py

def atan2(y, x):
    return math.atan2(y, x)


def hypot(x, y):
    return math.hypot(x, y)


def pow(x, y):
    return math.pow(x, y)


def gamma(x):
    return math.gamma(x)


def lgamma(x):
    return math.lgamma(x)


def erf(x):
    return math.erf(x)


def erfc(x):
    return math.erfc(x)


def expm1(x):
    return math.expm1(x)


def log1p(x):
    return math.log1p(x)


def copysign(x, y):
    return math.copysign(x, y)


def ldexp(x, e):
    return math.ldexp(x, e)


def frexp(x):
    return math.frexp(x)


def frexp_ldexp_roundtrip(x):
    m, e = math.frexp(x)
    return math.ldexp(m, e)


def np_ldexp(x, e):
    return np.ldexp(x, e)


def acosh(x):
    return math.acosh(x)


def atanh(x):
    return math.atanh(x)


def exp2(x):
    return math.exp2(x)


def log2(x):
    return math.log2(x)


def npy_sqrt(x):
    return np.sqrt(x)


def degrees(x):
    return math.degrees(x)



# ---------------------------------------------------------------- test_builtins.py

def abs_usecase(x):
    return abs(x)


def complex_usecase(x, y):
    return complex(x, y)


def divmod_usecase(x, y):
    return divmod(x, y)


def float_usecase(x):
    return float(x)


def max_usecase1(x, y):
    return max(x, y)


def max_usecase2(x, y):
    return max([x, y])


def max_usecase3(x):
    return max(x)


def min_usecase1(x, y):
    return min(x, y)


def min_usecase3(x):
    return min(x)


def pow_op_usecase(x, y):
    return x ** y


def pow_usecase(x, y):
    return pow(x, y)


def sum_usecase(x):
    return sum(x)


def sum_kwarg_usecase(x, start=0):
    ret = sum(x, start)
    return sum(x, start=start), ret



# ---------------------------------------------------------------- test_maxmin.py

def domax3(a, b, c):
    return max(a, b, c)


def domin3(a, b, c):
    return min(a, b, c)



# ---------------------------------------------------------------- test_nested_calls.py

@jit(nopython=True)
def f_inner(a, b, c):
    return a, b, c


def f(x, y, z):
    return f_inner(x, c=y, b=z)


@jit(nopython=True)
def g_inner(a, b=2, c=3):
    return a, b, c


def g(x, y, z):
    return g_inner(x, b=y), g_inner(a=z, c=x)


@jit(nopython=True)
def star_inner(a=5, *b):
    return a, b


def star(x, y, z):
    return star_inner(a=x), star_inner(x, y, z)



# ---------------------------------------------------------------- test_flow_control.py

def for_loop_usecase3(x, y):
    result = 0
    lst = [x, y]
    for i in lst:
        result += i
    return result


def for_loop_usecase9(x, y):
    z = 0
    for i in range(x):
        x = 0
        for j in range(x):
            if j == x / 2:
                z += j
                break
        else:
            z += y

    return z



# ---------------------------------------------------------------- usecases.py, complex_usecases.py

def blackscholes_cnd(d):
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



def rect_usecase(r, phi):
    return cmath.rect(r, phi)



# ---------------------------------------------------------------- test_blackscholes.py

@register_jitable
def cnd_array(d):
    K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    ret_val = (RSQRT2PI * np.exp(-0.5 * d * d) *
               (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    return np.where(d > 0, 1.0 - ret_val, ret_val)


@register_jitable
def cnd(d):
    K = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    ret_val = (RSQRT2PI * math.exp(-0.5 * d * d) *
               (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val


def blackscholes_arrayexpr(stockPrice, optionStrike, optionYears, Riskfree,
                           Volatility):
    S = stockPrice
    X = optionStrike
    T = optionYears
    R = Riskfree
    V = Volatility
    sqrtT = np.sqrt(T)
    d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    cndd1 = cnd_array(d1)
    cndd2 = cnd_array(d2)

    expRT = np.exp(- R * T)

    callResult = (S * cndd1 - X * expRT * cndd2)
    putResult = (X * expRT * (1.0 - cndd2) - S * (1.0 - cndd1))
    return callResult, putResult


def blackscholes_scalar(callResult, putResult, stockPrice, optionStrike,
                        optionYears, Riskfree, Volatility):
    S = stockPrice
    X = optionStrike
    T = optionYears
    R = Riskfree
    V = Volatility
    for i in range(len(S)):
        sqrtT = math.sqrt(T[i])
        d1 = (math.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (V * sqrtT)
        d2 = d1 - V * sqrtT
        cndd1 = cnd(d1)
        cndd2 = cnd(d2)

        expRT = math.exp((-1. * R) * T[i])
        callResult[i] = (S[i] * cndd1 - X[i] * expRT * cndd2)
        putResult[i] = (X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1))



# ---------------------------------------------------------------- test_closure.py

def inner_function():  # TestInlinedClosure.test_inner_function
    def outer(x):

        def inner(x):
            return x * x

        return inner(x) + inner(x)
    return outer


def inner_function_with_closure():  # TestInlinedClosure.test_inner_function_with_closure
    def outer(x):
        y = x + 1

        def inner(x):
            return x * x + y

        return inner(x) + inner(x)
    return outer


def inner_function_with_closure_2():  # TestInlinedClosure.test_inner_function_with_closure_2
    def outer(x):
        y = x + 1

        def inner(x):
            return x * y

        y = inner(x)
        return y + inner(x)
    return outer


def bulk_outer5():  # TestInlinedClosure.test_bulk_use_cases
    def outer5(x):
        """ Test nested closure """
        y = x + 1

        def inner1(x):
            z = y + x + 2

            def inner2(x):
                return x + z

            return inner2(x) + y

        return inner1(x)
    return outer5


def bulk_outer8():  # TestInlinedClosure.test_bulk_use_cases
    _OUTER_SCOPE_VAR = 9

    def outer8(x):
        """ Test use of outer scope var, with closure """
        z = x + 1

        def inner(x):
            return x + z + _OUTER_SCOPE_VAR
        return inner(x)
    return outer8


def bulk_outer9():  # TestInlinedClosure.test_bulk_use_cases
    def outer9(x):
        """ Test closure assignment"""
        z = x + 1

        def inner(x):
            return x + z
        f = inner
        return f(x)
    return outer9


def bulk_outer10():  # TestInlinedClosure.test_bulk_use_cases
    def outer10(x):
        """ Test two inner, one calls other """
        z = x + 1

        def inner(x):
            return x + z

        def inner2(x):
            return inner(x)

        return inner2(x)
    return outer10


def bulk_outer12():  # TestInlinedClosure.test_bulk_use_cases
    def outer12(x):
        """ closure with kwarg"""
        z = x + 1

        def inner(x, kw=7):
            return x + z + kw
        return inner(x)
    return outer12


def bulk_outer14():  # TestInlinedClosure.test_bulk_use_cases
    def outer14(x, kw=7):
        """ outer with kwarg used in closure"""
        z = x + 1

        def inner(x):
            return x + z + kw
        return inner(x)
    return outer14


def bulk_outer19():  # TestInlinedClosure.test_bulk_use_cases
    def outer19(x):
        """ closure as arg to another closure """
        z1 = x + 1
        z2 = x + 2

        def inner(x):
            return x + z1

        def inner2(f, x):
            return f(x) + z2

        return inner2(inner, x)
    return outer19


def bulk_outer21():  # TestInlinedClosure.test_bulk_use_cases
    def outer21(x):
        """ Test calling numpy import as in closure """
        z = x + 1

        def inner(x):
            return x + np.cos(z)
        return inner(x)
    return outer21


def closure_renaming_scheme():  # TestInlinedClosure.test_closure_renaming_scheme
    @njit(pipeline_class=IRPreservingTestPipeline)
    def foo(a, b):
        def bar(z):
            x = 5
            y = 10
            return x + y + z
        return bar(a), bar(b)
    return foo



# ---------------------------------------------------------------- doc_examples/test_examples.py

def moving_average():  # DocsExamplesTest.test_moving_average
    @guvectorize(['void(float64[:], intp[:], float64[:])'],
                 '(n),()->(n)')
    def move_mean(a, window_arr, out):
        window_width = window_arr[0]
        asum = 0.0
        count = 0
        for i in range(window_width):
            asum += a[i]
            count += 1
            out[i] = asum / count
        for i in range(window_width, len(a)):
            asum += a[i] - a[i - window_width]
            out[i] = asum / count
    return move_mean


def nogil_func_np():  # DocsExamplesTest.test_nogil
    def func_np(a, b):
        """
        Control function using Numpy.
        """
        return np.exp(2.1 * a + 3.2 * b)
    return func_np


def nogil_inner_func_nb():  # DocsExamplesTest.test_nogil
    @jit('void(double[:], double[:], double[:])', nopython=True,
         nogil=True)
    def inner_func_nb(result, a, b):
        """
        Function under test.
        """
        for i in range(len(result)):
            result[i] = math.exp(2.1 * a[i] + 3.2 * b[i])
    return inner_func_nb



# ---------------------------------------------------------------- records

def _e(name, fn, args, src, **kw):
    d = dict(name="numba_tests." + name, source=T + src, fn=fn, args=args,
             group="numba tests: scalar usecases")
    d.update(kw)
    return d


def _s(lo=-2.0, hi=2.0, k=1):
    return lambda r: tuple(float(v) for v in r.uniform(lo, hi, k))


ML = "test_mathlib.py"
B = "test_builtins.py"
CL = "test_closure.py"

ENTRIES = [
    _e("mathlib.atan2", atan2, _s(k=2), ML),
    _e("mathlib.hypot", hypot, _s(k=2), ML),
    _e("mathlib.pow", pow, _s(0.5, 2.0, 2), ML),
    _e("mathlib.gamma", gamma, _s(0.5, 4.0), ML),
    _e("mathlib.lgamma", lgamma, _s(0.5, 4.0), ML),
    _e("mathlib.erf", erf, _s(), ML),
    _e("mathlib.erfc", erfc, _s(), ML),
    _e("mathlib.expm1", expm1, _s(), ML),
    _e("mathlib.log1p", log1p, _s(-0.5, 2.0), ML),
    _e("mathlib.copysign", copysign, _s(k=2), ML),
    _e("mathlib.ldexp", ldexp, lambda r: (float(r.standard_normal()), 3), ML),
    _e("mathlib.frexp", frexp, _s(0.1, 20.0), ML),
    _e("mathlib.frexp_ldexp_roundtrip", frexp_ldexp_roundtrip, _s(0.1, 20.0), ML),
    _e("mathlib.np_ldexp", np_ldexp, lambda r: (r.standard_normal(5), np.array([1, 2, 3, -1, 0])), ML),
    _e("mathlib.acosh", acosh, _s(1.2, 4.0), ML),
    _e("mathlib.atanh", atanh, _s(-0.9, 0.9), ML),
    _e("mathlib.exp2", exp2, _s(), ML),
    _e("mathlib.log2", log2, _s(0.2, 4.0), ML),
    _e("mathlib.npy_sqrt", npy_sqrt, _s(0.2, 4.0), ML),
    _e("mathlib.degrees", degrees, _s(), ML),
    _e("builtins.abs_usecase", abs_usecase, _s(), B),
    _e("builtins.complex_usecase", complex_usecase, _s(k=2), B),
    _e("builtins.divmod_usecase", divmod_usecase, lambda r: (float(r.uniform(3, 9)), float(r.uniform(1, 2))), B),
    _e("builtins.float_usecase", float_usecase, _s(), B),
    _e("builtins.max_usecase1", max_usecase1, _s(k=2), B),
    _e("builtins.max_usecase2_list", max_usecase2, _s(k=2), B),
    _e("builtins.max_usecase3_array", max_usecase3, lambda r: (r.standard_normal(6),), B),
    _e("builtins.min_usecase1", min_usecase1, _s(k=2), B),
    _e("builtins.min_usecase3_tuple", min_usecase3, lambda r: (tuple(float(v) for v in r.standard_normal(3)),), B),
    _e("builtins.pow_op_usecase", pow_op_usecase, _s(0.5, 2.0, 2), B),
    _e("builtins.pow_usecase", pow_usecase, _s(0.5, 2.0, 2), B),
    _e("builtins.sum_usecase", sum_usecase, lambda r: (r.standard_normal(6),), B),
    _e("builtins.sum_kwarg_usecase", sum_kwarg_usecase, lambda r: (r.standard_normal(6), 1.5), B),
    _e("maxmin.domax3", domax3, _s(k=3), "test_maxmin.py"),
    _e("maxmin.domin3", domin3, _s(k=3), "test_maxmin.py"),
    _e("nested_calls.f", f, _s(k=3), "test_nested_calls.py"),
    _e("nested_calls.g", g, _s(k=3), "test_nested_calls.py"),
    _e("nested_calls.star", star, _s(k=3), "test_nested_calls.py"),
    _e("flow_control.for_loop_usecase3", for_loop_usecase3, _s(k=2), "test_flow_control.py"),
    _e("flow_control.for_loop_usecase9", for_loop_usecase9, lambda r: (4, float(r.standard_normal())),
       "test_flow_control.py"),
    _e("usecases.blackscholes_cnd", blackscholes_cnd, _s(), "usecases.py"),
    _e("complex_usecases.rect_usecase", rect_usecase, lambda r: (float(r.uniform(0.5, 2)), float(r.uniform(-3, 3))),
       "complex_usecases.py"),
    _e("blackscholes.cnd", cnd, _s(), "test_blackscholes.py"),
    _e("blackscholes.cnd_array", cnd_array, lambda r: (r.standard_normal(6),), "test_blackscholes.py"),
    _e("blackscholes.blackscholes_arrayexpr", blackscholes_arrayexpr,
       lambda r: (r.uniform(5, 30, 6), r.uniform(1, 100, 6), r.uniform(0.25, 10, 6), RISKFREE, VOLATILITY),
       "test_blackscholes.py"),
    _e("blackscholes.blackscholes_scalar", blackscholes_scalar,
       lambda r: (np.zeros(6), np.zeros(6), r.uniform(5, 30, 6), r.uniform(1, 100, 6), r.uniform(0.25, 10, 6),
                  RISKFREE, VOLATILITY), "test_blackscholes.py", outputs=(0, 1)),
    _e("closure.inner_function", inner_function(), _s(), CL),
    _e("closure.inner_function_with_closure", inner_function_with_closure(), _s(), CL),
    _e("closure.inner_function_with_closure_2", inner_function_with_closure_2(), _s(), CL),
    _e("closure.bulk_outer5", bulk_outer5(), _s(), CL),
    _e("closure.bulk_outer8", bulk_outer8(), _s(), CL),
    _e("closure.bulk_outer9", bulk_outer9(), _s(), CL),
    _e("closure.bulk_outer10", bulk_outer10(), _s(), CL),
    _e("closure.bulk_outer12", bulk_outer12(), _s(), CL),
    _e("closure.bulk_outer14", bulk_outer14(), lambda r: (float(r.standard_normal()), 2.5), CL),
    _e("closure.bulk_outer19", bulk_outer19(), _s(), CL),
    _e("closure.bulk_outer21", bulk_outer21(), _s(), CL),
    _e("closure.closure_renaming_scheme", closure_renaming_scheme().py_func, _s(k=2), CL),
    # the @guvectorize kernel's Python function (GUFunc.__wrapped__)
    _e("doc_examples.move_mean", moving_average().__wrapped__, lambda r: (r.standard_normal(8), np.array([3]), np.zeros(8)),
       "doc_examples/test_examples.py", outputs=(2,)),
    _e("doc_examples.func_np", nogil_func_np(), lambda r: (r.standard_normal(6), r.standard_normal(6)),
       "doc_examples/test_examples.py"),
    _e("doc_examples.inner_func_nb", nogil_inner_func_nb().py_func,
       lambda r: (np.zeros(6), r.standard_normal(6), r.standard_normal(6)),
       "doc_examples/test_examples.py", outputs=(0,)),
]
