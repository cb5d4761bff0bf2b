"""The README's picture of the claims page, taken from a built book in headless Chromium.

    python perf/claims_screenshot.py [BOOK_HTML] [OUT]
    # defaults: book/_build/html (build it with `make book`, the mini profile) and book/images/claims-page.png

Needs Debian's chromium and chromium-driver (as the browser tests do). The page is served over
a local HTTP server, as a reader would open it, and the whole page is captured.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import sys
import tempfile
import threading
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

ROOT = Path(__file__).resolve().parents[1]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def screenshot(html: Path, out: Path, width: int = 1400) -> Path:
    """Capture `html`/generated/claims.html, as tall as the page, into the PNG `out`."""
    page = html / "generated" / "claims.html"
    if not page.is_file():
        raise FileNotFoundError(f"no claims page at {page}: run make book first")
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(html)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    with tempfile.TemporaryDirectory() as profile:
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                     f"--window-size={width},1200", f"--user-data-dir={profile}"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                                  options=options)
        try:
            driver.get(f"http://127.0.0.1:{httpd.server_address[1]}/generated/claims.html")
            height = driver.execute_script("return document.documentElement.scrollHeight")
            driver.set_window_size(width, height)
            out.parent.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(out))
        finally:
            driver.quit()
            httpd.shutdown()
    return out


if __name__ == "__main__":
    html = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "book" / "_build" / "html"
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "book" / "images" / "claims-page.png"
    print(f"wrote {screenshot(html, out)}")
