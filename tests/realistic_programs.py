"""A corpus of realistic Numba programs, each with an independent check of its gradient.

The programs are written the way Numba users write them (helpers as separate
``@numba.njit`` functions, NumPy array expressions, views, tuples, ``zip``/``enumerate``
loops), not shaped for an AD tool. Each ``Case`` names

  * ``program``: the ``@numba.njit`` function as a user writes it;
  * ``loss``: a scalar ``@numba.njit`` function that calls the program (``None`` when
    the program itself returns a float); this is what gets differentiated. Losses reduce
    the program's results with plain loops (or ``.sum()``), so that what ``grad_jit``
    refuses is in the program, not in the loss;
  * ``make_args()``: small float64 arguments (finite differences over every element of the
    differentiated arguments must stay cheap);
  * ``wrt``: the indices of the arguments to differentiate;
  * ``program_args``: the program's arguments made from the loss's, when they differ
    (a loss taking floats that it packs into a tuple for the program).

The reference gradient is central finite differences of the pure-Python version of the
loss (``pure_python``: every ``numba.njit`` function it reaches is replaced by its
``py_func``), so it does not depend on Numba at all.

This module is a library (used by ``scripts/realistic_report.py`` and
``tests/realistic/test_realistic_programs.py``); the cases themselves live in
``realistic_cases_*.py`` beside it.
"""
import types as pytypes
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import numba
import numpy as np
from numba.core.registry import CPUDispatcher


@dataclass
class Case:
    name: str
    description: str
    program: object                  # a numba.njit dispatcher
    make_args: Callable[[], tuple]
    wrt: Tuple[int, ...]
    loss: Optional[object] = None     # a numba.njit dispatcher returning a float
    rtol: float = 1e-5               # tolerance of the gradient check (normwise)
    # the program's arguments from the loss's (when the loss takes other arguments)
    program_args: Callable[[tuple], tuple] = lambda args: args

    @property
    def target(self):
        """The scalar function whose gradient is checked."""
        return self.loss if self.loss is not None else self.program


def all_cases():
    """Every case, in a fixed order."""
    from realistic_cases_physics import CASES as physics
    from realistic_cases_data import CASES as data
    from realistic_cases_numeric import CASES as numeric
    cases = list(physics) + list(data) + list(numeric)
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    return cases


def get_case(name):
    for case in all_cases():
        if case.name == name:
            return case
    raise KeyError(name)


# --------------------------------------------------------------------------
# Rebuilding a program: pure Python, or freshly jitted (nothing compiled yet)
# --------------------------------------------------------------------------
def _code_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _code_names(const)
    return names


def _rebuild(fn, wrap, memo):
    """``fn`` (a function or a numba dispatcher) with every numba dispatcher it reaches
    through its globals rebuilt the same way, then passed through ``wrap``."""
    py = fn.py_func if isinstance(fn, CPUDispatcher) else fn
    if id(py) in memo:
        return memo[id(py)]
    new_globals = dict(py.__globals__)
    clone = pytypes.FunctionType(py.__code__, new_globals, py.__name__, py.__defaults__,
                                 py.__closure__)
    clone.__kwdefaults__ = py.__kwdefaults__
    clone.__qualname__ = py.__qualname__
    clone.__module__ = py.__module__
    result = wrap(clone)
    memo[id(py)] = result
    for name in _code_names(py.__code__):
        value = py.__globals__.get(name)
        if isinstance(value, CPUDispatcher):
            new_globals[name] = _rebuild(value, wrap, memo)
    return result


def pure_python(fn):
    """The pure-Python version of ``fn``: no Numba anywhere down its call tree."""
    return _rebuild(fn, lambda f: f, {})


def fresh_jit(fn, decorator=numba.njit):
    """``fn`` and every njit function it calls, rejitted: new dispatchers with nothing
    compiled, so that the first call measures the whole compilation. ``decorator`` is
    applied to ``fn`` itself (``numba_adstack.grad_jit`` for instance), ``numba.njit`` to
    its callees."""
    top_code = (fn.py_func if isinstance(fn, CPUDispatcher) else fn).__code__
    return _rebuild(fn, lambda f: decorator(f) if f.__code__ is top_code else numba.njit(f),
                    {})


# --------------------------------------------------------------------------
# Arguments, finite differences, comparisons
# --------------------------------------------------------------------------
def copy_args(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def fd_grad(fn, args, wrt, eps=1e-6):
    """Central finite differences of the scalar ``fn`` with respect to the arguments in
    ``wrt``, shaped like ``f.grad``: an array for a float array, a float for a float,
    ``None`` for every argument not in ``wrt``. Each evaluation gets fresh copies."""
    grads = []
    for k, a in enumerate(args):
        if k not in wrt:
            grads.append(None)
        elif isinstance(a, np.ndarray):
            g = np.zeros(a.shape)
            for idx in np.ndindex(a.shape):
                h = eps * max(1.0, abs(a[idx]))
                plus, minus = list(copy_args(args)), list(copy_args(args))
                plus[k][idx] += h
                minus[k][idx] -= h
                g[idx] = (fn(*plus) - fn(*minus)) / (2 * h)
            grads.append(g)
        else:
            h = eps * max(1.0, abs(a))
            plus, minus = list(copy_args(args)), list(copy_args(args))
            plus[k] = a + h
            minus[k] = a - h
            grads.append((fn(*plus) - fn(*minus)) / (2 * h))
    return tuple(grads)


def gradient_error(got, want, wrt):
    """The largest normwise relative error over the arguments in ``wrt``:
    ``max|got - want| / max(max|want|, 1e-12)``; ``inf`` when an entry is missing or
    shaped wrongly."""
    worst = 0.0
    for k in wrt:
        if got[k] is None:
            return float("inf")
        g = np.asarray(got[k], dtype=np.float64)
        w = np.asarray(want[k], dtype=np.float64)
        if g.shape != w.shape:
            return float("inf")
        scale = max(float(np.max(np.abs(w))) if w.size else 0.0, 1e-12)
        err = float(np.max(np.abs(g - w))) / scale if w.size else 0.0
        if not np.isfinite(err):
            return float("inf")
        worst = max(worst, err)
    return worst


def results_equal(a, b, rtol=1e-10, atol=1e-12):
    """Numba's result against Python's: floats, arrays, and tuples of them."""
    if isinstance(a, tuple):
        return (isinstance(b, tuple) and len(a) == len(b)
                and all(results_equal(x, y, rtol, atol) for x, y in zip(a, b)))
    return bool(np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol))


def reference_gradient(case, eps=1e-6):
    """Central finite differences of the pure-Python loss at ``case.make_args()``."""
    args = case.make_args()
    return fd_grad(pure_python(case.target), args, case.wrt, eps=eps)


def check_primal(case):
    """The compiled program and loss against their pure-Python versions at
    ``case.make_args()``; returns a list of problems (empty when they agree)."""
    problems = []
    args = case.make_args()
    pairs = [("program", case.program, case.program_args(args))]
    if case.loss is not None:
        pairs.append(("loss", case.loss, args))
    for label, fn, fn_args in pairs:
        got = fn(*copy_args(fn_args))
        want = pure_python(fn)(*copy_args(fn_args))
        if not results_equal(got, want):
            problems.append("%s: numba %r, Python %r" % (label, got, want))
    value = case.target(*copy_args(args))
    if not (isinstance(value, float) and np.isfinite(value)):
        problems.append("loss is %r, not a finite float" % (value,))
    return problems
