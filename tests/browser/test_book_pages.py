"""The built book as a reader's browser shows it: headless Chromium (Debian's chromium and
chromium-driver, nothing downloaded) driven by Selenium over the HTML in book/_build/html.

Every page loads without console errors, every image loads, the math is typeset (MathJax is
bundled with the book, so no network is needed and no raw \\( is left in the text), every internal
link resolves to a page and anchor that exist, and the claims page has a row for every claim.

`make test` runs this after building the smoke book; it skips (and says why) where no browser
is installed or no book is built. BOOK_HTML points it at another build.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

from experiments.claims import CLAIMS

ROOT = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("BOOK_HTML", ROOT / "book" / "_build" / "html"))
CHROMIUM, CHROMEDRIVER = shutil.which("chromium") or "/usr/bin/chromium", shutil.which("chromedriver") or "/usr/bin/chromedriver"
# pages Sphinx writes for itself, not chapters of the book
SKIP_PAGES = {"search.html", "genindex.html"}

if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    pytest.skip("no browser: install Debian's chromium and chromium-driver to test the book's pages",
                allow_module_level=True)
if not (HTML / "index.html").is_file():
    pytest.skip(f"no built book at {HTML} (make book PROFILE=smoke)", allow_module_level=True)

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.common.exceptions import TimeoutException  # noqa: E402

PAGES = sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
               if not p.relative_to(HTML).parts[0].startswith("_") and p.name not in SKIP_PAGES)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(HTML)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1280,1600", f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    yield driver
    driver.quit()


MATHJAX_TYPESET = ("const done = arguments[arguments.length - 1];"
                   "const mj = window.MathJax;"
                   "if (mj && mj.startup && mj.startup.promise) { mj.startup.promise.then(() => done(true), () => done(false)); }"
                   "else { done(true); }")


def _open(browser, url: str) -> None:
    """Load `url` and wait until MathJax (where the page has it) has typeset. A page that redirects
    at once (the book's index.html, a zero-second refresh to intro.html) can navigate while the wait
    runs, which ends the script with a timeout at once: the wait then runs again on the page it
    landed on (seen once in a run of `make test`, 2026-12-08)."""
    browser.get(url)
    try:
        browser.execute_async_script(MATHJAX_TYPESET)
    except TimeoutException:
        browser.execute_async_script(MATHJAX_TYPESET)


# the reader's text of a page: the article without code (code may well contain a backslash-paren)
READER_TEXT = """
const main = document.querySelector('main') || document.body;
const copy = main.cloneNode(true);
copy.querySelectorAll('pre, code, .highlight, script, style, mjx-container').forEach(e => e.remove());
return copy.textContent;
"""
BROKEN_IMAGES = "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src);"
LINKS = "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href);"


def test_the_book_has_its_pages():
    assert "generated/claims.html" in PAGES and "intro.html" in PAGES, PAGES


@pytest.mark.parametrize("page", PAGES)
def test_page_reads_cleanly(browser, server, page):
    _open(browser, server + page)
    errors = [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, f"{page}: console errors {errors}"
    assert not browser.execute_script(BROKEN_IMAGES), f"{page}: images that did not load"
    text = browser.execute_script(READER_TEXT)
    raw = [m.group(0) for m in re.finditer(r"\\[(\[]|\$\$", text)]
    assert not raw, f"{page}: untypeset math left in the text: {raw[:5]}"
    if "mathjax" in browser.page_source.lower():
        assert "cdn" not in browser.execute_script(
            "return Array.from(document.scripts).map(s => s.src).filter(s => s.includes('mathjax')).join(' ')"), \
            f"{page}: MathJax is loaded from a CDN, not from the book"


@functools.lru_cache(maxsize=None)
def _anchors(path: Path) -> frozenset[str]:
    return frozenset(re.findall(r'\sid="([^"]+)"', path.read_text(errors="replace")))


@pytest.mark.parametrize("page", PAGES)
def test_internal_links_resolve(browser, server, page):
    browser.get(server + page)
    broken = []
    for href in browser.execute_script(LINKS):
        if not href.startswith(server):
            continue
        address, fragment = urldefrag(href)
        path = HTML / unquote(urlparse(address).path).lstrip("/")
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file():
            broken.append(href)
        elif fragment and path.suffix == ".html" and unquote(fragment) not in _anchors(path):
            broken.append(href)
    assert not broken, f"{page}: links to pages or anchors that do not exist: {broken}"


def test_claims_page_has_a_row_for_every_claim(browser, server):
    _open(browser, server + "generated/claims.html")
    rows = [r.replace("\u2019", "'") for r in browser.execute_script(  # Sphinx's smart quotes, undone
        "return Array.from(document.querySelectorAll('main table tbody tr')).map(r => r.innerText);")]
    assert len(rows) == len(CLAIMS), rows
    for claim in CLAIMS:
        row = next((r for r in rows if r.startswith(claim.statement) and claim.setting in r), None)
        assert row is not None, f"no row for {claim.key}: {claim.statement} ({claim.setting})"
        words = ("kept", "violated") if claim.construction else ("held", "partly", "did not hold", "cannot tell here")
        assert any(w in row for w in words), row
