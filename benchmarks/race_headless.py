"""The live race of notebooks 00 and 03 without any widget: how soon the first curves arrive and when the race
ends, at width m = 200 (the default) and m = 1000, on this machine's default device (the GPU when present).

:func:`resnetlearn.classroom.race.run_race` is the race's computation; the notebooks' ``LiveRace`` widget only draws its
frames. So these seconds are what a student waits for on this device, less the drawing. The script checks that
no widget library was imported (a GPU machine without JupyterLab runs it as is).

    OMP_NUM_THREADS=1 python benchmarks/race_headless.py [--widths 200 1000] [--device cuda] [--json FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch

from resnetlearn.classroom.race import RaceConfig, run_race
from resnetlearn.device import describe_device, select_device


def one_race(m: int, device) -> dict:
    cfg = dataclasses.replace(RaceConfig(), m=m)
    t0 = time.perf_counter()
    first_curve: list[float] = []
    frames = [0]

    def on_frame(state, force):
        frames[0] += 1
        if not first_curve and any(c["test"] for c in state["curves"].values()):
            first_curve.append(time.perf_counter() - t0)

    res = run_race(cfg, device=device, on_frame=on_frame)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return {"m": m, "epochs": cfg.epochs, "n_train": cfg.n_train, "learners": [x.label for x in cfg.learners],
            "kernel": cfg.key()["kernel"], "first_curve_s": round(first_curve[0], 2) if first_curve else None,
            "done_s": round(time.perf_counter() - t0, 2), "frames": frames[0], "interrupted": res.interrupted,
            "threshold": round(res.threshold, 4),
            "final_test_errors": {k: round(v, 3) for k, v in res.final_errors().items()}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--widths", type=int, nargs="+", default=[200, 1000])
    ap.add_argument("--device", default=None)
    ap.add_argument("--json", default=None, help="also write the numbers to this file")
    args = ap.parse_args()
    dev = select_device(args.device)
    out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "device": describe_device(dev),
           "torch": torch.__version__, "python": platform.python_version(),
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"), "command": "python " + " ".join(sys.argv),
           "load_average_at_start": [round(x, 2) for x in os.getloadavg()], "races": []}
    for m in args.widths:
        out["races"].append(one_race(m, dev))
        print(json.dumps(out["races"][-1]), flush=True)
    out["widget_libraries_imported"] = sorted(n for n in ("ipywidgets", "IPython.display", "anywidget")
                                              if n in sys.modules)
    out["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    if out["widget_libraries_imported"]:
        raise SystemExit(f"the headless race imported {out['widget_libraries_imported']}")


if __name__ == "__main__":
    main()
