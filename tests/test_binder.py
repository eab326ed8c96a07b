"""Binder configuration checks (repo2docker itself needs Docker, which CI lacks).

What can be checked here: binder/ parses and pins a CPU-only torch, postBuild
stops on errors and installs the package, the widget front-ends are in the
environment, and the same requirements install into a fresh virtual
environment in which the package imports and a notebook executes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
# conda-forge names -> pip requirement used for the fresh-venv check (torch: the CPU pin of this project)
PIP_NAME = {"pytorch-cpu": "torch==2.13.0", "jupyterlab_widgets": "jupyterlab_widgets"}


def _deps():
    env = yaml.safe_load((BINDER / "environment.yml").read_text())
    return [d for d in env["dependencies"] if isinstance(d, str)]


def _name(dep: str) -> str:
    return re.split(r"[<>=! ]", dep, maxsplit=1)[0]


def test_environment_parses_and_pins_cpu_torch():
    names = {_name(d) for d in _deps()}
    assert "pytorch-cpu" in names, "Binder must install the CPU-only torch (conda-forge pytorch-cpu)"
    assert not names & {"pytorch", "pytorch-gpu", "cudatoolkit", "pytorch-cuda"}, "no CUDA torch on Binder"
    assert any(d.startswith("python=3.11") for d in _deps())


def test_widget_frontends_present():
    deps = {_name(d): d for d in _deps()}
    for needed in ("jupyterlab", "ipywidgets", "jupyterlab_widgets", "ipykernel", "anywidget"):
        assert needed in deps, f"{needed} missing from binder/environment.yml"
    assert deps["jupyterlab"].endswith(">=4.0") and deps["ipywidgets"].endswith(">=8.0")


def test_postbuild_stops_on_errors_and_installs_package():
    lines = [ln.strip() for ln in (BINDER / "postBuild").read_text().splitlines()]
    code = [ln for ln in lines if ln and not ln.startswith("#")]
    assert code[0] == "set -e", "postBuild must start with set -e (repo2docker does not stop on errors)"
    assert any("pip install" in ln and ln.rstrip().endswith("-e .") for ln in code)
    assert os.access(BINDER / "postBuild", os.X_OK), "postBuild must be executable"


def test_binder_requirements_install_into_fresh_venv(tmp_path):
    if os.environ.get("RESNETLEARN_SKIP_VENV_TEST"):
        pytest.skip("RESNETLEARN_SKIP_VENV_TEST is set")
    reqs = [PIP_NAME.get(_name(d), d) for d in _deps() if _name(d) not in ("python", "pip")]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    pip = [py, "-m", "pip", "install", "-q"]
    subprocess.run(pip + [r for r in reqs if r.startswith("torch")], check=True)
    subprocess.run(pip + [r for r in reqs if not r.startswith("torch")] + ["nbconvert"], check=True)
    subprocess.run(pip + ["--no-deps", "-e", str(ROOT)], check=True)  # what postBuild does
    subprocess.run([py, "-c", "import resnetlearn, ipywidgets, jupyterlab_widgets; print(resnetlearn.__version__)"],
                   check=True)
    out = tmp_path / "welcome.ipynb"
    subprocess.run([py, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                    str(ROOT / "notebooks" / "00_welcome.ipynb"), "--output", str(out)], check=True)
    assert out.exists() and "1.3500" in out.read_text()
