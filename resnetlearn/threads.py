"""Torch's CPU threads from the CPU time this process may really use.

torch starts one thread per core it sees. A container (Binder, a classroom server) often sees more cores than its
CPU quota lets it use, and on a shared machine the cores are busy with other work; either way extra threads wait
on each other. The lessons' models are small (a few hundred hidden units, batches of 50), too small for a second
thread to help, so in a notebook one thread is both the fastest and the setting the committed outputs were
computed with (float32 sums depend on the thread count).

* :func:`cpu_quota` — the CPUs the cgroup quota allows (cgroup v2 ``cpu.max``, v1 ``cpu.cfs_quota_us`` /
  ``cpu.cfs_period_us``, the smallest along the process's cgroup path), ``None`` when unlimited
* :func:`available_cpus` — the CPUs this process may run on (``os.sched_getaffinity``) capped by that quota
* :func:`lesson_threads` — the threads for the lessons: one, never more than :func:`available_cpus`
* :func:`use_threads` — set torch's thread count; :func:`for_notebooks` does it on import of
  :mod:`resnetlearn.classroom` inside a Jupyter kernel

The environment decides first: ``RESNETLEARN_THREADS`` (a positive number, or ``torch`` for torch's own
default), then ``OMP_NUM_THREADS`` (read by torch itself), then :func:`lesson_threads`.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")
LESSON_THREADS = 1
"""The lessons' models are small: one thread (measured in benchmarks/results/threads_under_load_cpu.json)."""
ENV = "RESNETLEARN_THREADS"


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _ancestors(relative: str) -> list[str]:
    """``/a/b`` → ``["a/b", "a", ""]``: a cgroup and every cgroup above it (a limit anywhere above applies)."""
    parts = [p for p in relative.split("/") if p]
    return ["/".join(parts[:i]) for i in range(len(parts), -1, -1)]


def _ratio(quota: str | None, period: str | None) -> float | None:
    """quota / period in CPUs; ``None`` for no limit ("max", -1) or anything unreadable."""
    try:
        q, p = int(quota), int(period)
    except (TypeError, ValueError):
        return None
    return q / p if q > 0 and p > 0 else None


def _v2_quota(folder: Path) -> float | None:
    text = _read(folder / "cpu.max") or ""  # "max 100000" (no limit) or "150000 100000" (1.5 CPUs)
    quota, _, period = text.partition(" ")
    return _ratio(quota, period)


def _v1_quota(folder: Path) -> float | None:
    return _ratio(_read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us"))  # -1: no limit


def cpu_quota(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> float | None:
    """CPUs' worth of time the cgroup quota allows this process (1.5 = one and a half CPUs).

    The smallest limit along its cgroup path and above is taken (cgroup v2 ``cpu.max``; v1 ``cpu.cfs_quota_us`` over
    ``cpu.cfs_period_us``). In a container the process's cgroup path may name the host's hierarchy: folders that do
    not exist are skipped, so the container's own root (``root`` itself) is read.

    Parameters
    ----------
    root : Path, default Path("/sys/fs/cgroup")
        The cgroup file system.
    proc_cgroup : Path, default Path("/proc/self/cgroup")
        The file naming this process's cgroups.

    Returns
    -------
    float or None
        None when there is no limit or no cgroup to read.
    """
    text = _read(proc_cgroup) or ""
    limits = []
    for line in text.splitlines():
        if line.count(":") < 2:
            continue
        _, controllers, relative = line.split(":", 2)
        if controllers == "":  # cgroup v2: "0::/path"
            folders = [root / rel for rel in _ancestors(relative)]
            limits += [_v2_quota(f) for f in folders]
        elif "cpu" in controllers.split(","):  # cgroup v1: "4:cpu,cpuacct:/path"
            for mount in (root / controllers, root / "cpu,cpuacct", root / "cpu"):
                limits += [_v1_quota(mount / rel) for rel in _ancestors(relative)]
    if not text:  # no /proc/self/cgroup: read the root's files alone
        limits = [_v2_quota(root), _v1_quota(root / "cpu"), _v1_quota(root / "cpu,cpuacct")]
    limits = [q for q in limits if q is not None]
    return min(limits) if limits else None


def available_cpus(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> int:
    """The CPUs this process may run on (its affinity), capped by the cgroup quota rounded down; at least 1.

    Parameters
    ----------
    root : Path, default Path("/sys/fs/cgroup")
        The cgroup file system.
    proc_cgroup : Path, default Path("/proc/self/cgroup")
        The file naming this process's cgroups.

    Returns
    -------
    int
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        cpus = os.cpu_count() or 1
    quota = cpu_quota(root, proc_cgroup)
    if quota is not None:
        cpus = min(cpus, max(1, math.floor(quota)))
    return max(1, cpus)


def lesson_threads(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> int:
    """The torch threads for the lessons' small models: :data:`LESSON_THREADS`, never more than the CPUs available.

    Parameters
    ----------
    root : Path, default Path("/sys/fs/cgroup")
        The cgroup file system.
    proc_cgroup : Path, default Path("/proc/self/cgroup")
        The file naming this process's cgroups.

    Returns
    -------
    int
    """
    return min(LESSON_THREADS, available_cpus(root, proc_cgroup))


def use_threads(n: int | None = None) -> int:
    """Set torch's intra-op thread count and return it.

    Parameters
    ----------
    n : int or None, default None
        A positive number of threads. None reads the environment: ``RESNETLEARN_THREADS`` (a positive number, or
        ``torch`` to leave torch's default), then ``OMP_NUM_THREADS`` (which torch already applied: left as it is),
        and otherwise takes :func:`lesson_threads`.

    Returns
    -------
    int
        The thread count in force.

    Raises
    ------
    ValueError
        If ``n`` or ``RESNETLEARN_THREADS`` is not a positive whole number (or ``torch``).
    """
    import torch

    if n is None:
        wanted = os.environ.get(ENV, "").strip()
        if wanted == "torch" or (not wanted and os.environ.get("OMP_NUM_THREADS")):
            return torch.get_num_threads()
        if wanted:
            if not wanted.isdigit() or int(wanted) < 1:
                raise ValueError(f"{ENV} must be a positive whole number or 'torch', got {wanted!r}")
            n = int(wanted)
        else:
            n = lesson_threads()
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int or None, got {n!r}")
    torch.set_num_threads(n)
    return n


def in_kernel() -> bool:
    """Whether this code runs in a Jupyter kernel (IPython's kernel shell), not a script or the command line.

    Returns
    -------
    bool
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def for_notebooks() -> int | None:
    """Set torch's threads for a notebook: :func:`use_threads` from the environment or the lessons' setting.

    Elsewhere (the command line, a script, the tests) nothing changes.

    Returns
    -------
    int or None
        The thread count set in a Jupyter kernel, else None.
    """
    return use_threads() if in_kernel() else None
