"""The training engine against the plain programs a user would write, side by side.

Parity instance (arXiv v3 §8.1), 3resnet(all), m = 200, N = 500, the full
protocol (800 epochs, batch 50, momentum 0.9, lr ÷ 10 at epoch 400) unless
--epochs says otherwise, on the 12-point lr × wd grid below. In one process:

* ``plain``: a 30-line batched loop written the obvious way (stacked
  parameters, ``torch.baddbmm`` forward, ``torch.autograd.grad``, in-place
  momentum update; no divergence handling, no evaluation curves) — the
  baseline the engine must match;
* ``engine``: :func:`resnetlearn.learners.training.train_models` on the same grid as
  one batched program;
* ``sequential``: the engine one model at a time (what batching saves);
* ``captured`` (CUDA only): the engine with each epoch replayed as a recorded CUDA graph
  (:mod:`resnetlearn.learners.capture`); its test errors must equal the eager engine's exactly.

At a tiny width (``--m 8``) the arithmetic is negligible and ms per step is the fixed cost of a step:
Python and kernel launches, what a GPU pays at the paper's widths too.

All three use the same initial weights and mini-batch order, so their test
errors must agree; the script checks that and prints the wall times, their
ratios, ms per SGD step and the step's FLOP estimate (against the machine's
limit, to show how far from compute-bound these small models are).

    python benchmarks/bench_training.py [--epochs 800] [--device cuda] [--repeats 2] [--json out.json]
"""

import argparse
import json
import platform
import time

import torch

import resnetlearn as rl
from resnetlearn.learners import networks
from resnetlearn.learners.engine import order_seed
from resnetlearn.learners.search import paper_grid
from resnetlearn.learners.training import Learner, Protocol, RunOptions, train_models

LRS = [0.02, 0.05, 0.1, 0.2]
WDS = [0.0, 1e-3, 5e-3]
GRIDS = {"bench": (LRS, WDS),  # 12 models
         "paper": (paper_grid(1e-3, 0.5), [0.0] + paper_grid(1e-4, 5e-2))}  # 9 x 10 = 90 models (§8.1)


def plain_loop(tr, te, m, *, lrs, wds, seed, epochs, batch=50, momentum=0.9):
    """What a user would write: the §6 ResNet, G models stacked, hand-written SGD with momentum."""
    G, (N, d), k = len(lrs), tr.x.shape, tr.y.shape[1]
    dev = tr.x.device
    p = networks.init_params("3resnet", d=d, k=k, m=m, seeds=[seed] * G, device=dev)
    W, b1, V, b2, A = (p[n].requires_grad_() for n in ("W", "b1", "V", "b2", "A"))
    params = [W, b1, V, b2, A]
    bufs = [torch.zeros_like(t) for t in params]
    lr0 = torch.tensor(lrs, device=dev).view(G, 1, 1)
    wd = torch.tensor(wds, device=dev).view(G, 1, 1)
    gens = [torch.Generator().manual_seed(order_seed(seed)) for _ in range(G)]

    def forward(x):
        out1 = torch.bmm(torch.relu(torch.baddbmm(b1.unsqueeze(1), x, W.transpose(1, 2))), A.transpose(1, 2))
        h2 = torch.relu(torch.baddbmm(b2.unsqueeze(1), out1, V.transpose(1, 2)))
        return out1 + torch.bmm(h2, A.transpose(1, 2))

    for epoch in range(epochs):
        lr = lr0 / (10.0 if epoch >= epochs // 2 else 1.0)
        perm = torch.stack([torch.randperm(N, generator=g) for g in gens]).to(dev)
        for s in range(0, N, batch):
            idx = perm[:, s:s + batch]
            loss = 0.5 * ((forward(tr.x[idx]) - tr.y[idx]) ** 2).sum(-1).mean(-1)
            grads = torch.autograd.grad(loss.sum(), params)
            with torch.no_grad():
                for t, g, b in zip(params, grads, bufs):
                    s_ = (G,) + (1,) * (t.ndim - 1)
                    b.mul_(momentum).add_(g + wd.view(s_) * t)
                    t.sub_(lr.view(s_) * b)
    with torch.no_grad():
        return ((forward(te.x.expand(G, *te.x.shape)) - te.y) ** 2).sum(-1).mean(-1).double().cpu()


def step_flops(G, m, *, d, k, B):
    """Multiply-adds ×2 of one SGD step (forward ≈ 1/3 of forward+backward)."""
    fwd = B * (m * d + m * k + k * m + m * k)  # W, A (out1), V, A (residual)
    return 2 * 3 * fwd * G


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=800)
    ap.add_argument("--m", type=int, default=200)
    ap.add_argument("--grid", choices=sorted(GRIDS), default="bench", help="bench: 12 models; paper: the 90 of §8.1")
    ap.add_argument("--device", default=None)
    ap.add_argument("--repeats", type=int, default=2, help="timed repetitions of plain and engine (best is reported)")
    ap.add_argument("--no-sequential", action="store_true", help="skip the one-model-at-a-time run")
    ap.add_argument("--json", default=None, help="also write the numbers to this file")
    args = ap.parse_args()
    dev = rl.select_device(args.device)
    inst = rl.parity_instance()
    tr, te = inst.sample(500, seed=0, device=dev), inst.sample(2000, seed=1, device=dev)
    grid = [(lr, wd) for lr in GRIDS[args.grid][0] for wd in GRIDS[args.grid][1]]
    lrs, wds = [g[0] for g in grid], [g[1] for g in grid]
    protocol = Protocol(epochs=args.epochs, eval_every=args.epochs)
    kw = dict(protocol=protocol, progress=False, options=RunOptions(device=dev, capture=False))
    cuda = dev.type == "cuda"

    def timed(fn):
        if dev.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = fn()
        if dev.type == "cuda":
            torch.cuda.synchronize()
        return out, time.perf_counter() - t0

    times = {"plain": [], "engine": []} | ({"captured": []} if cuda else {})
    for _ in range(args.repeats):  # interleaved, so drifts in machine load hit all alike
        plain, t = timed(lambda: plain_loop(tr, te, args.m, lrs=lrs, wds=wds, seed=0, epochs=args.epochs))
        times["plain"].append(t)
        eng, t = timed(lambda: train_models(tr, te, Learner("3resnet", "all", m=args.m), lrs=lrs, wds=wds,
                                            seeds=[0] * len(grid), **kw).test_error)
        times["engine"].append(t)
        if cuda:
            cap, t = timed(lambda: train_models(tr, te, Learner("3resnet", "all", m=args.m), lrs=lrs, wds=wds,
                                                seeds=[0] * len(grid),
                                                **(kw | {"options": RunOptions(device=dev, capture=True)})).test_error)
            times["captured"].append(t)
    out = dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), machine=platform.machine(),
               device=rl.describe_device(dev), torch=torch.__version__, epochs=args.epochs, m=args.m, grid=args.grid,
               models=len(grid), plain_s=[round(t, 2) for t in times["plain"]],
               engine_s=[round(t, 2) for t in times["engine"]])
    t_plain, t_eng = min(times["plain"]), min(times["engine"])
    out["engine_over_plain"] = round(t_eng / t_plain, 3)
    steps = args.epochs * (500 // 50)
    out["ms_per_step"] = dict(plain=round(1e3 * t_plain / steps, 3), engine=round(1e3 * t_eng / steps, 3))
    if cuda:
        t_cap = min(times["captured"])
        out["captured_s"] = [round(t, 2) for t in times["captured"]]
        out["captured_over_engine"] = round(t_cap / t_eng, 3)
        out["captured_over_plain"] = round(t_cap / t_plain, 3)
        out["ms_per_step"]["captured"] = round(1e3 * t_cap / steps, 3)
        out["captured_equals_eager"] = bool(torch.equal(torch.nan_to_num(cap, nan=-1.0),
                                                        torch.nan_to_num(eng, nan=-1.0)))
    flops = step_flops(len(grid), args.m, d=tr.x.shape[1], k=tr.y.shape[1], B=50)
    out["step_gflop"] = round(flops / 1e9, 4)
    out["achieved_gflops_engine"] = round(flops / (t_eng / steps) / 1e9, 2)
    checks = {"plain": plain}
    if not args.no_sequential:
        seq, t_seq = timed(lambda: torch.stack([
            train_models(tr, te, Learner("3resnet", "all", m=args.m), lrs=[lr], wds=[wd], seeds=[0],
                         **kw).test_error[0] for lr, wd in grid]))
        out["sequential_s"] = round(t_seq, 2)
        out["sequential_over_engine"] = round(t_seq / t_eng, 2)
        checks["sequential"] = seq
    agree = out.get("captured_equals_eager", True)
    for name, ref in checks.items():
        both = torch.isfinite(ref) & torch.isfinite(eng)
        rel = float(((ref - eng).abs() / ref.abs().clamp_min(1e-12))[both].max()) if both.any() else 0.0
        same = bool((torch.isfinite(ref) == torch.isfinite(eng)).all()) and rel < 1e-3
        out[f"max_rel_diff_vs_{name}"] = rel
        agree &= same
    out["agree"] = agree
    out["best_test_error"] = float(eng[torch.isfinite(eng)].min())
    for (lr, wd), a, b in zip(grid, plain.tolist(), eng.tolist()):
        print(f"lr={lr:<5g} wd={wd:<6g} plain {a:.4f}  engine {b:.4f}")
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    if not agree:
        raise SystemExit("engine, plain loop and sequential results disagree")


if __name__ == "__main__":
    main()
