"""Notebook 05's rerun button (:class:`resnetlearn.classroom.rerun.FigureRerun`) shows the user's run beside the shipped
one: the user's tables in ``my-results/SCALE`` (where ``python -m resnetlearn reproduce`` writes by default),
written there by the command line or by the button itself, next to the shipped ``results/SCALE``, each
labelled ("your run", "shipped") with the folder it came from. Tiny scale, in a temporary folder laid out as
a clone: ``results/tiny`` (the shipped tables) and ``my-results/tiny`` (the user's)."""

import pytest

from resnetlearn import __main__ as cli
from resnetlearn.classroom.rerun import FigureRerun
from resnetlearn.reproduce.figure_tables import error_table
from resnetlearn.reproduce.store import PACKAGE_ROOT
from resnetlearn.reproduce.table_reading import load_figure


@pytest.fixture
def clone(tmp_path, monkeypatch):
    """A folder with shipped tiny results of fig2a (selected on validation samples, so that they differ from
    the user's test-selected run) and the current directory in it, as a user who runs the command line."""
    argv = ["reproduce", "fig2a", "--scale", "tiny", "--device", "cpu"]
    assert cli.main(argv + ["--select", "val", "--out", str(tmp_path / "results" / "tiny")]) == 0
    monkeypatch.chdir(tmp_path)
    return tmp_path


def button(clone):
    return FigureRerun("fig2a", "tiny", out=clone / "results" / "live" / "store", device="cpu")


def test_the_button_shows_a_command_line_run_beside_the_shipped_one(clone):
    shipped = load_figure("fig2a", clone / "results" / "tiny")
    before = button(clone)
    assert before.mine == clone / "my-results" / "tiny" and before.shipped == clone / "results" / "tiny"
    text = before.comparison()
    assert f"your run: fig2a at tiny scale\nnone in {before.mine} (press the button, or run: python -m " \
           f"resnetlearn reproduce fig2a --scale tiny --out {before.mine})" in text
    assert "shipped: fig2a at tiny scale, " in text and f"read from {before.shipped}\n{shipped.summary}\n" \
           f"{error_table(shipped)}" in text
    # the user runs the command line with its default output (./my-results/tiny)
    assert cli.main(["reproduce", "fig2a", "--scale", "tiny", "--device", "cpu"]) == 0
    mine = load_figure("fig2a", clone / "my-results" / "tiny")
    after = button(clone)
    text = after.comparison()
    ours, theirs = text.split("\n\nshipped: ")
    assert ours.startswith("your run: fig2a at tiny scale, ") and f"read from {after.mine}\n" in ours
    assert ours.endswith(f"{mine.summary}\n{error_table(mine)}")
    assert theirs.endswith(f"read from {after.shipped}\n{shipped.summary}\n{error_table(shipped)}")
    html = after.compare.value  # the widget shows both, labelled, with their folders
    assert html.index("your run: fig2a") < html.index("shipped: fig2a")
    assert str(after.mine) in html and str(after.shipped) in html
    png, static = after.static_picture()  # readers without a kernel see the same comparison
    assert png[:4] == b"\x89PNG" and "The picture: your run." in static and text in static
    # each side is read from its own folder: without the shipped tables, the user's run stays
    for f in (clone / "results" / "tiny").glob("fig2a*"):
        f.unlink()
    ours, theirs = button(clone).comparison().split("\n\nshipped: ")
    assert ours.endswith(f"{mine.summary}\n{error_table(mine)}")
    assert theirs.startswith(f"fig2a at tiny scale\nnone in {after.shipped} (no results for 'fig2a'")


def test_a_press_writes_the_users_run_where_the_command_line_would_and_shows_it(clone):
    r = button(clone)
    r.button.click()
    assert r.wait(300) and r.result is not None
    assert f"written to {r.mine}" in r.job.status_text and r.image.value[:4] == b"\x89PNG"
    mine = load_figure("fig2a", r.mine)  # complete, checksummed tables, as the command line writes them
    assert error_table(mine) == error_table(r.result) and mine.provenance["scale"] == "tiny"
    assert "FigureRerun('fig2a', 'tiny')" in mine.provenance["command"]
    text = r.comparison()
    assert "your run: fig2a at tiny scale, " in text and f"this button's run, written to {r.mine}" in text
    assert "your run" in r.compare.value and "this button&#x27;s run" in r.compare.value
    assert f"read from {r.shipped}" in text
    # the user's folder is never the shipped one
    with pytest.raises(ValueError, match="lies in the shipped results"):
        FigureRerun("fig2a", "tiny", out=clone / "store", mine=PACKAGE_ROOT / "results" / "tiny")
