"""Numba's supported NumPy surface, generated: every ufunc Numba types (its own registry,
``numba.np.ufunc_db``) in every call form that writes (plain, ``out`` by position, ``out=``
by keyword, ``out`` aliased with an input), the NumPy functions and methods with an ``out``
parameter, the functions and methods that write into an array, the augmented operators on
arrays and views and their ``operator.i*`` forms, for float64, float32 and int64 inputs,
and the ufuncs on complex128 intermediates of float64 inputs. Each case is a
small function written as source; :func:`classify` runs it against central finite
differences of the Python function: RIGHT, REFUSED (an error of numba_adstack naming the
construct), WRONG, CRASH (any other error) or NOT_NUMBA (``numba.njit`` itself does not
compile it). Shared by tests/rules/test_surface.py and scripts/surface_report.py."""
import operator

import numpy as np

N = 4
_WEIGHTS = "np.arange(1.0, %d.0)" % (N + 1)

# Inputs inside every ufunc's domain where it is smooth (arccosh: above 1).
_SHIFT = {"arccosh": 1.5}
_AUGMENTED = {"+=": "iadd", "-=": "isub", "*=": "imul", "/=": "itruediv",
              "//=": "ifloordiv", "%=": "imod", "**=": "ipow"}


class Case:
    def __init__(self, name, source, dtype, differentiated):
        self.name, self.source, self.dtype = name, source, dtype
        self.differentiated = differentiated    # are x, y floats to differentiate

    def function(self):
        ns = {"np": np, "operator": operator}
        exec(compile(self.source, "<surface %s>" % self.name, "exec"), ns)
        return ns["f"]

    def arguments(self):
        base = self.name.split(".")[0].split(":")[0]
        x = np.linspace(0.2, 0.9, N) + _SHIFT.get(base, 0.0)
        y = np.linspace(1.3, 0.55, N)
        if self.dtype == "int64":
            return (np.arange(1, N + 1, dtype=np.int64),
                    np.arange(2, N + 2, dtype=np.int64))
        if self.dtype == "complex128":         # real arguments, complex intermediates
            return x, y
        return x.astype(self.dtype), y.astype(self.dtype)


def numba_ufuncs():
    """The NumPy ufuncs Numba compiles (its registry of ufunc kernels)."""
    from numba.np import ufunc_db
    return sorted((u for u in ufunc_db.get_ufuncs() if u.nout == 1 and u.nin in (1, 2)),
                  key=lambda u: u.__name__)


def _call(u, args):
    return "np.%s(%s)" % (u.__name__, ", ".join(args))


# NumPy functions and methods with an ``out`` parameter that Numba compiles (or may):
# name, call with ``{a}`` the first operand and ``{o}`` the out argument, and whether
# ``out`` may alias ``{a}`` (BLAS products may not, in NumPy either).
FUNCTIONS = (
    ("dot", "np.dot(np.outer(x, y), {a}{o})", False),
    ("clip", "np.clip({a}, 0.5, 0.8{o})", True),
    ("clip.method", "{a}.clip(0.5, 0.8{o})", True),
    ("round", "np.round({a} * 7.0, 1{o})", True),
    ("around", "np.around({a} * 7.0, 1{o})", True),
    ("round.method", "({a} * 7.0).round(1{o})", True),
    ("outer", "np.outer({a}, y{o})", False),
    ("cumsum", "np.cumsum({a}{o})", True),
    ("cumprod", "np.cumprod({a}{o})", True),
    ("matmul", "np.matmul(np.outer(x, y), {a}{o})", False),
)

# The other writes: methods and functions that store into an array they are given.
WRITERS = (
    ("copyto", ["o = np.zeros(%d)" % N, "np.copyto(o, np.sin(x) * y)", "r = o"]),
    ("fill", ["o = x * 1.0", "o.fill(y[0])", "r = o * x"]),
    ("sort", ["o = x * y", "o.sort()", "r = o"]),
    ("fill_diagonal", ["m = np.outer(x, y)", "np.fill_diagonal(m, y[0])", "r = m"]),
    ("put", ["o = x * 1.0", "np.put(o, np.array([0, 2]), y[:2])", "r = o"]),
    ("flat", ["o = x * 1.0", "o.flat[1] = y[0]", "r = o"]),
    ("nan_to_num", ["o = x * y", "np.nan_to_num(o, copy=False)", "r = o"]),
    ("setitem", ["o = x * 1.0", "o[1:3] = y[:2] * x[2:]", "r = o"]),
)


def _source(lines, complex_result=False):
    ret = "np.abs(r)" if complex_result else "r"
    return "def f(x, y):\n    %s\n    return float(np.sum(%s * %s))\n" % (
        "\n    ".join(lines), ret, _WEIGHTS)


def cases(dtypes=("float64", "float32", "int64", "complex128")):
    """The cases for ``dtypes``: for ``complex128`` the arguments are real and the ufuncs
    are applied to complex intermediates made from them (the loss reads their modulus)."""
    out = []
    for dtype in dtypes:
        cast = "" if dtype == "int64" else ".astype(np.%s)" % dtype
        diff = dtype != "int64"
        cplx = dtype == "complex128"
        for u in numba_ufuncs():
            ins = (["xc", "yc"] if cplx else ["x", "y"])[:u.nin]
            head = ["xc = x + 0.5j * y", "yc = y - 0.25j * x"] if cplx else []
            first = "o = x * (1.0 + 0j)" if cplx else \
                "o = x * 1" if dtype == "int64" else "o = x * 1.0"
            body = {
                "plain": ["r = %s" % _call(u, ins)],
                "out": ["o = np.empty(%d)%s" % (N, cast), "%s" % _call(u, ins + ["o"]),
                        "r = o"],
                "out=": ["o = np.empty(%d)%s" % (N, cast), "%s" % _call(u, ins + ["out=o"]),
                         "r = o"],
                "aliased": [first] + (["o += 0.5j * y"] if cplx else []) +
                           ["%s" % _call(u, ["o"] + ins[1:] + ["o"]), "r = o"],
            }
            for form, lines in body.items():
                out.append(Case("%s.%s:%s" % (u.__name__, form, dtype),
                                _source(head + lines, cplx), dtype, diff))
        if dtype in ("float64", "float32"):
            out += _function_cases(dtype, cast)
        if dtype in ("int64", "complex128"):
            continue
        for op, fn in _AUGMENTED.items():
            for target, rhs, tag in (("z", "y", "array"), ("z[1:]", "y[1:]", "view")):
                for spelled in ("operator", "function"):
                    stmt = "%s %s %s" % (target, op, rhs) if spelled == "operator" else \
                        "operator.%s(%s, %s)" % (fn, target, rhs)
                    src = ("def f(x, y):\n    z = x + 0.5\n    %s\n"
                           "    return float(np.sum(z * z * %s))\n" % (stmt, _WEIGHTS))
                    out.append(Case("%s.%s.%s:%s" % (fn, tag, spelled, dtype), src, dtype,
                                    True))
    return out


def _function_cases(dtype, cast):
    out = []
    for name, call, aliasable in FUNCTIONS:
        forms = {"plain": (["r = " + call.format(a="x", o="")]),
                 "out": ["o = np.empty(%s)%s" % ("(%d, %d)" % (N, N) if name == "outer"
                                                 else N, cast),
                         call.format(a="x", o=", o"), "r = o"]}
        forms["out="] = [forms["out"][0], call.format(a="x", o=", out=o"), "r = o"]
        if aliasable:
            forms["aliased"] = ["o = x * 1.0", call.format(a="o", o=", o"), "r = o"]
        for form, lines in forms.items():
            out.append(Case("%s.%s:%s" % (name, form, dtype), _source(lines), dtype, True))
    for name, lines in WRITERS:
        lines = [ln.replace("np.zeros(%d)" % N, "np.zeros(%d)%s" % (N, cast)) for ln in lines]
        out.append(Case("%s.write:%s" % (name, dtype), _source(lines), dtype, True))
    return out


def fd(f, args, i, h):
    """Central differences in argument ``i``, each call on fresh copies."""
    g = np.zeros(args[i].shape)
    for k in range(args[i].size):
        p = [a.astype(np.float64) for a in args]
        m = [a.astype(np.float64) for a in args]
        p[i][k] += h
        m[i][k] -= h
        g[k] = (f(*p) - f(*m)) / (2 * h)
    return g


def classify(case):
    """``(class, detail)`` of one case."""
    import numba
    import numba_adstack as nad
    f = case.function()
    args = case.arguments()
    try:
        want_value = numba.njit(f)(*[a.copy() for a in args])
    except Exception as e:      # noqa: BLE001 (Numba's own refusal)
        return "NOT_NUMBA", str(e).splitlines()[0][:120]
    try:
        g = nad.grad_jit(f)
        value = g(*[a.copy() for a in args])
        got = g.grad(*[a.copy() for a in args])
    except nad.NonDifferentiableError as e:
        return "REFUSED", str(e).splitlines()[0][:200]
    except Exception as e:      # noqa: BLE001
        return "CRASH", "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])
    if not np.isclose(value, want_value, rtol=1e-6, equal_nan=True):
        return "WRONG", "primal %r, njit %r" % (value, want_value)
    if not case.differentiated:
        return ("RIGHT", "") if all(v is None for v in got) else \
            ("WRONG", "integer arguments got %r" % (got,))
    f64 = case.function()
    double = case.dtype in ("float64", "complex128")
    h = 1e-6 if double else 1e-3
    for i in range(2):
        try:
            want = fd(f64, args, i, h)
        except Exception as e:  # noqa: BLE001 (the Python function refuses float64 copies)
            return "UNCHECKED", "finite differences: %s: %s" % (
                type(e).__name__, str(e).splitlines()[0][:120])
        tol = 1e-5 if double else 2e-2
        if got[i] is None or not np.allclose(got[i], want, rtol=tol, atol=tol):
            return "WRONG", "argument %d: got %r, want %r" % (i, got[i], want)
    return "RIGHT", ""
