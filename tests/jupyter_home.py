"""Where Jupyter writes, kept away from the user's own folders while the tests run.

JupyterLab saves workspaces, settings and runtime files under the user's home (``~/.jupyter``,
``~/.local/share/jupyter``) unless five variables point elsewhere. A test that starts JupyterLab passes
:func:`jupyter_env` of a temporary folder of its own; ``conftest.py`` points the whole session at one too (kernels
started by nbval and nbconvert write their connection files there) and :func:`tree_digest` shows the user's
folders unchanged at the end."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

JUPYTER_DIRS = {"JUPYTER_CONFIG_DIR": "config", "JUPYTER_DATA_DIR": "data", "JUPYTER_RUNTIME_DIR": "runtime",
                "JUPYTERLAB_SETTINGS_DIR": "settings", "JUPYTERLAB_WORKSPACES_DIR": "workspaces"}
"""Each variable and its sub-folder. JUPYTERLAB_SETTINGS_DIR is the user-settings folder: the package's own
settings (``{sys.prefix}/share/jupyter/lab/settings/overrides.d``) are read from the environment, not from it."""


def jupyter_env(base: Path, env: dict | None = None, **extra: str) -> dict:
    """``env`` (default: this process's environment) with every Jupyter folder under ``base``."""
    return dict(os.environ if env is None else env, **{k: str(base / v) for k, v in JUPYTER_DIRS.items()}, **extra)


def user_jupyter_folders() -> list[Path]:
    """The user's Jupyter folders as this environment names them before the tests redirect anything: the config
    folder (settings and workspaces live under it) and the data folder (runtime files under it)."""
    from jupyter_core.paths import jupyter_config_dir, jupyter_data_dir

    return [Path(jupyter_config_dir()), Path(jupyter_data_dir())]


def tree_digest(folder: Path) -> dict[str, str]:
    """Every entry under ``folder`` (itself included) by relative path: a file's sha256 and mode, a link's target,
    ``dir`` for a folder; ``{}`` when the folder does not exist."""
    if not folder.exists() and not folder.is_symlink():
        return {}
    out = {".": "dir"}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                out[rel] = "link -> " + os.readlink(path)
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = f"{hashlib.sha256(path.read_bytes()).hexdigest()} {oct(path.stat().st_mode)}"
    return out
