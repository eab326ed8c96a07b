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
        _open_and_run_all(page, f"{base}/lab/tree/{NOTEBOOK}?token={token}")
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



RACE_NOTEBOOK = {
    "cells": [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": (
            "from resnetlearn.live import LiveRace, RaceConfig\n"
            "race = LiveRace(RaceConfig(m=50, n_train=200, n_test=200, epochs=60, chunk=10), device='cpu')\n"
            "race")},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": (
            "from resnetlearn.figures_plotly import result_figure, show_figure\n"
            "from resnetlearn.reproduce import FigureResult\n"
            "rows = [dict(model=a, mode='all', m=m, n_train=500, beta=1.0, test_error=e / m, lr=0.1, wd=0.005)\n"
            "        for a, e in (('3resnet', 10.0), ('3layer', 400.0)) for m in (20, 50, 200)]\n"
            "show_figure(result_figure(FigureResult('fig2a', rows, '', True, 0.0)))")},
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}


def _put_notebook(base: str, token: str, name: str, nb: dict) -> None:
    import json

    req = urllib.request.Request(f"{base}/api/contents/{name}?token={token}", method="PUT",
                                 data=json.dumps({"type": "notebook", "format": "json", "content": nb}).encode(),
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=30)


def test_race_and_plotly_figures_in_the_browser(lab):
    """The race draws every learner's curve in a plotly FigureWidget updated from the training thread,
    Stop ends it; a figure shown with show_figure renders as an interactive plot with a hover label;
    no "get news?" prompt appears."""
    base, token = lab
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    _put_notebook(base, token, "race.ipynb", RACE_NOTEBOOK)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        _open_and_run_all(page, f"{base}/lab/workspaces/race/tree/race.ipynb?reset&token={token}")  # fresh workspace
        race = page.locator(".widget-vbox").filter(has=page.locator("button:has-text('Train')")).first
        race.wait_for(timeout=180_000)
        race.locator(".js-plotly-plot").first.wait_for(timeout=60_000)  # the FigureWidget, not text
        page.screenshot(path=str(ARTIFACTS / "race_1_before.png"))
        race.locator("button:has-text('Train')").click()
        status = race.locator(".widget-html")
        page.wait_for_function("(el) => el.innerText.includes('done')", arg=status.element_handle(),
                               timeout=180_000)
        race.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "race_2_done.png"))
        # every learner's curve is drawn: 3 learner traces with a non-empty path
        drawn = page.evaluate(
            "(root) => Array.from(root.querySelectorAll('.scatterlayer .trace')).slice(0, 3)"
            ".map(t => { const p = t.querySelector('path.js-line'); return p ? p.getAttribute('d').length : 0; })",
            race.element_handle())
        text = status.inner_text()
        # Train again, then Stop mid-race
        race.locator("button:has-text('Train')").click()
        page.wait_for_function("(el) => el.innerText.includes('racing')", arg=status.element_handle(),
                               timeout=60_000)
        race.locator("button:has-text('Stop')").click()
        page.wait_for_function("(el) => el.innerText.includes('stopped')", arg=status.element_handle(),
                               timeout=10_000)
        # the figure of cell 2: an interactive plot with a hover label
        # jupyterlab-plotly shows the bundle's PNG first and builds the interactive graph when the pointer
        # enters it (the same output serves static readers and interactive ones)
        out2 = page.locator(".jp-RenderedPlotly").last
        out2.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "race_3_static_png_first.png"))
        box = out2.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 3, box["y"] + box["height"] / 2)
        fig = out2.locator(".js-plotly-plot, .plot-container").first
        fig.wait_for(timeout=30_000)
        point = fig.locator(".scatterlayer .trace .points path").first
        box = point.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_selector(".hoverlayer .hovertext", timeout=10_000)
        hover = page.locator(".hoverlayer .hovertext").first.text_content()
        page.screenshot(path=str(ARTIFACTS / "race_3_plotly_hover.png"))
        news = page.locator("text=Jupyter news").count()
        browser.close()
    assert len(drawn) == 3 and all(n > 10 for n in drawn), f"learner curves not drawn: {drawn}"
    assert "3resnet(all)" in text and "2layer(all)" in text, text
    assert "lr" in hover and "test error" in hover, hover
    assert news == 0, "JupyterLab's news prompt is shown"


def _open_and_run_all(page, url: str) -> None:
    """Open a notebook in JupyterLab, wait for its kernel to be idle, then run every cell."""
    page.goto(url)
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    page.wait_for_function("window.jupyterapp !== undefined", timeout=60_000)
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " return w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel && w.sessionContext.session.kernel.status === 'idle'; }",
        timeout=120_000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
