"""A verdict is a record of parts: the label is derived from the parts alone, and the parts of every shipped
table agree with a recomputation from its per-run table (``FIG_runs.csv``) by plain CSV reading."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from resnetlearn.reproduce.table_reading import load_figure
from resnetlearn.reproduce.verdict_parts import (
    FAILS,
    HOLDS,
    NOT_JUDGED,
    TRIVIAL,
    Part,
    derive_label,
)

RESULTS = Path(__file__).resolve().parents[1] / "results"
K_ALPHA2 = 15 * 0.3 ** 2  # kα² of the §8.1 instance (k = 15, α = 0.3)


def part(name, status, in_verdict=True):
    reason = "because" if status in (TRIVIAL, NOT_JUDGED) else ""
    return Part(name, "claim", "rule", "measured", "1.0", status, reason=reason, in_verdict=in_verdict)


def test_label_is_reproduced_only_when_every_part_holds_non_trivially():
    assert derive_label([part("a", HOLDS), part("b", HOLDS)]) == "reproduced"
    assert derive_label([part("a", HOLDS), part("b", TRIVIAL)]) == "partly reproduced: held: a; held trivially: b"
    assert derive_label([part("a", FAILS), part("b", HOLDS), part("c", NOT_JUDGED)]) == \
        "partly reproduced: held: b; failed: a; not judged: c"
    assert derive_label([part("a", FAILS), part("b", TRIVIAL)]) == "not reproduced"
    assert derive_label([part("a", TRIVIAL), part("b", NOT_JUDGED)]) == "not judged"


def test_parts_beside_the_verdict_never_enter_the_label():
    assert derive_label([part("a", HOLDS), part("a at another N", FAILS, in_verdict=False)]) == "reproduced"
    assert derive_label([part("x", FAILS, in_verdict=False)]) == "not judged"


def test_illustrations_and_figures_not_run_have_their_own_labels():
    assert derive_label([part("a", HOLDS)], illustration=True) == "illustrated"
    assert derive_label([], ran=False) == "not run"


def test_a_part_that_holds_trivially_or_is_not_judged_needs_its_reason():
    with pytest.raises(ValueError, match="needs a reason"):
        Part("a", "c", "r", "m", "t", TRIVIAL)
    with pytest.raises(ValueError, match="status must be one of"):
        Part("a", "c", "r", "m", "t", "reproduced")


# ----------------------------------------------------------------- the shipped tables, recomputed from their runs
def _runs(folder: str, name: str) -> dict[tuple, dict]:
    """Per point (model, mode, m, N, β, panel): seed 0's selected error and the fresh seeds' errors (NaN: diverged),
    read from ``FIG_runs.csv``, and the exact kernel solution from ``FIG.csv``."""
    def key(r):
        return r["model"], r["mode"], int(r["m"]), int(r["n_train"]), r["beta"], r["panel"]

    def err(r):
        return math.nan if r["diverged"] == "True" else float(r["test_error"])
    points: dict[tuple, dict] = {}
    for r in csv.DictReader(open(RESULTS / folder / f"{name}_runs.csv")):
        p = points.setdefault(key(r), {"seed0": None, "fresh": [], "exact": math.nan})
        if r["role"] == "grid" and r["selected"] == "True":
            p["seed0"] = err(r)
        elif r["role"] == "rerun":
            p["fresh"].append(err(r))
    for r in csv.DictReader(open(RESULTS / folder / f"{name}.csv")):
        if r["exact_test_error"] not in ("", "None"):
            points[key(r)]["exact"] = float(r["exact_test_error"])
    return points


def _majority_below(p, thr):
    return sum(e < thr for e in p["fresh"] if not math.isnan(e)) * 2 > len(p["fresh"])


def _lowest(p):
    vals = [e for e in [p["seed0"], *p["fresh"], p["exact"]] if e is not None and not math.isnan(e)]
    return min(vals) if vals else math.inf


def _median(vals):
    vals = sorted(v for v in vals if not math.isnan(v))
    n = len(vals)
    if not n:  # every fresh seed diverged: no median
        return math.nan
    return vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2


FOLDERS = [f for f in ("cpu", "quick") if (RESULTS / f / "fig2a.csv").exists()]


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("name,mode", [("fig2a", "all"), ("fig2b", "hidden")])
def test_figure2_parts_agree_with_the_runs(folder, name, mode):
    pts = _runs(folder, name)
    resnet = [p for k, p in pts.items() if k[:2] == ("3resnet", mode)]
    others = [p for k, p in pts.items() if k[:2] != ("3resnet", mode)]
    want = [HOLDS if any(_majority_below(p, K_ALPHA2) for p in resnet) else FAILS,
            HOLDS if all(_lowest(p) >= K_ALPHA2 for p in others) else FAILS]
    res = load_figure(name, RESULTS / folder)
    assert [p.status for p in res.parts] == want
    assert res.label == derive_label(res.parts) and res.summary.endswith(f"-> {res.label}")


@pytest.mark.parametrize("folder", FOLDERS)
def test_figure3_parts_at_the_fixed_n_agree_with_the_runs(folder):
    pts = _runs(folder, "fig3")
    fixed = {"all": 500, "hidden": 1000}
    res = load_figure("fig3", RESULTS / folder)
    judged = {p.name: p.status for p in res.parts if p.in_verdict}
    for mode, n in fixed.items():
        rows = {b: [p for k, p in pts.items() if k[1] == mode and k[3] == n and float(k[4]) == b]
                for b in (0.0, 0.2, 0.3, 0.5, 1.0)}
        up = all(any(_majority_below(p, K_ALPHA2) for p in rows[b]) for b in (0.5, 1.0))
        assert judged[f"α ≲ β learned ({mode})"] == (HOLDS if up else FAILS)
        touched = any(_lowest(p) < K_ALPHA2 for b in (0.0, 0.2, 0.3) for p in rows[b])
        trivial = all(_median(p["fresh"]) >= 15 * (b * b + 0.09) for b in (0.0, 0.2, 0.3) for p in rows[b]
                      if not math.isnan(_median(p["fresh"])))
        assert judged[f"α ≳ β not learned ({mode})"] == (FAILS if touched else TRIVIAL if trivial else HOLDS)
    assert res.label == derive_label(res.parts)


@pytest.mark.parametrize("folder", FOLDERS)
def test_figure4_parts_agree_with_the_runs(folder):
    rows = list(csv.DictReader(open(RESULTS / folder / "fig4_runs.csv")))
    sgd = [r for r in rows if r["model"] != "hand_built" and r["diverged"] != "True"]
    best = min(float(r["test_error"]) for r in sgd)
    res = load_figure("fig4", RESULTS / folder)
    status = {p.name: p.status for p in res.parts}
    assert status["SGD's test error above 0.3"] == (FAILS if best <= 0.3 else TRIVIAL if best >= 1.0 else HOLDS)
    fit = min((r for r in sgd if r["role"] == "grid"), key=lambda r: float(r["train_error"]))
    hand = [r for r in rows if r["model"] == "hand_built"]
    cheaper = any(float(h["test_error"]) <= float(fit["train_error"])
                  and float(h["frobenius_W"]) < float(fit["frobenius_W"]) for h in hand)
    assert status["a smaller-norm fit SGD does not find"] == (HOLDS if cheaper else FAILS)
    widths = sorted({int(r["m"]) for r in sgd})
    assert f"SGD's widths that ran: {widths[0]}" in res.summary


@pytest.mark.parametrize("folder", FOLDERS)
def test_companion_part_agrees_with_the_runs_and_names_the_lowest_competitor_seed(folder):
    pts = _runs(folder, "companion")
    n_max = max(k[3] for k in pts)
    mine = [p for k, p in pts.items() if k[:2] == ("3layer", "hidden") and k[3] == n_max and k[5] == ""]
    others = [p for k, p in pts.items() if k[:2] != ("3layer", "hidden") and k[3] == n_max]
    best = min(_lowest(p) for p in others)
    res = load_figure("companion", RESULTS / folder)
    assert [p.status for p in res.parts] == [HOLDS if _median(mine[0]["fresh"]) < best else FAILS]
    assert "best competitor" in res.parts[0].measured and f"{best:.3f}" in res.parts[0].measured


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_kernel_theorem_curve_is_illustrated_and_its_resnet_half_judged_on_unseen_seeds(folder):
    res = load_figure("thm3", RESULTS / folder)
    assert res.label == "illustrated" and res.summary.endswith("-> illustrated")
    resnet = [p for p in res.parts if p.name == "ResNet half"][0]
    runs = list(csv.DictReader(open(RESULTS / folder / "thm3_runs.csv")))
    judging = [r for r in runs if r["panel"] == "fresh" and r["role"] == "rerun"]
    if not judging:  # the robust rule's counts would be in sample: not judged
        assert resnet.status == NOT_JUDGED and resnet.reason
        return
    grid_seeds = {int(r["seed"]) for r in runs if r["panel"] == "" and r["role"] == "grid" and r["model"] == "3resnet"}
    assert grid_seeds.isdisjoint(int(r["seed"]) for r in judging)  # seeds that took no part in choosing
    by_n: dict[str, list[float]] = {}
    for r in judging:
        by_n.setdefault(r["n_train"], []).append(math.nan if r["diverged"] == "True" else float(r["test_error"]))
    majority = all(sum(e < 0.3 ** 2 / 4 for e in errs if not math.isnan(e)) * 2 > len(errs) for errs in by_n.values())
    assert resnet.status == (HOLDS if majority else FAILS)


def test_grid_edges_are_named_with_what_their_extension_found():
    from resnetlearn.reproduce.verdicts import grid_edge_notes

    def row(wd, errs, **kw):
        return dict(model="3layer", mode="hidden", m=200, n_train=1000, lr=0.2, wd=wd, test_error=errs[0],
                    seed_errors=errs, lr_at_grid_edge=False, wd_at_grid_edge=True, **kw)
    lrs = [0.01, 0.05, 0.1, 0.2, 0.5]
    assert "wd 0.01 (top), not extended at this scale" in grid_edge_notes([row(0.01, [1.9, 2.0])], lrs)
    better = grid_edge_notes([row(0.01, [1.9, 2.0]), row(0.02, [1.5, 1.4], panel="edge")], lrs)
    assert "extended to wd 0.02, 0.05: seed 0's best there 1.500 (lr 0.2, wd 0.02) beats 1.900" in better
    assert "wd now interior" in better  # 0.02 lies between the grid's 0.01 and the extension's 0.05
    top = grid_edge_notes([row(0.01, [1.9, 2.0]), row(0.05, [1.5, 1.4], panel="edge")], lrs)
    assert "wd still on the top of the extended grid" in top
    worse = grid_edge_notes([row(0.01, [1.9, 2.0]), row(0.05, [2.5, 2.4], panel="edge")], lrs)
    assert "not better than 1.900 at the edge, so the selection stays" in worse
    zero = dict(row(0.0, [1.9, 2.0]), wd_at_grid_edge=False)
    assert "wd 0 (bottom), the natural bound of weight decay" in grid_edge_notes([zero], lrs)

    # a corner (lr 0.5 and wd 0.01, both tops) extended past both: lr 1, 2 against every wd, and every lr against
    # wd 0.02, 0.05; seed 0's best of the two extensions is named, with where it sits on the union of the grids
    corner = dict(row(0.01, [1.9, 2.0]), lr=0.5, lr_at_grid_edge=True)
    past_both = dict(row(0.02, [1.6, 1.7], panel="edge-lr-wd"), lr=1.0, lr_at_grid_edge=False)
    past_lr = dict(row(0.0, [1.2, 1.3], panel="edge-lr"), lr=2.0, wd_at_grid_edge=False, lr_at_grid_edge=True)
    both = grid_edge_notes([corner, past_both, past_lr], lrs)
    assert ("lr 0.5 (top) and wd 0.01 (top), extended to lr 1, 2 and wd 0.02, 0.05: seed 0's best there 1.200 "
            "(lr 2, wd 0) beats 1.900 at the edge; wd now interior, lr still on an end of the extended grid, "
            "not extended further") in both
    assert "not extended at this scale" not in both
    # only one of a corner's edges extended: each edge says what it got
    one = grid_edge_notes([corner, row(0.05, [2.5, 2.4], panel="edge")], lrs)
    assert "lr 0.5 (top), not extended at this scale" in one
    assert "wd 0.01 (top), extended to wd 0.02, 0.05: seed 0's best there 2.500, not better than 1.900" in one
    # the companion's competitor past the bottom of the lr grid: no kα² there, so the fresh seeds' median is named
    low = dict(row(0.0, [1.9, 2.0, 2.2]), lr=0.01, lr_at_grid_edge=True, wd_at_grid_edge=False, figure="companion")
    below_lr = dict(low, lr=0.005, lr_at_grid_edge=False, seed_errors=[1.8, 1.6, 2.0], panel="edge-lr")
    notes = grid_edge_notes([low, below_lr], lrs)
    assert ("lr 0.01 (bottom), extended to lr 0.0005, 0.001, 0.002, 0.005: seed 0's best there 1.800 (lr 0.005, "
            "wd 0) beats 1.900 at the edge; lr now interior; fresh seeds there: median 1.800, lowest 1.600") in notes
    assert "wd 0 (bottom), the natural bound of weight decay" in notes


def test_every_shipped_summary_ends_with_its_derived_label():
    for folder in ("quick", "quick-val", "cpu"):
        for prov in (RESULTS / folder).glob("*.provenance.json"):
            name = prov.name.split(".")[0]
            res = load_figure(name, RESULTS / folder)
            assert res.label == derive_label(res.parts, illustration=name == "thm3")
            assert (RESULTS / folder / f"{name}.txt").read_text() == res.summary + "\n"
            assert res.summary.endswith(f"-> {res.label}")
