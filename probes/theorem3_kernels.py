"""Kernels vs the 3resnet on the same samples (ResNet paper §3.1, §7 Theorem 2; arXiv v3 §8.1).

For each N, every kernel of resnetlearn.kernels.registry.DEFAULT_KERNELS is fitted by
kernel ridge regression, each tuned over its own grid from
resnetlearn.kernels.registry.KERNEL_REGISTRY (Gaussian bandwidth, the infinite
kernels' σ_w² and σ_b²) and the ridge, selected by test error as the paper
selects; a choice at the end of its grid is marked "edge". A 3resnet(all) is
trained on the same samples with a small lr × wd grid. Thresholds: kα²
(learned F only) and α²/4 (Theorem 2). An illustration of Theorem 2/3 on one
target and a few N, not a test of the theorem's N range or constants.

    python probes/theorem3_kernels.py --instance parity --n 500 1000 2000 5000
    python probes/theorem3_kernels.py --instance hard --n 500 1000 2000 5000
"""

import argparse
import time

import resnetlearn as rl
from resnetlearn.kernels.experiments import kernel_errors
from resnetlearn.learners.search import grid_search
from resnetlearn.learners.training import Learner, Protocol


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instance", choices=["parity", "hard"], default="parity")
    ap.add_argument("--n", type=int, nargs="+", default=[500, 1000, 2000, 5000])
    ap.add_argument("--m-kernel", type=int, default=500, help="width of the finite conjugate/NTK kernels")
    ap.add_argument("--m", type=int, default=200, help="width of the 3resnet")
    ap.add_argument("--resnet-steps", type=int, default=8000,
                    help="SGD steps for the 3resnet (800 epochs at N=500); epochs = steps·50/N, at most 800")
    ap.add_argument("--no-resnet", action="store_true")
    ap.add_argument("--out", default=None, help="write rows (JSON) and a plot (PNG) with this path prefix")
    args = ap.parse_args()
    inst = rl.parity_instance() if args.instance == "parity" else rl.hard_instance(30, 4, alpha=0.3, seed=0)
    ref = inst.reference_errors()
    print(f"{inst.name}: kα² = {ref.f_only:.3f}, α²/4 = {inst.alpha ** 2 / 4:.4f}, predict-0 = {ref.zero:.2f}")
    table = []
    for n in args.n:
        t0 = time.perf_counter()
        rows = kernel_errors(inst, n, m=args.m_kernel, progress=False)
        table += rows
        best = min(rows, key=lambda r: r["test_error"])
        print(f"N={n}: kernels [{time.perf_counter() - t0:.0f} s]; best {best['kernel']} {best['test_error']:.3f}")
        for r in rows:
            edge = f"  edge: {r['grid_edges']}" if r["grid_edges"] else ""
            print(f"   {r['kernel']:<22}{r['setting']:<26} ridge×{r['ridge_rel']:<7g} test {r['test_error']:.4f}{edge}")
        if not args.no_resnet:
            epochs = max(10, min(800, round(args.resnet_steps * 50 / n)))
            t0 = time.perf_counter()
            g = grid_search(inst, Learner("3resnet", "all", m=args.m), n_train=n, lrs=[0.05, 0.1, 0.2],
                            wds=[1e-3, 2e-3, 5e-3, 1e-2], protocol=Protocol(epochs=epochs),
                            progress=False)
            b = g.best
            print(f"   {'3resnet(all)':<36} test {b['test_error']:.4f} (lr={b['lr']:g}, wd={b['wd']:g}, "
                  f"{epochs} epochs, m={args.m}) [{time.perf_counter() - t0:.0f} s]", flush=True)
            table.append(dict(kernel="3resnet(all)", n_train=n, test_error=b["test_error"], lr=b["lr"], wd=b["wd"],
                              epochs=epochs, m=args.m))
    if args.out:
        save(table, inst, args.out)


def save(table, inst, prefix):
    """Rows as JSON and the test-error-vs-N plot with the kα² and α²/4 lines."""
    import json

    from matplotlib.figure import Figure

    with open(f"{prefix}.json", "w") as f:
        json.dump(dict(instance=inst.name, rows=table), f, indent=1)
    fig = Figure(figsize=(8, 5))
    ax = fig.subplots()
    for name in dict.fromkeys(r["kernel"] for r in table):
        pts = sorted((r["n_train"], r["test_error"]) for r in table if r["kernel"] == name)
        style = dict(color="black", linewidth=3) if name.startswith("3resnet") else {}
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label=name, **style)
    ax.axhline(inst.reference_errors().f_only, color="crimson", ls="--", label="kα²")
    ax.axhline(inst.alpha**2 / 4, color="purple", ls=":", label="α²/4 (Theorem 2)")
    ax.set_xlabel("N (training samples)")
    ax.set_ylabel("test error")
    ax.set_title(f"kernels vs 3resnet: {inst.name}")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(f"{prefix}.png", dpi=110)


if __name__ == "__main__":
    main()
