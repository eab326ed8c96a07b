"""Experiments machinery (arXiv v3 §8): results store, CLI, executor seam."""

import json
import os
from pathlib import Path

import pytest

from resnetlearn import __main__ as cli
from resnetlearn.classroom import figures_plotly as fp
from resnetlearn.classroom import static_picture
from resnetlearn.reproduce import (
    ResultsStore,
    error_table,
    load_figure,
    run_figure,
    run_point,
    summarise,
)
from resnetlearn.reproduce.figures import points as figure_points


def test_store_key_atomic_write_and_resume(tmp_path):
    store = ResultsStore(tmp_path)
    cfg = figure_points("fig2a", "tiny", device="cpu")[0]
    assert store.key(cfg) == store.key(dict(cfg))
    assert store.key(cfg) != store.key(dict(cfg, m=9))  # any setting changes the key
    assert store.get(cfg) is None
    p = store.put(cfg, {"test_error": 1.5})
    assert json.loads(p.read_text())["result"] == {"test_error": 1.5}
    assert not [f for f in os.listdir(p.parent) if f.endswith(".tmp")]  # no half-written files left
    # resume: a second run reuses every stored point
    first = run_figure("fig2a", "tiny", "cpu", out=tmp_path / "s", progress=False)
    again = run_figure("fig2a", "tiny", "cpu", out=tmp_path / "s", progress=False)
    assert first.skipped == 0 and again.skipped == len(again.rows) == 9
    assert [r["test_error"] for r in again.rows] == pytest.approx([r["test_error"] for r in first.rows], nan_ok=True)


def test_summary_judges_the_claim_honestly():
    rows = [dict(model=a, mode=m, m=200, test_error=0.1 if (a, m) == ("3resnet", "all") else 2.0)
            for a in ("3resnet", "3layer", "2layer") for m in ("all", "last", "ntk")]
    text, ok = summarise("fig2a", rows)
    assert ok and "reproduced" in text
    rows[3]["test_error"] = 1.0  # another learner below kα²: not the paper's picture
    text, ok = summarise("fig2a", rows)
    assert ok is None and text.endswith("-> partly reproduced: held: 3resnet(all) below kα² robustly; "
                                        "failed: every competitor above kα²")


def test_cli_tiny(tmp_path, capsys):
    assert cli.main(["reproduce", "fig3", "--scale", "tiny", "--device", "cpu", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "fig3:" in out and (tmp_path / "fig3.csv").exists() and (tmp_path / "fig3.png").exists()
    assert len((tmp_path / "fig3.csv").read_text().strip().splitlines()) == 1 + 10
    prov = json.loads((tmp_path / "fig3.provenance.json").read_text())
    assert prov["scale"] == "tiny" and prov["points"] == 10 and "torch" in prov
    loaded = load_figure("fig3", tmp_path)
    assert len(loaded.rows) == 10 and loaded.summary.startswith("fig3:")
    assert loaded.provenance["scale"] == "tiny" and "smoke test" in loaded.provenance["scale_note"]
    table = error_table(loaded)  # one line per (β, mode) curve, every error printed
    assert len(table.splitlines()) == 1 + 10 and all(f"{r['plotted']:.3f}" in table for r in loaded.rows)
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "fig9"])


def test_executor_seam_with_local_dask_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        res = run_figure("companion", "tiny", "cpu", out=tmp_path, executor=client, progress=False)
    local = [run_point(p)["test_error"] for p in figure_points("companion", "tiny", device="cpu")]
    assert [r["test_error"] for r in res.rows] == pytest.approx(local, rel=1e-5, nan_ok=True)


def test_hand_built_solution_invariants():
    # §8.2 footnote 16: padding to d scales ‖W‖_F by √(d/6); duplicating rows to width m keeps it
    from resnetlearn.reproduce.fit import fit_hand_built

    a, b, c = (fit_hand_built(0.0, d=d, m=m, epochs=5).stored() for d, m in ((12, 200), (12, 400), (24, 200)))
    assert b["frobenius_W"] == pytest.approx(a["frobenius_W"], rel=1e-12)
    assert c["frobenius_W"] / a["frobenius_W"] == pytest.approx(2**0.5, rel=1e-12)
    assert a["test_error"] == b["test_error"] == c["test_error"]


def test_fig4_and_thm3_tiny(tmp_path):
    for fig in ("fig4", "thm3"):
        res = run_figure(fig, "tiny", "cpu", out=tmp_path, progress=False)
        assert res.summary.startswith(fig + ":") and res.rows
    # the §8.2 network: fixed output signs, half of each, no bias
    from resnetlearn.learners import networks

    p = networks.init_params("2layer_signs", 8, 1, 10, [0])
    assert set(p) == {"W", "A"} and float(p["A"].sum()) == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="even width"):
        networks.init_params("2layer_signs", 8, 1, 9, [0])


def test_scales_follow_the_paper_protocol_where_they_claim_to():
    from resnetlearn.learners.search import paper_grid
    from resnetlearn.reproduce.figures import SCALE_NOTES, SCALES
    from resnetlearn.reproduce.figures import scale_settings as _scale_settings

    assert set(SCALE_NOTES) == set(SCALES)
    paper, cpu = _scale_settings("paper"), _scale_settings("cpu")
    assert paper["widths"] == [20, 50, 100, 200, 500, 1000, 2000] and paper["epochs"] == 800
    # §8.1's {1, 2, 5}·10^k set, lr 1 (every Figure 4 fit at cpu scale) and 2 included, wd from 0
    assert paper["lrs"] == paper_grid(1e-3, 2.0) and paper["wds"] == [0.0] + paper_grid(1e-5, 0.1)
    assert 1.0 in paper["lrs"] and len(paper["lrs"]) * len(paper["wds"]) == 11 * 14
    assert [p["m"] for p in figure_points("fig4", "paper") if p["model"] == "2layer_signs"][-1] == 100000
    assert [p["m"] for p in figure_points("fig4b", "paper") if p["model"] == "2layer_signs"][-1] == 50000
    # the cpu scale keeps the paper's epochs and N, and its grid lies inside the paper's grid
    assert cpu["epochs"] == 800 and set(cpu["widths"]) < set(paper["widths"])
    assert set(cpu["lrs"]) <= set(paper["lrs"]) and set(cpu["wds"]) <= set(paper["wds"])
    assert {p["n_train"] for p in figure_points("fig2a", "cpu", device="cpu")} == {500}
    assert {p["n_train"] for p in figure_points("fig2b", "cpu", device="cpu")} == {1000}
    fig4 = [p for p in figure_points("fig4", "cpu", device="cpu") if p["model"] == "2layer_signs"]
    assert {(p["d"], p["n_train"]) for p in fig4} == {(40, 5000)}  # §8.2's d and N
    with pytest.raises(ValueError, match="scale must be one of"):
        _scale_settings("huge")


def test_every_run_of_the_grid_is_recorded_with_the_selection(tmp_path):
    import csv

    pts = figure_points("fig2a", "tiny", device="cpu")
    p = dict(pts[0], lrs=[0.01, 0.05], wds=[0.0, 1e-3])
    res = run_point(p)
    grid = [r for r in res["runs"] if r["role"] == "grid"]
    assert len(grid) == 4 and {(r["lr"], r["wd"]) for r in grid} == {(0.01, 0.0), (0.01, 1e-3),
                                                                     (0.05, 0.0), (0.05, 1e-3)}
    chosen = [r for r in res["runs"] if r["selected"]]
    assert len(chosen) == 1 and chosen[0]["test_error"] == res["test_error"]
    assert chosen[0]["test_error"] == min(r["test_error"] for r in grid if not r["diverged"])
    reruns = [r for r in res["runs"] if r["role"] == "rerun"]  # the selected cell, fresh seed 1 (tiny scale)
    assert [(r["lr"], r["wd"], r["seed"]) for r in reruns] == [(chosen[0]["lr"], chosen[0]["wd"], 1)]
    assert res["seed_errors"] == [res["test_error"], reruns[0]["test_error"]]
    # kernels: every (setting, ridge) candidate, the selected one equal to the refitted test error
    kp = [q for q in figure_points("thm3", "tiny", device="cpu") if q["model"] == "gaussian"][0]
    kres = run_point(kp)
    ksel = [r for r in kres["runs"] if r["selected"]]
    from resnetlearn.kernels.registry import KERNEL_REGISTRY, RELATIVE_RIDGES

    bandwidths = KERNEL_REGISTRY["gaussian"].grid["h_rel"]  # 9 bandwidths × 10 ridges, each run once
    pairs = {(r["setting"], r["ridge_rel"]) for r in kres["runs"]}
    assert len(kres["runs"]) == len(pairs) == len(bandwidths) * len(RELATIVE_RIDGES) == 90
    assert {r for _, r in pairs} == set(RELATIVE_RIDGES) and len({s for s, _ in pairs}) == len(bandwidths)
    assert len(ksel) == 1 and ksel[0]["test_error"] == min(r["test_error"] for r in kres["runs"])  # chosen by test
    assert ksel[0]["test_error"] == pytest.approx(kres["test_error"], rel=1e-6)
    # the CLI writes them as FIG_runs.csv: one row per run, the point's configuration repeated
    assert cli.main(["reproduce", "thm3", "--scale", "tiny", "--device", "cpu", "--out", str(tmp_path)]) == 0
    rows = list(csv.DictReader(open(tmp_path / "thm3_runs.csv")))
    assert sum(r["selected"] == "True" for r in rows) == 3 and {r["model"] for r in rows} >= {"gaussian", "3resnet"}


def test_grid_table_marks_the_selected_and_diverged_runs(tmp_path):
    from resnetlearn.reproduce import grid_table, load_runs

    runs = [dict(model="a", lr=0.1, wd=0.0, test_error=1.0, selected=False, diverged=False),
            dict(model="a", lr=0.1, wd=1e-3, test_error=0.5, selected=True, diverged=False),
            dict(model="a", lr=0.2, wd=0.0, test_error=float("nan"), selected=False, diverged=True),
            dict(model="b", lr=0.2, wd=1e-3, test_error=9.0, selected=True, diverged=False)]
    lines = grid_table(runs, model="a").splitlines()
    assert lines[0].split() == ["lr", "\\", "wd", "0", "0.001"]
    assert lines[1].split() == ["0.1", "1.000", "0.500*"] and lines[2].split() == ["0.2", "div"]
    with pytest.raises(ValueError, match="no runs match"):
        grid_table(runs, model="c")
    assert cli.main(["reproduce", "fig3", "--scale", "tiny", "--device", "cpu", "--out", str(tmp_path)]) == 0
    loaded = load_runs("fig3", tmp_path)
    grid = [r for r in loaded if r["role"] == "grid"]
    assert len(grid) == 10 and all(r["selected"] for r in grid if not r["diverged"])  # a 1-run grid


# ----------------------------------------------------------------- diverged points are reported, never min'ed over
def _fig2a_rows(errors: dict) -> list[dict]:
    return [dict(figure="fig2a", model=a, mode=md, m=m, test_error=errors.get((a, md, m), 2.0))
            for a in ("3resnet", "3layer", "2layer") for md in ("all", "last", "ntk") for m in (50, 200)]


def test_summary_excludes_and_names_diverged_points():
    nan = float("nan")
    rows = _fig2a_rows({("3resnet", "all", 200): 0.2, ("3resnet", "all", 50): nan, ("3layer", "all", 50): nan,
                        ("3layer", "all", 200): 1.6, ("2layer", "ntk", 50): nan, ("2layer", "ntk", 200): nan})
    text, ok = summarise("fig2a", rows)
    assert ok is True and " nan" not in text
    assert "m=200: 1/1 seeds below (median 0.200" in text and "3layer(all) at m=200: 1.600" in text
    assert text.endswith("4 diverged points (no finite test error) excluded: 3resnet(all) m=50, "
                         "3layer(all) m=50, 2layer(ntk) m=50, 2layer(ntk) m=200. -> reproduced")
    # the learner the claim is about has no finite point: the summary says so and judges nothing
    rows = _fig2a_rows({("3resnet", "all", 50): nan, ("3resnet", "all", 200): nan, ("3resnet", "last", 50): 0.1})
    text, ok = summarise("fig2a", rows)
    assert ok is False and "not judged (the ResNet has no finite point)" in text  # 3resnet(last) went below
    assert text.endswith("-> not reproduced") and " nan" not in text
    # the other figures: no nan printed, no verdict from missing learners
    fig3 = [dict(figure="fig3", model="3resnet", mode=md, beta=b, m=50, n_train=n, test_error=nan if b == 1.0
                 else 2.0) for b in (0.0, 0.2, 0.3, 0.5, 1.0) for md, n in (("all", 500), ("hidden", 1000))]
    text, ok = summarise("fig3", fig3)
    assert ok is None and "not judged (no finite point at β = 1)" in text and " nan" not in text
    thm3 = [dict(figure="thm3", model=k, mode="kernel", n_train=n, m=500, test_error=0.5) for k in ("gaussian",)
            for n in (50, 100)] + [dict(figure="thm3", model="3resnet", mode="all", n_train=n, m=8,
                                        test_error=0.001 if n == 50 else nan) for n in (50, 100)]
    text, ok = summarise("thm3", thm3)
    assert ok is None and "no finite 3resnet(all) at N=100" in text  # the claim is about every N


def test_cli_tiny_fig2a_reports_its_diverged_points(tmp_path, capsys):
    assert cli.main(["reproduce", "fig2a", "--scale", "tiny", "--device", "cpu", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert " nan" not in out and "diverged point" in out
    result = load_figure("fig2a", tmp_path)
    fig = fp.result_figure(result)  # the one picture: interactive, and drawn for the PNG
    names = [t.name for t in fig.data if t.showlegend is not False and t.name]
    diverged = [r for r in result.rows if r["plotted"] != r["plotted"]]
    assert diverged and fp.DIVERGED_KEY in names
    assert sum("diverged at m=8" in name for name in names) == len(diverged)
    marks = [t for t in fig.data if t.marker.symbol == "x" and t.showlegend is False]
    assert sum(len(t.x) for t in marks) == len(diverged)  # one x per diverged point, none dropped
    top = 10 ** fig.layout.yaxis.range[1]
    drawn = [y for t in fig.data if t.showlegend is not False for y in (t.y or ()) if y is not None]
    assert all(max(drawn) < y < top for t in marks for y in t.y)  # above every drawn point, inside the axes
    mfig = static_picture.to_matplotlib(fig)  # the static picture (the CLI's fig2a.png) keeps the marks and the key
    labels = [t.get_text() for t in mfig.legends[0].get_texts()]
    assert fp.DIVERGED_KEY in labels and sum("diverged at m=8" in lab for lab in labels) == len(diverged)
    assert sum(len(line.get_xdata()) for line in mfig.axes[0].get_lines() if line.get_marker() == "x") \
        == len(diverged) + 1  # the marks and the legend key's (undrawn) point
    assert (tmp_path / "fig2a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ----------------------------------------------------------------- the command line checks before computing
@pytest.mark.parametrize("args, message", [
    (["--out", ""], "--out must name a directory, got an empty string"),
    (["--out", "   "], "--out must name a directory"),
    (["--workers", "-1"], "--workers must be an integer >= 0"),
    (["--workers", "two"], "--workers: invalid int value"),
    (["--device", "tpu"], "--device: device must be one of"),
    (["--scale", "huge"], "--scale: invalid choice"),
    (["--out", "{file}"], "exists and is not a directory"),
    (["--out", "{file}/sub"], "cannot create the directory"),
    (["--out", "{dir_with_store_file}"], "store exists and is not a directory"),
])
def test_cli_refuses_bad_arguments_before_any_point_starts(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "store").write_text("x")
    args = [a.format(file=tmp_path / "a_file", dir_with_store_file=tmp_path / "d") for a in args]
    monkeypatch.setattr(cli, "run_figure", lambda *a, **k: pytest.fail("a point started"))
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(SystemExit) as exit_:
        cli.main(["reproduce", "fig2a", "--scale", "tiny", *args])
    assert exit_.value.code == 2 and message in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written, no store created


def test_cli_refuses_an_unavailable_device(tmp_path, monkeypatch, capsys):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(cli, "run_figure", lambda *a, **k: pytest.fail("a point started"))
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "fig2a", "--device", "cuda", "--out", str(tmp_path / "o")])
    assert "no CUDA GPU is available" in capsys.readouterr().err and not (tmp_path / "o").exists()


def test_cli_creates_a_missing_out_directory(tmp_path, capsys):
    out = tmp_path / "new" / "deeper"
    assert cli.main(["reproduce", "companion", "--scale", "tiny", "--device", "cpu", "--out", str(out)]) == 0
    assert (out / "companion.csv").exists() and (out / "store" / "companion").is_dir()


def test_cli_help_is_plain_text_and_explains_the_scales(capsys):
    from resnetlearn.reproduce import SCALES

    for argv in (["--help"], ["reproduce", "--help"]):
        with pytest.raises(SystemExit):
            cli.main(argv)
        text = capsys.readouterr().out
        assert "``" not in text and ":func:" not in text
    assert all(f"  {s} " in text for s in SCALES) and "smoke test" in text and "GPU" in text


def test_load_latest_takes_the_largest_complete_scale(tmp_path):
    from resnetlearn.reproduce import load_latest

    assert cli.main(["reproduce", "fig4", "--scale", "tiny", "--device", "cpu", "--out", str(tmp_path / "quick")]) == 0
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "fig4.csv").write_text("figure,scale\n")  # an unreadable larger scale is skipped, with why
    res = load_latest("fig4", tmp_path)
    assert res.provenance["directory"] == str(tmp_path / "quick") and "cpu:" in res.provenance["skipped"][0]
    with pytest.raises(ValueError, match="no loadable results for 'fig3'"):
        load_latest("fig3", tmp_path)


def test_figure_4b_runs_at_tiny_scale_with_its_own_mini_batch(tmp_path, capsys, monkeypatch):
    """Figure 4(b) (arXiv v3 §8.2) is one entry in resnetlearn.reproduce.figures: the command line lists it, runs it at
    tiny scale with §8.2's mini-batch 100 (Figure 4(a) keeps §8.1's 50), and refuses the scales that do not
    define it before any point starts."""
    from resnetlearn.reproduce import fit

    real, batches = fit.search_split, []

    def spy(*args, **kwargs):
        batches.append(kwargs["protocol"].batch_size)
        return real(*args, **kwargs)

    monkeypatch.setattr(fit, "search_split", spy)
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "--help"])
    assert "fig4b" in capsys.readouterr().out
    assert cli.main(["reproduce", "fig4b", "--scale", "tiny", "--device", "cpu", "--out", str(tmp_path)]) == 0
    assert cli.main(["reproduce", "fig4", "--scale", "tiny", "--device", "cpu", "--out", str(tmp_path)]) == 0
    assert batches == [100, 50]
    res = load_figure("fig4b", tmp_path)
    assert [r["model"] for r in res.rows] == ["2layer_signs", "hand_built"] and res.rows[0]["d"] == 8
    assert "the paper's best over m up to 50000 is 0.98" in res.summary and "N = 200" in res.summary
    assert (tmp_path / "fig4b.png").exists() and "2layer_signs" in error_table(res)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        cli.main(["reproduce", "fig4b", "--scale", "quick", "--out", str(tmp_path / "q")])
    assert exit_.value.code == 2 and "fig4b is defined at --scale tiny, paper only" in capsys.readouterr().err
    assert not (tmp_path / "q" / "store").exists()


# ----------------------------------------------------------------- verdicts generated, not written
# (whether any sentence contradicts them: tests/test_verdict_statements.py)
VERDICT_BEGIN, VERDICT_END = "<!-- verdicts:begin -->", "<!-- verdicts:end -->"


def _shipped_results():
    from resnetlearn.reproduce import load_latest
    from resnetlearn.reproduce.figures import names

    root = Path(__file__).resolve().parents[1] / "results"
    out = {}
    for name in names():
        try:
            out[name] = load_latest(name, root)
        except ValueError:
            out[name] = None
    return out


def test_readme_verdict_table_is_generated_from_the_tables_and_the_labels_read_are_the_derived_ones():
    """The README's per-figure block is ``verdict_table`` of the shipped results, and the label the
    contradiction reader takes from each summary's text says what the package derives from the rows."""
    from verdict_statements import NOT_RUN, Truth, label_verdict, read_summaries

    from resnetlearn.reproduce.figure_tables import verdict_facts, verdict_table

    shipped = _shipped_results()
    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text()
    block = readme.split(VERDICT_BEGIN)[1].split(VERDICT_END)[0].strip()
    assert block == verdict_table(shipped).strip(), "README's per-figure table is not the generated one"
    truth = Truth(read_summaries(root / "results"))
    for name, res in shipped.items():
        derived = label_verdict(verdict_facts(res)["verdict"]) if res is not None else NOT_RUN
        scale = res.provenance["scale"] if res is not None else "cpu"
        assert truth.verdict(name, scale)[0] == derived, name
        assert res is None or truth.default_scale(name) == scale, name


def test_table_reading_rerun_hints_name_the_folder_and_into_shipped_for_the_shipped_results(tmp_path):
    """The hint of a missing table or provenance is a command that works as printed: ``--out`` the folder
    looked in, its scale when the folder is named after one, and ``--into-shipped`` exactly when the folder
    lies in the shipped results/ (which the command line refuses without it)."""
    from resnetlearn.reproduce.store import PACKAGE_ROOT
    from resnetlearn.reproduce.table_reading import load_runs, rerun_command

    shipped = PACKAGE_ROOT / "results" / "quick"
    assert rerun_command("fig2a", shipped) == f"python -m resnetlearn reproduce fig2a --scale quick --out {shipped} " \
                                               "--into-shipped"
    assert rerun_command("fig2a", tmp_path / "cpu") == f"python -m resnetlearn reproduce fig2a --scale cpu --out " \
                                                       f"{tmp_path / 'cpu'}"
    with pytest.raises(ValueError) as err:  # a figure never run at this scale: the table is missing
        load_figure("fig4b", shipped)
    assert f"run: python -m resnetlearn reproduce fig4b --scale quick --out {shipped} --into-shipped" in str(err.value)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "fig2a_runs.csv").write_text("figure,scale\n")
    with pytest.raises(ValueError) as err:  # the provenance is missing, in a user's folder
        load_runs("fig2a", tmp_path / "mine")
    assert f"rerun: python -m resnetlearn reproduce fig2a --out {tmp_path / 'mine'})" in str(err.value)
    assert "--into-shipped" not in str(err.value)
    # the hint, run as printed in the shipped folder's case, passes the command line's check
    assert cli._output_directory(str(shipped), into_shipped=True) == shipped
