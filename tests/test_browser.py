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

import contextlib
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
from browser import CHROMIUM, NO_CHROMIUM, launch_chromium, open_lab, serve, stop
from jupyter_home import jupyter_env

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
NOTEBOOK = "03_hierarchical_learning.ipynb"

playwright = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _serve_lab(work: Path):
    """JupyterLab serving ``work`` on a free loopback port with a fresh token (:func:`browser.serve`), its Jupyter
    folders its own, never the user's, one torch thread (a core left for the browser); yields (base URL, token)."""
    env = jupyter_env(work.with_name(work.name + "-jupyter"), OMP_NUM_THREADS="1")
    proc, base, token = serve([f"--ServerApp.root_dir={work}", "--allow-root"], env, work / "lab.log")
    try:
        yield base, token
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    work = tmp_path_factory.mktemp("lab")
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, work / NOTEBOOK)
    with _serve_lab(work) as served:
        yield served


def test_live_widget_renders_and_retrains(lab):
    base, token = lab
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = launch_chromium(p)
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
        # the trainer: Train and the lr / wd dropdown (the race, above it in notebook 03, has no dropdown)
        trainer = (page.locator(".widget-vbox").filter(has=page.locator("button:has-text('Train')"))
                   .filter(has=page.locator("select")).first)
        trainer.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "1_widget_rendered.png"))
        image = trainer.locator("img").first
        before = image.get_attribute("src") or ""
        # move α: type a new value into the slider's editable readout
        readout = trainer.locator(".widget-hslider").first.locator(".widget-readout")
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
            "from resnetlearn.classroom.live import LiveRace, RaceConfig\n"
            "race = LiveRace(RaceConfig(m=50, n_train=200, n_test=200, epochs=60, chunk=10), device='cpu')\n"
            "race")},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": (
            "from resnetlearn.classroom.figures_plotly import result_figure, show_figure\n"
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
        browser = launch_chromium(p)
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
        # move α (sliders only stage the setting), Train again: the race runs with the new α; Stop mid-race
        readout = race.locator(".widget-hslider").first.locator(".widget-readout")
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("0.2")
        page.keyboard.press("Enter")
        race.locator("button:has-text('Train')").click()
        page.wait_for_function("(el) => el.innerText.includes('racing')", arg=status.element_handle(),
                               timeout=60_000)
        racing = status.inner_text()
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
    assert "α=0.20" in racing, f"the second race did not use the moved α slider: {racing!r}"
    assert "lr" in hover and "test error" in hover, hover
    assert news == 0, "JupyterLab's news prompt is shown"


def _open_and_run_all(page, url: str, *, clear: bool = False) -> None:
    """Open a notebook in JupyterLab, wait for its kernel to be idle, then run every cell (after clearing
    the saved outputs and execution counts when ``clear``)."""
    page.goto(url)
    page.wait_for_selector(".jp-Notebook", timeout=90_000)
    page.wait_for_function("window.jupyterapp !== undefined", timeout=60_000)
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " return w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel && w.sessionContext.session.kernel.status === 'idle'; }",
        timeout=120_000)
    if clear:
        page.evaluate("window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")


NB05 = "05_reproducing_the_paper.ipynb"
# run-all has finished: the kernel idle and every code cell run, or a cell raised (run-all stops there)
_RUN_FINISHED_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  if (w.sessionContext.session.kernel.status !== 'idle') return false;
  const code = w.content.widgets.filter(c => c.model.type === 'code');
  const raised = code.some(c => c.model.outputs.toJSON().some(o => o.output_type === 'error'));
  return raised || code.every(c => c.model.executionCount !== null);
}"""
_CELL_ERRORS_JS = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .filter(c => c.model.type === 'code')
  .flatMap(c => c.model.outputs.toJSON().filter(o => o.output_type === 'error')
  .map(o => `${c.model.sharedModel.getSource().split('\\n')[0]} -> ${o.ename}: ${o.evalue}`))"""


@pytest.fixture(scope="module")
def lab05(tmp_path_factory):
    """A root laid out like the repository, since notebook 05 reads ``../results`` next to itself."""
    work = tmp_path_factory.mktemp("lab05")
    (work / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / NB05, work / "notebooks" / NB05)
    # a copy, not a link: the rerun button writes into results/live; the per-point stores are not read
    shutil.copytree(ROOT / "results", work / "results", ignore=shutil.ignore_patterns("store", "live"))
    with _serve_lab(work) as served:
        yield served


@pytest.fixture(scope="module")
def nb05(lab05):
    """Notebook 05 as a student opens it (1280×800, file browser open, fresh workspace), every cell run
    once (it only reads the shipped results): the page, shared by the tests below, and the cells' errors.
    (These tests come last in the module: the sync Playwright of this fixture lives until its end.)"""
    base, token = lab05
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pw = playwright.sync_playwright().start()
    browser = launch_chromium(pw)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        # the shipped outputs cleared first, so that everything checked below is what this run drew
        _open_and_run_all(page, f"{base}/lab/workspaces/nb05/tree/notebooks/{NB05}?reset&token={token}",
                          clear=True)
        page.wait_for_function(_RUN_FINISHED_JS, timeout=240_000, polling=500)
        yield page, page.evaluate(_CELL_ERRORS_JS)
    finally:
        browser.close()
        pw.stop()


def _shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"nb05_{name}.png"))


def _settled_box(page, locator, tries: int = 20) -> dict:
    """Scroll ``locator`` into view until its bounding box stops moving, and return it: JupyterLab lays
    out cells lazily (content-visibility), so outputs above shift as they are first drawn."""
    prev = None
    for _ in range(tries):
        locator.scroll_into_view_if_needed()
        page.wait_for_timeout(150)
        box = locator.bounding_box()
        if box == prev:
            return box
        prev = box
    return prev


# per plotly output, once interactive: traces drawn, the legend scrolled (entries hidden below its fold),
# the title under the mode bar (plotly's zoom/pan icons, shown while the pointer is on the figure)
_PLOTLY_LAYOUT_JS = """(out) => {
  const r = (sel) => { const e = out.querySelector(sel); return e ? e.getBoundingClientRect() : null; };
  const hit = (a, b) => a && b && a.width > 0 && b.width > 0 && a.left < b.right && b.left < a.right
                        && a.top < b.bottom && b.top < a.bottom;
  const bar = out.querySelector('.legend .scrollbar');
  return {traces: out.querySelectorAll('.scatterlayer .trace').length,
          legend_scrolls: !!bar && bar.getBoundingClientRect().height > 0,
          title_under_modebar: hit(r('.gtitle'), r('.modebar'))};
}"""

# the claims' text: its lines, the visual line count (distinct line-box tops), whether the output node
# overflows sideways, and whether any line would overflow the <pre> unwrapped (pre-wrap shows that as a wrap)
_TEXT_LAYOUT_JS = """(out) => {
  const pre = out.querySelector('pre') || out;
  const range = document.createRange(); range.selectNodeContents(pre);
  const tops = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top)));
  const ws = pre.style.whiteSpace; pre.style.whiteSpace = 'pre';
  const unwrapped = [pre.scrollWidth, pre.clientWidth]; pre.style.whiteSpace = ws;
  return {text: pre.textContent, visual: tops.size, overflow: [out.scrollWidth, out.clientWidth], unwrapped};
}"""

# the rerun widget: its button's label fits (scrollWidth <= clientWidth), and no displayed <img> is broken
_RERUN_LAYOUT_JS = """(w) => {
  const b = w.querySelector('button');
  const shown = Array.from(w.querySelectorAll('img')).filter(i => i.getClientRects().length > 0);
  return {button: [b.scrollWidth, b.clientWidth, b.innerText],
          broken: shown.filter(i => !i.complete || i.naturalWidth === 0).length, text: w.innerText};
}"""


def test_notebook05_plotly_figures_are_interactive_with_hover(nb05):
    """Every plotly output of notebook 05 becomes an interactive plot (an SVG graph with its traces, not
    text) with its whole legend in view and its title clear of the mode bar; hovering a point of Figure
    2(a) shows the learner, lr, wd and seeds; no cell raised, no news prompt. Screenshots
    ``nb05_2_figure*.png``, ``nb05_3_fig2a_hover.png``."""
    import re

    page, tracebacks = nb05
    # jupyterlab-plotly shows the bundle's PNG first and builds the interactive graph when the pointer enters
    figs = page.locator(".jp-RenderedPlotly")
    n_figs, layouts = figs.count(), []
    for i in range(n_figs):
        out = figs.nth(i)
        box = _settled_box(page, out)
        page.mouse.move(box["x"] + 5, box["y"] + box["height"] / 2)
        out.locator(".plot-container .main-svg").first.wait_for(timeout=30_000)  # (out is .js-plotly-plot)
        _settled_box(page, out)
        layouts.append(out.evaluate(_PLOTLY_LAYOUT_JS))
        _shot(page, f"2_figure{i + 1}")
    # Figure 2(a), the first figure: the pointer on a point of the first learner's curve
    fig2a = figs.first
    _settled_box(page, fig2a)
    point = fig2a.locator(".scatterlayer .trace .points path").first
    box = _settled_box(page, point)
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    label = fig2a.locator(".hoverlayer .hovertext").first
    label.wait_for(timeout=10_000)
    hover = label.text_content()
    _shot(page, "3_fig2a_hover")
    page.mouse.move(5, 400)
    body = page.inner_text(".jp-Notebook")
    news = page.locator("text=Jupyter news").count()

    assert not tracebacks, f"cells raised: {tracebacks}"
    assert n_figs >= 5, f"expected a plotly figure per shipped result, got {n_figs}"
    assert all(lay["traces"] >= 2 for lay in layouts), f"plotly figures without drawn traces: {layouts}"
    assert "Figure({" not in body, "a plotly figure was shown as its text repr"
    assert re.search(r"\d?(resnet|layer)\((all|last|ntk|hidden)\)", hover), f"no learner in the hover: {hover!r}"
    assert all(key in hover for key in ("lr", "wd", "seeds")), f"hover without lr, wd, seeds: {hover!r}"
    assert not [i + 1 for i, lay in enumerate(layouts) if lay["legend_scrolls"]], (
        f"legend entries hidden below the legend's fold (figure, 1-based): {layouts}")
    assert not [i + 1 for i, lay in enumerate(layouts) if lay["title_under_modebar"]], (
        f"titles under plotly's mode bar (figure, 1-based): {layouts}")
    assert news == 0, "JupyterLab's news prompt is shown"


def test_notebook05_rerun_widget_renders(nb05):
    """The last cell's FigureRerun renders as a widget: its button's label whole, no broken image under it,
    the ready status shown (not pressed: it trains for minutes). Screenshot ``nb05_4_rerun_widget.png``."""
    page, _ = nb05
    rerun = page.locator(".widget-vbox").filter(has=page.locator("button:has-text('Rerun')")).first
    _settled_box(page, rerun)
    _shot(page, "4_rerun_widget")
    widget = rerun.evaluate(_RERUN_LAYOUT_JS)
    assert "VBox(children=" not in page.inner_text(".jp-Notebook"), "the rerun widget was shown as its text repr"
    assert "Rerun fig2a" in widget["button"][2], widget
    assert widget["button"][0] <= widget["button"][1], f"the rerun button's label is cut off: {widget['button']}"
    assert widget["broken"] == 0, f"{widget['broken']} broken image(s) in the rerun widget"
    assert "press the button" in widget["text"], widget["text"]


def test_notebook05_claims_fit_without_wrapping(nb05):
    """The claims cell's summary lines (``textwrap.fill`` at 96) fit the output: at most 96 characters,
    no line wrapped again by the browser (which breaks mid-word), no sideways overflow. Screenshot
    ``nb05_1_claims.png``."""
    page, _ = nb05
    claims = page.locator(".jp-CodeCell").filter(has_text="textwrap.fill").locator(".jp-OutputArea-output")
    _settled_box(page, claims.first)
    claims.first.evaluate("e => e.scrollIntoView({block: 'start'})")  # from its first line
    page.wait_for_timeout(200)
    _shot(page, "1_claims")
    layout = claims.first.evaluate(_TEXT_LAYOUT_JS)
    lines = [line.rstrip() for line in layout["text"].splitlines() if line.strip()]
    assert len(lines) > 10 and "fig2a: Claim" in layout["text"], layout["text"][:300]
    assert max(map(len, lines)) <= 96, [line for line in lines if len(line) > 96]
    assert layout["overflow"][0] <= layout["overflow"][1], f"the claims overflow sideways: {layout}"
    assert layout["unwrapped"][0] <= layout["unwrapped"][1] and layout["visual"] == len(lines), (
        f"summary lines wrap on screen: {len(lines)} text lines drawn as {layout['visual']}, "
        f"{layout['unwrapped'][0]} px of text in {layout['unwrapped'][1]} px")


# ----------------------------------------------------------------- a newcomer's first start ---------
# Both routes of the README's first screen, from a copy of the repository's tracked files, as root where the
# tests run as root: `make lab` (its recipe: venv, torch, `pip install -e .`, JupyterLab with --allow-root added
# by the Makefile) and a plain `python -m venv v && v/bin/pip install . && v/bin/jupyter lab`. A full install is
# minutes (measured for the README: 48 s for the venv and torch, 95 s for the rest, from local wheels), so each
# venv here *reuses* this environment's packages: a .pth file puts this interpreter's site-packages on its path
# before pip runs, so pip finds torch, JupyterLab, ipywidgets ... already satisfied and installs only resnetlearn
# itself (the real install of the package, its settings file included); jupyterlab and jupyter_core are
# reinstalled into it without dependencies (from pip's cache) for its own `bin/jupyter`. Which packages a
# plain `pip install .` pulls in is checked by tests/test_binder.py against pyproject.toml.
FRESH_NOTEBOOK = "00_welcome.ipynb"
_OPENED_CLEAN_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  if (!w || !w.context || !w.sessionContext || !w.sessionContext.session) return null;
  const kernel = w.sessionContext.session.kernel;
  return {path: w.context.path, dirty: w.context.model.dirty, kernel: kernel ? kernel.status : null,
          display_name: w.sessionContext.kernelDisplayName,
          dirty_tabs: document.querySelectorAll('.lm-TabBar-tab.jp-mod-dirty').length,
          dialogs: document.querySelectorAll('.jp-Dialog').length};
}"""


def _tracked_copy(dest: Path) -> Path:
    """The repository's tracked files as they are in the working tree (a fresh clone of this state)."""
    from repo_copy import tracked_copy

    return tracked_copy(dest)


def _reusing_venv(path: Path) -> Path:
    """A venv that sees this environment's packages (see above) and has its own bin/jupyter."""
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    py = path / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "_reuse_outer_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", "jupyterlab",
                    "jupyter_core"], check=True)
    # what the reused packages' own installs put under the prefix: server-extension switches (jupyter_lsp,
    # ...) and the front-end extensions (widgets, plotly, anywidget)
    outer = Path(sys.prefix)
    if (outer / "etc" / "jupyter").is_dir():
        shutil.copytree(outer / "etc" / "jupyter", path / "etc" / "jupyter", dirs_exist_ok=True)
    labext = path / "share" / "jupyter" / "labextensions"
    labext.mkdir(parents=True, exist_ok=True)
    for ext in (outer / "share" / "jupyter" / "labextensions").glob("*"):
        if not (labext / ext.name).exists():
            (labext / ext.name).symlink_to(ext)
    return path


def _newcomer_env(home: Path) -> dict:
    """The environment of somebody who never ran JupyterLab: no user settings, workspaces or config."""
    return jupyter_env(home, OMP_NUM_THREADS="1")


def _wait_for_lab(base: str, token: str, proc, log: Path, timeout: float = 90) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("JupyterLab exited: " + log.read_text()[-3000:]) from None
            time.sleep(0.5)
    raise RuntimeError(f"JupyterLab did not start within {timeout:.0f} s: " + log.read_text()[-3000:])


def _stop(proc) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()


def _open_fresh(url: str, shot: str) -> tuple[dict, str, list[str]]:
    """Open ``url`` in a fresh browser at 1280×800, wait for the notebook and its idle kernel, let it settle,
    screenshot; return the notebook's state, the page text and the page's console errors. Run in a thread of
    its own: the module-scoped ``nb05`` fixture keeps a sync Playwright (and its event loop) alive in this
    thread until the module ends, and a second sync Playwright refuses to start inside a running loop."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(_open_fresh_here, url, shot).result()


def _open_fresh_here(url: str, shot: str) -> tuple[dict, str, list[str]]:
    with playwright.sync_playwright() as p:
        browser = launch_chromium(p)
        page, errors = open_lab(browser, url, timeout=90_000)
        page.wait_for_function(f"() => {{ const s = ({_OPENED_CLEAN_JS})(); return s && s.kernel === 'idle'; }}",
                               timeout=120_000)
        page.wait_for_timeout(3000)  # JupyterLab rewrites a mismatched kernelspec only after the kernel starts
        state = page.evaluate(_OPENED_CLEAN_JS)
        text = page.inner_text("body")
        page.screenshot(path=str(ARTIFACTS / shot))
        browser.close()
    return state, text, errors


def _assert_opened_clean(state: dict, text: str, errors: list[str], log: str) -> None:
    assert state["path"].endswith(FRESH_NOTEBOOK), state
    assert state["dirty"] is False and state["dirty_tabs"] == 0, f"the notebook opened modified: {state}"
    assert state["dialogs"] == 0, f"a dialog is shown: {text[:500]}"
    assert state["display_name"] == "Python 3 (ipykernel)", state
    assert "Jupyter news" not in text and "Running as root is not recommended" not in log
    assert "Traceback" not in log, log[-3000:]
    # the browser's own console: no error from JupyterLab or an extension (the favicon's 404 aside)
    assert not [e for e in errors if "favicon" not in e], errors


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory):
    return _tracked_copy(tmp_path_factory.mktemp("fresh") / "clone")


@pytest.mark.install
def test_make_lab_opens_notebook_00_unmodified(fresh_clone, tmp_path):
    """`make lab` from a fresh copy (as root here: the Makefile adds --allow-root) installs, starts JupyterLab
    on its working copies in work/ and opens 00_welcome (LabApp.default_url): unmodified, no dialog, no error.
    Screenshot ``fresh_make_lab.png``."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    venv = _reusing_venv(tmp_path / "venv")
    port, token = _free_port(), secrets.token_hex(16)
    log = tmp_path / "make_lab.log"
    lab_args = (f"--no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={token} "
                "--LabApp.expose_app_in_browser=True")  # window.jupyterapp, for the checks
    with open(log, "w") as out:
        proc = subprocess.Popen(["make", "lab", f"VENV={venv}", f"PYTHON={sys.executable}", f"LAB_ARGS={lab_args}"],
                                cwd=fresh_clone, stdout=out, stderr=subprocess.STDOUT,
                                env=_newcomer_env(tmp_path / "home"), start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_lab(base, token, proc, log, timeout=300)  # the install comes first
        state, text, errors = _open_fresh(f"{base}/?token={token}", "fresh_make_lab.png")  # default_url: 00
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)  # make and the JupyterLab it started
        _stop(proc)
    log_text = log.read_text()
    assert ("--allow-root" in log_text) == (os.getuid() == 0)
    assert "pip install -e ." in log_text and ".[dev]" not in log_text
    assert "resnetlearn.classroom.copies --out work" in log_text and (fresh_clone / "work" / FRESH_NOTEBOOK).is_file()
    _assert_opened_clean(state, text, errors, log_text)


@pytest.mark.install
def test_plain_pip_install_opens_notebook_00_unmodified(fresh_clone, tmp_path):
    """`python -m venv v && v/bin/pip install . && v/bin/jupyter lab` (plus --allow-root as root, as the README
    says): notebook 00 opens unmodified, without a news prompt, dialog or error. Screenshot
    ``fresh_pip_install.png``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    venv = _reusing_venv(tmp_path / "v")
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "."], cwd=fresh_clone, check=True)
    settings = venv / "share/jupyter/lab/settings/overrides.d/resnetlearn.json"
    assert settings.is_file(), "pip install . did not place the JupyterLab settings"
    port, token = _free_port(), secrets.token_hex(16)
    log = tmp_path / "pip_lab.log"
    root = ["--allow-root"] if os.getuid() == 0 else []
    with open(log, "w") as out:
        proc = subprocess.Popen([str(venv / "bin" / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1",
                                 f"--port={port}", f"--IdentityProvider.token={token}",
                                 "--LabApp.expose_app_in_browser=True", *root],
                                cwd=fresh_clone, stdout=out, stderr=subprocess.STDOUT,
                                env=_newcomer_env(tmp_path / "home"))
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_lab(base, token, proc, log)
        state, text, errors = _open_fresh(f"{base}/lab/tree/notebooks/{FRESH_NOTEBOOK}?token={token}",
                                          "fresh_pip_install.png")
    finally:
        _stop(proc)
    _assert_opened_clean(state, text, errors, log.read_text())
