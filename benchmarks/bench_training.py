"""Batched vs one-at-a-time training: the same 12-point lr × wd grid.

Parity instance (arXiv v3 §8.1), 3resnet(all), m = 200, N = 500, the full
protocol (800 epochs, batch 50, lr ÷ 10 at epoch 400) unless --epochs says
otherwise. Trains the 12 models one after another in a plain loop, then all
12 as one batched program, checks that the final test errors agree and
prints both wall times and their ratio.

    python benchmarks/bench_training.py [--epochs 800] [--device cuda] [--json out.json]
"""

import argparse
import json
import time

import torch

import resnetlearn as rl
from resnetlearn.training import Protocol, train_models

LRS = [0.02, 0.05, 0.1, 0.2]
WDS = [0.0, 1e-3, 5e-3]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=800)
    ap.add_argument("--m", type=int, default=200)
    ap.add_argument("--device", default=None)
    ap.add_argument("--json", default=None, help="also write the numbers to this file")
    args = ap.parse_args()
    dev = rl.select_device(args.device)
    inst = rl.parity_instance()
    tr, te = inst.sample(500, seed=0, device=dev), inst.sample(2000, seed=1, device=dev)
    grid = [(lr, wd) for lr in LRS for wd in WDS]
    protocol = Protocol(epochs=args.epochs, lr_drop_epoch=args.epochs // 2, eval_every=args.epochs)
    kw = dict(protocol=protocol, device=dev, progress=False)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    sync()
    t0 = time.perf_counter()
    seq = [train_models(tr, te, "3resnet", "all", args.m, [lr], [wd], [0], **kw).test_error[0]
           for lr, wd in grid]
    sync()
    t_seq = time.perf_counter() - t0
    t0 = time.perf_counter()
    bat = train_models(tr, te, "3resnet", "all", args.m, [g[0] for g in grid], [g[1] for g in grid],
                       [0] * len(grid), **kw).test_error
    sync()
    t_bat = time.perf_counter() - t0
    seq = torch.stack(seq)
    both = torch.isfinite(seq) & torch.isfinite(bat)
    max_rel = float(((seq - bat).abs() / seq.abs().clamp_min(1e-12))[both].max())
    agree = bool((torch.isfinite(seq) == torch.isfinite(bat)).all()) and max_rel < 1e-3
    out = dict(device=rl.describe_device(dev), torch=torch.__version__, epochs=args.epochs, m=args.m,
               models=len(grid), sequential_s=round(t_seq, 2), batched_s=round(t_bat, 2),
               ratio=round(t_seq / t_bat, 2), max_rel_diff_test_error=max_rel, agree=agree,
               best_test_error=float(bat[torch.isfinite(bat)].min()))
    for (lr, wd), a, b in zip(grid, seq.tolist(), bat.tolist()):
        print(f"lr={lr:<5g} wd={wd:<6g} sequential {a:.4f}  batched {b:.4f}")
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    if not agree:
        raise SystemExit("batched and sequential results disagree")


if __name__ == "__main__":
    main()
