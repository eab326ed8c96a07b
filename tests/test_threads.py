"""Torch's threads from the CPU the process may really use (resnetlearn.threads): the cgroup quota read from fake
cgroup v2 and v1 folders, capped affinity, the environment's say, and a real Jupyter kernel that imports the
package running on one thread."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from resnetlearn import threads


@pytest.fixture(autouse=True)
def _keep_torch_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def _cgroup(tmp_path: Path, lines: str, files: dict[str, str]) -> tuple[Path, Path]:
    """A fake /sys/fs/cgroup (``files``: relative path → content) and a fake /proc/self/cgroup."""
    root = tmp_path / "cgroup"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text + "\n")
    proc = tmp_path / "proc_self_cgroup"
    proc.write_text(lines + "\n")
    return root, proc


@pytest.mark.parametrize("lines, files, quota", [
    # cgroup v2: the process's own limit, 1.5 CPUs
    ("0::/user.slice/app", {"user.slice/app/cpu.max": "150000 100000", "cpu.max": "max 100000"}, 1.5),
    # a tighter limit above the process's cgroup applies too
    ("0::/user.slice/app", {"user.slice/app/cpu.max": "150000 100000", "user.slice/cpu.max": "50000 100000"}, 0.5),
    # no limit anywhere
    ("0::/user.slice/app", {"user.slice/app/cpu.max": "max 100000"}, None),
    # in a container the path names the host's hierarchy, which is not mounted: the container's root is read
    ("0::/kubepods/pod1/abc", {"cpu.max": "100000 100000"}, 1.0),
    # cgroup v1, the cpu controller mounted with cpuacct (Binder-like: 1 CPU of the many shown)
    ("12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc", {"cpu,cpuacct/cpu.cfs_quota_us": "100000",
                                                          "cpu,cpuacct/cpu.cfs_period_us": "100000"}, 1.0),
    # cgroup v1 without a limit (quota -1), as on our development machine
    ("1:cpu:/", {"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"}, None),
    # nothing to read, or nothing readable
    ("", {}, None),
    ("garbage\n0::/", {"cpu.max": "lots 100000"}, None),
])
def test_cpu_quota_from_fake_cgroup_files(tmp_path, lines, files, quota):
    root, proc = _cgroup(tmp_path, lines, files)
    assert threads.cpu_quota(root, proc) == quota


@pytest.mark.parametrize("affinity, quota_line, cpus", [
    (4, "150000 100000", 1),   # 1.5 CPUs of quota on 4 cores: one thread is all the quota keeps busy
    (4, "50000 100000", 1),    # half a CPU: still one, never zero
    (2, "300000 100000", 2),   # a quota above the cores: the cores decide
    (8, "max 100000", 8),      # no quota: the affinity
])
def test_available_cpus_is_the_affinity_capped_by_the_quota(tmp_path, monkeypatch, affinity, quota_line, cpus):
    root, proc = _cgroup(tmp_path, "0::/", {"cpu.max": quota_line})
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(affinity)), raising=False)
    assert threads.available_cpus(root, proc) == cpus
    assert threads.lesson_threads(root, proc) == 1


def test_use_threads_takes_the_lessons_one_thread(monkeypatch):
    monkeypatch.delenv("RESNETLEARN_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    torch.set_num_threads(2)
    assert threads.use_threads() == 1 and torch.get_num_threads() == 1


def test_the_environment_decides_first(monkeypatch):
    torch.set_num_threads(1)
    monkeypatch.setenv("RESNETLEARN_THREADS", "2")
    assert threads.use_threads() == 2 and torch.get_num_threads() == 2
    monkeypatch.setenv("RESNETLEARN_THREADS", "torch")
    torch.set_num_threads(3)
    assert threads.use_threads() == 3 and torch.get_num_threads() == 3  # left alone
    monkeypatch.delenv("RESNETLEARN_THREADS")
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert threads.use_threads() == 3 and torch.get_num_threads() == 3  # torch applied it; left alone


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_bad_thread_variable_is_refused_by_name(monkeypatch, value):
    monkeypatch.setenv("RESNETLEARN_THREADS", value)
    with pytest.raises(ValueError, match="RESNETLEARN_THREADS must be a positive whole number or 'torch'"):
        threads.use_threads()


@pytest.mark.parametrize("n", [0, 1.5, True])
def test_a_bad_n_is_refused(n):
    with pytest.raises(ValueError, match="n must be a positive int"):
        threads.use_threads(n)


def test_outside_a_kernel_nothing_changes():
    torch.set_num_threads(2)
    assert not threads.in_kernel() and threads.for_notebooks() is None and torch.get_num_threads() == 2


def _kernel_threads(env: dict) -> str:
    """torch's thread count printed by a real python3 Jupyter kernel after ``import resnetlearn``."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", env=env)
    try:
        printed = []
        kc.execute_interactive("import torch, resnetlearn; print(torch.get_num_threads())", timeout=120,
                               output_hook=lambda msg: printed.append(msg["content"].get("text", "")))
        return "".join(printed).strip()
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.mark.notebook
@pytest.mark.skipif(threads.available_cpus() < 2, reason="needs two CPUs to tell one thread from the default")
def test_a_notebook_kernel_runs_on_one_thread():
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "RESNETLEARN_THREADS")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    assert _kernel_threads(env) == "1"
    assert _kernel_threads(dict(env, RESNETLEARN_THREADS="2")) == "2"
