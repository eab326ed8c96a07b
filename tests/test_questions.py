"""Questions that make students think, and answers kept out of sight until the student asks.

Every core notebook (the lab and the notebooks read before and after it) is checked. A reasoning question is a
Markdown line ``> **Predict.** …`` (or Reason, Estimate, Spot the false claim). Its
answer sits in the first ``<details>`` fold after it that names the answer's key numbers or words in a comment
``<!-- key: 0.361 | 7.27 -->``. The checks: every lab notebook asks at least three such questions in its lab
sections; every question has a keyed answer before the next question; no key appears in any cell before the
question (sources and printed outputs) nor in the question itself (a claim's label such as ② or (c) excepted),
so the answer is neither printed nor stated above it; every "Try this" item and every "Explore" section has a
fold with its expected outcome.

In every notebook, an output that a student would see before opening an answer is collapsed
(``jupyter.outputs_hidden``): every code cell with outputs between a question, or a numbered item of a
"Try this" or "Check your understanding" section, and its answer fold. Test markers for nbval are cell tags,
never ``# NBVAL_…`` comments in the code students read.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from course import notebook_timings as T

ROOT = Path(__file__).resolve().parents[1]

MIN_QUESTIONS = 3
_QUESTION = re.compile(r"^>\s*\*\*(?:" + "|".join(T.QUESTION_KINDS) + r")\b[^*]*\*\*", re.MULTILINE)
_KEY = re.compile(r"<!--\s*key:(.*?)-->", re.DOTALL)
_FOLD = re.compile(r"<details\b.*?</details\s*>", re.IGNORECASE | re.DOTALL)
_HEADING = re.compile(r"^##(?!#)\s*(.*)$", re.MULTILINE)
_ITEM = re.compile(r"^\d+\.\s", re.MULTILINE)
_LABEL = re.compile(r"^(?:\(?[A-Za-z]\)|[\u2460-\u2473])$")   # (c), c), ① … ⑳
_NBVAL_COMMENT = re.compile(r"^\s*#\s*(?:NBVAL|PYTEST_VALIDATE)_", re.MULTILINE)


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


def _events(nb) -> list[tuple]:
    """(cell index, position, kind, payload) in reading order: headings, folds, questions and homework items."""
    events, section = [], "(opening)"
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        src = cell.source
        visible = _FOLD.sub(lambda m: " " * len(m.group(0)), src)
        here = [(m.start(), "heading", m.group(1)) for m in _HEADING.finditer(src)]
        here += [(m.start(), "fold", m.group(0)) for m in _FOLD.finditer(src)]
        here += [(m.start(), "question", src[m.start():(src.find("\n\n", m.start()) + 1 or len(src) + 1) - 1])
                 for m in _QUESTION.finditer(visible)]
        here += [(m.start(), "item", None) for m in _ITEM.finditer(visible)]
        for pos, kind, payload in sorted(here, key=lambda e: e[0]):
            if kind == "heading":
                section = payload
            if kind == "item":
                if not section.lower().startswith(T.HOMEWORK):
                    continue
                payload = src[pos:src.find("\n", pos) % (len(src) + 1)]
            events.append((i, pos, kind, payload))
    return events


def questions(nb) -> list[dict]:
    """Every question of a notebook: its kind line, text, section, keys, the cell of its keyed answer fold,
    and the text of everything before it."""
    found, section = [], "(opening)"
    for i, pos, kind, payload in _events(nb):
        if kind == "heading":
            section = payload
        elif kind == "question":
            # the time line is written by course/notebook_timings.py: its minutes are no answers
            earlier = [T._TIME_BLOCK.sub(" ", c.source) + "\n" + _output_text(c) for c in nb.cells[:i]]
            before = "\n".join(earlier) + "\n" + nb.cells[i].source[:pos]
            found.append({"cell": i, "line": payload.strip().splitlines()[0][:90], "text": payload,
                          "section": section, "keys": None, "fold_cell": None, "before": before})
        elif kind == "fold" and found and found[-1]["keys"] is None:
            keys = _KEY.search(payload)
            if keys:
                found[-1]["keys"] = [k.strip() for k in keys.group(1).split("|") if k.strip()]
                found[-1]["fold_cell"] = i
    return found


def uncollapsed(nb) -> list[str]:
    """Outputs a student sees between a question (or a homework item) and its answer fold, uncollapsed."""
    out, asked = [], None
    for i, _, kind, payload in _events(nb):
        if kind in ("question", "item"):
            asked = (i, payload.strip().splitlines()[0][:60])
        elif kind == "fold" and asked is not None:
            q, line = asked
            for j in range(q + 1, i):
                c = nb.cells[j]
                if c.cell_type == "code" and c.outputs and not c.metadata.get("jupyter", {}).get("outputs_hidden"):
                    out.append(f"cell {j}: output below {line!r} (cell {q}), above its answer (cell {i}), "
                               "is not collapsed")
            asked = None
    return out


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
            elif not _LABEL.match(k) and _mentions(q["text"], k):
                out.append(f"cell {q['cell']}: {q['line']!r}: its key {k!r} appears in the question itself")
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


EVERY_NOTEBOOK = sorted(p.name for p in T.NOTEBOOKS.glob("*.ipynb"))


@pytest.mark.parametrize("path", EVERY_NOTEBOOK)
def test_outputs_above_an_answer_are_collapsed(path):
    assert uncollapsed(nbformat.read(T.NOTEBOOKS / path, as_version=4)) == []


@pytest.mark.parametrize("path", EVERY_NOTEBOOK)
def test_code_cells_carry_no_test_markers(path):
    nb = nbformat.read(T.NOTEBOOKS / path, as_version=4)
    assert [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and _NBVAL_COMMENT.search(c.source)] == []


@pytest.mark.parametrize("path", EVERY_NOTEBOOK)
def test_test_marker_tags_are_ones_nbval_reads(path):
    nbval = pytest.importorskip("nbval.plugin", reason="nbval is not installed")
    nb = nbformat.read(T.NOTEBOOKS / path, as_version=4)
    tags = {t for c in nb.cells for t in c.metadata.get("tags", []) if "nbval" in t.lower()}
    assert tags <= set(nbval.metadata_tags)


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


def test_the_collapse_checker_finds_what_it_claims():
    nb = _nb("## Part\n\n> **Predict.** Value?", "code:print(1)", "code:x = 1", "code:print(2)",
             "<details><summary>A</summary><!-- key: 2 --></details>\n\n## Try this\n\n1. Run it.",
             "code:print(3)", "<details><summary>Expected</summary>3</details>", "code:print(4)")
    for j in (1, 3, 5, 7):
        nb.cells[j].outputs = [nbformat.v4.new_output("stream", text=f"{j}\n")]
    assert uncollapsed(nb) == [  # cell 7 comes after the last answer: not checked
        "cell 1: output below '> **Predict.** Value?' (cell 0), above its answer (cell 4), is not collapsed",
        "cell 3: output below '> **Predict.** Value?' (cell 0), above its answer (cell 4), is not collapsed",
        "cell 5: output below '1. Run it.' (cell 4), above its answer (cell 6), is not collapsed"]
    for j in (1, 3, 5):
        nb.cells[j].metadata["jupyter"] = {"outputs_hidden": True}
    assert uncollapsed(nb) == []
    # a numbered list outside the homework sections is not a question
    listed = _nb("## Part\n\n1. First.", "code:print(1)", "<details>x</details>")
    listed.cells[1].outputs = [nbformat.v4.new_output("stream", text="1\n")]
    assert uncollapsed(listed) == []


def test_a_key_in_its_own_question_is_found_but_a_claim_label_is_not():
    nb = _nb("## Part\n\n> **Predict.** Is it 0.5 or 0.7?\n\n<details><summary>A</summary><!-- key: 0.7 -->"
             "</details>\n\n> **Spot the false claim.** (a) x. (b) y.\n\n<details><summary>A</summary>"
             "<!-- key: (b) --></details>")
    assert problems(nb, lab=False) == [
        "cell 0: '> **Predict.** Is it 0.5 or 0.7?': its key '0.7' appears in the question itself"]
