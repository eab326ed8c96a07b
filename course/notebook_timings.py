"""How long each lesson takes: a study-time estimate per notebook and per section, computed from the notebooks
themselves, and the 2-hour lab and 50-minute lecture of the instructor guide built from it. The model is one of
careful study, calibrated against cold reads, not of skimming.

The estimate of a section (a ``##`` heading starts one) is

    reading    (prose words + folded words) / 100 words per minute
    formulas   0.5 min per displayed formula ``$$…$$`` (inline formulas count as one word each)
    tables     1 min per Markdown table in the text
    figures    1 min per figure a code cell shows (a PNG, SVG or plotly output)
    exercises  a fixed number of minutes per exercise found in the text (MINUTES below)
    run time   the measured seconds of the section's code cells (Kernel → Restart and run all, one torch
               thread), plus one measured Train-to-done run of a live widget per question asked about it

The sections "Check your understanding", "Try this" and any section whose heading starts "After the lab" are
homework: their minutes are reported as homework, not in the notebook's estimate (which is what the lab path adds
up).

Calibration (``--calibrate``). The rates are fitted to cold reads: readers who study the course path in order and
answer each question before opening its fold, whose minutes, scores and the wrong beliefs they left with are
committed in COLD_READS. For every notebook of every read, the notebook as it was at the read's commit is counted
(its lab sections, plus its homework sections when the reader did those too) and the reader's minutes are
regressed, by ordinary least squares without intercept, on three counts: words read, reasoning questions and
self-checks, and homework tasks (numbered items of "Check your understanding" and "Try this"). Formulas (1 min),
tables and figures (2 min), Explore sections (10 min) and the measured run time are held fixed and subtracted
first; a read that reports its lab's in-class minutes apart adds one more row, the three lab notebooks' lab sections
together. The fit and the rows it used are written to COLD_READS; the rates below are the fit rounded to whole
units (words a minute, minutes a question, minutes a task). Word counting (``prose_words``):
HTML tags and link targets are dropped, every inline formula ``$…$`` counts as one word, displayed formulas and
table rules are not words, and a token counts only if it holds a letter or digit. Text inside ``<details>``
blocks (answers, explanations, hints) is counted separately as "folded" and included in the estimate.

Exercises found in the text (outside folded blocks):
    question    a question that asks the student to reason: a "**Predict…**", "**Reason…**", "**Estimate…**" or
                "**Spot the false claim…**" prompt; a prompt listing numbered runs counts each run
    self-check  a code cell with ``answer = None`` (resnetlearn.classroom.check)
    homework    a numbered item of a "Check your understanding" section (homework)
    explore     a section whose heading starts with "Explore" (sliders or a form to try)
    try         a numbered item of a "Try this" section (homework)

Two modes. Without ``--run`` (fast, no torch work): count, take the run times measured earlier from the JSON file
(keyed by each code cell's source hash, so an edited cell has no time until it is measured again), write the
Markdown report, the guide's tables between their markers, each notebook's own time line (between TIME
markers in its first cell) and the "(N min)" of its section headings, and the run times the README and docs/
quote (between run-time markers naming the notebook). With ``--run``: execute the notebooks
first (a copy in memory, from notebooks/; the files are not rewritten) and time every cell.

    python course/notebook_timings.py                  # recount, rewrite the report and the guide's tables
    python course/notebook_timings.py --check          # exit 1 if the report or the guide differ
    python course/notebook_timings.py --run [NAME ...] # measure (all notebooks, or those named), then write
    python course/notebook_timings.py --from-committed [NAME ...]  # times from the committed outputs' timestamps
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
GUIDE = NOTEBOOKS / "README.md"
RESULTS = ROOT / "course" / "results"
JSON_FILE = RESULTS / "notebook_timings_cpu.json"
REPORT = RESULTS / "notebook_timings_cpu.md"

WORDS_PER_MINUTE = 124
"""Careful study of mathematical teaching text (folded answers included), fitted to the cold reads."""
DISPLAY_MATH_MIN = 1.0
TABLE_MIN = 2.0
FIGURE_MIN = 2.0
MINUTES = {"question": 10, "self-check": 10, "homework": 4, "explore": 10, "try": 4}
"""Minutes per exercise: a reasoning question or self-check in the lab (predict, run, compare) and a homework task
(a "Check your understanding" item or a "Try this" task) are fitted to the cold reads; an Explore section is held
at 10."""
CALIBRATION = ("Rates fitted by least squares to every cold read (minutes per notebook, homework included where the "
               "reader did it, and a read's in-class lab minutes) on words, questions and homework tasks "
               "(`python course/notebook_timings.py --calibrate`), then rounded to whole units.")
COLD_READS = RESULTS / "cold_reads.json"
"""Minutes, question scores and wrong beliefs of readers who studied the lab path cold (see the docstring)."""
HOMEWORK = ("check your understanding", "try this", "after the lab")
"""Sections (by the start of their heading, any case) done after class."""
NUMBERED_HOMEWORK = ("check your understanding", "try this")
"""Homework sections whose tasks are numbered items (the others ask reasoning questions, as lab sections do)."""
WIDGETS = ("LiveTrainer", "LiveRace")

LAB = ("03_hierarchical_learning", "04_kernel_failure")
"""The 2-hour lab, in this order: the race (03), then why kernels fail (04). Under the calibrated rates each lab
notebook's three reasoning questions alone take 24 minutes, so the kernel primer (03b, which 03's race needs)
does not fit beside them: it is read before the lab, with 00 and 01 (PRE_LAB); 02 and 06 come after it
(POST_LAB)."""
PRE_LAB = ("00_welcome", "01_concept_class", "03b_kernel_primer")
"""Read before the lab: the networks, the target H and the threshold kα² (00, 01) and the kernels (03b)."""
POST_LAB = ("02_complexity", "06_lazy_regime")
"""Homework after the lab: the complexity measures and the lazy regime."""
COURSE = PRE_LAB + LAB + POST_LAB
"""The core notebooks in reading order; each asks at least three reasoning questions."""
LAB_LIMIT, LECTURE_LIMIT = 120, 50
LAB_TARGET = 105
"""The lab's model minutes at most: the calibrated model is an average reader, and slower readers need the rest of
LAB_LIMIT."""
LECTURE_WORDS_PER_MINUTE = 100
"""A lecturer explains a section's text rather than reading it: half the reading speed."""
LECTURE_OUTPUT_MIN = 1
"""Minutes to walk the room through one figure or printed table."""

LECTURE = (
    # (notebook, heading the section starts with, run its cells live?, what to say)
    ("00_welcome", "What the paper shows", False,
     "the target H = βF + αG(F), the threshold kα², and the two theorems in one breath"),
    ("00_welcome", "Networks for mathematicians", False,
     "the three networks as formulas with shapes, SGD in one line, and what each mode trains"),
    ("01_concept_class", "The §8.1 instance", True,
     "F is 15 degree-2 parities, αG(F) one degree-8 parity"),
    ("01_concept_class", "What knowing $F$ leaves", False,
     "kα² is what is left when F is known and every G_i is ±1: read every later number against it"),
    ("02_complexity", "Composition", False,
     "composing two cheap functions can cost far more than either: the d⁵ factor"),
    ("03b_kernel_primer", "1 · Kernel methods", False,
     "what a kernel method is: eq 3.1 with a regularised fit"),
    ("03b_kernel_primer", "5 · The NTK", False,
     "the NTK is the kernel of a network linearised at its initialisation"),
    ("03_hierarchical_learning", "The race", False,
     "the ResNet against the fully connected nets and a kernel, on the same samples"),
    ("04_kernel_failure", "Figure 2(a) and 2(b)", False,
     "the paper's Figure 2 from our multi-seed runs: what is reproduced, under which rule and N"),
    ("04_kernel_failure", "Rank counting", False,
     "N kernel sections span N dimensions; the degree-k parities need C(d, k): why every kernel fails"),
    ("06_lazy_regime", "What the paper breaks", False,
     "the take-home: which assumption of the NTK analysis hierarchical learning does without"),
)
"""The 50-minute lecture: sections shown with their committed outputs (cells run only where marked live)."""

BEGIN, END = "<!-- notebook_timings:{}:begin -->", "<!-- notebook_timings:{}:end -->"
SLOW_S = 10
"""Sections whose code cells run longer than this many seconds (live widget runs aside) are listed."""

_DETAILS = re.compile(r"<details\b.*?</details\s*>", re.IGNORECASE | re.DOTALL)
_HEADING = re.compile(r"^##(?!#)\s*(.*)$")
_STATED = re.compile(r"\((\d+)\s*min\)")
_NUMBERED = re.compile(r"^\s{0,3}\d+\.\s", re.MULTILINE)
QUESTION_KINDS = ("Predict", "Reason", "Estimate", "Spot the false claim")
_QUESTION = re.compile(r"\*\*(?:" + "|".join(QUESTION_KINDS) + r")[^*]*\*\*(.*?)(?:\n\s*\n|\Z)", re.DOTALL)
_DISPLAY = re.compile(r"\$\$.*?\$\$", re.DOTALL)
_TABLE_RULE = re.compile(r"^\s*\|?(\s*:?-{3,}:?\s*\|)+(\s*:?-{3,}:?\s*)?$", re.MULTILINE)
FIGURE_TYPES = ("image/png", "image/svg+xml", "application/vnd.plotly.v1+json")
_SELF_CHECK = re.compile(r"^\s*answer\s*=\s*None\b", re.MULTILINE)
TIME_BEGIN, TIME_END = "<!-- notebook_timings:time:begin -->", "<!-- notebook_timings:time:end -->"
_TIME_BLOCK = re.compile(re.escape(TIME_BEGIN) + r".*?" + re.escape(TIME_END), re.DOTALL)
_HEADING_MIN = re.compile(r"^(##(?!#).*?)\((\d+(?:\.\d+)?)\s*min\)", re.MULTILINE)
_RUN_BLOCK = re.compile(r"(<!-- notebook_timings:run:([\w.-]+):begin -->).*?(<!-- notebook_timings:run:\2:end -->)",
                        re.DOTALL)
"""A run time quoted in the README or docs/: ``<!-- notebook_timings:run:NAME:begin -->…<!--
notebook_timings:run:NAME:end -->``, filled with the seconds a notebook's own time line states, or a live widget's
measured Train-to-done seconds (NAME a notebook or LiveTrainer/LiveRace)."""


# --------------------------------------------------------------------------------------------------- counting

def prose_words(markdown: str) -> int:
    """Words of a Markdown text by the rule of the module docstring (a notebook's own time line, which
    this script writes between TIME markers, is not counted: it would change with what it reports)."""
    markdown = _TIME_BLOCK.sub(" ", markdown)
    text = _DISPLAY.sub(" ", markdown)
    text = re.sub(r"\$[^$\n]+\$", " formula ", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"\]\([^)\s]*\)", "] ", text)
    return sum(1 for t in text.split() if re.search(r"\w", t))


def display_formulas(markdown: str) -> int:
    """Displayed formulas ``$$…$$`` of a Markdown text."""
    return len(_DISPLAY.findall(_TIME_BLOCK.sub(" ", markdown)))


def markdown_tables(markdown: str) -> int:
    """Markdown tables of a text, counted by their header rule (``|---|---|``)."""
    return len(_TABLE_RULE.findall(markdown))


def figures(outputs: list) -> int:
    """Figures among a code cell's outputs: each display that carries a PNG, SVG or plotly figure."""
    return sum(1 for o in outputs if any(t in o.get("data", {}) for t in FIGURE_TYPES))


def cell_hash(source: str) -> str:
    return hashlib.sha1(source.encode()).hexdigest()[:12]


def _split_sections(nb) -> list[dict]:
    """Cells cut at every ``##`` heading (also inside a markdown cell): title, visible and folded text, code."""
    sections = [{"title": "(opening)", "markdown": [], "code": [], "outputs": 0, "figures": 0}]
    for cell in nb.cells:
        if cell.cell_type == "code":
            sections[-1]["code"].append(cell.source)
            sections[-1]["outputs"] += bool(cell.get("outputs"))
            sections[-1]["figures"] += figures(cell.get("outputs", []))
            continue
        if cell.cell_type != "markdown":
            continue
        chunk, fenced = [], False
        for line in cell.source.splitlines():
            fenced ^= line.lstrip().startswith("```")
            m = None if fenced else _HEADING.match(line)
            if m:
                sections[-1]["markdown"].append("\n".join(chunk))
                sections.append({"title": m.group(1).strip(), "markdown": [], "code": [], "outputs": 0,
                                 "figures": 0})
                chunk = []
            chunk.append(line)
        sections[-1]["markdown"].append("\n".join(chunk))
    if not sections[0]["code"] and not "".join(sections[0]["markdown"]).strip():
        sections.pop(0)
    return sections


def _exercises(title: str, visible: str, code: list[str]) -> dict[str, int]:
    found = dict.fromkeys(MINUTES, 0)
    lowered = title.lower()
    if not lowered.startswith(NUMBERED_HOMEWORK):
        for m in _QUESTION.finditer(visible):
            found["question"] += max(1, len(re.findall(r"(?:^|\s)\d+\.\s", m.group(1))))
    if not lowered.startswith(NUMBERED_HOMEWORK):   # there a self-check is one of the numbered items
        found["self-check"] = sum(1 for src in code if _SELF_CHECK.search(src))
    if lowered.startswith("check your understanding"):
        found["homework"] = len(_NUMBERED.findall(visible))
    if lowered.startswith("try this"):
        found["try"] = len(_NUMBERED.findall(visible))
    if lowered.startswith("explore"):
        found["explore"] = 1
    return {k: v for k, v in found.items() if v}


def notebook_stats(path: Path) -> dict:
    """Words and exercises of every section of one notebook, and its code cells' hashes (no execution)."""
    nb = nbformat.read(path, as_version=4)
    out = []
    for s in _split_sections(nb):
        text = "\n\n".join(s["markdown"])
        folded = "\n\n".join(_DETAILS.findall(text))
        visible = _DETAILS.sub(" ", text)
        stated = _STATED.search(s["title"])
        out.append({
            "title": s["title"],
            "words": prose_words(visible),
            "folded_words": prose_words(folded),
            "formulas": display_formulas(text),
            "tables": markdown_tables(text),
            "figures": s["figures"],
            "exercises": _exercises(s["title"], visible, s["code"]),
            "stated_min": int(stated.group(1)) if stated else None,
            "cells": [cell_hash(src) for src in s["code"]],
            "outputs": s["outputs"],
            "widgets": sum(1 for src in s["code"] for w in WIDGETS if re.search(rf"\b{w}\(", src)),
        })
    return {"name": path.stem, "sections": out}


def role(name: str) -> str:
    if name in LAB:
        return "lab"
    if name in PRE_LAB:
        return "before the lab"
    if name in POST_LAB:
        return "after the lab"
    return "reading (deep dive)" if name.endswith("_deep_dive") else "reading"


# --------------------------------------------------------------------------------------------------- estimate

def estimate(stats: dict, measured: dict) -> dict:
    """Add minutes to a notebook's stats: reading, exercises (lab ones and homework), run time per section.
    ``measured`` is the JSON file's content; a code cell it has no time for makes ``run_min`` None."""
    m = measured.get("notebooks", {}).get(stats["name"], {})
    seconds = m.get("cells", {})
    widget_s = measured.get("widget_run_s", {})
    one_widget_run = max(widget_s.values()) if widget_s else None
    total = {"reading_min": 0.0, "exercise_min": 0.0, "homework_min": 0.0, "run_min": 0.0, "words": 0,
             "folded_words": 0}
    for s in stats["sections"]:
        s["homework"] = s["title"].lower().startswith(HOMEWORK)
        s["reading_min"] = ((s["words"] + s["folded_words"]) / WORDS_PER_MINUTE + DISPLAY_MATH_MIN * s["formulas"]
                            + TABLE_MIN * s["tables"] + FIGURE_MIN * s["figures"])
        s["exercise_min"] = sum(MINUTES[k] * n for k, n in s["exercises"].items())
        s["homework_min"] = s["reading_min"] + s["exercise_min"] if s["homework"] else 0.0
        missing = [h for h in s["cells"] if h not in seconds]
        if missing or (s["widgets"] and one_widget_run is None):
            s["run_min"], s["unmeasured_cells"] = None, missing
        else:
            runs = s["widgets"] * max(1, s["exercises"].get("question", 0))
            s["cells_s"] = sum(seconds[h] for h in s["cells"])
            s["run_min"] = (s["cells_s"] + runs * (one_widget_run or 0)) / 60
        s["estimate_min"] = (None if s["run_min"] is None else 0.0 if s["homework"]
                             else s["reading_min"] + s["exercise_min"] + s["run_min"])
        for k in ("words", "folded_words", "homework_min"):
            total[k] += s[k]
        if not s["homework"]:
            total["reading_min"] += s["reading_min"]
            total["exercise_min"] += s["exercise_min"]
        total["run_min"] = None if total["run_min"] is None or s["run_min"] is None else total["run_min"] + s["run_min"]
    if total["run_min"] is not None:
        total["run_min"] += m.get("kernel_s", 0) / 60
    total["estimate_min"] = (None if total["run_min"] is None
                             else total["reading_min"] + total["exercise_min"] + total["run_min"])
    stats.update(total, role=role(stats["name"]))
    return stats


def all_estimates(measured: dict) -> dict[str, dict]:
    return {p.stem: estimate(notebook_stats(p), measured) for p in sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))}


def _find_section(est: dict, notebook: str, heading: str) -> dict:
    if notebook not in est:
        raise ValueError(f"LECTURE: no notebook {notebook!r} (notebooks: {sorted(est)})")
    for s in est[notebook]["sections"]:
        if s["title"].startswith(heading):
            return s
    raise ValueError(f"LECTURE: {notebook} has no section starting {heading!r} "
                     f"(sections: {[s['title'] for s in est[notebook]['sections']]})")


def lecture_segments(est: dict) -> list[dict]:
    """Each lecture segment's minutes: its prose (visible and folded) presented at LECTURE_WORDS_PER_MINUTE,
    LECTURE_OUTPUT_MIN per code cell whose output is shown, one minute per question asked of the room, and the
    cells' measured run time when the segment is run live (otherwise its committed outputs are shown)."""
    out = []
    for notebook, heading, live, say in LECTURE:
        s = _find_section(est, notebook, heading)
        if live and s["run_min"] is None:
            raise ValueError(f"LECTURE: {notebook} → {s['title']} is run live but its cells have no measured time")
        minutes = ((s["words"] + s["folded_words"]) / LECTURE_WORDS_PER_MINUTE + LECTURE_OUTPUT_MIN * s["outputs"]
                   + s["exercises"].get("question", 0) + (s["run_min"] if live else 0))
        out.append({"notebook": notebook, "section": _title(s), "live": live, "say": say, "minutes": minutes,
                    "words": s["words"] + s["folded_words"]})
    return out


def totals(est: dict) -> dict:
    lab = [est[n]["estimate_min"] for n in LAB]
    lecture = lecture_segments(est)
    return {"lab_min": None if None in lab else sum(lab), "lecture_min": sum(seg["minutes"] for seg in lecture)}


# --------------------------------------------------------------------------------------------------- rendering

def _title(s: dict) -> str:
    """A section's heading without the notebook's own "(N min)" (the report lists that as "stated min")."""
    return _STATED.sub("", s["title"]).strip()


def _m(x) -> str:
    return "not measured" if x is None else f"{x:.1f}"


def _ex(ex: dict) -> str:
    return ", ".join(f"{n} {k}" for k, n in ex.items()) or "—"


def render_notebooks(est: dict) -> str:
    rows = ["| notebook | role | prose words (folded) | reading min | exercises min | run min | estimate min "
            "| homework min |", "|---|---|---|---|---|---|---|---|"]
    order = list(COURSE) + [n for n in est if n not in COURSE]
    for n in order:
        e = est[n]
        rows.append(f"| `{n}` | {e['role']} | {e['words'] + e['folded_words']:,} ({e['folded_words']:,}) "
                    f"| {_m(e['reading_min'])} | {_m(e['exercise_min'])} | {_m(e['run_min'])} "
                    f"| {_m(e['estimate_min'])} | {_m(e['homework_min'])} |")
    return "\n".join(rows)


def render_lab(est: dict) -> str:
    rows = ["| when | notebook | minutes | from – to |", "|---|---|---|---|"]
    for n in PRE_LAB:
        rows.append(f"| before the lab | `{n}` | {_m(est[n]['estimate_min'])} | |")
    t = 0.0
    for n in LAB:
        e = est[n]["estimate_min"]
        if e is None:
            rows.append(f"| lab | `{n}` | not measured | |")
            continue
        rows.append(f"| lab | `{n}` | {e:.1f} | {t:.0f} – {t + e:.0f} |")
        t += e
    lab = totals(est)["lab_min"]
    rows.append(f"| | **lab path** | **{_m(lab)}** | at most {LAB_TARGET} of a {LAB_LIMIT}-minute lab |")
    for n in POST_LAB:
        rows.append(f"| after the lab | `{n}` | {_m(est[n]['estimate_min'])} | |")
    return "\n".join(rows)


def render_lecture(est: dict) -> str:
    rows = ["| from – to | notebook → section | live? | minutes | what to say |", "|---|---|---|---|---|"]
    t = 0.0
    for seg in lecture_segments(est):
        rows.append(f"| {t:.0f} – {t + seg['minutes']:.0f} | {seg['notebook'][:3].rstrip('_')} → "
                    f"{seg['section']} | {'run live' if seg['live'] else 'committed outputs'} "
                    f"| {seg['minutes']:.1f} | {seg['say']} |")
        t += seg["minutes"]
    rows.append(f"| | **lecture** | | **{t:.1f}** | limit {LECTURE_LIMIT} |")
    return "\n".join(rows)


def render_report(est: dict, measured: dict) -> str:
    out = ["# Notebook timings (generated by `course/notebook_timings.py`; do not edit)", "",
           f"Rules: prose at {WORDS_PER_MINUTE} words/min (folded `<details>` text included), {DISPLAY_MATH_MIN} min "
           f"per displayed formula, {TABLE_MIN:g} min per Markdown table, {FIGURE_MIN:g} min per figure; exercises "
           + ", ".join(f"{k} {v} min" for k, v in MINUTES.items())
           + "; \"Check your understanding\", \"Try this\" and \"After the lab\" sections are homework, outside the "
           "estimate; run time measured "
           + (f"{measured.get('date', '?')} on {measured.get('machine', {}).get('device', '?')}, "
              f"one torch thread (`{measured.get('command', '?')}`)."), "",
           "## Per notebook", "", render_notebooks(est), "", "## The model beside cold reads", "",
           render_cold_reads(est), "", "## The lab path", "", render_lab(est), "",
           "## The lecture", "", render_lecture(est), "", f"## Sections running longer than {SLOW_S} s", "",
           render_slow(est), "", "## Per section", ""]
    for n, e in est.items():
        out += [f"### `{n}` ({e['role']})", "",
                "| section | words (folded) | exercises | stated min | reading min | exercises min | run min "
                "| estimate min |", "|---|---|---|---|---|---|---|---|"]
        for s in e["sections"]:
            est_min = f"homework {s['homework_min']:.1f}" if s["homework"] else _m(s["estimate_min"])
            out.append(f"| {_title(s)} | {s['words']} ({s['folded_words']}) | {_ex(s['exercises'])} "
                       f"| {s['stated_min'] if s['stated_min'] is not None else '—'} | {s['reading_min']:.1f} "
                       f"| {s['exercise_min']:.0f} | {_m(s['run_min'])} | {est_min} |")
        out.append("")
    return "\n".join(out)


def render_slow(est: dict) -> str:
    rows = ["| notebook → section | its code cells' measured run time (s) |", "|---|---|"]
    for n, e in est.items():
        for s in e["sections"]:
            if s.get("cells_s") is not None and s["cells_s"] > SLOW_S:
                rows.append(f"| `{n}` → {_title(s)} | {s['cells_s']:.0f} |")
    return "\n".join(rows)


def cold_reads() -> dict:
    """The committed cold reads (COLD_READS): ``readers`` (the first two, of one commit, ``model_at_read``) and
    ``checks`` (later reads, each with its ``commit``): each reader's background, minutes per notebook, scores, the
    wrong beliefs and undefined terms they reported; ``homework_done`` when the minutes include the homework
    sections, ``lab_in_class_minutes`` when the reader gave the lab's in-class minutes apart; and ``calibration``,
    written by :func:`calibrate`. Empty when none is committed."""
    return json.loads(COLD_READS.read_text()) if COLD_READS.exists() else {}


def all_reads(reads: dict) -> list[dict]:
    """Every read, each with its commit (the first readers' is ``model_at_read``'s)."""
    first = reads.get("model_at_read", {}).get("commit")
    return [dict(r, commit=r.get("commit", first)) for r in reads.get("readers", [])] + reads.get("checks", [])


def read_counts(stats: dict, seconds: dict, *, with_homework: bool) -> dict:
    """What a reader of one notebook worked through: words (folded included), reasoning questions and lab
    self-checks, homework tasks (numbered items of "Check your understanding" and "Try this"), and the minutes the
    rates hold fixed (formulas, tables, figures, Explore sections, the measured run time of the cells; a cell
    without a measured time counts 0). Homework sections count only ``with_homework``."""
    c = {"words": 0, "questions": 0, "tasks": 0, "fixed_min": 0.0}
    for s in stats["sections"]:
        title = s["title"].lower()
        if title.startswith(HOMEWORK) and not with_homework:
            continue
        ex = s["exercises"]
        c["words"] += s["words"] + s["folded_words"]
        c["questions"] += ex.get("question", 0) + ex.get("self-check", 0)
        c["tasks"] += ex.get("homework", 0) + ex.get("try", 0)
        c["fixed_min"] += (DISPLAY_MATH_MIN * s["formulas"] + TABLE_MIN * s["tables"] + FIGURE_MIN * s["figures"]
                           + MINUTES["explore"] * ex.get("explore", 0)
                           + sum(seconds.get(h, 0.0) for h in s["cells"]) / 60)
    c["fixed_min"] = round(c["fixed_min"], 3)
    return c


def _git_show(commit: str, path: str) -> str:
    import subprocess

    return subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"], capture_output=True, text=True,
                          check=True).stdout


def counts_at(commit: str, name: str, *, with_homework: bool) -> dict:
    """:func:`read_counts` of notebook ``name`` as it was at ``commit`` (from git), with that commit's run times."""
    import tempfile

    measured = json.loads(_git_show(commit, f"{JSON_FILE.relative_to(ROOT)}"))
    seconds = measured.get("notebooks", {}).get(name, {}).get("cells", {})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.ipynb"
        path.write_text(_git_show(commit, f"notebooks/{name}.ipynb"), encoding="utf-8")
        return read_counts(notebook_stats(path), seconds, with_homework=with_homework)


def fit_rates(rows: list[dict]) -> dict:
    """Least squares without intercept of (minutes − fixed_min) on words, questions and tasks: words a minute,
    minutes a question, minutes a task, and the root-mean-square misfit in minutes per row."""
    import numpy as np

    a = np.array([[r["words"], r["questions"], r["tasks"]] for r in rows], dtype=float)
    b = np.array([r["minutes"] - r["fixed_min"] for r in rows], dtype=float)
    (per_word, per_question, per_task), *_ = np.linalg.lstsq(a, b, rcond=None)
    rmse = float(np.sqrt(np.mean((a @ [per_word, per_question, per_task] - b) ** 2)))
    return {"words_per_minute": round(1 / per_word, 2), "question_min": round(float(per_question), 2),
            "task_min": round(float(per_task), 2), "rmse_min": round(rmse, 2), "rows": len(rows)}


def calibrate() -> dict:
    """Count every notebook of every read at the read's commit, fit the rates (:func:`fit_rates`), and write
    both into COLD_READS under ``calibration``."""
    reads = cold_reads()
    rows = []
    for r in all_reads(reads):
        hw = bool(r.get("homework_done"))
        for n, minutes in r["minutes"].items():
            rows.append({"read": r["id"], "commit": r["commit"], "notebook": n, "with_homework": hw,
                         "minutes": minutes, **counts_at(r["commit"], n, with_homework=hw)})
        if "lab_in_class_minutes" in r:
            lab = [counts_at(r["commit"], n, with_homework=False) for n in r["lab_notebooks"]]
            rows.append({"read": r["id"], "commit": r["commit"], "notebook": "lab in class", "with_homework": False,
                         "minutes": r["lab_in_class_minutes"],
                         **{k: round(sum(c[k] for c in lab), 3) for k in lab[0]}})
    reads["calibration"] = {"method": CALIBRATION, "fit": fit_rates(rows), "rows": rows}
    COLD_READS.write_text(json.dumps(reads, indent=1, ensure_ascii=False) + "\n")
    return reads["calibration"]


def model_minutes(row: dict) -> float:
    """The model's minutes for a calibration row at today's rates."""
    return (row["fixed_min"] + row["words"] / WORDS_PER_MINUTE + MINUTES["question"] * row["questions"]
            + MINUTES["homework"] * row["tasks"])


def render_cold_reads(est: dict) -> str:
    reads = cold_reads()
    rs, cal = all_reads(reads), reads.get("calibration")
    if not rs or not cal:
        return "No cold read is committed yet (or no calibration: python course/notebook_timings.py --calibrate)."
    model = {(row["read"], row["notebook"]): model_minutes(row) for row in cal["rows"]}
    rows = ["| notebook | " + " | ".join(f"{r['id']}: reader / model" for r in rs) + " | model now |",
            "|---|" + "---|" * len(rs) + "---|"]
    for n in COURSE:
        cells = [f"{r['minutes'][n]} / {model[r['id'], n]:.0f}" if n in r["minutes"] else "—" for r in rs]
        rows.append(f"| `{n}` | " + " | ".join(cells) + f" | {_m(est[n]['estimate_min'])} |")
    lab_now = [est[n]["estimate_min"] for n in LAB]
    cells = [f"{r['lab_in_class_minutes']} / {model[r['id'], 'lab in class']:.0f}" if "lab_in_class_minutes" in r
             else (f"{sum(r['minutes'][n] for n in r['lab_notebooks'])} / "
                   f"{sum(model[r['id'], n] for n in r['lab_notebooks']):.0f}" if not r.get("homework_done") else "—")
             for r in rs]
    rows.append("| **the lab, in class** | " + " | ".join(f"**{c}**" for c in cells)
                + f" | **{_m(None if None in lab_now else sum(lab_now))}** |")
    f = cal["fit"]
    rows += ["", "Reader / model: the reader's minutes and the model's for the version read, at today's rates (with "
             "the homework sections where the reader did them). Readers: "
             + "; ".join(f"{r['id']} (commit {r['commit']}): {r['background']}"
                         + ("; minutes include the homework" if r.get("homework_done") else "; lab sections only")
                         for r in rs)
             + f". {CALIBRATION} The fit over {f['rows']} rows: {f['words_per_minute']:g} words a minute, "
             f"{f['question_min']:g} min a question, {f['task_min']:g} min a homework task, misfit "
             f"{f['rmse_min']:g} min (root mean square) per row; rounded: {WORDS_PER_MINUTE}, {MINUTES['question']}, "
             f"{MINUTES['homework']}. The lab of the reads: "
             + ", ".join(sorted({" → ".join(n.split("_")[0] for n in r["lab_notebooks"]) for r in rs}))
             + "; the lab now: " + " → ".join(n.split("_")[0] for n in LAB) + "."]
    return "\n".join(rows)


def guide_blocks(est: dict) -> dict[str, str]:
    return {"notebooks": render_notebooks(est), "lab": render_lab(est), "lecture": render_lecture(est),
            "slow": render_slow(est), "cold_reads": render_cold_reads(est)}


def fill_guide(text: str, blocks: dict[str, str]) -> str:
    """The guide with each marked block replaced; ValueError naming the block if its markers are missing."""
    for name, body in blocks.items():
        b, e = BEGIN.format(name), END.format(name)
        if text.count(b) != 1 or text.count(e) != 1 or text.index(b) > text.index(e):
            raise ValueError(f"{GUIDE.name}: needs exactly one {b} … {e} pair")
        head, rest = text.split(b)
        text = head + b + "\n" + body + "\n" + e + rest.split(e, 1)[1]
    return text


# ------------------------------------------------------------------------------------- the notebooks' own time lines

def _minutes(x: float) -> int:
    return max(1, round(x))


def homework_parts(e: dict) -> str:
    """What a notebook's homework consists of, named from its homework sections (only those it has)."""
    names = {"after the lab": "the sections after the lab", "check your understanding": "the questions to check "
             "your understanding", "try this": "the Try-this tasks"}
    found = [v for k, v in names.items() if any(s["homework"] and s["title"].lower().startswith(k)
                                                 for s in e.get("sections", []))]
    if not found:
        return "the homework sections"
    return ", ".join(found[:-1]) + " and " + found[-1] if len(found) > 1 else found[0]


def time_line(e: dict) -> str:
    """The time line a notebook opens with (after its bold "Time." and the begin marker), from its estimate, so
    a notebook and the guide cannot disagree. The markers sit inside the paragraph: a line that began with an
    HTML comment would make Markdown show the whole line as raw text."""
    if e["estimate_min"] is None:
        return "Not yet measured: run `python course/notebook_timings.py --run` once."
    where = {"lab": "in the lab", "before the lab": "of study before the lab"}.get(e["role"],
                                                                              "of reading and exercises")
    line = (f"About {_minutes(e['estimate_min'])} minutes {where} by our rule: reading "
            f"{_minutes(e['reading_min'])} ({WORDS_PER_MINUTE} words a minute with folded answers, plus formulas, "
            f"tables and figures), exercises "
            f"{round(e['exercise_min'])}, running the cells {60 * e['run_min']:.0f} s on a 2-core CPU")
    if e["homework_min"] >= 0.5:
        h = _minutes(e["homework_min"])
        line += f"; {homework_parts(e)} add about {h} minute{'s' if h > 1 else ''} as homework"
    return line + " (computed from this notebook by `course/notebook_timings.py`)."


def fill_notebook(raw: str, e: dict) -> str:
    """A notebook's JSON text with its time line (between the TIME markers of its first markdown cell) and the
    "(N min)" of its ``##`` headings set from the estimate ``e``; ValueError if the markers are missing."""
    nb = json.loads(raw)
    cells = [c for c in nb["cells"] if c["cell_type"] == "markdown"]
    first = "".join(cells[0]["source"]) if cells else ""
    if first.count(TIME_BEGIN) != 1 or first.count(TIME_END) != 1:
        raise ValueError(f"{e['name']}: its first markdown cell needs one {TIME_BEGIN} … {TIME_END} pair")
    minutes = {_title(s): s["homework_min"] if s["homework"] else s["estimate_min"] for s in e["sections"]}

    def heading(m):
        title = _STATED.sub("", m.group(0)).removeprefix("##").strip()
        x = minutes.get(title)
        return m.group(0) if x is None else f"{m.group(1)}({_minutes(x)} min)"

    for i, c in enumerate(cells):
        text = "".join(c["source"])
        if i == 0:
            text = _TIME_BLOCK.sub(lambda _: TIME_BEGIN + time_line(e) + TIME_END, text)
        text = _HEADING_MIN.sub(heading, text)
        lines = text.split("\n")
        c["source"] = [ln + "\n" for ln in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def run_seconds(e: dict) -> str:
    """A notebook's run time as its time line states it (its cells, one live-widget run per question about a
    widget, kernel start-up): "N s" on a 2-core CPU."""
    if e["run_min"] is None:
        raise ValueError(f"{e['name']}: not measured; run python course/notebook_timings.py --run {e['name']}")
    return f"{60 * e['run_min']:.0f} s"


def run_time_pages() -> list[Path]:
    """The pages outside the notebooks and the guide that quote run times: the README and docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def fill_run_times(text: str, est: dict, where: str = "page", widgets: dict | None = None) -> str:
    """``text`` with every run-time marker pair filled: a notebook's name from ``est``, a live widget's
    (LiveTrainer, LiveRace) from ``widgets``, the measured seconds from Train to the end of one default run;
    ValueError naming an unknown name."""
    widgets = widgets or {}

    def fill(m):
        name = m.group(2)
        if name in widgets:
            return m.group(1) + f"{widgets[name]:.0f} s" + m.group(3)
        if name not in est:
            raise ValueError(f"{where}: no notebook or widget {name!r} for its run-time marker; "
                             f"choose from {sorted(est) + sorted(widgets)}")
        return m.group(1) + run_seconds(est[name]) + m.group(3)

    return _RUN_BLOCK.sub(fill, text)


# --------------------------------------------------------------------------------------------------- measuring

def _seconds(meta: dict) -> float | None:
    ex = meta.get("execution", {})
    start = ex.get("iopub.status.busy") or ex.get("iopub.execute_input")
    stop = ex.get("iopub.status.idle") or ex.get("shell.execute_reply")
    if not (start and stop):
        return None
    parse = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
    return (parse(stop) - parse(start)).total_seconds()


def time_notebook(path: Path) -> dict:
    """Run a copy in memory from notebooks/ (relative paths keep working; the file is not rewritten); every
    code cell's seconds by source hash, the rest of the wall time as kernel start/stop, and the text printed
    by the cells whose output nbval checks."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=1200, kernel_name="python3", record_timing=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    wall = time.perf_counter() - t0
    cells = {}
    for c in nb.cells:
        if c.cell_type == "code":
            s = _seconds(c.metadata)
            cells[cell_hash(c.source)] = round(s if s is not None else 0.0, 2)
    checked = ["".join(o.get("text", "") for o in c.outputs if o.get("output_type") == "stream").strip()
               for c in nb.cells if c.cell_type == "code" and "nbval-ignore-output" not in c.metadata.get("tags", [])]
    return {"seconds": round(wall, 1), "kernel_s": round(max(0.0, wall - sum(cells.values())), 1), "cells": cells,
            "checked_output": [t for t in checked if t]}


def committed_times(path: Path) -> dict:
    """The same record as :func:`time_notebook`, read from a notebook's committed outputs: the per-cell
    execution timestamps that ``course/execute_notebook.py`` (nbclient) stores when it runs the notebook in
    place. Kernel start-up is not in those timestamps; it is taken as 0."""
    nb = nbformat.read(path, as_version=4)
    cells = {}
    for c in nb.cells:
        if c.cell_type == "code":
            s = _seconds(c.metadata)
            if s is None:
                raise ValueError(f"{path.name}: a code cell has no execution time; run course/execute_notebook.py")
            cells[cell_hash(c.source)] = round(s, 2)
    checked = ["".join(o.get("text", "") for o in c.outputs if o.get("output_type") == "stream").strip()
               for c in nb.cells if c.cell_type == "code" and "nbval-ignore-output" not in c.metadata.get("tags", [])]
    return {"seconds": round(sum(cells.values()), 1), "kernel_s": 0.0, "cells": cells,
            "checked_output": [t for t in checked if t]}


def time_widgets(device=None) -> dict:
    """Seconds from Train to the end of one default run of each live widget."""
    from resnetlearn.classroom.live import LiveRace, LiveTrainer

    out = {}
    for cls in (LiveTrainer, LiveRace):
        w = cls(device=device, auto=False)
        w.train_btn.click()
        if not w.wait(600):
            raise RuntimeError(f"{cls.__name__} did not finish within 600 s")
        out[cls.__name__] = round(w.job.finished_s, 1)
    return out


def measure(names: list[str], measured: dict, device=None, *, committed: bool = False) -> dict:
    from resnetlearn.device import describe_device, select_device

    paths = sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))
    chosen = [p for p in paths if not names or p.stem in names or p.name in names]
    unknown = set(names) - {p.stem for p in paths} - {p.name for p in paths}
    if unknown:
        raise ValueError(f"names: no notebook {sorted(unknown)}; choose from {[p.stem for p in paths]}")
    measured = {k: v for k, v in measured.items() if k in ("notebooks", "widget_run_s")}
    measured.setdefault("notebooks", {})
    measured["notebooks"] = {k: v for k, v in measured["notebooks"].items() if (NOTEBOOKS / f"{k}.ipynb").exists()}
    measured.update(date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                    command=("python course/execute_notebook.py, then python course/notebook_timings.py "
                             "--from-committed" if committed else "heavy python course/notebook_timings.py --run")
                    + "".join(f" {n}" for n in names),
                    machine={"platform": platform.platform(), "cpu_count": os.cpu_count(),
                             "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"), "python": sys.version.split()[0],
                             "device": describe_device(select_device(device))},
                    load_average_at_start=[round(x, 2) for x in os.getloadavg()])
    for p in chosen:
        measured["notebooks"][p.stem] = committed_times(p) if committed else time_notebook(p)
        print(f"{p.name:44s} {measured['notebooks'][p.stem]['seconds']:7.1f} s", flush=True)
    if not names or "widget_run_s" not in measured:
        measured["widget_run_s"] = time_widgets(device)
        print("live widgets, Train to done:", measured["widget_run_s"], flush=True)
    measured["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return measured


# --------------------------------------------------------------------------------------------------- main

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", nargs="*", metavar="NAME", default=None,
                    help="execute and time the notebooks named (all when none is named) before writing")
    ap.add_argument("--from-committed", nargs="*", metavar="NAME", default=None,
                    help="take the run times from the notebooks' committed execution timestamps (written by "
                         "course/execute_notebook.py) instead of running them again")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if the report or the guide differ")
    ap.add_argument("--calibrate", action="store_true",
                    help="fit the rates to the cold reads (counting each read's notebooks at its commit, from git), "
                         "write the fit into course/results/cold_reads.json, print it, and exit")
    ap.add_argument("--device", default=None)
    args = ap.parse_args(argv)
    if sum(x is not None and x is not False for x in (args.run, args.from_committed, args.check or None)) > 1:
        ap.error("--check, --run and --from-committed exclude each other")
    if args.calibrate:
        fit = calibrate()["fit"]
        print(json.dumps(fit), f"(script rates: {WORDS_PER_MINUTE} words a minute, {MINUTES['question']} min a "
              f"question, {MINUTES['homework']} min a task); wrote {COLD_READS.relative_to(ROOT)}")
        return 0
    measured = json.loads(JSON_FILE.read_text()) if JSON_FILE.exists() else {}
    if args.run is not None or args.from_committed is not None:
        names = args.run if args.run is not None else args.from_committed
        measured = measure(names, measured, args.device, committed=args.from_committed is not None)
        JSON_FILE.write_text(json.dumps(measured, indent=1, ensure_ascii=False) + "\n")
    est = all_estimates(measured)
    report = render_report(est, measured) + "\n"
    guide = fill_guide(GUIDE.read_text(), guide_blocks(est))
    pages = [(p, fill_notebook(p.read_text(encoding="utf-8"), est[p.stem]))
             for p in sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))]
    quoted = [(p, fill_run_times(p.read_text(encoding="utf-8"), est, p.name, measured.get("widget_run_s")))
              for p in run_time_pages()]
    outputs = [(REPORT, report), (GUIDE, guide)] + pages + quoted
    if args.check:
        stale = [p.name for p, text in outputs if not p.exists() or p.read_text(encoding="utf-8") != text]
        if stale:
            print("out of date:", ", ".join(stale), "— run python course/notebook_timings.py")
        return 1 if stale else 0
    for p, text in outputs:
        if not p.exists() or p.read_text(encoding="utf-8") != text:
            p.write_text(text, encoding="utf-8")
    t = totals(est)
    print(f"lab path {_m(t['lab_min'])} min (at most {LAB_TARGET}), lecture {_m(t['lecture_min'])} min "
          f"(limit {LECTURE_LIMIT}); wrote {REPORT.relative_to(ROOT)} and the tables of {GUIDE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
