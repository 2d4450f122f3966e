"""Measure grad_jit on autograd's own NumPy test suite, restricted to what numba.njit
compiles.

    python scripts/autograd_coverage.py /path/to/autograd [test_numpy test_linalg ...]
        [test_numpy::test_prod_1 ...]        (only those tests)

Runs the gradient checks of autograd's ``tests/test_numpy.py``, ``test_linalg.py`` and
``test_systematic.py`` (a checkout of https://github.com/HIPS/autograd) with ``numpy`` in
place of ``autograd.numpy``: each ``check_grads(fun)(*args)`` and each combination of a
``combo_check`` is one case. A case whose function ``numba.njit`` does not compile, that
takes complex input, or whose result is not a float, a float array or a tuple or list
of them is left out. The others are differentiated by ``grad_jit`` (a float result as it
is, an array through ``np.sum(result * w)`` with a random ``w``, the items of a tuple or
list read by constant index and summed so), in reverse mode (``grad``) and, where autograd
checks it, forward mode (``jvp``), against central finite differences. Per autograd test, the worst outcome of
its cases (at most ``CASES_PER_TEST`` signatures each) is printed: ``ok``, ``refused``
(a NonDifferentiableError, its first line), ``wrong`` (a gradient off the finite
differences), ``crash`` (any other error), or ``not compiled``.
"""
import itertools
import os
import sys
import types as pytypes
import warnings

import numba
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, ".."))

import numba_adstack as nad                                    # noqa: E402
from numba_adstack import NonDifferentiableError               # noqa: E402
from conftest import fd_grad                                   # noqa: E402

CASES_PER_TEST = 2
RANK = {"not compiled": 0, "ok": 1, "refused": 2, "crash": 3, "wrong": 4}
_recorded = []


class _Unsupported(Exception):
    pass


def _check_grads(fun, *_, modes=("fwd", "rev"), **__):
    return lambda *args, **kwargs: _recorded.append((fun, args, kwargs, tuple(modes)))


def _combo_check(fun, *_, modes=("fwd", "rev"), **kw_lists):
    def check(*arg_lists, **kwarg_lists):
        kwarg_lists = dict(kw_lists, **kwarg_lists)
        keys = list(kwarg_lists)
        for args in itertools.product(*arg_lists):
            for values in itertools.product(*[kwarg_lists[k] for k in keys]):
                _recorded.append((fun, args, dict(zip(keys, values)), tuple(modes)))
    return check


def _unsupported(*_, **__):
    raise _Unsupported()


def _shim_autograd():
    """``autograd`` modules with NumPy in place of its wrapped NumPy, and recorders in
    place of its checks."""
    ag = pytypes.ModuleType("autograd")
    for name in ("grad", "jacobian", "hessian", "make_vjp", "make_jvp", "value_and_grad",
                 "elementwise_grad", "holomorphic_grad", "hessian_tensor_product",
                 "tensor_jacobian_product", "make_hvp", "deriv", "checkpoint"):
        setattr(ag, name, _unsupported)
    ag.__getattr__ = lambda name: _unsupported       # autograd.tuple, .list...
    util = pytypes.ModuleType("autograd.test_util")
    util.check_grads = _check_grads
    util.combo_check = _combo_check
    ag.test_util = util
    ag.numpy = np
    sys.modules.update({"autograd": ag, "autograd.numpy": np,
                        "autograd.numpy.random": np.random, "autograd.test_util": util,
                        "autograd.numpy.linalg": np.linalg})


def _float_like(v):
    return isinstance(v, float) or (isinstance(v, np.ndarray) and v.dtype.kind == "f")


def _compiled_inner(fun, kwargs, nargs):
    if isinstance(fun, pytypes.FunctionType) and not kwargs:
        return numba.njit(fun), fun
    names = ", ".join("a%d" % k for k in range(nargs))
    kw = "".join(", %s=%r" % item for item in kwargs.items())
    src = "def inner(%s):\n    return FN(%s%s)\n" % (names, names, kw)
    ns = {"FN": fun}
    exec(src, ns)
    return numba.njit(ns["inner"]), ns["inner"]


def _loss(inner, nargs, out):
    """A float loss of ``inner``'s result: the result itself, ``np.sum(result * w)``, or
    for a tuple or list of those the sum over its items, read by constant index."""
    names = ", ".join("a%d" % k for k in range(nargs))
    rng = np.random.default_rng(0)
    items = out if isinstance(out, (tuple, list)) else [out]
    ns = {"np": np, "INNER": inner}
    terms = []
    for k, item in enumerate(items):
        ref = "r[%d]" % k if isinstance(out, (tuple, list)) else "r"
        if isinstance(item, np.ndarray):
            ns["W%d" % k] = rng.uniform(-1.0, 1.0, item.shape)
            terms.append("np.sum(%s * W%d)" % (ref, k))
        else:
            terms.append("%s * %.3f" % (ref, rng.uniform(0.5, 1.5)))
    src = "def loss(%s):\n    r = INNER(%s)\n    return %s\n" % (names, names,
                                                                 " + ".join(terms))
    exec(src, ns)
    return ns["loss"]


def _float_result(out):
    if isinstance(out, (tuple, list)):
        return len(out) > 0 and all(_float_result(o) for o in out)
    return _float_like(out) or isinstance(out, np.floating)


def _close(got, want):
    for g, w in zip(got, want):
        if w is None:
            continue
        if not np.allclose(g, w, rtol=1e-4, atol=1e-6):
            return False
    return True


def run_case(fun, args, kwargs, modes):
    """``(outcome, detail)`` of one case."""
    if any(isinstance(a, complex) or (isinstance(a, np.ndarray) and a.dtype.kind == "c")
           for a in args) or not any(_float_like(a) for a in args):
        return "not compiled", "complex or no float input"
    args = tuple(float(a) if isinstance(a, (float, np.floating)) else a for a in args)
    try:
        jitted, plain = _compiled_inner(fun, kwargs, len(args))
        out = jitted(*args)
    except Exception as e:                     # noqa: BLE001 (what njit refuses)
        return "not compiled", type(e).__name__
    if not _float_result(out):
        return "not compiled", "result %s" % type(out).__name__
    loss_src = _loss(jitted, len(args), out)
    try:
        f = nad.grad_jit(loss_src)
        got = f.grad(*args)
        want = fd_grad(numba.njit(loss_src), args, eps=1e-5)
        if not _close(got, want):
            return "wrong", "reverse mode"
        if "fwd" not in modes:
            return "ok", ""
        rng = np.random.default_rng(1)
        tangents = tuple(rng.uniform(-1.0, 1.0, np.shape(a)) if isinstance(a, np.ndarray)
                         and a.dtype.kind == "f" else 0.5 if isinstance(a, float) else None
                         for a in args)
        _, t = f.jvp(args, tangents)
        expect = sum(float(np.sum(g * d)) for g, d in zip(want, tangents) if g is not None)
        if not np.allclose(t, expect, rtol=1e-4, atol=1e-6):
            return "wrong", "forward mode"
    except NonDifferentiableError as e:
        return "refused", str(e).splitlines()[0]
    except Exception as e:                     # noqa: BLE001
        return "crash", "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:160]
                                    if str(e) else "")
    return "ok", ""


def _signature(args, kwargs):
    return tuple(numba.typeof(a) for a in args), repr(sorted(kwargs.items(), key=str))


def run_module(path, only=None):
    src = open(path).read()
    ns = {"__name__": "autograd_" + os.path.basename(path)[:-3]}
    exec(compile(src, path, "exec"), ns)
    results = {}
    for name, test in list(ns.items()):
        if not name.startswith("test_") or not callable(test):
            continue
        if only and name not in only:
            continue
        del _recorded[:]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                test()
        except Exception:                      # noqa: BLE001 (uses autograd itself)
            pass
        outcome, detail, seen = None, "no gradient check", set()
        for fun, args, kwargs, modes in list(_recorded):
            try:
                sig = _signature(args, kwargs)
            except Exception:                  # noqa: BLE001
                continue
            if sig in seen:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                o, d = run_case(fun, args, kwargs, modes)
            if o != "not compiled":
                seen.add(sig)
            if outcome is None or RANK[o] > RANK[outcome]:
                outcome, detail = o, d
            if len(seen) >= CASES_PER_TEST or RANK[o] >= RANK["refused"]:
                break
        results[name] = (outcome or "not compiled", detail)
        print("%-40s %-13s %s" % (name, results[name][0], results[name][1]), flush=True)
    return results


def main(argv):
    root = argv[1]
    modules = [m for m in argv[2:] if "::" not in m] or ["test_numpy", "test_linalg",
                                                          "test_systematic"]
    only = {m.split("::")[1] for m in argv[2:] if "::" in m} or None
    _shim_autograd()
    sys.path.insert(0, os.path.join(root, "tests"))
    total = {}
    for m in modules:
        print("== %s" % m, flush=True)
        np.random.seed(0)
        for name, r in run_module(os.path.join(root, "tests", m + ".py"), only).items():
            total["%s::%s" % (m, name)] = r
    counts = {}
    for outcome, _ in total.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    print("== summary: " + ", ".join("%s %d" % kv for kv in sorted(counts.items())))


if __name__ == "__main__":
    main(sys.argv)
