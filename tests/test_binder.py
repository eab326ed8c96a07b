"""Binder configuration checks (repo2docker itself needs Docker, which CI lacks).

What can be checked here: binder/ parses and pins a CPU-only torch, postBuild
stops on errors and installs the package, the widget front-ends are in the
environment, binder/environment.yml lists exactly pyproject.toml's dependencies
(so Binder gets what `pip install .` gets), and the same requirements install
into a fresh virtual environment in which the package imports and a notebook
executes.
"""

from __future__ import annotations

import json
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


# conda-forge name -> PyPI name where they differ: conda-forge's CPU-only PyTorch is `pytorch-cpu`, PyPI's is `torch`
# (its build chosen by the wheel index); `pytorch` is conda-forge's CUDA-when-possible build (environment.yml)
CONDA_TO_PYPI = {"pytorch-cpu": "torch", "pytorch": "torch"}


def _canonical(name: str) -> str:
    """PEP 503 normalised name: jupyterlab_widgets and jupyterlab-widgets are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _as_pypi(deps) -> dict[str, str]:
    """{normalised PyPI name: version specifier} of conda dependencies, python and pip left out."""
    out = {}
    for d in deps:
        name = _name(d)
        if name in ("python", "pip"):
            continue
        out[_canonical(CONDA_TO_PYPI.get(name, name))] = d[len(name):].strip()
    return out


def _pip_requirements(reqs) -> dict[str, str]:
    return {_canonical(_name(r)): r[len(_name(r)):].strip() for r in reqs}


def test_binder_installs_what_pip_install_installs():
    """binder/environment.yml and pyproject.toml's dependencies: the same packages with the same lower bounds
    (torch <-> pytorch-cpu), so Binder's image is what `pip install .` gives a student."""
    assert _as_pypi(_deps()) == _pip_requirements(_pyproject()["dependencies"])


def test_conda_route_has_every_dependency():
    """The root environment.yml (conda route; torch <-> pytorch) has every dependency of the package, with
    the same bounds, plus test tools of its own."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = _as_pypi(d for d in env["dependencies"] if isinstance(d, str))
    pip = _pip_requirements(_pyproject()["dependencies"])
    assert {k: conda.get(k) for k in pip} == pip


def test_student_packages_are_dependencies_and_developer_tools_are_not():
    """`pip install .` gives JupyterLab with working widgets and plotly; pytest, playwright, ruff
    stay in the extras."""
    deps = set(_pip_requirements(_pyproject()["dependencies"]))
    assert {"jupyterlab", "ipywidgets", "jupyterlab-widgets", "ipykernel", "plotly", "anywidget"} <= deps
    assert not deps & {"pytest", "nbval", "playwright", "ruff", "distributed"}
    extras = _pyproject()["optional-dependencies"]
    assert "ruff>=0.5" in extras["dev"] and "pytest>=7.4" in extras["test"]


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


@pytest.mark.install
@pytest.mark.slow
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
    executed = json.loads(out.read_text())
    outputs = [o for c in executed["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert any("resnetlearn 0.1.0 | running on CPU" in "".join(o.get("text", "")) for o in outputs)
