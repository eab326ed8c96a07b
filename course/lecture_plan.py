"""The printable one-page plan of the lecture, generated from the deck's speaker notes.

    python course/lecture_plan.py            # writes notebooks/lecture_plan.md and the guide's room tables
    python course/lecture_plan.py --check    # exits 1 when either differs from what the files give

Each slide of ``notebooks/lecture.ipynb`` (a cell of type ``slide``) is a row: its title (the slide's first
heading), its minutes (the ``**N min**`` that opens its speaker notes), the running clock, and the first sentence
of its notes. The live cells' measured times come from the measurement files named under the table, not from the
deck. The instructor guide's section "In the room" gets two tables between marker comments: the live cells'
measured times (``course/results/notebook_timings_cpu.json``) and the pictures as shown
(``course/results/projector.json``, written by ``course/projector.py``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DECK = ROOT / "notebooks" / "lecture.ipynb"
OUT = ROOT / "notebooks" / "lecture_plan.md"
TIMINGS = ROOT / "course" / "results" / "notebook_timings_cpu.json"
PROJECTOR = ROOT / "course" / "results" / "projector.json"
GUIDE = ROOT / "notebooks" / "README.md"
LAB = ("00_welcome", "01_concept_class", "03b_kernel_primer", "03_hierarchical_learning", "04_kernel_failure")
LIMIT_MIN = 50
MINUTES = re.compile(r"^\*\*(\d+(?:\.\d+)?) min\*\*\s*·?\s*")


def _source(cell) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def slides(deck: Path = DECK) -> list[dict]:
    """The deck's slides in order: title, minutes and notes (ValueError for a slide without notes or minutes)."""
    nb = json.loads(Path(deck).read_text(encoding="utf-8"))
    out: list[dict] = []
    for i, cell in enumerate(nb["cells"]):
        kind = cell.get("metadata", {}).get("slideshow", {}).get("slide_type")
        text = _source(cell)
        if kind == "slide":
            heading = next((ln.lstrip("#").strip() for ln in text.splitlines() if ln.startswith("#")), f"cell {i}")
            out.append({"cell": i, "title": heading, "minutes": None, "notes": ""})
        elif kind == "notes":
            if not out:
                raise ValueError(f"{deck}: notes in cell {i} before the first slide")
            m = MINUTES.match(text)
            if m is None:
                raise ValueError(f"{deck}: the notes of cell {i} do not open with '**N min**'")
            out[-1]["minutes"] = float(m.group(1))
            out[-1]["notes"] = " ".join(text[m.end():].split())
    missing = [s["title"] for s in out if s["minutes"] is None]
    if missing:
        raise ValueError(f"{deck}: slides without notes and minutes: {missing}")
    return out


def _first_sentence(text: str) -> str:
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    return (m.group(1) if m else text).replace("|", "\\|")


def plan(deck: Path = DECK) -> str:
    rows = slides(deck)
    total = sum(s["minutes"] for s in rows)
    timings = json.loads(TIMINGS.read_text(encoding="utf-8"))
    widget_s = timings["widget_run_s"]
    lines = ["# The lecture on one page", "",
             "Generated from the speaker notes of `notebooks/lecture.ipynb` by `course/lecture_plan.py`; print "
             "it, or keep it beside the projector. Present with `make lecture` (arrow keys: next and previous "
             "slide).", "",
             "| # | from – to | slide | min | what to say first |", "|---|---|---|---|---|"]
    clock = 0.0
    for i, s in enumerate(rows, 1):
        lines.append(f"| {i} | {clock:g} – {clock + s['minutes']:g} | {s['title']} | {s['minutes']:g} | "
                     f"{_first_sentence(s['notes'])} |")
        clock += s["minutes"]
    lines += [f"| | | **total** | **{total:g}** | limit {LIMIT_MIN} |", "",
              "**Live cell.** The race's slide: run its cell in place (Ctrl+Enter), then press Train. Measured "
              f"Train-to-done of the default race: {widget_s['LiveRace']:g} s on a shared 2-core CPU "
              f"({timings['machine']['device']}; `{TIMINGS.relative_to(ROOT)}`, {timings['date']}). Every other "
              "slide shows committed outputs.", "",
              "**Before class.** Run `make lecture` once on the projector's machine; in the deck, Run → Run All "
              "Cells, then go back to the first slide. Check the last slide prints the verdicts.", ""]
    return "\n".join(lines)


def room_table() -> str:
    t = json.loads(TIMINGS.read_text(encoding="utf-8"))
    src = f"`{TIMINGS.relative_to(ROOT)}` ({t['date']}, {t['machine']['device']})"
    rows = ["| live cell | seconds | measured in |", "|---|---|---|"]
    for name, what in (("LiveRace", "the race, Train to done (the deck's race slide; notebook 03)"),
                       ("LiveTrainer", "the trainer, Train to done (notebook 03)")):
        rows.append(f"| {what} | {t['widget_run_s'][name]:g} | {src} |")
    for name in LAB:
        rows.append(f"| `{name}`, Run All | {t['notebooks'][name]['seconds']:g} | {src} |")
    return "\n".join(rows)


def projector_table() -> str:
    if not PROJECTOR.exists():
        return "(not measured yet: run `python course/projector.py`)"
    recs = json.loads(PROJECTOR.read_text(encoding="utf-8"))
    groups: dict = {}
    for r in recs:
        key = (r["where"], r["notebook"], r["picture"])
        g = groups.setdefault(key, {})
        old = g.get(r["viewport"])
        px = r["smallest_text_px"]
        if old is None or (px is not None and (old[0] is None or px < old[0])):
            g[r["viewport"]] = (px, r["cut_off"] or (old[1] if old else False))
        elif r["cut_off"]:
            g[r["viewport"]] = (old[0], True)
    rows = ["| where | picture | 1280×720 px | 1024×768 px | cut off |", "|---|---|---|---|---|"]
    for (where, nb, pic), g in sorted(groups.items()):
        cells = [g.get(v, (None, False)) for v in ("1280x720", "1024x768")]
        cut = "yes" if any(c[1] for c in cells) else "no"
        rows.append(f"| {where} | {nb}: {pic.replace('|', '/')} | "
                    + " | ".join("–" if c[0] is None else f"{c[0]:g}" for c in cells) + f" | {cut} |")
    return "\n".join(rows)


def guide_text() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    for name, body in (("room", room_table()), ("projector", projector_table())):
        begin, end = f"<!-- lecture_plan:{name}:begin -->", f"<!-- lecture_plan:{name}:end -->"
        i, j = text.index(begin) + len(begin), text.index(end)
        text = text[:i] + "\n" + body + "\n" + text[j:]
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="fail when notebooks/lecture_plan.md is out of date")
    args = ap.parse_args(argv)
    text, guide = plan(), guide_text()
    if args.check:
        ok = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        ok_guide = GUIDE.read_text(encoding="utf-8") == guide
        for path, good in ((OUT, ok), (GUIDE, ok_guide)):
            word = "is up to date" if good else "differs: run python course/lecture_plan.py"
            print(f"{path.relative_to(ROOT)} {word}")
        return 0 if ok and ok_guide else 1
    OUT.write_text(text, encoding="utf-8")
    GUIDE.write_text(guide, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(slides())} slides, {sum(s['minutes'] for s in slides()):g} minutes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
