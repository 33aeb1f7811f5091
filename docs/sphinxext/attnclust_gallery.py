"""sphinx-gallery glue for the scripts in ``examples/``.

The example scripts are command-line programs: they parse ``--small`` and
``--output-dir``, write their figures as PNG files and close them (so the
default matplotlib scraper finds no open figure).  This module

* passes the command line (:func:`reset_argv`): ``--small`` by default, the
  full sizes when the environment variable ``SPHINX_GALLERY_FULL=1`` is set,
  and an output directory per example under the build's doctree directory
  (part of the build folder, never published); it also gives the script its
  module docstring back as ``__doc__`` (sphinx-gallery sets it to ``""``; the
  scripts take their ``--help`` description from its first line);
* scrapes the PNG files each script wrote into that directory
  (:func:`png_scraper`), in the order they were written, so that they appear
  on the example's page and the first one becomes its thumbnail.

Both are referred to by name in ``docs/conf.py`` (sphinx-gallery resolves
fully qualified names, which keeps the configuration picklable).
"""

import ast
import os
import shutil

from sphinx_gallery.scrapers import figure_rst

FULL_ENV = "SPHINX_GALLERY_FULL"

# Set by docs/conf.py on "builder-inited", before sphinx-gallery runs the scripts.
OUTPUT_ROOT = None

# PNG files already shown, per example output directory.
_SEEN = {}


def full_build():
    """True when ``SPHINX_GALLERY_FULL`` asks for the examples' full sizes."""
    return os.environ.get(FULL_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def set_output_root(app):
    """``builder-inited`` handler: the examples write under the doctree directory."""
    global OUTPUT_ROOT
    OUTPUT_ROOT = os.path.join(str(app.doctreedir), "gallery-output")
    _SEEN.clear()


def _output_dir(src_file):
    root = OUTPUT_ROOT
    if root is None:  # not set up through docs/conf.py
        import tempfile

        root = os.path.join(tempfile.gettempdir(), "attnclust-gallery-output")
    name = os.path.splitext(os.path.basename(str(src_file)))[0]
    return os.path.join(root, name)


def reset_argv(gallery_conf, script_vars):
    """``sys.argv[1:]`` for an example: ``[--small] --output-dir DIR``."""
    out = _output_dir(script_vars["src_file"])
    # a fresh directory per run, so that the scraper sees only this run's files
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    _SEEN[out] = set()
    with open(script_vars["src_file"], encoding="utf-8") as f:
        doc = ast.get_docstring(ast.parse(f.read()), clean=False) or ""
    script_vars["example_globals"]["__doc__"] = doc
    argv = ["--output-dir", out]
    if not full_build():
        argv.insert(0, "--small")
    return argv


def png_scraper(block, block_vars, gallery_conf, **kwargs):
    """Show the PNG files the example wrote since the last code block."""
    out = _output_dir(block_vars["src_file"])
    if not os.path.isdir(out):
        return ""
    seen = _SEEN.setdefault(out, set())
    new = [
        os.path.join(out, f) for f in os.listdir(out)
        if f.lower().endswith(".png") and f not in seen
    ]
    new.sort(key=lambda p: (os.path.getmtime(p), p))
    image_paths = []
    for path, image_path in zip(new, block_vars["image_path_iterator"]):
        shutil.copyfile(path, image_path)
        image_paths.append(image_path)
        seen.add(os.path.basename(path))
    if not image_paths:
        return ""
    titles = ", ".join(os.path.basename(p) for p in new[: len(image_paths)])
    return figure_rst(image_paths, gallery_conf["src_dir"], fig_titles=titles)
