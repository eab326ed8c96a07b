"""Measure the central claim of arXiv v3 §8.1 / Figure 2(a) at one width.

On the parity instance (d = 30, k = 15, α = 0.3) with N = 500 training
samples and the full SGD protocol, grid-search lr × wd for each learner and
report the best test error against the thresholds kα² = 1.35 and kα²/2.

    python probes/section81_claim.py            # full protocol, m = 200
    python probes/section81_claim.py --epochs 100 --select val
"""

import argparse
import time

import resnetlearn as rl
from resnetlearn.learners.search import Selection, grid_search, paper_grid
from resnetlearn.learners.training import Learner, Protocol, RunOptions

LEARNERS = [("3resnet", "all"), ("2layer", "all"), ("3layer", "all"), ("3resnet", "last"), ("3resnet", "ntk")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=200)
    ap.add_argument("--n-train", type=int, default=500)
    ap.add_argument("--epochs", type=int, default=800)
    ap.add_argument("--lr", type=float, nargs=2, default=(1e-3, 0.5), metavar=("LO", "HI"))
    ap.add_argument("--wd", type=float, nargs=2, default=(1e-4, 5e-2), metavar=("LO", "HI"))
    ap.add_argument("--select", choices=["test", "val"], default="test")
    ap.add_argument("--device", default=None)
    ap.add_argument("--learners", nargs="*", default=[f"{a}:{m}" for a, m in LEARNERS])
    args = ap.parse_args()
    inst = rl.parity_instance()
    kalpha2 = inst.reference_errors().f_only
    lrs, wds = paper_grid(*args.lr), [0.0] + paper_grid(*args.wd)
    protocol = Protocol(epochs=args.epochs)
    print(f"parity instance, N={args.n_train}, m={args.m}, {args.epochs} epochs, "
          f"{len(lrs)}×{len(wds)} grid, select by {args.select}; kα² = {kalpha2:.2f}")
    for spec in args.learners:
        arch, mode = spec.split(":")
        t0 = time.perf_counter()
        res = grid_search(inst, Learner(arch, mode, m=args.m), n_train=args.n_train, lrs=lrs, wds=wds,
                          protocol=protocol, progress=False, selection=Selection(select=args.select),
                          options=RunOptions(device=args.device))
        b = res.best
        verdict = "below kα²/2" if b["test_error"] < kalpha2 / 2 else (
            "below kα²" if b["test_error"] < kalpha2 else "above kα²")
        n_div = sum(r["diverged"] for r in res.rows)
        print(f"{arch + '(' + mode + ')':<16} best test error {b['test_error']:.3f} "
              f"(lr={b['lr']:g}, wd={b['wd']:g}; {n_div} diverged) -> {verdict}  "
              f"[{time.perf_counter() - t0:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
