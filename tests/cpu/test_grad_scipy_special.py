"""SciPy special functions called from Numba through their C addresses, as numba-stats
does (``_special.py``: a ``WrapperAddressProtocol`` of ``get_cython_function_address``)
and with a ctypes function type: gradients against central finite differences of the same
computation in Python with ``scipy.special``; numba-stats' public distributions that call
them; the operands without a derivative refused by name."""
import ctypes
import math

import numba
import numpy as np
import pytest
from numba.extending import get_cython_function_address
from numba.types import WrapperAddressProtocol, float64

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

special = pytest.importorskip("scipy.special")
from scipy.special import cython_special  # noqa: E402

from conftest import fd_grad  # noqa: E402

RNG = np.random.default_rng(35)


def _address(name):
    """The address of the double-precision variant of cython_special's ``name``."""
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    for exported in ("__pyx_fuse_0" + name, "__pyx_fuse_1" + name, name):
        capsule = cython_special.__pyx_capi__.get(exported)
        if capsule is not None and get_name(capsule).decode().startswith("double (double"):
            return get_cython_function_address("scipy.special.cython_special", exported)
    raise KeyError(name)


def wrapper(name, nargs):
    """numba-stats' ``_special.get``: an object Numba calls through the address."""
    addr = _address(name)
    sig = float64(*[float64] * nargs)
    cls = type(name, (WrapperAddressProtocol,), {
        "__wrapper_address__": lambda self: addr, "signature": lambda self: sig})
    return cls()


UNARY = ["ndtr", "ndtri", "log_ndtr", "erf", "erfc", "erfcx", "erfinv", "erfcinv", "dawsn",
         "expit", "log_expit", "logit", "expm1", "log1p", "gammaln", "loggamma", "gamma",
         "rgamma", "psi", "entr", "i0", "i0e", "k0", "k0e", "k1", "k1e", "j0", "y0", "y1"]
_U = [wrapper(n, 1) for n in UNARY]
# (globals of the function below, one per name)
globals().update({"u_%s" % n: w for n, w in zip(UNARY, _U)})


def _unary_source(call):
    body = "".join("    s += %s(x[%d]) * %d.0\n" % (call(n), k, k + 1)
                   for k, n in enumerate(UNARY))
    return "def unary(x):\n    s = 0.0\n%s    return s\n" % body


_ns = {}
exec(_unary_source(lambda n: "u_%s" % n), globals(), _ns)      # noqa: S102
unary = nad.grad_jit(_ns["unary"])
_py = {"special": special}
exec(_unary_source(lambda n: "special.%s" % n), _py)           # noqa: S102
unary_py = _py["unary"]


def test_every_function_of_one_argument():
    x = RNG.uniform(0.15, 0.85, len(UNARY))
    g, = unary.grad(x)
    want, = fd_grad(unary_py, (x,))
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)
    assert abs(unary(x) - unary_py(x)) < 1e-12 * (1 + abs(unary_py(x)))


_BINARY = """def binary_loss(x, y, a):
    # a: the shapes, orders and degrees of freedom (constants); x, y: varied
    return (S.gammainc(a, x) + 2.0 * S.gammaincc(a, y) + 3.0 * S.gammaincinv(a, x)
            + S.xlogy(x, y) + S.xlog1py(x, y) + S.stdtr(3.0 * a, y - 0.5)
            + S.stdtrit(3.0 * a, x) + S.chdtr(a, y) + S.chdtrc(a, x) + S.owens_t(x, y)
            + S.beta(x, y) + S.betaln(x, y) + S.rel_entr(x, y) + S.kl_div(x, y)
            + S.kv(a, y) + S.kve(a, y) + S.iv(a, y) + S.ive(a, y) + S.jv(a, y)
            + S.betainc(a, 2.5, x) + 0.5 * S.yv(a, y + 1.0))
"""
BINARY = ["gammainc", "gammaincc", "gammaincinv", "xlogy", "xlog1py", "stdtr", "stdtrit",
          "chdtr", "chdtrc", "owens_t", "beta", "betaln", "rel_entr", "kl_div", "kv", "kve",
          "iv", "ive", "jv", "yv"]
globals().update({"b_%s" % n: wrapper(n, 2) for n in BINARY})
b_betainc = wrapper("betainc", 3)
gammainc = b_gammainc
_ns = {}
exec(_BINARY.replace("S.", "b_"), globals(), _ns)              # noqa: S102
binary_loss = _ns["binary_loss"]
_py = {"S": special}
exec(_BINARY, _py)                                           # noqa: S102
binary_loss_py = _py["binary_loss"]


binary = nad.grad_jit(binary_loss, wrt=("x", "y"))


def test_functions_of_two_and_three_arguments():
    args = (0.35, 0.6, 1.7)
    gx, gy, ga = binary.grad(*args)
    want = fd_grad(binary_loss_py, args)
    assert ga is None
    np.testing.assert_allclose([gx, gy], want[:2], rtol=1e-6, atol=1e-7)


def test_shape_parameter_varied_is_refused_by_name():
    f = nad.grad_jit(lambda x, a: gammainc(a, x) + 1.0)
    with pytest.raises(NonDifferentiableError, match="gammainc has no derivative in its "
                       "argument 1 \\(the shape parameter a\\).*constant"):
        f.grad(0.4, 1.5)
    g = nad.grad_jit(lambda x, a: gammainc(a, x), wrt="x")
    np.testing.assert_allclose(g.grad(0.4, 1.5)[0],
                               fd_grad(lambda x: special.gammainc(1.5, x), (0.4,))[0],
                               rtol=1e-7)
    with pytest.raises(NonDifferentiableError, match="no derivative"):
        f.jvp((0.4, 1.5), (0.0, 1.0))


_ndtri_ctypes = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_int)(
    _address("ndtri"))


@nad.grad_jit
def probit_loss(p):
    s = 0.0
    for i in range(p.shape[0]):
        z = _ndtri_ctypes(p[i], 0)
        s += z * z * (i + 1)
    return s


def test_ctypes_pointer_and_forward_mode():
    p = RNG.uniform(0.05, 0.95, 6)
    g, = probit_loss.grad(p)
    want, = fd_grad(lambda q: sum(special.ndtri(v) ** 2 * (i + 1) for i, v in enumerate(q)),
                    (p,))
    np.testing.assert_allclose(g, want, rtol=1e-6)
    v = RNG.standard_normal(6)
    _, tangent = probit_loss.jvp((p,), (v,))
    assert abs(tangent - g @ v) < 1e-9 * (1 + abs(tangent))


def test_function_without_rule_is_named():
    voigt = wrapper("voigt_profile", 3)
    f = nad.grad_jit(lambda x: voigt(x, 1.0, 0.5))
    with pytest.raises(NonDifferentiableError, match="voigt_profile"):
        f.grad(0.3)


numba_stats = pytest.importorskip("numba_stats")
from numba_stats import exponnorm, norm, skewnorm, t  # noqa: E402


@nad.grad_jit
def _ppf_loss(p, mu, sigma):
    return np.sum(norm.ppf(p, mu, sigma) ** 2)


@nad.grad_jit
def _exponnorm_nll(x, K, loc, scale):
    return -np.sum(exponnorm.logpdf(x, K, loc, scale))


@nad.grad_jit
def _skewnorm_nll(x, a, loc, scale):
    return -np.sum(skewnorm.logpdf(x, a, loc, scale)) + \
        np.sum(skewnorm.cdf(x, a, loc, scale))


@nad.grad_jit(wrt=(0, 2, 3))
def _t_cdf(x, df, loc, scale):
    return np.sum(t.cdf(x, df, loc, scale))


@pytest.mark.parametrize("f, args", [
    (_ppf_loss, (RNG.uniform(0.05, 0.95, 6), 0.3, 1.2)),
    (_exponnorm_nll, (RNG.standard_normal(6), 1.5, 0.1, 0.9)),
    (_skewnorm_nll, (RNG.standard_normal(6), 2.0, 0.1, 0.9)),
    (_t_cdf, (RNG.standard_normal(6), 4.0, 0.1, 0.9)),
], ids=["norm.ppf", "exponnorm.logpdf", "skewnorm.logpdf+cdf", "t.cdf"])
def test_numba_stats_public_functions(f, args):
    # (finite differences of the compiled function: numba-stats runs only compiled)
    got = f.grad(*args)
    want = fd_grad(f, args)
    for g, w in zip(got, want):
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)
