"""Peak memory of each lab notebook under a Binder-like memory cap.

mybinder.org gives a session about 1-2 GB of memory. Each notebook of the lab path runs headless, top to bottom,
as its committed outputs are made (one torch thread, from ``notebooks/`` so that relative paths resolve), in a
kernel whose process tree is capped at ``--limit`` bytes (2 GiB by default). The notebook executed is a copy
(``notebooks/`` is never written) and the executed copy is kept under ``--work`` (default /tmp).

The cap: a memory cgroup created for each notebook under this process's own (cgroup v1
``memory.limit_in_bytes`` and ``memory.memsw.limit_in_bytes`` where swap accounting exists, or cgroup v2
``memory.max`` and ``memory.swap.max``); the runner that starts the kernel joins it first, so the kernel and
anything it starts inherit it. Where no writable memory cgroup exists, ``prlimit --as`` would cap virtual
memory, which torch reserves generously; the script then runs uncapped and says so (``"cap": "none"``).
(``systemd-run --scope -p MemoryMax=2G`` needs systemd as PID 1; on the development machine it is not, and
the cgroup v1 memory controller is what worked.)

Recorded per notebook: the kernel's peak resident set (``ru_maxrss`` of the kernel process, read by a cell
appended to the copy, and the largest of its waited-for children), the cgroup's peak charge (RSS plus page cache
of the runner and kernel, ``memory.max_usage_in_bytes`` / ``memory.peak``), how often the cap was hit, the wall
time, whether it finished, and how many of the notebook's code cells had started (a kernel killed at the cap
after its last cell dies in the appended measuring cell: every cell started, not finished).

    python benchmarks/notebook_memory.py [--limit 2G] [--lower 1G] [--only 03_hierarchical_learning ...]

``--lower``: a notebook whose kernel peaked above this smaller cap (Binder's low end) is run again under it,
to see whether it still finishes there (the kernel gives back reclaimable pages under pressure).

writes ``benchmarks/results/notebook_memory_cpu.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LAB = ["00_welcome", "01_concept_class", "02_complexity", "03b_kernel_primer", "03_hierarchical_learning",
       "04_kernel_failure", "06_lazy_regime"]
"""The lab path, in order (notebooks/README.md)."""
OUT = ROOT / "benchmarks" / "results" / "notebook_memory_cpu.json"
MEASURE = """import json as _j, resource as _r
print("NOTEBOOK_MEMORY " + _j.dumps({"self_kib": _r.getrusage(_r.RUSAGE_SELF).ru_maxrss,
                                     "children_kib": _r.getrusage(_r.RUSAGE_CHILDREN).ru_maxrss}))"""


def _size(text: str) -> int:
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def _own_memory_cgroup() -> tuple[str, Path] | None:
    """("v1" | "v2", the directory of this process's memory cgroup) when children can be created in it."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            d = Path("/sys/fs/cgroup/memory") / path.lstrip("/")
            if d.is_dir() and os.access(d, os.W_OK):
                return "v1", d
        if controllers == "":
            for base in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
                d = base / path.lstrip("/")
                if (d / "cgroup.controllers").is_file() and "memory" in (d / "cgroup.controllers").read_text() \
                        and os.access(d, os.W_OK):
                    return "v2", d
    return None


class Cap:
    """A memory cgroup capped at ``limit`` bytes (swap included where it can be), removed on exit."""

    def __init__(self, limit: int, name: str):
        self.limit, self.kind, self.dir = limit, None, None
        found = _own_memory_cgroup()
        if found is None:
            return
        kind, parent = found
        d = parent / f"resnetlearn_nbmem_{os.getpid()}_{name}"
        try:
            d.mkdir()
            if kind == "v1":
                (d / "memory.limit_in_bytes").write_text(str(limit))
                if (d / "memory.memsw.limit_in_bytes").exists():
                    (d / "memory.memsw.limit_in_bytes").write_text(str(limit))
            else:
                (d / "memory.max").write_text(str(limit))
                if (d / "memory.swap.max").exists():
                    (d / "memory.swap.max").write_text("0")
        except OSError as e:
            print(f"cannot create a memory cgroup in {parent} ({e}); running uncapped", file=sys.stderr)
            if d.exists():
                d.rmdir()
            return
        self.kind, self.dir = kind, d

    def describe(self) -> str:
        if self.dir is None:
            return "none"
        what = "memory.limit_in_bytes (+memsw)" if self.kind == "v1" else "memory.max (swap.max 0)"
        return f"cgroup {self.kind} {what} = {self.limit} bytes"

    def join(self) -> None:
        """Called in the runner (preexec_fn): move this process into the cgroup."""
        if self.dir is not None:
            (self.dir / "cgroup.procs").write_text(str(os.getpid()))

    def peak_and_hits(self) -> tuple[int | None, int | None]:
        if self.dir is None:
            return None, None
        if self.kind == "v1":
            peak = int((self.dir / "memory.max_usage_in_bytes").read_text())
            hits = sum(int((self.dir / f).read_text()) for f in ("memory.failcnt", "memory.memsw.failcnt")
                       if (self.dir / f).exists())
        else:
            peak = int((self.dir / "memory.peak").read_text()) if (self.dir / "memory.peak").exists() else None
            events = dict(ln.split() for ln in (self.dir / "memory.events").read_text().splitlines())
            hits = int(events.get("max", 0)) + int(events.get("oom_kill", 0))
        return peak, hits

    def oom_kills(self) -> int | None:
        if self.dir is None:
            return None
        name = "memory.oom_control" if self.kind == "v1" else "memory.events"
        fields = dict(ln.split() for ln in (self.dir / name).read_text().splitlines())
        return int(fields.get("oom_kill", 0))

    def remove(self) -> None:
        if self.dir is not None:
            for _ in range(50):
                try:
                    self.dir.rmdir()
                    return
                except OSError:
                    time.sleep(0.1)


def run_one(name: str, work: Path) -> dict:
    """In the (capped) runner: execute a copy of the notebook with a measuring cell appended."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    for cell in nb.cells:  # the committed outputs and counts gone: what the copy shows is this run's
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.cells.append(nbformat.v4.new_code_cell(MEASURE))
    start = time.perf_counter()
    error = None
    try:
        NotebookClient(nb, timeout=900, kernel_name="python3",
                       resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    except Exception as e:  # noqa: BLE001 - recorded, e.g. the kernel died at the cap
        error = f"{type(e).__name__}: {str(e)[:300]}"
    wall = time.perf_counter() - start
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, work / f"{name}.ipynb")
    measured = None
    for out in nb.cells[-1].get("outputs", []):
        text = out.get("text", "")
        if "NOTEBOOK_MEMORY " in text:
            measured = json.loads(text.split("NOTEBOOK_MEMORY ", 1)[1])
    code = [c for c in nb.cells[:-1] if c.cell_type == "code"]
    return {"wall_s": round(wall, 1), "error": error, "kernel": measured,
            "cells_run": sum(c.get("execution_count") is not None for c in code), "code_cells": len(code)}


def _measure(name: str, limit: int, work: Path, env: dict) -> tuple[dict, str]:
    """Run one notebook in a runner under a fresh cap of ``limit`` bytes; its row and the cap's description."""
    cap = Cap(limit, name)
    cap_text = cap.describe()
    proc = subprocess.run([sys.executable, __file__, "--run-one", name, "--work", str(work)],
                          capture_output=True, text=True, env=env, preexec_fn=cap.join)
    result = {"error": f"runner exited with status {proc.returncode}: {proc.stderr[-500:]}"}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
    peak, hits = cap.peak_and_hits()
    oom = cap.oom_kills()
    cap.remove()
    kernel = result.get("kernel") or {}
    row = {
        "limit_bytes": limit,
        "kernel_peak_rss_mib": round(kernel["self_kib"] / 1024, 1) if kernel else None,
        "kernel_children_peak_rss_mib": round(kernel["children_kib"] / 1024, 1) if kernel else None,
        "cgroup_peak_mib": round(peak / 2**20, 1) if peak is not None else None,
        "cap_hits": hits, "oom_kills": oom, "wall_s": result.get("wall_s"),
        "finished": result.get("error") is None and bool(kernel), "error": result.get("error"),
        "code_cells_started": result.get("cells_run"), "code_cells": result.get("code_cells"),
    }
    print(f"{name:28s} cap {limit / 2**30:.2f} GiB: kernel peak RSS {row['kernel_peak_rss_mib']} MiB, cgroup peak "
          f"{row['cgroup_peak_mib']} MiB, cap hits {hits}, {row['wall_s']} s, finished {row['finished']}", flush=True)
    return row, cap_text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", default="2G", help="memory cap of each notebook's kernel tree (default 2G)")
    ap.add_argument("--lower", default=None,
                    help="rerun under this smaller cap each notebook whose kernel peaked above it (e.g. 1G)")
    ap.add_argument("--only", nargs="*", default=None, help="notebook names (default: the lab path)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/notebook_memory"),
                    help="folder for the executed copies (default /tmp/notebook_memory)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--run-one", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.run_one:  # the runner inside the cap
        print("RESULT " + json.dumps(run_one(args.run_one, args.work)), flush=True)
        return 0
    names = args.only or LAB
    limit = _size(args.limit)
    lower = _size(args.lower) if args.lower else None
    (args.work / "lower").mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    rows = {}
    cap_text = None
    for name in names:
        row, cap_text = _measure(name, limit, args.work, env)
        if lower is not None and (row["kernel_peak_rss_mib"] or 0) * 2**20 > lower:
            row[f"under_{args.lower}"], _ = _measure(name, lower, args.work / "lower", env)
        rows[name] = row
    fits = all(r["finished"] and (r["kernel_peak_rss_mib"] or 0) * 2**20 < limit for r in rows.values())
    info = {
        "limit_bytes": limit, "cap": cap_text,
        "what": "peak resident memory of each lab notebook's kernel (ru_maxrss), executed top to bottom as a copy "
                "under the cap; cgroup_peak_mib: the peak charged to the cap's cgroup (runner and kernel, page cache "
                "included; library pages already cached by other processes are charged elsewhere, so it can be "
                "below the kernel's RSS)",
        "notebooks": rows, "all_fit": fits,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python benchmarks/notebook_memory.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {"platform": platform.platform(), "cpu_count": os.cpu_count(), "OMP_NUM_THREADS": "1",
                    "python": platform.python_version()},
        "tools": {"prlimit": shutil.which("prlimit"), "systemd-run": shutil.which("systemd-run")},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(info, indent=1) + "\n")
    print(f"all fit under {args.limit}: {fits}; written {args.out}")
    return 0 if fits else 1


if __name__ == "__main__":
    sys.exit(main())
