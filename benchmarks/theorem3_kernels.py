"""Kernels vs the 3resnet on the same samples (ResNet paper §3.1, §7 Theorem 2; arXiv v3 §8.1).

For each N, every kernel of resnetlearn.kernels.DEFAULT_KERNELS is fitted by
kernel ridge regression (ridge and bandwidth selected by test error, as the
paper selects), and a 3resnet(all) is trained on the same samples with a
small lr × wd grid. Thresholds: kα² (learned F only) and α²/4 (Theorem 2).

    python benchmarks/theorem3_kernels.py --instance parity --n 500 1000 2000 5000
    python benchmarks/theorem3_kernels.py --instance hard --n 500 1000 2000 5000
"""

import argparse
import time

import resnetlearn as rl
from resnetlearn.kernels import kernel_errors
from resnetlearn.training import Protocol, grid_search


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instance", choices=["parity", "hard"], default="parity")
    ap.add_argument("--n", type=int, nargs="+", default=[500, 1000, 2000, 5000])
    ap.add_argument("--m-kernel", type=int, default=500, help="width of the finite conjugate/NTK kernels")
    ap.add_argument("--m", type=int, default=200, help="width of the 3resnet")
    ap.add_argument("--resnet-steps", type=int, default=8000,
                    help="SGD steps for the 3resnet (800 epochs at N=500); epochs = steps·50/N, at most 800")
    ap.add_argument("--no-resnet", action="store_true")
    args = ap.parse_args()
    inst = rl.parity_instance() if args.instance == "parity" else rl.hard_instance(30, 4, alpha=0.3, seed=0)
    ref = inst.reference_errors()
    print(f"{inst.name}: kα² = {ref.f_only:.3f}, α²/4 = {inst.alpha ** 2 / 4:.4f}, predict-0 = {ref.zero:.2f}")
    for n in args.n:
        t0 = time.perf_counter()
        rows = kernel_errors(inst, n, m=args.m_kernel, progress=False)
        best = min(rows, key=lambda r: r["test_error"])
        print(f"N={n}: kernels [{time.perf_counter() - t0:.0f} s]; best {best['kernel']} {best['test_error']:.3f}")
        for r in rows:
            print(f"   {r['kernel']:<22}{r['setting']:<14} ridge×{r['ridge_rel']:<7g} test {r['test_error']:.4f}")
        if not args.no_resnet:
            epochs = max(10, min(800, round(args.resnet_steps * 50 / n)))
            t0 = time.perf_counter()
            g = grid_search(inst, "3resnet", "all", args.m, n, [0.05, 0.1, 0.2], [1e-3, 2e-3, 5e-3, 1e-2],
                            protocol=Protocol(epochs=epochs, lr_drop_epoch=epochs // 2), progress=False)
            b = g.best
            print(f"   {'3resnet(all)':<36} test {b['test_error']:.4f} (lr={b['lr']:g}, wd={b['wd']:g}, "
                  f"{epochs} epochs, m={args.m}) [{time.perf_counter() - t0:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
