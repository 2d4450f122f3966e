"""Sphinx configuration of the numba_adstack documentation.

Build it with ``python -m sphinx -W -b html docs docs/_build/html`` (after
``pip install ".[docs]"``); the entry page is ``docs/_build/html/index.html``.
"""
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
exclude_patterns = ["_build", "_generated", "examples", "README*"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
autodoc_member_order = "bysource"
autodoc_typehints = "none"
html_theme = "alabaster"
html_title = "numba_adstack %s" % release
html_static_path = []


def tutorial_plot(app):
    """Run the tutorial's program: its figure is drawn at each build."""
    sys.path.insert(0, os.path.join(HERE, "examples"))
    import spring_fit
    os.makedirs(os.path.join(HERE, "_generated"), exist_ok=True)
    spring_fit.plot(os.path.join(HERE, "_generated", "spring_fit.png"))


def setup(app):
    app.connect("builder-inited", tutorial_plot)
