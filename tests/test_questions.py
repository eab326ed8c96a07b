"""Questions that make students think (issue 25 item 3), checked as far as text allows.

Every core notebook (the lab and the notebooks read before and after it) is checked. A reasoning question is a
Markdown line ``> **Predict.** …`` (or Reason, Estimate, Spot the false claim). Its
answer sits in the first ``<details>`` fold after it that names the answer's key numbers or words in a comment
``<!-- key: 0.361 | 7.27 -->``. The checks: every lab notebook asks at least three such questions in its lab
sections; every question has a keyed answer before the next question; no key appears in any cell before the
question (sources and printed outputs), so the answer is neither printed nor stated above it; every "Try this"
item and every "Explore" section has a fold with its expected outcome.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("notebook_timings", ROOT / "benchmarks" / "notebook_timings.py")
T = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(T)

MIN_QUESTIONS = 3
_QUESTION = re.compile(r"^>\s*\*\*(?:" + "|".join(T.QUESTION_KINDS) + r")\b[^*]*\*\*", re.MULTILINE)
_KEY = re.compile(r"<!--\s*key:(.*?)-->", re.DOTALL)
_FOLD = re.compile(r"<details\b.*?</details\s*>", re.IGNORECASE | re.DOTALL)
_HEADING = re.compile(r"^##(?!#)\s*(.*)$", re.MULTILINE)


def _output_text(cell) -> str:
    parts = []
    for o in cell.get("outputs", []):
        parts.append(o.get("text", "") if isinstance(o.get("text", ""), str) else "".join(o["text"]))
        for mime in ("text/plain", "text/html", "text/markdown"):
            v = o.get("data", {}).get(mime, "")
            parts.append(v if isinstance(v, str) else "".join(v))
    return "\n".join(parts)


def _mentions(text: str, key: str) -> bool:
    """``key`` appears in ``text`` as a whole token (0.36 is not found inside 0.361 or 10.36)."""
    return re.search(r"(?<![\w.])" + re.escape(key) + r"(?![\w]|\.\d)", text) is not None


def questions(nb) -> list[dict]:
    """Every question of a notebook: its kind line, section, keys, and the text of everything before it."""
    before, found, section = [], [], "(opening)"
    events = []          # (cell index, position, kind, payload) in reading order
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        src = cell.source
        for m in _HEADING.finditer(src):
            events.append((i, m.start(), "heading", m.group(1)))
        folds = [(m.start(), m.group(0)) for m in _FOLD.finditer(src)]
        for pos, fold in folds:
            events.append((i, pos, "fold", fold))
        visible = _FOLD.sub(lambda m: " " * len(m.group(0)), src)
        for m in _QUESTION.finditer(visible):
            events.append((i, m.start(), "question", src[m.start():src.find("\n", m.start()) % (len(src) + 1)]))
    events.sort(key=lambda e: (e[0], e[1]))
    for i, pos, kind, payload in events:
        if kind == "heading":
            section = payload
        elif kind == "question":
            # the time line is written by benchmarks/notebook_timings.py: its minutes are no answers
            earlier = [T._TIME_BLOCK.sub(" ", c.source) + "\n" + _output_text(c) for c in nb.cells[:i]]
            before = "\n".join(earlier) + "\n" + nb.cells[i].source[:pos]
            found.append({"cell": i, "line": payload.strip()[:90], "section": section, "keys": None,
                          "before": before})
        elif kind == "fold" and found and found[-1]["keys"] is None:
            keys = _KEY.search(payload)
            if keys:
                found[-1]["keys"] = [k.strip() for k in keys.group(1).split("|") if k.strip()]
    return found


def problems(nb, *, lab: bool) -> list[str]:
    out = []
    qs = questions(nb)
    in_lab = [q for q in qs if not q["section"].lower().startswith(T.HOMEWORK)]
    if lab and len(in_lab) < MIN_QUESTIONS:
        out.append(f"{len(in_lab)} reasoning question(s) in the lab sections, at least {MIN_QUESTIONS} wanted")
    for q in qs:
        if not q["keys"]:
            out.append(f"cell {q['cell']}: {q['line']!r} has no folded answer with <!-- key: … --> before the next")
            continue
        for k in q["keys"]:
            if _mentions(q["before"], k):
                out.append(f"cell {q['cell']}: {q['line']!r}: its key {k!r} already appears above the question")
    for s in T._split_sections(nb):
        text = "\n\n".join(s["markdown"])
        visible = _FOLD.sub(" ", text)
        title = s["title"].lower()
        folds = len(_FOLD.findall(text))
        if title.startswith("try this") and folds < len(T._NUMBERED.findall(visible)):
            out.append(f"section {s['title']!r}: {len(T._NUMBERED.findall(visible))} tasks but {folds} folds")
        if title.startswith("explore") and folds == 0:
            out.append(f"section {s['title']!r}: no fold with the expected outcome")
    return out


@pytest.mark.parametrize("name", T.COURSE)
def test_core_notebook_questions_make_students_think(name):
    nb = nbformat.read(T.NOTEBOOKS / f"{name}.ipynb", as_version=4)
    assert problems(nb, lab=True) == []


@pytest.mark.parametrize("path", sorted(p.name for p in T.NOTEBOOKS.glob("[0-9]*.ipynb")
                                        if p.stem not in T.COURSE))
def test_reading_notebook_answers_are_not_given_away(path):
    assert problems(nbformat.read(T.NOTEBOOKS / path, as_version=4), lab=False) == []


def _nb(*cells):
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(c[5:]) if c.startswith("code:") else nbformat.v4.new_markdown_cell(c)
        for c in cells])


def test_the_checker_finds_what_it_claims():
    good = _nb("## Part\n\n> **Predict.** How far below 1 will it go?", "code:print(0.361)",
               "<details><summary><b>Answer</b></summary>0.361, because …<!-- key: 0.361 --></details>\n\n"
               "> **Reason.** Why?\n\n<details><summary><b>Answer</b></summary>Parseval. <!-- key: Parseval -->"
               "</details>\n\n> **Estimate.** How many?\n\n<details><summary>Answer</summary>"
               "<!-- key: 10.36 --></details>",
               "## Try this\n\n1. Double m.\n\n<details><summary>Expected</summary>lower</details>")
    assert problems(good, lab=True) == []
    # the key printed above its question; a question without keyed answer; a Try-this item without fold
    bad = _nb("## Part\n\nThe error is 0.361 here.\n\n> **Predict.** How far below 1?",
              "<details><summary>Answer</summary><!-- key: 0.361 --></details>",
              "> **Reason.** Why?\n\n<details><summary>Answer</summary>no key</details>",
              "## Try this\n\n1. One.\n2. Two.\n\n<details><summary>Expected</summary>x</details>")
    assert sorted(problems(bad, lab=True)) == [  # these four, each once, and nothing else
        "2 reasoning question(s) in the lab sections, at least 3 wanted",
        "cell 0: '> **Predict.** How far below 1?': its key '0.361' already appears above the question",
        "cell 2: '> **Reason.** Why?' has no folded answer with <!-- key: … --> before the next",
        "section 'Try this': 2 tasks but 1 folds",
    ]
    # printed outputs count as "before", and 0.36 is not 0.361
    out = _nb("code:print('x')", "> **Predict.** Value?\n\n<details><summary>A</summary><!-- key: 0.36 --></details>")
    out.cells[0].outputs = [nbformat.v4.new_output("stream", text="0.361 and 10.36\n")]
    assert problems(out, lab=False) == []
    out.cells[0].outputs = [nbformat.v4.new_output("stream", text="error 0.36.\n")]
    assert problems(out, lab=False) == [
        "cell 1: '> **Predict.** Value?': its key '0.36' already appears above the question"]
