"""Finite differences through tuples, and the solvers the function-value tests share:
Newton, bisection, golden section and Simpson's rule, each taking a jitted function and
the tuple of its extra arguments, as SciPy and QuantEcon write them."""
import math

import numba
import numpy as np


def _perturbed(args, path, h):
    """``args`` with the float at ``path`` (indices through tuples, then an array index)
    moved by ``h``; arrays are copied."""
    def walk(v, rest):
        if not rest:
            return v + h
        if isinstance(v, tuple):
            k = rest[0]
            return tuple(walk(x, rest[1:]) if j == k else _copied(x) for j, x in enumerate(v))
        out = v.copy()
        out[rest[0]] += h
        return out
    return walk(tuple(args), path)


def _copied(v):
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, tuple):
        return tuple(_copied(x) for x in v)
    return v


def fd_tree(fn, args, eps=1e-6):
    """Central differences of ``fn`` for every float in ``args``, shaped like ``f.grad``:
    a float for a float, an array for a float array, a tuple for a tuple, None otherwise."""
    def walk(v, path):
        if isinstance(v, float):
            h = eps * max(1.0, abs(v))
            return (fn(*_perturbed(args, path, h)) - fn(*_perturbed(args, path, -h))) / (2 * h)
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            g = np.zeros(v.shape)
            for idx in np.ndindex(v.shape):
                h = eps * max(1.0, abs(v[idx]))
                g[idx] = (fn(*_perturbed(args, path + (idx,), h))
                          - fn(*_perturbed(args, path + (idx,), -h))) / (2 * h)
            return g
        if isinstance(v, tuple):
            return tuple(walk(x, path + (k,)) for k, x in enumerate(v))
        return None
    return tuple(walk(a, (k,)) for k, a in enumerate(args))


def assert_tree_close(got, want, rtol=1e-6, atol=1e-8, where="gradient"):
    """``got`` has the shape of ``want`` (None where ``want`` is None) and its values."""
    if want is None:
        assert got is None, "%s: expected None, got %r" % (where, got)
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), (where, got)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_tree_close(g, w, rtol, atol, "%s[%d]" % (where, k))
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.shape == want.shape, (where, got)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=where)
    else:
        assert isinstance(got, float), (where, got)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=where)


def check_tree(f, *args, rtol=1e-6, atol=1e-8, eps=1e-6):
    """``f.grad(*args)`` against finite differences of the primal; returns it."""
    got = f.grad(*args)
    assert_tree_close(got, fd_tree(f, args, eps), rtol, atol)
    return got


# ---------------------------------------------------------------------- solvers
@numba.njit
def newton(func, x0, fprime, args=(), tol=1e-13, maxiter=50):
    p0 = x0
    for _ in range(maxiter):
        p = p0 - func(p0, *args) / fprime(p0, *args)
        if abs(p - p0) < tol:
            return p
        p0 = p
    return p0


@numba.njit
def newton_while(func, x0, fprime, args=(), tol=1e-13):
    """Newton with a ``while`` loop and a run-time iteration count."""
    p0 = x0
    p = p0 - func(p0, *args) / fprime(p0, *args)
    while abs(p - p0) >= tol:
        p0 = p
        p = p0 - func(p0, *args) / fprime(p0, *args)
    return p


@numba.njit
def bisect(f, a, b, args=(), xtol=1e-14, maxiter=200):
    fa = f(a, *args)
    for _ in range(maxiter):
        m = 0.5 * (a + b)
        fm = f(m, *args)
        if (fm < 0.0) == (fa < 0.0):
            a = m
            fa = fm
        else:
            b = m
        if b - a < xtol:
            break
    return 0.5 * (a + b)


@numba.njit
def golden_max(func, a, b, args=(), tol=1e-10):
    invphi = (math.sqrt(5.0) - 1.0) / 2.0
    c = b - invphi * (b - a)
    d = a + invphi * (b - a)
    fc = func(c, *args)
    fd = func(d, *args)
    while abs(b - a) > tol:
        if fc > fd:
            b = d
            d = c
            fd = fc
            c = b - invphi * (b - a)
            fc = func(c, *args)
        else:
            a = c
            c = d
            fc = fd
            d = a + invphi * (b - a)
            fd = func(d, *args)
    x = 0.5 * (a + b)
    return x, func(x, *args)


@numba.njit
def simpson(f, a, b, n, args=()):
    """Composite Simpson's rule with ``n`` (even) intervals."""
    h = (b - a) / n
    s = f(a, *args) + f(b, *args)
    for i in range(1, n):
        w = 4.0 if i % 2 == 1 else 2.0
        s += w * f(a + i * h, *args)
    return s * h / 3.0


@numba.njit
def kepler(E, e, M):
    return E - e * math.sin(E) - M


@numba.njit
def kepler_prime(E, e, M):
    return 1.0 - e * math.cos(E)
