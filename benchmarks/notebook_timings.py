"""How long each lesson takes on this machine, and how quickly the live
trainer of notebook 03 answers (issue: notebooks must be classroom-fast).

Executes a copy of every notebook in ``notebooks/`` top to bottom in a fresh
kernel (the committed files are not touched) and times it; then clicks Train
on a default :class:`resnetlearn.live.LiveTrainer` and measures the time from
the click to the first plot update and to the end of the run. Prints a table
and the key printed lines of every notebook (the numbers its demos show).

    python benchmarks/notebook_timings.py [--json benchmarks/results/notebook_timings_cpu.json]
"""

import argparse
import json
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from resnetlearn.device import describe_device, select_device
from resnetlearn.live import LiveTrainer

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def time_notebook(path: Path) -> tuple[float, list[str]]:
    """Run it in memory from its own folder (relative paths keep working, the
    file is not rewritten); return the wall time and the text printed by the
    cells whose output nbval checks."""
    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    where = {"metadata": {"path": str(path.parent)}}
    NotebookClient(nb, timeout=1200, kernel_name="python3", resources=where).execute()
    wall = time.perf_counter() - t0
    checked = ["".join(o.get("text", "") for o in c.outputs if o.get("output_type") == "stream").strip()
               for c in nb.cells if c.cell_type == "code" and "nbval-ignore-output" not in c.metadata.get("tags", [])]
    return wall, [t for t in checked if t]


def time_live_trainer(device=None) -> dict:
    t = LiveTrainer(device=device, auto=False)
    t.train_btn.click()
    t.wait()
    return dict(first_plot_s=round(t.first_plot_s, 2), status=t.job.status_text,
                test_error=round(float(t.last_result.test_error[0]), 4), epochs=t.cfg.epochs, m=t.cfg.m)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None, help="also write the numbers to this file")
    ap.add_argument("--device", default=None)
    args = ap.parse_args()
    out = {"device": describe_device(select_device(args.device)), "notebooks": {}}
    for path in sorted(NOTEBOOKS.glob("[0-9]*.ipynb")):
        wall, checked = time_notebook(path)
        out["notebooks"][path.name] = {"seconds": round(wall, 1), "checked_output": checked}
        print(f"{path.name:36s} {wall:7.1f} s", flush=True)
    out["live_trainer"] = time_live_trainer(args.device)
    print(f"live trainer: first plot {out['live_trainer']['first_plot_s']} s after Train; "
          f"{out['live_trainer']['status']}")
    for name, info in out["notebooks"].items():
        print(f"\n== {name}\n" + "\n".join(info["checked_output"]))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
