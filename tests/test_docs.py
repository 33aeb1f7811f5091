"""Build the Sphinx documentation with warnings as errors, and check what it built.

The build (shared with ``test_docs_browser.py``) runs every example script at
``--small`` for the gallery; it needs the ``docs`` extra
(``python -m pip install ".[docs]"``) and is skipped without it.
"""

import os
import re

import pytest

from _docs_build import build_docs, missing_requirements, requirements_fixture, skip_or_fail

MISSING = missing_requirements()
_REASON = f"docs extras missing: {MISSING}" if MISSING else ""
pytestmark = [pytest.mark.slow] + skip_or_fail(_REASON)
_docs_requirements_missing = requirements_fixture(_REASON)

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "examples")
SCRIPTS = sorted(f[:-3] for f in os.listdir(EXAMPLES)
                 if f.endswith(".py") and not f.startswith("_"))


@pytest.fixture(scope="module")
def html():
    build = build_docs()
    assert build.returncode == 0, build.log
    return build.html


def _read(html, page):
    with open(os.path.join(html, page), encoding="utf-8") as f:
        return f.read()


def _pages(html):
    for root, _, files in os.walk(html):
        if "_static" in os.path.relpath(root, html).split(os.sep):
            continue
        for name in files:
            if name.endswith(".html"):
                yield os.path.relpath(os.path.join(root, name), html)


def test_docs_build_without_warnings(html):
    for page in ["index.html", "api.html", "getting_started.html", "user_guide.html",
                 "theory.html", "examples.html", "auto_examples/index.html"]:
        assert os.path.isfile(os.path.join(html, page)), page


def test_mathjax_is_bundled(html):
    """Every page with maths loads MathJax from the build's own _static/, no CDN."""
    pages_with_mathjax = 0
    for page in _pages(html):
        text = _read(html, page)
        srcs = re.findall(r'<script[^>]*\ssrc="([^"]+)"', text)
        # no script at all comes from the network
        assert not [s for s in srcs if re.match(r"(https?:)?//", s)], (page, srcs)
        mathjax = [s for s in srcs if "mathjax" in s.lower()]
        if not mathjax:
            continue
        pages_with_mathjax += 1
        for src in mathjax:
            path = os.path.normpath(os.path.join(html, os.path.dirname(page),
                                                 src.split("?")[0]))
            assert path.startswith(os.path.join(html, "_static", "mathjax")), (page, src)
            assert os.path.isfile(path), (page, src)
    assert pages_with_mathjax >= 2  # at least the theory page and the user guide
    theory = _read(html, "theory.html")
    assert "_static/mathjax/tex-chtml.js" in theory
    # the fonts MathJax's CommonHTML output asks for are there too
    fonts = os.path.join(html, "_static", "mathjax", "output", "chtml", "fonts", "woff-v2")
    assert os.path.isdir(fonts) and os.listdir(fonts)


def test_theme_is_pydata(html):
    index = _read(html, "index.html")
    assert "pydata-sphinx-theme" in index or "pydata_sphinx_theme" in index
    assert 'class="bd-header' in index or "bd-header" in index


def test_gallery(html):
    """Every example has a thumbnail, a page with its figures, and downloads."""
    index = _read(html, "auto_examples/index.html")
    for script in SCRIPTS:
        assert f"sphx_glr_{script}_thumb.png" in index, script
        thumb = os.path.join(html, "_images", f"sphx_glr_{script}_thumb.png")
        assert os.path.isfile(thumb), script
        page = _read(html, f"auto_examples/{script}.html")
        assert re.search(rf'<img [^>]*src="[^"]*sphx_glr_{script}_00\d\.png"', page), script
        assert f"{script}.py" in page and f"{script}.ipynb" in page, script
    assert "auto_examples_python.zip" in index


def test_getting_started_figures(html):
    page = _read(html, "getting_started.html")
    # two figures drawn by the plot directive from the code on the page
    images = re.findall(r'<img [^>]*src="([^"]*getting_started_(?:fit|search)[^"]*\.png)"',
                        page)
    assert len(images) == 2 and len(set(images)) == 2, images
    for src in images:
        assert os.path.isfile(os.path.join(html, src)), src
    assert "GridSearchCV" in page and "make_pipeline" in page


def test_intersphinx_links(html):
    """Cross-links to scikit-learn, NumPy and Dask resolve (offline: shipped inventories)."""
    page = _read(html, "getting_started.html")
    assert "https://scikit-learn.org/stable/" in page
    assert re.search(r"sklearn\.model_selection\.GridSearchCV\.html", page)
    assert re.search(r'https://numpy\.org/doc/stable/[^"]*numpy\.ndarray', page)
    assert re.search(r'https://docs\.dask\.org/en/stable/[^"]*dask\.array\.Array', page)


def _primary_sidebar_links(text):
    """The links of the primary sidebar's navigation (empty when it has none)."""
    m = re.search(r'<div[^>]*class="[^"]*bd-sidebar-primary[^"]*"[^>]*>(.*?)<main', text, re.S)
    if m is None:
        return []
    navs = re.findall(r'<nav class="bd-docs-nav[^"]*"[^>]*>(.*?)</nav>', m.group(1), re.S)
    return [href for nav in navs for href in re.findall(r'<a [^>]*href="([^"]+)"', nav)]


@pytest.mark.parametrize("page", ["user_guide.html", "theory.html", "api.html",
                                  "examples.html", "getting_started.html",
                                  "auto_examples/index.html"])
def test_sidebar_navigation_is_not_empty(html, page):
    """The primary sidebar lists the site's pages, this one marked current."""
    text = _read(html, page)
    links = _primary_sidebar_links(text)
    assert len(links) >= 5, (page, links)
    for other in ["user_guide.html", "theory.html", "api.html"]:
        if other != page:
            assert any(href.endswith(other) for href in links), (page, other, links)
    assert '<a aria-current="page"' in text, page


def test_no_machine_paths_in_pages(html):
    """No page prints a path of the machine that built it (gallery outputs included)."""
    from test_no_machine_paths import machine_paths

    build_root = os.path.dirname(os.path.abspath(html))
    found = []
    for page in _pages(html):
        text = _read(html, page)
        if build_root in text:
            found.append(f"{page}: the build directory {build_root}")
        found += [f"{page}:{n}: {line[:160]}" for n, line in machine_paths(text)]
    assert not found, "\n".join(found)
