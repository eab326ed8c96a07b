"""Read a notebook the way a student meets it, for cold reads that calibrate the study-time model.

Prints one notebook's cells in order with every folded answer (``<details>``) hidden behind its title, so a
reader answers a question before opening its fold; figures are written as PNG files to look at, printed
outputs shown as text (collapsed outputs only with ``--expand``), and a fold is opened only on request:

    python course/cold_read.py notebooks/01_concept_class.ipynb --cells 0-5    # cells 0 to 5, folds closed
    python course/cold_read.py notebooks/01_concept_class.ipynb --fold 3       # open the notebook's fold 3
"""

from __future__ import annotations

import argparse
import base64
import re
import sys
from pathlib import Path

import nbformat

_FOLD = re.compile(r"<details\b.*?</details\s*>", re.IGNORECASE | re.DOTALL)
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.IGNORECASE | re.DOTALL)
_KEY = re.compile(r"<!--\s*key:.*?-->", re.DOTALL)


def folds(nb) -> list[tuple[int, str]]:
    """Every fold of the notebook in reading order: (cell index, its text)."""
    return [(i, m.group(0)) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
            for m in _FOLD.finditer(c.source)]


def _closed(source: str, first: int) -> tuple[str, int]:
    n = first

    def hide(m):
        nonlocal n
        title = _SUMMARY.search(m.group(0))
        label = re.sub(r"<[^>]+>", "", title.group(1)).strip() if title else "details"
        n += 1
        return f"[fold {n - 1}: {label} — closed; open with --fold {n - 1}]"

    return _FOLD.sub(hide, source), n


def collapsed(cell) -> bool:
    """Whether JupyterLab shows this cell's outputs collapsed (a click on the bar beside them expands them)."""
    return bool(cell.get("metadata", {}).get("jupyter", {}).get("outputs_hidden"))


def show(path: Path, cells: range, figdir: Path, *, expand: bool = False) -> str:
    nb = nbformat.read(path, as_version=4)
    out, k = [], 0
    figdir.mkdir(parents=True, exist_ok=True)
    for i, c in enumerate(nb.cells):
        text, k = _closed(c.source, k) if c.cell_type == "markdown" else (c.source, k)
        if i not in cells:
            continue
        out.append(f"===== cell {i} ({c.cell_type}) =====\n{text}")
        if c.get("outputs") and collapsed(c) and not expand:
            out.append(f"----- output collapsed; expand with --cells {i} --expand -----")
            continue
        for j, o in enumerate(c.get("outputs", [])):
            if "text" in o:
                out.append(f"----- output -----\n{o['text']}")
            data = o.get("data", {})
            if "image/png" in data:
                f = figdir / f"{path.stem}_cell{i}_{j}.png"
                f.write_bytes(base64.b64decode(data["image/png"]))
                out.append(f"----- figure: look at {f} -----")
            elif "application/vnd.plotly.v1+json" in data:
                out.append("----- interactive plotly figure (no static picture in this output) -----")
            elif "text/plain" in data:
                out.append(f"----- output -----\n{data['text/plain']}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebook", type=Path)
    ap.add_argument("--cells", default=None, help="a range a-b of cell indices (default: all)")
    ap.add_argument("--fold", type=int, default=None, help="open this fold (its number as printed)")
    ap.add_argument("--figures", type=Path, default=Path("/tmp/cold_read_figures"))
    ap.add_argument("--expand", action="store_true", help="show collapsed outputs too (as a click in JupyterLab)")
    args = ap.parse_args(argv)
    nb = nbformat.read(args.notebook, as_version=4)
    if args.fold is not None:
        all_folds = folds(nb)
        if not 0 <= args.fold < len(all_folds):
            ap.error(f"--fold: {args.notebook.name} has folds 0 to {len(all_folds) - 1}")
        print(_KEY.sub("", all_folds[args.fold][1]))
        return 0
    if args.cells:
        a, _, b = args.cells.partition("-")
        cells = range(int(a), int(b or a) + 1)
    else:
        cells = range(len(nb.cells))
    print(show(args.notebook, cells, args.figures, expand=args.expand))
    return 0


if __name__ == "__main__":
    sys.exit(main())
