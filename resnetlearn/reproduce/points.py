"""Running one point of a figure: a learner at one width (or N) with its whole search.

What a point runs is read from the point (:func:`run_point`): a network its lr × wd grid by SGD with
the selected cell retrained on fresh seeds (arXiv v3 §8.1), and for a (last)/(ntk) point also the
exact kernel solution it stands for; a kernel (mode ``kernel``) its ridge and parameter search
(the §7 hard instance); ``hand_built`` the construction of §8.2, footnote 16. The figure's
specification (:mod:`resnetlearn.reproduce.figures`) gives the data seed and whether every grid run is kept.
"""

from __future__ import annotations

import math
import time

import torch

from ..device import select_device
from ..kernels.experiments import kernel_errors, network_kernel_errors
from ..learners.search import grid_search, validation_split
from ..learners.selection import grid_edges
from ..learners.training import Learner, Protocol, train_models
from ..targets.concept import HAND_BUILT, companion_figure1, data_split, hard_instance, parity6_target, parity_instance
from .figures import point_label
from .figures import spec as figure_spec
from .learner import HandBuilt, Kernel, Network, from_row, kind_of

BATCH = Protocol().batch_size
"""The mini-batch of a network point that names none (§8.1: 50); a point's ``batch_size`` overrides it."""

RUN_KEYS = ("role", "lr", "wd", "seed", "setting", "ridge_rel", "train_error", "test_error", "val_error", "diverged",
            "frobenius_W", "selected")
"""Columns of the per-run table (``FIG_runs.csv``): one row per trained model or kernel candidate."""


def run_point(config: dict) -> dict:
    """Train one point (a learner at one width, its whole lr × wd grid) and
    return the selected run and wall time. Top-level so executors can pickle it.

    A point is all or nothing: when training is interrupted (the engine
    catches Ctrl-C and returns ``interrupted=True``) this raises
    KeyboardInterrupt instead of returning numbers from a half-trained grid."""
    return _RUNS[kind_of(config)](config)


def learner_of(config: dict) -> Learner:
    """The :class:`~resnetlearn.learners.training.Learner` a network point trains: its row's architecture (``model``),
    mode, width and initialisation (``init``, §8.1's ``"paper"`` where the point names none)."""
    return from_row(config)


def validation_of(config: dict) -> dict:
    """How a point with ``select="val"`` finds its validation samples, as keyword arguments of
    :func:`~resnetlearn.learners.search.grid_search` / :func:`~resnetlearn.learners.search.validation_split`:
    the point's
    ``validation`` (``"fresh"``, which :func:`resnetlearn.reproduce.figures.points` writes into every ``select="val"``
    point, with its optional ``n_val``), or ``"holdout"`` for a point that names none (the rule its stored
    results were computed with before issue 29, so their keys still mean what they meant). Empty for
    ``select="test"``."""
    if config.get("select") != "val":
        return {}
    rule = config.get("validation", "holdout")
    return dict(validation=rule, val_size=config.get("n_val")) if rule == "fresh" else dict(validation=rule)


def _sgd_point(config: dict) -> dict:
    """A network point: its lr × wd grid by SGD, the selected cell retrained with fresh seeds, and for a
    (last)/(ntk) point the exact kernel solution it stands for."""
    spec = figure_spec(config["figure"])
    target = target_of(config)
    t0 = time.perf_counter()
    grid_seeds = config.get("grid_seeds")  # several seeds in every cell: the robust rule can be applied
    g = grid_search(target, learner_of(config), n_train=config["n_train"], seeds=grid_seeds or (0,),
                    lrs=config["lrs"], wds=config["wds"], rerun_seeds=config.get("rerun_seeds", []),
                    select=config["select"], **validation_of(config), n_test=config["n_test"],
                    data_seed=spec.data_seed,
                    protocol=Protocol(epochs=config["epochs"], batch_size=config.get("batch_size", BATCH),
                                      eval_every=config["epochs"]),
                    device=config.get("device"), progress=False)
    if g.interrupted:  # the engine stopped early on Ctrl-C: these numbers are not the point's result
        raise KeyboardInterrupt(f"{point_label(config)} was interrupted during training")
    best = g.best or {}
    grid_rows = [r for r in g.rows if r["role"] == "grid"]
    reruns = g.reruns
    if grid_seeds:  # the paper's rule reads seed 0 alone; the cell's other seeds play the fresh seeds' part
        best, reruns = _seed0_choice(grid_rows, "test_error" if config["select"] == "test" else "val_error")
    kept = {"train_error": best.get("train_error"), "frobenius_W": best.get("frobenius_W"),
            "grid": [[r["train_error"], r["test_error"], r["frobenius_W"]] for r in grid_rows if not r["diverged"]]} \
        if spec.keeps_grid else {}
    runs = [{k: r.get(k) for k in RUN_KEYS if k in r} for r in g.rows]
    seeds = [best.get("test_error", math.nan)] + [r["test_error"] for r in reruns] if best else []
    out = {**kept, "runs": runs, "test_error": best.get("test_error", math.nan), "lr": best.get("lr"),
           "wd": best.get("wd"), "lr_at_grid_edge": _at_edge("lr", best, config["lrs"]),
           "wd_at_grid_edge": _at_edge("wd", best, config["wds"]),
           "seed_errors": seeds, "diverged": sum(r["diverged"] for r in grid_rows), "grid_size": len(grid_rows)}
    if learner_of(config).kernel_method:
        out.update(_exact_kernel(config, target, data_seed=spec.data_seed))
    return {**out, "seconds": round(time.perf_counter() - t0, 2), "device": str(select_device(config.get("device")))}


def _seed0_choice(grid_rows: list[dict], key: str) -> tuple[dict, list[dict]]:
    """In a grid trained with several seeds per cell: the seed-0 run with the lowest ``key`` error (arXiv v3
    §8.1's rule, as a one-seed grid selects) and the same cell's runs with the other seeds, in seed order; the
    ``selected`` flags are set to that one run."""
    seed0 = [r for r in grid_rows if r["seed"] == 0 and not r["diverged"] and math.isfinite(r[key])]
    best = min(seed0, key=lambda r: r[key]) if seed0 else None
    for r in grid_rows:
        r["selected"] = r is best
    if best is None:
        return {}, []
    return best, sorted((r for r in grid_rows if (r["lr"], r["wd"]) == (best["lr"], best["wd"]) and r["seed"] != 0),
                        key=lambda r: r["seed"])


def _at_edge(axis: str, best: dict, grid) -> bool:
    """Whether the selected lr or wd sits on an end of its grid (the optimum may lie outside: widen the grid),
    by the project's one grid-edge rule (:func:`~resnetlearn.learners.selection.grid_edges`); wd = 0 cannot be
    extended."""
    return bool(grid_edges({axis: grid}, {axis: best.get(axis)}, hard_bounds={"wd": 0.0}))


def _exact_kernel(config: dict, target, *, data_seed: int) -> dict:
    """The kernel method a (last)/(ntk) point stands for, solved exactly: ridge regression with the
    conjugate kernel / empirical NTK of the same initial network (seed 0, the point's init), the ridge
    chosen by the point's own selection rule (:func:`resnetlearn.kernels.network_kernel_errors`).

    The NTK is used output by output (``coupling="per_output"``: the scalar empirical NTK of each
    output, the kernel usually meant by "the NTK"). It is cheap (an N × N Gram) and on §8.1 it is the
    stronger kernel: the fully coupled kN × kN kernel, which is what SGD on the linearised network
    converges to, did worse where we measured it (§8.1, N = m = 500: 10.2 vs 7.4), which is why this
    per-output kernel is the one computed here; the SGD-trained linear model stands beside it."""
    if config["select"] == "val":  # the same validation samples as the point's SGD grid
        split = validation_split(target, config["n_train"], n_test=config["n_test"], data_seed=data_seed,
                                 **validation_of(config), dtype=torch.float64)
    else:
        split = data_split(target, config["n_train"], n_test=config["n_test"], seed=data_seed, dtype=torch.float64)
    r = network_kernel_errors(split.train, split.test, learner_of(config), seed=0, select=config["select"],
                              holdout=split.val, coupling="per_output")
    return {"exact_test_error": r["test_error"], "exact_train_error": r["train_error"],
            "exact_ridge_rel": r["ridge_rel"], "exact_ridge_at_grid_edge": r["ridge_at_grid_edge"]}


def _kernel_point(config: dict) -> dict:
    t0 = time.perf_counter()
    r = kernel_errors(target_of(config), config["n_train"], kernels=[config["model"]], select=config["select"],
                      **validation_of(config), n_test=config["n_test"],
                      data_seed=figure_spec(config["figure"]).data_seed, m=config["m"],
                      progress=False)[0]
    err = "test_error" if config["select"] == "test" else "val_error"
    runs = [{"setting": lab, "ridge_rel": rel, err: e, "selected": (lab, rel) == (r["setting"], r["ridge_rel"])}
            for lab, rel, e in r["path"]]
    return {"runs": runs, "test_error": r["test_error"], "ridge_rel": r["ridge_rel"], "setting": r["setting"],
            "ridge_at_grid_edge": r.get("ridge_at_grid_edge"), "param_at_grid_edge": r.get("param_at_grid_edge"),
            "grid_edges": r.get("grid_edges"),
            "seconds": round(time.perf_counter() - t0, 2), "device": "cpu"}


def _hand_built_point(config: dict) -> dict:
    """§8.2 footnote 16: train aᵀσ(Wx) with m = 200 on all 64 inputs of the d = 6
    problem (so its test error is exact), then pad W with d − 6 zero columns
    (scaling the 6 used columns by √(d/6), since inputs are ±1/√d) and
    duplicate rows up to width m with rescaling by √(200/m): the same function,
    the same test error, ‖W‖_F = √(d/6)·‖W₆‖_F at every width."""
    t0, hb = time.perf_counter(), HAND_BUILT
    full = hb.sample()
    res = train_models(full, full, Learner(hb.arch, hb.mode, m=hb.m), lrs=[hb.lr], wds=[config["wd"]],
                       seeds=[config.get("seed", 0)],
                       protocol=Protocol(epochs=config["epochs"], batch_size=hb.batch_size,
                                         lr_drop_epoch=config["epochs"] * 2 // 3, eval_every=config["epochs"]),
                       dtype=torch.float64, device="cpu", progress=False)
    if res.interrupted:
        raise KeyboardInterrupt(f"{point_label(config)} was interrupted during training")
    W6 = res.params["W"][0]
    d, m = config["d"], config["m"]
    Wd = torch.zeros(hb.m, d, dtype=torch.float64)
    Wd[:, :hb.d] = W6 * (d / hb.d) ** 0.5
    Wm = Wd.repeat(m // hb.m, 1) * (hb.m / m) ** 0.5
    run = {"wd": config["wd"], "seed": config.get("seed", 0), "train_error": float(res.test_error[0]),
           "test_error": float(res.test_error[0]), "frobenius_W": float(Wm.norm()), "selected": True}
    return {"runs": [run], "test_error": float(res.test_error[0]), "train_error": float(res.test_error[0]),
            "frobenius_W": float(Wm.norm()), "seconds": round(time.perf_counter() - t0, 2), "device": "cpu"}


_RUNS = {Network: _sgd_point, Kernel: _kernel_point, HandBuilt: _hand_built_point}
"""What a point of each kind of learner (:mod:`resnetlearn.reproduce.learner`) runs."""

TARGET_BUILDERS = {
    "parity": lambda c: parity_instance(alpha=c["alpha"], beta=c["beta"]),  # §8.1: β·F + α·G(F)
    "parity6": lambda c: parity6_target(c["d"]),  # §8.2: a degree-6 parity in d dimensions
    "hard": lambda c: hard_instance(c["d"], c["k"], alpha=c["alpha"], seed=0),  # §7's hard instance, seed 0
    "companion": lambda c: companion_figure1(),  # the companion paper's Figure 1 target
}
"""How each target of :data:`resnetlearn.reproduce.figures.TARGETS` is built from a point's configuration."""


def target_of(config: dict):
    """The target a point learns, from its ``target`` (:data:`TARGET_BUILDERS`)."""
    return TARGET_BUILDERS[config["target"]](config)
