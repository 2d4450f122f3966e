"""Lists, typed Lists and typed Dicts in grad_jit code.

A loop over a list of numbers that the gradient does not flow through (an argument, a
list of constants) differentiates in the rest. A list of floats or a typed Dict of floats
that the function makes and fills (``append``, ``L[k] = v``, ``d[key] = v``, through any
name that holds it) differentiates through its items: it has an adjoint in the sweep.
What that adjoint cannot follow (``extend``, arrays in a list) is refused by name, never
taken as a constant (that gave a zero gradient)."""
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


def test_arrays_read_out_of_a_list():
    # The list's adjoint is a list of arrays (tests/memory/test_memory_model.py has more).
    g = nad.grad_jit(arrays_appended).grad(X.copy())
    np.testing.assert_allclose(g[0], 2.0 * 3.0 * 2.0 * X, rtol=1e-14)


def negative_index_and_repeated_constants(x):
    L = [0.0] * 2
    for i in range(x.shape[0]):
        L.append(np.sin(x[i]))
        L[0] = L[0] + L[-1] * x[0]
    return L[0] * L[-2] + L[-1] ** 2


def typed_list_of_a_type(x):
    L = List.empty_list(types.float64)
    for i in range(x.shape[0]):
        L.append(x[i] * x[i])
    return L[1] - L[0] * L[2]


def typed_dict_string_keys(x):
    d = Dict.empty(types.unicode_type, types.float64)
    d["a"] = x[0] * 3.0
    d["b"] = x[1]
    d["a"] = d["a"] * d["b"]
    return d["a"] + np.exp(d["b"])


def dict_literal(x):
    d = {}                      # Numba's typed Dict of the keys and values put in
    for i in range(x.shape[0]):
        d[i % 2] = x[i] * 3.0
    d[0] = d[0] * d[1]
    return d[0] + d[1]


@pytest.mark.parametrize("fn", [appended_then_looped, appended_then_indexed,
                                typed_list_appended, appended_through_another_name,
                                stored_into, comprehension, typed_dict_stored_into,
                                negative_index_and_repeated_constants,
                                typed_list_of_a_type, typed_dict_string_keys,
                                dict_literal])
def test_a_container_filled_with_differentiable_values(fn):
    check_fd(nad.grad_jit(fn), X.copy())


def popped(x):
    L = []
    for i in range(x.shape[0]):
        L.append(x[i] * 2.0)
    L.pop()
    return L[0] * L[1]


def dict_values_summed(x):
    d = Dict.empty(types.int64, types.float64)
    for i in range(x.shape[0]):
        d[i] = x[i] * 2.0
    s = 0.0
    for v in d.values():
        s += v
    return s


@pytest.mark.parametrize("fn,what", [
    (extended, r"calling \.extend on the list 'L'"),
    (popped, r"calling \.pop on the list 'L'"),
    (dict_values_summed, r"`for` over values\[DictType"),
])
def test_what_a_container_adjoint_cannot_follow_is_refused_naming_the_fix(fn, what):
    f = nad.grad_jit(fn)
    assert np.isfinite(f(X.copy()))          # the primal runs as njit runs it
    with pytest.raises(NonDifferentiableError, match=what):
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


V = np.array([0.5, -0.2, 0.9])


@pytest.mark.parametrize("fn", [appended_then_indexed, appended_then_looped,
                                typed_list_appended, typed_dict_stored_into,
                                negative_index_and_repeated_constants])
def test_forward_mode_follows_a_filled_container(fn):
    # The tangent of a list (Dict) is a list (Dict) filled in step: jvp = grad . v.
    f = nad.grad_jit(fn)
    _, tangent = f.jvp((X.copy(),), (V,))
    assert np.isclose(tangent, f.grad(X.copy())[0] @ V, rtol=1e-10, atol=1e-12)


def test_hvp_through_a_list():
    # f = 4 sum(x**2): H v = 8 v.
    (hv,) = nad.grad_jit(appended_then_indexed).hvp((X.copy(),), (V,))
    np.testing.assert_allclose(hv, 8.0 * V, rtol=1e-10)
