"""SciPy's special functions called through their C addresses: primitives with rules.

Numba does not type ``scipy.special``, so Numba code calls its functions through the
addresses ``scipy.special.cython_special`` exports (numba-stats' ``_special.py``: a
``WrapperAddressProtocol`` object of ``get_cython_function_address(...)``; or a ctypes
function type of that address). The capture sees a call of a pointer. When the pointer is
the double-precision variant of one of the functions below, the call becomes a call of
this module's njit function of that name, which calls the same address (the same values)
and has a derivative rule: ``ndtri``'s is ``sqrt(2 pi) exp(y^2 / 2)``, ``gammainc``'s in
``x`` the integrand ``x^(a-1) e^-x / Gamma(a)``. An operand a function has no closed
derivative in (the order ``v`` of ``kv``, the shape ``a`` of ``gammainc``) is refused when
it is varied (``rules.OPERANDS_WITHOUT_RULE``). Other pointers stay refused, naming the
function (:func:`..capture.library_calls.pointer_call_message`).

The njit functions are this module's attributes, made on first use (PEP 562): the disk
cache finds them again by name in another process.
"""
import ctypes
import sys

import numba
from numba.extending import get_cython_function_address

from .. import rules as R
from .. import runtime
from ..capture.call_registry import register_call_rewriter
from ..capture.call_rewrite import CallRewrite
from ..capture.library_calls import pointer_address
from ..generated_source import exec_source
from ..rules import helpers
from ..rules.helper_jit import helper_jit

_PHI = "0.3989422804014327"           # 1 / sqrt(2 pi)
_T_PDF = ("math.exp(math.lgamma(0.5 * ({0} + 1.0)) - math.lgamma(0.5 * {0}) - 0.5 * "
          "math.log({0} * math.pi) - 0.5 * ({0} + 1.0) * math.log1p(%s * %s / {0}))")
_GAMMA_PDF = "math.exp(({0} - 1.0) * math.log(%s) - %s - math.lgamma({0}))"
_ORDER = "the order v"
_SHAPE = "the shape parameter a"

#: name -> per operand: its rule (``{g}`` the result's adjoint, ``{y}`` the result,
#: ``_sp_<name>`` this module's functions), or why it has none.
TABLE = {
    # one argument
    "ndtr": ("{g} * (%s * math.exp(-0.5 * {0} * {0}))" % _PHI,),
    "ndtri": ("{g} * (2.5066282746310002 * math.exp(0.5 * {y} * {y}))",),
    "log_ndtr": ("{g} * (%s * math.exp(-0.5 * {0} * {0} - {y}))" % _PHI,),
    "erf": ("{g} * (1.1283791670955126 * math.exp(-({0} * {0})))",),
    "erfc": ("{g} * (-1.1283791670955126 * math.exp(-({0} * {0})))",),
    "erfcx": ("{g} * (2.0 * {0} * {y} - 1.1283791670955126)",),
    "erfinv": ("{g} * (0.886226925452758 * math.exp({y} * {y}))",),
    "erfcinv": ("{g} * (-0.886226925452758 * math.exp({y} * {y}))",),
    "dawsn": ("{g} * (1.0 - 2.0 * {0} * {y})",),
    "expit": ("{g} * ({y} * (1.0 - {y}))",),
    "log_expit": ("{g} * (1.0 / (1.0 + math.exp({0})))",),
    "logit": ("{g} * (1.0 / ({0} * (1.0 - {0})))",),
    "expm1": ("{g} * ({y} + 1.0)",),
    "log1p": ("{g} * (1.0 / (1.0 + {0}))",),
    "gammaln": ("{g} * digamma({0})",),
    "loggamma": ("{g} * digamma({0})",),
    "gamma": ("{g} * ({y} * digamma({0}))",),
    "rgamma": ("{g} * (-{y} * digamma({0}))",),
    "psi": ("{g} * trigamma({0})",),
    "entr": ("{g} * (-(math.log({0}) + 1.0))",),
    "i0": ("{g} * _sp_i1({0})",),
    "i0e": ("{g} * (_sp_i1e({0}) - math.copysign(1.0, {0}) * {y})",),
    "k0": ("{g} * (-_sp_k1({0}))",),
    "k0e": ("{g} * ({y} - _sp_k1e({0}))",),
    "k1": ("{g} * (-_sp_k0({0}) - {y} / {0})",),
    "k1e": ("{g} * ({y} * (1.0 - 1.0 / {0}) - _sp_k0e({0}))",),
    "j0": ("{g} * (-_sp_j1({0}))",),
    "y0": ("{g} * (-_sp_y1({0}))",),
    "y1": ("{g} * (_sp_y0({0}) - {y} / {0})",),
    # two arguments
    "gammainc": (_SHAPE, "{g} * %s" % (_GAMMA_PDF % ("{1}", "{1}"))),
    "gammaincc": (_SHAPE, "{g} * (-%s)" % (_GAMMA_PDF % ("{1}", "{1}"))),
    "gammaincinv": (_SHAPE, "{g} * (1.0 / %s)" % (_GAMMA_PDF % ("{y}", "{y}"))),
    "xlogy": ("{g} * math.log({1})", "{g} * ({0} / {1})"),
    "xlog1py": ("{g} * math.log1p({1})", "{g} * ({0} / (1.0 + {1}))"),
    "stdtr": ("the degrees of freedom df", "{g} * %s" % (_T_PDF % ("{1}", "{1}"))),
    "stdtrit": ("the degrees of freedom df", "{g} * (1.0 / %s)" % (_T_PDF % ("{y}", "{y}"))),
    "chdtr": ("the degrees of freedom v", "{g} * (0.5 * math.exp((0.5 * {0} - 1.0) * "
              "math.log(0.5 * {1}) - 0.5 * {1} - math.lgamma(0.5 * {0})))"),
    "chdtrc": ("the degrees of freedom v", "{g} * (-0.5 * math.exp((0.5 * {0} - 1.0) * "
               "math.log(0.5 * {1}) - 0.5 * {1} - math.lgamma(0.5 * {0})))"),
    "owens_t": ("{g} * (-0.5 * %s * math.exp(-0.5 * {0} * {0}) * "
                "math.erf({1} * {0} * 0.7071067811865476))" % _PHI,
                "{g} * (math.exp(-0.5 * {0} * {0} * (1.0 + {1} * {1})) / "
                "(6.283185307179586 * (1.0 + {1} * {1})))"),
    "beta": ("{g} * ({y} * (digamma({0}) - digamma({0} + {1})))",
             "{g} * ({y} * (digamma({1}) - digamma({0} + {1})))"),
    "betaln": ("{g} * (digamma({0}) - digamma({0} + {1}))",
               "{g} * (digamma({1}) - digamma({0} + {1}))"),
    "rel_entr": ("{g} * (math.log({0} / {1}) + 1.0)", "{g} * (-{0} / {1})"),
    "kl_div": ("{g} * math.log({0} / {1})", "{g} * (1.0 - {0} / {1})"),
    "kv": (_ORDER, "{g} * (-0.5 * (_sp_kv({0} - 1.0, {1}) + _sp_kv({0} + 1.0, {1})))"),
    "kve": (_ORDER, "{g} * ({y} - 0.5 * (_sp_kve({0} - 1.0, {1}) + _sp_kve({0} + 1.0, {1})))"),
    "iv": (_ORDER, "{g} * (0.5 * (_sp_iv({0} - 1.0, {1}) + _sp_iv({0} + 1.0, {1})))"),
    "ive": (_ORDER, "{g} * (0.5 * (_sp_ive({0} - 1.0, {1}) + _sp_ive({0} + 1.0, {1})) - "
            "math.copysign(1.0, {1}) * {y})"),
    "jv": (_ORDER, "{g} * (0.5 * (_sp_jv({0} - 1.0, {1}) - _sp_jv({0} + 1.0, {1})))"),
    "yv": (_ORDER, "{g} * (0.5 * (_sp_yv({0} - 1.0, {1}) - _sp_yv({0} + 1.0, {1})))"),
    # three arguments
    "betainc": (_SHAPE, "the shape parameter b",
                "{g} * math.exp(({0} - 1.0) * math.log({2}) + ({1} - 1.0) * math.log1p(-{2}) "
                "- math.lgamma({0}) - math.lgamma({1}) + math.lgamma({0} + {1}))"),
}
# The functions the rules call besides those in TABLE.
_CALLED_ONLY = {"i1": 1, "i1e": 1, "k1e": 1, "j1": 1}

_made = {}          # name -> its njit function
_by_address = None  # address of a double-precision variant -> name


_capsule_table = None


def _capsules():
    """``{name without its fused prefix: (exported name, C signature)}`` of the
    double-precision variants cython_special exports."""
    global _capsule_table
    if _capsule_table is not None:
        return _capsule_table
    from scipy.special import cython_special
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    out = {}
    for exported, capsule in cython_special.__pyx_capi__.items():
        sig = get_name(capsule).decode()
        ret, _, params = sig.partition(" (")
        params = [p.strip() for p in params.rstrip(")").split(",")]
        if ret == "double" and params[-1] == "int __pyx_skip_dispatch" and \
                all(p == "double" for p in params[:-1]):
            base = exported.replace("__pyx_fuse_0", "").replace("__pyx_fuse_1", "")
            out[base] = (exported, len(params) - 1)
    _capsule_table = out
    return out


def _function(name):
    """The njit function calling cython_special's ``name`` (double precision); its rule
    entered in ``CALL_RULES``, and under ``_sp_<name>`` in the generated code's names."""
    fn = _made.get(name)
    if fn is not None:
        return fn
    exported, nargs = _capsules()[name]
    address = get_cython_function_address("scipy.special.cython_special", exported)
    pointer = ctypes.CFUNCTYPE(ctypes.c_double, *[ctypes.c_double] * nargs + [ctypes.c_int])(
        address)
    params = ", ".join("x%d" % k for k in range(nargs))
    source = "def %s(%s):\n    return _pointer(%s, 0)\n" % (name, params, params)
    py = exec_source(name, source, {"_pointer": pointer}, "scipy.special.%s" % name)
    py.__module__, py.__qualname__ = __name__, name
    fn = _made[name] = helper_jit(error_model="numpy")(py)
    helper = "_sp_" + name
    helpers.RULE_HELPERS[helper] = fn
    runtime.RUNTIME[helper] = fn
    runtime.PURE.add(helper)
    rule = TABLE.get(name)
    if rule is not None:
        for called in {n for n in list(TABLE) + list(_CALLED_ONLY)
                       if "_sp_%s(" % n in "".join(r for r in rule if "{g}" in r)}:
            _function(called)
        R.CALL_RULES[fn] = tuple(r if "{g}" in r else None for r in rule)
        missing = {k: r for k, r in enumerate(rule) if "{g}" not in r}
        if missing:
            R.OPERANDS_WITHOUT_RULE[fn] = missing
    return fn


def __getattr__(name):
    if name in TABLE or name in _CALLED_ONLY:
        return _function(name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def _name_of_address(address):
    """The name of the function of TABLE whose double-precision variant is at
    ``address``, or None."""
    global _by_address
    if _by_address is None:
        _by_address = {}
        for base, (exported, _) in _capsules().items():
            if base in TABLE:
                _by_address[get_cython_function_address(
                    "scipy.special.cython_special", exported)] = base
    return _by_address.get(address)


def _rewrite_site(state, block, i, expr, called, defined_value, tuple_items):
    """A call of a pointer to one of TABLE's functions calls this module's function."""
    if called is None or "scipy.special.cython_special" not in sys.modules or \
            isinstance(called, numba.core.dispatcher.Dispatcher):
        return False
    address = pointer_address(called)
    name = None if address is None else _name_of_address(address)
    if name is None:
        return False
    nargs = _capsules()[name][1]
    if expr.kws or expr.vararg is not None or len(expr.args) not in (nargs, nargs + 1):
        return False        # (refused after typing, naming the function)
    site = CallRewrite(state, block, i, "scipy.special.%s" % name)
    func = site.assign(numba.core.ir.Global("scipy_special_" + name, _function(name),
                                            site.loc), "$scipy_special")
    # (a ctypes call passes the C function's last argument, __pyx_skip_dispatch, too)
    site.finish(numba.core.ir.Expr.call(func, expr.args[:nargs], (), site.loc))
    return True


register_call_rewriter(_rewrite_site)
