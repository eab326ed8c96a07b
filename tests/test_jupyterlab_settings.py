"""The JupyterLab settings shipped with the package: no "get Jupyter news?" prompt and no
update check, for every install route, without replacing anybody's own ``overrides.json``.

The file ``binder/overrides.d/resnetlearn.json`` is a wheel data file (pyproject.toml,
``[tool.hatch.build.targets.wheel.shared-data]``) that pip places in
``{sys.prefix}/share/jupyter/lab/settings/overrides.d/``; jupyterlab_server merges that directory's files first
and the single ``overrides.json`` last (``settings_utils._get_overrides``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "binder/overrides.d/resnetlearn.json"
TARGET = "share/jupyter/lab/settings/overrides.d/resnetlearn.json"
PLUGIN = "@jupyterlab/apputils-extension:notification"


def _shipped() -> dict:
    return json.loads((ROOT / SOURCE).read_text())


def test_pyproject_ships_the_settings_as_wheel_data():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert cfg["build-system"]["build-backend"] == "hatchling.build"
    assert cfg["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"] == {SOURCE: TARGET}


def test_settings_switch_off_news_and_update_check_per_jupyterlab_schema():
    """Each key exists in the installed JupyterLab's schema of the plugin and takes an allowed value."""
    schema_file = Path(sys.prefix) / "share/jupyter/lab/schemas/@jupyterlab/apputils-extension/notification.json"
    props = json.loads(schema_file.read_text())["properties"]
    ours = _shipped()
    assert list(ours) == [PLUGIN]
    assert ours[PLUGIN] == {"fetchNews": "false", "checkForUpdates": False}
    allowed = {c["const"]: c["title"] for c in props["fetchNews"]["oneOf"]}
    assert allowed["false"] == "Never" and props["fetchNews"]["default"] == "none"  # "none": it asks
    assert props["checkForUpdates"]["type"] == "boolean"


def test_overrides_d_is_merged_under_the_users_overrides_json(tmp_path):
    """jupyterlab_server reads our file and a user's overrides.json together; the user's wins where both set a key."""
    from jupyterlab_server.settings_utils import _get_overrides

    settings = tmp_path / "settings"
    (settings / "overrides.d").mkdir(parents=True)
    (settings / "overrides.d" / "resnetlearn.json").write_text((ROOT / SOURCE).read_text())
    overrides, error = _get_overrides(str(settings))
    assert not error and overrides[PLUGIN] == {"fetchNews": "false", "checkForUpdates": False}

    users = {"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}, PLUGIN: {"fetchNews": "true"}}
    (settings / "overrides.json").write_text(json.dumps(users))
    overrides, error = _get_overrides(str(settings))
    assert not error
    assert overrides["@jupyterlab/apputils-extension:themes"] == {"theme": "JupyterLab Dark"}
    assert overrides[PLUGIN] == {"fetchNews": "true", "checkForUpdates": False}


def test_make_and_binder_leave_overrides_json_alone():
    for name in ("Makefile", "binder/postBuild"):
        text = (ROOT / name).read_text()
        assert "overrides.json" not in text.replace("resnetlearn.json", ""), f"{name} still writes overrides.json"
    assert "overrides.d/resnetlearn.json" in (ROOT / "binder/postBuild").read_text()  # the build checks it


@pytest.mark.install
@pytest.mark.slow
@pytest.mark.parametrize("editable", [True, False], ids=["pip install -e", "pip install"])
def test_a_fresh_install_places_the_settings_and_uninstall_keeps_others(tmp_path, editable):
    """A real install into a fresh venv (no torch: --no-deps); about 10 s each with hatchling in pip's cache."""
    if os.environ.get("RESNETLEARN_SKIP_VENV_TEST"):
        pytest.skip("RESNETLEARN_SKIP_VENV_TEST is set")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    settings = venv / "share/jupyter/lab/settings"
    settings.mkdir(parents=True)
    theirs = '{"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}'
    (settings / "overrides.json").write_text(theirs)  # somebody's own overrides
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", *(["-e"] if editable else []), str(ROOT)],
                   check=True)
    assert json.loads((venv / TARGET).read_text()) == _shipped()
    assert (settings / "overrides.json").read_text() == theirs
    subprocess.run([py, "-m", "pip", "uninstall", "-q", "-y", "resnetlearn"], check=True)
    assert not (venv / TARGET).exists()
    assert (settings / "overrides.json").read_text() == theirs
