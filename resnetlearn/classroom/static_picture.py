"""The static picture of a plotly figure: :func:`to_matplotlib` draws a figure of
:mod:`resnetlearn.classroom.figures_plotly` (scatter traces, subplots, log axes, titles, legend outside) with
matplotlib. Every picture has one renderer: the PNG beside each interactive figure in the notebooks, the live
widgets' PNG view and the command line's ``FIG.png`` are all drawn from the plotly figure, never by a second
plotting routine of their own.
"""

from __future__ import annotations

import math
import re
import textwrap

import matplotlib.pyplot as plt
import plotly.graph_objects as go
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, MultipleLocator, NullFormatter, NullLocator

from .plots import FIGURE_WIDTH, MPL_DASH, MPL_MARKER, style, tick_label


def _axis_names(fig: go.Figure) -> list[tuple[str, str]]:
    """(xaxis, yaxis) layout names of each subplot, left to right."""
    pairs = {}
    for t in fig.data:
        xa, ya = getattr(t, "xaxis", None) or "x", getattr(t, "yaxis", None) or "y"
        pairs.setdefault(xa, ya)
    if not pairs:
        pairs["x"] = "y"

    def key(xa):
        ax = fig.layout[f"xaxis{xa[1:]}"]
        return ax.domain[0] if ax.domain else 0

    return sorted(pairs.items(), key=lambda p: key(p[0]))


MPL_GLYPHS = (("ℭ_s", r"$\mathfrak{C}_s$"), ("ℭ_ε", r"$\mathfrak{C}_\varepsilon$"), ("ℭ", r"$\mathfrak{C}$"))
"""The paper's complexity symbol with its subscript as mathtext, so a static picture sets ℭ_s as ℭ with a
real subscript. (The symbol is U+212D BLACK-LETTER CAPITAL C, which DejaVu Sans and browsers draw; the
look-alike U+1D506 in the mathematical-fraktur block is an unassigned code point that no font draws.)"""


def mpl_text(text: str) -> str:
    """A plotly text for a matplotlib figure.

    ``<br>`` (plotly's line break) becomes a new line, ``<sub>…</sub>`` / ``<sup>…</sup>`` (plotly's sub- and
    superscripts) and ℭ (ℭ_s, ℭ_ε) become mathtext, so the static picture shows what the interactive one does instead
    of tags; other text is unchanged.

    Parameters
    ----------
    text : str
        The text; anything that is not a string is returned as it is.

    Returns
    -------
    str
    """
    if not isinstance(text, str):
        return text
    text = re.sub(r"<br\s*/?>", "\n", text)
    text = re.sub(r"<sub>(.*?)</sub>", r"$_{\1}$", text)
    text = re.sub(r"<sup>(.*?)</sup>", r"$^{\1}$", text)
    for plain, math_ in MPL_GLYPHS:
        text = text.replace(plain, math_)
    return text


def _apply_axis(ax, which: str, spec) -> None:
    log = spec.type == "log"
    (ax.set_xscale if which == "x" else ax.set_yscale)("log" if log else "linear")
    if spec.range is not None:
        lo, hi = spec.range
        (ax.set_xlim if which == "x" else ax.set_ylim)((10**lo, 10**hi) if log else (lo, hi))
    if spec.tickvals is not None:
        a = ax.xaxis if which == "x" else ax.yaxis
        a.set_major_locator(FixedLocator(list(spec.tickvals)))
        a.set_ticklabels(list(spec.ticktext) if spec.ticktext is not None else [tick_label(v) for v in spec.tickvals])
        a.set_minor_locator(NullLocator())
        a.set_minor_formatter(NullFormatter())
    elif not log and isinstance(spec.dtick, (int, float)):  # evenly spaced ticks, e.g. whole epochs
        (ax.xaxis if which == "x" else ax.yaxis).set_major_locator(MultipleLocator(spec.dtick))
    text = spec.title.text if spec.title is not None else None
    if text and which == "y" and len(text) > 30:  # a long y title runs past a short panel: its remark below
        text = re.sub(r"\s+\(", "<br>(", text, count=1)
    if text:
        (ax.set_xlabel if which == "x" else ax.set_ylabel)(mpl_text(text))


def to_matplotlib(fig: go.Figure, *, size=None, large: bool = False, stacked: bool = False):
    """A matplotlib drawing of a plotly figure made by this package: the one static picture of every figure.

    It draws scatter traces, subplots, log axes, titles and the legend outside; it is the picture beside every
    interactive one in the notebooks, the live widgets' PNG view and the command line's ``FIG.png``.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure.
    size : tuple of float or None, default None
        (width, height) in inches; None: from the number of panels.
    large : bool, default False
        The projector-friendly sizes of :func:`resnetlearn.classroom.plots.style`.
    stacked : bool, default False
        Every panel on a row of its own and the legend below them, so that a narrow picture keeps its text at full
        size (three or more panels are always stacked).

    Returns
    -------
    matplotlib.figure.Figure
    """
    n = len(_axis_names(fig))
    width = 13.0 if large else FIGURE_WIDTH
    # three or more panels are stacked, one per row, so the picture keeps the width of the output area
    default = (width * (1 + 0.5 * (n - 1)), 5.4 if large else 4.6) if n <= 2 and not stacked else (width, 3.0 * n)
    with plt.rc_context(style(large)):  # the one style's font sizes (legend 12.5 px at full width)
        return _to_matplotlib(fig, size=size or default, stacked=stacked)


NOTEBOOK_WIDTH = 6.4
"""Inches of the static picture shown beside an interactive figure in a notebook (:func:`notebook_picture`):
6.4 in at 90 dpi is 576 px, no wider than a notebook's output area at 1024×768 with the file browser open, where
the picture is shown at its natural size (jupyterlab-plotly does not scale it), so nothing runs past the edge
and its fonts are what the reader sees."""


def notebook_picture(fig: go.Figure, *, large: bool = False):
    """The static picture of a figure for a notebook's output.

    Panels stacked, legend below, :data:`NOTEBOOK_WIDTH` wide, tall enough for its panels, its legend and a wrapped
    title.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure.
    large : bool, default False
        The projector-friendly sizes.

    Returns
    -------
    matplotlib.figure.Figure
    """
    n = max(1, len(_axis_names(fig)))
    entries = len({t.name for t in fig.data if t.showlegend is not False and t.visible is not False and t.name
                   and t.x is not None and len(t.x)})
    line = 0.3 if large else 0.24
    points = style(large)["figure.titlesize"]
    title = fig.layout.title.text if fig.layout.title and fig.layout.title.text else ""
    lines = _wrap_suptitle(mpl_text(title), NOTEBOOK_WIDTH, points).count("\n") + 1 if title else 0
    height = 3.0 * n + line * entries + 0.9 + lines * points * 1.3 / 72
    return to_matplotlib(fig, large=large, stacked=True, size=(NOTEBOOK_WIDTH, height))


def _wrap_suptitle(title: str, inches: float, points: float) -> str:
    """``title`` wrapped between words to a picture ``inches`` wide at ``points`` (a character about 0.55 of its
    size wide), its own line breaks kept."""
    chars = int(inches * 72 / (0.55 * points))
    return "\n".join(textwrap.fill(line, chars, break_on_hyphens=False) for line in title.split("\n"))


def _to_matplotlib(fig: go.Figure, *, size, stacked: bool = False):
    panels = _axis_names(fig)
    n = len(panels)
    mfig = Figure(figsize=size, layout="constrained")
    shared = n > 1 and all(fig.layout[f"yaxis{ya[1:]}"].matches for _, ya in panels[1:])
    rows, cols = (1, n) if n <= 2 and not stacked else (n, 1)
    axes = list(mfig.subplots(rows, cols, squeeze=False, sharey=shared).flat)
    where = {xa: axes[i] for i, (xa, _) in enumerate(panels)}
    handles: dict[str, object] = {}
    for t in fig.data:
        if t.type not in ("scatter", "scattergl") or t.visible is False or t.visible == "legendonly":
            continue
        if t.x is None or len(t.x) == 0:
            continue
        ax = where.get(t.xaxis or "x", axes[0])
        mode = t.mode or "lines+markers"
        colour = (t.line.color if t.line and t.line.color else None) or (t.marker.color if t.marker else None)
        kw = dict(color=colour if isinstance(colour, str) else None)
        if "lines" in mode:
            kw.update(linestyle=MPL_DASH.get(t.line.dash or "solid", "-"), linewidth=(t.line.width or 2) * 0.8)
        else:
            kw.update(linestyle="none")
        if "markers" in mode:
            sym = (t.marker.symbol or "circle") if t.marker else "circle"
            hollow = isinstance(sym, str) and sym.endswith("-open")
            kw.update(marker=MPL_MARKER.get(str(sym).replace("-open", ""), "o"),
                      markersize=(t.marker.size or 6) * 0.75 if t.marker else 5)
            if hollow:
                kw.update(markerfacecolor="none")
        ys = [math.nan if v is None else v for v in t.y]
        if "markers" not in mode and sum(y == y for y in ys) == 1:  # a line of one point shows as a dot
            kw.update(marker="o", markersize=5)
        (line,) = ax.plot(list(t.x), ys, **kw)
        if t.error_y is not None and t.error_y.array is not None:
            lo = t.error_y.arrayminus if t.error_y.arrayminus is not None else t.error_y.array
            ax.errorbar(list(t.x), ys, yerr=[list(lo), list(t.error_y.array)], fmt="none", ecolor=kw["color"],
                        elinewidth=1, capsize=2)
        if t.showlegend is not False and t.name and t.name not in handles:
            handles[t.name] = line
    for i, (xa, ya) in enumerate(panels):
        _apply_axis(axes[i], "x", fig.layout[f"xaxis{xa[1:]}"])
        _apply_axis(axes[i], "y", fig.layout[f"yaxis{ya[1:]}"])
        axes[i].grid(True, which="major", color="#e6e6e6", linewidth=0.8)
    if rows > 1:  # panels side by side that title their shared x once: stacked, each row shows it
        shared_x = next((ax.get_xlabel() for ax in axes if ax.get_xlabel()), "")
        for ax in axes:
            ax.set_xlabel(ax.get_xlabel() or shared_x)
        ys = [ax.get_ylabel() for ax in axes]
        if ys[0] and not any(ys[1:]):  # a shared y titled once: along the whole picture, not one short row
            axes[0].set_ylabel("")
            mfig.supylabel(ys[0], fontsize=plt.rcParams["axes.labelsize"])
    titles = [a.text for a in (fig.layout.annotations or []) if a.text and a.yref == "paper" and (a.y or 0) >= 1]
    for ax, t in zip(axes, titles if len(titles) == n else []):  # a full-width row needs no break fitted to a panel
        ax.set_title(mpl_text(t.replace("<br>", " ") if rows > 1 else t))
    if fig.layout.title and fig.layout.title.text:
        title = mpl_text(fig.layout.title.text)
        if stacked:  # a narrow picture: long titles wrapped, not cut at its edge
            title = _wrap_suptitle(title, size[0], float(plt.rcParams["figure.titlesize"]))
        mfig.suptitle(title, x=0.01, ha="left")
    if handles:  # handles long enough to show each entry's dash (dotted, dashed, solid)
        mfig.legend(list(handles.values()), [mpl_text(h) for h in handles], frameon=False, handlelength=3.5,
                    **(dict(loc="outside lower left", ncols=1) if stacked else dict(loc="outside right center")))
    return mfig
