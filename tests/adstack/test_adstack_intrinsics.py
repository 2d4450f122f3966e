"""push/pop/top/size round trips, overflow and underflow, threads, typing errors, LLVM layout."""
import re
import threading

import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

import numba_adstack as nad
from numba_adstack import (adstack, push, pop, top, size, overflowed, clear,
                           AdStackOverflowError, AdStackUnderflowError)

# (reads optimised LLVM IR or PTX: compiled at -O1 while the suite runs at -O0)
pytestmark = pytest.mark.optimised

CAP = 8
ELEMENTS = [np.float32, np.float64, np.int32, np.int64, np.bool_, np.complex128]


def _make_roundtrip(dtype):
    if dtype is np.bool_:
        value = numba.njit(lambda i: i % 2 == 1)
    else:
        value = numba.njit(lambda i: i + 1)

    @numba.njit
    def roundtrip(n, out):
        # Pushes n values, then pops them back into out in reverse; returns size and top.
        st = adstack(dtype, CAP)
        for i in range(n):
            push(st, value(i))
        k = size(st)
        t = top(st) if n > 0 else out[0]
        for i in range(n):
            out[i] = pop(st)
        return k, t, size(st), overflowed(st)
    return roundtrip


ROUNDTRIPS = {dt: _make_roundtrip(dt) for dt in ELEMENTS}


def _expected(dtype, n):
    vals = [(i % 2 == 1) if dtype is np.bool_ else i + 1 for i in range(n)]
    return np.array(vals[::-1], dtype=dtype)


@pytest.mark.parametrize("dtype", ELEMENTS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("n", [0, 1, CAP - 1, CAP])
def test_roundtrip_up_to_capacity(dtype, n):
    out = np.zeros(CAP, dtype=dtype)
    k, t, after, ovf = ROUNDTRIPS[dtype](n, out)
    assert k == n and after == 0 and not ovf
    np.testing.assert_array_equal(out[:n], _expected(dtype, n))
    if n:
        assert t == _expected(dtype, n)[0]


@pytest.mark.parametrize("dtype", ELEMENTS, ids=lambda d: d.__name__)
def test_overflow_at_capacity_plus_one_then_next_call_is_right(dtype):
    out = np.zeros(CAP + 1, dtype=dtype)
    with pytest.raises(AdStackOverflowError) as exc:
        ROUNDTRIPS[dtype](CAP + 1, out)
    msg = str(exc.value)
    assert "roundtrip" in msg and "capacity of %d" % CAP in msg and "heap storage" in msg
    # Nothing outlives the failed call.
    out = np.zeros(CAP, dtype=dtype)
    k, _, after, _ = ROUNDTRIPS[dtype](3, out)
    assert (k, after) == (3, 0)
    np.testing.assert_array_equal(out[:3], _expected(dtype, 3))


@numba.njit
def _pop_empty(n, extra):
    st = adstack(np.float64, 4)
    for i in range(n):
        push(st, i)
    s = 0.0
    for i in range(n + extra):
        s += pop(st)
    return s


@numba.njit
def _top_empty():
    st = adstack(np.int32, 4)
    return top(st)


def test_pop_and_top_on_empty_raise_underflow():
    with pytest.raises(AdStackUnderflowError, match="pop on an empty adstack"):
        _pop_empty(2, 1)
    with pytest.raises(AdStackUnderflowError, match="_top_empty.*top on an empty"):
        _top_empty()
    assert _pop_empty(3, 0) == 3.0  # and the next call is right


def test_push_casts_and_rejects_float_into_int():
    @numba.njit
    def casts():
        st = adstack(numba.float32, 2)       # a Numba type works as the dtype too
        push(st, 3)                           # int into a float stack: cast
        b = adstack(np.int64, 2)
        push(b, np.int32(5))
        push(b, True)
        return pop(st), pop(b), pop(b)
    assert casts() == (3.0, 1, 5)

    @numba.njit
    def bad():
        st = adstack(np.int64, 2)
        push(st, 1.5)
    with pytest.raises(TypingError, match="cannot push a value of type float64 onto an "
                                          "adstack of int64"):
        bad()


@pytest.mark.parametrize("dtype", [np.float16, np.uint8])
def test_wrong_element_type_is_rejected(dtype):
    @numba.njit
    def f():
        st = adstack(dtype, 4)
        return size(st)
    with pytest.raises(TypingError, match="element type must be float32, float64, int32, "
                                          "int64, bool, complex64 or complex128"):
        f()


def test_capacity_must_be_constant_and_positive():
    @numba.njit
    def zero():
        return size(adstack(np.float64, 0))
    with pytest.raises(TypingError, match="capacity must be positive"):
        zero()

    @numba.njit
    def runtime(n):
        return size(adstack(np.float64, n))
    with pytest.raises(TypingError, match="compile-time integer constant"):
        runtime(3)


def test_storage_keyword_and_bad_storage():
    @numba.njit
    def kw():
        st = adstack(np.float64, 2, storage="heap")
        for i in range(10):
            push(st, i)
        return size(st), pop(st)
    assert kw() == (10, 9.0)

    @numba.njit
    def bad():
        return size(adstack(np.float64, 2, "stack"))
    with pytest.raises(TypingError, match="storage must be 'frame' or 'heap'"):
        bad()


@numba.njit(nogil=True)
def _threaded(seed, n, reps):
    acc = 0
    for r in range(reps):
        st = adstack(np.int64, 256)
        for i in range(n):
            push(st, seed * 1000 + i)
        for i in range(n):
            acc += pop(st) * (i + 1)
    return acc


def test_two_threads_use_their_own_stacks():
    n, reps = 256, 2000
    expect = {s: _threaded.py_func(s, n, 2) // 2 * reps for s in (1, 2)}
    _threaded(1, 1, 1)
    results = {}

    def work(s):
        results[s] = _threaded(s, n, reps)
    ts = [threading.Thread(target=work, args=(s,)) for s in (1, 2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert results == expect


def test_interpreter_fallback_matches():
    st = adstack(np.float64, 2)
    push(st, 1)
    push(st, 2.5)
    assert (size(st), top(st), overflowed(st)) == (2, 2.5, False)
    with pytest.raises(AdStackOverflowError):
        push(st, 3.0)
    assert pop(st) == 2.5 and pop(st) == 1.0
    with pytest.raises(AdStackUnderflowError):
        pop(st)
    h = adstack(np.int32, 1, "heap")
    for i in range(5):
        push(h, i)
    assert size(h) == 5
    with pytest.raises(TypeError):
        adstack(np.complex64, 3)


@numba.njit
def _layout(n):
    a = adstack(np.float64, 100)
    b = adstack(np.bool_, 13)
    c = adstack(np.int32, 7)
    for i in range(n):
        push(a, i)
        push(b, i % 2 == 0)
        push(c, i)
    s = 0.0
    for i in range(n):
        s += pop(a) * pop(b) + pop(c)
    return s


def _entry_block(llvm, fname):
    m = re.search(r"define [^\n]*@\S*%s\S*\([^\n]*\{\n(.*?)\n\n" % fname, llvm, re.S)
    assert m, "function %s not found in the LLVM IR" % fname
    return m.group(1)


def test_llvm_ir_has_entry_block_allocas_of_documented_size():
    assert _layout(3) == (2 * 1 + 2) + (1 * 0 + 1) + (0 * 1 + 0)
    llvm = _layout.inspect_llvm(_layout.signatures[0])
    entry = _entry_block(llvm, "_layout")
    # capacity * bytes per entry of data (bool is 1 byte); the i64 counts have allocas of
    # their own, which LLVM promotes to registers.
    assert "alloca i64" not in entry
    for ty in (r"\[100 x double\]", r"\[13 x i8\]", r"\[7 x i32\]"):
        assert re.search(r"alloca %s, align 8" % ty, entry), ty
    # No zero-fill of the data: the only stores of the stacks at creation are counts.
    assert "memset" not in llvm


def test_push_pop_compile_to_few_instructions():
    # The hot loops stay free of calls: no runtime helper per push or pop.
    asm = _layout.inspect_asm(_layout.signatures[0])
    body = asm.split("_layout")[1].split(".Lfunc_end")[0]
    assert "NRT_" not in body


@numba.njit
def _clear_then_reuse(n):
    st = adstack(np.float64, 8)
    hs = adstack(np.int64, 2, "heap")
    for i in range(n):
        push(st, i * 1.5)
        push(hs, i)
    clear(st)
    clear(hs)
    push(st, 7.0)
    return size(st), size(hs), pop(st)


def test_clear_empties_frame_and_heap_stacks():
    assert _clear_then_reuse(5) == (1, 0, 7.0)
    # The interpreter implementation agrees.
    assert _clear_then_reuse.py_func(5) == (1, 0, 7.0)
