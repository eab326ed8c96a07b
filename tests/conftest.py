"""The test session keeps the user's Jupyter folders as they were: before any test runs, their contents are
recorded and every Jupyter folder variable points at a temporary folder of the session's (see jupyter_home.py);
tests/test_user_jupyter.py, run last, compares.

Every test belongs to tiers (markers registered in pyproject.toml): ``notebook`` (a notebook executed, nbval's
items included), ``browser`` (a real browser), ``install`` (pip installs into a fresh environment), ``slow`` (tens of
seconds or more on 2 cores), ``gpu`` (needs CUDA; skipped without it), and ``unit`` for every test in none of
those: ``make test-fast`` runs ``-m unit``. A whole file's tier is named in FILE_TIERS; a single test's by its own
``@pytest.mark.<tier>``."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
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


TIERS = ("notebook", "browser", "install", "slow", "gpu")
"""The tiers outside ``unit``."""
FILE_TIERS = {
    "test_browser.py": ("browser", "slow"),
    "test_lecture_browser.py": ("browser", "slow"),
    "test_book.py": ("slow",),
}
"""Tiers of every test in a file (tests/FILE)."""


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(session, config, items):
    """Tiers as markers; the comparison with the user's folders runs after every other test, notebooks included."""
    cuda = None
    for item in items:
        tiers = FILE_TIERS.get(item.path.name, ())
        if item.path.suffix == ".ipynb":
            tiers = ("notebook", "slow")
        for tier in tiers:
            item.add_marker(getattr(pytest.mark, tier))
        if not any(item.get_closest_marker(t) for t in TIERS):
            item.add_marker(pytest.mark.unit)
        if item.get_closest_marker("gpu"):
            cuda = _cuda() if cuda is None else cuda
            if not cuda:
                item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU"))
    items.sort(key=lambda item: item.path.name == LAST)
