"""How fast the live race of notebooks 00 / 03 answers on this machine, and whether its default
settings show the paper's contrast (3resnet below kα², the others above).

1. ``--grid``: the lr × wd grid (lr 0.05, 0.1, 0.2 × wd 0.001, 0.005, 0.01) of every learner at the
   race's default settings (N, m, epochs, seed), batched per learner; the best of each is what
   :data:`resnetlearn.classroom.race.RACE_LEARNERS` uses.
2. The default :class:`resnetlearn.classroom.live.LiveRace`, driven as a user would (click Train, wait), once
   with the plotly view and once with the PNG view: seconds from Train to the first frame, to the first
   frame that shows curves, to the end; final test errors; the epoch at which each curve first went
   below kα²; how long Stop takes mid-race.

    OMP_NUM_THREADS=1 python benchmarks/live_race.py [--grid] [--json benchmarks/results/live_race_cpu.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import threading
import time
from pathlib import Path

import torch

from resnetlearn.classroom.live import LiveRace
from resnetlearn.classroom.race import RACE_LEARNERS, RaceConfig
from resnetlearn.device import describe_device, select_device
from resnetlearn.learners.training import Protocol, RunOptions, train_models
from resnetlearn.targets.concept import parity_instance

LRS, WDS = (0.05, 0.1, 0.2), (0.001, 0.005, 0.01)


def grid(cfg: RaceConfig, device) -> dict:
    inst = parity_instance(alpha=cfg.alpha, beta=cfg.beta)
    tr = inst.sample(cfg.n_train, seed=cfg.seed, device=device)
    te = inst.sample(cfg.n_test, seed=cfg.seed + 1, device=device)
    lrs = [lr for lr in LRS for _ in WDS]
    wds = [wd for _ in LRS for wd in WDS]
    out = {}
    for spec in RACE_LEARNERS:
        t0 = time.perf_counter()
        res = train_models(tr, te, spec.learner, lrs=lrs, wds=wds, seeds=[cfg.seed] * len(lrs),
                           protocol=Protocol.quick(cfg.epochs), progress=False, options=RunOptions(device=device))
        errs = {f"lr {lr:g}, wd {wd:g}": round(float(e), 3) for lr, wd, e in zip(lrs, wds, res.test_error.tolist())}
        finite = {k: v for k, v in errs.items() if v == v}
        best = min(finite, key=finite.get)
        out[spec.label] = {"test_error": errs, "best": best, "seconds": round(time.perf_counter() - t0, 1)}
        print(f"grid {spec.label:14s} best {best} -> {finite[best]}  ({out[spec.label]['seconds']} s)", flush=True)
    return out


def race(view: str, device, cfg: RaceConfig) -> dict:
    t_build = time.perf_counter()
    r = LiveRace(cfg, device=device, view=view)
    build = time.perf_counter() - t_build
    r.train_btn.click()
    assert r.wait(600), "race did not finish"
    res = r.last_result
    thr = res.threshold
    below = {}
    for label, tr in res.results.items():
        ep = [e for e, v in zip(tr.epochs, tr.curves["test"][:, 0].tolist()) if v < thr]
        below[label] = ep[0] if ep else None
    out = {
        "view": r.view.kind, "build_widget_s": round(build, 2),
        "first_frame_s": round(r.job.first_frame_s, 2),
        "first_curves_s": round(r.first_data_frame_s, 2),
        "done_s": round(r.job.finished_s, 2),
        "frames_drawn": sum(1 for f in r.frames if f.generation == r.job.generation),
        "final_test_error": {k: round(v, 3) for k, v in res.final_errors().items()},
        "threshold_k_alpha2": round(thr, 4),
        "first_epoch_below_threshold": below,
        "contrast_shown": bool(res.final_errors()["3resnet(all)"] < thr
                               and all(v >= thr for k, v in res.final_errors().items() if k != "3resnet(all)")),
        "status": r.job.status_text,
    }
    # Stop mid-race
    r.train_btn.click()
    time.sleep(3.0)
    t0 = time.perf_counter()
    r.stop_btn.click()
    out["stop_s"] = round(time.perf_counter() - t0, 3)
    out["running_after_stop"] = r.running
    r.job.flush(5.0)
    print(f"{view:6s} first frame {out['first_frame_s']} s, first curves {out['first_curves_s']} s, "
          f"done {out['done_s']} s, stop {out['stop_s']} s; {out['final_test_error']}", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", action="store_true", help="also run the lr x wd grid behind RACE_LEARNERS")
    ap.add_argument("--device", default=None)
    ap.add_argument("--json", default=None, help="write the numbers to this file")
    args = ap.parse_args()
    dev = select_device(args.device)
    cfg = RaceConfig()
    out = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                    "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                    "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"), "device": describe_device(dev),
                    "python": platform.python_version(), "torch": torch.__version__},
        "command": "OMP_NUM_THREADS=1 python " + " ".join(sys.argv),
        "note": "2-core CPU shared with other jobs while measuring (load_average_at_start); times are wall-clock",
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "defaults": {"alpha": cfg.alpha, "beta": cfg.beta, "m": cfg.m, "n_train": cfg.n_train, "n_test": cfg.n_test,
                     "epochs": cfg.epochs, "chunk": cfg.chunk, "seed": cfg.seed, "kernel": cfg.key()["kernel"],
                     "learners": {x.label: {"lr": x.lr, "wd": x.wd} for x in cfg.learners}},
    }
    if args.grid:
        out["grid"] = grid(cfg, dev)
    out["race"] = {view: race(view, dev, cfg) for view in ("plotly", "png")}
    out["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    # let a kernel computation of a stopped race finish before the interpreter exits
    for t in threading.enumerate():
        if t.name.startswith(("race-", "resnetlearn-live")):
            t.join(30)


if __name__ == "__main__":
    main()
