"""Sphinx configuration for the sklearn_attnclust documentation.

Build with ``python -m sphinx -W -b html docs <output dir>`` (warnings are errors).
The pages are Markdown (MyST); the API reference uses autodoc with numpydoc.
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the package, when not installed

import sklearn_attnclust  # noqa: E402

project = "sklearn_attnclust"
author = "the sklearn_attnclust developers"
copyright = "the sklearn_attnclust developers"
version = release = sklearn_attnclust.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "_static/*.md"]

# MyST: $...$ and $$...$$ math, ::: fences, (label)= targets
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# autodoc / autosummary: the API page lists the objects and documents them in place,
# so no stub files are generated into the source tree
autosummary_generate = False
autodoc_default_options = {"members": False}
autodoc_typehints = "none"

# numpydoc renders the Parameters / Attributes sections; class members are listed by
# hand on the API page
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_static_path = ["_static"]
html_title = f"sklearn_attnclust {release}"


# Some docstrings write a fitted attribute bare inside a shape, as in
# "ndarray of shape (n_features_in_,)"; reStructuredText reads "name_" as a link
# target.  Escape the trailing underscore inside "shape (...)" before numpydoc runs.
_SHAPE = re.compile(r"shape \(([^()]*)\)")
_BARE = re.compile(r"(?<![`\\])\b([A-Za-z]\w*?)_(?=[\s,+)\-*/]|$)")


def _escape_shapes(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        lines[i] = _SHAPE.sub(lambda m: "shape (" + _BARE.sub(r"\1\\_", m.group(1)) + ")",
                              line)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_shapes, priority=100)
