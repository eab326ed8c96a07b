"""Headless Chromium for the browser tests (test_browser.py, test_student.py, test_book.py): where the executable
is and how it is launched, defined once."""

from __future__ import annotations

import shutil

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
NO_CHROMIUM = "no chromium executable on PATH (Debian: apt-get install chromium); .ci/run installs it"
"""Why a browser test is skipped where :data:`CHROMIUM` is None."""


def launch_chromium(p):
    """A headless Chromium browser from a started sync Playwright ``p`` (``sync_playwright()``)."""
    return p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def open_lab(browser, url: str, *, timeout: int) -> tuple:
    """A 1280×800 page of ``browser`` at JupyterLab ``url``, once the app has started (within ``timeout`` ms), and
    the list it collects the page's console errors into (a test asserts it stays empty)."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url)
    page.wait_for_function("window.jupyterapp !== undefined", timeout=timeout)
    return page, errors
