"""Figure 4(a) as the paper draws it: training error against ‖W‖_F, SGD's runs and the hand-built points on the
same axes (arXiv v3 §8.2), from the shipped cpu-scale runs and the probes of probes/probe_fig4_sgd.py; and the
footnote-16 construction's own SGD run at d = 6 reported on its own.

    python probes/fig4_train_vs_norm.py
writes probes/results/probe_fig4_train_vs_norm_cpu.png and probes/results/fig4_fn16_d6_sgd_cpu.txt.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from resnetlearn.reproduce import load_figure, load_runs

ROOT = Path(__file__).resolve().parents[1]
PROBES = ("probe_fig4_sgd_fit_cpu.txt", "probe_fig4_sgd_fit_m1000_cpu.txt")


def probe_runs(name: str) -> list[dict]:
    """(m, lr, wd, train, test, ‖W‖_F) of every converged run in a probe report."""
    path = ROOT / "probes" / "results" / name
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 7 and parts[0].isdigit() and parts[6] == "False":
            m, lr, wd, tr, te, norm = int(parts[0]), *map(float, parts[1:6])
            out.append(dict(m=m, lr=lr, wd=wd, train=tr, test=te, norm=norm, epochs=_epochs(path)))
    return out


def _epochs(path: Path) -> str:
    head = path.read_text().splitlines()[0]
    return head.split(" epochs")[0].rsplit(", ", 1)[-1]


def main() -> int:
    from matplotlib.figure import Figure

    res = load_figure("fig4", ROOT / "results" / "cpu")
    runs = [r for r in load_runs("fig4", ROOT / "results" / "cpu")
            if r["model"] == "2layer_signs" and not r["diverged"] and r["role"] == "grid"]
    hand = [r for r in res.rows if r["model"] == "hand_built"]
    floor = 1e-3
    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    ax.scatter([max(r["train_error"], floor) for r in runs], [r["frobenius_W"] for r in runs], s=14,
               label=f"SGD, shipped grid (lr 0.1-1, wd 0-1e-3, 800 epochs; {len(runs)} runs)")
    for name, marker in zip(PROBES, ("^", "s")):
        pr = probe_runs(name)
        if pr:
            ax.scatter([max(p["train"], floor) for p in pr], [p["norm"] for p in pr], marker=marker, s=30,
                       label=f"SGD, wd ≤ 1e-4, {pr[0]['epochs']} epochs, m = {pr[0]['m']} ({len(pr)} runs)")
    ax.scatter([max(r["test_error"], floor) for r in hand], [r["frobenius_W"] for r in hand], marker="*", s=160,
               color="crimson", label="built by hand (footnote 16; error = train = test)")
    ax.set_xscale("log")
    ax.set_xlabel(f"training error (values below {floor:g} drawn at {floor:g})")
    ax.set_ylabel("‖W‖_F")
    ax.set_title("Figure 4(a) at d = 40, N = 5000: training error against ‖W‖_F (cpu)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    out = ROOT / "probes" / "results" / "probe_fig4_train_vs_norm_cpu.png"
    fig.savefig(out, dpi=110)
    d = hand[0]["d"]
    lines = ["Footnote 16's construction, its own SGD run (arXiv v3 §8.2): 2layer_signs, m = 200, trained at d = 6 "
             "on "
             "all 64 inputs of the d = 6 parity (so its error is exact, train = test), lr 0.5, batch 16, 3000 epochs "
             "(lr ÷ 10 at 2000), seed 0, float64, one run per weight decay; then padded to d = "
             f"{d} (‖W‖_F × √(d/6)). The paper: ‖W*‖_F ≈ 9.7√d / 12.5√d / 13.8√d for error ≤ 0.12 / 0.037 / 0.011.",
             f"{'wd':>8} {'error (d = 6)':>14} {'‖W‖_F at d = 6':>15} {'‖W‖_F at d = ' + str(d):>16} {'÷ √d':>7}"]
    for r in sorted(hand, key=lambda r: r["wd"]):
        lines.append(f"{r['wd']:8g} {r['test_error']:14.3f} {r['frobenius_W'] * math.sqrt(6 / d):15.1f} "
                     f"{r['frobenius_W']:16.1f} {r['frobenius_W'] / math.sqrt(d):7.2f}")
    lines.append(f"from results/cpu/fig4.csv (hand_built rows; computed {res.provenance.get('date', '?')}); "
                 f"report written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    lines.append("command: python probes/fig4_train_vs_norm.py")
    (ROOT / "probes" / "results" / "fig4_fn16_d6_sgd_cpu.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
