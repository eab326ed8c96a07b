"""Figures shared by the notebooks: training curves against the kα² line.

Every figure marks the threshold kα² (the error of learning F and nothing
of G, arXiv v3 §8.1): a curve clearly below it has learned part of the
composite signal α·G(F).
"""

from __future__ import annotations

import io
import math

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from ..targets.concept import parity_instance
from .styles import style_of

THRESHOLD_STYLE = dict(color="crimson", linestyle="--", linewidth=1.5)
THRESHOLD_COLOUR = "#dc143c"  # crimson: the kα² line in every figure

# ----------------------------------------------------------------- one style for every figure
# Each learner's style (colour by family, line by training mode, marker by architecture or kernel) is read from
# the classroom's one table (resnetlearn.classroom.styles); shared by the matplotlib figures and the plotly ones
# (resnetlearn.classroom.figures_plotly).
MPL_DASH = {"solid": "-", "dot": ":", "dash": "--", "dashdot": "-.", "longdash": (0, (8, 3))}
"""Plotly line names in matplotlib."""
MPL_MARKER = {"circle": "o", "square": "s", "triangle-up": "^", "diamond": "D", "x": "x", "star": "*",
              "cross": "P", "triangle-down": "v"}
BETA_COLOURS = ["#fdcc8a", "#fc8d59", "#e34a33", "#b30000", "#67000d"]
"""Sequential reds for β (light: small β, dark: β = 1), as in Figure 3."""


def family(model: str, mode: str | None = None) -> str:
    """The family a learner is drawn in: ResNet, fully connected, conjugate kernel, NTK or classical kernel.

    A network trained in mode ``last`` is a conjugate-kernel method, ``ntk`` an NTK method.

    Parameters
    ----------
    model : str
        An architecture (``"3resnet"``, ...) or a kernel's name.
    mode : str or None, default None
        The training mode of a network; None for a kernel.

    Returns
    -------
    str
    """
    return style_of(model, mode).family


def learner_style(model: str, mode: str | None = None) -> dict:
    """Colour, dash and marker of one learner, as plotly names, from the classroom's table.

    Colour by architecture or kernel, dash by mode (infinite-width kernels dash-dot), marker by architecture
    (:func:`resnetlearn.classroom.styles.style_of`).

    Parameters
    ----------
    model : str
        An architecture (``"3resnet"``, ...) or a kernel's name.
    mode : str or None, default None
        The training mode of a network; None for a kernel.

    Returns
    -------
    dict
        ``{"color", "dash", "marker", "family"}``.
    """
    return style_dict(style_of(model, mode))


def style_dict(s) -> dict:
    """A learner's :class:`~resnetlearn.classroom.styles.Style` as the plotly names the figures take.

    Parameters
    ----------
    s : Style
        The style.

    Returns
    -------
    dict
        ``{"color", "dash", "marker", "family"}``.
    """
    return {"color": s.colour, "dash": s.line, "marker": s.marker, "family": s.family}


def log_ticks(lo: float, hi: float, *, steps=(1, 2, 5)) -> list[float]:
    """Tick positions 1-2-5 × 10^k covering [lo, hi], for log axes with plain labels (never 3×10²).

    A narrow range gets the neighbouring values; a wide one coarser steps, then every k-th power of ten (at most
    about nine ticks).

    Parameters
    ----------
    lo : float
        One end of the range.
    hi : float
        The other end.
    steps : tuple of float, default (1, 2, 5)
        The mantissas within a decade.

    Returns
    -------
    list of float
        Empty unless both ends are positive and finite.
    """
    if not (lo > 0 and hi > 0 and math.isfinite(lo) and math.isfinite(hi)):
        return []
    lo, hi = min(lo, hi), max(lo, hi)
    ticks = []
    for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        for s in steps:
            v = s * 10.0**e
            if lo / 1.0001 <= v <= hi * 1.0001:
                ticks.append(float(f"{v:.12g}"))
    if len(ticks) < 2:  # a narrow range: add the neighbouring 1-2-5 values
        return log_ticks(lo / 2.5, hi * 2.5, steps=steps)
    if len(ticks) > 9 and len(steps) > 1:  # a wide range: 1-3 steps, then powers of ten
        return log_ticks(lo, hi, steps=(1, 3) if len(steps) > 2 else (1,))
    if len(ticks) > 9:  # very wide: every k-th power of ten
        k = math.ceil(len(ticks) / 8)
        ticks = ticks[::k]
    return ticks


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def tick_label(v: float) -> str:
    """A short plain tick label: 0.05, 1, 20, 1000, 10k, 200k; beyond that a power of ten as 10⁶ (never 3×10²).

    Parameters
    ----------
    v : float
        The tick's value.

    Returns
    -------
    str
    """
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-4):
        e = math.log10(abs(v))
        if abs(e - round(e)) < 1e-9:
            return ("-" if v < 0 else "") + "10" + str(round(e)).translate(_SUPERSCRIPT)
        if abs(v) >= 1e6 or abs(v) < 1e-4:
            return f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")
    if v >= 10_000 and v % 1000 == 0:
        return f"{v / 1000:g}k"
    return f"{v:g}"


def readable_log_axis(ax, axis: str, values=None, lo: float | None = None, hi: float | None = None) -> None:
    """Plain tick labels on a matplotlib log axis, minor labels off (no overlapping 3×10² smear).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes.
    axis : {"x", "y"}
        Which axis.
    values : iterable of float or None, default None
        Ticks at these values (e.g. the measured widths).
    lo : float or None, default None
        Without ``values``: ticks at 1-2-5 steps between ``lo`` and ``hi`` (finer where fewer than two fall in).
    hi : float or None, default None
        The upper end, likewise.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    ticks = sorted(set(values)) if values is not None else log_ticks(lo, hi)
    if values is None and sum(lo <= t <= hi for t in ticks) < 2:  # a narrow range: finer steps, two labels at least
        ticks = log_ticks(lo, hi, steps=(1, 1.5, 2, 3, 5, 7))
    a = ax.xaxis if axis == "x" else ax.yaxis
    a.set_major_locator(FixedLocator(ticks))
    a.set_major_formatter(FuncFormatter(lambda v, _: tick_label(v)))
    a.set_minor_formatter(NullFormatter())


def has_threshold(threshold) -> bool:
    """Whether a kα² line is meaningful: a positive finite number (α = 0 gives kα² = 0: no line).

    Parameters
    ----------
    threshold : float or None
        kα².

    Returns
    -------
    bool
    """
    return threshold is not None and math.isfinite(threshold) and threshold > 0


def threshold_label(threshold) -> str:
    """The legend text of the kα² line (``"kα² = 1.35"``), or why there is no line (α = 0: nothing of G(F) to learn).

    Parameters
    ----------
    threshold : float or None
        kα².

    Returns
    -------
    str
    """
    if has_threshold(threshold):
        return f"kα² = {threshold:.3g}"
    return "α = 0: no composite signal, no kα² line"


DPI = 90
"""Resolution of every PNG (:func:`to_png`): 1 pt = 1.25 px."""
FIGURE_WIDTH = 9.4
"""Inches of a full-width picture: 9.4 in × 90 dpi = 846 px, about the output area of a notebook in JupyterLab
at 1280×800 with the file browser open, so the picture is shown at its own size (not scaled down) and the
font sizes of :func:`style` are what the reader sees."""


def style(large: bool = False) -> dict:
    """The rcParams of every matplotlib picture, normal or projector-friendly.

    At :data:`DPI` and :data:`FIGURE_WIDTH` the normal sizes read as 13.75 px text and 12.5 px legends at 1280×800.

    Parameters
    ----------
    large : bool, default False
        The projector-friendly sizes (font 16 instead of 11).

    Returns
    -------
    dict
    """
    size = 16 if large else 11
    return {"font.size": size, "axes.titlesize": size + 1, "axes.labelsize": size, "xtick.labelsize": size - 1,
            "ytick.labelsize": size - 1, "legend.fontsize": size - 1, "figure.titlesize": size + 1,
            "lines.linewidth": 2.5 if large else 1.8}


def placeholder_figure(text: str, threshold: float | None = None, large: bool = False,
                       size=(8, 3.2)) -> Figure:
    """An empty plot with a message ("press Train …"), shown before the first run instead of a broken-image icon.

    Parameters
    ----------
    text : str
        The message.
    threshold : float or None, default None
        kα², drawn as a line when meaningful.
    large : bool, default False
        The projector-friendly sizes.
    size : tuple of float, default (8, 3.2)
        (width, height) in inches.

    Returns
    -------
    matplotlib.figure.Figure
    """
    with plt.rc_context(style(large)):
        fig = Figure(figsize=size)
        ax = fig.subplots()
        ax.set_yscale("log")
        ax.set_ylim(0.05, 30)
        ax.set_xlim(0, 1)
        ax.set_xticks([])
        if has_threshold(threshold):
            ax.axhline(threshold, **THRESHOLD_STYLE, label=threshold_label(threshold))
            ax.legend(loc="upper right")
        ax.set_ylabel("test error")
        ax.set_xlabel("epoch")
        ax.text(0.5, 0.62, text, transform=ax.transAxes, ha="center", va="center", color="#333333", wrap=True,
                bbox=dict(boxstyle="round,pad=0.5", facecolor="white", edgecolor="#bbbbbb"))
        readable_log_axis(ax, "y", lo=0.05, hi=30)
        fig.tight_layout()
    return fig


SMALLEST_FONT_KEY = "resnetlearn smallest font pt"
"""The PNG text chunk in which :func:`to_png` records the picture's smallest font, in points: on screen it is
that × :data:`DPI` / 72 × shown width / natural width px (``course/projector.py`` measures it)."""


def smallest_font_pt(fig: Figure) -> float | None:
    """The smallest font size (points) among the drawn, non-empty texts of a figure (after it is drawn).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.

    Returns
    -------
    float or None
        None when it has no text.
    """
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and t.get_figure() is not None]
    return min(sizes) if sizes else None


def _with_text_chunk(png: bytes, key: str, value: str) -> bytes:
    """``png`` with a tEXt chunk ``key``: ``value`` inserted before its IEND chunk (the last 12 bytes)."""
    import struct
    import zlib

    data = key.encode("latin-1") + b"\0" + value.encode("latin-1")
    chunk = struct.pack(">I", len(data)) + b"tEXt" + data + struct.pack(">I", zlib.crc32(b"tEXt" + data))
    return png[:-12] + chunk + png[-12:]


def to_png(fig: Figure) -> bytes:
    """PNG bytes of a figure, with its smallest font recorded in a text chunk (:data:`SMALLEST_FONT_KEY`).

    For an ``ipywidgets.Image`` updated from a thread, among others; drawn at :data:`DPI`.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.

    Returns
    -------
    bytes
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    size = smallest_font_pt(fig)
    png = buf.getvalue()
    return png if size is None else _with_text_chunk(png, SMALLEST_FONT_KEY, f"{size:g}")


def png_smallest_font_pt(png: bytes) -> float | None:
    """The smallest font a PNG of :func:`to_png` records.

    Parameters
    ----------
    png : bytes
        The PNG.

    Returns
    -------
    float or None
        None when it records none.
    """
    import struct

    pos = 8
    while pos + 8 <= len(png):
        (n,) = struct.unpack(">I", png[pos:pos + 4])
        kind, body = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            if key.decode("latin-1") == SMALLEST_FONT_KEY:
                return float(value)
        pos += 12 + n
    return None


def show(fig: Figure) -> None:
    """Display a matplotlib figure (e.g. :func:`energy_figure`) as a PNG in the notebook.

    Works with any backend, and in committed outputs.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    """
    from IPython.display import Image, display

    display(Image(to_png(fig)))


def energy_figure(alpha: float = 0.3, beta: float = 1.0, large: bool = False):
    """How the target energy of the §8.1 parity instance splits between β·F and α·G(F), with the kα² line.

    Exact, by Parseval: distinct parities are orthonormal. The kα² line is the error of a model that learned F and
    nothing of G.

    Parameters
    ----------
    alpha : float, default 0.3
        α, in [0, 1).
    beta : float, default 1.0
        β, at least 0.
    large : bool, default False
        The projector-friendly sizes.

    Returns
    -------
    fig : matplotlib.figure.Figure
    errors : ReferenceErrors
        The instance's :class:`~resnetlearn.targets.concept.ReferenceErrors`.
    """
    r = parity_instance(alpha=alpha, beta=beta).reference_errors()
    with plt.rc_context(style(large)):
        fig = Figure(figsize=(6.5, 3.4 if large else 3.2))
        ax = fig.subplots()
        parts = {"β·F": r.zero - r.f_only, "α·G(F)": r.f_only}
        ax.barh(list(parts), list(parts.values()), color=["tab:blue", "tab:orange"])
        if has_threshold(r.f_only):
            ax.axvline(r.f_only, **THRESHOLD_STYLE, label=f"kα² = {r.f_only:.2f}: error of learning F only")
            ax.legend(loc="lower right")
        ax.set_xlabel("share of E‖H‖² (sum over the k = 15 outputs)")
        ax.set_title(f"α = {alpha:.2f}, β = {beta:.2f}: E‖H‖² = {r.zero:.2f}"
                     + ("" if has_threshold(r.f_only) else " (α = 0: no kα² line)"))
        fig.tight_layout()
    return fig, r
