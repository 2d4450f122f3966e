"""Lists, typed Lists and typed Dicts in grad_jit code.

A loop over a list of numbers that the gradient does not flow through (an argument, a
list of constants) differentiates in the rest; a container that differentiable values are
put into (``append``, ``extend``, ``L[k] = v``, ``d[key] = v``, through any name that holds
it) is seen as holding them, so reading them back is refused by name, never taken as a
constant (that gave a zero gradient)."""
import numpy as np
import pytest
from numba import types
from numba.typed import Dict, List

import numba_adstack as nad
from numba_adstack import NonDifferentiableError

from conftest import check_fd

X = np.array([0.3, 0.7, 1.1])


def loop_over_list(x, weights):
    s = 0.0
    for w in weights:
        s += np.sin(w * x[0]) + w * x[1] ** 2
    return s


def loop_over_list_with_break(x, steps):
    v = x[0]
    for h in steps:
        if v > 4.0:
            break
        v = v + h * np.cos(v) * x[1]
    return v


@pytest.mark.parametrize("fn,container", [
    (loop_over_list, [0.5, 1.5, 2.0]),
    (loop_over_list, List([0.5, 1.5, 2.0])),
    (loop_over_list_with_break, [0.1, 0.2, 0.4, 0.8]),
])
def test_loop_over_a_list_the_gradient_does_not_flow_through(fn, container):
    f = nad.grad_jit(fn)
    check_fd(f, X.copy(), container)


def appended_then_looped(x):
    L = []
    for i in range(x.shape[0]):
        L.append(x[i] * 2.0)
    s = 0.0
    for v in L:
        s += v * v
    return s


def appended_then_indexed(x):
    L = []
    for i in range(x.shape[0]):
        L.append(x[i] * 2.0)
    s = 0.0
    for i in range(len(L)):
        s += L[i] * L[i]
    return s


def typed_list_appended(x):
    L = List()
    for i in range(x.shape[0]):
        L.append(x[i] * 2.0)
    s = 0.0
    for i in range(len(L)):
        s += L[i] ** 2
    return s


def appended_through_another_name(x):
    L = []
    M = L
    for i in range(x.shape[0]):
        M.append(x[i] * 2.0)
    return L[0] + L[1]


def extended(x):
    L = [1.0, 2.0]
    L.extend([x[0], x[1]])
    return L[2] * L[3]


def stored_into(x):
    L = [0.0] * 3
    for i in range(3):
        L[i] = x[i] ** 2
    return L[0] + L[1] + L[2]


def comprehension(x):
    L = [x[i] ** 2 for i in range(x.shape[0])]
    s = 0.0
    for i in range(len(L)):
        s += L[i]
    return s


def typed_dict_stored_into(x):
    d = Dict.empty(types.int64, types.float64)
    for i in range(x.shape[0]):
        d[i] = x[i] * 2.0
    return d[0] * d[2]


def arrays_appended(x):
    L = []
    for i in range(3):
        L.append(x * float(i + 1))
    return np.sum(L[1] * L[2])


def test_arrays_read_out_of_a_list_are_refused_with_the_fix():
    f = nad.grad_jit(arrays_appended)
    with pytest.raises(NonDifferentiableError, match=r"reading arrays out of a .*keep them "
                       r"in a tuple, or in the rows of one array"):
        f.grad(X.copy())


@pytest.mark.parametrize("fn", [appended_then_looped, appended_then_indexed,
                                typed_list_appended, appended_through_another_name,
                                extended, stored_into, comprehension,
                                typed_dict_stored_into])
def test_a_container_holding_differentiable_values_is_refused_not_zero(fn):
    f = nad.grad_jit(fn)
    assert np.isfinite(f(X.copy()))          # the primal runs as njit runs it
    with pytest.raises(NonDifferentiableError, match=r"reading floats out of a .* that "
                       r"differentiable values were put into; keep them in an array"):
        f.grad(X.copy())


def appends_in_a_checkpointed_loop(x, n):
    L = [0.0]
    v = x[0]
    for t in nad.checkpoint(range(n)):
        L.append(float(t))
        v = np.sin(v) * 1.01 + x[1]
    return v * len(L)


def test_a_checkpointed_loop_changing_a_list_is_refused():
    # A segment run again would append again: the loop keeps its history or is refused.
    f = nad.grad_jit(appends_in_a_checkpointed_loop)
    with pytest.raises(NonDifferentiableError, match=r"it changes 'L' \(a list"):
        f.grad(X.copy(), 10)
    check_fd(nad.grad_jit(appends_in_a_checkpointed_loop, checkpoint="off"), X.copy(), 10)
