"""Load the built documentation in headless Chromium and check that it renders.

The site (the build shared with ``test_docs.py``) is served on 127.0.0.1 and
each page is opened with Selenium driving Debian's ``chromium`` through
``chromedriver`` (``apt-get install chromium chromium-driver``; ``.ci/run``
installs them).  On each page: MathJax typeset every formula (no raw ``\\(`` or
``\\[`` left in the text, no MathJax error), every image loaded, the browser's
console has no error, and nothing was fetched from anywhere but the local
server.  Screenshots go to ``$ATTNCLUST_DOCS_SCREENSHOTS`` if set.

Skipped without the ``docs`` extra (it includes ``selenium``) or without
Chromium and its driver; failed instead where ``ATTNCLUST_REQUIRE_DOCS_TESTS=1``
(``.ci/run`` sets it).
"""

import functools
import http.server
import os
import shutil
import tempfile
import threading

import pytest

from _docs_build import build_docs, missing_requirements, requirements_fixture, skip_or_fail

MISSING = missing_requirements()
try:
    from selenium import webdriver
except ImportError:
    webdriver = None
    MISSING.append("selenium")
CHROMIUM = next(filter(None, map(shutil.which, ["chromium", "chromium-browser",
                                                "google-chrome"])), None)
CHROMEDRIVER = shutil.which("chromedriver")

if MISSING:
    _REASON = f"docs extras missing: {MISSING}"
elif CHROMIUM is None or CHROMEDRIVER is None:
    _REASON = "needs chromium and chromedriver (apt-get install chromium chromium-driver)"
else:
    _REASON = ""
pytestmark = [pytest.mark.slow] + skip_or_fail(_REASON)
_docs_requirements_missing = requirements_fixture(_REASON)

# page -> at least this many typeset formulas
PAGES = {
    "index.html": 0,
    "getting_started.html": 1,
    "user_guide.html": 5,
    "theory.html": 50,
    "auto_examples/index.html": 0,
    "auto_examples/plot_convergence.html": 0,
}

CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,1600",
]

# Wait for the page: images (lazy ones forced to load) and MathJax's typesetting.
WAIT_SCRIPT = """
const done = arguments[arguments.length - 1];
const imgs = Array.from(document.images);
imgs.forEach(img => { img.loading = "eager"; });
const loaded = Promise.all(imgs.map(img => img.complete ? null : new Promise(
    r => { img.addEventListener("load", r); img.addEventListener("error", r); })));
const typeset = (window.MathJax && MathJax.startup && MathJax.startup.promise)
    ? MathJax.startup.promise : Promise.resolve();
Promise.all([loaded, typeset]).then(() => done("ok"), e => done("error: " + e));
"""

REPORT_SCRIPT = """
const text = document.body.innerText;
const math = document.querySelectorAll(".math, span.math, div.math").length;
return {
  title: document.title,
  mathjax: typeof window.MathJax !== "undefined" && !!window.MathJax.version,
  mathjaxVersion: window.MathJax ? window.MathJax.version : null,
  containers: document.querySelectorAll("mjx-container").length,
  mathNodes: math,
  errors: document.querySelectorAll("mjx-merror").length,
  rawInline: text.includes("\\\\("),
  rawDisplay: text.includes("\\\\["),
  images: Array.from(document.images).map(i => ({src: i.currentSrc || i.src,
      ok: i.complete && i.naturalWidth > 0})),
  resources: performance.getEntriesByType("resource").map(r => r.name),
};
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site():
    build = build_docs()
    assert build.returncode == 0, build.log
    handler = functools.partial(_QuietHandler, directory=build.html)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="attnclust-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER),
                              options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.mark.parametrize("page, min_formulas", list(PAGES.items()), ids=list(PAGES))
def test_page_renders(site, browser, page, min_formulas):
    browser.get_log("browser")  # drop what earlier pages left
    browser.get(site + page)
    assert browser.execute_async_script(WAIT_SCRIPT) == "ok"
    report = browser.execute_script(REPORT_SCRIPT)
    shots = os.environ.get("ATTNCLUST_DOCS_SCREENSHOTS")
    if shots:
        os.makedirs(shots, exist_ok=True)
        browser.save_screenshot(os.path.join(shots, page.replace("/", "_") + ".png"))

    assert "sklearn_attnclust" in report["title"], report["title"]
    # the maths: typeset by the bundled MathJax, nothing left raw, no TeX error
    assert not report["rawInline"], f"raw \\( in the rendered text of {page}"
    assert not report["rawDisplay"], f"raw \\[ in the rendered text of {page}"
    assert report["errors"] == 0, f"{report['errors']} MathJax errors on {page}"
    if min_formulas:
        assert report["mathjax"], f"MathJax did not load on {page}"
        assert report["containers"] >= min_formulas, report["containers"]
    # every image loaded
    broken = [img["src"] for img in report["images"] if not img["ok"]]
    assert not broken, broken
    # nothing but the local server was asked for anything
    foreign = [r for r in report["resources"] if not r.startswith(site)
               and not r.startswith("data:")]
    assert not foreign, foreign
    # no console errors
    errors = [entry for entry in browser.get_log("browser")
              if entry.get("level") == "SEVERE"]
    assert not errors, errors


def test_gallery_example_has_figures(site, browser):
    browser.get(site + "auto_examples/plot_convergence.html")
    assert browser.execute_async_script(WAIT_SCRIPT) == "ok"
    images = browser.execute_script(
        "return Array.from(document.querySelectorAll('img.sphx-glr-single-img, "
        "img.sphx-glr-multi-img')).map(i => [i.naturalWidth, i.naturalHeight]);")
    assert images and all(w > 100 and h > 100 for w, h in images), images
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('a')).map(a => a.href);")
    assert any(link.endswith("plot_convergence.py") for link in links)
    assert any(link.endswith("plot_convergence.ipynb") for link in links)
