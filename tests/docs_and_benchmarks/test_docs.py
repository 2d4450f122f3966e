"""The documentation: the tutorial's code runs and is the code of its example program, and
the Sphinx site builds with warnings as errors (skipped where Sphinx is not installed)."""
import ast
import importlib.util
import re
import subprocess
import sys
import uuid
from pathlib import Path

import numba
import numpy as np
import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


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


def _python_blocks(page):
    text = (DOCS / page).read_text()
    return re.findall(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("page", ["grad_jit.md", "production.md"])
def test_every_code_block_runs_as_written(page, tmp_path, monkeypatch):
    # Each block is a file of its own: a block saved as a module (`# mymodel.py` on its
    # first line) is importable by the blocks after it, as the page says; one that
    # starts worker processes runs in a process of its own.
    monkeypatch.syspath_prepend(str(DOCS / "examples"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", "%s:%s" % (tmp_path, DOCS / "examples"))
    for k, block in enumerate(_python_blocks(page)):
        first = block.splitlines()[0]
        name = first[2:].strip() if first.startswith("# ") and first.endswith(".py") \
            else "block%d.py" % k
        path = tmp_path / name
        path.write_text(block)
        if "multiprocessing" in block:
            subprocess.run([sys.executable, str(path)], cwd=tmp_path, check=True,
                           timeout=300)
        else:
            load(path)
