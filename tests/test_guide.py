"""The instructor guide quotes course/notebook_timings.py and cannot drift from the notebooks:
the words and exercises are recounted here (no execution), the run times come from the committed JSON keyed by
each code cell's source, and the guide's marked tables and the committed report must equal what the script
writes now. The lab path must fit 105 model minutes (of the 120 a lab has) and the lecture 50; the rates are the
least-squares fit to the committed cold reads."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from course import notebook_timings as T

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def measured():
    return json.loads(T.JSON_FILE.read_text())


@pytest.fixture(scope="module")
def est(measured):
    return T.all_estimates(measured)


def test_every_code_cell_has_a_measured_run_time(est):
    unmeasured = {n: [s["title"] for s in e["sections"] if s["run_min"] is None] for n, e in est.items()}
    assert not {n: v for n, v in unmeasured.items() if v}, \
        "code changed since the last measurement: python course/notebook_timings.py --run NAME"


def test_guide_and_report_quote_the_script(est, measured):
    guide = T.GUIDE.read_text()
    assert guide == T.fill_guide(guide, T.guide_blocks(est)), \
        "notebooks/README.md's tables differ from the notebooks: run python course/notebook_timings.py"
    assert T.REPORT.read_text() == T.render_report(est, measured) + "\n"


def test_readme_and_docs_quote_the_measured_run_times(est, measured):
    """A notebook's run time in the README or docs/ is the one its own time line states, from the one
    measurement file; a quoted time outside the markers would drift, so every page quoting one has markers."""
    pages = T.run_time_pages()
    quoted = [p for p in pages if "notebook_timings:run:" in p.read_text(encoding="utf-8")]
    assert quoted, "no page quotes a notebook's run time between markers"
    for p in quoted:
        text = p.read_text(encoding="utf-8")
        assert text == T.fill_run_times(text, est, p.name, measured.get("widget_run_s")), \
            f"{p.name}: run python course/notebook_timings.py"
    assert T.run_seconds(est["00_welcome"]) in (T.ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    race = f"{measured['widget_run_s']['LiveRace']:.0f} s"
    assert f"run:LiveRace:begin -->{race}<" in (T.ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="no notebook or widget 'nope'"):
        T.fill_run_times("<!-- notebook_timings:run:nope:begin -->1 s<!-- notebook_timings:run:nope:end -->", est)


def test_lab_and_lecture_fit_their_time(est):
    t = T.totals(est)
    assert t["lab_min"] <= T.LAB_TARGET == 105 and T.LAB_LIMIT == 120
    assert t["lecture_min"] <= T.LECTURE_LIMIT == 50
    # the primer is read before the lab, whose race (03) uses its kernels
    assert "03b_kernel_primer" in T.PRE_LAB and list(T.LAB) == ["03_hierarchical_learning", "04_kernel_failure"]
    assert not [n for n in T.LAB if n.startswith("05") or n.endswith("_deep_dive")]


def test_model_is_calibrated_on_the_cold_reads():
    """The rates are the least-squares fit to every committed read, rounded: the fit is recomputed here from the
    committed rows by the normal equations, every notebook of every read is a row, and the course is covered."""
    import numpy as np

    reads = T.cold_reads()
    everyone = T.all_reads(reads)
    assert len(everyone) >= 4 and len({r["background"] for r in reads["readers"]}) == len(reads["readers"])
    rows = reads["calibration"]["rows"]
    assert {(r["id"], n) for r in everyone for n in r["minutes"]} | \
        {(r["id"], "lab in class") for r in everyone if "lab_in_class_minutes" in r} == \
        {(row["read"], row["notebook"]) for row in rows}
    assert set(T.COURSE) <= {row["notebook"] for row in rows}
    a = np.array([[row["words"], row["questions"], row["tasks"]] for row in rows], dtype=float)
    b = np.array([row["minutes"] - row["fixed_min"] for row in rows], dtype=float)
    per_word, per_question, per_task = np.linalg.solve(a.T @ a, a.T @ b)
    fit = reads["calibration"]["fit"]
    assert fit["words_per_minute"] == pytest.approx(1 / per_word, abs=0.01)
    assert (fit["question_min"], fit["task_min"]) == pytest.approx((per_question, per_task), abs=0.01)
    assert T.WORDS_PER_MINUTE == round(1 / per_word)
    assert T.MINUTES["question"] == T.MINUTES["self-check"] == round(per_question)
    assert T.MINUTES["homework"] == T.MINUTES["try"] == round(per_task)
    # a homework read's row counts its homework sections, a lab-only read's does not
    hw = {row["notebook"]: row for row in rows if row["read"] == "physics-phd"}
    lab_only = {row["notebook"]: row for row in rows if row["read"] == "math-undergrad"}
    assert hw["04_kernel_failure"]["tasks"] > 0 and lab_only["04_kernel_failure"]["tasks"] == 0


def test_read_counts_by_hand(tmp_path):
    nb = _nb("## Lab\n\n" + "word " * 10 + "\n\n> **Predict.** Which?\n\n$$x$$", "code:a = 1",
             "## After the lab: more\n\nsix words here and there\n\n> **Reason.** Why?",
             "## Check your understanding\n\n1. One?\n2. Two?", "code:answer = None")
    path = tmp_path / "99_small.ipynb"
    nbformat.write(nb, path)
    st = T.notebook_stats(path)
    seconds = {st["sections"][0]["cells"][0]: 30.0}
    # lab only: "Lab" + 10 words + "**Predict.**" + "Which?" = 13 words, 1 question, 1 formula + 30 s
    assert T.read_counts(st, seconds, with_homework=False) == {"words": 13, "questions": 1, "tasks": 0,
                                                                "fixed_min": 1.5}
    # with homework: the after-the-lab section's question counts as a question, the numbered items as tasks
    # (the self-check is item 1, not a second exercise)
    c = T.read_counts(st, seconds, with_homework=True)
    assert (c["questions"], c["tasks"]) == (2, 2)


def test_guide_speaks_about_the_lessons_not_their_history():
    text = T.GUIDE.read_text().lower()
    for phrase in ("earlier version", "old version", "being regenerated", "previous version"):
        assert phrase not in text


def test_prose_words_by_hand():
    # Hello, *world*, formula, and, [link], bold = 6 tokens; '|' and '---' hold no letter; a display is no word
    text = "Hello *world* | --- | $x^2 + y$ and $$a+b$$ [link](http://x.y) <b>bold</b>"
    assert T.prose_words(text) == 6 and T.display_formulas(text) == 1
    assert T.display_formulas("$$a$$ then\n$$\nb\n$$ and $c$") == 2
    assert T.markdown_tables("| a | b |\n|---|---|\n| 1 | 2 |\n\ntext\n\n| x |\n|:---:|\n") == 2
    assert T.markdown_tables("a --- b, and a rule:\n\n---\n") == 0
    assert T.figures([{"data": {"image/png": "..", "text/plain": "<Figure>"}}, {"text": "printed"},
                      {"data": {"application/vnd.plotly.v1+json": {}}}, {"data": {"text/plain": "x"}}]) == 2
    assert T.prose_words("") == 0
    assert T.prose_words("- 1. α β") == 3


def _nb(*cells):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c[5:]) if c.startswith("code:")
                                           else nbformat.v4.new_markdown_cell(c) for c in cells])


def test_sections_and_exercises_on_a_small_notebook(tmp_path):
    nb = _nb("# Title\n\nintro words here",
             "## First (3 min)\n\n> **Predict.** Will it? \n\n> **Spot the false claim.** Which one?\n\n"
             "### a subsection\n\n```\n## not a heading\n```",
             "code:x = 1",
             "<details><summary>Answer</summary>four folded words here</details>\n\n## Explore: sliders\n\n"
             "> **Predict → run → explain.** 1. one. 2. two. 3. three.",
             "code:answer = None   # replace\ncheck.thing(answer)",
             "## Check your understanding\n\n1. Why?\n\n<details><summary>Answer</summary>Because.</details>"
             "\n\n2. How?",
             "## Try this (lab)\n\n1. Do it.\n2. Again.")
    path = tmp_path / "99_small.ipynb"
    nbformat.write(nb, path)
    st = T.notebook_stats(path)
    assert [s["title"] for s in st["sections"]] == ["(opening)", "First (3 min)", "Explore: sliders",
                                                     "Check your understanding", "Try this (lab)"]
    first, explore, check, try_ = st["sections"][1:]
    assert first["stated_min"] == 3 and first["exercises"] == {"question": 2} and len(first["cells"]) == 1
    assert explore["exercises"] == {"question": 3, "self-check": 1, "explore": 1}
    assert check["exercises"] == {"homework": 2} and try_["exercises"] == {"try": 2}
    # "Answer four folded words here" belongs to the First section, where the block stands
    assert first["folded_words"] == 5


def test_estimate_by_hand(tmp_path):
    nb = _nb("## Run\n\n" + "word " * 97 + "\n\n> **Predict.** Which?\n\n$$x = 1$$\n\n$$y = 2$$",
             "code:a = 1", "code:b = 2",
             "## Live\n\n> **Predict.** 1. first. 2. second.", "code:w = LiveTrainer(cfg)",
             "## Try this\n\n" + "word " * 96 + "\n\n1. x\n\n| a |\n|---|\n| 1 |")
    path = tmp_path / "99_small.ipynb"
    nbformat.write(nb, path)
    st = T.notebook_stats(path)
    h = [c for s in st["sections"] for c in s["cells"]]
    measured = {"notebooks": {"99_small": {"cells": dict(zip(h, [30.0, 30.0, 6.0])), "kernel_s": 12.0}},
                "widget_run_s": {"LiveTrainer": 27.0, "LiveRace": 9.0}}
    e = T.estimate(st, measured)
    run, live, hw = e["sections"]
    # rates: 124 words a minute, 1 min per displayed formula, 2 per table, 10 per question, 4 per Try-this task
    assert (T.WORDS_PER_MINUTE, T.DISPLAY_MATH_MIN, T.TABLE_MIN, T.MINUTES["question"], T.MINUTES["try"]) == \
        (124, 1.0, 2.0, 10, 4)
    # 97 words + "Run", "**Predict.**", "Which?" = 100 words: 100/124 min, two displayed formulas: 2 min;
    # one question: 10 min; 60 s of cells: 1 min
    assert run["reading_min"] == pytest.approx(100 / 124 + 2) and run["exercise_min"] == 10 and run["run_min"] == 1.0
    assert run["estimate_min"] == pytest.approx(100 / 124 + 2 + 10 + 1)
    # two questions with the widget: 20 min, and 6 s + 2 runs of the slower widget (27 s) = 60 s
    assert live["exercise_min"] == 20 and live["run_min"] == 1.0
    # homework: 96 words + "Try", "this", "1.", "x" and the table's "a", "1" = 102 words, one table: 2 min,
    # one task: 4 min; not in the estimate
    assert hw["homework"] and hw["homework_min"] == pytest.approx(102 / 124 + 2 + 4) and hw["estimate_min"] == 0.0
    assert e["homework_min"] == pytest.approx(102 / 124 + 6) and e["run_min"] == pytest.approx(2.0 + 12.0 / 60)
    assert e["estimate_min"] == pytest.approx(e["reading_min"] + e["exercise_min"] + e["run_min"])
    # an edited cell has no time: the estimate says so instead of guessing
    del measured["notebooks"]["99_small"]["cells"][h[0]]
    assert T.estimate(T.notebook_stats(path), measured)["estimate_min"] is None


def test_missing_markers_and_sections_raise():
    with pytest.raises(ValueError, match="notebook_timings:lab:begin"):
        T.fill_guide("no markers here", {"lab": "x"})
    with pytest.raises(ValueError, match="LECTURE: 00_welcome has no section starting 'Nowhere'"):
        T._find_section({"00_welcome": {"sections": [{"title": "The concept class"}]}}, "00_welcome", "Nowhere")


def test_every_notebook_opens_with_the_scripts_time_line(est):
    """A notebook's own time line and section minutes are written by the script: a stale one fails here."""
    for path in sorted(T.NOTEBOOKS.glob("[0-9]*.ipynb")):
        raw = path.read_text(encoding="utf-8")
        assert T.fill_notebook(raw, est[path.stem]) == raw, f"{path.name}: run python course/notebook_timings.py"
        assert T.time_line(est[path.stem]) in raw.replace('\\"', '"')


def test_time_line_by_hand():
    e = {"name": "x", "role": "lab", "estimate_min": 12.4, "reading_min": 4.6, "exercise_min": 7.0, "run_min": 0.5,
         "homework_min": 0.4}
    assert T.time_line(e) == ("About 12 minutes in the lab by our rule: reading 5 (124 words a minute with folded "
                              "answers, plus formulas, tables and figures), exercises 7, running the cells 30 s on a "
                              "2-core CPU (computed from this notebook by `course/notebook_timings.py`).")
    e.update(role="reading", homework_min=1.2)
    assert "of reading and exercises" in T.time_line(e) and "add about 1 minute as homework" in T.time_line(e)
    # the homework is named by the sections the notebook has, and only those
    e["sections"] = [{"title": "Check your understanding", "homework": True},
                     {"title": "After the lab: more", "homework": True}]
    assert ("; the sections after the lab and the questions to check your understanding add about 1 minute as "
            "homework") in T.time_line(e) and "Try-this" not in T.time_line(e)


def test_fill_notebook_sets_time_line_and_heading_minutes():
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# T\n", f"{T.TIME_BEGIN}old{T.TIME_END}"]},
                    {"cell_type": "markdown", "metadata": {}, "source": ["## Part A (9 min)\n", "words here"]},
                    {"cell_type": "markdown", "metadata": {}, "source": ["## Check your understanding (1 min)"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    e = {"name": "x", "role": "lab", "estimate_min": 3.0, "reading_min": 1.0, "exercise_min": 2.0, "run_min": 0.0,
         "homework_min": 6.0, "sections": [
             {"title": "Part A (9 min)", "homework": False, "estimate_min": 2.4, "homework_min": 0.0},
             {"title": "Check your understanding (1 min)", "homework": True, "estimate_min": 0.0, "homework_min": 6.0}]}
    out = json.loads(T.fill_notebook(json.dumps(nb), e))
    assert "".join(out["cells"][1]["source"]).startswith("## Part A (2 min)\n")
    assert "".join(out["cells"][2]["source"]) == "## Check your understanding (6 min)"
    assert T.time_line(e) in "".join(out["cells"][0]["source"])
    nb["cells"][0]["source"] = ["# no markers"]
    with pytest.raises(ValueError, match="needs one"):
        T.fill_notebook(json.dumps(nb), e)
