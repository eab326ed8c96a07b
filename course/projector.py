"""Pictures for the back row: every picture the lecture deck and the lab notebooks show, measured as shown in a
real browser (headless Chromium) at 1280×720 and 1024×768, written to ``course/results/projector.json``.

    OMP_NUM_THREADS=1 python course/projector.py [--notebooks 03_hierarchical_learning ...] [--no-deck]
        [--screenshots DIR]

JupyterLab runs on a temporary copy (its Jupyter folders in a temporary folder too). Each lab notebook is opened
as a student opens it (file browser open), every cell run, then measured at each viewport; the deck is opened
presenting, as ``make lecture`` opens it, run, and measured slide by slide.

How a picture's smallest text is measured on screen:

* plotly (an interactive figure, or the live race): each text element's computed font size × the figure's shown
  width / its layout width (the SVG's width attribute); the smallest over the figure;
* PNG (the static picture of a figure, shown until the pointer enters it; a live trainer's frame): the smallest
  font the PNG records (points; :data:`resnetlearn.classroom.plots.SMALLEST_FONT_KEY`, written by ``to_png``)
  × dpi / 72 × shown width / natural width.

``cut_off``: the picture, or one of a plotly figure's texts, runs past the right edge of its output area or of
the window, or the legend scrolls (entries hidden); in the deck also when the picture lies, even in part, above
the top or below the bottom of the window (the slide taller than the screen). Every slide of the deck is checked
whole as well: each of its visible parts (headings, text, formulas, figures, printed outputs, widgets) inside the
window, measured from the page (``tests/browser.py``'s ``SLIDE_FIT_JS``); the slides that are not are printed,
named with what runs past the edge, and the script exits 1. Each record: ``picture``, ``where`` ("deck" or "lab"),
``viewport``, ``smallest_text_px``, ``cut_off``, and how it was shown (notebook, cell, kind, widths). With
``--screenshots DIR``, a screenshot of the window with each measured cell in view (lab) and of each slide (deck),
to look at.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import browser as B  # noqa: E402  (tests/browser.py: the browser tests' helpers)

from resnetlearn.classroom import lecture as L  # noqa: E402
from resnetlearn.classroom.plots import DPI, png_smallest_font_pt  # noqa: E402

VIEWPORTS = ((1280, 720), (1024, 768))
LAB_NOTEBOOKS = ("01_concept_class", "02_complexity", "03_hierarchical_learning", "04_kernel_failure",
                 "05_reproducing_the_paper")
"""The lab's notebooks that show pictures (00 and 03b show none; the deep dives are reading)."""
THRESHOLDS = {"deck": 16, "lab": 12}
"""Smallest text on screen, px: the deck is read from the back of a room, the lab from a laptop."""
OUT = ROOT / "course" / "results" / "projector.json"


def _label(item: dict) -> str:
    """A picture's name: the live widget it is, or its figure's title, or the text its output carries."""
    texts = " ".join(item["texts"])
    if "Live training of" in texts:
        return "LiveTrainer"
    if texts.startswith("The race") or " race (" in texts[:40]:
        return "LiveRace"
    m = re.search(r"<(?:interactive )?figure: (.*?)>", texts)
    if m:
        return m.group(1).split("  (")[0]
    if item.get("title"):
        return item["title"]
    return (texts.splitlines() or ["picture"])[0][:60] or "picture"


def _records(page, items: list[dict], *, where: str, viewport, notebook: str) -> list[dict]:
    out = []
    for it in items:
        if it["kind"] == "png":
            png = B.png_bytes(page, it["src"])
            pt = png_smallest_font_pt(png)
            px = None if pt is None or not it["natural"] else pt * DPI / 72 * it["shown"] / it["natural"]
            view = "PNG"
        else:
            px, view = it["smallest_px"], "plotly"
        out.append({"picture": f"{_label(it)} ({view})", "where": where, "viewport": f"{viewport[0]}x{viewport[1]}",
                    "smallest_text_px": None if px is None else round(px, 1), "cut_off": bool(it["cut_off"]),
                    "notebook": notebook, "cell": it["index"], "shown_px": round(it["shown"]),
                    "natural_px": round(it["natural"] or 0)})
    return out


def _hover_plots(page, selector: str = ".jp-RenderedPlotly") -> None:
    """Move the pointer over every shown static plotly picture (``selector``) so that jupyterlab-plotly draws the
    interactive one, waiting until it is drawn (a pointer that entered too early: once more)."""
    for el in page.locator(selector).all():
        try:
            if not el.is_visible():  # an output on another slide
                continue
            el.scroll_into_view_if_needed(timeout=2000)
            for _ in range(2):
                box = el.bounding_box()
                if not box:
                    break
                page.mouse.move(box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 100))
                try:
                    el.locator(".js-plotly-plot svg.main-svg").first.wait_for(timeout=2500)
                    break
                except Exception:
                    page.mouse.move(0, 0)
        except Exception:  # an output hidden meanwhile
            continue
    page.mouse.move(0, 0)
    time.sleep(1.0)


def _unique(records: list[dict]) -> list[dict]:
    """One record per (picture, notebook, cell, viewport, where): the one with the smallest text."""
    best: dict = {}
    for r in records:
        key = (r["picture"], r["notebook"], r["cell"], r["viewport"], r["where"])
        old = best.get(key)
        if old is None or (r["smallest_text_px"] or 0) < (old["smallest_text_px"] or 0) or r["cut_off"]:
            best[key] = {**r, "cut_off": r["cut_off"] or (old or {}).get("cut_off", False)}
    return list(best.values())


def _open_and_run(p, url: str):
    """A headless browser and its page at the first of :data:`VIEWPORTS`, showing the notebook at JupyterLab
    ``url`` with every cell run."""
    browser = B.launch_chromium(p)
    page, _ = B.open_lab(browser, url, timeout=120_000, viewport=VIEWPORTS[0])
    page.wait_for_selector(".jp-Notebook", timeout=120_000)
    return browser, page


def _shoot(page, shots: Path | None, name: str) -> None:
    """A screenshot of the window as it is now, ``shots/NAME.png`` (nothing when ``shots`` is None)."""
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / f"{name}.png"))


def measure_lab(p, base: str, token: str, notebook: str, shots: Path | None = None) -> list[dict]:
    browser, page = _open_and_run(p, f"{base}/lab/workspaces/{notebook}/tree/notebooks/{notebook}.ipynb"
                                     f"?reset&token={token}")
    page.evaluate("window.jupyterapp.commands.execute('filebrowser:activate')")  # as a student sees it
    B.run_all_and_wait(page)
    time.sleep(2)
    records = []
    for hovered in (False, True):  # the static pictures first (a hovered figure stays interactive)
        for vp in VIEWPORTS:
            page.set_viewport_size({"width": vp[0], "height": vp[1]})
            time.sleep(2)
            if hovered:
                _hover_plots(page)
            items = page.evaluate(B.MEASURE_JS, False)
            records += _records(page, items, where="lab", viewport=vp, notebook=notebook)
            for index in sorted({it["index"] for it in items}):  # each picture's cell in view, as a student sees it
                page.locator(".jp-Notebook .jp-Cell").nth(index).scroll_into_view_if_needed()
                _shoot(page, shots, f"{notebook}_cell{index:02d}_{vp[0]}x{vp[1]}_{'plotly' if hovered else 'static'}")
    browser.close()
    return records


def measure_deck(p, base: str, token: str, shots: Path | None = None,
                 overflows: list[str] | None = None) -> list[dict]:
    """The deck's pictures, slide by slide, at each viewport, static then interactive; a slide that is not whole
    on the screen adds a line naming it and its parts past the edge to ``overflows``."""
    browser, page = _open_and_run(p, f"{base}/lab/tree/{L.COPY_NAME}?token={token}")
    B.run_all_and_wait(page)
    time.sleep(2)
    records = []
    overflows = [] if overflows is None else overflows
    for hovered in (False, True):  # the static pictures first (a hovered figure stays interactive)
        for vp in VIEWPORTS:
            page.set_viewport_size({"width": vp[0], "height": vp[1]})
            for step, index in enumerate(B.deck_slides(page, settle=1.5), 1):
                if hovered and page.locator(".jp-deck-mod-onscreen .jp-RenderedPlotly").count():
                    _hover_plots(page, ".jp-deck-mod-onscreen .jp-RenderedPlotly")
                fit = page.evaluate(B.SLIDE_FIT_JS)
                outside = B.slide_overflow(fit)
                if outside:
                    overflows.append(f"step {step} ({fit['title']!r}, cell {index}) at {vp[0]}x{vp[1]}"
                                     f"{', interactive' if hovered else ''}: " + "; ".join(outside))
                cut = {q["cell"] for q in fit["parts"] if q["outside"] and q["what"].startswith(("figure", "widget"))}
                step_records = _records(page, page.evaluate(B.MEASURE_JS, True), where="deck", viewport=vp,
                                        notebook="lecture")
                records += [{**r, "cut_off": r["cut_off"] or r["cell"] in cut} for r in step_records]
                _shoot(page, shots, f"deck_{step:02d}_cell{index:02d}_{vp[0]}x{vp[1]}_"
                                    f"{'plotly' if hovered else 'static'}")
    browser.close()
    return records


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notebooks", nargs="*", default=list(LAB_NOTEBOOKS), help="lab notebooks to measure")
    ap.add_argument("--no-deck", action="store_true", help="skip the deck")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--merge", action="store_true", help="keep the records of notebooks not measured now")
    ap.add_argument("--screenshots", type=Path, default=None,
                    help="a folder for a screenshot of every measured picture's cell (lab) and slide (deck)")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="projector-"))
    try:
        (tmp / "notebooks").mkdir()
        for name in args.notebooks:
            shutil.copy(ROOT / "notebooks" / f"{name}.ipynb", tmp / "notebooks")
        (tmp / "results").symlink_to(ROOT / "results")
        env = B.jupyter_env(tmp, PYTHONPATH=str(ROOT))
        records: list[dict] = []
        overflows: list[str] = []
        with sync_playwright() as p:
            if args.notebooks:
                proc, base, token = B.serve([f"--ServerApp.root_dir={tmp}", "--allow-root"], env, tmp / "lab.log")
                try:
                    for name in args.notebooks:
                        print("measuring", name, flush=True)
                        records += measure_lab(p, base, token, name, args.screenshots)
                finally:
                    B.stop(proc)
            if not args.no_deck:
                L.prepare(tmp / "lecture")
                proc, base, token = B.serve(L.lab_arguments(tmp / "lecture"), env, tmp / "deck.log")
                try:
                    print("measuring the deck", flush=True)
                    records += measure_deck(p, base, token, args.screenshots, overflows)
                finally:
                    B.stop(proc)
        if args.merge and args.out.exists():
            now = set(args.notebooks) | (set() if args.no_deck else {"lecture"})
            records += [r for r in json.loads(args.out.read_text(encoding="utf-8")) if r["notebook"] not in now]
        records = sorted(_unique(records), key=lambda r: (r["where"], r["notebook"], r["cell"], r["picture"],
                                                         r["viewport"]))
        for r in records:
            r["passes"] = (r["smallest_text_px"] is not None and r["smallest_text_px"] >= THRESHOLDS[r["where"]]
                           and not r["cut_off"])
        args.out.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{'where':<5} {'viewport':<9} {'px':>5} {'cut':<4} picture")
        for r in records:
            print(f"{r['where']:<5} {r['viewport']:<9} {r['smallest_text_px'] or 0:>5} "
                  f"{'CUT' if r['cut_off'] else '':<4} {r['notebook']}#{r['cell']} {r['picture']}")
        print(f"wrote {args.out}: {sum(r['passes'] for r in records)}/{len(records)} pass")
        for line in overflows:
            print("not whole on the screen:", line)
        if not args.no_deck:
            print(f"deck: {len(overflows)} slide views not whole on the screen")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if overflows else 0


if __name__ == "__main__":
    raise SystemExit(main())
