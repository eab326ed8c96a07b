"""A user's notebook copies are never overwritten: the student copies (``make student``) and the working copies
``make lab`` opens (``work/``) are written only where missing; ``--fresh`` writes them anew and moves the user's
to ``OUT/.old/<time>/`` first. The working copies run from their folder (the notebooks' relative paths), and
``make lab``'s copying twice leaves a clone's ``git status`` clean."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from repo_copy import tracked_copy
from test_student import _fake_venv

from resnetlearn.classroom import copies as C
from resnetlearn.classroom import student as S

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
EXECUTED = ("05_reproducing_the_paper.ipynb", "05_reproducing_the_paper_deep_dive.ipynb")
"""Notebooks executed from a working-copy folder: they open the shipped results by relative paths, and take about
9 s together on a 2-core CPU (course/results/notebook_timings_cpu.json)."""


def _command(module: str, *args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def _edit(path: Path, text: str) -> None:
    """What a student does: write an answer into the first code cell and save."""
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code")
    cell.source += f"\n{text}"
    nbformat.write(nb, path)


def test_a_second_run_of_the_student_command_keeps_a_students_edit(tmp_path):
    out = tmp_path / "student"
    first = _command("resnetlearn.classroom.student", "--out", str(out))
    assert first.returncode == 0, first.stderr
    assert re.search(r"^wrote +00_welcome\.ipynb \(\d+ answers removed\)$", first.stdout, re.M), first.stdout
    mine = out / "00_welcome.ipynb"
    _edit(mine, "answer = 12400  # my answer")
    edited = mine.read_bytes()
    second = _command("resnetlearn.classroom.student", "--out", str(out))
    assert second.returncode == 0, second.stderr
    assert mine.read_bytes() == edited  # kept, byte for byte
    assert re.search(r"^kept yours +00_welcome\.ipynb \(it differs from a fresh copy", second.stdout, re.M)
    assert re.search(r"^unchanged +01_concept_class\.ipynb$", second.stdout, re.M)
    assert "0 written, 1 of yours kept" in second.stdout and "make fresh-student" in second.stdout
    # a deleted copy is written again, the others stay
    (out / "02_complexity.ipynb").unlink()
    third = _command("resnetlearn.classroom.student", "--out", str(out))
    assert re.search(r"^wrote +02_complexity\.ipynb", third.stdout, re.M) and mine.read_bytes() == edited
    # --fresh: a fresh copy, the student's moved aside, never deleted
    fresh = _command("resnetlearn.classroom.student", "--out", str(out), "--fresh")
    assert fresh.returncode == 0, fresh.stderr
    old = list((out / ".old").glob("*/00_welcome.ipynb"))
    assert len(old) == 1 and old[0].read_bytes() == edited
    assert f"(yours moved to {old[0]})" in fresh.stdout
    data, _ = S.student_copy(NOTEBOOKS / "00_welcome.ipynb")
    assert mine.read_bytes() == data  # the fresh copy is the student copy of the shipped notebook
    assert len(list((out / ".old").rglob("*.ipynb"))) == 1  # only the copy that differed was moved


def test_working_copies_are_the_full_notebooks_and_are_kept(tmp_path):
    out = tmp_path / "work"
    done = C.write_copies(NOTEBOOKS, out)
    shipped = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert [c.name for c in done] == shipped and {c.action for c in done} == {"wrote"}
    for name in shipped:  # outputs and folded answers kept: the files themselves
        assert (out / name).read_bytes() == (NOTEBOOKS / name).read_bytes()
    _edit(out / shipped[0], "x = 1  # mine")
    edited = (out / shipped[0]).read_bytes()
    (out / "my_notes.ipynb").write_text("{}")  # a notebook of the user's own: never touched
    again = C.write_copies(NOTEBOOKS, out)
    assert [c.action for c in again] == ["kept"] + ["same"] * (len(shipped) - 1)
    assert (out / shipped[0]).read_bytes() == edited and (out / "my_notes.ipynb").read_text() == "{}"
    fresh = C.write_copies(NOTEBOOKS, out, fresh=True)
    assert fresh[0].action == "fresh" and fresh[0].moved_to.read_bytes() == edited
    assert fresh[0].moved_to.parent.parent == out / C.OLD
    assert (out / shipped[0]).read_bytes() == (NOTEBOOKS / shipped[0]).read_bytes()
    # a second --fresh in the same second does not overwrite what the first moved aside
    _edit(out / shipped[0], "y = 2  # mine again")
    second = C.write_copies(NOTEBOOKS, out, fresh=True)
    assert second[0].moved_to != fresh[0].moved_to and fresh[0].moved_to.read_bytes() == edited


def test_bad_folders_are_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match="src: no notebooks"):
        C.write_copies(tmp_path, tmp_path / "out")
    with pytest.raises(ValueError, match="out: must differ from src"):
        C.write_copies(NOTEBOOKS, NOTEBOOKS)
    (tmp_path / "file").write_text("x")
    done = _command("resnetlearn.classroom.copies", "--out", str(tmp_path / "file" / "work"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"error: out: {tmp_path / 'file'} (in {tmp_path / 'file' / 'work'}) is a file, not a folder" in done.stderr
    assert not (tmp_path / "out").exists()


def _relative_paths(nb) -> set[str]:
    """Every string literal of a code cell that starts with ../ (the notebooks' relative paths), an f-string's
    braces cut off at the last folder before them."""
    found = set()
    for cell in nb.cells:
        if cell.cell_type == "code":
            for lit in re.findall(r"""f?["'](\.\./[^"']*)["']""", cell.source):
                found.add(lit.split("{")[0].rsplit("/", 1)[0] + "/" if "{" in lit else lit)
    return found


def test_make_lab_copies_twice_keep_edits_and_leave_git_status_clean(tmp_path):
    """``make copies`` (what ``make lab`` runs before JupyterLab) in a clone, twice with an edit between: the edit
    stays, the tracked notebooks stay as committed (``git status`` clean: work/ is ignored), and every relative
    path the notebooks open resolves from work/ to the file it names from notebooks/."""
    if shutil.which("make") is None or shutil.which("git") is None:
        pytest.skip("make and git are needed")
    clone = tracked_copy(tmp_path / "clone")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "clone"]):
        subprocess.run(git + args, cwd=clone, check=True, capture_output=True)
    venv = _fake_venv(tmp_path / "venv")
    make = ["make", "copies", f"VENV={venv}"]
    first = subprocess.run(make, cwd=clone, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "resnetlearn.classroom.copies --out work" in first.stdout
    work = clone / "work"
    _edit(work / "00_welcome.ipynb", "my_answer = 42")
    edited = (work / "00_welcome.ipynb").read_bytes()
    second = subprocess.run(make, cwd=clone, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0 and "kept yours  00_welcome.ipynb" in second.stdout, second.stdout
    assert (work / "00_welcome.ipynb").read_bytes() == edited
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True).stdout
    assert status == "", status
    # relative paths: the same files from work/ as from notebooks/
    for nb_path in sorted((clone / "notebooks").glob("*.ipynb")):
        for rel in _relative_paths(nbformat.read(nb_path, as_version=4)):
            from_work, from_notebooks = (work / rel).resolve(), (clone / "notebooks" / rel).resolve()
            assert from_work == from_notebooks, (nb_path.name, rel)
            assert from_work.exists() or rel == "../results/live/store", (nb_path.name, rel)  # the rerun's store
    # make fresh-copies: the edited copy moved aside, a fresh one in its place
    fresh = subprocess.run(["make", "fresh-copies", f"VENV={venv}"], cwd=clone, capture_output=True, text=True,
                           timeout=300)
    assert fresh.returncode == 0, fresh.stderr
    assert [p.read_bytes() for p in work.glob(".old/*/00_welcome.ipynb")] == [edited]
    assert (work / "00_welcome.ipynb").read_bytes() == (clone / "notebooks" / "00_welcome.ipynb").read_bytes()


@pytest.mark.notebook
def test_working_copies_run_from_their_folder(tmp_path):
    """Notebook 05 and its deep dive, executed from a working-copy folder beside notebooks/: they read the shipped
    results through ../results and finish without an error."""
    clone = tracked_copy(tmp_path / "clone")
    C.write_copies(clone / "notebooks", clone / "work")
    for name in EXECUTED:
        nb = nbformat.read(clone / "work" / name, as_version=4)
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(clone / "work")}}).execute()
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
        assert not errors, (name, errors[:1])
        text = json.dumps([o for c in nb.cells if c.cell_type == "code" for o in c.outputs])
        assert "fig2a" in text, name  # it read the shipped results
    assert not (clone / "results" / "live").exists()  # showing the rerun button writes nothing
