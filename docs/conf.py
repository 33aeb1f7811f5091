"""Sphinx configuration for the sklearn_attnclust documentation.

Build with ``python -m sphinx -W -b html docs <output dir>`` (warnings are errors)
after ``python -m pip install ".[docs]"``.  The pages are Markdown (MyST); the API
reference uses autodoc with numpydoc; the theme is pydata-sphinx-theme, as for
scikit-learn.

* Gallery: sphinx-gallery runs every script in ``examples/`` and builds
  ``auto_examples/`` (thumbnails, figures, downloadable scripts and notebooks).
  The scripts run with ``--small`` (seconds each); set ``SPHINX_GALLERY_FULL=1``
  for the full sizes (up to two minutes per script), or ``SPHINX_GALLERY_PLOT=0``
  to list the examples without running them.  See ``sphinxext/attnclust_gallery.py``.
* Maths: MathJax 3 is bundled by the ``sphinx-mathjax-offline`` package and copied
  into ``_static/mathjax``; no page loads anything from the network.
* Cross-links: intersphinx to scikit-learn, NumPy, Dask and Python.  Each project's own
  ``objects.inv`` is tried first; offline, the subsets shipped in ``_intersphinx/``
  are used (``SPHINX_INTERSPHINX_OFFLINE=1`` skips the network altogether).
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the package, when not installed
sys.path.insert(0, os.path.join(HERE, "sphinxext"))  # the gallery glue

import attnclust_gallery  # noqa: E402
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
    "sphinx.ext.intersphinx",
    "sphinx-mathjax-offline",  # the package's module name has hyphens
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "matplotlib.sphinxext.plot_directive",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "_static/*.md", "_intersphinx",
                    "sphinxext"]

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
# parameter types link to NumPy, scikit-learn and Dask through intersphinx; only the
# names below are linked (``numpydoc_xref_ignore = "all"``), so a type in prose
# ("int, default=2") never turns into a dangling reference
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"
numpydoc_xref_aliases = {
    "ndarray": "numpy.ndarray",
    "array-like": ":term:`array-like`",
    "RandomState": "numpy.random.RandomState",
    "Generator": "numpy.random.Generator",
    "numpy.random.Generator": "numpy.random.Generator",
    "dask.array.Array": "dask.array.Array",
    "dask array": "dask.array.Array",
    "AttentionQuantizer": "sklearn_attnclust.AttentionQuantizer",
    "InContextQuantizer": "sklearn_attnclust.InContextQuantizer",
    "OptimalQuantizer": "sklearn_attnclust.OptimalQuantizer",
    "PCAQuantizer": "sklearn_attnclust.PCAQuantizer",
    "KMeansQuantizer": "sklearn_attnclust.KMeansQuantizer",
}

# MathJax 3 from the build's own _static/mathjax (copied there by
# sphinx-mathjax-offline), never from a CDN
mathjax_path = "mathjax/tex-chtml.js"

# intersphinx: the projects' inventories when reachable, else the shipped subsets
_INV = os.path.join(HERE, "_intersphinx")
_OFFLINE = os.environ.get("SPHINX_INTERSPHINX_OFFLINE", "").strip().lower() in {
    "1", "true", "yes", "on"}


def _inventories(name):
    local = os.path.join(_INV, f"{name}-objects.inv")
    return (local,) if _OFFLINE else (None, local)


intersphinx_mapping = {
    "sklearn": ("https://scikit-learn.org/stable/", _inventories("sklearn")),
    "numpy": ("https://numpy.org/doc/stable/", _inventories("numpy")),
    "dask": ("https://docs.dask.org/en/stable/", _inventories("dask")),
    "python": ("https://docs.python.org/3/", _inventories("python")),
}
intersphinx_timeout = 5

# sphinx-gallery: examples/ -> auto_examples/ (see sphinxext/attnclust_gallery.py)
sphinx_gallery_conf = {
    "examples_dirs": os.path.join("..", "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/[a-z][a-z0-9_]*\.py$",  # run every example
    "ignore_pattern": r"^_",  # matched on the file name: helpers starting with "_"
    "reset_argv": "attnclust_gallery.reset_argv",
    "image_scrapers": ("matplotlib", "attnclust_gallery.png_scraper"),
    "within_subsection_order": "FileNameSortKey",
    "plot_gallery": os.environ.get("SPHINX_GALLERY_PLOT", "True"),
    "download_all_examples": True,
    "remove_config_comments": True,
    "min_reported_time": 1,
    "show_memory": False,
    # the execution-time tables load jQuery and DataTables from CDNs: not written
    "write_computation_times": False,
    "doc_module": ("sklearn_attnclust",),
    "reference_url": {"sklearn_attnclust": None},
    "backreferences_dir": os.path.join("gen_modules", "backreferences"),
    "inspect_global_variables": False,
}

# matplotlib's plot directive (the figures of the Getting started page)
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 100)]
plot_rcparams = {"figure.autolayout": True}

html_theme = "pydata_sphinx_theme"
html_static_path = ["_static"]
html_title = f"sklearn_attnclust {release}"
html_favicon = "_static/favicon.svg"  # also spares the browser a request for /favicon.ico
html_theme_options = {
    "navbar_align": "left",
    "header_links_before_dropdown": 5,
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
# The primary sidebar lists the site's pages (docs/_templates/sidebar-pages.html);
# the theme's default "Section Navigation" shows only the pages below the current
# top-level page, and every page of this site is top-level, so it was empty.  The
# current page's headings are in the secondary sidebar.  The landing page has none.
templates_path = ["_templates"]
html_sidebars = {"index": [], "**": ["sidebar-pages"]}
# the theme follows the reader's light or dark setting (without a default its
# script logs "Got invalid theme mode" to the console on a first visit)
html_context = {"default_mode": "auto"}
html_show_sourcelink = False


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
    # before sphinx-gallery's own builder-inited handler runs the examples
    app.connect("builder-inited", attnclust_gallery.set_output_root, priority=100)
