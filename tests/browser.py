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
