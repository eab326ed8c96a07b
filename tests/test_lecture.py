"""The lecture deck as a file: every cell a slide part the slideshow shows, speaker notes with minutes that fit the
hour, verdicts read from the results files, the working copy never overwritten, the one-page plan up to date."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from course import lecture_plan
from resnetlearn.classroom import lecture as L

ROOT = Path(__file__).resolve().parents[1]
DECK = ROOT / "notebooks" / "lecture.ipynb"
# jupyterlab-slideshow 0.3.4 shows a cell of type "-" on no slide at all: every cell names its part
SHOWN_TYPES = {"slide", "subslide", "fragment", "notes", "skip"}


@pytest.fixture(scope="module")
def deck():
    return nbformat.read(DECK, as_version=4)


def test_every_cell_has_a_slide_type_the_slideshow_shows(deck):
    nbformat.validate(deck)
    kinds = [c.metadata.get("slideshow", {}).get("slide_type") for c in deck.cells]
    assert all(k in SHOWN_TYPES for k in kinds), [(i, k) for i, k in enumerate(kinds) if k not in SHOWN_TYPES]
    assert kinds[0] == "slide"


def test_every_slide_has_notes_with_minutes_and_the_hour_fits(deck):
    plan = lecture_plan
    slides = plan.slides(DECK)
    n_slides = sum(c.metadata["slideshow"]["slide_type"] == "slide" for c in deck.cells)
    assert len(slides) == n_slides
    # recount the minutes from the cells themselves, not through the plan's parser
    minutes = [float(re.match(r"\*\*(\d+(?:\.\d+)?) min\*\*", c.source).group(1)) for c in deck.cells
               if c.metadata["slideshow"]["slide_type"] == "notes"]
    assert len(minutes) == n_slides and sum(minutes) <= 50
    assert [s["minutes"] for s in slides] == minutes


def test_test_markers_are_tags_not_comments(deck):
    for c in deck.cells:
        if c.cell_type == "code":
            assert "NBVAL" not in c.source, c.source.splitlines()[0]
    tagged = [c for c in deck.cells if "nbval-ignore-output" in c.metadata.get("tags", [])]
    assert any("LiveRace" in c.source for c in tagged), "the race's output (a widget) must be ignored by nbval"


def test_the_race_is_on_a_slide_and_the_key_figures_are_shown(deck):
    code = "\n".join(c.source for c in deck.cells if c.cell_type == "code")
    assert "LiveRace(" in code
    for name in ("fig2a", "fig2b", "fig3", "thm3", "fig4"):
        assert f'"{name}"' in code, name


def test_printed_verdicts_are_those_of_the_results_files(deck):
    """Each verdict the deck printed is the shipped results file's (read here directly): its findings in full for
    Figure 2, and for every figure its final verdict."""
    printed = " ".join("".join(o.get("text", "") for c in deck.cells if c.cell_type == "code" for o in c.outputs
                               if o.output_type == "stream").split())
    for name in ("fig2a", "fig2b", "fig3", "thm3", "fig4"):
        text = " ".join((ROOT / "results" / "cpu" / f"{name}.txt").read_text(encoding="utf-8").split())
        label = text.rsplit("->", 1)[1].strip()  # the label derived from the figure's parts
        assert f"results/cpu/{name}.txt: " in printed and label in printed, name


def test_the_plan_and_the_guide_tables_are_up_to_date():
    plan = lecture_plan
    assert (ROOT / "notebooks" / "lecture_plan.md").read_text(encoding="utf-8") == plan.plan()
    assert (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8") == plan.guide_text()


def test_notes_without_minutes_are_refused(tmp_path):
    plan = lecture_plan
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A", metadata={"slideshow": {
        "slide_type": "slide"}}), nbformat.v4.new_markdown_cell("say it", metadata={"slideshow": {
            "slide_type": "notes"}})])
    path = tmp_path / "d.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(ValueError, match="do not open with"):
        plan.slides(path)


def test_the_working_copy_is_made_once_and_never_overwritten(tmp_path):
    folder = tmp_path / "lecture"
    copy, made = L.prepare(folder)
    assert made and copy.read_bytes() == DECK.read_bytes()
    copy.write_text("my edits", encoding="utf-8")
    again, made = L.prepare(folder)
    assert again == copy and not made and copy.read_text(encoding="utf-8") == "my edits"
    settings = json.loads((folder / ".jupyter" / "settings" / "jupyterlab-slideshow" /
                           "plugin.jupyterlab-settings").read_text(encoding="utf-8"))
    assert settings == {"active": True, "showCodeCellPrompt": True}


def test_jupyterlab_gets_the_lectures_own_settings_and_workspaces(tmp_path):
    args = L.lab_arguments(tmp_path)
    joined = " ".join(args)
    assert f"--LabApp.user_settings_dir={tmp_path.resolve() / '.jupyter' / 'settings'}" in args
    assert f"--LabApp.workspaces_dir={tmp_path.resolve() / '.jupyter' / 'workspaces'}" in args
    assert "--LabApp.default_url=/lab/tree/lecture.ipynb" in joined


def test_a_missing_deck_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.ipynb"):
        L.prepare(tmp_path / "x", deck=tmp_path / "nowhere.ipynb")
