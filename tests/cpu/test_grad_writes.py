"""Every write seen: arrays written through ``out`` arguments, in-place operators and their
``operator.i*`` function forms, ``.flat``, ``fill``, ``sort``, and memory shared through
views that calls make. Each gradient against central finite differences of the Python
function (given fresh copies, since these functions write into their arguments); what the
rewrite cannot follow is refused by name."""
import operator

import numpy as np
import pytest

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

X = np.array([0.3, 0.7, 1.1, 0.2, 0.5, 0.9])
Y = np.array([1.3, 0.4, 2.2, 0.6, 0.8, 1.7])


def fd(f, args, i, h=1e-6):
    """Central differences of ``f`` in argument ``i``, each call on fresh copies."""
    def run(k, step):
        a = [v.copy() if isinstance(v, np.ndarray) else v for v in args]
        if isinstance(a[i], np.ndarray):
            a[i].flat[k] += step
        else:
            a[i] += step
        return f(*a)
    x = args[i]
    if not isinstance(x, np.ndarray):
        return (run(0, h) - run(0, -h)) / (2 * h)
    g = np.zeros_like(x)
    for k in range(x.size):
        g.flat[k] = (run(k, h) - run(k, -h)) / (2 * h)
    return g


def check(f, *args):
    got = nad.grad_jit(f).grad(*[a.copy() if isinstance(a, np.ndarray) else a
                                 for a in args])
    for i, a in enumerate(args):
        np.testing.assert_allclose(got[i], fd(f, args, i), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------- out arguments
def ufunc_outs(x, y):
    a = np.empty_like(x)
    np.sin(x, a)                    # positional
    b = np.zeros_like(x)
    np.exp(y, out=b)                # keyword
    c = x * 1.0
    np.multiply(c, y, c)            # aliased with an input
    d = np.empty_like(x)
    r = np.add(x, y, out=(d,))      # a tuple, and the result used
    return np.sum(a * y) + np.sum(b) + np.sum(c * c) + np.sum(r * x)


def function_outs(A, x):
    o = np.empty(3)
    np.dot(A, x, o)
    c = np.empty_like(x)
    np.clip(x, 0.4, 1.0, c)
    r = np.empty_like(x)
    np.round(x * 7.0, 1, r)         # a step: no gradient, the value still counts
    m = np.empty_like(x)
    x.clip(0.5, 0.9, m)             # the method form
    return np.sum(o * o) + np.sum(c * c) + np.sum(r * x) + np.sum(m * x)


def test_out_arguments():
    check(ufunc_outs, X, Y)
    check(function_outs, np.arange(9.0).reshape(3, 3) / 7.0 + 0.1, X[:3])


def test_out_on_an_argument_seen_by_later_reads():
    def f(x, y):
        np.sin(x, x)                # x now holds sin(x)
        return np.sum(x * y)
    check(f, X, Y)


# ---------------------------------------------------------------------- in-place operators
def inplace_functions(x, y):
    a = x.copy()
    operator.imul(a, y)
    b = x.copy()
    operator.itruediv(b, y)
    c = x + 2.0
    operator.ipow(c, y)
    d = x.copy()
    operator.imod(d, y)
    e = x.copy()
    operator.ifloordiv(e, y)        # a step: what e held gets no gradient
    s = x[0]
    t = operator.iadd(s, y[0])      # floats: a new value, s unchanged
    return np.sum(a * a) + np.sum(b) + np.sum(c) + np.sum(d * d) + np.sum(e * x) + s * t


def test_operator_function_forms():
    check(inplace_functions, X, Y)


def test_imul_of_an_argument_read_after():
    def f(x, y):
        return np.sum(operator.imul(x, y) * x)
    check(f, X, Y)


@pytest.mark.parametrize("op", ["//=", "%=", "**="])
def test_augmented_operators_on_views(op):
    ns = {"np": np}
    exec("def f(x, y):\n    z = x.copy()\n    z[1:] %s y[1:]\n    z %s 1.5\n"
         "    return np.sum(z * z)\n" % (op, op), ns)
    check(ns["f"], X + 0.5, Y + 0.13)     # (no quotient on a step)


# ---------------------------------------------------------------------- methods and .flat
def methods_and_flat(x, y):
    a = x.copy()
    a.fill(y[0])
    b = x * y
    b.sort()
    c = x.copy().reshape(2, 3)
    c.flat[4] = y[1]
    d = x.reshape(2, 3)
    e = x.copy()
    e.flat[2] = y[2] * 2.0
    f = x * 2.0
    np.nan_to_num(f, copy=False)
    return (np.sum(a * x) + b[0] + 2.0 * b[-1] + np.sum(c * c) + d.flat[4] * y[3]
            + np.sum(e * e) + np.sum(f * y))


def test_methods_and_flat():
    check(methods_and_flat, X, Y)


def ellipsis_stores(x, y):
    z = np.zeros(6)
    z[...] = x * 3.0            # (its adjoint is read as z_bar[(...,)]: Numba lowers that)
    w = z.reshape(2, 3).copy()
    w[...] = w * y[0]
    return np.sum(z * y) + np.sum(w * w)


def test_stores_into_every_element_with_an_ellipsis():
    check(ellipsis_stores, X, Y)


# ---------------------------------------------------------------------- views made by calls
def test_a_fresh_array_reshaped_is_written_through_its_view():
    def f(x, y):
        z = np.zeros(6).reshape(2, 3)
        z[0, 1] = y[0]
        z[1, 2] = x[0]
        return np.sum(z * z)
    check(f, X, Y)


_REFUSED = {
    "write into the view": (
        "z = x.copy()\n    r = z.reshape(2, 3)\n    r[0, 1] = y[0]\n    return np.sum(z * z)",
        "writing into 'r', the result of `np.reshape` (line 3), which may share memory with 'z'"),
    "write into the operand after": (
        "z = x.copy()\n    r = z.ravel()\n    z[0] = y[0]\n    return np.sum(r * r)",
        "writing into 'z' after 'r' was made from it by `np.ravel` (line 3)"),
    "in place into the operand after": (
        "z = x.copy()\n    r = np.asarray(z)\n    z *= y\n    return np.sum(r * r)",
        "after 'r' was made from it by `np.asarray`"),
    "a reinterpreting view": (
        "z = x.copy()\n    r = z.view(np.float64)\n    z[1] = y[0]\n    return np.sum(r)",
        "made from it by `.view()`"),
    "a write the rewrite does not follow": (
        "z = (x * 1.0).reshape(2, 3)\n    np.fill_diagonal(z, y[0])\n    return np.sum(z)",
        "fill_diagonal() writes into the array"),
}


@pytest.mark.parametrize("case", sorted(_REFUSED))
def test_refused_by_name(case):
    body, message = _REFUSED[case]
    ns = {"np": np}
    exec("def f(x, y):\n    %s\n" % body, ns)
    with pytest.raises(NonDifferentiableError) as info:
        nad.grad_jit(ns["f"]).grad(X.copy(), Y.copy())
    text = str(info.value)
    assert message in text and "'f'" in text and "line" in text, text


def test_a_write_before_the_view_is_made_is_fine():
    def f(x, y):
        z = x.copy()
        z[0] = y[0]
        r = z.reshape(2, 3)
        return np.sum(r * r)
    check(f, X, Y)


def test_a_call_the_effect_table_does_not_know_may_write_what_it_is_given():
    from numba.core import types as nt
    from numba.extending import intrinsic

    @intrinsic
    def opaque(typingctx, a):
        def codegen(context, builder, signature, args):
            return context.get_dummy_value()
        return nt.none(a), codegen

    def f(x):
        z = x * 1.0
        opaque(z)
        return np.sum(z * z)
    with pytest.raises(NonDifferentiableError, match="may write into the array 'z'"):
        nad.grad_jit(f).grad(X)


_REFUSED_ALIASES = {
    "flat of unknown rank": (
        "z = np.diag(x * 1.0)\n    z.flat[2] = y[0]\n    return np.sum(z * z)",
        "a store through `.flat` of 'z'"),
    "a list of arrays": (
        "a = x.copy()\n    lst = [a, y.copy()]\n    lst[0][1] = y[2]\n    return np.sum(a * a)",
        "writing into an array read out of 'lst'"),
    "as_strided": (
        "z = x.copy()\n    v = np.lib.stride_tricks.as_strided(z, (2,), (8,))\n"
        "    v[0] = y[0]\n    return np.sum(z * z)",
        "the result of `as_strided` (line 3), which may share memory with 'z'"),
}


@pytest.mark.parametrize("case", sorted(_REFUSED_ALIASES))
def test_writes_through_aliases_the_rewrite_does_not_follow_are_refused(case):
    body, message = _REFUSED_ALIASES[case]
    ns = {"np": np}
    exec("def f(x, y):\n    %s\n" % body, ns)
    with pytest.raises(NonDifferentiableError, match=None) as info:
        nad.grad_jit(ns["f"]).grad(X[:3].copy(), Y[:3].copy())
    assert message in str(info.value), str(info.value)
