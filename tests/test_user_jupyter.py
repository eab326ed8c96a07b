"""The tests leave the user's Jupyter as it was: after every other test of the session (conftest.py moves this
file last), ``~/.jupyter`` and ``~/.local/share/jupyter`` (or wherever the user's environment points them) hold
exactly what they held before the first test, and every Jupyter folder variable pointed away from them."""

from __future__ import annotations

import os
from pathlib import Path

import conftest
from jupyter_home import JUPYTER_DIRS, tree_digest


def test_the_session_s_jupyter_folders_are_not_the_user_s():
    users = list(conftest.BEFORE)
    for var in JUPYTER_DIRS:
        path = Path(os.environ[var]).resolve()
        assert not any(path == u.resolve() or u.resolve() in path.parents for u in users), (var, path)


def test_the_user_s_jupyter_folders_are_unchanged():
    assert conftest.BEFORE, "conftest.py recorded nothing"
    for folder, before in conftest.BEFORE.items():
        after = tree_digest(folder)
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        assert not changed, f"the tests changed {folder}: {changed[:20]}"


def test_the_digest_sees_what_jupyterlab_would_write(tmp_path):
    """The comparison is not blind: a workspace file appearing, or its content changing, changes the digest."""
    folder = tmp_path / "jupyter"
    assert tree_digest(folder) == {}
    (folder / "lab" / "workspaces").mkdir(parents=True)
    empty = tree_digest(folder)
    assert empty != {}
    workspace = folder / "lab" / "workspaces" / "default-37a8.jupyterlab-workspace"
    workspace.write_text('{"data": {}}')
    written = tree_digest(folder)
    assert written != empty
    workspace.write_text('{"data": {"layout-restorer:data": {}}}')
    assert tree_digest(folder) != written
