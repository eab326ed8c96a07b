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


def open_lab(browser, url: str, *, timeout: int, viewport: tuple[int, int] = (1280, 800)) -> tuple:
    """A page of ``browser`` (``viewport``: width, height) at JupyterLab ``url``, once the app has started (within
    ``timeout`` ms), and the list it collects the page's console errors into (a test asserts it stays empty)."""
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url)
    page.wait_for_function("window.jupyterapp !== undefined", timeout=timeout)
    return page, errors


# ----------------------------------------------------------------- JupyterLab on a temporary folder
JUPYTER_DIR_VARS = ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTERLAB_WORKSPACES_DIR",
                    "JUPYTERLAB_SETTINGS_DIR")
"""Where JupyterLab writes config, data, runtime files, workspaces and settings: pointed at a temporary folder so
that a test never touches the user's own Jupyter."""


def jupyter_env(tmp, **extra) -> dict:
    """An environment for a JupyterLab subprocess whose Jupyter folders all lie under ``tmp``; one torch thread."""
    import os
    from pathlib import Path

    env = dict(os.environ, OMP_NUM_THREADS="1", **extra)
    for var in JUPYTER_DIR_VARS:
        path = Path(tmp) / "jupyter" / var.lower()
        path.mkdir(parents=True, exist_ok=True)
        env[var] = str(path)
    return env


def serve(args: list[str], env: dict, log_path, *, start_timeout: float = 90.0):
    """Start ``python -m jupyter lab ARGS`` headless on a free loopback port with a fresh token; returns
    (process, base URL, token) once it answers. The caller stops the process (:func:`stop`)."""
    import secrets
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    log = open(log_path, "w")
    proc = subprocess.Popen([sys.executable, "-m", "jupyter", "lab", *args, "--no-browser", "--ip=127.0.0.1",
                             f"--port={port}", f"--IdentityProvider.token={token}",
                             "--LabApp.expose_app_in_browser=True"],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + start_timeout
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            return proc, base, token
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                stop(proc)
                raise RuntimeError("JupyterLab did not start: " + open(log_path).read()[-2000:]) from None
            time.sleep(0.5)


def stop(proc) -> None:
    import subprocess

    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()


KERNEL_IDLE_JS = ("() => { const w = window.jupyterapp.shell.currentWidget; return !!(w && w.sessionContext"
                  " && w.sessionContext.session && w.sessionContext.session.kernel"
                  " && w.sessionContext.session.kernel.status === 'idle'); }")


def run_all_and_wait(page, *, timeout: int = 600_000) -> None:
    """Run every cell of the current notebook and wait until every code cell has run (or one raised) and the
    kernel is idle."""
    page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function("""() => { const w = window.jupyterapp.shell.currentWidget;
      if (w.sessionContext.session.kernel.status !== 'idle') return false;
      const code = w.content.widgets.filter(c => c.model.type === 'code');
      const raised = code.some(c => c.model.outputs.toJSON().some(o => o.output_type === 'error'));
      return raised || code.every(c => c.model.executionCount !== null); }""", timeout=timeout)


# ----------------------------------------------------------------- the deck (jupyterlab-slideshow)
ACTIVE_CELL_JS = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"


def deck_slides(page, *, settle: float = 1.0):
    """Step through the presented notebook from its first cell with ``deck:forward`` (the arrow key's command),
    yielding the active cell's index at each step, until a step no longer moves."""
    import time

    page.evaluate("window.jupyterapp.shell.currentWidget.content.activeCellIndex = 0")
    time.sleep(settle)
    seen = set()
    while True:
        index = page.evaluate(ACTIVE_CELL_JS)
        if index in seen:
            return
        seen.add(index)
        yield index
        page.evaluate("window.jupyterapp.commands.execute('deck:forward')")
        time.sleep(settle)


# ----------------------------------------------------------------- pictures as shown
MEASURE_JS = r"""(onlyDeck) => {
  const vw = window.innerWidth, vh = window.innerHeight;
  const nb = window.jupyterapp.shell.currentWidget.content;
  const out = [];
  nb.widgets.forEach((cell, index) => {
    if (onlyDeck && !cell.node.classList.contains('jp-deck-mod-onscreen')) return;
    if (cell.model.type !== 'code') return;
    const texts = cell.model.outputs.toJSON().map(o => (o.data && o.data['text/plain']) || '').map(
      t => Array.isArray(t) ? t.join('') : t);
    const area = cell.node.querySelector('.jp-OutputArea');
    if (!area) return;
    const arect = area.getBoundingClientRect();
    const right = Math.min(vw, arect.right);
    for (const img of cell.node.querySelectorAll('.jp-OutputArea-output img')) {
      const r = img.getBoundingClientRect();
      if (r.width < 2 || img.closest('.js-plotly-plot')) continue;
      if (getComputedStyle(img).visibility === 'hidden') continue;
      out.push({index, texts, kind: 'png', src: img.src, shown: r.width, natural: img.naturalWidth,
                cut_off: r.right > right + 1 || r.left < -1});
    }
    for (const plot of cell.node.querySelectorAll('.js-plotly-plot')) {
      const svg = plot.querySelector('svg.main-svg');
      if (!svg) continue;
      const r = svg.getBoundingClientRect();
      if (r.width < 2) continue;
      const layout = parseFloat(svg.getAttribute('width')) || r.width;
      let smallest = Infinity, cut = r.right > right + 1 || r.left < -1;
      for (const t of plot.querySelectorAll('text')) {
        if (!t.textContent.trim()) continue;
        const tr = t.getBoundingClientRect();
        if (tr.width === 0) continue;
        const size = parseFloat(getComputedStyle(t).fontSize);
        smallest = Math.min(smallest, size * r.width / layout);
        if (tr.right > Math.min(right, r.right) + 1 || tr.left < r.left - 1) cut = true;
      }
      if (plot.querySelector('.legend .scrollbar') &&
          plot.querySelector('.legend .scrollbar').getBoundingClientRect().height > 0) cut = true;
      const title = plot.querySelector('.gtitle');
      out.push({index, texts, kind: 'plotly', title: title ? title.textContent : '', shown: r.width,
                natural: layout, smallest_px: smallest === Infinity ? null : smallest, cut_off: cut});
    }
  });
  return out;
}"""
"""Every picture of the current notebook as shown (``onlyDeck``: only the cells on the current slide): PNG images
(shown and natural width, where it comes from) and plotly figures (smallest text in px on screen: computed font
size × shown width / layout width), each with whether it runs past its output area or the window."""


def png_bytes(page, src: str) -> bytes:
    """The bytes of an image shown in ``page`` (a data: or blob: URL)."""
    import base64

    if src.startswith("data:"):
        return base64.b64decode(src.split(",", 1)[1])
    b64 = page.evaluate("""async (src) => { const b = await (await fetch(src)).arrayBuffer();
      let s = ''; const u = new Uint8Array(b); for (let i = 0; i < u.length; i++) s += String.fromCharCode(u[i]);
      return btoa(s); }""", src)
    return base64.b64decode(b64)


def contact_sheet(pictures: list, out, *, columns: int = 4, labels: list[str] | None = None) -> None:
    """One PNG with every picture (paths of screenshots) in a grid, labelled (matplotlib only)."""
    import math

    import matplotlib.image as mpimg
    from matplotlib.figure import Figure

    rows = math.ceil(len(pictures) / columns)
    fig = Figure(figsize=(columns * 4.0, rows * 3.3))
    for i, path in enumerate(pictures):
        ax = fig.add_subplot(rows, columns, i + 1)
        ax.imshow(mpimg.imread(str(path)))
        ax.set_axis_off()
        ax.set_title(labels[i] if labels else f"slide {i + 1}", fontsize=10)
    fig.tight_layout()
    fig.savefig(str(out), dpi=100)


SLIDE_FIT_JS = r"""() => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  // where the deck can show anything: the window, cut by the notebook's scroller and each enclosing element
  // (panel, dock) that clips what overflows it; the elements inside a cell are not frames
  const frames = [nb.node.querySelector('.jp-WindowedPanel-outer'), nb.node];
  for (let a = nb.node.parentElement; a; a = a.parentElement) frames.push(a);
  let [top, bottom, left, right] = [0, window.innerHeight, 0, window.innerWidth];
  for (const a of frames.filter(Boolean)) {
    const cs = getComputedStyle(a), r = a.getBoundingClientRect();
    const clips = cs.overflowX !== 'visible' || cs.overflowY !== 'visible' || /paint|strict|content/.test(cs.contain);
    if (!clips || r.width < 1 || r.height < 1) continue;
    [top, bottom, left, right] = [Math.max(top, r.top), Math.min(bottom, r.bottom), Math.max(left, r.left),
                                  Math.min(right, r.right)];
  }
  const frame = [top, bottom, left, right].map(Math.round);
  const active = nb.activeCellIndex;
  let title = '';
  for (let i = active; i >= 0; i--) {
    const meta = nb.widgets[i].model.getMetadata('slideshow') || {};
    if (meta.slide_type === 'slide' || meta.slide_type === 'subslide' || i === 0) {
      const line = nb.widgets[i].model.sharedModel.getSource().split('\n').find(l => l.startsWith('#'));
      title = line ? line.replace(/^#+\s*/, '') : `cell ${i}`;
      break;
    }
  }
  const name = (el) => (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 60);
  const seen = (e) => { const r = e.getBoundingClientRect();
    return r.width >= 1 && r.height >= 1 && getComputedStyle(e).visibility !== 'hidden' ? r : null; };
  const box = (el) => {  // an output's box is that of what it draws (texts, plot areas, pictures, controls)
    if (!el.matches('.jp-OutputArea-output')) return seen(el);
    const drawn = Array.from(el.querySelectorAll('svg text, .nsewdrag, img, pre, button, input, .widget-label, '
      + '.widget-html-content, .widget-readout')).filter(e => e.textContent.trim() || !e.matches('svg text'))
      .map(seen).filter(Boolean);
    if (!drawn.length) return seen(el);
    return {top: Math.min(...drawn.map(r => r.top)), bottom: Math.max(...drawn.map(r => r.bottom)),
            left: Math.min(...drawn.map(r => r.left)), right: Math.max(...drawn.map(r => r.right))};
  };
  const parts = [];
  nb.widgets.forEach((cell, index) => {
    if (!cell.node.classList.contains('jp-deck-mod-visible')) return;
    const blocks = [];
    for (const el of cell.node.querySelectorAll('.jp-RenderedMarkdown > *')) {
      const items = el.matches('ul, ol') ? el.querySelectorAll(':scope > li') : [el];
      for (const item of items) blocks.push([`${item.tagName.toLowerCase()} "${name(item)}"`, item]);
    }
    for (const out of cell.node.querySelectorAll('.jp-OutputArea-output')) {
      const plot = out.querySelector('.js-plotly-plot svg.main-svg'), img = out.querySelector('img');
      const what = plot ? 'figure (interactive)' : img ? 'figure (picture)'
        : out.querySelector('.widget-box, .jupyter-widgets') ? 'widget' : `printed "${name(out)}"`;
      blocks.push([`${what} of cell ${index}`, out]);
    }
    for (const [what, el] of blocks) {
      const r = box(el);
      if (r === null) continue;
      parts.push({what, cell: index, top: Math.round(r.top), bottom: Math.round(r.bottom),
                  left: Math.round(r.left), right: Math.round(r.right),
                  outside: r.top < top - 1 || r.bottom > bottom + 1 || r.left < left - 1 || r.right > right + 1});
    }
  });
  return {title, active, viewport: [window.innerWidth, window.innerHeight], frame, parts};
}"""
"""Where the current slide's visible content lies: the slide's title (its first heading), and each part shown
(every block of its markdown cells: heading, paragraph, list item, formula; every output of its code cells:
figure, printed text, widget; an output's box that of what it draws: texts, plot areas, pictures, controls)
with its box in px from the window's top-left, and whether it lies, even in part,
outside the frame where the deck can show anything (the window cut by the notebook's scroller and by each
enclosing element that clips its overflow: JupyterLab's panel and dock): a scrolled-away or cut-off part.
A fragment laid out but not yet revealed is not counted."""


def slide_overflow(fit: dict) -> list[str]:
    """The parts of a slide (:data:`SLIDE_FIT_JS`'s answer) that lie outside the screen, each named with its box."""
    top, bottom, left, right = fit["frame"]
    return [f"{p['what']} at top {p['top']}, bottom {p['bottom']}, left {p['left']}, right {p['right']} "
            f"(shown: top {top}, bottom {bottom}, left {left}, right {right})" for p in fit["parts"] if p["outside"]]
