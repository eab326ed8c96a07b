"""Build the reading copy of the notebooks: a static HTML book (Sphinx, myst-nb, sphinx-book-theme) of every
notebook with its committed outputs, in lab order, readable and buildable offline.

    python book/build.py [--out book/_build/html] [--src book/_build/src]

Nothing is executed. The notebooks are staged into ``--src`` first, where two things are added to their
outputs: each plotly figure's JSON gets a ``text/html`` rendering (a div and a ``Plotly.newPlot`` call, by
plotly's own ``plotly.io.to_html``), so the page draws it interactively with the book's own copy of plotly.js
(the plotly package's ``package_data/plotly.min.js``); a widget output that carries no picture shows a
one-line note instead of its ``VBox(children=…)`` text; and an output collapsed in the notebook (cell metadata
``jupyter.outputs_hidden``, an answer kept out of sight) gets myst-nb's ``hide-output`` tag, so the page folds
it behind a click as JupyterLab does. MathJax 3 comes from the ``django-static-mathjax``
package (a pip package of MathJax's files). Needs the ``book`` extra (``pip install -e ".[book]"``), not torch.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
NOTEBOOKS = ROOT / "notebooks"
PLOTLY_MIME = "application/vnd.plotly.v1+json"
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = "(An interactive widget: run this notebook in JupyterLab to use it.)"
WIDGET_REPRS = ("VBox(", "HBox(", "Box(", "interactive(", "FloatSlider(", "IntSlider(", "SelectionSlider(",
                "Dropdown(", "Button(", "Output(", "Image(", "FigureWidget(", "Checkbox(", "HTML(", "Label(")
"""How a widget's text repr begins (resnetlearn.classroom.live_run.WIDGET_REPRS; repeated here so that building the book
needs no torch: a test checks that the two agree)."""
MATHJAX_PARTS = ("tex-chtml.js", "input", "output/chtml", "ui", "a11y", "adaptors")


def plotly_js() -> Path:
    import plotly

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def mathjax_dir() -> Path:
    import mathjax  # the django-static-mathjax package: MathJax 3's files

    return Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"


def plotly_html(fig: dict, div_id: str) -> str:
    """The figure as a div and a script that draws it with the page's plotly.js (loaded once per page)."""
    import plotly.io as pio

    config = dict(fig.get("config") or {}, displaylogo=False, responsive=True)
    return pio.to_html({"data": fig.get("data", []), "layout": fig.get("layout", {})}, include_plotlyjs=False,
                       full_html=False, config=config, div_id=div_id, validate=False)


def stage_notebook(src: Path, dst: Path) -> dict:
    """Copy one notebook with its outputs prepared for the book; returns counts of what was changed."""
    nb = json.loads(src.read_text(encoding="utf-8"))
    counts = {"plotly": 0, "widget_notes": 0, "widget_pictures": 0, "folded_outputs": 0}
    nb.get("metadata", {}).pop("widgets", None)
    for i, cell in enumerate(nb["cells"]):
        meta = cell.setdefault("metadata", {})
        if cell.get("outputs") and meta.get("jupyter", {}).get("outputs_hidden"):
            tags = meta.setdefault("tags", [])
            if "hide-output" not in tags:
                tags.append("hide-output")
            counts["folded_outputs"] += 1
        for j, out in enumerate(cell.get("outputs", []) if cell["cell_type"] == "code" else []):
            data = out.get("data")
            if not data:
                continue
            if PLOTLY_MIME in data and "text/html" not in data:
                data["text/html"] = plotly_html(data[PLOTLY_MIME], f"plotly-{src.stem}-{i}-{j}")
                counts["plotly"] += 1
            text = data.get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            if WIDGET_VIEW_MIME in data:
                if "image/png" in data:
                    counts["widget_pictures"] += 1
                elif text.lstrip().startswith(WIDGET_REPRS) or not text:
                    data["text/plain"] = WIDGET_NOTE
                    counts["widget_notes"] += 1
    dst.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return counts


def stage(src: Path) -> dict:
    """Lay out the book's sources in ``src``: conf.py, index.md, _static (with plotly.js and MathJax) and the
    notebooks and the instructor guide (notebooks/README.md)."""
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    for name in ("conf.py", "index.md"):
        shutil.copy2(BOOK / name, src / name)
    shutil.copytree(BOOK / "_static", src / "_static")
    shutil.copy2(plotly_js(), src / "_static" / "plotly.min.js")
    mj = mathjax_dir()
    for part in MATHJAX_PARTS:
        target = src / "_static" / "mathjax" / part
        if (mj / part).is_dir():
            shutil.copytree(mj / part, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(mj / part, target)
    for page in ("README.md", "lecture_plan.md"):  # the instructor guide and the lecture's one-page plan
        shutil.copy2(NOTEBOOKS / page, src / page)
    report = {}
    for nb in sorted(NOTEBOOKS.glob("*.ipynb")):
        report[nb.stem] = stage_notebook(nb, src / nb.name)
    return report


def build(out: Path, src: Path, *, quiet: bool = True) -> dict:
    """Stage and build; returns what was staged and the seconds each step took."""
    t0 = time.perf_counter()
    staged = stage(src)
    t1 = time.perf_counter()
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-E", str(src), str(out)]  # -E: always from scratch
    if quiet:
        cmd.insert(3, "-q")
    subprocess.run(cmd, check=True, cwd=ROOT)
    return {"staged": staged, "stage_s": round(t1 - t0, 1), "sphinx_s": round(time.perf_counter() - t1, 1),
            "out": str(out)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=BOOK / "_build" / "html", help="the HTML book (default: %(default)s)")
    ap.add_argument("--src", type=Path, default=BOOK / "_build" / "src", help="staged sources (default: %(default)s)")
    ap.add_argument("--verbose", action="store_true", help="show Sphinx's progress")
    args = ap.parse_args(argv)
    res = build(args.out.resolve(), args.src.resolve(), quiet=not args.verbose)
    pics = sum(c["widget_pictures"] for c in res["staged"].values())
    notes = sum(c["widget_notes"] for c in res["staged"].values())
    figs = sum(c["plotly"] for c in res["staged"].values())
    folded = sum(c["folded_outputs"] for c in res["staged"].values())
    print(f"book: {res['out']}/index.html ({len(res['staged'])} notebooks, {figs} interactive figures, "
          f"{pics} widget pictures, {notes} widgets without a picture, {folded} outputs folded; "
          f"staged in {res['stage_s']} s, built in {res['sphinx_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
