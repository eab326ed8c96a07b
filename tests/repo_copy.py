"""The repository's tracked files copied as they are in the working tree: a fresh clone of this state, for the
tests that set up a project the way a newcomer does (tests/test_browser.py, tests/test_first_use.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tracked_copy(dest: Path) -> Path:
    """Copy every file git tracks (as it is on disk now) into ``dest``; returns ``dest``."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in files.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest
