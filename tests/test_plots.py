"""The figures: one style (colour by family, line style by mode), readable log axes, labelled axes,
legends outside the data, hover fields, static pictures beside the interactive ones, and α = 0."""

import base64
import math
import re

import pytest
import torch

pytest.importorskip("plotly")

from resnetlearn.classroom import figures_plotly as fp  # noqa: E402
from resnetlearn.classroom import static_picture  # noqa: E402
from resnetlearn.classroom.plots import (  # noqa: E402
    BETA_COLOURS,
    family,
    learner_style,
    log_ticks,
    placeholder_figure,
    tick_label,
    to_png,
)
from resnetlearn.reproduce import FigureResult  # noqa: E402

REDS, BLUES, GREENS = "#c62828", "#1f5fbf", "#2e8b3e"


def fig2a_rows(seeds: bool = False):
    rows = []
    for arch, base in (("3resnet", 0.05), ("3layer", 2.0), ("2layer", 2.1)):
        for mode, factor in (("all", 1.0), ("last", 8.0), ("ntk", 6.0)):
            for m in (20, 50, 200, 500):
                e = base * factor * (1 + 20 / m)
                row = dict(figure="fig2a", scale="cpu", model=arch, mode=mode, m=m, n_train=500, beta=1.0, alpha=0.3,
                           test_error=e, train_error=e / 10, lr=0.1, wd=0.005, grid_size=20, diverged=0)
                if seeds:
                    row["seed_errors"] = [e * 0.9, e, e * 1.2, math.nan]
                rows.append(row)
    return rows


def test_style_by_family_and_mode():
    assert learner_style("3resnet", "all")["color"] == REDS
    assert learner_style("3layer", "all")["color"] == BLUES
    assert learner_style("2layer", "hidden")["color"] == GREENS
    assert learner_style("3resnet", "last")["color"] == REDS and learner_style("3resnet", "last")["dash"] == "dot"
    assert learner_style("3resnet", "ntk")["dash"] == "dash" and learner_style("3resnet", "all")["dash"] == "solid"
    grey = learner_style("gaussian")["color"]
    assert grey[1:3] == grey[3:5] == grey[5:7]  # a grey
    for name in ("conjugate:2layer", "ntk:3resnet", "ntk_inf:3resnet_eq21", "arcsine"):
        assert learner_style(name)["color"] not in (REDS, BLUES, GREENS)
    assert family("3resnet", "last") == "conjugate kernel" and family("2layer", "ntk") == "NTK"
    assert family("3layer", "all") == "fully connected" and family("arcsine_bias") == "classical kernel"
    # the 14 learners of the Theorem 3 plot (13 kernels and the 3resnet, read from its points) get 14 distinct
    # (colour, dash, marker) styles
    from resnetlearn.reproduce.figures import points

    learners = {(p["model"], p["mode"]) for p in points("thm3", "cpu")}
    styles = {tuple(learner_style(*k)[x] for x in ("color", "dash", "marker")) for k in learners}
    assert len(learners) == 14 and len(styles) == 14


def test_log_ticks_are_plain_numbers():
    assert log_ticks(0.05, 30) == [0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20]
    assert len(log_ticks(1e-4, 100)) <= 9
    for v in log_ticks(1e-4, 1e4) + [20, 50, 200, 500, 300]:
        label = tick_label(v)
        assert "×" not in label and "e" not in label and "^" not in label, label
    assert tick_label(300) == "300" and tick_label(0.05) == "0.05"


def test_result_figure_fig2a_colours_axes_legend_and_hover():
    fig = fp.result_figure(FigureResult("fig2a", fig2a_rows(), "", True, 0.0))
    traces = {t.name: t for t in fig.data}
    assert {"3resnet(all)", "3layer(last)", "2layer(ntk)"} <= set(traces)
    assert traces["3resnet(all)"].line.color == REDS and traces["3layer(all)"].line.color == BLUES
    assert traces["2layer(last)"].line.color == GREENS and traces["2layer(last)"].line.dash == "dot"
    assert traces["3resnet(all)"].legendgroup == "ResNet"
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert list(fig.layout.xaxis.tickvals) == [20, 50, 200, 500]
    assert list(fig.layout.xaxis.ticktext) == ["20", "50", "200", "500"]
    assert "width m" in fig.layout.xaxis.title.text and "test error" in fig.layout.yaxis.title.text
    assert fig.layout.legend.x > 1  # outside the data
    assert "paper: only 3resnet(all) gets below kα²" in fig.layout.title.text and "cpu scale" in fig.layout.title.text
    hover = traces["3resnet(all)"].hovertemplate
    for field in ("lr", "wd", "train error", "grid"):
        assert f"{field}:" in hover
    kline = [t for t in fig.data if t.name.startswith("kα²")]
    assert kline and kline[0].y[0] == pytest.approx(1.35) and kline[0].line.color == "#dc143c"


def test_hover_shows_seed_count_and_spread():
    fig = fp.result_figure(FigureResult("fig2a", fig2a_rows(seeds=True), "", True, 0.0))
    t = next(t for t in fig.data if t.name == "3resnet(all)")
    assert "seeds:" in t.hovertemplate and "median over fresh seeds:" in t.hovertemplate
    assert "diverged seeds:" in t.hovertemplate and "seed 0 (chose lr, wd):" in t.hovertemplate
    k = int(re.search(r"<br>seeds: %\{customdata\[(\d+)\]\}", t.hovertemplate).group(1))
    assert t.customdata[0][k] == "4"
    # min-max over the seeds' finite errors as error bars, about the plotted median of the fresh seeds
    rows = sorted((r for r in fig2a_rows(seeds=True) if (r["model"], r["mode"]) == ("3resnet", "all")),
                  key=lambda r: r["m"])
    finite = [[e for e in r["seed_errors"] if math.isfinite(e)] for r in rows]
    median = [sorted(f[1:])[0] / 2 + sorted(f[1:])[-1] / 2 for f in finite]  # the two finite fresh seeds
    assert list(t.x) == [r["m"] for r in rows] and list(t.y) == pytest.approx(median)
    assert list(t.error_y.array) == pytest.approx([max(f) - y for f, y in zip(finite, median)])
    assert list(t.error_y.arrayminus) == pytest.approx([y - min(f) for f, y in zip(finite, median)])


def test_interactive_figure_draws_what_the_tables_and_pngs_draw():
    """The plotted number is the median over the fresh seeds (seed 0 chose the cell and is left out), and
    for a (last)/(ntk) point the better of that and its exact kernel solution: every competitor at its best."""
    rows = fig2a_rows(seeds=True)
    ntk = next(r for r in rows if (r["model"], r["mode"], r["m"]) == ("2layer", "ntk", 500))
    ntk["exact_test_error"] = 1.5  # the exact kernel ridge regression beats SGD's seeds (about 13)
    fig = fp.result_figure(FigureResult("fig2a", rows, "", True, 0.0))
    res = next(t for t in fig.data if t.name == "3resnet(all)")
    e = 0.05 * (1 + 20 / 200)  # fig2a_rows' seed-0 error at m = 200; fresh seeds e, 1.2 e and a diverged one
    assert res.y[list(res.x).index(200)] == pytest.approx(1.1 * e)  # median of the finite fresh seeds, not e
    two = next(t for t in fig.data if t.name == "2layer(ntk)")
    assert two.y[list(two.x).index(500)] == pytest.approx(1.5)


def test_hover_from_the_per_run_table():
    rows = fig2a_rows()
    runs = [dict(r, seed=s, test_error=r["test_error"] * (1 + 0.1 * s)) for r in rows for s in (0, 1, 2)]
    runs += [dict(rows[0], lr=0.05, seed=0, test_error=9.0)]  # another grid cell: not a seed of the selection
    stats = fp.seed_stats(runs, rows[0])
    assert stats["n_seeds"] == 3 and stats["grid_runs"] == 4
    assert stats["test_error_min"] == pytest.approx(rows[0]["test_error"])
    fig = fp.result_figure(FigureResult("fig2a", rows, "", True, 0.0), runs)
    assert "seeds:" in fig.data[0].hovertemplate and "max over seeds:" in fig.data[0].hovertemplate


def test_fig3_small_multiples_coloured_by_beta():
    rows = [dict(model="3resnet", mode=mode, m=m, n_train=500, beta=b, test_error=2.0 - b + 10 / m, lr=0.1, wd=0.005)
            for mode in ("all", "hidden") for b in (0.0, 0.2, 0.3, 0.5, 1.0) for m in (20, 50, 100, 200)]
    fig = fp.result_figure(FigureResult("fig3", rows, "", True, 0.0))
    betas = [t for t in fig.data if t.name.startswith("β")]
    assert len(betas) == 10 and {t.xaxis for t in betas} == {"x", "x2"}
    assert {t.line.color for t in betas} == set(BETA_COLOURS)
    assert sum(bool(t.showlegend) for t in betas) == 5  # one legend entry per β
    assert fig.layout.xaxis2.type == "log" and "α ≲ β" in fig.layout.title.text
    assert len(static_picture.to_matplotlib(fig).axes) == 2


def test_thm3_kernels_and_fig4():
    from resnetlearn.kernels.registry import DEFAULT_KERNELS

    rows = [dict(model=k, mode="kernel", m=500, n_train=n, test_error=0.4, ridge_rel=0.01, setting="")
            for k in DEFAULT_KERNELS for n in (250, 500)]
    rows += [dict(model="3resnet", mode="all", m=200, n_train=n, test_error=e, lr=0.1, wd=0.001)
             for n, e in ((250, 0.002), (500, 0.0005))]
    fig = fp.result_figure(FigureResult("thm3", rows, "", True, 0.0))
    names = [t.name for t in fig.data]
    assert "3resnet" in names and any(n.startswith("α²/4") for n in names)
    assert fig.layout.xaxis.title.text.startswith("N") and "ridge" in fig.data[1].hovertemplate
    assert fig.layout.yaxis.range[0] < math.log10(0.0005)  # the ResNet's small errors are inside the axes
    grid = [[0.5, 1.1, 80.0], [0.9, 1.0, 5.0]]
    rows4 = [dict(model="2layer_signs", mode="hidden", m=200, test_error=1.0, grid=grid),
             dict(model="hand_built", mode="-", m=200, wd=0.0, test_error=0.0, frobenius_W=100.0)]
    fig4 = fp.result_figure(FigureResult("fig4", rows4, "", True, 0.0))
    assert fig4.data[-1].marker.symbol == "star" and fig4.layout.xaxis.type == "log"
    assert "‖W‖_F" in fig4.layout.yaxis.title.text


def test_training_curves_two_panels_and_alpha_zero():
    E, G = 5, 1
    curves = {n: torch.rand(E, G) + 0.1 for n in ("train", "test", "out1_vs_base", "residual_vs_composite")}
    fig = fp.training_curves([10, 20, 30, 40, 50], curves, 1.35, ["3resnet(all)"], total_epochs=100)
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis2.title.text  # the right panel has a y label
    assert fig.layout.xaxis.range[1] == 100
    # whole-epoch ticks in both panels, from the figures' one epoch axis (100 epochs: every 20)
    assert fig.layout.xaxis.dtick == fig.layout.xaxis2.dtick == 20 and fig.layout.xaxis2.title.text == "epoch"
    assert fig.layout.xaxis.tick0 == fig.layout.xaxis2.tick0 == 0 and tuple(fig.layout.xaxis2.range) == (0, 100)
    assert any(t.name.startswith("kα²") and t.visible for t in fig.data)
    fig0 = fp.training_curves([10, 20, 30, 40, 50], curves, 0.0, ["3resnet(all)"])
    assert not any(t.visible and t.name.startswith("kα²") for t in fig0.data if t.visible is not None)
    assert "α = 0" in fig0.layout.title.text


def _training_picture(epochs, curves, threshold, **kw):
    """The live trainer's static picture: the plotly training curves drawn by the one static renderer."""
    return static_picture.to_matplotlib(fp.training_curves(epochs, curves, threshold, ["3resnet(all)"], **kw))


def test_training_picture_labels_and_alpha_zero():
    E = 4
    curves = {n: torch.rand(E, 1) + 0.1 for n in ("train", "test", "out1_vs_base", "residual_vs_composite")}
    fig = _training_picture([1, 2, 3, 4], curves, 1.35)
    assert len(fig.axes) == 2 and all(ax.get_ylabel() for ax in fig.axes)  # both panels have a y label
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert any(lab.startswith("kα²") for lab in labels)
    fig0 = _training_picture([1, 2, 3, 4], curves, 0.0)
    assert not any(t.get_text().startswith("kα²") for leg in fig0.legends for t in leg.get_texts())
    assert "α = 0" in fig0.get_suptitle()  # the title says why there is no kα² line


def test_epoch_axis_is_whole_and_integer_with_one_evaluation():
    """One evaluation so far (a run stopped early): the axis spans 0 to the run's length with integer ticks
    (not 12.4 … 13.6 around the lone point), and the point is drawn as a dot."""
    curves = {n: torch.tensor([[0.8]]) for n in ("train", "test", "out1_vs_base", "residual_vs_composite")}
    fig = _training_picture([13], curves, 1.35, total_epochs=400)
    for ax in fig.axes:
        assert ax.get_xlim() == (0, 400)
        ticks = [t for t in ax.get_xticks() if 0 <= t <= 400]
        assert len(ticks) >= 3 and all(float(t).is_integer() for t in ticks)
    assert fig.axes[0].lines[0].get_marker() not in (None, "", "None")
    short = _training_picture([1, 2, 3], {n: torch.rand(3, 1) + 0.5 for n in curves}, 1.35, total_epochs=3)
    assert all(float(t).is_integer() for t in short.axes[0].get_xticks())


def test_one_style_sets_readable_sizes():
    """Legends of 10 pt at 90 dpi are 12.5 px; a full-width picture is 846 px, shown at its own size in a
    notebook at 1280×800, so that is what the reader sees (it was ~6-7 px)."""
    from resnetlearn.classroom.plots import DPI, FIGURE_WIDTH, style

    assert style()["legend.fontsize"] * DPI / 72 >= 12 and FIGURE_WIDTH * DPI <= 860
    fig = _training_picture([1, 2], {n: torch.rand(2, 1) + 0.5 for n in ("train", "test", "out1_vs_base",
                                                                         "residual_vs_composite")}, 1.35)
    assert all(t.get_fontsize() >= 10 for leg in fig.legends for t in leg.get_texts())


def test_static_picture_and_display(monkeypatch):
    fig = fp.result_figure(FigureResult("fig2a", fig2a_rows(), "", True, 0.0))
    mfig = static_picture.to_matplotlib(fig)
    ax = mfig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["20", "50", "200", "500"]
    assert "test error" in ax.get_ylabel() and mfig.legends  # legend outside the axes
    bundle = fp.mime_bundle(fig)
    assert base64.b64decode(bundle["image/png"])[:4] == b"\x89PNG"
    assert bundle[fp.PLOTLY_MIME]["data"] and bundle["text/plain"].startswith("<interactive figure")
    shown = []
    import IPython.display

    monkeypatch.setattr(IPython.display, "publish_display_data", lambda data, *a, **k: shown.append(data))
    fp.show_figure(fig)
    assert shown and set(shown[0]) == {fp.PLOTLY_MIME, "image/png", "text/plain"}


def test_placeholder_is_a_picture():
    assert to_png(placeholder_figure("press Train", 1.35))[:4] == b"\x89PNG"
    assert to_png(placeholder_figure("press Train", 0.0))[:4] == b"\x89PNG"


def test_line_figure_for_kernels_against_n():
    curves = {"gaussian": [9.0, 8.0, 7.5], "ntk_inf:2layer": [8.5, 7.0, 6.0], "3resnet(all)": [3.0, 0.5, 0.1]}
    fig = fp.line_figure([250, 500, 1000], curves, x_title="N (training samples)", lines=[(1.35, "kα²")],
                         title="kernels stay above kα²")
    t = {x.name: x for x in fig.data}
    assert t["3resnet(all)"].line.color == REDS and t["gaussian"].line.color != REDS
    assert list(fig.layout.xaxis.ticktext) == ["250", "500", "1000"] and fig.layout.yaxis.type == "log"
    assert t["kα² = 1.35"].line.color == "#dc143c" and "N = %{x:~g}" in t["gaussian"].hovertemplate
    other = fp.line_figure([2, 4, 8], {"C_s(F)": [1, 2, 3], "C_s(G∘F)": [10, 100, 1000]}, x_title="d",
                           y_title="C_s")
    assert other.data[0].line.color != other.data[1].line.color


def test_matplotlib_log_ticks_are_plain():
    curves = {n: torch.tensor([[20.0], [2.0], [0.5], [0.61]]) for n in
              ("train", "test", "out1_vs_base", "residual_vs_composite")}
    fig = _training_picture([1, 2, 3, 4], curves, 1.35)
    fig.canvas.draw()
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        assert labels and not any("10^" in x or "times" in x or "×" in x for x in labels), labels


def test_wide_log_ranges_use_powers_of_ten():
    ticks = log_ticks(3e4, 4e15)
    assert len(ticks) <= 9 and [tick_label(t) for t in ticks][-1] == "10¹⁵"
    assert tick_label(200_000) == "200k" and tick_label(1e-5) == "10⁻⁵"


def test_static_picture_spells_subscripts_and_the_complexity_glyph_in_mathtext():
    # plotly's <sub> tags and ℭ_s / ℭ_ε become mathtext (a real subscript in the static picture)
    assert static_picture.mpl_text("C<sub>s</sub>(G∘F)") == "C$_{s}$(G∘F)"
    assert static_picture.mpl_text("10<sup>5</sup>") == "10$^{5}$"
    assert static_picture.mpl_text("ℭ_s (log scale)") == r"$\mathfrak{C}_s$ (log scale)"
    assert static_picture.mpl_text("ℭ_ε and ℭ") == r"$\mathfrak{C}_\varepsilon$ and $\mathfrak{C}$"
    assert static_picture.mpl_text("test error") == "test error"
    fig = fp.line_figure([2, 4, 8], {"C<sub>s</sub>(F)": [1, 2, 3], "C<sub>s</sub>(G∘F)": [10, 100, 1000]},
                         x_title="input dimension d", y_title="C<sub>s</sub>  (log scale)", title="ℭ_s, composed")
    mfig = static_picture.to_matplotlib(fig)
    texts = [mfig.axes[0].get_ylabel(), mfig._suptitle.get_text()] + [t.get_text() for t in mfig.legends[0].texts]
    assert all("<sub>" not in t and "ℭ" not in t for t in texts), texts
    assert mfig.axes[0].get_ylabel() == "C$_{s}$  (log scale)" and r"\mathfrak{C}" in mfig._suptitle.get_text()
    assert to_png(mfig)[:4] == b"\x89PNG"


def test_line_figure_x_hover_without_trailing_zeros():
    fig = fp.line_figure([2, 30], {"C<sub>s</sub>(F)": [1.0, 2.0]}, x_title="input dimension d", y_title="C_s",
                         x_hover_format="~g")
    assert "d = %{x:~g}" in fig.data[0].hovertemplate
    assert "d = %{x:~g}" in fp.line_figure([2, 30], {"a": [1.0, 2.0]}, x_title="d").data[0].hovertemplate


def test_complexity_symbol_is_an_assigned_character_every_font_draws():
    """ℭ is U+212D; its look-alike U+1D506 is unassigned (no font has it: drawn □ on a projector)."""
    import unicodedata
    from pathlib import Path

    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    assert unicodedata.name("ℭ") == "BLACK-LETTER CAPITAL C"
    assert 0x212D in FT2Font(font_manager.findfont("DejaVu Sans")).get_charmap()
    root = Path(__file__).resolve().parents[1]
    texts = [p for d in ("resnetlearn", "notebooks", "tests") for p in (root / d).rglob("*.*")
             if p.suffix in (".py", ".ipynb", ".md")] + [root / "README.md"]
    bad = [str(p.relative_to(root)) for p in texts if chr(0x1D506) in p.read_text(encoding="utf-8")]
    assert not bad, f"unassigned U+1D506 used for ℭ in {bad}"


def test_result_figures_draw_error_bars_whole_fit_the_legend_and_keep_the_title_clear_of_the_modebar():
    """What a browser shows of notebook 05's figures: no error-bar caps and top markers cut by the plot
    area's edge, the kernel theorem's legend scrolled (classical kernels and reference lines hidden below its
    fold), every long title running under plotly's mode bar."""
    from resnetlearn.kernels.registry import DEFAULT_KERNELS

    fig = fp.result_figure(FigureResult("fig2a", fig2a_rows(seeds=True), "", True, 0.0))
    bars = [(t.y[i] + t.error_y.array[i], t.y[i] - t.error_y.arrayminus[i]) for t in fig.data
            if t.error_y is not None and t.error_y.array is not None for i in range(len(t.y))]
    top, bottom = max(b[0] for b in bars), min(b[1] for b in bars)
    lo, hi = fig.layout.yaxis.range
    assert hi > math.log10(top) + 0.03 and lo < math.log10(bottom) - 0.03  # room for a marker's radius
    rows = [dict(model=k, mode="kernel", m=500, n_train=n, test_error=0.4, ridge_rel=0.01, setting="")
            for k in DEFAULT_KERNELS for n in (250, 500)]
    rows += [dict(model="3resnet", mode="all", m=200, n_train=n, test_error=e, lr=0.1, wd=0.001)
             for n, e in ((250, 0.002), (500, 0.0005))]
    rows3 = [dict(model="3resnet", mode=mode, m=m, n_train=500, beta=b, test_error=2.0 - b + 10 / m)
             for mode in ("all", "hidden") for b in (0.0, 0.5, 1.0) for m in (20, 50)]
    for f in (fig, fp.result_figure(FigureResult("thm3", rows, "", True, 0.0)),
              fp.result_figure(FigureResult("fig3", rows3, "", True, 0.0))):
        m = f.layout.margin
        assert f.layout.height - m.t - m.b >= fp.legend_height(f), f.layout.title.text  # the whole legend
        title = f.layout.title
        assert title.yref == "container" and title.yanchor == "top" and title.pad.t >= 30  # below the mode bar
        if f.layout.annotations:  # subplot titles: between the title's line and the panels
            assert m.t >= title.pad.t + 20 + 20
    assert fp.legend_height(fp.result_figure(FigureResult("thm3", rows, "", True, 0.0))) > 340  # grew for it


def race_frame(epochs_total: int, n_evals: int) -> dict:
    """A race frame (:meth:`resnetlearn.classroom.race.RaceResult.state`'s form) with ``n_evals`` evaluations."""
    learners = [dict(arch="3resnet", mode="all", lr=0.1, wd=0.01), dict(arch="3layer", mode="all", lr=0.1, wd=0.005)]
    curves = {label: {"epochs": list(range(1, n_evals + 1)), "test": [2.0 / (1 + i) for i in range(n_evals)],
                      "train": [1.0] * n_evals} for label in ("3resnet(all)", "3layer(all)")}
    return dict(learners=learners, curves=curves, kernel=None, kernel_name=None, threshold=1.35,
                epochs_total=epochs_total, alpha=0.3, beta=1.0, m=20, n_train=100)


@pytest.mark.parametrize("total, step", [(1, 1), (3, 1), (13, 2), (40, 5), (200, 50)])
def test_epoch_axis_whole_ticks_in_both_renderers(total, step):
    from resnetlearn.classroom.race import race_figure

    assert fp.epoch_axis(total)["dtick"] == step and fp.epoch_axis(total)["range"] == [0, total]
    fig = race_figure(race_frame(total, 1))
    assert fig.layout.xaxis.dtick == step and tuple(fig.layout.xaxis.range) == (0, total)
    ax = static_picture.to_matplotlib(fig).axes[0]  # the race's one renderer: its static picture reads the same ticks
    ax.figure.canvas.draw()
    ticks = [t for t in ax.get_xticks() if 0 <= t <= total]
    assert ticks == [step * i for i in range(total // step + 1)]
    assert ax.get_xlabel() == "epoch" and ax.get_ylabel().startswith("test error")
    # a learner with one evaluation so far is a dot (a line of one point draws nothing)
    dots = [line for line in ax.get_lines() if len(line.get_xdata()) == 1 and line.get_marker() == "o"]
    assert len(dots) == 2


def test_race_picture_follows_the_style_large_and_titles_with_line_breaks():
    from resnetlearn.classroom.race import race_figure

    state = race_frame(30, 10)
    small = static_picture.to_matplotlib(race_figure(state, title="Finished race<br>below kα²: 3resnet(all)"))
    large = static_picture.to_matplotlib(race_figure(state), large=True)
    assert small._suptitle.get_text() == "Finished race\nbelow kα²: 3resnet(all)"
    assert large.get_size_inches()[0] > small.get_size_inches()[0]
    assert large.axes[0].xaxis.label.get_fontsize() > small.axes[0].xaxis.label.get_fontsize()
    colours = {line.get_label(): line.get_color() for line in small.axes[0].get_lines()}
    assert REDS in {c.lower() for c in colours.values()} and BLUES in {c.lower() for c in colours.values()}
    labels = [t.get_text() for t in small.legends[0].get_texts()]
    assert labels[0].startswith("3resnet(all)") and any(lab.startswith("kα² = 1.35") for lab in labels)
