"""Measure ``numba_adstack.grad_jit`` on the corpus of real Numba functions.

    python benchmarks/corpus/run_corpus.py [--only NAME ...] [--module SUBSTR] [--jobs 1]
                                           [--json PATH] [--no-json] [--update]
    python benchmarks/corpus/run_corpus.py --from-json benchmarks/corpus/results.json

The corpus is every ``ENTRIES`` list of ``benchmarks/corpus/functions_*.py``: functions
copied as their authors wrote them from public Numba code and tests (each record names its
source), with a deterministic input maker. For each entry:

1. ``numba.njit(fn)`` must compile and run on the entry's inputs; an entry that Numba
   itself cannot compile is dropped (class ``NJIT_FAIL``, listed apart, not counted).
2. The differentiated function: ``grad_jit(fn)`` when ``fn`` returns a float; otherwise a
   loss written outside the function, as a user would write it: a ``grad_jit`` function
   calling ``numba.njit(fn)`` and summing each float array or float of the result (and of
   the arguments the entry names as written in place, ``outputs=``) against fixed random
   weights. The function body itself is never changed.
3. Its gradient (``.grad``) against central finite differences of the plain Python
   function (the same loss around ``fn`` run by the interpreter), in float64, with steps
   ``1e-5`` and ``1e-6`` scaled by ``max(1, |x|)`` (``1e-4`` and ``1e-7`` more before a
   mismatch is called one), relative tolerance ``1e-5`` per component plus an absolute
   floor of ``1e-6`` times the gradient's largest component.

Classes: ``RIGHT``; ``WRONG`` (a gradient, finite or not, or a primal value, different
from a finite difference that is stable across step sizes; also ``None`` for a float
argument whose finite difference is not zero); ``REFUSED`` (``NonDifferentiableError`` or
another numba_adstack compile-time error naming the construct; first line kept); ``CRASH``
(any other exception: type and first line); ``UNCHECKED`` (the finite differences are not
stable at any of the four seeded points: the function is not smooth there, jumps at the
point, raises at a perturbed point, or computes in float32 inside; the gradient is then
compared with differences at the steps 1e-3 and 1e-2, only as a note). Arguments named in
an entry's ``nofd=`` (convergence tolerances) are differentiated but not compared.

Everything runs in this one process, one entry after another, and every exception is
caught (``--jobs N`` shards the entries over N processes instead).
"""
import argparse
import collections
import glob
import importlib.util
import inspect
import json
import math
import os
import re
import signal
import sys
import time
import traceback
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

SEEDS = (0, 1, 2, 3)
STEPS = (1e-5, 1e-6)
EXTRA_STEPS = (1e-4, 1e-7)
RTOL = 1e-5
ATOL_REL = 1e-6
ENTRY_TIMEOUT_S = 600


# ----------------------------------------------------------------------------- loading

def load_modules():
    mods = []
    for path in sorted(glob.glob(os.path.join(HERE, "functions_*.py"))):
        modname = "corpus_" + os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(modname, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[modname] = mod
        spec.loader.exec_module(mod)
        mods.append(mod)
    return mods


def load_entries(module_filter=None):
    entries = []
    seen = set()
    for mod in load_modules():
        short = mod.__name__[len("corpus_"):]
        if module_filter and module_filter not in short:
            continue
        for e in mod.ENTRIES:
            e = dict(e)
            e["module"] = short
            if e["name"] in seen:
                raise ValueError("duplicate corpus entry name %r" % e["name"])
            seen.add(e["name"])
            entries.append(e)
    return entries


# ----------------------------------------------------------------------------- helpers

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def first_line(exc):
    """The first line of an exception's message; for Numba's "Failed in ... pipeline"
    wrapper, the first line that says what failed is added."""
    text = _ANSI.sub("", str(exc)).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    head = lines[0]
    if head.startswith("Failed in"):
        rest = [ln for ln in lines[1:] if not ln.startswith("Failed in")]
        if rest:
            head += " | " + rest[0]
    return head[:500]


def copy_args(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def is_float_scalar(v):
    return isinstance(v, (float, np.floating)) and not isinstance(v, bool)


def is_float_array(v):
    return isinstance(v, np.ndarray) and v.dtype.kind == "f"


def diff_positions(args):
    """(argument index, element index or None) of every float the gradient covers; the
    element of a tuple argument of floats is ("tuple", j)."""
    pos = []
    for k, a in enumerate(args):
        if is_float_scalar(a):
            pos.append((k, None))
        elif is_float_array(a):
            for idx in np.ndindex(a.shape):
                pos.append((k, idx))
        elif isinstance(a, tuple) and a and all(is_float_scalar(v) for v in a):
            for j in range(len(a)):
                pos.append((k, ("tuple", j)))
    return pos


def _with_tuple_item(t, j, v):
    return t[:j] + (v,) + t[j + 1:]


def _components(value, path):
    """Float components of a result: (path expression, kind, shape)."""
    out = []
    if isinstance(value, tuple):
        for i, v in enumerate(value):
            out += _components(v, "%s[%d]" % (path, i))
    elif isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            out.append((path, "array", value.shape))
        elif value.dtype.kind == "c":
            out.append((path + ".real", "array", value.shape))
            out.append((path + ".imag", "array", value.shape))
    elif is_float_scalar(value):
        out.append((path, "scalar", ()))
    elif isinstance(value, (complex, np.complexfloating)):
        out.append((path + ".real", "scalar", ()))
        out.append((path + ".imag", "scalar", ()))
    return out


class Setup(Exception):
    """The entry cannot be measured as written (reported as the class it carries)."""

    def __init__(self, cls, msg):
        super().__init__(msg)
        self.cls = cls


def build_loss(entry, njit_out):
    """Python source of the loss around the function and its weights, or None when the
    function returns a float itself and writes no output argument."""
    fn = entry["fn"]
    outputs = tuple(entry.get("outputs", ()))
    if not outputs and is_float_scalar(njit_out):
        return None
    params = list(inspect.signature(fn).parameters)[:entry["nargs"]]
    comps = []
    if njit_out is not None:
        items = entry.get("ret_items")
        if items is not None and isinstance(njit_out, tuple):
            for i in items:
                comps += _components(njit_out[i], "_r[%d]" % i)
        else:
            comps += _components(njit_out, "_r")
    for k in outputs:
        comps.append(("_o%d" % k, "array", None))
    if not comps:
        raise Setup("NOT_FLOAT", "the result has no float component (%s)" % type(njit_out).__name__)
    wrng = np.random.default_rng(12345)
    weights = {}
    terms = []
    call_args = []
    lines = []
    for k, p in enumerate(params):
        if k in outputs:
            lines.append("    _o%d = %s.copy()" % (k, p))
            call_args.append("_o%d" % k)
        else:
            call_args.append(p)
    lines.append("    _r = _inner(%s)" % ", ".join(call_args))
    for j, (expr, kind, shape) in enumerate(comps):
        w = "_W%d" % j
        if kind == "scalar":
            weights[w] = float(wrng.standard_normal())
            terms.append("%s * %s" % (w, expr))
        else:
            if shape is None:
                shape = entry["_args_shape"][int(expr[2:])]
            weights[w] = wrng.standard_normal(shape)
            terms.append("np.%s(%s * %s)" % (entry.get("loss_sum", "sum"), expr, w))
    if entry.get("loss_expr"):
        # a loss the entry names (the value a library reads out of an output argument)
        terms = [entry["loss_expr"]]
        weights = {}
    lines.append("    return " + " + ".join(terms))
    src = "def _loss(%s):\n%s\n" % (", ".join(params), "\n".join(lines))
    return src, weights


def make_loss(src, weights, inner):
    ns = {"np": np, "_inner": inner}
    ns.update(weights)
    exec(compile(src, "<corpus loss>", "exec"), ns)
    return ns["_loss"]


# ----------------------------------------------------------------------------- checking

def fd_gradient(f, args, positions, step, f0=None):
    """Central differences of f at args, one per position; h = step * max(1, |x|).
    With f0 (the value at args), also the second differences f(x+h) + f(x-h) - 2 f0."""
    out = np.empty(len(positions))
    second = np.empty(len(positions))
    for n, (k, idx) in enumerate(positions):
        a = list(copy_args(args))
        if idx is None:
            x0 = float(a[k])
            h = step * max(1.0, abs(x0))
            a[k] = x0 + h
            fp = f(*copy_args(a))
            a[k] = x0 - h
            fm = f(*copy_args(a))
        elif isinstance(idx, tuple) and idx and idx[0] == "tuple":
            t0 = a[k]
            x0 = float(t0[idx[1]])
            h = step * max(1.0, abs(x0))
            a[k] = _with_tuple_item(t0, idx[1], x0 + h)
            fp = f(*copy_args(a))
            a[k] = _with_tuple_item(t0, idx[1], x0 - h)
            fm = f(*copy_args(a))
            a[k] = t0
        else:
            arr = a[k]
            x0 = float(arr[idx])
            h = step * max(1.0, abs(x0))
            arr[idx] = x0 + h
            fp = f(*copy_args(a))
            arr[idx] = x0 - h
            fm = f(*copy_args(a))
            arr[idx] = x0
        out[n] = (float(fp) - float(fm)) / (2.0 * h)
        if f0 is not None:
            second[n] = float(fp) + float(fm) - 2.0 * f0
    if f0 is None:
        return out
    return out, second


def flatten_grad(grads, args, positions):
    """The gradient at each position; NaN-tagged None for a float argument given None."""
    vals = np.empty(len(positions))
    missing = set()
    for n, (k, idx) in enumerate(positions):
        g = grads[k]
        if g is None:
            vals[n] = 0.0
            missing.add(k)
        elif idx is None:
            vals[n] = float(g)
        elif isinstance(idx, tuple) and idx and idx[0] == "tuple":
            vals[n] = float(g[idx[1]])
        else:
            vals[n] = float(g[idx])
    return vals, missing


def tolerance(fd, fvalue):
    scale = float(np.max(np.abs(fd))) if fd.size else 0.0
    return RTOL * np.abs(fd) + ATOL_REL * scale + 1e-9 * abs(fvalue)


def compare_point(gfn, loss_py, args, positions):
    """One seeded point: ("RIGHT"|"WRONG"|"NONSMOOTH", detail dict)."""
    fvalue = float(loss_py(*copy_args(args)))
    if not math.isfinite(fvalue):
        return "NONSMOOTH", {"why": "the function is not finite at this point"}
    grads = gfn.grad(*copy_args(args))
    if not isinstance(grads, tuple):
        grads = (grads,)
    g, missing = flatten_grad(grads, args, positions)
    try:
        fa, sa = fd_gradient(loss_py, args, positions, STEPS[0], fvalue)
        fb, sb = fd_gradient(loss_py, args, positions, STEPS[1], fvalue)
    except Exception as exc:  # noqa: BLE001
        return "NONSMOOTH", {"why": "the function raises at a perturbed point (%s: %s)"
                                    % (type(exc).__name__, first_line(exc))}
    if not (np.all(np.isfinite(fa)) and np.all(np.isfinite(fb))):
        return "NONSMOOTH", {"why": "finite differences not finite"}
    tol = tolerance(fb, fvalue)
    smooth = np.abs(fa - fb) <= 10 * tol + 1e-7 * np.abs(fb)
    # a jump at the point itself leaves the central differences stable but not the second
    # differences: for a smooth function they shrink with h**2 (100x from 1e-5 to 1e-6)
    floor = 1e-7 * (1.0 + abs(fvalue))
    jump = (np.abs(sb) > floor) & (np.abs(sa) > floor) & (np.abs(sa) < 10.0 * np.abs(sb))
    smooth &= ~jump
    ok = np.abs(g - fb) <= tol
    ok |= np.abs(g - fa) <= tolerance(fa, fvalue)
    bad = ~ok
    if bad.any():
        for s in EXTRA_STEPS:
            idx = np.nonzero(~ok)[0]
            sub = [positions[i] for i in idx]
            try:
                fd_s = fd_gradient(loss_py, args, sub, s)
            except Exception:  # noqa: BLE001
                continue
            ok[idx] |= np.abs(g[idx] - fd_s) <= RTOL * np.abs(fd_s) + (tol[idx] - RTOL * np.abs(fb[idx]))
    # a float argument given None, whose finite difference is not zero
    for k in missing:
        comp = [i for i, p in enumerate(positions) if p[0] == k]
        if any(abs(fb[i]) > tol[i] for i in comp):
            if all(smooth[i] for i in comp):
                return "WRONG", {"why": "gradient None for float argument %d whose finite "
                                        "difference is not zero" % k}
    if not positions:
        return "NONSMOOTH", {"why": "no float argument to compare"}
    if ok.all():
        return "RIGHT", {"ncomp": len(positions),
                         "zero": bool(np.all(fb == 0.0) and np.all(g == 0.0))}
    bad = np.nonzero(~ok)[0]
    if not np.all(np.isfinite(g[bad])):
        if all(smooth[i] for i in bad):
            i = bad[0]
            return "WRONG", {"why": "gradient not finite where the finite difference is "
                                    "(argument %d, element %s: grad %r, fd %r)"
                                    % (positions[i][0], positions[i][1], g[i], fb[i])}
    if not all(smooth[i] for i in bad):
        return "NONSMOOTH", {"why": "finite differences unstable across steps"}
    err = np.abs(g - fb)
    i = bad[int(np.argmax(err[bad]))]
    scale = max(float(np.max(np.abs(fb))), 1e-300)
    return "WRONG", {"why": "gradient differs from finite differences: argument %d element %s: "
                            "grad %.10g, fd %.10g (%d of %d components off; largest error "
                            "%.3g of the gradient's scale %.3g)"
                            % (positions[i][0], positions[i][1], g[i], fb[i], len(bad),
                               len(positions), err[i] / scale, scale)}


LOOSE_STEPS = (1e-3, 1e-2)
LOOSE_RTOL = 1e-2


def loose_check(gfn, loss_py, args, positions):
    """For a function whose finite differences are unstable at the small steps (float32
    inside, a jump near the point): the gradient against central differences at the steps
    1e-3 and 1e-2, relative tolerance 1e-2 of the largest component. Only a note; the
    class stays UNCHECKED."""
    try:
        grads = gfn.grad(*copy_args(args))
        if not isinstance(grads, tuple):
            grads = (grads,)
        g, _ = flatten_grad(grads, args, positions)
        best = None
        for step in LOOSE_STEPS:
            fd = fd_gradient(loss_py, args, positions, step)
            scale = max(float(np.max(np.abs(fd))), 1e-300)
            err = float(np.max(np.abs(g - fd))) / scale
            best = err if best is None else min(best, err)
        return {"agrees": bool(best <= LOOSE_RTOL), "relative_error": float("%.3g" % best)}
    except Exception as exc:  # noqa: BLE001
        return {"agrees": None, "error": "%s: %s" % (type(exc).__name__, first_line(exc))}


def values_equal(a, b):
    a = float(a)
    b = float(b)
    if math.isnan(a) and math.isnan(b):
        return True
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


# ----------------------------------------------------------------------------- one entry

class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout("no result after %d s" % ENTRY_TIMEOUT_S)


def classify_error(exc):
    from numba_adstack.errors import (AdjointArgumentError, AdjointReadError,
                                      AdStackBudgetError, NonDifferentiableError)
    if isinstance(exc, NonDifferentiableError):
        return "REFUSED", "NonDifferentiableError: " + first_line(exc)
    if isinstance(exc, AdStackBudgetError):
        return "REFUSED", "AdStackBudgetError: " + first_line(exc)
    if isinstance(exc, (AdjointReadError, AdjointArgumentError)):
        return "CRASH", "%s: %s" % (type(exc).__name__, first_line(exc))
    return "CRASH", "%s: %s" % (type(exc).__name__, first_line(exc))


def run_entry(entry):
    import numba
    import numba_adstack as nad

    res = {"name": entry["name"], "module": entry["module"], "source": entry["source"],
           "group": entry.get("group", ""), "class": None, "message": "", "notes": []}
    t0 = time.time()
    fn = entry["fn"]
    make = entry["args"]
    options = dict(entry.get("options", {}))
    if options:
        res["options"] = options
    old = signal.signal(signal.SIGALRM, _alarm) if hasattr(signal, "SIGALRM") else None
    if old is not None:
        signal.alarm(ENTRY_TIMEOUT_S)
    try:
        args0 = tuple(make(np.random.default_rng(SEEDS[0])))
        entry["nargs"] = len(args0)
        entry["_args_shape"] = [np.shape(a) for a in args0]
        # 1. numba.njit must compile and run it
        try:
            nj = numba.njit(fn, **options)
            njit_out = nj(*copy_args(args0))
        except Exception as exc:  # noqa: BLE001
            res["class"] = "NJIT_FAIL"
            res["message"] = "%s: %s" % (type(exc).__name__, first_line(exc))
            return res
        # 2. the loss
        built = build_loss(entry, njit_out)
        if built is None:
            loss_py = fn
            target = fn
            res["loss"] = "the function's own float result"
        else:
            src, weights = built
            loss_py = make_loss(src, weights, fn)
            target = make_loss(src, weights, numba.njit(fn, **options))
            res["loss"] = src.strip().splitlines()[-1].strip()
        nj_loss = numba.njit(target, **options) if built is not None else nj
        # 3. grad_jit and its gradient
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                gfn = nad.grad_jit(target, **options)
                tc = time.time()
                gfn.grad(*copy_args(args0))
                res["grad_compile_s"] = round(time.time() - tc, 2)
            except Exception as exc:  # noqa: BLE001
                res["class"], res["message"] = classify_error(exc)
                return res
            finally:
                msgs = sorted({"%s: %s" % (w.category.__name__, first_line(w.message))
                               for w in caught if "numba_adstack" in w.category.__module__})
                if msgs:
                    res["warnings"] = msgs
        # 4. compare, at one seeded point after another while the function is not smooth
        detail = None
        for seed in SEEDS:
            args = args0 if seed == SEEDS[0] else tuple(make(np.random.default_rng(seed)))
            # the finite differences are those of the plain Python function; where it cannot
            # run, or disagrees with Numba's primal, those of the njit function
            ref = loss_py
            try:
                vpy = float(loss_py(*copy_args(args)))
            except Exception as exc:  # noqa: BLE001
                vpy = None
                res["notes"].append("plain Python failed (%s: %s): differences of the njit "
                                    "function" % (type(exc).__name__, first_line(exc)))
                ref = nj_loss
            vnj = float(nj_loss(*copy_args(args)))
            if vpy is not None and not values_equal(vpy, vnj):
                res["notes"].append("plain Python %r and njit %r differ at seed %d: "
                                    "differences of the njit function" % (vpy, vnj, seed))
                ref = nj_loss
            try:
                vg = float(gfn(*copy_args(args)))
                if not values_equal(vg, vnj):
                    res["class"] = "WRONG"
                    res["message"] = ("primal of the grad_jit function %r differs from "
                                      "numba.njit's %r" % (vg, vnj))
                    return res
                positions = [p for p in diff_positions(args) if p[0] not in entry.get("nofd", ())]
                kind, detail = compare_point(gfn, ref, args, positions)
            except Timeout:
                raise
            except Exception as exc:  # noqa: BLE001
                res["class"], res["message"] = classify_error(exc)
                return res
            res["seed"] = seed
            if kind != "NONSMOOTH":
                break
        if kind == "NONSMOOTH":
            res["class"] = "UNCHECKED"
            res["message"] = detail["why"]
            if positions:
                lc = loose_check(gfn, ref, args, positions)
                res["loose_check"] = lc
                if lc.get("agrees") is not None:
                    res["message"] += ("; at steps 1e-3 and 1e-2 the gradient %s the "
                                       "differences to %.2g" % (
                                           "agrees with" if lc["agrees"] else "differs from",
                                           lc["relative_error"]))
        else:
            res["class"] = kind
            if kind == "WRONG":
                res["message"] = detail["why"]
            else:
                res["components"] = detail["ncomp"]
                if detail["zero"]:
                    res["notes"].append("the gradient is identically zero at this point")
        return res
    except Timeout as exc:
        res["class"] = "CRASH"
        res["message"] = "Timeout: %s" % exc
        return res
    except Setup as exc:
        res["class"] = exc.cls
        res["message"] = str(exc)
        return res
    except Exception as exc:  # noqa: BLE001
        res["class"] = "CRASH"
        res["message"] = "%s (in the harness): %s" % (type(exc).__name__, first_line(exc))
        res["traceback"] = traceback.format_exc().splitlines()[-6:]
        return res
    finally:
        if old is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        res["seconds"] = round(time.time() - t0, 2)


# ----------------------------------------------------------------------------- driver

CLASSES = ("RIGHT", "WRONG", "REFUSED", "CRASH", "UNCHECKED")


def _run_names(names):
    entries = {e["name"]: e for e in load_entries()}
    return [run_entry(entries[n]) for n in names]


def _cell(text):
    """A markdown table cell: pipes escaped, angle brackets as entities."""
    return (str(text).replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")
            .replace(">", "&gt;"))


def summarize(results, out=sys.stdout):
    """Markdown: counts per class, counts per group, the dropped entries, and every entry
    that is not RIGHT with its message."""
    counted = [r for r in results if r["class"] in CLASSES]
    dropped = [r for r in results if r["class"] not in CLASSES]
    counts = collections.Counter(r["class"] for r in counted)
    print("\n| class | entries |\n|---|---:|", file=out)
    for c in CLASSES:
        print("| %s | %d |" % (c, counts.get(c, 0)), file=out)
    print("| total | %d |" % len(counted), file=out)
    groups = []
    for r in counted:
        if r["group"] not in groups:
            groups.append(r["group"])
    print("\n| group | " + " | ".join(CLASSES) + " | total |", file=out)
    print("|---|" + "---:|" * (len(CLASSES) + 1), file=out)
    for g in groups:
        gc = collections.Counter(r["class"] for r in counted if r["group"] == g)
        print("| %s | %s | %d |" % (g, " | ".join(str(gc.get(c, 0)) for c in CLASSES),
                                    sum(gc.values())), file=out)
    if dropped:
        print("\nDropped (numba.njit itself fails, or no float result): %d\n" % len(dropped),
              file=out)
        print("| entry | source | reason |\n|---|---|---|", file=out)
        for r in dropped:
            print("| %s | %s | %s: %s |" % (r["name"], r["source"], r["class"],
                                           _cell(r["message"])), file=out)
    bad = [r for r in counted if r["class"] != "RIGHT"]
    if bad:
        print("\n| entry | class | source | message |\n|---|---|---|---|", file=out)
        for r in sorted(bad, key=lambda r: (CLASSES.index(r["class"]), r["name"])):
            print("| %s | %s | %s | %s |" % (r["name"], r["class"], r["source"],
                                             _cell(r["message"])), file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", default=[], help="entry name (repeatable)")
    ap.add_argument("--module", default=None, help="only modules whose name contains this")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--json", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--no-json", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--update", action="store_true",
                    help="run the selection and replace its records in the existing --json "
                         "file (each record keeps the commit it was measured at)")
    ap.add_argument("--from-json", default=None, metavar="PATH",
                    help="print the summary of an earlier run's results file and exit")
    a = ap.parse_args(argv)
    if a.from_json:
        with open(a.from_json) as fh:
            payload = json.load(fh)
        summarize(payload["results"])
        print("\n%d entries in %.0f s (numba %s, numba_adstack commit %s)"
              % (len(payload["results"]), payload["wall_seconds"], payload["numba"],
                 payload["numba_adstack_commit"]))
        for u in payload.get("updates", []):
            print("%d of them measured again at commit %s (--update)"
                  % (len(u["entries"]), u["commit"]))
        return 0

    import numba
    import numba_adstack  # noqa: F401  (imported once: the run measures this code)
    head = _git_head()    # the commit of the code imported now, not of the tree at the end
    modified = _tree_modified()
    entries = load_entries(a.module)
    if a.only:
        wanted = set(a.only)
        unknown = wanted - {e["name"] for e in entries}
        if unknown:
            ap.error("unknown entries: %s" % ", ".join(sorted(unknown)))
        entries = [e for e in entries if e["name"] in wanted]
    names = [e["name"] for e in entries]
    t0 = time.time()
    results = []
    if a.jobs <= 1:
        for e in entries:
            r = run_entry(e)
            results.append(r)
            if not a.quiet:
                print("%-9s %-45s %6.1fs %s" % (r["class"], r["name"], r.get("seconds", 0),
                                               r["message"][:150]), flush=True)
    else:
        import multiprocessing
        shards = [names[k::a.jobs] for k in range(a.jobs)]
        with multiprocessing.get_context("spawn").Pool(a.jobs) as pool:
            for part in pool.map(_run_names, shards):
                results += part
        order = {n: i for i, n in enumerate(names)}
        results.sort(key=lambda r: order[r["name"]])
    wall = time.time() - t0
    summarize(results)
    print("\n%d entries in %.0f s" % (len(results), wall))
    for r in results:
        r["commit"] = head
    if not a.no_json and a.update and os.path.exists(a.json):
        with open(a.json) as fh:
            payload = json.load(fh)
        fresh = {r["name"]: r for r in results}
        payload["results"] = [fresh.pop(r["name"], r) for r in payload["results"]]
        payload["results"] += list(fresh.values())
        payload["counts"] = dict(collections.Counter(r["class"] for r in payload["results"]))
        payload.setdefault("updates", []).append(
            {"commit": head, "tree_modified": modified, "entries": sorted(r["name"] for r in results)})
        with open(a.json, "w") as fh:
            json.dump(payload, fh, indent=1)
        print("updated %d records of %s" % (len(results), os.path.relpath(a.json, os.getcwd())))
    elif not a.no_json:
        payload = {
            "numba": numba.__version__,
            "numpy": np.__version__,
            "python": sys.version.split()[0],
            "numba_adstack_commit": head,
            "numba_adstack_tree_modified": modified,
            "wall_seconds": round(wall, 1),
            "selection": {"only": a.only, "module": a.module},
            "counts": dict(collections.Counter(r["class"] for r in results)),
            "results": results,
        }
        with open(a.json, "w") as fh:
            json.dump(payload, fh, indent=1)
        print("wrote %s" % os.path.relpath(a.json, os.getcwd()))
    return 0


def _tree_modified():
    """Whether numba_adstack/ differs from the recorded commit (uncommitted changes)."""
    try:
        import subprocess
        out = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "numba_adstack"],
                             capture_output=True, text=True, check=True).stdout
        return bool(out.strip())
    except Exception:  # noqa: BLE001
        return None


def _git_head():
    try:
        import subprocess
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except Exception:  # noqa: BLE001
        return None


if __name__ == "__main__":
    sys.exit(main())
