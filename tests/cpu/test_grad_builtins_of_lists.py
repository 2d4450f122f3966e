"""``sum``, ``max``, ``min`` of lists and tuples of floats (a comprehension, appends, a
list or tuple argument, with ``start``) and ``list(a)`` of an array, against central
finite differences; ``sum`` of an array keeps its rule."""
import numpy as np

import numba_adstack as nad

from conftest import check_fd, fd_grad

RNG = np.random.default_rng(36)


@nad.grad_jit
def comprehension(x):
    return sum([v * v for v in x]) + sum([x[i] * i for i in range(x.shape[0])], 0.5)


@nad.grad_jit
def appended(x, a):
    L = []
    for i in range(x.shape[0]):
        L.append(a * x[i] ** 3)
    return sum(L, start=a) * 2.0


@nad.grad_jit
def of_tuple(t, x):
    return sum(t) * np.sum(x) + sum((x[0], x[1] * x[2]))


@nad.grad_jit
def of_arrays(x, M):
    return sum(x * x) + sum(M[0] * M[1])


def test_sum_of_lists_made_in_the_function():
    x = RNG.standard_normal(6)
    check_fd(comprehension, x)
    check_fd(appended, x, 0.7)


def test_sum_of_a_tuple_argument_and_of_arrays():
    x = RNG.standard_normal(4)
    t = (0.3, -1.2, 2.5)
    gt, gx = of_tuple.grad(t, x)
    assert np.allclose(gt, [np.sum(x)] * 3)      # d/dt_k of sum(t) * sum(x)
    np.testing.assert_allclose(gx, fd_grad(lambda x: of_tuple.py_func(t, x), (x,))[0],
                               rtol=1e-6)
    check_fd(of_arrays, x, RNG.standard_normal((3, 4)))


@nad.grad_jit
def extremes(x):
    parts = []
    for i in range(1, x.shape[0]):
        parts.append(x[i] - x[i - 1])
    return max([v * v for v in x]) + min([v + 1.0 for v in x]) + sum(parts) * max(parts) \
        - min(parts) ** 2


@nad.grad_jit
def listed(x):
    L = list(x * 2.0)
    s = 0.0
    for v in L:
        s += v * v
    return s + max(L)


def test_max_min_of_lists_and_list_of_an_array():
    x = RNG.standard_normal(6)
    check_fd(extremes, x)
    check_fd(listed, x)
