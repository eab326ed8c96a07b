"""One point of a shipped figure, changed in one respect, judged by the figure's own rule.

For questions a full figure is too expensive to answer on a CPU, e.g.

* Figure 3's β = 0.5 row with all layers trained is not learned at widths 20-200 at cpu scale; the
  paper's curves go to m = 2000. Does width alone change it?
      python probes/probe_point.py fig3 --model 3resnet --mode all --beta 0.5 --widths 500
* the ResNet's success in Figure 2(a) at cpu scale is selected by test error, as the paper does; does it
  survive choosing lr and wd on validation samples (drawn fresh, ⌈0.2·N⌉ of them, SGD training on all N)?
      python probes/probe_point.py fig2a --model 3resnet --mode all --widths 200 --select val
  (``--validation holdout`` carves the last fifth out of the N instead, the older rule; its reports
  are the files ``probe_*_val_cpu.txt`` and ``probe_*_valholdout_*.txt``.)

The point is the figure's own configuration at that scale (its lr x wd grid with seed 0, the selected cell
retrained with the scale's fresh seeds, its epochs), with only the width and/or the selection changed. It is
judged by the figure's rule: a strict majority of the fresh seeds below the figure's threshold (kα²).
Points are kept in a results store (resumable; Ctrl-C stores no partial point), and the report (with
device, torch, date) goes to --out.
"""

from __future__ import annotations

import argparse
import math
import platform
import time
from pathlib import Path

import torch

from resnetlearn.device import describe_device
from resnetlearn.reproduce import ResultsStore, run_point
from resnetlearn.reproduce import figures as F
from resnetlearn.reproduce import rows as R
from resnetlearn.reproduce import verdicts as V

ROOT = Path(__file__).resolve().parents[1]


def base_point(figure: str, scale: str, *, model: str, mode: str, beta: float | None, select: str = "test",
               n_train: int | None = None) -> dict:
    """The widest shipped point of ``figure`` at ``scale`` for this learner (and β, and N where the figure
    has several), as ``select`` builds it."""
    pts = [p for p in F.points(figure, scale, select=select) if p.get("model") == model and p.get("mode") == mode
           and (beta is None or p.get("beta") == beta) and p.get("m")]
    if n_train is not None and any(p["n_train"] == n_train for p in pts):
        pts = [p for p in pts if p["n_train"] == n_train]
    elif pts:
        pts = [p for p in pts if p["n_train"] == min(q["n_train"] for q in pts)]
    if not pts:
        raise SystemExit(f"{figure} at scale {scale} has no point {model}({mode})"
                         + (f" with β = {beta}" if beta is not None else ""))
    return max(pts, key=lambda p: p["m"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("figure", choices=["fig2a", "fig2b", "fig3"])
    ap.add_argument("--scale", default="cpu", choices=F.SCALES)
    ap.add_argument("--model", required=True)
    ap.add_argument("--mode", required=True)
    ap.add_argument("--beta", type=float, default=None, help="Figure 3's β (default: every point's own)")
    ap.add_argument("--widths", type=int, nargs="+", required=True)
    ap.add_argument("--select", choices=["test", "val"], default="test")
    ap.add_argument("--validation", choices=["fresh", "holdout"], default="fresh",
                    help="with --select val: validation samples drawn fresh, SGD on all N (default), or the last "
                         "fifth of the N held out (the older rule)")
    ap.add_argument("--n-train", type=int, default=None,
                    help="training samples (default: the figure's N); e.g. the N that --select val trains on, "
                         "to tell the cost of honest selection from the cost of fewer samples")
    ap.add_argument("--store", default=str(ROOT / "results" / "probes" / "store"))
    ap.add_argument("--out", default=None, help="report file (default: probes/results/probe_<...>.txt)")
    ap.add_argument("--epochs", type=int, default=None,
                    help="epochs (default: the scale's); with fewer samples an epoch has fewer SGD steps, so "
                         "--n-train 400 --epochs 1000 keeps the step count of N = 500 at 800 epochs")
    args = ap.parse_args()
    if any(m <= 0 for m in args.widths):
        ap.error(f"--widths must be positive integers, got {args.widths}")
    if args.n_train is not None and args.n_train < 50:
        ap.error(f"--n-train must be an integer >= 50 (one mini-batch), got {args.n_train}")
    base = base_point(args.figure, args.scale, model=args.model, mode=args.mode, beta=args.beta, select=args.select,
                      n_train=args.n_train)
    if args.select == "val":
        base = dict(base, validation=args.validation)  # resnetlearn.reproduce.points.validation_of
    if args.n_train is not None:
        base = dict(base, n_train=args.n_train)
    if args.epochs is not None:
        if args.epochs < 2:
            ap.error(f"--epochs must be an integer >= 2, got {args.epochs}")
        base = dict(base, epochs=args.epochs)
    name = f"probe_{args.figure}_{args.model}_{args.mode}" + (f"_beta{args.beta:g}" if args.beta is not None else "") \
        + (f"_n{args.n_train}" if args.n_train is not None else "") \
        + (f"_e{args.epochs}" if args.epochs is not None else "") \
        + f"_{args.select}{'fresh' if args.select == 'val' and args.validation == 'fresh' else ''}" \
        + f"{'holdout' if args.select == 'val' and args.validation == 'holdout' else ''}_{args.scale}"
    out = Path(args.out) if args.out else ROOT / "probes" / "results" / f"{name}.txt"
    store, thr = ResultsStore(args.store), V.parity_threshold()
    n_val = math.ceil(0.2 * base["n_train"])
    how = ("test error" if args.select == "test" else
           f"{n_val} validation samples drawn fresh, SGD on all {base['n_train']}" if args.validation == "fresh"
           else f"the last {round(0.2 * base['n_train'])} of the {base['n_train']} held out (SGD on the rest)")
    lines = [f"{args.figure} at {args.scale} scale, {args.model}({args.mode}), β = {base['beta']}, "
             f"α = {base['alpha']}, N = {base['n_train']}, {base['epochs']} epochs, "
             f"{len(base['lrs'])} x {len(base['wds'])} lr x wd grid, {len(base['rerun_seeds'])} fresh seeds, "
             f"selected by {how}; threshold kα² = {thr:.2f}",
             f"{'m':>5} {'lr':>5} {'wd':>6} {'seed 0':>7} {'fresh seeds below':>18} {'median':>7} "
             f"{'compute':>8}  verdict"]
    for m in args.widths:
        cfg = dict(base, m=m)
        stored = store.get(cfg)
        row = stored["result"] if stored else None
        if row is None:
            t0 = time.perf_counter()
            row = run_point(cfg)
            store.put(cfg, row)
            print(f"m={m}: {time.perf_counter() - t0:.0f} s", flush=True)
        n_below, n = R.below(row, thr)
        verdict = "below kα² (majority)" if R.majority_below(row, thr) else "not below kα²"
        lines.append(f"{m:5d} {row['lr']:5g} {row['wd']:6g} {row['test_error']:7.3f} {f'{n_below}/{n}':>18} "
                     f"{R.median_error(row):7.3f} {row.get('seconds', float('nan')):7.0f}s  {verdict}")
    lines.append(f"computed on {describe_device()} (torch {torch.__version__}, {platform.machine()}); "
                 f"report written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    lines.append("command: python probes/probe_point.py " + " ".join(
        [args.figure, "--scale", args.scale, "--model", args.model, "--mode", args.mode]
        + (["--beta", f"{args.beta:g}"] if args.beta is not None else [])
        + ["--widths", *map(str, args.widths), "--select", args.select]
        + (["--validation", args.validation] if args.select == "val" else [])
        + (["--n-train", str(args.n_train)] if args.n_train is not None else [])
        + (["--epochs", str(args.epochs)] if args.epochs is not None else [])))
    text = "\n".join(lines)
    out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
