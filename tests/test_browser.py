"""End-to-end: the hierarchical-learning notebook in JupyterLab, in a real browser.

Starts JupyterLab headless on loopback with a token, opens
notebooks/03_hierarchical_learning.ipynb (a copy) in headless Chromium
driven by Playwright, runs all cells, checks that the live-training widget
rendered as widgets (not as its text repr), changes α and presses Train,
and checks that the plot image changed. Screenshots go to
``test-artifacts/browser/``. Skipped, with the reason, where no Chromium or
Playwright can be had (`.ci/run` installs Debian's chromium).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
NOTEBOOK = "03_hierarchical_learning.ipynb"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]

playwright = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium executable on PATH "
                                "(Debian: apt-get install chromium); .ci/run installs it")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    work = tmp_path_factory.mktemp("lab")
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, work / NOTEBOOK)
    port, token = _free_port(), secrets.token_hex(16)
    log = open(work / "lab.log", "w")
    env = dict(os.environ, OMP_NUM_THREADS="1")  # leave a core for the browser
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}", "--allow-root",
         "--LabApp.expose_app_in_browser=True"],
        stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError("JupyterLab exited: " + (work / "lab.log").read_text()[-2000:]) from None
                time.sleep(0.5)
        else:
            raise RuntimeError("JupyterLab did not start within 60 s")
        yield base, token
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def test_live_widget_renders_and_retrains(lab):
    base, token = lab
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}")
        page.wait_for_selector(".jp-Notebook", timeout=90_000)
        page.wait_for_function("window.jupyterapp !== undefined", timeout=60_000)
        # wait for the kernel, then run every cell
        page.wait_for_function(
            "() => { const w = window.jupyterapp.shell.currentWidget;"
            " return w && w.sessionContext && w.sessionContext.session"
            " && w.sessionContext.session.kernel && w.sessionContext.session.kernel.status === 'idle'; }",
            timeout=120_000)
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        # the live trainer's sliders must render as widgets
        page.wait_for_selector(".widget-slider, .jupyter-widget-slider, .widget-hslider", timeout=300_000)
        page.wait_for_function(
            "() => { const w = window.jupyterapp.shell.currentWidget;"
            " return w.sessionContext.session.kernel.status === 'idle'; }", timeout=600_000)
        sliders = page.locator(".widget-hslider")
        assert sliders.count() >= 3, "expected the α, β and width sliders"
        body = page.inner_text(".jp-Notebook")
        assert "VBox(children=" not in body, "the widget was shown as its text repr, not rendered"
        trainer = page.locator(".widget-vbox").filter(has=page.locator("button:has-text('Train')")).first
        trainer.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "1_widget_rendered.png"))
        image = trainer.locator("img").first
        before = image.get_attribute("src") or ""
        # move α: type a new value into the slider's editable readout
        readout = sliders.first.locator(".widget-readout")
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("0.2")
        page.keyboard.press("Enter")
        trainer.locator("button:has-text('Train')").click()
        status = trainer.locator(".widget-html")
        page.wait_for_function(
            "(el) => el.innerText.includes('done')", arg=status.element_handle(), timeout=180_000)
        after = image.get_attribute("src") or ""
        trainer.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "2_after_training.png"))
        text = status.inner_text()
        browser.close()
    assert "α=0.20" in text, f"the run did not use the new α: {text!r}"
    assert after and after != before, "the plot image did not change after training"

