"""Interactive figures (plotly) for the notebooks, with a static picture for every reader.

Every function returns a ``plotly.graph_objects.Figure`` drawn in one style
(:func:`resnetlearn.classroom.plots.learner_style`): colour by family — ResNet reds,
3layer blues, 2layer greens, classical kernels greys, conjugate kernels
purples, NTKs magentas —, line style by training mode (solid: trained, dotted:
``last`` = conjugate kernel, dashed: ``ntk``), a marker at every measured
point, log axes with plain tick labels at the measured widths / sample sizes
(never ``3×10²``), every axis titled with its quantity, the legend outside
the data (click an entry to hide its family), and the kα² line.

:func:`show_figure` displays a figure as one output carrying both the plotly
JSON (JupyterLab and nbviewer draw it interactively) and a PNG drawn by
matplotlib (:func:`to_matplotlib`; GitHub and other static readers show it).
nbval compares plotly JSON: tag such cells ``nbval-ignore-output`` and
print the numbers that matter in a separate cell.
"""

from __future__ import annotations

import base64
import json
import math

import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from ..kernels.registry import DEFAULT_KERNELS
from ..learners.networks import ARCHITECTURES
from ..reproduce.figures import learner
from ..reproduce.figures import spec as figure_spec
from ..reproduce.learner import kind_of
from ..reproduce.rows import median_error, plotted_error
from ..reproduce.verdicts import FIG3_MODES
from ..targets.concept import parity_instance
from ..validation import is_finite
from .plots import (
    BETA_COLOURS,
    THRESHOLD_COLOUR,
    has_threshold,
    learner_style,
    log_ticks,
    threshold_label,
    tick_label,
    to_png,
)
from .static_picture import notebook_picture, to_matplotlib
from .styles import HAND_BUILT_STYLE, trained_layers

PLOTLY_MIME = "application/vnd.plotly.v1+json"
TEMPLATE = go.layout.Template(layout=dict(
    font=dict(family="DejaVu Sans, Arial, sans-serif", size=13, color="#222"),
    plot_bgcolor="white", paper_bgcolor="white",
    xaxis=dict(showline=True, linecolor="#444", mirror=True, ticks="outside", gridcolor="#e6e6e6", zeroline=False),
    yaxis=dict(showline=True, linecolor="#444", mirror=True, ticks="outside", gridcolor="#e6e6e6", zeroline=False),
    hoverlabel=dict(bgcolor="white", font=dict(size=12)),
    colorway=["#7f7f7f"],
))
"""A small explicit template (plotly's default one would add ~10 kB of JSON to every output)."""
LEGEND_OUTSIDE = dict(x=1.02, xanchor="left", y=1.0, yanchor="top", bgcolor="rgba(255,255,255,0.9)",
                      groupclick="togglegroup", tracegroupgap=6)
ERROR_TITLE = "test error  E‖out − y‖²"
X_TITLES = {"m": "width m (neurons per hidden layer)", "n_train": "N (training samples)"}
HOVER_FIELDS = (
    # (row key, label, format) shown on hover when present in the rows; the last ones are the per-seed
    # columns a results table may carry (median / spread over seeds)
    ("train_error", "train error", "{:.3g}"),
    ("lr", "lr", "{:g}"), ("wd", "wd", "{:g}"),
    ("ridge_rel", "ridge (× mean diagonal)", "{:g}"), ("setting", "setting", "{}"),
    ("grid_size", "grid", "{} runs"), ("diverged", "diverged in grid", "{}"),
    ("exact_test_error", "exact kernel solution", "{:.3g}"),
    ("n_seeds", "seeds", "{}"), ("seeds", "seeds", "{}"), ("diverged_seeds", "diverged seeds", "{}"),
    ("seed0_test_error", "seed 0 (chose lr, wd)", "{:.3g}"),
    ("test_error_median", "median over fresh seeds", "{:.3g}"), ("median_test_error", "median over seeds", "{:.3g}"),
    ("test_error_min", "min over seeds", "{:.3g}"), ("test_error_max", "max over seeds", "{:.3g}"),
    ("test_error_spread", "spread over seeds", "{:.3g}"), ("spread", "spread over seeds", "{:.3g}"),
    ("test_error_std", "std over seeds", "{:.3g}"),
)


# ----------------------------------------------------------------- helpers
def log_axis(*, values=None, lo: float | None = None, hi: float | None = None, title: str = "") -> dict:
    """Layout of a log axis with plain tick labels (never ``3×10²``).

    Parameters
    ----------
    values : iterable of float or None, default None
        The measured points: ticks at the positive finite ones, the range a little beyond them.
    lo : float or None, default None
        Without ``values``: the lower end of the data; ticks in 1-2-5 steps in [lo, hi].
    hi : float or None, default None
        Without ``values``: the upper end.
    title : str, default ""
        The axis title.

    Returns
    -------
    dict
        A plotly axis layout.
    """
    if values is not None:
        ticks = sorted({float(v) for v in values if is_finite(v) and v > 0})
        lo, hi = ticks[0] / 1.25, ticks[-1] * 1.25
    else:
        lo, hi = max(lo, 1e-12), max(hi, lo * 1.0001)
        ticks = log_ticks(lo, hi)
        lo, hi = min([lo] + ticks) / 1.1, max([hi] + ticks) * 1.1
    return dict(type="log", tickvals=ticks, ticktext=[tick_label(t) for t in ticks],
                range=[math.log10(lo), math.log10(hi)], title=dict(text=title), minor=dict(showgrid=False))


def _gaps(values) -> list:
    """NaN/inf (a diverged run) as gaps: None is valid JSON, NaN is not."""
    return [v if is_finite(v) else None for v in values]


def _value_range(values, floor: float = 1e-5) -> tuple[float, float]:
    vals = [v for v in values if is_finite(v) and v > 0]
    if not vals:
        return 0.1, 10.0
    return max(min(vals), floor), max(vals)


def _headroom(lo: float, hi: float, factor: float = 1.15) -> tuple[float, float]:
    """A data range widened on a log scale so the extreme markers and error-bar caps are drawn whole, not cut
    by the plot area's edge."""
    return lo / factor, hi * factor


def hline(threshold: float | None, x0: float, x1: float, *, name: str | None = None, xaxis: str = "x",
          yaxis: str = "y", showlegend: bool = True, colour: str = THRESHOLD_COLOUR, dash: str = "dash") -> dict:
    """A horizontal reference line as a plain trace dict (see :func:`threshold_trace`).

    Parameters
    ----------
    threshold : float or None
        The line's value; with no threshold (None, or α = 0) the trace is empty and invisible.
    x0 : float
        Where the line starts.
    x1 : float
        Where it ends.
    name : str or None, default None
        The legend entry; None: :func:`~resnetlearn.classroom.plots.threshold_label`.
    xaxis : str, default "x"
        The x axis it is drawn on.
    yaxis : str, default "y"
        The y axis.
    showlegend : bool, default True
        Whether the legend lists it.
    colour : str, default THRESHOLD_COLOUR
        The colour.
    dash : str, default "dash"
        The plotly dash style.

    Returns
    -------
    dict
    """
    ok = has_threshold(threshold)
    name = name or threshold_label(threshold)
    return dict(type="scatter", x=[x0, x1] if ok else [], y=[threshold, threshold] if ok else [], mode="lines",
                name=name, line=dict(color=colour, dash=dash, width=2), hovertemplate=f"{name}<extra></extra>",
                xaxis=xaxis, yaxis=yaxis, showlegend=showlegend and ok, visible=ok, legendgroup="threshold",
                legendrank=2000)


def threshold_trace(threshold: float | None, x0: float, x1: float, **kw) -> go.Scatter:
    """The kα² line as a trace, so that a legend click hides it and static pictures draw it.

    Invisible when there is no threshold (α = 0).

    Parameters
    ----------
    threshold : float or None
        The line's value.
    x0 : float
        Where the line starts.
    x1 : float
        Where it ends.
    **kw
        ``name``, ``xaxis``, ``yaxis``, ``showlegend``, ``colour``, ``dash`` of :func:`hline`.

    Returns
    -------
    plotly.graph_objects.Scatter
    """
    spec = hline(threshold, x0, x1, **kw)
    spec.pop("type")
    return go.Scatter(**spec)


def _hover(rows: list[dict], fields) -> tuple[list[list[str]], str]:
    """customdata (strings) and the hovertemplate lines for the fields present."""
    data = []
    for r in rows:
        cells = []
        for key, _, fmt in fields:
            v = r.get(key)
            if v is None or (isinstance(v, float) and math.isnan(v)):
                cells.append("–")
            else:
                try:
                    cells.append(fmt.format(v))
                except (ValueError, TypeError):
                    cells.append(str(v))
        data.append(cells)
    lines = "".join(f"<br>{label}: %{{customdata[{i}]}}" for i, (_, label, _) in enumerate(fields))
    return data, lines


def _present(rows: list[dict], fields=HOVER_FIELDS) -> list[tuple]:
    out, labels = [], set()
    for key, label, fmt in fields:
        if label in labels:
            continue
        if any(r.get(key) not in (None, "") and not (isinstance(r.get(key), float) and math.isnan(r[key]))
               for r in rows):
            out.append((key, label, fmt))
            labels.add(label)
    return out


POINT_KEYS = ("model", "mode", "m", "n_train", "beta")


def seed_stats(runs: list[dict], row: dict) -> dict:
    """From a per-run table: how many seeds ran the selected setting of a row's point, and their test errors' spread.

    Parameters
    ----------
    runs : list of dict
        The runs (:func:`resnetlearn.reproduce.load_runs`).
    row : dict
        The point's row.

    Returns
    -------
    dict
        ``grid_runs`` (the point's runs) and, where some run of the selected setting has a finite error, ``n_seeds``,
        ``test_error_min``, ``test_error_max`` and ``test_error_median``; empty when no run belongs to the point.
    """
    same = [r for r in runs if all(r.get(k) == row.get(k) for k in POINT_KEYS if k in r and k in row)]
    if not same:
        return {}
    sel = [r for r in same if r.get("lr") == row.get("lr") and r.get("wd") == row.get("wd")
           and r.get("setting") == row.get("setting") and r.get("ridge_rel") == row.get("ridge_rel")]
    errs = sorted(r["test_error"] for r in sel if is_finite(r.get("test_error")))
    out = {"grid_runs": len(same)}
    if errs:
        out.update(n_seeds=len({r.get("seed") for r in sel}), test_error_min=errs[0], test_error_max=errs[-1],
                   test_error_median=errs[len(errs) // 2] if len(errs) % 2 else
                   0.5 * (errs[len(errs) // 2 - 1] + errs[len(errs) // 2]))
    return out


def row_seed_stats(row: dict) -> dict:
    """Seed count and min / median / max test error from a row's own per-seed column.

    The column is ``seed_errors``: the selected lr / wd cell retrained with fresh seeds, seed 0 first. The median is
    over the fresh seeds, as in the tables.

    Parameters
    ----------
    row : dict
        The row.

    Returns
    -------
    dict
        ``n_seeds``, ``diverged_seeds``, ``seed0_test_error`` and, where some seed is finite, ``test_error_min``,
        ``test_error_max``, ``test_error_median``; empty when the row has no such column.
    """
    errs = row.get("seed_errors")
    if isinstance(errs, str):
        try:
            errs = json.loads(errs)
        except ValueError:
            errs = None
    if not errs:
        return {}
    vals = sorted(float(e) for e in errs if is_finite(e))
    out = {"n_seeds": len(errs), "diverged_seeds": len(errs) - len(vals), "seed0_test_error": float(errs[0])}
    if vals:  # the median is over the fresh seeds (seed 0 chose the cell), as in the tables
        out.update(test_error_min=vals[0], test_error_max=vals[-1],
                   test_error_median=median_error({"seed_errors": [float(e) for e in errs]}))
    return out


def _with_runs(rows: list[dict], runs: list[dict] | None) -> list[dict]:
    out = []
    for r in rows:
        extra = row_seed_stats(r) or (seed_stats(runs, r) if runs else {})
        out.append({**r, **{k: v for k, v in extra.items() if r.get(k) is None}})
    return out


MODEBAR_CLEARANCE = 34
"""Pixels from the figure's top to its title: plotly's mode bar (zoom, pan, … shown while the pointer is on
the figure) takes the top ~28 px at the right, where a long title would run under it."""


def legend_height(fig: go.Figure) -> int:
    """About the height in px that plotly's vertical legend needs for a figure.

    At font 13: about 20 px an entry or a group title, ``tracegroupgap`` between groups. A legend taller than the plot
    area is scrolled by plotly, hiding the entries below.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure.

    Returns
    -------
    int
    """
    shown = [t for t in fig.data if t.showlegend is not False and t.visible is not False and t.name]
    groups = {t.legendgroup for t in shown}
    titled = {t.legendgroup for t in shown if t.legendgrouptitle and t.legendgrouptitle.text}
    title = 1 if fig.layout.legend.title.text else 0
    return 20 * (len(shown) + len(titled) + title) + LEGEND_OUTSIDE["tracegroupgap"] * max(0, len(groups) - 1) + 36


TITLE_CHARACTERS = 60
"""A figure title's longest line (:func:`wrap_title`): at 15 px about 470 px, within a notebook's output area at
1024×768 with the file browser open (plotly does not wrap titles: a longer line runs past the figure's edge)."""


def wrap_title(title: str, width: int = TITLE_CHARACTERS) -> str:
    """A title with plotly line breaks (``<br>``) so that no line is longer than ``width`` characters.

    It is broken before a parenthesis where it can be (a parenthesised remark stays on one line), else between words,
    never inside a word or a setting such as ``m = 200``.

    Parameters
    ----------
    title : str
        The title; existing ``<br>`` are kept.
    width : int, default TITLE_CHARACTERS
        The longest line, in characters.

    Returns
    -------
    str
    """
    import re
    import textwrap

    keep = "\u2060"  # a placeholder for the spaces around "=" while wrapping (never in a title)
    out = []

    def close(text):  # a piece longer than a line (a long remark) is broken between words
        out.extend(textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False)
                   if len(text) > width else [text])

    for line in title.replace(" = ", f"{keep}={keep}").split("<br>"):
        current = ""
        for part in re.split(r"\s+(?=\()", line):
            joined = f"{current} {part}" if current else part
            if len(joined) <= width or not current:
                current = joined
            else:
                close(current)
                current = part
        close(current)
    return "<br>".join(out).replace(keep, " ")


NARROW_PX = 592
"""Width in px of a notebook's output area at 1024×768 with the file browser open (measured by
``course/projector.py``): the narrowest a figure is shown at in the lab, so the one its texts are fitted to
(plotly sizes a figure to its output area but never wraps a text)."""
SUBPLOT_TITLE_FONT = 14
"""Pixel size of a subplot title in the lab's figures (plotly's own, 16, wraps a narrow panel's title to more
lines)."""
CHARACTER_EM = 0.55
"""About the width of a character in the figures' font (DejaVu Sans), in units of its size: a text of n characters
at s px is at most about 0.55·n·s px wide (lower-case letters, digits and spaces; measured in Chromium)."""


def text_px(text: str, size: float) -> float:
    """About the width in px of the longest line of a plotly text (lines split at ``<br>``).

    Parameters
    ----------
    text : str
        The text; ``<sub>`` and ``<sup>`` tags are not counted.
    size : float
        The font size in px.

    Returns
    -------
    float
    """
    import re

    lines = re.sub(r"</?su[bp]>", "", text).split("<br>")
    return max(len(line) for line in lines) * CHARACTER_EM * size


def fit_subplot_titles(fig: go.Figure, width_px: float, size: float) -> int:
    """Wrap every subplot title of a figure to the width of its panel, so that neighbouring titles never run together.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure.
        Changed in place.
    width_px : float
        The figure's width in px.
    size : float
        The font size in px of a title that sets none of its own.

    Returns
    -------
    int
        The most lines a title takes (0 without subplot titles).
    """
    margin = fig.layout.margin
    inner = width_px - (margin.l if margin.l is not None else 80) - (margin.r if margin.r is not None else 80)
    domains = [fig.layout[k].domain for k in fig.layout if k.startswith("xaxis") and fig.layout[k].domain]
    lines = 0
    for a in fig.layout.annotations or ():
        if not (a.text and a.yref == "paper" and (a.y or 0) >= 1):
            continue
        panel = next((d for d in domains if d[0] <= (a.x if a.x is not None else 0.5) <= d[1]), (0.0, 1.0))
        chars = max(8, int(inner * (panel[1] - panel[0]) / (CHARACTER_EM * (a.font.size or size))))
        a.text = wrap_title(a.text.replace("<br>", " "), chars)
        lines = max(lines, a.text.count("<br>") + 1)
    return lines


def legend_below(fig: go.Figure, width_px: float, size: float) -> int:
    """Put a figure's legend in rows under the plot area, at the bottom of the figure, and return its height.

    Entries are packed row by row, each about its text, a 40-px line sample and a gap wide. Below, the legend takes no
    width from the plot.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure.
        Changed in place.
    width_px : float
        The figure's width in px.
    size : float
        The legend's font size in px.

    Returns
    -------
    int
        The height in px the legend takes.
    """
    shown = [t for t in fig.data if t.showlegend is not False and t.visible is not False and t.name]
    title = fig.layout.legend.title.text if fig.layout.legend and fig.layout.legend.title else None
    groups: dict = {}  # plotly stacks the entries of a legend group, and lays the groups out side by side
    for t in shown:
        g = groups.setdefault(t.legendgroup or t.name, {"width": 0.0, "lines": 0})
        heading = t.legendgrouptitle.text if t.legendgrouptitle and t.legendgrouptitle.text else None
        if heading and not g["lines"]:
            g["width"], g["lines"] = text_px(heading, size) + 10, 1
        g["width"] = max(g["width"], text_px(t.name, size) + 50)
        g["lines"] += 1
    margin = fig.layout.margin
    inner = width_px - (margin.l if margin.l is not None else 80) - (margin.r if margin.r is not None else 80)
    lines, used, row = 0, 0.0, 0  # rows of groups: each as high as its tallest group
    for g in groups.values():  # plotly wraps the groups at the plot area's width, where they start
        if used and used + g["width"] > inner:
            lines, used, row = lines + row, 0.0, 0
        used, row = used + g["width"], max(row, g["lines"])
    lines += row
    fig.update_layout(legend=dict(orientation="h", x=0.0, xanchor="left", xref="paper", y=0.0,
                                  yanchor="bottom", yref="container", font=dict(size=size),
                                  title=dict(side="top", font=dict(size=size))))
    return int((lines + bool(title)) * (size + 10) + 10)


def _finish(fig: go.Figure, title: str, *, height: int = 460, width: int | None = None,
            legend: str = "beside") -> go.Figure:
    """Shared layout; the width follows the notebook's output area (``width`` is kept for callers, unused), and
    the texts are fitted to the narrowest one (:data:`NARROW_PX`). The title sits below the mode bar, subplot titles
    are wrapped to their panels and get the room between it and the panels; ``legend``: ``"beside"`` the plot
    (the figure grows until the whole legend fits) or ``"below"`` it, in rows (for panels side by side, which
    need the width)."""
    title = wrap_title(title)
    fig.update_layout(template=TEMPLATE, margin=dict(l=70, r=20, t=60, b=60), legend=LEGEND_OUTSIDE)
    fig.update_annotations(selector=lambda a: a.yref == "paper" and (a.y or 0) >= 1, font_size=SUBPLOT_TITLE_FONT)
    sub = fit_subplot_titles(fig, NARROW_PX, SUBPLOT_TITLE_FONT)
    top = 60 + 18 * title.count("<br>") + (6 + 20 * sub if sub else 0)
    bottom = 60
    if legend == "below":
        bottom += legend_below(fig, NARROW_PX, TEMPLATE.layout.font.size)
        height = height + top - 60 + bottom - 60
    else:
        height = max(height + top - 60, top + 60 + legend_height(fig))
    fig.update_layout(title=dict(text=title, x=0.0, xanchor="left", yref="container", y=1.0, yanchor="top",
                                 pad=dict(t=MODEBAR_CLEARANCE), font=dict(size=15)),
                      height=height, autosize=True, hovermode="closest", margin=dict(t=top, b=bottom))
    return fig


# ----------------------------------------------------------------- training curves
BLOCK_COLOURS = {"out1_vs_base": "#0072B2", "residual_vs_composite": "#E69F00"}
"""The decomposition panel's two curves for one learner: blue and orange of the Okabe-Ito palette (told apart
under the common colour-vision deficiencies), beside the crimson kα² line; their dashes differ as well."""


def training_curves(epochs, curves: dict, threshold: float | None, labels=None, *, title: str = "",
                    styles=None, decomposition: bool = True, total_epochs: int | None = None,
                    show_train: bool = True) -> go.Figure:
    """Test error (solid) and train error (dotted) against epochs, with the kα² line.

    For the ResNets a second panel shows what each block learned (E‖out₁ − β·F‖², E‖residual − α·G(F)‖²).

    Parameters
    ----------
    epochs : sequence of int
        The epochs evaluated.
    curves : dict
        Name → (E, G) array-like, as :func:`resnetlearn.learners.training.train_models` returns: ``"test"`` and,
        optionally, ``"train"``, ``"out1_vs_base"``, ``"residual_vs_composite"``.
    threshold : float or None
        kα²; None or 0 draws no line and says so in the title.
    labels : sequence of str or None, default None
        One per model; None: ``model 0``, ``model 1``, ...
    title : str, default ""
        The title.
    styles : sequence of dict or None, default None
        One :func:`~resnetlearn.classroom.plots.learner_style` per model; None: the 3resnet's.
    decomposition : bool, default True
        Draw the second panel when the curves hold finite block errors.
    total_epochs : int or None, default None
        Fixes the x range (live plots); None: the last epoch.
    show_train : bool, default True
        Draw the train error.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    import torch

    test = torch.as_tensor(curves["test"]).double()
    G = test.shape[1]
    labels = list(labels or [f"model {g}" for g in range(G)])
    styles = styles or [learner_style("3resnet")] * G
    dec = bool(decomposition and "out1_vs_base" in curves
               and torch.isfinite(torch.as_tensor(curves["out1_vs_base"])).any())
    fig = make_subplots(1, 2, subplot_titles=("test error (dotted: train)", "what each block learned"),
                        horizontal_spacing=0.1) if dec else go.Figure()
    x = [int(e) for e in epochs]
    x1 = total_epochs or (max(x) if x else 1)
    mode = "lines+markers" if len(x) == 1 else "lines"  # one evaluation so far (a run stopped early): a dot
    vals = []

    def add(trace, col):
        if dec:
            fig.add_trace(trace, 1, col)
        else:
            fig.add_trace(trace)

    for g in range(G):
        st = styles[g]
        y = _gaps(test[:, g].tolist())
        vals += y
        add(go.Scatter(x=x, y=y, mode=mode, name=labels[g], legendgroup=labels[g],
                       line=dict(color=st["color"], width=2.5),
                       hovertemplate=f"{labels[g]}<br>epoch %{{x}}<br>test error %{{y:.3g}}<extra></extra>"), 1)
        if show_train and "train" in curves:
            ytr = _gaps(torch.as_tensor(curves["train"]).double()[:, g].tolist())
            vals += ytr
            add(go.Scatter(x=x, y=ytr, mode=mode, name=f"{labels[g]} train", legendgroup=labels[g],
                           showlegend=False, line=dict(color=st["color"], width=1.5, dash="dot"),
                           hovertemplate=f"{labels[g]}<br>epoch %{{x}}<br>train error %{{y:.3g}}<extra></extra>"), 1)
        if dec:
            for key, dash, what in (("out1_vs_base", "solid", "out₁ vs β·F"),
                                    ("residual_vs_composite", "dashdot", "residual vs α·G(F)")):
                yy = _gaps(torch.as_tensor(curves[key]).double()[:, g].tolist())
                vals += yy
                # one learner: the two blocks in colours a colour-blind reader tells apart, and by dash too
                colour = BLOCK_COLOURS[key] if G == 1 else st["color"]
                add(go.Scatter(x=x, y=yy, mode=mode, name=f"{labels[g]}: {what}", legendgroup=f"{labels[g]} dec",
                               line=dict(color=colour, dash=dash, width=2),
                               hovertemplate=f"{labels[g]}: {what}<br>epoch %{{x}}<br>%{{y:.3g}}<extra></extra>"), 2)
    add(threshold_trace(threshold, 0, x1), 1)
    if dec:
        add(threshold_trace(threshold, 0, x1, showlegend=False), 2)
    lo, hi = _value_range([v for v in vals if v is not None] + ([threshold] if has_threshold(threshold) else []))
    yax = log_axis(lo=min(lo, 0.05), hi=max(hi, 20), title=ERROR_TITLE)
    fig.update_layout(yaxis=yax, xaxis=epoch_axis(x1))
    if dec:
        fig.update_layout(yaxis2=dict(yax, title=dict(text="error of each block  E‖·‖²")),
                          xaxis2=epoch_axis(x1))
    if not has_threshold(threshold):
        title = f"{title}  ({threshold_label(threshold)})" if title else threshold_label(threshold)
    return _finish(fig, title or "test error", width=1100 if dec else 900, height=430)


# ----------------------------------------------------------------- any family of curves
QUALITATIVE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f"]
"""Colours for series that are not learners (e.g. ℭ(F), ℭ(G), ℭ(G∘F))."""


def series_style(label: str, index: int = 0) -> dict:
    """The style of a series: the learner style when the label names a learner or a kernel, else a plain colour.

    Parameters
    ----------
    label : str
        E.g. ``3resnet(all)`` or ``ntk_inf:2layer``.
    index : int, default 0
        The series' position, which picks a colour of :data:`QUALITATIVE` for a label that names no learner.

    Returns
    -------
    dict
        ``color``, ``dash``, ``marker``, ``family``.
    """
    import re

    m = re.fullmatch(r"(\w+)\((\w+)\)", label)
    if m and m.group(1) in ARCHITECTURES:
        return learner_style(m.group(1), m.group(2))
    if label in DEFAULT_KERNELS or label in ARCHITECTURES:
        return learner_style(label)
    return {"color": QUALITATIVE[index % len(QUALITATIVE)], "dash": "solid", "marker": "circle", "family": "other"}


def line_figure(x, series: dict, *, x_title: str, y_title: str = ERROR_TITLE, title: str = "",
                lines=(), log_x: bool = True, log_y: bool = True, hover_format: str = ".3g",
                x_hover_format: str = "~g") -> go.Figure:
    """One curve per entry of ``series``, styled by family when the labels name learners or kernels.

    E.g. notebook 04's kernels against N, with horizontal reference lines and log axes with plain ticks at ``x``.

    Parameters
    ----------
    x : sequence of float
        The x values.
    series : dict
        Label → values at ``x`` (None or non-finite values are gaps).
    x_title : str
        The x axis title.
    y_title : str, default ERROR_TITLE
        The y axis title.
    title : str, default ""
        The figure's title.
    lines : sequence of (float, str), default ()
        Horizontal reference lines, e.g. ``[(inst.threshold, "kα²")]``.
    log_x : bool, default True
        A log x axis.
    log_y : bool, default True
        A log y axis.
    hover_format : str, default ".3g"
        The d3 format of y on hover.
    x_hover_format : str, default "~g"
        The d3 format of x on hover (``"~g"`` drops trailing zeros: 30, not 30.0000).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    xs = [float(v) for v in x]
    fig = go.Figure()
    vals = []
    for i, (label, ys) in enumerate(series.items()):
        st = series_style(str(label), i)
        ys = [None if v is None or not is_finite(float(v)) else float(v) for v in ys]
        vals += [v for v in ys if v is not None]
        fig.add_trace(go.Scatter(
            x=xs, y=ys, mode="lines+markers", name=str(label), legendgroup=st["family"],
            line=dict(color=st["color"], dash=st["dash"], width=2.2),
            marker=dict(symbol=st["marker"], size=8, color=st["color"]),
            hovertemplate=f"<b>{label}</b><br>{x_title.split(' (')[0]} = %{{x:{x_hover_format}}}<br>"
                          f"{y_title.split('  ')[0]} %{{y:{hover_format}}}<extra></extra>"))
    for v, label in lines:
        colour, dash = LINE_STYLES.get(label, ("#555555", "dot"))
        fig.add_trace(threshold_trace(v, min(xs) / 1.25 if log_x else min(xs), max(xs) * 1.25 if log_x else max(xs),
                                      name=f"{label} = {v:.3g}", colour=colour, dash=dash))
        vals.append(v)
    lo, hi = _value_range(vals)
    fig.update_layout(xaxis=log_axis(values=xs, title=x_title) if log_x else dict(title=dict(text=x_title)),
                      yaxis=log_axis(lo=lo, hi=hi, title=y_title) if log_y else dict(title=dict(text=y_title)))
    return _finish(fig, title)


# ----------------------------------------------------------------- the paper's figures
def _family_rank(model: str, mode: str | None) -> tuple:
    order = ["ResNet", "fully connected", "conjugate kernel", "NTK", "classical kernel", "other"]
    arch = list(ARCHITECTURES)  # within a family, the architectures in their registry's order
    fam = learner_style(model, mode)["family"]
    return (order.index(fam) if fam in order else 9, arch.index(model) if model in arch else 9, model, mode or "")


def result_figure(result, runs: list[dict] | None = None, *, title: str | None = None) -> go.Figure:
    """The interactive version of a reproduced figure.

    Test error against width m (or N) per learner; Figure 3 as one panel per training mode coloured by β; Figure 4 as
    error against ‖W‖_F. Hover shows the learner, the width / N, the test and train error, the selected lr and wd (or
    ridge and kernel setting), the grid size and, from ``runs`` or from per-seed columns of the rows when present, how
    many seeds ran the selected setting and the min / median / max of their test errors.

    Parameters
    ----------
    result : FigureResult
        E.g. from ``load_figure(name, directory)``.
    runs : list of dict or None, default None
        The figure's runs (:func:`~resnetlearn.reproduce.load_runs`).
    title : str or None, default None
        The title; None: the figure's headline and its scale.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    spec = figure_spec(result.name)
    rows = _with_runs([dict(r) for r in result.rows], runs)
    scale = (getattr(result, "provenance", None) or {}).get("scale") or (rows[0].get("scale") if rows else None)
    head = title or spec.headline  # the figure and the paper's claim (the verdict is in ``result.summary``)
    if scale and title is None:
        head += f"  ({scale} scale)"
    if spec.plot == "norm_vs_error":
        return _norm_vs_error(rows, runs, head)
    if spec.plot == "beta_panels":
        return _beta_panels(rows, spec, head)
    return _error_vs_x(rows, spec, head)


def _points_trace(pts: list[dict], xkey: str, *, label: str, style: dict, fields, **kw) -> go.Scatter:
    pts = sorted(pts, key=lambda r: r[xkey])
    custom, lines = _hover(pts, fields)
    what = "N" if xkey == "n_train" else "m"
    ys = [plotted_error(r) if is_finite(plotted_error(r)) else None for r in pts]  # as the tables and PNGs
    spread = None
    if any(is_finite(r.get("test_error_min")) for r in pts):  # min–max over seeds as error bars
        spread = dict(type="data", symmetric=False, color=style["color"], thickness=1.2, width=3,
                      array=[max(0.0, r["test_error_max"] - y) if y is not None and is_finite(r.get("test_error_max"))
                             else 0.0 for r, y in zip(pts, ys)],
                      arrayminus=[max(0.0, y - r["test_error_min"]) if y is not None
                                  and is_finite(r.get("test_error_min")) else 0.0 for r, y in zip(pts, ys)])
    return go.Scatter(
        x=[r[xkey] for r in pts], y=ys, error_y=spread,
        mode="lines+markers", name=label, customdata=custom,
        line=dict(color=style["color"], dash=style["dash"], width=2.2),
        marker=dict(symbol=style["marker"], size=8, color=style["color"]),
        hovertemplate=f"<b>{label}</b><br>{what} = %{{x}}<br>plotted test error %{{y:.3g}}{lines}<extra></extra>", **kw)


LINE_STYLES = {"kα²": (THRESHOLD_COLOUR, "dash"), "α²/4": ("#6a3d9a", "dot"), "predict 0": ("#555555", "longdash")}
"""Reference lines: predicting 0 long-dashed grey, so the dotted (last) curves that run near it stay apart."""


def reference_lines(name: str) -> list[tuple[float, str]]:
    """A figure's horizontal reference lines (kα², α²/4, predicting 0), from its definition.

    The same lines as the command line's plots (:mod:`resnetlearn.reproduce.figures`).

    Parameters
    ----------
    name : str
        The figure.

    Returns
    -------
    list of (float, str)
        (value, label) pairs.
    """
    return [(float(v), str(label)) for v, label in figure_spec(name).lines()]


def _add_lines(fig, name: str, x0: float, x1: float, **where) -> list[float]:
    vals = []
    for v, label in reference_lines(name):
        colour, dash = LINE_STYLES.get(label, ("#555555", "dot"))
        fig.add_trace(threshold_trace(v, x0, x1, name=f"{label} = {v:.3g}", colour=colour, dash=dash), **where)
        vals.append(v)
    return vals


def _error_vs_x(rows: list[dict], spec, head: str) -> go.Figure:
    xkey = spec.xkey
    # points of another panel than the companion's width panel (the §7 robust cell's judging seeds, a grid's
    # extension past its edge) repeat an x of their curve: the tables and the verdict read them, the plot does not
    main = [r for r in rows if not r.get("panel")]
    side = [r for r in rows if r.get("panel") == "width"]  # the companion's width panel (x = m)
    fig = make_subplots(1, 2, column_widths=[0.62, 0.38], horizontal_spacing=0.09,
                        subplot_titles=(f"against {X_TITLES[xkey].split(' (')[0]}",
                                        f"against width m at N = {side[0]['n_train']}")) if side else go.Figure()
    fields = _present(rows)
    ys, diverged = [], []  # diverged: (x values, colour, subplot) of the learners with a point of no finite run
    for col, (part, xk) in enumerate(((main, xkey), (side, "m")), start=1):
        if not part:
            continue
        where = dict(row=1, col=col) if side else {}
        groups: dict[tuple, list[dict]] = {}
        for r in part:
            groups.setdefault((r["model"], r.get("mode") if spec.mode_in_label else None), []).append(r)
        for (model, mode) in sorted(groups, key=lambda k: _family_rank(*k)):
            st = learner_style(model, mode)
            label = learner(groups[(model, mode)][0], with_mode=spec.mode_in_label)
            bad = sorted(r[xk] for r in groups[(model, mode)] if not is_finite(plotted_error(r)))
            if bad:  # every run of these points diverged: said in the label, an x at the top in the curve's colour
                label += f" — diverged at {'N' if xk == 'n_train' else 'm'}={', '.join(map(str, bad))}"
                diverged.append((bad, st["color"], where))
            fig.add_trace(_points_trace(groups[(model, mode)], xk, label=label, style=st, fields=fields,
                                        legendgroup=st["family"], legendgrouptitle=dict(text=st["family"]),
                                        showlegend=col == 1), **where)
        xs = sorted({r[xk] for r in part})
        ys += [r.get(k) for r in part for k in ("test_error", "test_error_min", "test_error_max")]  # bars inside
        ys += _add_lines(fig, spec.name, xs[0] / 1.25, xs[-1] * 1.25, **where) if col == 1 else []
        if side:
            fig.update_xaxes(log_axis(values=xs, title=X_TITLES[xk]), row=1, col=col)
        else:
            fig.update_layout(xaxis=log_axis(values=xs, title=X_TITLES[xk]))
    lo, hi = _headroom(*_value_range(ys))
    if diverged:
        hi = _diverged_marks(fig, diverged, hi)
    if side:
        fig.update_yaxes(log_axis(lo=lo, hi=hi, title=ERROR_TITLE), row=1, col=1)
        fig.update_yaxes(log_axis(lo=lo, hi=hi, title=""), row=1, col=2)
    else:
        fig.update_layout(yaxis=log_axis(lo=lo, hi=hi, title=ERROR_TITLE))
    return _finish(fig, head, width=1100 if side else 960)


DIVERGED_KEY = "diverged: no finite run (x at the top)"


def _diverged_marks(fig: go.Figure, diverged: list[tuple], hi: float, step: float = 1.25) -> float:
    """An x above every drawn point for each point whose runs all diverged (no error to draw), one row of x
    per learner in its colour, and a legend key; returns the top of the error axis that holds them."""
    for n, (xs, colour, where) in enumerate(diverged, start=1):
        fig.add_trace(go.Scatter(x=xs, y=[hi * step**n] * len(xs), mode="markers", showlegend=False,
                                 marker=dict(symbol="x", size=11, color=colour), hoverinfo="skip"), **where)
    fig.add_trace(go.Scatter(x=diverged[0][0][:1], y=[None], mode="markers", name=DIVERGED_KEY,
                             marker=dict(symbol="x", size=11, color="#7f7f7f"), hoverinfo="skip"), **diverged[0][2])
    return hi * step ** (len(diverged) + 0.5)


def _beta_panels(rows: list[dict], spec, head: str) -> go.Figure:
    modes = [m for m in FIG3_MODES if any(r.get("mode") == m for r in rows)] or \
        sorted({r.get("mode") for r in rows})
    # one panel per (mode, N) where a mode runs at several N (Figure 3's (all) at N = 500 and 1000)
    panels = [(m, n) for m in modes for n in sorted({r.get("n_train") or 0 for r in rows if r.get("mode") == m})]
    several = len(panels) > len(modes)
    betas = sorted({r["beta"] for r in rows})
    colours = {b: BETA_COLOURS[round(i * (len(BETA_COLOURS) - 1) / max(1, len(betas) - 1))]
               for i, b in enumerate(betas)}
    fig = make_subplots(1, len(panels), shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=[f"{trained_layers(m)} trained" + (f", N\u00a0=\u00a0{n}" if several else "")
                                        for m, n in panels])  # no line break inside "N = 1000"
    fields = _present(rows)
    xs = sorted({r["m"] for r in rows})
    thr = next((v for v, label in reference_lines(spec.name) if label == "kα²"), None) or parity_instance().threshold
    for j, (mode, n) in enumerate(panels, start=1):
        for b in betas:
            # a grid's extension past its edge repeats an m of its curve: the tables and the verdict read it
            pts = [r for r in rows if r.get("mode") == mode and (r.get("n_train") or 0) == n and r["beta"] == b
                   and not r.get("panel")]
            if not pts:
                continue
            st = {"color": colours[b], "dash": "solid", "marker": "circle"}
            fig.add_trace(_points_trace(pts, "m", label=f"β = {b:g}", style=st, fields=fields, legendgroup=f"β={b:g}",
                                        showlegend=j == 1), 1, j)
        fig.add_trace(threshold_trace(thr, xs[0] / 1.25, xs[-1] * 1.25, showlegend=j == 1), 1, j)
    ys = [r.get(k) for r in rows for k in ("test_error", "test_error_min", "test_error_max")]  # bars inside
    lo, hi = _headroom(*_value_range(ys + [thr]))
    middle = (len(panels) + 1) // 2  # the panels share their x quantity: titled once, under the middle one
    for j in range(1, len(panels) + 1):
        fig.update_xaxes(log_axis(values=xs, title=X_TITLES["m"] if j == middle else ""), row=1, col=j)
        fig.update_yaxes(log_axis(lo=lo, hi=hi, title=ERROR_TITLE if j == 1 else ""), row=1, col=j)
    fig.update_layout(legend_title_text="3resnet, β (α = 0.3)")
    return _finish(fig, head, width=1100 if len(panels) <= 2 else 1400, legend="below")


def _norm_vs_error(rows: list[dict], runs: list[dict] | None, head: str) -> go.Figure:
    floor = 1e-3
    fig = go.Figure()
    sgd_runs = [r for r in (runs or []) if kind_of(r).grid_searched]
    if sgd_runs:
        pts = [(r["train_error"], r["test_error"], r["frobenius_W"], r) for r in sgd_runs]
    else:
        pts = [(g[0], g[1], g[2], r) for r in rows if kind_of(r).grid_searched for g in (r.get("grid") or [])]
    fields = _present([p[3] for p in pts], (("m", "m", "{}"), ("lr", "lr", "{:g}"), ("wd", "wd", "{:g}"),
                                            ("seed", "seed", "{}")))
    custom, lines = _hover([p[3] for p in pts], fields)
    sgd = learner_style(pts[0][3]["model"], pts[0][3].get("mode"))["color"] if pts else None  # the runs' network
    for idx, what, symbol in ((0, "train", "circle-open"), (1, "test", "circle")):
        fig.add_trace(go.Scatter(
            x=[max(p[idx], floor) for p in pts], y=[p[2] for p in pts], mode="markers",
            name=f"SGD runs: {what} error", customdata=custom, legendgroup="SGD",
            marker=dict(symbol=symbol, size=8, color=sgd if idx else "#1f5fbf"),
            hovertemplate=f"SGD run<br>{what} error %{{x:.3g}}<br>‖W‖_F %{{y:.1f}}{lines}<extra></extra>"))
    hand = [r for r in rows if kind_of(r).constructed]
    custom, lines = _hover(hand, [("wd", "wd", "{:g}"), ("m", "m", "{}")])
    fig.add_trace(go.Scatter(
        x=[max(r["test_error"], floor) for r in hand], y=[r["frobenius_W"] for r in hand], mode="markers",
        name="built by hand (train = test)", customdata=custom,
        marker=dict(symbol=HAND_BUILT_STYLE.marker, size=15, color=HAND_BUILT_STYLE.colour),
        hovertemplate=f"built by hand<br>error %{{x:.3g}}<br>‖W‖_F %{{y:.1f}}{lines}<extra></extra>"))
    xs = [max(p[i], floor) for p in pts for i in (0, 1)] + [max(r["test_error"], floor) for r in hand]
    lo, hi = _headroom(*_value_range(xs, floor))
    ws = [p[2] for p in pts] + [r["frobenius_W"] for r in hand]
    wlo, whi = _headroom(*_value_range(ws))
    fig.update_layout(xaxis=log_axis(lo=lo, hi=hi, title=f"error E‖out − y‖²<br>(values below {floor:g} drawn at "
                                                           f"{floor:g})"),
                      yaxis=log_axis(lo=wlo, hi=whi, title="‖W‖_F (Frobenius norm of the first layer)"))
    return _finish(fig, head, legend="below")


PROJECTOR_FONT = 18
"""Pixel size of every text of a figure shown on a slide (:func:`for_projector`): plotly's fonts are fixed pixel
sizes at the figure's layout width, which follows the width it is shown at, so 18 px stays 18 px on screen."""
DECK_PX = 799
"""Width in px of the deck's output area at 1024×768 (measured by ``course/projector.py``; the slideshow shows
no file browser): the narrowest a slide's figure is shown at, so the one its texts are fitted to."""


def for_projector(fig: go.Figure, *, title: str | None = None, size: int = PROJECTOR_FONT) -> go.Figure:
    """A figure for a slide read from the back of a room.

    Every text (title, axis titles, ticks, legend, subplot titles, hover labels) is at ``size`` px or more, subplot
    titles are wrapped to their panels and the legend set in rows below the plot area (so it takes no width) at the
    deck's narrowest width (:data:`DECK_PX`). Rendering only: the traces are untouched.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure.
        Left unchanged: a copy is returned.
    title : str or None, default None
        A shorter title (a long one would run off a 1024-px-wide screen); None keeps the figure's.
    size : int, default PROJECTOR_FONT
        The smallest text size in px.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    fig = go.Figure(fig)
    if title is not None:
        fig.update_layout(title_text=title)
    fig.update_layout(font=dict(size=size), title_font_size=size + 4, legend=dict(grouptitlefont=dict(size=size)),
                      hoverlabel=dict(font=dict(size=size)), margin=dict(l=90, r=20))
    fig.update_xaxes(tickfont_size=size, title_font_size=size)
    fig.update_yaxes(tickfont_size=size, title_font_size=size)
    fig.update_annotations(font_size=size)
    sub = fit_subplot_titles(fig, DECK_PX, size)
    legend = legend_below(fig, DECK_PX, size)
    extra = (fig.layout.xaxis.title.text or "").count("<br>")  # the lines of an axis title after its first
    top = 70 + 26 * (fig.layout.title.text or "").count("<br>") + (8 + (size + 6) * sub if sub else 0)
    bottom = 80 + (size + 6) * extra + legend
    fig.update_layout(height=360 + top + bottom, margin=dict(t=top, b=bottom))
    return fig


# ----------------------------------------------------------------- display (the static picture: static_picture)
def epoch_axis(total_epochs: int) -> dict:
    """Layout of an epoch axis from 0 to ``total_epochs`` with integer ticks only.

    Ticks are 1, 2, 5, 10, ... apart, at most eight, so a run stopped after one evaluation is not drawn on a
    fractional axis such as 12.4 … 13.6; the static picture reads the same ticks (``dtick``).

    Parameters
    ----------
    total_epochs : int
        The last epoch (at least 1 is used).

    Returns
    -------
    dict
        A plotly axis layout.
    """
    total = max(int(total_epochs or 0), 1)
    step = next(s * 10**k for k in range(12) for s in (1, 2, 5) if total / (s * 10**k) <= 8)
    return dict(title=dict(text="epoch"), range=[0, total], tick0=0, dtick=step)


def result_png(result) -> bytes:
    """The static picture of a reproduced figure as PNG bytes (the command line's ``FIG.png``).

    The notebooks' picture of :func:`result_figure`, drawn by :func:`to_matplotlib`.

    Parameters
    ----------
    result : FigureResult
        The figure.

    Returns
    -------
    bytes
    """
    return to_png(to_matplotlib(result_figure(result)))


def figure_json(fig: go.Figure) -> dict:
    """The figure as pure JSON (what JupyterLab's plotly renderer reads).

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure.

    Returns
    -------
    dict
    """
    out = json.loads(pio.to_json(fig, validate=False))
    out.setdefault("config", {"displaylogo": False, "responsive": True})
    return out


def mime_bundle(fig: go.Figure, static=None) -> dict:
    """One display with the interactive figure, a PNG (from matplotlib) and a short text.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure.
    static : matplotlib.figure.Figure or None, default None
        The picture; None: :func:`~resnetlearn.classroom.static_picture.notebook_picture` of ``fig``.

    Returns
    -------
    dict
        MIME type → data.
    """
    png = to_png(static if static is not None else notebook_picture(fig))
    title = fig.layout.title.text if fig.layout.title and fig.layout.title.text else "figure"
    return {PLOTLY_MIME: figure_json(fig), "image/png": base64.b64encode(png).decode("ascii"),
            "text/plain": f"<interactive figure: {title.replace('<br>', ' ')}>"}


def show_figure(fig: go.Figure, static=None) -> None:
    """Display a figure interactively, with a static PNG in the same output.

    JupyterLab draws the plotly figure; GitHub and other static viewers show the PNG.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure.
    static : matplotlib.figure.Figure or None, default None
        A matplotlib figure to use as the picture instead of :func:`to_matplotlib`'s drawing.
    """
    from IPython.display import publish_display_data

    publish_display_data(mime_bundle(fig, static))
