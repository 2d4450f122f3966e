"""Shared helpers of the gradient tests: central finite differences and comparisons; the
suite's optimisation level and the order in which its files are handed to the workers."""
import os
import sys

import numpy as np

import pytest


#: The longer sweeps (more forms and shapes of what the default run covers once) run with
#: NUMBA_ADSTACK_TESTS_FULL=1 (or NUMBA_ADSTACK_ARRAY_RULES_FULL=1, the rules' own).
FULL_SWEEP = "1" in (os.environ.get("NUMBA_ADSTACK_TESTS_FULL"),
                     os.environ.get("NUMBA_ADSTACK_ARRAY_RULES_FULL"))
full_sweep = pytest.mark.skipif(not FULL_SWEEP,
                                reason="the full sweep: NUMBA_ADSTACK_TESTS_FULL=1")


# Numba compiles are most of the suite's time, and LLVM's optimisation and code generation
# are a large part of each (the numerics do not depend on the level: no fast-math flags
# either way). The suite compiles at -O0 unless NUMBA_OPT is set (a third less time than
# -O1); the tests that read optimised LLVM IR or PTX are marked `optimised` and compile at
# -O1, and processes started to test caching run at -O1 (Numba caches no code that keeps
# a dynamic global, as -O0 code may). `NUMBA_OPT=3 python -m pytest` runs everything at
# the default level, and the README's fresh-install demo
# (tests/docs_and_benchmarks/test_readme.py) always does.
SUITE_OPT = 0
OPTIMISED_OPT = 1
# (the workers pytest-xdist starts inherit the level, and the mark that the suite set it)
OPT_SET_BY_SUITE = "NUMBA_OPT" not in os.environ or \
    os.environ.get("NUMBA_ADSTACK_SUITE_OPT") == os.environ["NUMBA_OPT"]
if OPT_SET_BY_SUITE:
    os.environ["NUMBA_OPT"] = os.environ["NUMBA_ADSTACK_SUITE_OPT"] = str(SUITE_OPT)
    if "numba" in sys.modules:            # imported by a plugin before this file
        import numba
        numba.config.OPT = type(numba.config.OPT)(SUITE_OPT)


def subprocess_opt():
    """NUMBA_OPT for a process a test starts to check Numba's cache."""
    return str(OPTIMISED_OPT) if OPT_SET_BY_SUITE else os.environ["NUMBA_OPT"]


@pytest.fixture(autouse=True)
def _optimised_compiles(request):
    """Tests marked ``optimised`` compile at -O1 while the suite runs at -O0."""
    if not OPT_SET_BY_SUITE or request.node.get_closest_marker("optimised") is None:
        yield
        return
    import numba
    old = numba.config.OPT
    numba.config.OPT = type(old)(OPTIMISED_OPT)
    try:
        yield
    finally:
        numba.config.OPT = old


# The files that take longest, first: `--dist loadfile` hands whole files to the two
# workers in this order, so the longest ones do not start last (time per file at -O0). Files
# in any folder of tests/, by name.
LONGEST_FIRST = ["test_buffer_idioms.py", "test_grad_array_rules.py", "test_grad_numpy_more.py", "test_array_rules.py",
                 "test_checkpointing.py", "test_realistic_programs.py",
                 "test_grad_numpy_linalg.py", "test_interop.py", "test_jvp.py",
                 "test_benchmarks_smoke.py", "test_grad_numpy_programs.py", "test_docs.py",
                 "test_grad_numpy_ordinary.py", "test_memory_limits.py", "test_readme.py",
                 "test_checkpoint_marker.py", "test_map_loops.py", "test_grad_array_views.py",
                 "test_grad_from_jit.py", "test_grad_libraries.py", "test_grad_properties.py",
                 "test_grad_recursion.py", "test_grad_lists.py", "test_map_sums.py",
                 "test_plan_speed.py", "test_grad_second_order.py",
                 "test_fused_elementwise.py", "test_grad_cache.py", "test_grad_writes.py",
                 "test_grad_array_reductions.py", "test_workloads_real.py",
                 "test_shape_reads.py", "test_grad_dot_in_place.py", "test_grad_overlap.py"]


def pytest_collection_modifyitems(config, items):
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(os.path.basename(str(item.path)), len(rank)))


def backward_of(f, *args):
    """The backward ``f.grad(*args)`` runs, built if need be: its structure as compiled
    (``parallel``: it runs prange loops; ``checkpoint_note``: the loops it checkpoints)."""
    return f._backward(list(args))


def _copy_args(args, dtype=None):
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            a = a.copy()
            if dtype is not None and a.dtype.kind == "f":
                a = a.astype(dtype)
        out.append(a)
    return out


def fd_grad(fn, args, eps=1e-6):
    """Central finite differences of ``fn`` with respect to each float argument, in float64.

    Returns a tuple shaped like ``f.grad``: an array for float arrays, a float for float
    scalars, None otherwise. Every evaluation works on fresh copies of the arguments, so a
    function that writes into its arguments is differenced correctly.
    """
    base = _copy_args(args, np.float64)
    grads = []
    for k, a in enumerate(base):
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            g = np.zeros(a.shape)
            for idx in np.ndindex(a.shape):
                h = eps * max(1.0, abs(a[idx]))
                ap = _copy_args(base)
                am = _copy_args(base)
                ap[k][idx] += h
                am[k][idx] -= h
                g[idx] = (fn(*ap) - fn(*am)) / (2 * h)
            grads.append(g)
        elif isinstance(a, float):
            h = eps * max(1.0, abs(a))
            ap = _copy_args(base)
            am = _copy_args(base)
            ap[k] = a + h
            am[k] = a - h
            grads.append((fn(*ap) - fn(*am)) / (2 * h))
        else:
            grads.append(None)
    return tuple(grads)


def assert_grads_close(got, want, args, rtol=1e-6, atol=1e-8):
    """``got`` (from f.grad) has the documented form and matches ``want`` entry by entry."""
    assert isinstance(got, tuple) and len(got) == len(args)
    for k, (g, w, a) in enumerate(zip(got, want, args)):
        if w is None:
            assert g is None, "argument %d: expected None, got %r" % (k, g)
        elif isinstance(a, np.ndarray):
            assert isinstance(g, np.ndarray), "argument %d: %r" % (k, type(g))
            assert g.shape == a.shape and g.dtype == a.dtype, (k, g.shape, g.dtype)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol,
                                       err_msg="gradient of argument %d" % k)
        else:
            assert isinstance(g, float), "argument %d: %r" % (k, type(g))
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol,
                                       err_msg="gradient of argument %d" % k)


def check_fd(f, *args, rtol=1e-6, atol=1e-8, eps=1e-6):
    """f.grad(*args) against finite differences of f.py_func; the arguments stay unchanged."""
    before = _copy_args(args)
    got = f.grad(*args)
    for a, b in zip(args, before):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg="f.grad changed an argument")
    want = fd_grad(f.py_func, args, eps=eps)
    assert_grads_close(got, want, args, rtol=rtol, atol=atol)
    return got
