"""The tidy pass keeps a program's meaning through every control-flow construct its one
dataflow solver follows (emit/dataflow.py): loops with ``else``, ``break``, ``continue``,
``while True``, early ``return``. Each function below is tidied, then run against the
original on a grid of inputs; no Numba compile is involved."""
import ast
import itertools
import math

import pytest

from numba_adstack.ad.emit.dataflow import dead_stores
from numba_adstack.ad.generated_source.code import printed
from numba_adstack.ad.emit.tidy import tidy

SOURCES = {
    "for_else_break": '''
def f(x, n):
    g = -0.0
    t = 0.0
    for i in range(n):
        t = x * i
        if t > 2.0:
            g += t
            break
        g = -0.0
        g += x
    else:
        t = 5.0
        g += 1.0
    return (g, t)
''',
    "while_else_continue": '''
def f(x, n):
    a = 0.0
    k = 0
    while k < n:
        k += 1
        a = -0.0
        if k % 2 == 0:
            continue
        a += x * k
    else:
        a = a + 1.0
    return a
''',
    "state_machine": '''
def f(x, n):
    _rv = 0
    acc = -0.0
    k = 0
    while True:
        if _rv == 0:
            acc += x
            _rv = 1
        if _rv == 1:
            k += 1
            if k < n:
                _rv = 0
                continue
            _rv = 2
        if _rv == 2:
            break
    return acc * k
''',
    "early_return": '''
def f(x, n):
    b = -0.0
    c = 0.0
    for i in range(n):
        c = x + i
        if c > 3.0:
            b += c
            return b
        b = -0.0
    b += x
    return b + c
''',
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_tidy_keeps_the_meaning(name):
    src = SOURCES[name]
    tree = ast.parse(src)
    tidy(tree, {"math": math})
    tidied = printed(tree)
    ns_a, ns_b = {}, {}
    exec(src, ns_a)
    exec(tidied, ns_b)
    for x, n in itertools.product((-1.5, -0.0, 0.0, 0.7, 2.5), range(6)):
        want, got = ns_a["f"](x, n), ns_b["f"](x, n)
        assert repr(want) == repr(got), (name, x, n, tidied)   # signed zeros too
    # (and it did rewrite something: a store dropped, a ``+=`` onto a known zero, ...)
    assert ast.dump(ast.parse(tidied)) != ast.dump(ast.parse(src)), tidied


def test_liveness_follows_loop_else_and_break():
    # `t = 0.0` is dead: the loop's body assigns `t` before any read, and when the loop
    # runs no time its `else` does. `g = -0.0` before the loop is live: a first-iteration
    # break, or the `else` of an empty loop, reads it.
    fn = ast.parse(SOURCES["for_else_break"]).body[0]
    dead = dead_stores(fn)
    names = sorted(ast.unparse(s) for s in ast.walk(fn) if id(s) in dead)
    assert names == ["t = 0.0"], names
