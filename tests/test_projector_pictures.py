"""Pictures read from the back row: a PNG records its smallest font, the live trainer's picture is drawn at the
width it is shown (so its fonts are not scaled down, and large=True is larger on screen), its two block curves
differ in colour as well as dash, and a figure for a slide has every text at 18 px without a trace changed."""

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
