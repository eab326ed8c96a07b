"""Pictures read from the back row: a PNG records its smallest font, the live trainer's picture is drawn at the
width it is shown (so its fonts are not scaled down, and large=True is larger on screen), its two block curves
differ in colour as well as dash, a figure for a slide has every text at 18 px without a trace changed, subplot
titles fit their panels at the narrowest width a figure is shown at, titles break between words, and the race is
drawn no wider than a notebook's output area at 1024×768 (on a slide: titled in one line, its learners' legend
entries in one row)."""

from __future__ import annotations

import struct

from matplotlib.figure import Figure

from resnetlearn.classroom import figures_plotly as fp
from resnetlearn.classroom.plots import DPI, png_smallest_font_pt, to_png


def _png_width(png: bytes) -> int:
    """The width a PNG declares in its IHDR chunk (bytes 16-20), read without any imaging library."""
    assert png[12:16] == b"IHDR"
    return struct.unpack(">I", png[16:20])[0]


def test_a_png_records_its_smallest_font():
    fig = Figure(figsize=(4, 3))
    ax = fig.subplots()
    ax.set_title("title", fontsize=17)
    ax.set_xlabel("x", fontsize=9.5)
    ax.tick_params(labelsize=13)
    assert png_smallest_font_pt(to_png(fig)) == 9.5


def test_live_trainer_picture_is_drawn_at_its_shown_width_with_readable_text():
    from resnetlearn.classroom.live import LiveTrainer

    sizes = {}
    for large in (False, True):
        png, _ = LiveTrainer(large=large).static_picture()
        width, pt = _png_width(png), png_smallest_font_pt(png)
        assert width <= 500, width  # about the widget's width at 1024×768 with the file browser open
        sizes[large] = pt * DPI / 72  # px on screen when shown at its own width
    assert sizes[False] >= 12 and sizes[True] >= 16 and sizes[True] > sizes[False], sizes


def test_block_curves_differ_in_colour_and_dash():
    curves = {k: [[1.0], [0.5]] for k in ("test", "train", "out1_vs_base", "residual_vs_composite")}
    fig = fp.training_curves([10, 20], curves, 1.35, ["3resnet(all)"])
    blocks = [t for t in fig.data if t.xaxis == "x2" and t.showlegend is not False and "vs" in (t.name or "")]
    assert len(blocks) == 2
    (a, b), threshold = blocks, fp.THRESHOLD_COLOUR.lower()
    assert a.line.color != b.line.color and a.line.dash != b.line.dash
    assert threshold not in {a.line.color.lower(), b.line.color.lower()}


def test_a_figure_for_a_slide_has_large_text_and_the_same_traces():
    from resnetlearn.reproduce import FigureResult

    rows = [dict(model=a, mode="all", m=m, n_train=500, beta=1.0, test_error=e / m, lr=0.1, wd=0.005)
            for a, e in (("3resnet", 10.0), ("3layer", 400.0)) for m in (20, 50, 200)]
    fig = fp.result_figure(FigureResult("fig2a", rows, "", True, 0.0))
    slide = fp.for_projector(fig, title="short")
    assert slide.layout.title.text == "short" and slide.layout.font.size >= 18
    assert slide.layout.legend.font.size >= 18 and slide.layout.xaxis.tickfont.size >= 18
    assert all(a.font.size >= 18 for a in slide.layout.annotations or ())
    assert [t.to_plotly_json() for t in slide.data] == [t.to_plotly_json() for t in fig.data]
    assert fig.layout.font.size != slide.layout.font.size  # the original is untouched


def _width_px(text: str, size: float) -> float:
    """The width of ``text`` set in DejaVu Sans (the figures' font) at ``size`` px, measured from its glyph outlines
    by matplotlib: a route independent of the figures' own estimate."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    return TextPath((0, 0), text, size=size, prop=FontProperties(family="DejaVu Sans")).get_extents().width


def _fig3():
    from resnetlearn.reproduce import FigureResult

    rows = [dict(model="3resnet", mode=mode, m=m, n_train=n, beta=b, test_error=2.0 - b + 10 / m)
            for mode, n in (("all", 500), ("all", 1000), ("hidden", 1000)) for b in (0.0, 0.5, 1.0)
            for m in (20, 50, 200)]
    return fp.result_figure(FigureResult("fig3", rows, "", True, 0.0))


def _panel_titles_fit(fig, width_px: float) -> list[str]:
    """The lines of subplot titles wider than their panel when ``fig`` is ``width_px`` wide."""
    m = fig.layout.margin
    inner = width_px - m.l - m.r
    domains = [fig.layout[k].domain for k in fig.layout if k.startswith("xaxis") and fig.layout[k].domain]
    wide = []
    for a in fig.layout.annotations:
        if a.yref == "paper" and a.y >= 1:
            panel = next(d for d in domains if d[0] <= a.x <= d[1])
            wide += [line for line in a.text.split("<br>")
                     if _width_px(line, a.font.size) > inner * (panel[1] - panel[0])]
    return wide


def test_subplot_titles_fit_their_panels_in_the_lab_and_on_a_slide():
    fig = _fig3()
    assert len([a for a in fig.layout.annotations if a.yref == "paper" and a.y >= 1]) == 3
    assert _panel_titles_fit(fig, fp.NARROW_PX) == []
    assert _panel_titles_fit(fp.for_projector(fig, title="Figure 3"), fp.DECK_PX) == []
    # the three panels share their x quantity: titled once
    assert [fig.layout[k].title.text for k in ("xaxis", "xaxis2", "xaxis3")].count("") == 2


def test_titles_break_between_words_never_inside_a_setting():
    title = fp.wrap_title("Race on the same 500 samples: α = 0.30, β = 1.00, m = 200 (a hand-built one)", 40)
    assert all(len(line) <= 40 for line in title.split("<br>"))
    assert "=<br>" not in title and "<br>=" not in title and "hand-<br>" not in title
    assert title.replace("<br>", " ") == "Race on the same 500 samples: α = 0.30, β = 1.00, m = 200 (a hand-built one)"


def test_the_race_is_drawn_no_wider_than_a_notebooks_output_area_at_1024():
    """A FigureWidget keeps the width it is first drawn at: the race's layout width fits the narrowest output area,
    and its title's lines fit that width at their font size."""
    from resnetlearn.classroom.live import RaceConfig, cached_result
    from resnetlearn.classroom.race import race_figure

    state = cached_result("race", RaceConfig())["state"]
    for large in (False, True):
        fig = race_figure(state, large=large)
        assert fig.layout.width <= fp.NARROW_PX and fig.layout.autosize is False
        size = fig.layout.title.font.size
        assert all(_width_px(line, size) <= fig.layout.width - 20 for line in fig.layout.title.text.split("<br>"))
        assert fig.layout.legend.orientation == "h"  # the legend in rows under the plot, not beside it
        learners = fig.data[:len(state["learners"])]
        assert all("lr " in t.hovertemplate and "wd " in t.hovertemplate for t in learners)
        if large:
            # on a slide, where height is short: a title of one line and the learners' entries in one row (plotly
            # lays an entry out as a 40-px line sample and gaps beside its text, and wraps at the plot's width)
            assert "<br>" not in fig.layout.title.text
            plot = fig.layout.width - fig.layout.margin.l - fig.layout.margin.r
            assert sum(_width_px(t.name, fig.layout.legend.font.size) + 40 for t in learners) <= plot
        else:
            assert all("lr " in t.name and "wd " in t.name for t in learners)
