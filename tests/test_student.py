"""Student copies: no folded answer survives, the hints and every code cell do, and the copies
still run (the cheapest one executed in full; executing all of them is a CI-hour)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from browser import CHROMIUM, NO_CHROMIUM, launch_chromium, open_lab
from nbclient import NotebookClient

from resnetlearn.classroom import student as S

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
EXECUTED = "01_concept_class.ipynb"  # about 3 s on a 2-core CPU (course/results/notebook_timings_cpu.json)


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    counts = S.write_student_copies(NOTEBOOKS, out)
    return out, counts


def _answers(nb) -> list[str]:
    return [c.source[a:b] for c in nb.cells if c.cell_type == "markdown"
            for a, b in S.folded_blocks(c.source) if S.is_answer(c.source[a:b])]


def _body(block: str) -> str:
    """The block without its <details>/<summary> markup: what a student would read when unfolding it."""
    return S._SUMMARY.sub("", block).split(">", 1)[1].rsplit("</", 1)[0].strip()


def test_every_notebook_is_copied_and_the_guide_is_not(copies):
    out, counts = copies
    assert sorted(counts) == sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert not (out / "README.md").exists()


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_no_answer_text_remains_and_every_code_cell_is_kept(copies, path):
    out, counts = copies
    nb = nbformat.read(path, as_version=4)
    copy = nbformat.read(out / path.name, as_version=4)
    nbformat.validate(copy)
    answers = _answers(nb)
    assert counts[path.name] == len(answers) == sum(c.source.count(S.NOTE) for c in copy.cells)
    # each removed fold leaves its title: the notes are the answers' placeholders, in order
    notes = [ln for c in copy.cells if c.cell_type == "markdown" for ln in c.source.splitlines() if S.NOTE in ln]
    assert notes == [S.placeholder(b) for b in answers]
    text = json.dumps([c.source for c in copy.cells], ensure_ascii=False)
    assert not re.search(r"<!--\s*key\s*:", text, re.IGNORECASE), "an answer key comment survived"
    for block in answers:
        body = _body(block)
        assert json.dumps(block, ensure_ascii=False)[1:-1] not in text
        if len(body) >= 40:  # short bodies ("0.3") may legitimately occur elsewhere
            assert json.dumps(body, ensure_ascii=False)[1:-1] not in text, body[:80]
    # no folded answer left; the hints stay, word for word
    left = [c.source[a:b] for c in copy.cells if c.cell_type == "markdown" for a, b in S.folded_blocks(c.source)]
    assert not [b for b in left if S.is_answer(b)]
    hints = [c.source[a:b] for c in nb.cells if c.cell_type == "markdown"
             for a, b in S.folded_blocks(c.source) if not S.is_answer(c.source[a:b])]
    assert left == hints
    # every code cell, in order, outputs cleared
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert [c.source for c in copy.cells if c.cell_type == "code"] == code
    assert all(not c.outputs and c.execution_count is None for c in copy.cells if c.cell_type == "code")
    assert len(copy.cells) == len(nb.cells)


@pytest.mark.notebook
def test_the_cheapest_copy_runs_top_to_bottom(copies):
    out, _ = copies
    nb = nbformat.read(out / EXECUTED, as_version=4)
    # run from notebooks/ so relative paths (../results, ../benchmarks) resolve as for the originals
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    assert any(c.outputs for c in nb.cells if c.cell_type == "code")


def test_folded_blocks_and_what_counts_as_an_answer():
    text = ("Q1\n\n<details><summary>Answer</summary>forty-two</details>\n"
            "<details open><summary><b>Explain</b> (open after running)</summary>\n\nwhy\n</details>\n"
            "<details><summary>Hint</summary>look up</details>\n"
            "<DETAILS><summary>What to look for</summary>x</DETAILS>")
    spans = S.folded_blocks(text)
    assert [S.summary(text[a:b]) for a, b in spans] == ["Answer", "Explain (open after running)", "Hint",
                                                         "What to look for"]
    assert [S.is_answer(text[a:b]) for a, b in spans] == [True, True, False, False]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text), nbformat.v4.new_code_cell("1 + 1")])
    copy, removed = S.strip_answers(nb)
    assert len(removed) == 2 and "forty-two" not in copy.cells[0].source and "why" not in copy.cells[0].source
    assert "look up" in copy.cells[0].source and copy.cells[0].source.count(S.NOTE) == 2
    assert "**Answer** — in the instructor copy." in copy.cells[0].source
    assert "**Explain (open after running)** — answer in the instructor copy." in copy.cells[0].source
    assert nb.cells[0].source == text  # the original is untouched


def test_answer_keys_are_removed_and_titles_kept():
    """The notebooks' question folds carry their key as an HTML comment; no key reaches the copy,
    folded or not, and each removed fold keeps its title."""
    text = ("> **Predict.** What does the race show?\n\n"
            "<details><summary><b>Answer</b></summary>\n\n<!-- key: 0.361 | 7.27 -->\n3resnet ends 0.361 below"
            "</details>\n\nA stray <!-- key: 42 --> inline.\n"
            "<details><summary><b>Explain</b>: the decomposition panel</summary>\n\nwhy\n</details>\n"
            "<details><summary>Hint</summary>\n<!-- key: 0.5 -->\nlook at epoch 60</details>")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    copy, removed = S.strip_answers(nb)
    src = copy.cells[0].source
    assert len(removed) == 2 and "key" not in src and "0.361" not in src and "42" not in src and "0.5" not in src
    assert src.splitlines() == [
        "> **Predict.** What does the race show?", "", "**Answer** — in the instructor copy.", "",
        "A stray  inline.", "**Explain: the decomposition panel** — answer in the instructor copy.",
        "<details><summary>Hint</summary>", "look at epoch 60</details>"]


def test_real_notebooks_keep_the_titles_of_their_folds(copies):
    """In the copies of the notebooks every removed fold is one line with its title, none a bare placeholder;
    titles other than 'Answer' (Explain: …, Our run, …) are kept as they read."""
    out, _ = copies
    titles_seen = set()
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        copy = nbformat.read(out / path.name, as_version=4)
        titles = [S.summary(b) or "Answer" for b in _answers(nb)]
        notes = [ln for c in copy.cells if c.cell_type == "markdown" for ln in c.source.splitlines() if S.NOTE in ln]
        assert [n.split("**")[1] for n in notes] == titles, path.name
        assert "Answer not included" not in json.dumps([c.source for c in copy.cells])
        titles_seen.update(titles)
    assert "Answer" in titles_seen and titles_seen - {"Answer"}, titles_seen


@pytest.mark.parametrize("bad, message", [
    ("<details><summary>Answer</summary>open", "not closed"),
    ("done</details>", "without an opening"),
    ("<details><details></details></details>", "inside another"),
])
def test_malformed_folds_raise_naming_the_cell(bad, message):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("ok"), nbformat.v4.new_markdown_cell(bad)])
    with pytest.raises(ValueError, match=f"x.ipynb, cell 1: .*{message}"):
        S.strip_answers(nb, name="x.ipynb")


def test_bad_folders_raise_before_writing(tmp_path):
    with pytest.raises(ValueError, match="src: no notebooks"):
        S.write_student_copies(tmp_path, tmp_path / "out")
    with pytest.raises(ValueError, match="out: must differ from src"):
        S.write_student_copies(NOTEBOOKS, NOTEBOOKS)
    assert not (tmp_path / "out").exists()


def test_make_student_and_gitignore():
    makefile = (ROOT / "Makefile").read_text()
    assert "student:" in makefile and "resnetlearn.classroom.student" in makefile
    # one command serves the copies: make lab-student makes them, then JupyterLab on student/
    make = (ROOT / "Makefile").read_text()
    assert "lab-student: student" in make and "--notebook-dir=student" in make
    assert "student/" in (ROOT / ".gitignore").read_text().splitlines()


# ----------------------------------------------------------------- a student copy opens ---------------
_STUDENT_VIEW_JS = """async (index) => {
  const w = window.jupyterapp.shell.currentWidget;
  if (!w || !w.context || !w.sessionContext || !w.sessionContext.session) return null;
  const kernel = w.sessionContext.session.kernel;
  const nb = w.content;
  await nb.scrollToItem(index);
  const cell = nb.widgets[index];
  return {path: w.context.path, dirty: w.context.model.dirty, kernel: kernel ? kernel.status : null,
          display_name: w.sessionContext.kernelDisplayName,
          dirty_tabs: document.querySelectorAll('.lm-TabBar-tab.jp-mod-dirty').length,
          dialogs: document.querySelectorAll('.jp-Dialog').length,
          title: nb.widgets[0].node.innerText, fold: cell.node.innerText};
}"""


def _fake_venv(path: Path) -> Path:
    """A folder that ``make VENV=path`` takes for an installed venv: its stamp is newer than pyproject.toml and
    its python and jupyter are this interpreter's (the install itself is tests/test_browser.py's subject)."""
    (path / "bin").mkdir(parents=True)
    for name, cmd in (("python", f'exec "{sys.executable}" "$@"'),
                      ("jupyter", f'exec "{sys.executable}" -m jupyter "$@"')):
        (path / "bin" / name).write_text(f"#!/bin/sh\n{cmd}\n")
        (path / "bin" / name).chmod(0o755)
    (path / ".installed").touch()
    return path


def _open_student_copy(url: str, index: int, shot: Path) -> tuple[dict, list[str]]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch_chromium(p)
        page, errors = open_lab(browser, url, timeout=60_000)
        page.wait_for_function("() => { const w = window.jupyterapp.shell.currentWidget; return w && w.sessionContext"
                               " && w.sessionContext.session && w.sessionContext.session.kernel &&"
                               " w.sessionContext.session.kernel.status === 'idle'; }", timeout=60_000)
        page.wait_for_timeout(2000)  # JupyterLab rewrites a mismatched kernelspec only after the kernel starts
        state = page.evaluate(_STUDENT_VIEW_JS, index)
        page.screenshot(path=str(shot))
        browser.close()
    return state, errors


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_make_lab_student_opens_a_student_copy_in_the_browser(tmp_path):
    """`make lab-student` in a copy of the repository writes student/ (`make student`) and serves it: notebook
    00's student copy opens in headless Chromium at 1280×800 with its title, a removed fold's title in place of
    its answer, the kernel idle and the notebook unmodified. Screenshot
    ``test-artifacts/browser/student_copy.png``."""
    pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    from test_browser import ARTIFACTS, _free_port, _newcomer_env, _stop, _tracked_copy, _wait_for_lab

    clone = _tracked_copy(tmp_path / "clone")
    venv = _fake_venv(tmp_path / "venv")
    port, token = _free_port(), secrets.token_hex(16)
    log = tmp_path / "lab_student.log"
    lab_args = (f"--no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={token} "
                "--LabApp.expose_app_in_browser=True")
    with open(log, "w") as out:
        proc = subprocess.Popen(["make", "lab-student", f"VENV={venv}", f"LAB_ARGS={lab_args}"], cwd=clone,
                                stdout=out, stderr=subprocess.STDOUT, env=_newcomer_env(tmp_path / "home"),
                                start_new_session=True)
    original = nbformat.read(NOTEBOOKS / "00_welcome.ipynb", as_version=4)
    index, block = next((i, c.source[a:b]) for i, c in enumerate(original.cells) if c.cell_type == "markdown"
                        for a, b in S.folded_blocks(c.source) if S.is_answer(c.source[a:b]))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        _wait_for_lab(f"http://127.0.0.1:{port}", token, proc, log, timeout=60)
        assert (clone / "student" / "00_welcome.ipynb").is_file(), "make lab-student wrote no student copy"
        state, errors = _open_student_copy(f"http://127.0.0.1:{port}/?token={token}", index,  # default_url: 00
                                           ARTIFACTS / "student_copy.png")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)  # make and the JupyterLab it started
        _stop(proc)
    log_text = log.read_text()
    assert "resnetlearn.classroom.student --out student" in log_text and "--notebook-dir=student" in log_text
    assert state is not None and state["path"] == "00_welcome.ipynb", state  # served from student/
    assert state["title"].startswith("0 · Welcome: what ResNet can learn that kernels cannot"), state["title"]
    assert S.placeholder(block).replace("**", "") in state["fold"], state["fold"]  # the fold's title, rendered
    assert "Total 12400" in _body(block) and "12400" not in state["fold"]  # its answer is not in the copy
    assert state["kernel"] == "idle" and state["display_name"] == "Python 3 (ipykernel)", state
    assert state["dirty"] is False and state["dirty_tabs"] == 0 and state["dialogs"] == 0, state
    assert "Traceback" not in log_text, log_text[-3000:]
    assert not [e for e in errors if "favicon" not in e], errors
