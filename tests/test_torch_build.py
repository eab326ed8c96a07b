"""The Makefile installs the torch build the machine can use: the CPU build where no NVIDIA driver is found
(no ``nvidia-smi`` on PATH), PyPI's (CUDA on Linux) where one is; TORCH_BUILD and TORCH_INDEX override it, and
a CPU install takes a local wheel before PyTorch's CPU index. Each case runs make with a PATH of our own: a
folder holding ``uname`` and ``id`` (the programs the Makefile's variables call) and ``touch``, a fake ``nvidia-smi``
where a driver is to be seen, a fake ``uname`` for macOS. The install recipe itself runs against a fake venv
python that records its arguments."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PIN = 'pip install "torch==2.13.0"'

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _path(tmp_path: Path, *, nvidia: bool, system: str = "Linux") -> str:
    """A PATH with only what the Makefile's detection needs, plus a fake nvidia-smi when ``nvidia``."""
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    for tool in ("id", "touch"):
        (bin_ / tool).symlink_to(shutil.which(tool))
    _script(bin_ / "uname", f"echo {system}")
    if nvidia:
        _script(bin_ / "nvidia-smi", "echo 'NVIDIA-SMI 550.00'")
    return str(bin_)


def _make(tmp_path: Path, *args: str, nvidia: bool, system: str = "Linux", dry: bool = True):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH", "MAKE"))}
    env["PATH"] = _path(tmp_path, nvidia=nvidia, system=system)
    venv = tmp_path / "venv"
    cmd = [shutil.which("make"), *(["-n"] if dry else []), "-W", "pyproject.toml", f"{venv}/.installed",
           f"VENV={venv}", "PYTHON=/bin/true", *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def _torch_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if "torch==2.13.0" in ln and "pip install" in ln]


def test_without_nvidia_smi_the_cpu_build_local_wheel_first(tmp_path):
    proc = _make(tmp_path, nvidia=False)
    assert proc.returncode == 0, proc.stderr
    assert "the cpu build of torch==2.13.0: no NVIDIA driver was found (no nvidia-smi on PATH)" in proc.stdout
    (line,) = _torch_lines(proc.stdout)
    local, fallback = line.split("; else ")
    assert f'{PIN} --no-index --no-deps' in local and CPU_INDEX not in local
    assert f"{PIN} --index-url {CPU_INDEX}" in fallback


def test_with_nvidia_smi_pypi_s_cuda_build(tmp_path):
    proc = _make(tmp_path, nvidia=True)
    assert proc.returncode == 0, proc.stderr
    assert f"the cuda build of torch==2.13.0: an NVIDIA driver was found ({tmp_path}/bin/nvidia-smi)" in proc.stdout
    (line,) = _torch_lines(proc.stdout)
    assert line.endswith(PIN) and "--index" not in line


@pytest.mark.parametrize("nvidia, build, expect", [(True, "cpu", "cpu"), (False, "cuda", "cuda")])
def test_torch_build_overrides_the_detection(tmp_path, nvidia, build, expect):
    proc = _make(tmp_path, f"TORCH_BUILD={build}", nvidia=nvidia)
    assert proc.returncode == 0, proc.stderr
    assert f"the {expect} build of torch==2.13.0: set by you" in proc.stdout
    (line,) = _torch_lines(proc.stdout)
    assert (CPU_INDEX in line) == (expect == "cpu")


def test_macos_takes_pypi_s_wheel_which_is_cpu_already(tmp_path):
    proc = _make(tmp_path, nvidia=False, system="Darwin")
    (line,) = _torch_lines(proc.stdout)
    assert "the cpu build" in proc.stdout and line.endswith(PIN)


def test_torch_index_wins(tmp_path):
    index = "https://example.org/simple"
    proc = _make(tmp_path, f"TORCH_INDEX={index}", nvidia=False)
    (line,) = _torch_lines(proc.stdout)
    assert line.endswith(f"{PIN} --index-url {index}")


def test_a_bad_torch_build_is_refused_naming_the_choices(tmp_path):
    proc = _make(tmp_path, "TORCH_BUILD=gpu", nvidia=False)
    assert proc.returncode != 0
    assert "TORCH_BUILD must be cpu or cuda, got 'gpu'" in proc.stderr


@pytest.mark.parametrize("local", [True, False], ids=["local wheel", "no local wheel"])
def test_the_cpu_recipe_runs_the_local_wheel_then_the_index(tmp_path, local):
    """The recipe itself, run with a fake venv python that logs each call and has a local wheel or not:
    with one, torch comes without any index and then its dependencies from pip's usual ones (nothing needs
    the CPU index, as on CI); without, from PyPI's CPU-only index."""
    log = tmp_path / "calls.log"
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    fail = "" if local else 'case "$*" in *--no-index*) exit 1;; esac\n'
    _script(python, f'echo "$*" >> {log}\n{fail}exit 0')
    proc = _make(tmp_path, nvidia=False, dry=False)
    assert proc.returncode == 0, proc.stderr
    torch_calls = [c for c in log.read_text().splitlines() if "torch==2.13.0" in c]
    first = "-m pip install torch==2.13.0 --no-index --no-deps"
    if local:
        assert torch_calls == [first, "-m pip install torch==2.13.0"]
        assert "torch: from a local wheel" in proc.stdout
    else:
        assert torch_calls == [first, f"-m pip install torch==2.13.0 --index-url {CPU_INDEX}"]
        assert f"torch: from {CPU_INDEX}" in proc.stdout
    assert log.read_text().splitlines()[-1] == "-m pip install -e ."
