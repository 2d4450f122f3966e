"""The generated backward grows linearly with the function (a size check, not a timing).

Long branchy functions (nested if/elif/else, while loops with break and continue inside
for loops; benchmarks/branchy.py) used to give backwards exponential in their nesting:
each reverse statement is now written once. Only the rewrite runs here (no Numba compile
of the backward): its source is what is measured.
"""
import numpy as np
import pytest
from numba import typeof

from benchmarks.branchy import make_function, make_source
from numba_adstack.ad.capture.pipeline import typed_ir
from numba_adstack.ad.dispatch.rewrite import Options, build_backward

ARGS = (np.linspace(0.1, 0.9, 7), 0.3, 3)
#: Backward lines per source line (5.79 to 6.33 over these sizes). Straight-line code
#: takes ~5 (IR temporaries, pushes, adjoints); records and the sweep's loop machinery
#: add the rest. Guards only one state reaches, stores nothing reads, tails every arm
#: shares and single copies are tidied away (emit/control.py).
LINE_BUDGET = 6.5


def backward_lines(segments):
    fn = make_function(segments)
    typed = typed_ir(fn, tuple(typeof(a) for a in ARGS))
    return len(build_backward(typed, fn, Options(1024, "heap")).source.splitlines())


@pytest.fixture(scope="module")
def sizes():
    return {s: backward_lines(s) for s in (1, 2, 6)}


def test_backward_stays_within_its_line_budget(sizes):
    for s, lines in sizes.items():
        src = len(make_source(s).splitlines())
        assert lines <= LINE_BUDGET * src, (s, lines, src)


def test_backward_grows_linearly(sizes):
    per_segment = sizes[2] - sizes[1]
    assert abs(sizes[6] - sizes[2] - 4 * per_segment) <= 0.05 * sizes[6], sizes


def test_nested_breaks_do_not_multiply_the_sweep():
    # Three while loops nested, each left by break or continue: the sweep of the
    # innermost body is written once, not once per path to it.
    src = '''
def f(x, n):
    s = 0.0
    i = 0
    while i < n:
        a = x[i % 3]
        j = 0
        while j < n:
            if a > 0.5:
                break
            k = 0
            while k < n:
                a = a * 0.9 + 0.01 * s
                if a < 0.1:
                    break
                k += 1
                if k % 2 == 0:
                    continue
                a = a + 0.001
            j += 1
        s += a
        i += 1
    return s
'''
    import math
    ns = {"math": math}
    exec(src, ns)
    fn = ns["f"]
    typed = typed_ir(fn, (typeof(ARGS[0]), typeof(3)))
    source = build_backward(typed, fn, Options(1024, "heap")).source
    # a * 0.9 replayed once and reversed once.
    assert source.count("* 0.9") == 2 and source.count("_bar * 0.9") == 1, source


def test_declarations_no_read_sees_are_dropped():
    # `n` is assigned again before every read, `a` is read by the loop's first push
    # before the loop assigns it, `g` accumulates: only `n` goes.
    import ast
    from numba_adstack.ad.emit.declarations import drop_unseen_declarations
    src = '''
def f(x, k):
    n = 0
    a = 0.0
    g = -0.0
    n = 0
    i = 0
    while i < k:
        push(st, a)
        a = x * i
        g += a
        if a > 1.0:
            n += 1
        i += 1
    return (n, g)
'''
    tree = ast.parse(src)
    assert drop_unseen_declarations(tree.body[0])
    lines = ast.unparse(tree).splitlines()
    assert lines.count("    n = 0") == 1 and "    a = 0.0" in lines \
        and "    g = -0.0" in lines, lines


def test_cheaper_liveness_is_numbas():
    # The liveness the backward's compile uses gives Numba's own result, block by block,
    # on the generated backward of a long branchy function.
    from numba.core import analysis
    from numba.core.compiler import run_frontend
    from numba_adstack.ad.capture import numba_pipeline
    fn = make_function(2)
    typed = typed_ir(fn, tuple(typeof(a) for a in ARGS))
    bw = build_backward(typed, fn, Options(None, "auto"))
    ns = dict(bw.globals)
    exec(compile(bw.source, "<backward>", "exec"), ns)
    blocks = run_frontend(ns[bw.fname]).blocks
    cfg = analysis.compute_cfg_from_blocks(blocks)
    usedefs = analysis.compute_use_defs(blocks)
    ours = numba_pipeline.compute_live_map(cfg, blocks, usedefs.usemap, usedefs.defmap)
    with numba_pipeline.cheaper_analyses():
        cheaper = numba_pipeline.compute_live_map(cfg, blocks, usedefs.usemap,
                                                  usedefs.defmap)
    numbas = numba_pipeline._numba_live_map(cfg, blocks, usedefs.usemap, usedefs.defmap)
    assert ours == numbas
    assert cheaper == numbas and len(blocks) > 100
    assert any(cheaper.values())
