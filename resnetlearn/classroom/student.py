"""Student copies of the notebooks: the folded answers taken out.

The notebooks fold every answer and explanation in an HTML ``<details>`` block, titled by its ``<summary>``
("Answer", "Explain", "Our run", ...). A student copy keeps everything else — every code cell, in order, and
the folded *hints* (blocks whose summary starts with one of :data:`KEPT_SUMMARIES`) — and puts a one-line note
with the fold's title where each answer was ("**Explain: the decomposition panel** — answer in the instructor
copy."). The answer keys that the notebooks carry as HTML comments (``<!-- key: 0.361 -->``) are removed from
every markdown cell, folded or not. Code outputs are cleared by default, so that a student predicts before seeing
a result.

    python -m resnetlearn.classroom.student [--src notebooks] [--out student] [--keep-outputs] [--fresh]

``make student`` runs it; ``student/`` is git-ignored. A copy already in ``--out`` is the student's and is kept
(only missing copies are written); ``--fresh`` (``make fresh-student``) writes every copy anew and moves each
differing one to ``OUT/.old/<time>/`` (:mod:`resnetlearn.classroom.copies`). The instructor guide
(``notebooks/README.md``) is not copied.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat

from .copies import run_command, write_copies

ROOT = Path(__file__).resolve().parents[2]

KEPT_SUMMARIES = ("Hint", "What to look for")
"""Folded blocks whose summary starts with one of these help a student work; every other block is an answer."""

NOTE = "in the instructor copy."
"""Every note that replaces an answer ends with this (see :func:`placeholder`)."""

_KEY = r"<!--\s*key\s*:.*?-->"
_KEY_LINE = re.compile(rf"^[ \t]*{_KEY}[ \t]*(?:\n|$)", re.IGNORECASE | re.DOTALL | re.MULTILINE)
_KEY_INLINE = re.compile(_KEY, re.IGNORECASE | re.DOTALL)

_TAG = re.compile(r"<details\b[^>]*>|</details\s*>", re.IGNORECASE)
_SUMMARY = re.compile(r"<summary\b[^>]*>(.*?)</summary\s*>", re.IGNORECASE | re.DOTALL)
_HTML = re.compile(r"<[^>]+>")


def folded_blocks(text: str, *, where: str = "text") -> list[tuple[int, int]]:
    """Spans of the top-level ``<details>…</details>`` blocks of a markdown text, in order.

    Parameters
    ----------
    text : str
        A markdown cell's text.
    where : str, default "text"
        Where the text is, named in errors.

    Returns
    -------
    list of (int, int)
        ``(start, end)`` offsets.

    Raises
    ------
    ValueError
        Naming ``where``, when the tags are unbalanced or nested (a block must open and close inside one cell, and
        folding inside a fold is not used by the notebooks).
    """
    spans, start = [], None
    for m in _TAG.finditer(text):
        opening = not m.group(0).startswith("</")
        if opening and start is not None:
            raise ValueError(f"{where}: a <details> block opens inside another one (offset {m.start()})")
        if not opening and start is None:
            raise ValueError(f"{where}: </details> without an opening <details> (offset {m.start()})")
        if opening:
            start = m.start()
        else:
            spans.append((start, m.end()))
            start = None
    if start is not None:
        raise ValueError(f"{where}: <details> at offset {start} is not closed in the same cell")
    return spans


def summary(block: str) -> str:
    """The visible title of a folded block: its ``<summary>`` without markup.

    Parameters
    ----------
    block : str
        The text of a ``<details>…</details>`` block.

    Returns
    -------
    str
        Empty when it has none.
    """
    m = _SUMMARY.search(block)
    return " ".join(_HTML.sub("", m.group(1)).split()) if m else ""


def placeholder(block: str) -> str:
    """The line that replaces a removed answer block: its title in bold, then where the answer is.

    Parameters
    ----------
    block : str
        The text of a ``<details>…</details>`` block.

    Returns
    -------
    str
    """
    title = summary(block) or "Answer"
    return f"**{title}** — {NOTE}" if title == "Answer" else f"**{title}** — answer {NOTE}"


def strip_keys(text: str) -> str:
    """A text without its answer-key comments (``<!-- key: … -->``, each with the line it stood on when alone).

    Parameters
    ----------
    text : str
        A markdown cell's text.

    Returns
    -------
    str
    """
    return _KEY_INLINE.sub("", _KEY_LINE.sub("", text))


def is_answer(block: str) -> bool:
    """Whether a folded block is an answer: True unless its summary starts with one of :data:`KEPT_SUMMARIES`.

    Parameters
    ----------
    block : str
        The text of a ``<details>…</details>`` block.

    Returns
    -------
    bool
    """
    return not summary(block).startswith(KEPT_SUMMARIES)


def strip_answers(nb, *, keep_outputs: bool = False, name: str = "notebook"):
    """A copy of a notebook without its folded answers; the notebook itself is not changed.

    Answer blocks are replaced by :func:`placeholder` lines, answer keys removed from every markdown cell, and, unless
    kept, code outputs, execution counts and the widget state cleared.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The notebook.
    keep_outputs : bool, default False
        Keep the code cells' outputs.
    name : str, default "notebook"
        The notebook's name, in errors.

    Returns
    -------
    copy : nbformat.NotebookNode
        The student copy.
    removed : list of str
        The answer blocks' text as it stood in ``nb``.

    Raises
    ------
    ValueError
        If a cell's folded blocks are malformed (:func:`folded_blocks`).
    """
    out = copy.deepcopy(nb)
    removed = []
    for i, cell in enumerate(out.cells):
        if cell.cell_type == "code" and not keep_outputs:
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
        if cell.cell_type != "markdown":
            continue
        text = cell.source
        pieces, last = [], 0
        for start, end in folded_blocks(text, where=f"{name}, cell {i}"):
            block = text[start:end]
            if is_answer(block):
                removed.append(block)
                pieces += [text[last:start], placeholder(block)]
                last = end
        cell.source = strip_keys("".join(pieces) + text[last:])
    if not keep_outputs:
        out.metadata.pop("widgets", None)  # widget state belongs to the cleared outputs
    return out, removed


def student_copy(path, *, keep_outputs: bool = False) -> tuple[bytes, int]:
    """The student copy of the notebook at ``path``, as the bytes of its file.

    Parameters
    ----------
    path : path-like
        The notebook.
    keep_outputs : bool, default False
        Keep the code cells' outputs.

    Returns
    -------
    data : bytes
        The copy's file.
    removed : int
        The number of answers removed.

    Raises
    ------
    ValueError
        Naming the file when it is not a notebook (not JSON, not nbformat 4) or its folds are malformed.
    """
    path = Path(path)
    try:
        nb = nbformat.read(path, as_version=4)
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        raise ValueError(f"{path} is not a readable notebook ({type(e).__name__}: {first}); fix it, or move it out "
                         f"of {path.parent}") from None
    copy_, removed = strip_answers(nb, keep_outputs=keep_outputs, name=path.name)
    nbformat.validate(copy_)
    text = nbformat.writes(copy_)
    return (text if text.endswith("\n") else text + "\n").encode("utf-8"), len(removed)


def write_student_copies(src: Path | str = ROOT / "notebooks", out: Path | str = ROOT / "student", *,
                         keep_outputs: bool = False, fresh: bool = False) -> dict[str, int]:
    """Write the student copy of every ``*.ipynb`` in ``src`` that ``out`` lacks.

    A copy already there is the student's and is kept (:func:`copies.write_copies
    <resnetlearn.classroom.copies.write_copies>`). Every copy is made before anything is written.

    Parameters
    ----------
    src : path-like, default ROOT / "notebooks"
        The folder of the notebooks.
    out : path-like, default ROOT / "student"
        The folder for the copies.
    keep_outputs : bool, default False
        Keep the code cells' outputs.
    fresh : bool, default False
        Write every copy anew, moving a student's differing copy to ``out/.old/<time>/``.

    Returns
    -------
    dict of str to int
        The number of answers each copy lacks, by notebook name.

    Raises
    ------
    ValueError
        For a notebook that cannot be read or whose folded blocks are malformed, before anything is written.
    """
    counts: dict[str, int] = {}

    def make(path: Path) -> bytes:
        data, counts[path.name] = student_copy(path, keep_outputs=keep_outputs)
        return data

    write_copies(src, out, make=make, fresh=fresh)
    return counts


def main(argv=None) -> None:
    """``python -m resnetlearn.classroom.student``: student copies of the notebooks in ``student/``.

    Parameters
    ----------
    argv : list of str or None, default None
        ``[--src DIR] [--out DIR] [--keep-outputs] [--fresh]``; None reads ``sys.argv``.
    """
    counts: dict[str, int] = {}

    def make(path: Path, args) -> bytes:
        data, counts[path.name] = student_copy(path, keep_outputs=args.keep_outputs)
        return data

    run_command(argv, prog="python -m resnetlearn.classroom.student", description=__doc__,
                default_out=ROOT / "student", fresh_command="make fresh-student (or this command with --fresh)",
                make=make, notes=lambda path: f"{counts[path.name]} answers removed",
                extra=lambda ap: ap.add_argument("--keep-outputs", action="store_true",
                                                 help="keep the committed outputs of the code cells"))


if __name__ == "__main__":
    main()
