"""Sphinx configuration of the numba_adstack documentation.

Build it with ``python -m sphinx -W -b html docs docs/_build/html`` (after
``pip install ".[docs]"``); the entry page is ``docs/_build/html/index.html``.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Document the package of this checkout, not whichever one is installed.
sys.path.insert(0, os.path.dirname(HERE))

import numba_adstack  # noqa: E402

project = "numba_adstack"
author = "the numba_adstack developers"
copyright = "the numba_adstack developers, BSD-3-Clause"
release = version = numba_adstack.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
root_doc = "index"
# vjp.md: written by python -m benchmarks, included by interop.md
exclude_patterns = ["_build", "_generated", "examples", "README*", "vjp.md"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
autodoc_member_order = "bysource"
autodoc_typehints = "none"
html_theme = "alabaster"
html_title = "numba_adstack %s" % release
html_static_path = []
# The interop modules import their library: documented from stand-ins where it is missing.
autodoc_mock_imports = [m for m in ("torch", "jax") if importlib.util.find_spec(m) is None]


def tutorial_plot(app):
    """Run the tutorial's program: its figure is drawn at each build."""
    sys.path.insert(0, os.path.join(HERE, "examples"))
    import spring_fit
    os.makedirs(os.path.join(HERE, "_generated"), exist_ok=True)
    spring_fit.plot(os.path.join(HERE, "_generated", "spring_fit.png"))


def interop_plot(app):
    """Run the PyTorch worked example of interop.md: its loss curve is drawn at each build
    (a note in its place where PyTorch is not installed)."""
    path = os.path.join(HERE, "_generated", "torch_spring.png")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if importlib.util.find_spec("torch") is not None:
        sys.path.insert(0, os.path.join(HERE, "examples"))
        import torch_spring
        torch_spring.plot(path)
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(8, 1))
    fig.text(0.5, 0.5, "pip install \".[torch]\" to draw this figure",
             ha="center", va="center")
    fig.savefig(path, dpi=120)
    plt.close(fig)


def setup(app):
    app.connect("builder-inited", tutorial_plot)
    app.connect("builder-inited", interop_plot)
