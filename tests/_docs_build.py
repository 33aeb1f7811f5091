"""One Sphinx build of docs/ per test session, shared by the docs tests.

``tests/test_docs.py`` checks the build itself and ``tests/test_docs_browser.py``
loads its pages in headless Chromium; both call :func:`build_docs`, which builds
once (``sphinx -W``, warnings are errors) into a temporary directory removed at
exit.  Set ``ATTNCLUST_DOCS_HTML`` to an existing build to reuse it instead (the
build tests then check that one).
"""

import atexit
import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")

# import name -> distribution, for the skip message
DOCS_REQUIREMENTS = {
    "sphinx": "sphinx",
    "myst_parser": "myst-parser",
    "numpydoc": "numpydoc",
    "pydata_sphinx_theme": "pydata-sphinx-theme",
    "sphinx_gallery": "sphinx-gallery",
    "sphinx-mathjax-offline": "sphinx-mathjax-offline",
    "matplotlib": "matplotlib",
}


def missing_requirements():
    """The docs extras that are not installed (``python -m pip install ".[docs]"``)."""
    return [dist for mod, dist in DOCS_REQUIREMENTS.items()
            if importlib.util.find_spec(mod) is None]


REQUIRE_ENV = "ATTNCLUST_REQUIRE_DOCS_TESTS"


def skip_or_fail(reason):
    """Marks for a docs test module: skip for ``reason``, or fail where required.

    ``.ci/run`` sets ``ATTNCLUST_REQUIRE_DOCS_TESTS=1`` after installing the docs
    extra and Chromium, so that in CI a missing piece fails instead of skipping.
    """
    import pytest

    if not reason:
        return []
    if os.environ.get(REQUIRE_ENV, "").strip() not in {"", "0"}:
        return [pytest.mark.usefixtures("_docs_requirements_missing")]
    return [pytest.mark.skip(reason=reason)]


def requirements_fixture(reason):
    """The fixture :func:`skip_or_fail` names: fails the test with ``reason``."""
    import pytest

    @pytest.fixture(scope="module")  # before the module's other fixtures
    def _docs_requirements_missing():
        pytest.fail(f"{reason} ({REQUIRE_ENV} is set)")

    return _docs_requirements_missing


class DocsBuild:
    def __init__(self, html, returncode, log):
        self.html = html
        self.returncode = returncode
        self.log = log


@functools.lru_cache(maxsize=None)
def build_docs():
    """Build the HTML documentation once; return a :class:`DocsBuild`."""
    reuse = os.environ.get("ATTNCLUST_DOCS_HTML")
    if reuse:
        return DocsBuild(reuse, 0, f"(reused the build in {reuse})")
    tmp = tempfile.mkdtemp(prefix="attnclust-docs-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    html = os.path.join(tmp, "html")
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", os.path.join(tmp, "doctrees"), DOCS, html],
        check=False, capture_output=True, text=True, timeout=600, env=env,
    )
    return DocsBuild(html, proc.returncode, proc.stdout[-3000:] + proc.stderr[-6000:])
