"""The lecture deck presented live: ``notebooks/lecture.ipynb`` opened in JupyterLab as a slideshow
(jupyterlab-slideshow, which presents inside JupyterLab itself, so the race's widgets stay live on their slide).

    python -m resnetlearn.classroom.lecture [--folder lecture] [-- JUPYTERLAB ARGUMENTS]

``make lecture`` runs it. It

* copies the deck to ``FOLDER/lecture.ipynb`` when that file is missing, and never overwrites it (JupyterLab
  autosaves an open notebook: presenting the copy leaves the shipped deck exactly as committed; delete or rename
  the copy to get a fresh one);
* writes the lecture's own JupyterLab settings under ``FOLDER/.jupyter/settings``: the slideshow plugin with
  ``active: true`` (JupyterLab opens presenting) and ``showCodeCellPrompt: true`` (without it an overlay of
  JupyterLab covers the widgets and swallows the clicks on Train); its own workspaces sit beside them, so the
  lecture's open tabs and settings never reach ``make lab``;
* starts JupyterLab on ``FOLDER`` with the deck open, passing the arguments after ``--`` on.

``FOLDER`` sits beside ``results/`` (the deck reads ``../results``); it is git-ignored.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DECK = ROOT / "notebooks" / "lecture.ipynb"
"""The shipped deck."""
COPY_NAME = "lecture.ipynb"
SLIDESHOW_PLUGIN = "jupyterlab-slideshow"
SLIDESHOW_SETTINGS = {"active": True, "showCodeCellPrompt": True}
"""What the lecture sets in jupyterlab-slideshow's settings (``plugin.json`` of its schema)."""


def settings_dir(folder: Path) -> Path:
    """Where the lecture's own JupyterLab settings live: ``FOLDER/.jupyter/settings``.

    Parameters
    ----------
    folder : Path
        The lecture's folder.

    Returns
    -------
    Path
    """
    return Path(folder) / ".jupyter" / "settings"


def workspaces_dir(folder: Path) -> Path:
    """Where the lecture's own JupyterLab workspaces live: ``FOLDER/.jupyter/workspaces``.

    Parameters
    ----------
    folder : Path
        The lecture's folder.

    Returns
    -------
    Path
    """
    return Path(folder) / ".jupyter" / "workspaces"


def prepare(folder: Path, deck: Path = DECK) -> tuple[Path, bool]:
    """Make the working copy of the deck (only when missing) and write the lecture's settings.

    Only the slideshow plugin's settings file is written: other settings changed while presenting are kept.

    Parameters
    ----------
    folder : Path
        The lecture's folder, created if missing.
    deck : Path, default DECK
        The shipped deck.

    Returns
    -------
    copy : Path
        The working copy.
    made : bool
        Whether it was made now.

    Raises
    ------
    FileNotFoundError
        If ``deck`` is not a file.
    """
    folder = Path(folder)
    if not Path(deck).is_file():
        raise FileNotFoundError(f"deck: no file {deck}")
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / COPY_NAME
    made = not copy.exists()
    if made:
        shutil.copyfile(deck, copy)
    plugin = settings_dir(folder) / SLIDESHOW_PLUGIN / "plugin.jupyterlab-settings"
    plugin.parent.mkdir(parents=True, exist_ok=True)
    plugin.write_text(json.dumps(SLIDESHOW_SETTINGS, indent=2) + "\n", encoding="utf-8")
    workspaces_dir(folder).mkdir(parents=True, exist_ok=True)
    return copy, made


def lab_arguments(folder: Path) -> list[str]:
    """JupyterLab's arguments that serve a folder with the lecture's settings and workspaces, the deck open.

    ``--allow-root`` is added when running as root.

    Parameters
    ----------
    folder : Path
        The lecture's folder.

    Returns
    -------
    list of str
    """
    folder = Path(folder).resolve()
    args = [f"--ServerApp.root_dir={folder}", f"--LabApp.user_settings_dir={settings_dir(folder)}",
            f"--LabApp.workspaces_dir={workspaces_dir(folder)}", f"--LabApp.default_url=/lab/tree/{COPY_NAME}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # JupyterLab refuses to start as root without it
        args.append("--allow-root")
    return args


def main(argv=None) -> int:
    """``python -m resnetlearn.classroom.lecture``: prepare the folder and replace this process with JupyterLab.

    Parameters
    ----------
    argv : list of str or None, default None
        ``[--folder FOLDER] [-- JUPYTERLAB ARGUMENTS]``; None reads ``sys.argv``.

    Returns
    -------
    int
        Never returns in practice: the process becomes JupyterLab.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(prog="python -m resnetlearn.classroom.lecture", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folder", default=str(ROOT / "lecture"),
                    help="where the working copy and the lecture's settings live (default: lecture/ in the repository)")
    args = ap.parse_args(own)
    copy, made = prepare(Path(args.folder))
    print(f"lecture: {'made' if made else 'kept'} the working copy {copy}"
          + ("" if made else " (delete or rename it for a fresh copy of the deck)"), flush=True)
    cmd = [sys.executable, "-m", "jupyter", "lab", *lab_arguments(Path(args.folder)), *extra]
    os.execv(sys.executable, cmd)
    return 0  # not reached


if __name__ == "__main__":
    raise SystemExit(main())
