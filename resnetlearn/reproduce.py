"""The paper's experiments (arXiv v3 §8; companion paper Figure 1) as functions.

Each figure is a list of *points* (one learner at one width, with its own
lr × wd grid search), so a sweep can be cut into independent jobs:

* :func:`fig2a` — N = 500, all layers trained: 3resnet / 3layer / 2layer × (all, last, ntk) vs m;
* :func:`fig2b` — N = 1000, hidden layers trained: × (hidden, last, ntk) vs m;
* :func:`fig3` — β ∈ {0, 0.2, 0.3, 0.5, 1} at α = 0.3, 3resnet (all) and (hidden) vs m;
* ``fig4`` — §8.2: two-layer networks with fixed output signs on a degree-6 parity;
  SGD's best test error and ‖W‖_F against a solution built by hand (footnote 16);
* ``thm3`` — Theorem 2/3 on the §7 hard instance: every kernel vs the 3resnet against N;
* ``companion`` — the companion's sin/cos target: 3layer, 2layer, last, NTK vs N.

Scales (every row and provenance file records which one produced it):

* ``quick`` fits a 2-core CPU in minutes (two widths, a 4 × 3 grid, 400 epochs);
* ``cpu`` is the largest scale a 2-core CPU finishes in a working session
  (about 1.5 h for all six figures): the paper's N and full 800-epoch protocol, widths 20–500 for
  Figure 2(a) and 20–200 for Figures 2(b) and 3 instead of 20–2000, and a
  5 × 4 lr × wd grid inside the paper's 9 × 10 grid;
* ``paper`` is the full §8.1 protocol (widths 20–2000, 800 epochs, grid
  {1,2,5}·10^−k), meant for a GPU.

Points are stored in a :class:`ResultsStore` keyed by their full
configuration and the library version (JSON files written atomically), so a
rerun skips finished points and an interrupted sweep resumes. Points run
through an executor seam: in-process by default, or any object with a
``submit(fn, *args)`` returning futures — a ``concurrent.futures`` pool, a
``dask.distributed.Client``, or a submitit executor for Slurm.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .concept import Sample, companion_figure1, hard_instance, parity6_target, parity_instance
from .device import select_device
from .training import Protocol, grid_search, paper_grid, train_models

SCALES = ("tiny", "quick", "cpu", "paper")
SCALE_NOTES = {
    "tiny": "a seconds-long smoke test of the machinery; no claim can be judged at this scale",
    "quick": "classroom scale for a 2-core CPU (minutes): widths 50 and 200, 400 epochs, a 4 x 3 lr x wd grid",
    "cpu": ("the largest scale a 2-core CPU finishes in a working session (about 1.5 h for all six figures): "
            "the paper's N and 800-epoch protocol, "
            "widths 20-500 for Figure 2(a) and 20-200 for Figures 2(b) and 3 (paper: 20-2000), "
            "a 5 x 4 lr x wd grid inside the paper's 9 x 10; "
            "not the paper's full scale"),
    "paper": "the full protocol of §8 (widths 20-2000, 800 epochs, the 9 x 10 lr x wd grid), meant for a GPU",
}
"""What each scale is, recorded in every provenance file."""
FIGURES = ("fig2a", "fig2b", "fig3", "fig4", "thm3", "companion")


def _version() -> str:
    from . import __version__

    return __version__


# ----------------------------------------------------------------- store
class ResultsStore:
    """One JSON file per finished point under ``root/<figure>/<key>.json``.

    The key hashes the point's full configuration and the library version,
    so changed settings or code never reuse stale numbers. Files are written
    to a temporary name and renamed (atomic on POSIX): an interrupted run
    leaves either a complete file or none. No pickle anywhere.
    """

    def __init__(self, root):
        self.root = Path(root)

    SCHEMA = 2
    """Bumped when a stored result gains fields (2: every run of the grid, ``runs``)."""

    @staticmethod
    def key(config: dict) -> str:
        blob = json.dumps({"config": config, "version": _version(), "schema": ResultsStore.SCHEMA},
                          sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]

    def path(self, config: dict) -> Path:
        return self.root / config["figure"] / f"{self.key(config)}.json"

    def get(self, config: dict) -> dict | None:
        p = self.path(config)
        return json.loads(p.read_text()) if p.exists() else None

    def put(self, config: dict, result: dict) -> Path:
        p = self.path(config)
        p.parent.mkdir(parents=True, exist_ok=True)
        payload = {"config": config, "version": _version(), "result": result}
        fd, tmp = tempfile.mkstemp(dir=p.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(payload, f, indent=1, default=str)
        os.replace(tmp, p)
        return p


# ----------------------------------------------------------------- points
def _scale_settings(scale: str) -> dict:
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    if scale == "paper":
        return dict(widths=[20, 50, 100, 200, 500, 1000, 2000], epochs=800,
                    lrs=paper_grid(1e-3, 0.5), wds=[0.0] + paper_grid(1e-4, 5e-2), n_test=2000)
    if scale == "tiny":
        return dict(widths=[8], epochs=2, lrs=[0.05], wds=[0.0], n_test=100)
    if scale == "cpu":
        # m = 500 costs ~6x m = 200 (the m x m middle layer); Figures 2(b) and 3 train
        # 3-4x more models than 2(a), so they stop at m = 200 to fit the hour
        narrow = [20, 50, 100, 200]
        return dict(widths=[20, 50, 200, 500], widths_by_figure={"fig2b": narrow, "fig3": narrow}, epochs=800,
                    lrs=[0.01, 0.05, 0.1, 0.2, 0.5], wds=[0.0, 1e-3, 5e-3, 1e-2], n_test=2000)
    return dict(widths=[50, 200], epochs=400, lrs=[0.05, 0.1, 0.2, 0.5], wds=[0.0, 1e-3, 5e-3], n_test=1000)


RUN_KEYS = ("lr", "wd", "seed", "setting", "ridge_rel", "train_error", "test_error", "val_error", "diverged",
            "frobenius_W", "selected")
"""Columns of the per-run table (``FIG_runs.csv``): one row per trained model or kernel candidate."""


def run_point(config: dict) -> dict:
    """Train one point (a learner at one width, its whole lr × wd grid) and
    return the selected run and wall time. Top-level so executors can pickle it."""
    if config["figure"] == "thm3" and config["model"] != "3resnet":
        return _kernel_point(config)
    if config["model"] == "hand_built":
        return _hand_built_point(config)
    if config["target"] == "companion":
        target = companion_figure1()
    elif config["target"] == "parity6":
        target = parity6_target(config["d"])
    elif config["target"] == "hard":
        target = hard_instance(config["d"], config["k"], alpha=config["alpha"], seed=0)
    else:
        target = parity_instance(alpha=config["alpha"], beta=config["beta"])
    t0 = time.perf_counter()
    g = grid_search(target, config["model"], config["mode"], config["m"], config["n_train"],
                    config["lrs"], config["wds"], select=config["select"], n_test=config["n_test"],
                    protocol=Protocol(epochs=config["epochs"], lr_drop_epoch=config["epochs"] // 2,
                                      eval_every=config["epochs"]),
                    device=config.get("device"), progress=False)
    best = g.best or {}
    edge = bool(best) and best["lr"] in (min(config["lrs"]), max(config["lrs"])) and len(config["lrs"]) > 1
    fig4 = {"train_error": best.get("train_error"), "frobenius_W": best.get("frobenius_W"),
            "grid": [[r["train_error"], r["test_error"], r["frobenius_W"]] for r in g.rows if not r["diverged"]]} \
        if config["figure"] == "fig4" else {}
    runs = [{k: r.get(k) for k in RUN_KEYS if k in r} for r in g.rows]
    return {**fig4, "runs": runs, "test_error": best.get("test_error", math.nan), "lr": best.get("lr"),
            "wd": best.get("wd"),
            "lr_at_grid_edge": edge,
            "diverged": sum(r["diverged"] for r in g.rows), "grid_size": len(g.rows),
            "seconds": round(time.perf_counter() - t0, 2), "device": str(select_device(config.get("device")))}


def _kernel_point(config: dict) -> dict:
    from .kernels import kernel_errors

    t0 = time.perf_counter()
    target = hard_instance(config["d"], config["k"], alpha=config["alpha"], seed=0)
    r = kernel_errors(target, config["n_train"], kernels=[config["model"]], select=config["select"],
                      n_test=config["n_test"], m=config["m"], progress=False)[0]
    err = "test_error" if config["select"] == "test" else "val_error"
    runs = [{"setting": lab, "ridge_rel": rel, err: e, "selected": (lab, rel) == (r["setting"], r["ridge_rel"])}
            for lab, rel, e in r["path"]]
    return {"runs": runs, "test_error": r["test_error"], "ridge_rel": r["ridge_rel"], "setting": r["setting"],
            "seconds": round(time.perf_counter() - t0, 2), "device": "cpu"}


def _hand_built_point(config: dict) -> dict:
    """§8.2 footnote 16: train aᵀσ(Wx) with m = 200 on all 64 inputs of the d = 6
    problem (so its test error is exact), then pad W with d − 6 zero columns
    (scaling the 6 used columns by √(d/6), since inputs are ±1/√d) and
    duplicate rows up to width m with rescaling by √(200/m): the same function,
    the same test error, ‖W‖_F = √(d/6)·‖W₆‖_F at every width."""
    import itertools

    t0 = time.perf_counter()
    x6 = torch.tensor(list(itertools.product((1.0, -1.0), repeat=6)), dtype=torch.float64) / 6**0.5
    y6 = parity6_target(6)(x6)
    full = Sample(x6, y6, None, None)
    res = train_models(full, full, "2layer_signs", "hidden", 200, [0.5], [config["wd"]], [config.get("seed", 0)],
                       Protocol(epochs=config["epochs"], batch_size=16, lr_drop_epoch=config["epochs"] * 2 // 3,
                                eval_every=config["epochs"]), dtype=torch.float64, device="cpu", progress=False)
    W6 = res.params["W"][0]
    d, m = config["d"], config["m"]
    Wd = torch.zeros(200, d, dtype=torch.float64)
    Wd[:, :6] = W6 * (d / 6) ** 0.5
    Wm = Wd.repeat(m // 200, 1) * (200 / m) ** 0.5
    run = {"wd": config["wd"], "seed": config.get("seed", 0), "train_error": float(res.test_error[0]),
           "test_error": float(res.test_error[0]), "frobenius_W": float(Wm.norm()), "selected": True}
    return {"runs": [run], "test_error": float(res.test_error[0]), "train_error": float(res.test_error[0]),
            "frobenius_W": float(Wm.norm()), "seconds": round(time.perf_counter() - t0, 2), "device": "cpu"}


def _points(figure: str, scale: str, device, select: str) -> list[dict]:
    s = _scale_settings(scale)
    base = dict(figure=figure, scale=scale, epochs=s["epochs"], lrs=s["lrs"], wds=s["wds"],
                n_test=s["n_test"], select=select, device=device, target="parity", alpha=0.3, beta=1.0)
    pts = []
    widths = s.get("widths_by_figure", {}).get(figure, s["widths"])
    if figure in ("fig2a", "fig2b"):
        n = 500 if figure == "fig2a" else 1000
        train_mode = "all" if figure == "fig2a" else "hidden"
        for arch in ("3resnet", "3layer", "2layer"):
            for mode in (train_mode, "last", "ntk"):
                pts += [dict(base, model=arch, mode=mode, m=m, n_train=n) for m in widths]
    elif figure == "fig3":
        for beta in (0.0, 0.2, 0.3, 0.5, 1.0):
            for mode in ("all", "hidden"):
                pts += [dict(base, model="3resnet", mode=mode, m=m, n_train=500 if mode == "all" else 1000,
                             beta=beta) for m in widths]
    elif figure == "fig4":
        d, n = {"tiny": (8, 200), "quick": (20, 2000)}.get(scale, (40, 5000))
        widths = {"tiny": [200], "quick": [200, 400], "cpu": [200, 500, 1000], "paper": [200, 500, 1000, 2000]}[scale]
        lrs = {"tiny": [0.5], "quick": [0.05, 0.2, 0.5, 1.0], "cpu": [0.1, 0.2, 0.5, 1.0]}.get(scale, s["lrs"])
        wds = {"tiny": [0.0], "quick": [0.0, 1e-4, 1e-3], "cpu": [0.0, 1e-4, 1e-3]}.get(scale, s["wds"])
        epochs = {"tiny": 2, "quick": 100}.get(scale, s["epochs"])
        common = dict(base, target="parity6", d=d, n_train=n, alpha=None, beta=None, lrs=lrs, wds=wds, epochs=epochs)
        pts += [dict(common, model="2layer_signs", mode="hidden", m=m) for m in widths]
        hand_epochs = 3000 if scale != "tiny" else 20
        pts += [dict(common, model="hand_built", mode="-", m=widths[0], wd=wd, epochs=hand_epochs)
                for wd in ((0.0, 1e-4, 1e-3, 3e-3) if scale != "tiny" else (0.0,))]
    elif figure == "thm3":
        from .kernels import DEFAULT_KERNELS

        ns = {"tiny": [50], "quick": [250, 500, 1000], "cpu": [250, 500, 1000, 2000, 5000],
              "paper": [500, 1000, 2000, 5000, 10000]}[scale]
        kerns = DEFAULT_KERNELS if scale != "tiny" else ("gaussian", "ntk_inf:2layer")
        common = dict(base, target="hard", d=30, k=4, alpha=0.3, m=500 if scale != "tiny" else 16)
        for n in ns:
            pts += [dict(common, model=kname, mode="kernel", n_train=n) for kname in kerns]
            epochs = max(10, min(800, round(8000 * 50 / n))) if scale != "tiny" else 2
            pts.append(dict(common, model="3resnet", mode="all", n_train=n, m=200 if scale != "tiny" else 8,
                            epochs=epochs, lrs=[0.05, 0.1, 0.2] if scale != "tiny" else [0.05],
                            wds=[1e-3, 5e-3] if scale != "tiny" else [0.0]))
    elif figure == "companion":
        ns = {"tiny": [100], "quick": [100, 300, 1000], "cpu": [100, 300, 1000, 3000],
              "paper": [100, 300, 1000, 3000, 10000]}[scale]
        m = s["widths"][-1] if scale in ("tiny", "paper") else 200
        for arch, mode in (("3layer", "hidden"), ("2layer", "hidden"), ("3layer", "last"), ("3layer", "ntk")):
            pts += [dict(base, target="companion", alpha=None, beta=None, model=arch, mode=mode,
                         m=m, n_train=n) for n in ns]
    else:
        raise ValueError(f"unknown figure {figure!r}; allowed: {FIGURES}")
    return pts


# ----------------------------------------------------------------- running
@dataclass
class FigureResult:
    """Rows (one per point), the summary line and the figure of one experiment."""

    name: str
    rows: list[dict]
    summary: str
    reproduced: bool | None
    wall_time: float
    skipped: int = 0
    figure: object = field(default=None, repr=False)
    provenance: dict | None = field(default=None, repr=False)  # set by load_figure when shipped


def run_figure(figure: str, scale: str = "quick", device=None, out=None, executor=None,
               select: str = "test", progress: bool = True) -> FigureResult:
    """Run (or resume) every point of a figure and summarise it against the paper's claim.

    ``out``: a directory for the :class:`ResultsStore` (finished points are
    reused). ``executor``: ``None`` runs in this process; otherwise anything
    with ``submit(fn, *args)`` (ProcessPoolExecutor, dask Client, submitit).
    """
    from tqdm.auto import tqdm

    store = ResultsStore(out) if out is not None else None
    pts = _points(figure, scale, device, select)
    t0, rows, todo = time.perf_counter(), [], []
    for p in pts:
        hit = store.get(p) if store else None
        (rows if hit else todo).append(dict(p, **hit["result"]) if hit else p)
    skipped = len(rows)
    bar = tqdm(total=len(todo), desc=f"{figure} ({scale})", disable=not progress)
    try:
        if executor is None:
            for p in todo:
                res = run_point(p)
                if store:
                    store.put(p, res)
                rows.append(dict(p, **res))
                bar.update(1)
        else:
            futures = [(p, executor.submit(run_point, p)) for p in todo]
            for p, fut in futures:
                res = fut.result()
                if store:
                    store.put(p, res)
                rows.append(dict(p, **res))
                bar.update(1)
    finally:
        bar.close()
    summary, ok = summarise(figure, rows)
    return FigureResult(figure, rows, summary, ok, time.perf_counter() - t0, skipped)


def summarise(figure: str, rows: list[dict]) -> tuple[str, bool | None]:
    """The paper's claim for a figure, and whether these rows reproduce it."""
    thr = parity_instance().reference_errors().f_only  # kα² = 1.35 of the §8.1 instance

    def best(**kw):
        sel = [r for r in rows if all(r.get(k) == v for k, v in kw.items())]
        vals = [r["test_error"] for r in sel if r["test_error"] == r["test_error"]]
        return min(vals) if vals else math.nan

    if figure in ("fig2a", "fig2b"):
        mode = "all" if figure == "fig2a" else "hidden"
        winner = best(model="3resnet", mode=mode)
        others = {f"{a}({md})": best(model=a, mode=md) for a in ("3resnet", "3layer", "2layer")
                  for md in (mode, "last", "ntk") if (a, md) != ("3resnet", mode)}
        ok = winner < thr and all(v >= thr for v in others.values())
        worst = min(others, key=others.get)
        return (f"{figure}: paper claims only 3resnet({mode}) goes below kα² = {thr:.2f}. Here: 3resnet({mode}) "
                f"{winner:.3f}; best other {worst} {others[worst]:.3f} -> "
                f"{'reproduced' if ok else 'NOT reproduced'} at this scale"), ok
    if figure == "fig3":
        parts, ok = [], True
        for md in ("all", "hidden"):
            hi, lo = best(beta=1.0, mode=md), min(best(beta=b, mode=md) for b in (0.0, 0.2))
            good = hi < thr <= lo
            ok &= good
            parts.append(f"{md}: β=1 {hi:.3f}, best β≤0.2 {lo:.3f} ({'as claimed' if good else 'not as claimed'})")
        return (f"fig3: paper claims the composite signal is learned when β ≫ α = 0.3 and not when β ≲ α "
                f"(kα² = {thr:.2f}). Here " + "; ".join(parts)
                + f" -> {'reproduced' if ok else 'NOT reproduced'} at this scale"), ok
    if figure == "fig4":
        sgd = [r for r in rows if r["model"] == "2layer_signs"]
        hand = [r for r in rows if r["model"] == "hand_built"]
        runs = [g for r in sgd for g in (r.get("grid") or [])]  # (train, test, ‖W‖_F) of every SGD run
        best_test = min((g[1] for g in runs), default=math.nan)
        h_best = min(hand, key=lambda r: r["test_error"])
        fit = min(runs, key=lambda g: g[0]) if runs else (math.nan, math.nan, math.nan)  # best train error
        # a hand-built solution at least as accurate as SGD's best fit, with a smaller norm
        cheaper = [h for h in hand if h["test_error"] <= fit[0] and h["frobenius_W"] < fit[2]]
        ok = best_test > 5 * max(h_best["test_error"], 1e-3) and bool(cheaper)
        h = min(cheaper, key=lambda h: h["frobenius_W"]) if cheaper else h_best
        return (f"fig4: paper claims SGD finds neither the test error nor the small Frobenius norm of a solution "
                f"built by hand. Here: SGD's best test error {best_test:.3f} vs hand-built {h_best['test_error']:.4f}; "
                f"SGD's best training fit {fit[0]:.3f} needs ‖W‖_F {fit[2]:.1f}, a hand-built one with error "
                f"{h['test_error']:.3f} has ‖W‖_F {h['frobenius_W']:.1f} -> "
                f"{'reproduced' if ok else 'NOT reproduced'} at this scale"), ok
    if figure == "thm3":
        kern = [r for r in rows if r["model"] != "3resnet"]
        net = [r for r in rows if r["model"] == "3resnet"]
        bound = hard_instance(30, 4, alpha=0.3).alpha ** 2 / 4
        kmin, nmax = min(r["test_error"] for r in kern), max(r["test_error"] for r in net)
        ok = kmin > bound > nmax
        return (f"thm3: Theorem 2 says every kernel errs by more than α²/4 = {bound:.4f} on the hard instance "
                f"with few samples, while the ResNet learns it. Here: best kernel {kmin:.3f}, worst 3resnet "
                f"{nmax:.4f} -> {'reproduced' if ok else 'NOT reproduced'} at this scale"), ok
    if figure == "companion":
        n_max = max(r["n_train"] for r in rows)
        at = {f"{r['model']}({r['mode']})": r["test_error"] for r in rows if r["n_train"] == n_max}
        ok = at.get("3layer(hidden)", math.inf) < min(v for k, v in at.items() if k != "3layer(hidden)")
        return (f"companion fig1: paper claims 3layer beats 2layer, last and NTK. Here at N={n_max}: "
                + ", ".join(f"{k} {v:.3f}" for k, v in at.items())
                + f" -> {'reproduced' if ok else 'NOT reproduced'} at this scale"), ok
    raise ValueError(f"unknown figure {figure!r}")


TITLES = {
    "fig2a": "Figure 2(a): N = 500, all layers trained",
    "fig2b": "Figure 2(b): N = 1000, hidden layers trained",
    "fig3": "Figure 3: β·F + α·G(F), α = 0.3",
    "thm3": "Theorem 2/3: kernels vs 3resnet on the §7 hard instance",
    "companion": "Companion Figure 1: 3layer vs 2layer, last, NTK",
}


def _curves(result: FigureResult) -> tuple[str, dict[str, list[tuple]]]:
    """The x key (width m, or N) and one sorted (x, test error) curve per learner."""
    xkey = "n_train" if result.name in ("companion", "thm3") else "m"
    groups: dict[str, list[tuple]] = {}
    for r in result.rows:
        label = (f"β={r['beta']}, {r['mode']}" if result.name == "fig3" else
                 r["model"] if result.name == "thm3" else f"{r['model']}({r['mode']})")
        groups.setdefault(label, []).append((r[xkey], r["test_error"]))
    return xkey, {k: sorted(v) for k, v in groups.items()}


def error_table(result: FigureResult, digits: int = 3) -> str:
    """The test errors of a figure as text: one line per learner, one column
    per width m (or N), rounded so that notebooks can check them."""
    if result.name == "fig4":
        lines = [f"{r['model']:13s} m={r['m']:<5d} wd={r['wd']:<7g} test {r['test_error']:.{digits}f}  "
                 f"‖W‖_F {r['frobenius_W']:.1f}" for r in result.rows]
        return "\n".join(lines)
    xkey, groups = _curves(result)
    xs = sorted({x for pts in groups.values() for x, _ in pts})
    head = f"{'':22s}" + "".join(f"{('N=' if xkey == 'n_train' else 'm=') + str(x):>10s}" for x in xs)
    lines = [head]
    for label, pts in groups.items():
        at = dict(pts)
        lines.append(f"{label:22s}" + "".join(f"{at[x]:10.{digits}f}" if x in at else f"{'':10s}" for x in xs))
    return "\n".join(lines)


def figure_plot(result: FigureResult):
    """Paper-style plot: test error vs width (or N) on log axes, with kα²."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    if result.name == "fig4":
        floor = 1e-3  # errors below are drawn at the floor (a hand-built fit can be exact)
        for r in result.rows:
            if r["model"] == "hand_built":
                ax.scatter([max(r["test_error"], floor)], [r["frobenius_W"]], marker="*", s=160, color="crimson")
        pts = [g for r in result.rows if r["model"] == "2layer_signs" for g in (r.get("grid") or [])]
        ax.scatter([max(p[0], floor) for p in pts], [p[2] for p in pts], s=12, label="SGD runs: train error")
        ax.scatter([max(p[1], floor) for p in pts], [p[2] for p in pts], s=12, label="SGD runs: test error")
        ax.scatter([], [], marker="*", s=160, color="crimson", label="built by hand (train = test)")
        ax.set_xscale("log")
        ax.set_xlabel(f"error (values below {floor:g} drawn at {floor:g})")
        ax.set_ylabel("‖W‖_F")
        ax.set_title("fig4: SGD does not find the small-norm solution")
        ax.legend(fontsize=7)
        fig.tight_layout()
        return fig
    xkey, groups = _curves(result)
    for label, pts in groups.items():
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
    if result.name == "thm3":
        hard = hard_instance(30, 4, alpha=0.3)
        ax.axhline(hard.alpha**2 / 4, color="purple", ls=":", label="α²/4")
        ax.axhline(hard.threshold, color="crimson", ls="--", label=f"kα² = {hard.threshold:.2f}")
    elif result.name != "companion":
        thr = parity_instance().threshold
        ax.axhline(thr, color="crimson", ls="--", label=f"kα² = {thr:.2f}")
    from matplotlib.ticker import NullFormatter

    xs = sorted({x for pts in groups.values() for x, _ in pts})
    ax.set_xticks(xs, [str(x) for x in xs])  # the measured widths / N, not 3×10¹-style minor labels
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("N (samples)" if xkey == "n_train" else "m (width)")
    ax.set_ylabel("test error")
    ax.set_title(TITLES.get(result.name, result.name))
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def write_outputs(result: FigureResult, out) -> dict[str, Path]:
    """Write the tidy table (CSV), the plot (PNG) and the summary (TXT)."""
    import csv

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cols = ["figure", "scale", "model", "mode", "m", "n_train", "beta", "alpha", "epochs", "select",
            "d", "test_error", "train_error", "frobenius_W", "lr", "wd", "lr_at_grid_edge", "ridge_rel", "setting",
            "diverged", "grid_size", "seconds", "device", "grid"]
    paths = {"table": out / f"{result.name}.csv", "runs": out / f"{result.name}_runs.csv",
             "plot": out / f"{result.name}.png", "summary": out / f"{result.name}.txt"}
    with open(paths["table"], "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows([dict(r, grid=json.dumps(r["grid"])) if r.get("grid") is not None else r
                     for r in result.rows])
    point_cols = ["figure", "scale", "model", "mode", "m", "n_train", "beta", "alpha", "epochs", "select", "d"]
    with open(paths["runs"], "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=point_cols + list(RUN_KEYS), extrasaction="ignore")
        w.writeheader()
        for r in result.rows:
            point = {k: r.get(k) for k in point_cols}
            w.writerows([{**point, **run} for run in r.get("runs") or []])
    figure_plot(result).savefig(paths["plot"], dpi=110)
    paths["summary"].write_text(result.summary + "\n")
    return paths


def write_provenance(result: FigureResult, out, scale: str, command: str) -> Path:
    """Where the numbers came from: configuration, versions, device, date, wall time."""
    import platform

    import torch as _torch

    from .device import describe_device

    devices = sorted({r.get("device", "") for r in result.rows})
    info = dict(figure=result.name, scale=scale, scale_note=SCALE_NOTES[scale], settings=_scale_settings(scale),
                command=command,
                resnetlearn=_version(), torch=_torch.__version__, python=platform.python_version(),
                machine=platform.machine(), device=devices or [describe_device()],
                date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                wall_time_s=round(result.wall_time, 1),
                compute_s=round(sum(r.get("seconds") or 0.0 for r in result.rows), 1),  # incl. points reused
                points=len(result.rows),
                reused_from_store=result.skipped, summary=result.summary)
    path = Path(out) / f"{result.name}.provenance.json"
    path.write_text(json.dumps(info, indent=1, default=str))
    return path


def _parse(row: dict, ints, floats) -> None:
    """CSV strings back to numbers in place (empty or "None" cells become None)."""
    for k in ints:
        row[k] = int(row[k]) if row.get(k) not in (None, "") else None
    for k in floats:
        row[k] = float(row[k]) if row.get(k) not in (None, "", "None") else None


def load_figure(name: str, directory) -> FigureResult:
    """A figure's shipped (or previously written) results from its CSV table."""
    import csv

    path = Path(directory) / f"{name}.csv"
    if not path.exists():
        raise ValueError(f"no results for {name!r} in {directory} (run: python -m resnetlearn reproduce {name})")
    rows = []
    for r in csv.DictReader(open(path)):
        _parse(r, ("m", "n_train", "epochs", "diverged", "grid_size"),
               ("test_error", "train_error", "frobenius_W", "lr", "wd", "beta", "alpha", "seconds"))
        r["grid"] = json.loads(r["grid"]) if r.get("grid") else None
        rows.append(r)
    summary, ok = summarise(name, rows)
    prov_path = Path(directory) / f"{name}.provenance.json"
    prov = json.loads(prov_path.read_text()) if prov_path.exists() else None
    return FigureResult(name, rows, summary, ok, prov["wall_time_s"] if prov else math.nan, provenance=prov)


def load_runs(name: str, directory) -> list[dict]:
    """Every run of a figure's grids (``FIG_runs.csv``), numbers parsed."""
    import csv

    path = Path(directory) / f"{name}_runs.csv"
    if not path.exists():
        raise ValueError(f"no per-run table for {name!r} in {directory} (run: python -m resnetlearn reproduce {name})")
    rows = []
    for r in csv.DictReader(open(path)):
        _parse(r, ("m", "n_train", "epochs", "seed"),
               ("lr", "wd", "beta", "alpha", "ridge_rel", "train_error", "test_error", "val_error", "frobenius_W"))
        r["selected"], r["diverged"] = r.get("selected") == "True", r.get("diverged") == "True"
        rows.append(r)
    return rows


def grid_table(runs: list[dict], **point) -> str:
    """The lr × wd grid of one point as text (test error per cell; ``*`` marks
    the selected run, ``div`` a diverged one), e.g.
    ``grid_table(runs, model="3resnet", mode="all", m=200)``."""
    sel = [r for r in runs if all(r.get(k) == v for k, v in point.items())]
    if not sel:
        raise ValueError(f"no runs match {point}")
    lrs, wds = sorted({r["lr"] for r in sel}), sorted({r["wd"] for r in sel})
    cell = {(r["lr"], r["wd"]): r for r in sel}
    lines = ["lr \\ wd".rjust(8) + "".join(f"{wd:>10g}" for wd in wds)]
    for lr in lrs:
        row = f"{lr:>8g}"
        for wd in wds:
            r = cell.get((lr, wd))
            mark = "*" if r is not None and r["selected"] else ""
            txt = "" if r is None else "div" if r["diverged"] else f"{r['test_error']:.3f}{mark}"
            row += f"{txt:>10}"
        lines.append(row)
    return "\n".join(lines)
