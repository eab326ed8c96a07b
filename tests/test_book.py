"""The reading copy: ``make book`` builds a static HTML book of every notebook with its
committed outputs, offline, in lab order; in headless Chromium its maths is typeset, a plotly figure answers
the pointer with a hover label, folds stay folded, and no widget shows as raw text.

Builds into a temporary folder (about 10 s) and serves it on loopback. Skipped, with the reason, where the
``book`` extra (``pip install -e ".[book]"``) or Chromium is missing (`.ci/run` installs Debian's chromium).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import importlib.util
import re
import threading
import time
from pathlib import Path

import pytest
from browser import CHROMIUM, NO_CHROMIUM, launch_chromium

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts" / "book"
LAB_ORDER = ["00_welcome", "01_concept_class", "03b_kernel_primer", "03_hierarchical_learning", "04_kernel_failure",
             "02_complexity", "06_lazy_regime"]
"""The course path of the instructor guide: before the lab, the lab, after it (test_the_order_is_the_guide_s)."""
READING = ["05_reproducing_the_paper", "03_hierarchical_learning_deep_dive", "04_kernel_failure_deep_dive",
           "05_reproducing_the_paper_deep_dive", "06_lazy_regime_deep_dive"]
WIDGET_TEXT = re.compile(r"\b(VBox|HBox|interactive|FloatSlider|IntSlider)\(children=|\bFloatSlider\(value=")

for _module, _extra in (("sphinx", "book"), ("myst_nb", "book"), ("sphinx_book_theme", "book"), ("mathjax", "book")):
    pytest.importorskip(_module, reason=f"{_module} is not installed (pip install -e '.[{_extra}]')")


def _load_builder():
    spec = importlib.util.spec_from_file_location("book_build", ROOT / "book" / "build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """The book built from the committed notebooks into a temporary folder; (html folder, build report)."""
    tmp = tmp_path_factory.mktemp("book")
    t0 = time.perf_counter()
    report = _load_builder().build(tmp / "html", tmp / "src")
    report["wall_s"] = time.perf_counter() - t0
    return tmp / "html", report


def test_the_order_is_the_guide_s():
    """The book's course order is the one the guide's tables are built from (course/notebook_timings.py:
    PRE_LAB, LAB, POST_LAB), and the book's index says it in words."""
    from course import notebook_timings as timings

    assert LAB_ORDER == list(timings.COURSE)
    index = (ROOT / "book" / "index.md").read_text()
    toc = re.findall(r":caption: ([^\n]+)\n:maxdepth: 1\n\n((?:\w+\n)+)", index)
    lists = {caption: names.split() for caption, names in toc}
    assert lists["Before the lab"] == list(timings.PRE_LAB) and lists["The lab, in order"] == list(timings.LAB)
    assert lists["After the lab"] == list(timings.POST_LAB)


def test_the_builder_knows_every_widget_repr():
    from resnetlearn.classroom.live_run import WIDGET_REPRS

    assert _load_builder().WIDGET_REPRS == WIDGET_REPRS


def test_every_notebook_is_a_page_in_lab_order(book):
    html, report = book
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(LAB_ORDER + READING + ["lecture"]) == notebooks, "a notebook is missing from the book's contents"
    for name in notebooks + ["README", "lecture_plan", "index"]:
        assert (html / f"{name}.html").is_file(), name
    nav = (html / "index.html").read_text(encoding="utf-8")
    order = [m for m in re.findall(r'href="([\w.]+)\.html"', nav) if m in notebooks or m in ("README", "lecture_plan")]
    order = list(dict.fromkeys(order))
    assert order == LAB_ORDER + READING + ["README", "lecture", "lecture_plan"], order
    assert "Instructor guide" in nav
    assert report["wall_s"] < 300, f"the book took {report['wall_s']:.0f} s to build"


def test_the_book_is_self_contained(book):
    """Nothing is fetched from the internet: every script and stylesheet is the book's own (plotly.js and
    MathJax included), so it builds and reads offline."""
    html, _ = book
    assert (html / "_static" / "plotly.min.js").stat().st_size > 1_000_000
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file()
    for page in html.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        remote = re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?:)?//[^"]+"', text)
        assert not remote, f"{page.name} loads {remote}"
        assert not WIDGET_TEXT.search(text), f"{page.name} shows a widget as raw text"


def test_committed_outputs_only(book):
    """Not executed while building: the pages show the numbers the committed notebooks print."""
    import json

    html, _ = book
    nb = json.loads((ROOT / "notebooks" / "00_welcome.ipynb").read_text(encoding="utf-8"))
    printed = [line.strip() for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
               if o.get("output_type") == "stream" for line in "".join(o["text"]).splitlines() if line.strip()]
    assert printed
    page = (html / "00_welcome.html").read_text(encoding="utf-8")
    import html as html_lib

    text = html_lib.unescape(re.sub(r"<[^>]+>", "", page))
    assert all(line.split()[0] in text for line in printed[:5])


def _flat(text: str) -> str:
    import html as html_lib

    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def test_collapsed_outputs_are_folded_behind_a_click(book):
    """An output collapsed in the notebook (an answer kept out of sight, ``jupyter.outputs_hidden``) sits in a
    closed fold on its page, one fold per such cell; an output not collapsed is not folded."""
    import json

    html, _ = book
    checked = 0
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = [(c["metadata"].get("jupyter", {}).get("outputs_hidden", False), c["outputs"])
                 for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
                 if c["cell_type"] == "code" and c.get("outputs")]
        page = (html / f"{path.stem}.html").read_text(encoding="utf-8")
        folds = re.findall(r'<details class="[^"]*\bhide\b[^"]*"[^>]*>(.*?)</details>', page, re.DOTALL)
        hidden = sum(h for h, _ in cells)
        assert len(folds) == hidden, f"{path.stem}: {hidden} collapsed outputs, {len(folds)} folds"
        assert not re.search(r'<details class="[^"]*\bhide\b[^"]*"[^>]*\bopen\b', page), path.stem
        folded = " ".join(_flat(f) for f in folds)
        printed = [[" ".join(line.split()) for o in outputs if o.get("output_type") == "stream"
                    for line in "".join(o["text"]).splitlines() if len(line.split()) > 2] for _, outputs in cells]
        seen = [line for lines in printed for line in set(lines)]
        for (is_hidden, _), lines in zip(cells, printed):
            for line in [line for line in lines if seen.count(line) == 1][:2]:  # a line one cell alone prints
                assert (line in folded) == is_hidden, f"{path.stem}: {line!r} folded: {line in folded}"
                checked += is_hidden
    assert checked > 0, "no collapsed printed output to check"


# ----------------------------------------------------------------- in a browser
@contextlib.contextmanager
def _serve(folder: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser_page(book):
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
    html, _ = book
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with _serve(html) as base, sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        remote: list[str] = []
        page.on("request", lambda r: remote.append(r.url) if not r.url.startswith((base, "data:", "blob:")) else None)
        yield base, page, remote
        browser.close()


def _open(page, url: str) -> None:
    page.goto(url, wait_until="load", timeout=120_000)


@pytest.mark.browser
def test_maths_is_typeset_and_folds_stay_folded(browser_page):
    base, page, remote = browser_page
    _open(page, f"{base}/03_hierarchical_learning.html")
    page.wait_for_selector("mjx-container", timeout=60_000)  # MathJax typeset the page's $…$
    assert page.locator("mjx-container").count() >= 10
    body = page.inner_text("article")
    assert "$" not in re.sub(r"\$\{|\$\(", "", body.split("Check your understanding")[0])  # no raw $…$ left
    details = page.locator("article details")
    assert details.count() >= 3 and page.locator("article details[open]").count() == 0
    assert not details.first.locator(":scope > :not(summary)").first.is_visible()  # folded: body hidden
    assert not WIDGET_TEXT.search(body)
    page.screenshot(path=str(ARTIFACTS / "1_maths_and_folds.png"))
    assert not remote, f"requests outside the book: {remote[:5]}"


@pytest.mark.browser
def test_a_collapsed_output_shows_only_after_a_click(browser_page):
    base, page, remote = browser_page
    _open(page, f"{base}/00_welcome.html")
    fold = page.locator("article details.hide").first
    output = fold.locator(".cell_output")
    assert "total 12400" in (output.text_content() or "")     # the Predict question's answer, in the page
    assert not output.is_visible()                             # ... but out of sight
    fold.locator("summary").click()
    assert output.is_visible()
    page.screenshot(path=str(ARTIFACTS / "4_collapsed_output_opened.png"))
    assert not remote, f"requests outside the book: {remote[:5]}"


@pytest.mark.browser
def test_plotly_figure_answers_the_pointer(browser_page, book):
    base, page, remote = browser_page
    html, _ = book
    pages = [p.stem for p in sorted(html.glob("*.html")) if "Plotly.newPlot" in p.read_text(encoding="utf-8")]
    assert pages, "no page has an interactive plotly figure"
    name = "05_reproducing_the_paper" if "05_reproducing_the_paper" in pages else pages[0]
    _open(page, f"{base}/{name}.html")
    # the first figure not in a closed fold (an answer's output is folded until the reader asks)
    point = page.locator(".js-plotly-plot .scatterlayer .points path").locator("visible=true").first
    point.wait_for(timeout=60_000)
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2 + 30, box["y"] + box["height"] / 2 + 30)
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=8)
    page.wait_for_selector(".js-plotly-plot .hoverlayer .hovertext", timeout=10_000)
    assert (page.locator(".hoverlayer .hovertext").first.text_content() or "").strip()  # an SVG label
    page.screenshot(path=str(ARTIFACTS / "2_plotly_hover.png"))
    assert not remote, f"requests outside the book: {remote[:5]}"


@pytest.mark.browser
def test_widgets_show_their_pictures(browser_page, book):
    """The race's and trainer's outputs are pictures in the book (where the committed notebooks carry them,
    see tests/test_static_outputs.py), never raw text."""
    base, page, _ = browser_page
    _open(page, f"{base}/03_hierarchical_learning.html")
    body = page.inner_text("article")
    assert not WIDGET_TEXT.search(body)
    images = page.locator("article .cell_output img")
    assert images.count() >= 2
    widths = [images.nth(i).evaluate("e => e.naturalWidth") for i in range(images.count())]
    assert all(w > 100 for w in widths)  # loaded, not broken
    images.first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "3_widget_picture.png"))
