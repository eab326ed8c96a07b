"""A notebook's Run All on a loaded CPU: torch's default threads against the lessons' setting (one thread,
resnetlearn.threads), each run with every core kept busy by a spinning process of ordinary priority.

The notebook runs as in JupyterLab (a python3 kernel, from notebooks/, a copy in memory: the file is not
rewritten), with OMP_NUM_THREADS removed from the kernel's environment so that the package decides. A last cell
added to the copy prints the thread count torch used. The default run sets RESNETLEARN_THREADS=torch (torch's own
default, one thread per core it sees); the lessons' run sets nothing. Both runs' checked printed outputs are
compared (float32 sums may differ with the thread count).

    python benchmarks/threads_under_load.py [--notebook 04_kernel_failure] [--busy N] [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
OUT = ROOT / "benchmarks" / "results" / "threads_under_load_cpu.json"
SPIN = "while True: pass"
THREADS_CELL = "import torch\nprint('torch threads:', torch.get_num_threads())"


def _cell_seconds(cell) -> float | None:
    ex = cell.metadata.get("execution", {})
    start, stop = ex.get("iopub.status.busy"), ex.get("iopub.status.idle")
    if not (start and stop):
        return None
    parse = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
    return round((parse(stop) - parse(start)).total_seconds(), 2)


def run_all(path: Path, env: dict) -> dict:
    """Run every cell of a copy of ``path`` in a kernel started with ``env``; wall seconds, the slowest cells,
    the thread count the kernel reported and the checked printed outputs."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(THREADS_CELL))
    t0 = time.perf_counter()
    NotebookClient(nb, kernel_name="python3", timeout=1800, record_timing=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute(env=env)
    wall = time.perf_counter() - t0
    code = [c for c in nb.cells if c.cell_type == "code"]
    times = [(_cell_seconds(c), i) for i, c in enumerate(code)]
    slowest = sorted((t, i) for t, i in times if t is not None)[::-1][:3]
    text = ["".join(o.get("text", "") for o in c.outputs if o.get("output_type") == "stream").strip() for c in code]
    checked = [t for c, t in zip(code, text)
               if t and "nbval-ignore-output" not in c.metadata.get("tags", []) and c.source != THREADS_CELL]
    return {"seconds": round(wall, 1), "torch_threads": int(text[-1].split()[-1]),
            "slowest_cells": [{"code_cell": i, "seconds": t, "first_line": code[i].source.splitlines()[0]}
                              for t, i in slowest],
            "checked_output": checked}


def _others() -> list[str]:
    """What else was running (processes above 5 % CPU, with their nice value), for the record."""
    ps = subprocess.run(["ps", "-eo", "pid,ni,pcpu,args", "--sort=-pcpu"], capture_output=True, text=True).stdout
    rows = [ln.strip() for ln in ps.splitlines()[1:] if ln.split(None, 3)[2].replace(".", "").isdigit()]
    return [r[:160] for r in rows if float(r.split(None, 3)[2]) >= 5.0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notebook", default="04_kernel_failure")
    ap.add_argument("--busy", type=int, default=os.cpu_count(), help="spinning processes (default: one per core)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    path = NOTEBOOKS / f"{args.notebook}.ipynb"
    if not path.is_file():
        ap.error(f"--notebook: no {path.relative_to(ROOT)}")
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "RESNETLEARN_THREADS")}
    base["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    settings = {"lessons (one thread)": base, "torch default": dict(base, RESNETLEARN_THREADS="torch")}
    record = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "command": "python benchmarks/threads_under_load.py" + "".join(f" {a}" for a in (argv or sys.argv[1:])),
              "notebook": path.name,
              "load": f"{args.busy} processes running `python -c '{SPIN}'` at nice 0 during both runs",
              "machine": {"platform": platform.platform(), "cpu_count": os.cpu_count(),
                          "affinity": len(os.sched_getaffinity(0)), "python": sys.version.split()[0]},
              "runs": {}}
    busy = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.busy)]
    try:
        time.sleep(2)
        record["running_at_start"] = _others()
        for name, env in settings.items():
            record["runs"][name] = run_all(path, env)
            print(f"{name:22s} {record['runs'][name]['seconds']:7.1f} s  "
                  f"(torch threads {record['runs'][name]['torch_threads']})", flush=True)
        record["running_at_end"] = _others()
    finally:
        for p in busy:
            p.kill()
            p.wait()
    a, b = (record["runs"][k] for k in settings)
    record["same_checked_output"] = a["checked_output"] == b["checked_output"]
    record["speedup"] = round(b["seconds"] / a["seconds"], 2)
    for run in record["runs"].values():
        run.pop("checked_output")
    args.out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(f"same checked output: {record['same_checked_output']}; default / lessons = {record['speedup']}; "
          f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
