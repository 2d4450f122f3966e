"""The documentation: every python block of every page runs as written (one process per
page, its blocks in order), the tutorial's code fits and is the code of its example
program, and the Sphinx site builds with warnings as errors (skipped where Sphinx is not
installed)."""
import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import numba
import numpy as np
import pytest

import doc_blocks

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def tutorial_code():
    text = (DOCS / "tutorial.md").read_text()
    return "\n".join(re.findall(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL))


def load(path):
    name = "doc_%s" % uuid.uuid4().hex[:8]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        del sys.modules[name]
    return mod


def test_tutorial_runs_and_fits(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    path = tmp_path / "tutorial.py"
    path.write_text(tutorial_code())
    mod = load(path)                   # runs it: its finite-difference check included
    assert mod.result.success
    np.testing.assert_allclose(mod.result.x, mod.TRUE, atol=0.02)
    assert mod.result.nit <= 30


def test_tutorial_shows_the_example_program():
    """Each function and constant of the tutorial is the one of examples/spring_fit.py,
    which draws the figure."""
    def definitions(source):
        out = {}
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef):
                out[node.name] = ast.unparse(node)
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id.isupper():
                out[node.targets[0].id] = ast.unparse(node)
        return out
    shown = definitions(tutorial_code())
    program = definitions((DOCS / "examples" / "spring_fit.py").read_text())
    assert {"simulate", "loss", "observations", "fit", "DT", "STEPS", "TRUE"} <= set(shown)
    for name, text in shown.items():
        assert program.get(name) == text, name


def test_sphinx_site_builds_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    pytest.importorskip("matplotlib")
    out = tmp_path / "html"
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                        "html", str(DOCS), str(out)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert (out / "index.html").exists()
    assert (out / "_images" / "spring_fit.png").exists()
    assert (out / "_images" / "torch_spring.png").exists()      # interop.md
    api = (out / "api.html").read_text()
    for name in ("numba_adstack.grad_jit", "value_and_grad", "vjp_call", "numba_adstack.cuda.grad_jit",
                 "AdStackCacheWarning", "frame_budget"):
        assert name in api, name


# ---------------------------------------------------------------- every page's blocks
def _pages():
    """(page, line) of every ```python block of docs/, in page order. The tutorial's run
    as one program in test_tutorial_runs_and_fits (which checks the fit too)."""
    out = []
    for page in sorted(DOCS.glob("*.md")):
        if page.name != "tutorial.md":
            out.extend((page.name, line) for line, _ in doc_blocks.blocks(page))
    return out


_RUNS = {}


def _page_results(page, tmp_path_factory):
    """The blocks of ``page`` run in order, in one process (doc_blocks.py): its results
    by line, made once for the page's tests."""
    if page not in _RUNS:
        work = tmp_path_factory.mktemp(page.replace(".", "_"))
        # (Numba's cache directory as the suite's: the package's helpers are compiled
        # once, and a block's cache=True functions cache next to their files, in work.)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(ROOT), str(DOCS / "examples"), str(work)]))
        env.pop("NUMBA_ENABLE_CUDASIM", None)
        r = subprocess.run([sys.executable, str(Path(doc_blocks.__file__)), str(DOCS / page),
                            "results.json"], cwd=work, env=env, capture_output=True,
                           text=True, timeout=900)
        out = work / "results.json"
        results = json.loads(out.read_text()) if out.exists() else []
        _RUNS[page] = ({b["line"]: b for b in results}, r.stdout[-2000:] + r.stderr[-3000:])
    return _RUNS[page]


@pytest.mark.parametrize("page, line", _pages(), ids=lambda v: str(v))
def test_every_python_block_of_the_docs_runs_as_written(page, line, tmp_path_factory):
    """A reader's session: each page's blocks in order in one interpreter (a block
    headed ``# name.py`` saved as that module, one with worker processes run as a
    program); kernels on a GPU or in the CUDA simulator; blocks needing PyTorch or JAX
    skipped where they are not installed."""
    results, log = _page_results(page, tmp_path_factory)
    got = results.get(line)
    assert got is not None, "%s:%d did not run:\n%s" % (page, line, log)
    if got["status"] == "skipped":
        pytest.skip("%s:%d %s" % (page, line, got["reason"]))
    assert got["status"] == "ok", "%s:%d\n%s" % (page, line, got["reason"])


def test_no_fragment_is_marked_python():
    """A fragment that does not run is marked ```text; every ```python block parses."""
    for page, line in _pages():
        code = dict(doc_blocks.blocks(DOCS / page))[line]
        ast.parse(code, "%s:%d" % (page, line))
