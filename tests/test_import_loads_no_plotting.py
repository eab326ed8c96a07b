"""``import resnetlearn`` and each subpackage below the classroom load no plotting or widget library (a script, a
worker process or the command line pays for none of them), while the classroom's figures stay one attribute or one
import away; and every package's ``__all__`` names things that exist."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DISPLAY_LIBRARIES = ("matplotlib", "plotly", "ipywidgets")
PACKAGES = ("resnetlearn", "resnetlearn.kernels", "resnetlearn.learners", "resnetlearn.reproduce",
            "resnetlearn.targets", "resnetlearn.classroom")


def _loaded_after(statements: str) -> list[str]:
    """The display libraries in ``sys.modules`` of a fresh interpreter (this tree first on its path) after
    running ``statements``."""
    code = (f"import json, sys\n{statements}\n"
            f"print(json.dumps(sorted(m for m in {DISPLAY_LIBRARIES!r} if m in sys.modules)))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("package", PACKAGES)
def test_importing_a_package_loads_no_display_library(package):
    assert _loaded_after(f"import {package}") == []


def test_the_classroom_figures_load_matplotlib_when_asked():
    """The check above can see a display library: the lazy ``resnetlearn.plots`` and an import of the
    classroom's plots each load matplotlib."""
    assert "matplotlib" in _loaded_after("import resnetlearn\nresnetlearn.plots.show")
    assert "matplotlib" in _loaded_after("from resnetlearn.classroom import plots")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_in_all_exists(package):
    module = importlib.import_module(package)
    for name in module.__all__:
        assert hasattr(module, name) or importlib.util.find_spec(f"{package}.{name}") is not None, name
