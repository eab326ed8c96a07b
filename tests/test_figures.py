"""The experiments' definitions (resnetlearn.reproduce.figures) and the reading of their rows
(resnetlearn.reproduce.rows): points, verdict rules in the paper's terms."""

import math
from dataclasses import replace

import pytest

from resnetlearn.classroom import figures_plotly as fp
from resnetlearn.classroom import styles
from resnetlearn.reproduce import figures as F
from resnetlearn.reproduce import rows as R
from resnetlearn.reproduce import verdicts as V
from resnetlearn.reproduce.figure_tables import FigureResult

THR = 1.35  # kα² of the §8.1 instance (α = 0.3, k = 15)


def test_threshold_and_zero_line_are_the_paper_facts():
    assert V.parity_threshold() == pytest.approx(15 * 0.3**2)
    assert V.parity_zero() == pytest.approx(15 * (1 + 0.3**2))


@pytest.mark.parametrize("name", F.names())
@pytest.mark.parametrize("scale", F.SCALES)
def test_every_point_is_a_complete_distinct_configuration(name, scale):
    if scale not in F.spec(name).scales:  # defined at some scales only: a clear error naming them
        scales = ", ".join(F.spec(name).scales)
        with pytest.raises(ValueError, match=f"{name} is defined at scale\\(s\\) {scales} only"):
            F.points(name, scale)
        return
    pts = F.points(name, scale)
    assert pts and all(p["figure"] == name and p["scale"] == scale for p in pts)
    ids = {tuple(sorted((k, str(v)) for k, v in p.items())) for p in pts}
    assert len(ids) == len(pts)
    s = F.scale_settings(scale)
    for p in pts:
        if p["model"] not in ("hand_built",) and p["mode"] != "kernel":
            if p.get("grid_seeds"):  # every cell trained with seed 0 and the scale's fresh seeds (thm3)
                assert p["grid_seeds"] == [0, *s["rerun_seeds"]] and p["rerun_seeds"] == []
                continue
            if p.get("panel") == V.THM3_FRESH_PANEL:  # the robust cell judged on seeds outside its grid's
                assert set(p["rerun_seeds"]).isdisjoint([0, *s["rerun_seeds"]]) and len(p["lrs"]) == 1
                continue
            assert p["rerun_seeds"] == s["rerun_seeds"] and 0 not in p["rerun_seeds"]


def test_seed_counts_per_scale():
    assert len(F.scale_settings("quick")["rerun_seeds"]) + 1 >= 4  # at least 4 seeds at quick scale
    assert len(F.scale_settings("cpu")["rerun_seeds"]) >= 8
    assert len(F.scale_settings("paper")["rerun_seeds"]) >= 8


def test_majority_rule_and_medians():
    # seed 0 (first) selected the cell by test error: only the fresh seeds vote
    row = dict(test_error=0.5, seed_errors=[0.5, 1.0, 2.0, 1.1, math.nan, 1.2])
    assert R.below(row, THR) == (3, 5) and R.majority_below(row, THR)
    assert R.median_error(row) == pytest.approx(1.15)  # over the finite fresh seeds
    assert not R.majority_below(dict(seed_errors=[0.5, 0.5, 2.0, 3.0, math.nan]), THR)  # 1 of 4 fresh
    assert not R.majority_below(dict(seed_errors=[0.1, 0.5, 0.6, 2.0, 3.0]), THR)  # 2 of 4 is no majority
    assert R.best_error(dict(seed_errors=[5.0, 4.0], exact_test_error=3.0)) == 3.0
    assert R.best_error(dict(seed_errors=[1.0, 4.0])) == 1.0  # a competitor keeps its seed 0


def _fig2_rows(winner_seeds, other=2.0, exact=None):
    rows = []
    for a in ("3resnet", "3layer", "2layer"):
        for md in ("all", "last", "ntk"):
            r = dict(model=a, mode=md, m=200, test_error=other, seed_errors=[other] * 5)
            if (a, md) == ("3resnet", "all"):
                r.update(test_error=winner_seeds[0], seed_errors=winner_seeds)
            if md == "ntk" and exact is not None:
                r["exact_test_error"] = exact
            rows.append(r)
    return rows


def test_fig2_needs_a_majority_of_seeds_and_counts_exact_kernels_against():
    ok = F.spec("fig2a").summarise(_fig2_rows([0.1, 0.2, 0.1, 3.0, 0.3]))
    assert ok[1] is True and "3/4 seeds below" in ok[0] and "rule:" in ok[0]  # seed 0 does not vote
    lucky = F.spec("fig2a").judge(_fig2_rows([0.1, 2.0, 2.1, 3.0, 2.3]))  # one good seed is not enough
    assert lucky[1].label == ("partly reproduced: held: every competitor above kα²; "
                              "failed: 3resnet(all) below kα² robustly")
    kernel = F.spec("fig2a").judge(_fig2_rows([0.1] * 5, exact=1.0))  # the exact NTK solution goes below
    assert kernel[1].label.endswith("failed: every competitor above kα²") and "exact kernel solution" in kernel[0]
    both = _fig2_rows([0.1, 2.0, 2.1, 3.0, 2.3], exact=1.0)
    assert F.spec("fig2a").judge(both)[1].label == "not reproduced"


def test_fig3_judges_its_two_statements_at_the_n_fixed_before_the_runs():
    def rows(learned, n_all=500):
        out = []
        for mode, n in (("all", n_all), ("hidden", 1000)):
            for beta in V.FIG3_BETAS:
                e = 0.5 if learned(beta, mode) else 1.5 + beta ** 2  # not learned, yet better than predicting 0
                out.append(dict(model="3resnet", mode=mode, m=200, n_train=n, beta=beta, test_error=e,
                                seed_errors=[e] * 3))
        return out

    def status(rs):
        return {p.name: p.status for p in F.judge("fig3", rs)[1].parts}

    assert F.judge("fig3", rows(lambda b, m: b > 0.3))[1].label == "reproduced"
    got = status(rows(lambda b, m: b == 1.0 or (b == 0.5 and m == "hidden")))
    assert got["α ≲ β learned (all)"] == "fails" and got["α ≲ β learned (hidden)"] == "holds"
    got = status(rows(lambda b, m: b >= 0.3))  # β = α learned: against "α ≳ β, β = α included, not learned"
    assert got["α ≳ β not learned (all)"] == "fails"
    lucky = rows(lambda b, m: b > 0.3)
    lucky[1]["seed_errors"] = [2.0, 1.0, 2.0]  # β = 0.2 (all): one fresh seed below is enough against "not learned"
    assert status(lucky)["α ≳ β not learned (all)"] == "fails"
    zero = rows(lambda b, m: b > 0.3)
    for r in zero:
        if r["beta"] <= 0.3 and r["mode"] == "all":
            r["seed_errors"] = [20.0] * 3  # no better than predicting 0, k(β² + α²)
    assert status(zero)["α ≳ β not learned (all)"] == "holds trivially"
    # rows at an N not fixed before the runs are parts of their own, beside the verdict
    other = rows(lambda b, m: b > 0.3) + [r for r in rows(lambda b, m: b >= 0.3, n_all=1000) if r["mode"] == "all"]
    verdict = F.judge("fig3", other)[1]
    beside = [p for p in verdict.parts if not p.in_verdict]
    assert verdict.label == "reproduced" and [p.status for p in beside] == ["holds", "fails"]


def test_fig4_verdict_states_the_papers_number():
    rows = [dict(model="2layer_signs", m=200, grid=[[0.03, 1.0, 350.0], [0.5, 0.9, 40.0]]),
            dict(model="hand_built", m=200, test_error=0.016, frobenius_W=84.5)]
    text, ok = F.spec("fig4").summarise(rows)
    assert ok is True and "0.69" in text and "SGD's best 0.900 over 2 finite runs" in text
    rows[0]["seed_errors"] = [0.9, 1.1, 1.2]  # seed 0 (the selected cell), then two fresh seeds
    text, ok = F.spec("fig4").summarise(rows)
    assert ok is True and "2 fresh seeds (1.100–1.200)" in text
    rows[0]["grid"] = [[0.03, 1.0, 350.0], [0.5, 1.02, 40.0]]  # SGD no better than predicting 0
    assert F.judge("fig4", rows)[1].label == ("partly reproduced: held: a smaller-norm fit SGD does not find; "
                                              "held trivially: SGD's test error above 0.3")
    rows[0]["grid"] = [[0.03, 1.0, 350.0], [0.5, 0.9, 40.0]]
    rows[0]["seed_errors"] = [0.9, 0.25, 1.2]  # a fresh seed generalises below 0.3: not the paper's picture
    assert F.judge("fig4", rows)[1].label.endswith("failed: SGD's test error above 0.3")
    rows[0]["seed_errors"] = [0.9, 1.1, 1.2]
    rows[0]["grid"].append([0.02, 0.25, 60.0])  # SGD fits with a small norm and generalises: neither part holds
    assert F.judge("fig4", rows)[1].label == "not reproduced"


def test_thm3_states_the_theorems_hypotheses():
    text = V.thm3_hypotheses()
    assert "α²/4" in text and "α²/16" in text and "0.99" in text and "illustration" in text
    assert "6.7" in text  # d^(k/2)/log^k d at d = 30, k = 4


def test_thm3_needs_a_majority_at_every_n_and_names_diverged_seeds():
    nan = math.nan
    kern = dict(model="gaussian", mode="kernel", n_train=250, test_error=0.3)
    def net(n, errs):
        return dict(model="3resnet", mode="all", n_train=n, test_error=errs[0], seed_errors=errs, lr=0.2, wd=1e-3,
                    lr_at_grid_edge=True, wd_at_grid_edge=False)

    # N=250: seed 0 and the 4 fresh seeds that train are below α²/4 = 0.0225, 4 fresh seeds diverge: 4/8 is no majority
    rows = [kern, net(250, [0.001, 0.001, nan, 0.009, 0.008, nan, nan, nan, 0.004]), net(500, [0.001] * 9)]
    notes, parts = F.spec("thm3").verdict(rows)
    kernel, resnet = parts
    assert "N=250: 4/8 below (4 diverged, lr 0.2 at its grid edge)" in resnet.measured
    assert "N=500: 8/8 below, median 0.0010" in resnet.measured
    assert kernel.status == "holds" and resnet.status == "not judged"
    assert "the robust rule needs several seeds" in resnet.reason
    assert F.judge("thm3", rows)[1].label == "illustrated"  # our illustration, whatever its parts say


def _grid_runs(cells: dict) -> list[dict]:
    """Grid runs of one point: (lr, wd) -> its errors by seed (NaN: diverged)."""
    return [dict(role="grid", lr=lr, wd=wd, seed=s, test_error=e, diverged=not math.isfinite(e))
            for (lr, wd), errs in cells.items() for s, e in enumerate(errs)]


def test_the_robust_rule_does_not_reward_the_edge_of_stability():
    from resnetlearn.learners.selection import robust_cell, test_best_cell

    nan = math.nan
    edge = [0.001, 0.002, nan, 0.003, nan, nan, 0.001, nan, 0.002]  # seed 0 best, 4 of 8 others diverge
    stable = [0.010, 0.009, 0.011, 0.012, 0.010, 0.008, 0.009, 0.013, 0.010]
    worse = [0.5] * 9
    runs = _grid_runs({(0.2, 1e-3): edge, (0.1, 1e-3): stable, (0.05, 1e-3): worse})
    assert test_best_cell(runs) == (0.2, 1e-3)
    rob = robust_cell(runs)
    assert rob["cell"] == (0.1, 1e-3) and rob["all_converged"] and (rob["cells"], rob["cells_converged"]) == (3, 2)
    assert robust_cell(_grid_runs({(0.1, 0.0): [0.1]})) is None  # one seed per cell: the rule needs several
    # a point whose grid has seeds in every cell: both rules, side by side where they disagree
    row = dict(model="3resnet", mode="all", n_train=250, test_error=edge[0], seed_errors=edge, lr=0.2, wd=1e-3,
               runs=runs, select="test")
    note = R.rules_side_by_side(row, 0.0225)
    assert "test-best lr 0.2, wd 0.001: 4/8 below (4 diverged)" in note and "robust lr 0.1, wd 0.001: 8/8 below" in note
    assert R.seed_counts([0.01, 0.5, nan, nan], 0.0225) == (1, 1, 2)  # below, converged above, diverged
    kern = dict(model="gaussian", mode="kernel", n_train=250, test_error=0.3)
    resnet = F.spec("thm3").verdict([kern, row])[1][1]
    assert "robust rule in sample" in resnet.measured and "N=250: 8/8 below" in resnet.measured
    assert resnet.status == "not judged" and resnet.reason.startswith("fresh seeds not run")


def test_selection_table_sets_the_papers_selection_beside_a_validation_split():
    from resnetlearn.reproduce import FigureResult, selection_table

    def row(select, mode, m, errs):
        return dict(figure="fig2a", scale="quick", model="3resnet", mode=mode, m=m, n_train=500, beta=1.0,
                    alpha=0.3, select=select, test_error=errs[0], seed_errors=errs)

    by_test = FigureResult("fig2a", [row("test", "all", 200, [0.2, 0.4, 0.6, 1.0]),
                                     row("test", "ntk", 200, [10.0, 11.0, 12.0])], "", True, 0.0)
    by_val = FigureResult("fig2a", [row("val", "all", 200, [0.9, 0.8, 1.6, math.nan]),
                                    row("val", "ntk", 200, [12.0, 13.0, 14.0])], "", True, 0.0)
    text = selection_table(by_test, by_val)
    # medians over the fresh seeds (seed 0 selected the cell and is left out; NaN = diverged, left out)
    assert "0.600 / 1.200" in text and "11.500 / 13.500" in text
    with pytest.raises(ValueError, match="by_val on a validation split"):
        selection_table(by_test, by_test)
    with pytest.raises(ValueError, match="same figure"):
        selection_table(by_test, FigureResult("fig2b", by_val.rows, "", True, 0.0))


def test_figure_4b_is_the_papers_setting_at_paper_scale():
    """arXiv v3 §8.2, Figure 4(b): d = 100, N = 50000, mini-batch 100, the {1, 2, 5}·10^-k grid; the same
    construction (footnote 16) and the same verdict rule as Figure 4(a)."""
    pts = F.points("fig4b", "paper")
    sgd = [p for p in pts if p["model"] == "2layer_signs"]
    hand = [p for p in pts if p["model"] == "hand_built"]
    assert {(p["d"], p["n_train"], p["target"]) for p in pts} == {(100, 50000, "parity6")}
    assert {p["batch_size"] for p in sgd} == {100} and all("batch_size" not in p for p in hand)
    assert [p["m"] for p in sgd] == [200, 500, 1000, 2000, 5000, 10000, 20000, 50000]  # §8.2: m up to 50000
    assert {p["mode"] for p in sgd} == {"hidden"}
    assert sgd[0]["lrs"] == F.paper_grid(1e-3, 2.0) and sgd[0]["wds"] == [0.0] + F.paper_grid(1e-5, 0.1)
    assert sorted(p["wd"] for p in hand) == [0.0, 1e-4, 1e-3, 3e-3]
    # Figure 4(a)'s points are Figure 4(b)'s at d = 40, N = 5000 with §8.1's mini-batch (no batch_size key), and
    # one width more (§8.2: m up to 100000 for 4(a), 50000 for 4(b))
    a = [p for p in F.points("fig4", "paper") if p["m"] != 100000]
    assert [dict(p, figure="fig4b", d=100, n_train=50000) for p in a] == \
        [{k: v for k, v in p.items() if k != "batch_size"} for p in pts]
    assert F.names_at("paper") == F.names() and "fig4b" not in F.names_at("quick") + F.every_scale()
    spec = F.spec("fig4b")
    assert (spec.plot, spec.keeps_grid, spec.xkey, spec.scales) == ("norm_vs_error", True, None, ("tiny", "paper"))


def test_a_point_is_named_from_its_figures_definition():
    assert F.point_label(dict(figure="fig3", model="3resnet", mode="all", beta=0.2, m=50)) == "3resnet(all) β=0.2 m=50"
    assert F.point_label(dict(figure="thm3", model="gaussian", mode="kernel", n_train=250, m=500)) == "gaussian N=250"
    assert F.point_label(dict(figure="companion", model="3layer", mode="hidden", n_train=100)) == "3layer(hidden) N=100"
    assert F.point_label(dict(figure="fig4b", model="hand_built", mode="-", m=200, wd=0.001)) == \
        "hand_built m=200 wd=0.001"
    assert F.learner(dict(model="3resnet", mode="all"), with_mode=False) == "3resnet"
    with pytest.raises(ValueError, match="plot must be one of"):
        F.FigureSpec(name="x", title="", headline="", source="", claim="", xkey="m", points=None, verdict=None,
                     plot="pie")


def test_figure_4_draws_each_learner_in_its_records_style(monkeypatch):
    """Figure 4's SGD markers take the colour of the runs' own architecture (2layer_signs), read from the
    classroom's style table (a changed entry changes them), and the hand-built solutions are drawn as the shipped
    picture has them: a crimson star."""
    rows = [dict(model="2layer_signs", mode="hidden", m=200, test_error=1.0, grid=[[0.5, 1.1, 80.0]]),
            dict(model="hand_built", mode="-", m=200, wd=0.0, test_error=0.0, frobenius_W=100.0)]
    test_runs, hand = fp.result_figure(FigureResult("fig4", rows, "", True, 0.0)).data[1:3]
    assert test_runs.marker.color == "#2e8b3e" and (hand.marker.symbol, hand.marker.color) == ("star", "#dc143c")
    look = styles.ARCHITECTURE_STYLES["2layer_signs"]
    monkeypatch.setitem(styles.ARCHITECTURE_STYLES, "2layer_signs", replace(look, colour="#123456"))
    assert fp.result_figure(FigureResult("fig4", rows, "", True, 0.0)).data[1].marker.color == "#123456"
