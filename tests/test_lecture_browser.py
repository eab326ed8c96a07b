"""The lecture as `make lecture` opens it, in a real browser: JupyterLab started by the lecture's own arguments on
a working copy of the deck (all Jupyter folders temporary), already presenting; every slide stepped through at
1280×720 with no console error; Train pressed on the race's slide and the race seen training; the finished race's
slide whole on the screen at 1280×720 and at 1024×768 (its heading, its Train button, its plot and every entry of
its legend inside the window, measured from the page; written to ``test-artifacts/lecture/race_place.json``);
every step of every slide whole on the screen at both sizes, its figures both as first shown (the static
picture) and as drawn interactively once the pointer enters them (each heading, paragraph, list item, formula,
figure, printed output and widget inside the window, measured from the page; written to
``test-artifacts/lecture/slide_fit.json``); a screenshot of every slide at each size, put together in one contact
sheet per size (``test-artifacts/lecture/contact_sheet.png`` at 1024×768, ``contact_sheet_1280x720.png``).
Skipped where no Chromium, Playwright or jupyterlab-slideshow can be had."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

import nbformat
import pytest
from browser import (
    CHROMIUM,
    NO_CHROMIUM,
    SLIDE_FIT_JS,
    contact_sheet,
    deck_slides,
    jupyter_env,
    launch_chromium,
    open_lab,
    run_all_and_wait,
    serve,
    slide_overflow,
    stop,
)

from resnetlearn.classroom import lecture as L

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts" / "lecture"

playwright = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM),
              pytest.mark.skipif(importlib.util.find_spec("jupyterlab_slideshow") is None,
                                 reason="jupyterlab-slideshow is not installed (pip install -e '.[lecture]')")]

ONSCREEN_JS = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .map((c, i) => [i, c]).filter(([i, c]) => c.node.classList.contains('jp-deck-mod-onscreen')).map(([i]) => i)"""
RACE_CURVES_JS = """(root) => Array.from(root.querySelectorAll('.scatterlayer .trace path.js-line'))
  .map(p => (p.getAttribute('d') || '').length).reduce((a, b) => a + b, 0)"""
RACE_PLACE_JS = """(root) => { const box = (e) => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; };
  const heading = document.querySelector('.jp-deck-mod-visible h2');
  return {height: window.innerHeight, heading: heading ? [heading.textContent, ...box(heading)] : null,
          train: box(root.querySelector('button')), figure: box(root.querySelector('.js-plotly-plot svg.main-svg')),
          plot: box(root.querySelector('.js-plotly-plot .draglayer .nsewdrag')),
          legend: Array.from(root.querySelectorAll('.legend .traces')).map(e => [e.textContent, ...box(e)])}; }"""
"""Where the race's slide lies in the window (px from its top): the slide's heading, the race's Train button, its
figure (the whole SVG), its plot area and each legend entry (text, top, bottom)."""


def shown_race(page):
    """The race's widget on the current slide, where the slide reveals it (a fragment is laid out, onscreen,
    before it is revealed, visible: only a revealed Train is clicked)."""
    return page.locator(".jp-deck-mod-visible .widget-vbox").filter(has=page.locator("button:has-text('Train')"))


def assert_race_on_screen(place: dict, viewport: str) -> None:
    """The race's slide is whole on the screen: heading, Train button, figure, plot and the legend's five entries
    (three learners, the kernel, kα² last) between the window's top and bottom."""
    assert place["heading"] is not None and place["heading"][0].startswith("The race"), (viewport, place)
    legend = place["legend"]
    assert len(legend) == 5 and legend[-1][0].startswith("kα²") and "ridge" in legend[-2][0], (viewport, legend)
    parts = {"heading": place["heading"][1:], "Train": place["train"], "figure": place["figure"],
             "plot": place["plot"], **{f"legend entry {text!r}": (top, bottom) for text, top, bottom in legend}}
    outside = {name: box for name, box in parts.items() if box[0] < 0 or box[1] > place["height"]}
    assert not outside, f"{viewport}: past the window's edge ({place['height']} px high): {outside}"


def hover_figures(page) -> bool:
    """Move the pointer over each figure of the current slide, so that its interactive drawing replaces its static
    picture (waiting until drawn); whether the slide has one. The pointer then leaves to the window's corner."""
    plots = [el for el in page.locator(".jp-deck-mod-visible .jp-RenderedPlotly").all() if el.is_visible()]
    for el in plots:
        box = el.bounding_box()
        if box:
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 100))
            try:
                el.locator(".js-plotly-plot svg.main-svg").first.wait_for(timeout=5000)
            except playwright.Error:
                pass  # measured as it is: a figure not drawn stays its picture
    page.mouse.move(0, 0)
    time.sleep(0.5 if plots else 0)
    return bool(plots)


def last_steps() -> list[int]:
    """The cell of each slide's last step in the shipped deck: its last cell shown on it (a slide or fragment
    cell; notes and skipped cells are not shown)."""
    cells = nbformat.read(L.DECK, as_version=4).cells
    last: list[int] = []
    for i, cell in enumerate(cells):
        kind = cell.metadata.get("slideshow", {}).get("slide_type")
        if kind in ("slide", "subslide"):
            last.append(i)
        elif kind == "fragment":
            last[-1] = i
    return last


def fit_of_step(page, viewport: str, step: int, fits: list, *, interactive: bool = False) -> None:
    """Where the current step's visible parts lie (``SLIDE_FIT_JS``), appended to ``fits``."""
    fit = page.evaluate(SLIDE_FIT_JS)
    fits.append({**fit, "viewport": viewport, "step": step, "interactive": interactive})


@pytest.fixture(scope="module")
def lecture(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lecture")
    (tmp / "results").symlink_to(ROOT / "results")  # the deck reads ../results, as lecture/ does in the repository
    folder = tmp / "lecture"
    L.prepare(folder)
    proc, base, token = serve(L.lab_arguments(folder), jupyter_env(tmp, PYTHONPATH=str(ROOT)), tmp / "lab.log")
    try:
        yield base, token
    finally:
        stop(proc)


def test_the_deck_presents_every_slide_and_the_race_trains_live(lecture):
    base, token = lecture
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = launch_chromium(p)
        # what make lecture opens (its default URL)
        page, errors = open_lab(browser, f"{base}/lab/tree/{L.COPY_NAME}?token={token}", timeout=120_000,
                                viewport=(1280, 720))
        page.wait_for_selector(".jp-Notebook", timeout=120_000)
        page.wait_for_selector("body[data-jp-deck-mode='presenting']", state="attached", timeout=60_000)  # presenting
        run_all_and_wait(page)
        slides, race_status, places, fits = [], None, {}, []
        page.mouse.move(0, 0)
        for index in deck_slides(page):
            shown = page.evaluate(ONSCREEN_JS)
            slides.append(index)
            race = shown_race(page)
            if race.count() and race_status is None:
                race = race.first
                status = race.locator(".widget-html").first
                page.screenshot(path=str(ARTIFACTS / "race_before_1280x720.png"))
                before = page.evaluate(RACE_CURVES_JS, race.element_handle())
                race.locator("button:has-text('Train')").click()
                page.wait_for_function("(el) => el.innerText.includes('racing')", arg=status.element_handle(),
                                       timeout=60_000)
                page.wait_for_function("(el) => el.innerText.includes('done')", arg=status.element_handle(),
                                       timeout=300_000)
                time.sleep(1)
                after = page.evaluate(RACE_CURVES_JS, race.element_handle())
                race_status = status.inner_text()
                page.screenshot(path=str(ARTIFACTS / "race_done_1280x720.png"))
                places = {"1280x720": page.evaluate(RACE_PLACE_JS, race.element_handle())}
            assert shown, f"nothing on screen at slide {len(slides)} (cell {index})"
        # every slide at each size, one screenshot each: as first shown, then with its figures interactive
        shots = {}
        for width, height in ((1280, 720), (1024, 768)):
            viewport = f"{width}x{height}"
            page.set_viewport_size({"width": width, "height": height})
            shots[viewport] = []
            for n, _ in enumerate(deck_slides(page, settle=1.5), 1):
                shots[viewport].append(ARTIFACTS / f"slide_{n:02d}_{viewport}.png")
                page.screenshot(path=str(shots[viewport][-1]))
                fit_of_step(page, viewport, n, fits)
                if hover_figures(page):
                    page.screenshot(path=str(ARTIFACTS / f"slide_{n:02d}_{viewport}_interactive.png"))
                    fit_of_step(page, viewport, n, fits, interactive=True)
                race = shown_race(page)
                if race.count() and race_status is not None:  # the finished race, on its slide
                    places[viewport] = page.evaluate(RACE_PLACE_JS, race.first.element_handle())
        browser.close()
    contact_sheet(shots["1024x768"], ARTIFACTS / "contact_sheet.png")
    contact_sheet(shots["1280x720"], ARTIFACTS / "contact_sheet_1280x720.png")
    (ARTIFACTS / "slide_fit.json").write_text(json.dumps(fits, indent=1, ensure_ascii=False), encoding="utf-8")
    # steps (slides and their fragments) from the first cell until a step no longer moves, at each viewport
    assert len(slides) >= 15 and all(len(v) >= 15 for v in shots.values()), (slides, shots)
    assert race_status is not None, "no slide shows the race's Train button"
    assert "done" in race_status and "3resnet(all)" in race_status, race_status
    assert after != before, "the race's curves did not change after Train"
    (ARTIFACTS / "race_place.json").write_text(json.dumps(places, indent=1, ensure_ascii=False), encoding="utf-8")
    assert set(places) == {"1280x720", "1024x768"}, places
    for viewport, place in places.items():
        assert_race_on_screen(place, viewport)
    # every slide measured at both sizes as its last step shows it (all its parts revealed; stepping through
    # again, the slideshow goes straight to the step where each slide was left), each showing something, and
    # nothing of it past an edge of the screen
    for viewport in shots:
        measured = {f["active"] for f in fits if f["viewport"] == viewport}
        assert set(last_steps()) <= measured, (viewport, sorted(set(last_steps()) - measured))
    assert all(f["parts"] for f in fits), [(f["viewport"], f["step"]) for f in fits if not f["parts"]]
    not_whole = [f"step {f['step']} ({f['title']!r}) at {f['viewport']}{', interactive' if f['interactive'] else ''}: "
                 + "; ".join(slide_overflow(f)) for f in fits if slide_overflow(f)]
    assert not not_whole, "slides taller or wider than the screen:\n" + "\n".join(not_whole)
    assert not errors, errors
