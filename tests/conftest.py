"""The test session keeps the user's Jupyter folders as they were: before any test runs, their contents are
recorded and every Jupyter folder variable points at a temporary folder of the session's (see jupyter_home.py);
tests/test_user_jupyter.py, run last, compares."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from jupyter_home import JUPYTER_DIRS, jupyter_env, tree_digest, user_jupyter_folders

BEFORE: dict[Path, dict[str, str]] = {}
"""The user's Jupyter folders and their contents when the session started."""
LAST = "test_user_jupyter.py"
_SESSION_DIR: list[Path] = []


def pytest_configure(config):
    BEFORE.update({folder: tree_digest(folder) for folder in user_jupyter_folders()})
    base = Path(tempfile.mkdtemp(prefix="resnetlearn-tests-jupyter-"))
    _SESSION_DIR.append(base)
    env = jupyter_env(base)
    os.environ.update({k: env[k] for k in JUPYTER_DIRS})


def pytest_unconfigure(config):
    for base in _SESSION_DIR:
        shutil.rmtree(base, ignore_errors=True)


def pytest_collection_modifyitems(session, config, items):
    """The comparison with the user's folders runs after every other test, notebooks included."""
    items.sort(key=lambda item: item.path.name == LAST)
