"""What it takes for SGD on Figure 4(a)'s problem (arXiv v3 §8.2: d = 40, N = 5000) to fit or to generalise, measured.

Our cpu-scale Figure 4 selects lr 0.5, wd 1e-3 and ends at training error 0.934-0.935 and test error 1.006-1.007
(predicting 0: 1.0), so SGD never fit its training set there. This probe trains 2layer_signs (only W trained, a
fixed at ±1/√m, m/2 of each sign) and reports each run's training error, test error and ‖W‖_F. §8.2 names the
network, the data, the target and the lr/wd set {1, 2, 5}·10^k, but no initialisation, epochs or mini-batch for
d = 40 (it names a mini-batch of 100 only for d = 100). Our cpu-scale runs fill these from §8.1 (N(0, 1/m) init,
800 epochs, mini-batch 50, momentum 0.9, lr ÷ 10 half-way); every option below varies one of those choices of ours:

* ``--w-scale s``: W's entries drawn N(0, s²/m), §8.1's N(0, 1/m) when s = 1;
* ``--a-scale c``: the fixed output signs ±c/√m, §8.2's ±1/√m when c = 1. For the ReLU, scaling a by c is the
  same training run, step for step, as scaling W's initialisation by c with lr × c² and wd ÷ c² (the ReLU is
  positively homogeneous, c·aᵀσ(Wx) = aᵀσ(cWx); W's gradient and momentum scale with it), so the W-scale × lr
  grid already covers it;
* ``--epochs``, ``--batch``, ``--n-train``: one or several values, each crossed with the lr × wd grid and seeds.

Each (N, m, epochs, batch, s, c) setting trains its lr × wd × seed cells as one batched call; its wall time
divided by the number of networks is each run's ``seconds``. With ``--json`` every run is appended to that file
(configuration, errors, ‖W‖_F, divergence, seconds, command, device, torch version, date).

    nice -n 19 env OMP_NUM_THREADS=1 python probes/probe_fig4_sgd.py --widths 200 --lrs 0.5 1 2 5 10 20 \\
        --epochs 2000 --out probes/results/probe_fig4_sgd_fit_cpu.txt
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import shlex
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import torch

from resnetlearn.device import describe_device
from resnetlearn.learners import networks
from resnetlearn.learners.training import Learner, Protocol, train_models
from resnetlearn.targets.concept import data_split, parity6_target

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def scaled_init(w_scale: float, a_scale: float):
    """Inside the block, every drawn initialisation has W × ``w_scale`` and the fixed signs A × ``a_scale``."""
    draw = networks.init_params

    def scaled(*args, **kwargs):
        p = draw(*args, **kwargs)
        return {**p, "W": p["W"] * w_scale, "A": p["A"] * a_scale}

    with mock.patch.object(networks, "init_params", scaled):
        yield


def _positive(kind):
    def parse(text):
        value = kind(text)
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value
    return parse


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=_positive(int), default=40)
    ap.add_argument("--n-train", type=_positive(int), nargs="+", default=[5000])
    ap.add_argument("--n-test", type=_positive(int), default=2000)
    ap.add_argument("--widths", type=_positive(int), nargs="+", default=[200])
    ap.add_argument("--lrs", type=_positive(float), nargs="+", default=[0.5, 1.0, 2.0, 5.0, 10.0, 20.0])
    ap.add_argument("--wds", type=float, nargs="+", default=[0.0])
    ap.add_argument("--epochs", type=_positive(int), nargs="+", default=[2000])
    ap.add_argument("--batch", type=_positive(int), nargs="+", default=[50])
    ap.add_argument("--w-scale", type=_positive(float), nargs="+", default=[1.0],
                    help="W's initial standard deviation as a multiple of §8.1's 1/√m")
    ap.add_argument("--a-scale", type=_positive(float), nargs="+", default=[1.0],
                    help="the fixed output signs' magnitude as a multiple of §8.2's 1/√m")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0], help="initialisation seeds (the data seed is 0)")
    ap.add_argument("--checks", type=_positive(int), default=8,
                    help="evaluate train and test error this many times, evenly, during each run")
    ap.add_argument("--probe", default="", help="a name for this batch of runs, stored in the JSON")
    ap.add_argument("--json", default=None, help="append every run to this JSON file (a list of records)")
    ap.add_argument("--out", default=str(ROOT / "probes" / "results" / "probe_fig4_sgd_fit_cpu.txt"))
    args = ap.parse_args(argv)
    if any(w < 0 for w in args.wds):
        ap.error(f"--wds must be >= 0, got {args.wds}")
    if any(s < 0 for s in args.seeds):
        ap.error(f"--seeds must be >= 0, got {args.seeds}")
    command = "python probes/probe_fig4_sgd.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    device = describe_device()
    target = parity6_target(args.d)
    lines = [f"Figure 4(a) problem: d = {args.d}, test {args.n_test}, data seed 0; 2layer_signs (W trained, a fixed "
             f"±c/√m), W init N(0, s²/m), momentum 0.9, lr ÷ 10 half-way; ours: N, epochs, batch, s, c as below "
             f"(§8.1's: 800 epochs, batch 50, s = c = 1); predicting 0 gives 1.0, the paper's SGD best 0.69",
             f"{'N':>6} {'m':>5} {'epochs':>6} {'batch':>5} {'s':>5} {'c':>5} {'lr':>6} {'wd':>7} {'seed':>4} "
             f"{'train':>7} {'test':>7} {'‖W‖_F':>7} {'diverged':>8} {'min test (epoch)':>16}"]
    print("\n".join(lines), flush=True)
    records = []
    for n_train, m, epochs, batch, s, c in itertools.product(args.n_train, args.widths, args.epochs, args.batch,
                                                             args.w_scale, args.a_scale):
        split = data_split(target, n_train, n_test=args.n_test, seed=0)  # Figure 4's data seed
        cells = list(itertools.product(args.lrs, args.wds, args.seeds))
        t0 = time.perf_counter()
        with scaled_init(s, c):
            res = train_models(split.train, split.test, Learner("2layer_signs", "hidden", m=m),
                               lrs=[x[0] for x in cells], wds=[x[1] for x in cells], seeds=[x[2] for x in cells],
                               protocol=Protocol(epochs=epochs, batch_size=batch,
                                                 eval_every=max(1, epochs // args.checks)),
                               progress=False)
        seconds = time.perf_counter() - t0
        start = len(lines)
        curve_epochs = [int(e) for e in res.epochs]
        for g, r in enumerate(res.rows()):
            test_curve = [float(v) for v in res.curves["test"][:, g]]
            train_curve = [float(v) for v in res.curves["train"][:, g]]
            finite = [(v, e) for v, e in zip(test_curve, curve_epochs) if math.isfinite(v)]
            best, best_epoch = min(finite) if finite else (math.nan, -1)
            lines.append(f"{n_train:6d} {m:5d} {epochs:6d} {batch:5d} {s:5g} {c:5g} {r['lr']:6g} {r['wd']:7g} "
                         f"{r['seed']:4d} {r['train_error']:7.3f} {r['test_error']:7.3f} {r['frobenius_W']:7.1f} "
                         f"{str(r['diverged']):>8} {best:9.3f} ({best_epoch:4d})")
            records.append(dict(probe=args.probe, d=args.d, n_test=args.n_test, data_seed=0, w_scale=s, a_scale=c,
                                **{k: v for k, v in r.items() if k not in ("train_error", "test_error",
                                                                             "frobenius_W")},
                                train_error=_finite(r["train_error"]), test_error=_finite(r["test_error"]),
                                frobenius_W=_finite(r["frobenius_W"]), min_test_error=_finite(best),
                                min_test_epoch=best_epoch, curve_epochs=curve_epochs,
                                curve_train=[_finite(v) for v in train_curve],
                                curve_test=[_finite(v) for v in test_curve], seconds=seconds / len(cells),
                                batch_seconds=seconds, networks_in_batch=len(cells), command=command,
                                device=device, torch=torch.__version__, threads=torch.get_num_threads(),
                                date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
        lines.append(f"  ({seconds:.0f} s for {len(cells)} networks)")
        print("\n".join(lines[start:]), flush=True)
    lines.append(f"computed on {device} (torch {torch.__version__}, {torch.get_num_threads()} thread(s), "
                 f"{platform.machine()}); report written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    lines.append(f"command: {command}")
    Path(args.out).write_text("\n".join(lines) + "\n")
    if args.json:
        path = Path(args.json)
        runs = json.loads(path.read_text()) if path.exists() else []
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(runs + records, indent=1) + "\n")
        os.replace(tmp, path)
    print("\n".join(lines[-2:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
