"""Copies of the shipped notebooks in a folder of the user's, made without ever losing the user's work.

A copy that already exists is the user's: it is kept as it is, whatever it holds (their answers, their runs, an
older version of the notebook). Only missing copies are written. ``fresh=True`` writes every copy anew, and each
existing copy that differs from the fresh one is first moved aside to ``OUT/.old/<time>/NAME``, never deleted.
Every call says which copies it wrote and which it kept.

Two kinds of copies use this:

* working copies (``make lab``): the full notebooks, byte for byte (outputs and folded answers kept), in ``work/``
  beside ``notebooks/``, so that JupyterLab's saves and autosaves go to the copies and the tracked notebooks stay
  as committed. The notebooks open their data by paths relative to their own folder (``../results/...``), which
  resolve to the same files from any folder that is a sibling of ``notebooks/``;
* student copies (:mod:`resnetlearn.classroom.student`): the notebooks without their folded answers.

    python -m resnetlearn.classroom.copies [--src notebooks] [--out work] [--fresh]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

OLD = ".old"
"""The folder inside ``out`` where ``fresh=True`` moves the copies it replaces (one subfolder per call)."""


@dataclass(frozen=True)
class Copy:
    """What happened to one copy.

    Parameters
    ----------
    name : str
        The notebook's file name.
    path : Path
        The copy.
    action : {"wrote", "kept", "same", "fresh"}
        ``"wrote"``: it was missing; ``"kept"``: the user's copy, left as it is; ``"same"``: already equal to a fresh
        copy; ``"fresh"``: written anew, the user's copy moved to ``moved_to``.
    moved_to : Path or None, default None
        Where the user's copy went, for ``"fresh"``.
    """

    name: str
    path: Path
    action: str
    moved_to: Path | None = None


def notebooks(src) -> list[Path]:
    """The notebooks (``*.ipynb``) of a folder, by name.

    Parameters
    ----------
    src : path-like
        The folder.

    Returns
    -------
    list of Path

    Raises
    ------
    ValueError
        Naming ``src`` when it is not a folder or holds no notebook.
    """
    src = Path(src)
    if not src.is_dir():
        raise ValueError(f"src: {src} is not a folder of notebooks")
    paths = sorted(src.glob("*.ipynb"))
    if not paths:
        raise ValueError(f"src: no notebooks (*.ipynb) in {src}")
    return paths


def check_out(out, src) -> Path:
    """``out`` as a folder the copies may go to: not ``src`` itself, and not an existing file.

    Parameters
    ----------
    out : path-like
        The folder for the copies (created later if missing).
    src : path-like
        The folder of the notebooks.

    Returns
    -------
    Path

    Raises
    ------
    ValueError
        Naming ``out`` when it is ``src``, an existing file, or lies under a file.
    """
    out, src = Path(out), Path(src)
    if out.resolve() == src.resolve():
        raise ValueError(f"out: must differ from src ({src}); the copies would replace the notebooks")
    if out.exists() and not out.is_dir():
        raise ValueError(f"out: {out} exists and is not a folder; name a folder for the copies (it is created "
                         f"if missing)")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(f"out: {parent} (in {out}) is a file, not a folder")
            break
    return out


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder: a copy is whole or absent."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _aside(out: Path, stamp: str, name: str) -> Path:
    """A path under ``out/.old/`` for a replaced copy that no earlier copy occupies."""
    folder, n = out / OLD / stamp, 1
    while (folder / name).exists():
        n += 1
        folder = out / OLD / f"{stamp}-{n}"
    return folder / name


def write_copies(src, out, *, make: Callable[[Path], bytes] | None = None, fresh: bool = False) -> list[Copy]:
    """Copy every notebook of ``src`` into ``out``, keeping every copy that exists (see the module docstring).

    Every copy is made before anything is written, so a notebook that cannot be read stops the call with its name and
    leaves ``out`` untouched.

    Parameters
    ----------
    src : path-like
        The folder of the notebooks.
    out : path-like
        The folder for the copies, created if missing.
    make : callable or None, default None
        ``make(path)`` → the bytes of the copy of the notebook at ``path``; None: the notebook's own bytes.
    fresh : bool, default False
        Write every copy anew; an existing copy that differs is first moved to ``out/.old/<time>/``, never deleted.

    Returns
    -------
    list of Copy
        What happened to each copy, in order of name.

    Raises
    ------
    TypeError
        If ``fresh`` is not a bool.
    ValueError
        If ``src`` or ``out`` is not acceptable (:func:`notebooks`, :func:`check_out`).
    """
    if not isinstance(fresh, bool):
        raise TypeError(f"fresh must be True or False, got {fresh!r}")
    paths = notebooks(src)
    out = check_out(out, src)
    made = {p.name: (make(p) if make is not None else p.read_bytes()) for p in paths}
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    done = []
    for name, data in made.items():
        dest = out / name
        if not dest.exists():
            _write(dest, data)
            done.append(Copy(name, dest, "wrote"))
        elif dest.is_file() and dest.read_bytes() == data:
            done.append(Copy(name, dest, "same"))
        elif not fresh:
            done.append(Copy(name, dest, "kept"))
        else:
            aside = _aside(out, stamp, name)
            aside.parent.mkdir(parents=True, exist_ok=True)
            os.replace(dest, aside)  # moved, never deleted
            _write(dest, data)
            done.append(Copy(name, dest, "fresh", aside))
    return done


def report(done: list[Copy], out, *, fresh_command: str, notes: dict[str, str] | None = None) -> str:
    """What :func:`write_copies` did, one line per notebook, then what to do for fresh copies.

    Parameters
    ----------
    done : list of Copy
        What :func:`write_copies` returned.
    out : path-like
        The folder of the copies.
    fresh_command : str
        The command that makes fresh copies, named when a copy of the user's was kept.
    notes : dict of str to str or None, default None
        A few words to add to a written copy's line, by notebook name (e.g. the answers a student copy lost).

    Returns
    -------
    str
    """
    notes = notes or {}
    words = {"wrote": "wrote", "same": "unchanged", "kept": "kept yours", "fresh": "fresh copy"}
    lines = []
    for c in done:
        line = f"{words[c.action]:11s} {c.name}"
        if c.action == "kept":
            line += " (it differs from a fresh copy: your edits, or an older version of the notebook)"
        elif c.action == "fresh":
            line += f" (yours moved to {c.moved_to})"
        if c.action in ("wrote", "fresh") and c.name in notes:
            line += f" ({notes[c.name]})"
        lines.append(line)
    counts = {a: sum(c.action == a for c in done) for a in words}
    lines.append(f"copies in {out}: {counts['wrote'] + counts['fresh']} written, {counts['kept']} of yours kept, "
                 f"{counts['same']} unchanged")
    if counts["kept"]:
        lines.append(f"a fresh copy of each (yours moved to {Path(out) / OLD}/<time>/, never deleted): "
                     f"{fresh_command}")
    return "\n".join(lines)


def run_command(argv, *, prog: str, description: str, default_out: Path, fresh_command: str,
                make: Callable[[Path], bytes] | None = None, notes: Callable[[Path], str] | None = None,
                extra: Callable[[argparse.ArgumentParser], None] | None = None):
    """The command line of a kind of copies: ``--src``, ``--out``, ``--fresh`` and what ``extra`` adds.

    Bad folders and unreadable notebooks end in a one-line error (status 2), a file that cannot be written in one
    naming it (status 1); the report is printed.

    Parameters
    ----------
    argv : list of str or None
        The arguments; None reads ``sys.argv``.
    prog : str
        The program's name in help and errors.
    description : str
        The help text.
    default_out : Path
        The default of ``--out``.
    fresh_command : str
        The command for fresh copies (:func:`report`).
    make : callable or None, default None
        ``make(path, args)`` → the bytes of a copy, with the parsed arguments; None: the notebook's own bytes.
    notes : callable or None, default None
        ``notes(path)`` → a few words on a written copy (:func:`report`).
    extra : callable or None, default None
        ``extra(parser)`` adds arguments to the parser.

    Returns
    -------
    args : argparse.Namespace
        The parsed arguments.
    done : list of Copy
        What was done.

    Raises
    ------
    SystemExit
        On an error, with status 2 (bad arguments) or 1 (a file that cannot be written).
    """
    ap = argparse.ArgumentParser(prog=prog, description=description,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default=str(ROOT / "notebooks"), help="folder of the notebooks (default: %(default)s)")
    ap.add_argument("--out", default=str(default_out), help="folder for the copies (default: %(default)s)")
    ap.add_argument("--fresh", action="store_true",
                    help=f"write every copy anew; a copy of yours that differs is first moved to OUT/{OLD}/<time>/ "
                         "(never deleted)")
    if extra is not None:
        extra(ap)
    args = ap.parse_args(argv)
    noted: dict[str, str] = {}

    def build(path: Path) -> bytes:
        data = make(path, args) if make is not None else path.read_bytes()
        if notes is not None:
            noted[path.name] = notes(path)
        return data

    try:
        done = write_copies(args.src, args.out, make=build, fresh=args.fresh)
    except ValueError as e:
        ap.error(str(e))
    except OSError as e:
        print(f"{prog}: cannot write {e.filename or args.out}: {e.strerror or e}. Copies already in {args.out} "
              f"are untouched.", file=sys.stderr)
        raise SystemExit(1) from None
    print(report(done, args.out, fresh_command=fresh_command, notes=noted))
    return args, done


def main(argv=None) -> None:
    """``python -m resnetlearn.classroom.copies``: working copies of the notebooks in ``work/``.

    Parameters
    ----------
    argv : list of str or None, default None
        The arguments; None reads ``sys.argv``.
    """
    run_command(argv, prog="python -m resnetlearn.classroom.copies", description=__doc__,
                default_out=ROOT / "work", fresh_command="make fresh-copies (or this command with --fresh)")


if __name__ == "__main__":
    main()
