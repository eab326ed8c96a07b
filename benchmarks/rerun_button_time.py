"""Time notebook 05's rerun button on its default run: a press of ``FigureRerun("fig2a", "quick")`` from an empty
store until its final status line, in one process as a notebook kernel runs it.

    OMP_NUM_THREADS=1 python benchmarks/rerun_button_time.py [--out benchmarks/results/rerun_button_cpu.json]

The store and the user's folder are temporary, so nothing is reused and nothing is written into the repository
except the measurement. The file records the wall time, the compute time summed over the points, the machine's
load average before and after (other work on the machine slows the run), the torch threads and the device;
:func:`resnetlearn.classroom.rerun.expected_time` reads it to tell the button's user how long a run takes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import torch

from resnetlearn.classroom.rerun import MEASUREMENT, FigureRerun

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--figure", default="fig2a")
    ap.add_argument("--scale", default="quick")
    ap.add_argument("--out", default=str(MEASUREMENT), help="the measurement file (default: %(default)s)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        button = FigureRerun(args.figure, args.scale, out=Path(tmp) / "store", device="cpu",
                             shipped=ROOT / "results" / args.scale, mine=Path(tmp) / "my-results" / args.scale)
        load_before = os.getloadavg()
        t0 = time.perf_counter()
        button.button.click()
        if not button.wait(None) or button.result is None:
            raise SystemExit(f"the run did not finish: {button.job.status_text}")
        wall = time.perf_counter() - t0
        load_after = os.getloadavg()
        res = button.result
    record = {
        "what": f"a press of FigureRerun({args.figure!r}, {args.scale!r}) (notebook 05's rerun button) from an "
                "empty store until its final status line",
        "figure": args.figure, "scale": args.scale, "points": len(res.rows), "reused_from_store": res.skipped,
        "wall_s": round(wall, 1),
        "compute_s": round(sum(float(r.get("seconds") or 0) for r in res.rows), 1),
        "device": "cpu", "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
        "load_average_1_5_15_before": [round(x, 2) for x in load_before],
        "load_average_1_5_15_after": [round(x, 2) for x in load_after],
        "torch": torch.__version__, "python": platform.python_version(), "machine": platform.machine(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '')} python benchmarks/rerun_button_time.py",
        "summary": res.summary,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: v for k, v in record.items() if k != "summary"}, indent=1))


if __name__ == "__main__":
    main()
