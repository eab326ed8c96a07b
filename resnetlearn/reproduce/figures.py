"""The paper's experiments, one definition each: points per scale, the claim
in the paper's terms, the verdict rule, curve labels and reference lines.

Every experiment of arXiv v3 §8 (Figures 2(a), 2(b), 3, 4(a), 4(b)), the kernel
lower bound on the §7 hard instance (arXiv v3 Theorem 2; the NeurIPS version
sketches it as Theorem 3 and states it as Theorem 2 in its §7; the key ``thm3``
is kept because it names stored files), and the companion paper's Figure 1 is a
:class:`FigureSpec` in :data:`SPECS`. :mod:`resnetlearn.reproduce` runs the
points, stores them and writes tables and plots from these definitions and
never from a figure's name, so a new experiment is one new entry here: its
titles, source and claim, a point builder (scale, the figure's template
:class:`~resnetlearn.reproduce.point.Point` -> its points, each a learner record with its data, search and protocol;
:func:`point_records` returns them, :func:`points` their flat configurations, each its store key), a verdict
(:mod:`resnetlearn.reproduce.verdicts`, reading rows through :mod:`resnetlearn.reproduce.rows`), and
where it differs from the defaults its target, plot kind, labels, reference lines and scales (a wrong
plot kind, target or scale fails when the module is imported, before any
compute). Figure 4(b) was added this way, sharing Figure 4(a)'s builders.

A *point* is one learner at one width (or sample size) with its own lr × wd
grid search (networks) or ridge/kernel-parameter search (kernels). Network
points are retrained at the selected cell with fresh initialisation seeds;
a verdict counts a learner as below a threshold only when a majority of its
seeds are (the rule is printed in every summary).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..kernels.registry import DEFAULT_KERNELS
from ..learners.search import default_val_size, paper_grid
from .learner import HandBuilt, Kernel, Network, kind_of, label_of
from .point import Data, Point, Schedule, Search
from .rows import Row, has_number
from .verdict_parts import Part, derive_label, label_ok
from .verdicts import (
    EDGE_LRS_BOTTOM,
    EDGE_LRS_TOP,
    EDGE_PANELS,
    EDGE_WDS,
    EDGE_WORDS,
    FIG3_BETAS,
    FIG3_FIXED_N,
    FIG3_MODES,
    THM3_ALPHA,
    THM3_D,
    THM3_FRESH_PANEL,
    THM3_FRESH_SEEDS,
    THM3_K,
    companion_verdict,
    companion_zero,
    fig2_verdict,
    fig3_verdict,
    grid_edge_notes,
    norm_verdict,
    parity_threshold,
    parity_zero,
    thm3_verdict,
)

SCALES = ("tiny", "quick", "cpu", "paper")
SCALE_NOTES = {
    "tiny": "a seconds-long smoke test of the machinery; no claim can be judged at this scale",
    "quick": ("classroom scale for a 2-core CPU (minutes): widths 50 and 200, 400 epochs, a 4 x 3 lr x wd grid, "
              "the selected cell retrained with 4 fresh seeds"),
    "cpu": ("the largest scale a 2-core CPU finishes in a working session: "
            "the paper's N and 800-epoch protocol, "
            "widths 20-500 for Figure 2(a) and 20-200 for Figures 2(b) and 3 (paper: 20-2000), "
            "a 5 x 4 lr x wd grid inside paper scale's 11 x 14, the selected cell retrained with 8 fresh seeds; "
            "not the paper's full scale"),
    "paper": ("the protocol of §8: 800 epochs, lr and wd from the paper's {1, 2, 5}·10^k set (ours: lr 0.001-2, "
              "wd 0 and 1e-5-0.1, an 11 x 14 grid), widths 20-2000 for Figures 2 and 3, Figure 4(a) at widths "
              "200-100000 and 4(b) at 200-50000 (§8.2), 8 fresh seeds per selected cell; meant for a GPU"),
}
"""What each scale is, recorded in every provenance file."""


def scale_settings(scale: str) -> dict:
    """The widths, epochs, lr × wd grid, test size and rerun seeds of a scale.

    At paper scale the lr and wd grids are {1, 2, 5}·10^k (the set arXiv v3 §8.1 names; the ends are ours); at the
    other scales every value is ours.

    Parameters
    ----------
    scale : {"tiny", "quick", "cpu", "paper"}
        The scale (:data:`SCALES`, described in :data:`SCALE_NOTES`).

    Returns
    -------
    dict
        ``widths``, ``epochs``, ``lrs``, ``wds``, ``n_test``, ``rerun_seeds`` and, at cpu scale,
        ``widths_by_figure`` (narrower widths for Figures 2(b) and 3).

    Raises
    ------
    ValueError
        If ``scale`` is not one of :data:`SCALES`.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    if scale == "paper":
        # arXiv v3 §8.1 and §8.2 search lr and wd in {1, 2, 5}·10^k, k ∈ Z, without bounds: the ends are ours,
        # past every cell the cpu scale selected (lr 1 fits Figure 4's training set, lr 2 brackets it)
        return dict(widths=[20, 50, 100, 200, 500, 1000, 2000], epochs=800,
                    lrs=PAPER_LRS, wds=PAPER_WDS, n_test=2000, rerun_seeds=list(range(1, 9)))
    if scale == "tiny":
        return dict(widths=[8], epochs=2, lrs=[0.05], wds=[0.0], n_test=100, rerun_seeds=[1])
    if scale == "cpu":
        # m = 500 costs ~6x m = 200 (the m x m middle layer); Figures 2(b) and 3 train
        # 3-4x more models than 2(a), so they stop at m = 200 to fit the session
        narrow = [20, 50, 100, 200]
        return dict(widths=[20, 50, 200, 500], widths_by_figure={"fig2b": narrow, "fig3": narrow}, epochs=800,
                    lrs=list(CPU_LRS), wds=list(CPU_WDS), n_test=2000,
                    rerun_seeds=list(range(1, 9)))
    return dict(widths=[50, 200], epochs=400, lrs=[0.05, 0.1, 0.2, 0.5], wds=[0.0, 1e-3, 5e-3], n_test=1000,
                rerun_seeds=[1, 2, 3, 4])


CPU_LRS = (0.01, 0.05, 0.1, 0.2, 0.5)
"""The cpu scale's lr grid (ours, inside the paper's {1, 2, 5}·10^k set)."""
CPU_WDS = (0.0, 1e-3, 5e-3, 1e-2)
"""The cpu scale's wd grid (ours)."""


PAPER_LRS = paper_grid(1e-3, 2.0)
"""The paper scale's learning rates: {1, 2, 5}·10^k from 0.001 to 2 (arXiv v3 §8.1 names the set, not its ends)."""
PAPER_WDS = [0.0] + paper_grid(1e-5, 0.1)
"""The paper scale's weight decays: 0 and {1, 2, 5}·10^k from 1e-5 to 0.1 (the ends are ours)."""
PAPER_FIG4_WIDTHS = [int(m) for m in paper_grid(200, 100000)]
"""§8.2, Figure 4(a): m in {200, 500, 1000, 2000, …, 100000}."""
PAPER_FIG4B_WIDTHS = [int(m) for m in paper_grid(200, 50000)]
"""§8.2, Figure 4(b): m in {200, 500, 1000, 2000, …, 50000}."""

learner = label_of
"""The one name of a learner (:func:`resnetlearn.reproduce.learner.label_of`), e.g. ``3resnet(all)``."""


# ----------------------------------------------------------------- the specification
PLOTS = ("error_vs_x", "beta_panels", "norm_vs_error")
"""How a figure is drawn (static and interactive alike): test error against ``xkey`` per learner; the same
with one panel per training mode and one curve per β (Figure 3); every run's error against its ‖W‖_F (§8.2)."""
TARGETS = ("parity", "parity6", "hard", "companion")
"""The targets a point can learn: the §8.1 instance, §8.2's degree-6 parity, the §7 hard instance, the
companion's Figure 1 target (built by :func:`resnetlearn.reproduce.points.target_of`)."""


@dataclass(frozen=True)
class FigureSpec:
    """One experiment of the papers, complete: see the module docstring.

    What a point runs is read from the point itself (:func:`resnetlearn.reproduce.points.run_point`): a kernel
    (mode ``kernel``) its ridge/parameter search, a ``hand_built`` model the §8.2 construction, every other learner
    its SGD lr × wd grid, and a (last)/(ntk) point also its exact kernel solution. A wrong plot kind, target, x key or
    scale raises a ValueError when the specification is built.

    Parameters
    ----------
    name : str
        The figure's key (``"fig2a"``, ...), which names its stored files.
    title : str
        The static plot's title (it names the paper's figure or theorem).
    headline : str
        The interactive figure's title: the figure and, in brackets, the paper's claim.
    source : str
        Where in the papers the experiment is (e.g. ``"arXiv v3 §8.1, Figure 2(a)"``).
    claim : str
        The claim judged, in our words.
    xkey : {"m", "n_train"} or None
        The x axis of the error curves; None only for a ``"norm_vs_error"`` plot.
    points : callable
        ``points(scale, template)`` → the figure's :class:`~resnetlearn.reproduce.point.Point` records.
    verdict : callable
        ``verdict(rows)`` → (notes, judged parts) (:mod:`resnetlearn.reproduce.verdicts`).
    target : str, default "parity"
        What every point learns unless it says otherwise, one of :data:`TARGETS`.
    data_seed : int, default 0
        The seed of every point's train/test split (:func:`resnetlearn.targets.concept.data_split`).
    label : callable, default :func:`~resnetlearn.reproduce.learner.label_of`
        A row's curve label.
    mode_in_label : bool, default True
        Whether the interactive figure's legend names a learner with its training mode.
    label_keys : tuple of str, default ()
        Configuration keys shown, besides the learner and its x, in a point's name (:func:`point_label`).
    lines : callable, default no lines
        ``lines()`` → the reference lines as (value, name), the first being the threshold seeds are counted against.
    plot : {"error_vs_x", "beta_panels", "norm_vs_error"}, default "error_vs_x"
        How the figure is drawn (:data:`PLOTS`).
    keeps_grid : bool, default False
        Whether a network point keeps every grid run's (train error, test error, ‖W‖_F) (§8.2 plots them).
    scales : tuple of str, default SCALES
        The scales at which the figure is defined, a non-empty subset of :data:`SCALES`.
    rule_note : str, default ""
        Said after the selection rule in the verdict table where the figure reports a second rule beside it.
    illustration : bool, default False
        Whether the experiment is our illustration rather than a figure of the paper: its label is ``illustrated``
        whatever its parts say (they are still printed).
    edge_notes : bool, default False
        Whether the summary names the grid edges of its networks trained in mode all or hidden
        (:func:`resnetlearn.reproduce.verdicts.grid_edge_notes`).
    """

    name: str
    title: str
    """The static plot's title (it names the paper's figure or theorem)."""
    headline: str
    """The interactive figure's title: the figure and, in brackets, the paper's claim."""
    source: str
    claim: str
    xkey: str | None
    """The x axis of the error curves (``m`` or ``n_train``); None when the figure draws no such curve."""
    points: Callable[[str, Point], list[Point]]
    verdict: Callable[[list[dict]], tuple[str, list[Part]]]
    """The figure's parts judged on its rows, with a paragraph of notes (:mod:`resnetlearn.reproduce.verdicts`)."""
    target: str = "parity"
    """What every point learns unless it says otherwise (one of :data:`TARGETS`)."""
    data_seed: int = 0
    """The seed of every point's train/test split (:func:`resnetlearn.targets.concept.data_split`)."""
    label: Callable[[dict], str] = learner
    mode_in_label: bool = True
    """Whether the interactive figure's legend names a learner with its training mode."""
    label_keys: tuple[str, ...] = ()
    """Configuration keys shown, besides the learner and its x, in a point's name (:func:`point_label`)."""
    lines: Callable[[], list[tuple[float, str]]] = field(default=lambda: [])
    plot: str = "error_vs_x"
    """How the figure is drawn, one of :data:`PLOTS`."""
    keeps_grid: bool = False
    """Whether a network point keeps every grid run's (train error, test error, ‖W‖_F) (§8.2 plots them)."""
    scales: tuple[str, ...] = SCALES
    """The scales at which the figure is defined; :func:`point_records` refuses the others."""
    rule_note: str = ""
    """Said after the selection rule in the verdict table (:func:`resnetlearn.reproduce.figure_tables.verdict_facts`)
    where the figure reports a second rule beside it; empty for none."""
    illustration: bool = False
    """Whether the experiment is our illustration rather than a figure of the paper: its label is ``illustrated``
    whatever its parts say (they are still printed)."""
    edge_notes: bool = False
    """Whether the summary names the grid edges of its networks trained in mode all or hidden
    (:func:`resnetlearn.reproduce.verdicts.grid_edge_notes`, on the scale's lr grid)."""

    def __post_init__(self):
        for what, value, allowed in (("plot", self.plot, PLOTS), ("target", self.target, TARGETS)):
            if value not in allowed:
                raise ValueError(f"figure {self.name!r}: {what} must be one of {allowed}, got {value!r}")
        if self.xkey not in ("m", "n_train", None) or (self.xkey is None and self.plot != "norm_vs_error"):
            raise ValueError(f"figure {self.name!r}: xkey must be 'm' or 'n_train' (None only for a "
                             f"norm_vs_error plot), got {self.xkey!r}")
        if not set(self.scales) <= set(SCALES) or not self.scales:
            raise ValueError(f"figure {self.name!r}: scales must be a non-empty subset of {SCALES}")

    def judge(self, rows: list[dict], dropped: str = "") -> tuple[str, Verdict]:
        """The claim, its parts judged on these rows and the label derived from them.

        Parameters
        ----------
        rows : list of Row or dict
            The figure's rows, one per point.
        dropped : str, default ""
            A note on the points left out, said before the label.

        Returns
        -------
        text : str
            One paragraph that ends with ``-> LABEL``.
        verdict : Verdict
            The judged parts and the label.
        """
        rows = [Row.of(r) for r in rows]
        if not rows:
            return f"{self.name}: no points -> {derive_label([], ran=False)}", Verdict((), derive_label([], ran=False))
        notes, parts = self.verdict(rows)
        if self.edge_notes:
            scale = rows[0].get("scale")
            notes += grid_edge_notes(rows, scale_settings(scale)["lrs"] if scale in SCALES else
                                     [r["lr"] for r in rows if r.get("lr") is not None])
        notes += _selection_note(rows)
        label = derive_label(parts, illustration=self.illustration)
        text = " ".join(f"Part {i}: {p.text()}." for i, p in enumerate(parts, 1))
        return (f"{self.name}: {self.claim} ({self.source}) {text} {notes}{dropped} -> {label}".replace("  ", " "),
                Verdict(tuple(parts), label))

    def summarise(self, rows: list[dict]) -> tuple[str, bool | None]:
        """The summary paragraph and whether the label is ``reproduced``.

        Parameters
        ----------
        rows : list of Row or dict
            The figure's rows, one per point.

        Returns
        -------
        text : str
            The paragraph of :meth:`judge`.
        ok : bool or None
            True for ``reproduced``, False for ``not reproduced``, None for any other label
            (:func:`~resnetlearn.reproduce.verdict_parts.label_ok`).
        """
        text, verdict = self.judge(rows)
        return text, verdict.ok


def _selection_note(rows: list[dict]) -> str:
    """Where the rows chose their cells on validation samples, said so with their sizes (n_val per N)."""
    val = [r for r in rows if r.get("select") == "val" and kind_of(r).grid_searched]
    if not val:
        return ""
    sizes = sorted({(r["n_train"], r.get("n_val") or default_val_size(r["n_train"])) for r in val})
    return (" Validation-selected: every network's lr/wd cell was chosen on fresh validation samples drawn from the "
            "target (the network trained on the same N samples), not on the test set; n_val = "
            + ", ".join(f"{v} at N = {n}" for n, v in sizes) + ".")


@dataclass(frozen=True)
class Verdict:
    """A figure's judged parts and the label :func:`~resnetlearn.reproduce.verdict_parts.derive_label` gave them.

    ``verdict.ok`` is True for ``reproduced``, False for ``not reproduced``, None for any other label.

    Parameters
    ----------
    parts : tuple of Part
        The judged parts.
    label : str
        The derived label.
    """

    parts: tuple[Part, ...]
    label: str

    @property
    def ok(self) -> bool | None:
        return label_ok(self.label)


def _base(spec: FigureSpec, scale: str, *, s: dict, select: str, device) -> Point:
    """The template every point of ``spec`` at ``scale`` starts from (no learner, no N yet)."""
    # validation samples drawn fresh, training on all N (resnetlearn.learners.search.validation_split); a point of
    # select="test" carries no such key, so its store key is the one it always had
    search = Search(s["lrs"], s["wds"], select, s["rerun_seeds"], validation="fresh" if select == "val" else None)
    return Point(spec.name, None, data=Data(spec.target, None, s["n_test"], alpha=0.3, beta=1.0), search=search,
                 protocol=Schedule(s["epochs"]), scale=scale, device=device)


def _widths(figure: str, s: dict) -> list[int]:
    return s.get("widths_by_figure", {}).get(figure, s["widths"])


# ----------------------------------------------------------------- Figure 2
def _fig2_points(figure: str, train_mode: str, n_train: int):
    def points(scale: str, base: Point) -> list[Point]:
        s = scale_settings(scale)
        pts = [base.replace(learner=Network(arch, mode, m=m), n_train=n_train)
               for arch in ("3resnet", "3layer", "2layer") for mode in (train_mode, "last", "ntk")
               for m in _widths(figure, s)]
        return pts + _extensions(figure, scale, pts)
    return points


@dataclass(frozen=True)
class GridExtension:
    """Points that extend the lr × wd grid of some points of a figure past an edge their selected cells sat on.

    The points of learner ``arch(mode)`` at ``widths`` (and at ``n_train`` and ``betas`` where given) get an extension
    point each, with ``panel`` named by the axes it goes past and its own store key (the point it extends keeps its
    key). The extension grids are ours: the next values in the paper's {1, 2, 5}·10^k steps.

    Parameters
    ----------
    arch : str
        The architecture of the points extended.
    mode : str
        Their training mode.
    widths : tuple of int
        Their widths.
    lrs : tuple of float or None, default None
        The extension's learning rates; None keeps the scale's.
    wds : tuple of float or None, default None
        The extension's weight decays; None keeps the scale's.
    n_train : int or None, default None
        Only points at this N; None: any.
    betas : tuple of float or None, default None
        Only points at these β; None: any.
    """

    arch: str
    mode: str
    widths: tuple
    lrs: tuple | None = None
    wds: tuple | None = None
    n_train: int | None = None
    betas: tuple | None = None

    def extends(self, p: Point) -> bool:
        """Whether ``p`` is one of the points this extension extends.

        Parameters
        ----------
        p : Point
            A point of the figure.

        Returns
        -------
        bool
        """
        return ((p.learner.arch, p.learner.mode) == (self.arch, self.mode) and p.learner.m in self.widths
                and (self.n_train is None or p.data.n_train == self.n_train)
                and (self.betas is None or p.data.beta in self.betas))

    @property
    def panel(self) -> str:
        """The extension point's panel, named by the axes it goes past (``edge``: wd alone, as its first use)."""
        return EDGE_PANELS[(self.lrs is not None, self.wds is not None)]

    def point(self, p: Point) -> Point:
        """The extension point of ``p``: the same point on the extension's grid, with its ``panel``.

        Parameters
        ----------
        p : Point
            A point this extension extends.

        Returns
        -------
        Point
        """
        grid = {k: list(v) for k, v in (("lrs", self.lrs), ("wds", self.wds)) if v is not None}
        return p.replace(**grid, panel=self.panel)



GRID_EXTENSIONS = {
    ("fig2a", "cpu"): [GridExtension("2layer", "all", (50, 200, 500), wds=EDGE_WDS)],
    ("fig2b", "cpu"): [GridExtension("3layer", "hidden", (50, 100, 200), wds=EDGE_WDS)],
    # the statement α ≳ β "not learned" at the N it is judged at: every point of β ≤ α whose cell sat on the top
    # of the wd grid (and, in mode hidden, on the top of the lr grid too at m = 50, 100): past wd 0.01 on the
    # whole lr grid, and for mode hidden also past lr 0.5 (lr 1, 2 against every wd, so the corner is covered)
    ("fig3", "cpu"): [
        GridExtension("3resnet", "all", (50,), wds=EDGE_WDS, n_train=500, betas=(0.0,)),
        GridExtension("3resnet", "all", (200,), wds=EDGE_WDS, n_train=500, betas=(0.2, 0.3)),
        GridExtension("3resnet", "hidden", (20, 50, 100, 200), lrs=CPU_LRS + EDGE_LRS_TOP, wds=EDGE_WDS,
                      n_train=1000, betas=(0.0, 0.2, 0.3)),
        GridExtension("3resnet", "hidden", (20, 50, 100, 200), lrs=EDGE_LRS_TOP, n_train=1000,
                      betas=(0.0, 0.2, 0.3)),
    ],
    # the nearest competitor at the largest N chose lr 0.01, the bottom of its grid, at every width
    ("companion", "cpu"): [GridExtension("2layer", "hidden", (50, 100, 200, 500), lrs=EDGE_LRS_BOTTOM,
                                         n_train=3000)],
}
"""Grids extended past an edge where the selected cell sat on it, so that a competitor's grid, and the grid of a
statement that something is not learned, reaches past its selected cell. Figure 2(b)'s nearest competitor
3layer(hidden) and Figure 2(a)'s 2layer(all) chose wd = 0.01, the top of the cpu scale's grid; Figure 3's
β ≤ α points chose wd 0.01 and, in mode hidden, lr 0.5; the companion's 2layer(hidden) at N = 3000 chose lr 0.01.
The verdicts read the extension points beside the points they extend."""


def _extensions(figure: str, scale: str, pts: list[Point]) -> list[Point]:
    exts = GRID_EXTENSIONS.get((figure, scale), [])
    return [e.point(p) for e in exts for p in pts if e.extends(p)]


def fig2_label(r: dict) -> str:
    """A Figure 2 curve: the learner, with ``, wd past the grid`` (or the lr words) for a grid extension's point.

    Parameters
    ----------
    r : Row or dict
        A row of the figure.

    Returns
    -------
    str
    """
    return learner(r) + (f", {EDGE_WORDS[r['panel']]}" if r.get("panel") in EDGE_WORDS else "")


# ----------------------------------------------------------------- Figure 3


FIG3_N = tuple((FIG3_FIXED_N[mode],) for mode in FIG3_MODES)
"""Figure 3's sample sizes per training mode (of :data:`resnetlearn.reproduce.verdicts.FIG3_MODES`, in its
order) at scales tiny and quick: the N fixed before the runs (:data:`resnetlearn.reproduce.verdicts.FIG3_FIXED_N`;
arXiv v3 gives no N for Figure 3, so these follow Figures 2(a) and 2(b) and are ours)."""
FIG3_N_BY_SCALE = {"cpu": ((500, 1000), (1000,)), "paper": ((500, 1000), (1000,))}
"""At scales cpu and paper (all) also runs at N = 1000, the N of the talk's version of this experiment, beside
N = 500 (ours, as Figure 2(a)): the paper fixes none. The verdict is taken at the N fixed before the runs; the
rows at N = 1000 (all) are reported as parts of their own."""


def fig3_sample_sizes(scale: str) -> dict[str, tuple[int, ...]]:
    """The N at which each training mode of Figure 3 runs at ``scale`` (:data:`FIG3_N`, :data:`FIG3_N_BY_SCALE`).

    Parameters
    ----------
    scale : {"tiny", "quick", "cpu", "paper"}
        The scale (:data:`SCALES`, described in :data:`SCALE_NOTES`).

    Returns
    -------
    dict of str to tuple of int
        By training mode.
    """
    return dict(zip(FIG3_MODES, FIG3_N_BY_SCALE.get(scale, FIG3_N)))


def _fig3_points(scale: str, base: Point) -> list[Point]:
    s = scale_settings(scale)
    ns = fig3_sample_sizes(scale)
    pts = [base.replace(learner=Network("3resnet", mode, m=m), n_train=n, beta=beta)
           for n_rank in range(max(map(len, ns.values())))
           for beta in FIG3_BETAS for mode in FIG3_MODES if n_rank < len(ns[mode])
           for n in (ns[mode][n_rank],) for m in _widths("fig3", s)]
    return pts + _extensions("fig3", scale, pts)


def fig3_label(r: dict) -> str:
    """A Figure 3 curve: ``β=0.5, all``.

    ``, N=1000`` is added where a mode runs at an N other than its first (:func:`fig3_sample_sizes`), so the tables
    and plots at scales tiny and quick keep their labels; a grid extension's point says which grid it goes past.

    Parameters
    ----------
    r : Row or dict
        A row of the figure.

    Returns
    -------
    str
    """
    first = dict(zip(FIG3_MODES, FIG3_N)).get(r.get("mode"), (None,))[0]
    extra = r.get("n_train") is not None and r["n_train"] != first
    return (f"β={r['beta']:g}, {r['mode']}" + (f", N={r['n_train']}" if extra else "")
            + (f", {EDGE_WORDS[r['panel']]}" if r.get("panel") in EDGE_WORDS else ""))


# ----------------------------------------------------------------- Figure 4 (§8.2)
FIG4_PAPER_SGD_BEST = 0.69
"""arXiv v3 §8.2: SGD's best test error at d = 40, N = 5000, after searching m up to 100000."""
FIG4B_PAPER_SGD_BEST = 0.98
"""arXiv v3 §8.2: SGD's best test error at d = 100, N = 50000 (mini-batch 100), after searching m up to 50000."""

FIG4_SETTINGS = {
    # scale: (d, N, widths, lrs, wds, epochs); None: the scale's own grid / epochs (scale_settings)
    "tiny": (8, 200, [200], [0.5], [0.0], 2),
    "quick": (20, 2000, [200, 400], [0.05, 0.2, 0.5, 1.0], [0.0, 1e-4, 1e-3], 100),
    "cpu": (40, 5000, [200, 500, 1000, 2000], [0.1, 0.2, 0.5, 1.0], [0.0, 1e-4, 1e-3], None),
    "paper": (40, 5000, PAPER_FIG4_WIDTHS, None, None, None),
}
"""Figure 4(a) per scale: the paper's d = 40, N = 5000 at scales cpu and paper; the widths and, below
paper scale, the grids and epochs are ours; at paper scale the widths are §8.2's, 200 to 100000."""
FIG4_WIDE = {
    # scale: (widths, lrs, wds): wider SGD networks, each on a grid of ours that brackets the narrow widths'
    # selected cell (lr 0.5, wd 1e-3) on both sides: lr up to 2, wd from 0 past 1e-3 in {1, 2, 5}·10^k steps
    # m = 10000 trained in groups of 2 models kept as they finished (--checkpoint-models 2): 4236 s on one core
    "cpu": ([5000, 10000], [0.2, 0.5, 1.0, 2.0], [0.0, 1e-4, 1e-3, 2e-3]),
}
"""Figure 4(a)'s wide widths (the paper searched m up to 100000): their own points beside the narrow ones."""
OPTIONAL_WIDTHS = {"fig4": {scale: set(widths) for scale, (widths, _, _) in FIG4_WIDE.items()}}
"""Widths a figure's shipped tables may lack (points that take hours on a CPU): a table written before they
finished loads without them (:func:`optional_points`), and its verdict states the widths that ran."""
FIG4B_SETTINGS = {
    "tiny": (8, 200, [200], [0.5], [0.0], 2),
    "paper": (100, 50000, PAPER_FIG4B_WIDTHS, None, None, None),
}
"""Figure 4(b) (arXiv v3 §8.2: d = 100, N = 50000, mini-batch 100): defined at paper scale only, for a GPU
(§8.2's widths, 200 to 50000), and at tiny scale as a seconds-long smoke test."""
FIG4B_BATCH = 100
"""§8.2's mini-batch for d = 100, N = 50000 (Figure 4(b)); Figure 4(a) keeps §8.1's 50."""


def _norm_points(settings: dict, *, batch_size: int | None = None, wide_settings: dict | None = None):
    """The points of a §8.2 figure: SGD on ``2layer_signs`` (hidden layer trained) at each width, and
    the hand-built solution of footnote 16 at several weight decays."""
    def points(scale: str, base: Point) -> list[Point]:
        s = scale_settings(scale)
        wide = wide_settings or {}
        d, n, widths, lrs, wds, epochs = settings[scale]
        common = base.replace(d=d, n_train=n, alpha=None, beta=None, lrs=lrs or s["lrs"], wds=wds or s["wds"],
                              epochs=epochs or s["epochs"], rerun_seeds=[])
        sgd = common.replace(batch_size=batch_size)
        # the SGD networks' selected cells are retrained with the scale's fresh seeds, as in every figure;
        # a hand-built solution is a construction, not a seeded training run
        pts = [sgd.replace(learner=Network("2layer_signs", "hidden", m=m), rerun_seeds=s["rerun_seeds"])
               for m in widths]
        if scale in wide:
            wide_widths, wide_lrs, wide_wds = wide[scale]
            pts += [sgd.replace(learner=Network("2layer_signs", "hidden", m=m), rerun_seeds=s["rerun_seeds"],
                                lrs=wide_lrs, wds=wide_wds) for m in wide_widths]
        hand_epochs = 3000 if scale != "tiny" else 20
        pts += [common.replace(learner=HandBuilt(wd, m=widths[0]), epochs=hand_epochs)
                for wd in ((0.0, 1e-4, 1e-3, 3e-3) if scale != "tiny" else (0.0,))]
        return pts
    return points


# ----------------------------------------------------------------- the §7 hard instance
def _thm3_points(scale: str, base: Point) -> list[Point]:
    ns = {"tiny": [50], "quick": [250, 500, 1000], "cpu": [250, 500, 1000, 2000, 5000],
          "paper": [500, 1000, 2000, 5000, 10000]}[scale]
    kerns = DEFAULT_KERNELS if scale != "tiny" else ("gaussian", "ntk_inf:2layer")
    common = base.replace(d=THM3_D, k=THM3_K, alpha=THM3_ALPHA)
    m_kernel = 500 if scale != "tiny" else 16  # the width behind the finite-width kernels
    pts = []
    for n in ns:
        pts += [common.replace(learner=Kernel.of_spec(kname, m=m_kernel), n_train=n, rerun_seeds=[])
                for kname in kerns]
        epochs = max(10, min(800, round(8000 * 50 / n))) if scale != "tiny" else 2
        robust = dict(grid_seeds=list(range(1 + len(base.search.rerun_seeds))), rerun_seeds=[]) \
            if scale in THM3_ROBUST_SCALES else {}
        net = common.replace(learner=Network("3resnet", "all", m=200 if scale != "tiny" else 8), n_train=n,
                             epochs=epochs, lrs=THM3_LRS.get(scale, [0.05, 0.1, 0.2]),
                             wds=THM3_WDS.get(scale, [1e-3, 5e-3]), **robust)
        pts.append(net)
        if n in THM3_FRESH.get(scale, {}):  # the robust rule's cell, judged on seeds that took no part in choosing
            lr, wd = THM3_FRESH[scale][n]
            pts.append(net.replace(lrs=[lr], wds=[wd], grid_seeds=None, rerun_seeds=list(THM3_FRESH_SEEDS),
                                   panel=THM3_FRESH_PANEL))
    return pts


THM3_FRESH = {"cpu": {250: (0.1, 0.0), 500: (0.1, 5e-4), 1000: (0.1, 5e-4), 2000: (0.1, 5e-4), 5000: (0.1, 5e-4)}}
"""Per scale and N, the cell the robust rule (:func:`resnetlearn.learners.selection.robust_cell`) chose on seeds
0-8 of the shipped grid, fixed here before the judging seeds ran; the verdict checks that the cell it recomputes
from the grid is this one."""


THM3_ROBUST_SCALES = ("cpu", "paper")
"""Scales at which the 3resnet of ``thm3`` trains every lr × wd cell with seed 0 and the scale's 8 other seeds
(``grid_seeds``), so that beside the paper's test-best rule (seed 0 picks the cell, the others are its fresh
seeds) the robust rule of :func:`resnetlearn.learners.selection.robust_cell` can be applied: at cpu scale the test-best
cell at N = 250 and 5000 (lr 0.2) let 4 of 8 fresh seeds diverge."""
THM3_LRS = {"tiny": [0.05], "cpu": [0.02, 0.05, 0.1, 0.2, 0.5]}
THM3_WDS = {"tiny": [0.0], "cpu": [0.0, 1e-4, 5e-4, 1e-3, 5e-3]}
"""The 3resnet's lr × wd grid on the §7 instance (ours, inside the paper's {1, 2, 5}·10^-k and wd = 0): at cpu
scale the 3 × 2 grid's selected cell at N = 250 (lr 0.2, wd 0.001) sat on both of its edges and diverged for
half of its fresh seeds, so the grid reaches past it on every side; other scales keep lr {0.05, 0.1, 0.2} ×
wd {0.001, 0.005}."""


def _thm3_label(r: dict) -> str:
    """A curve of the §7 figure: the learner's name, and for the robust cell's judging points ``, seeds 9-16``."""
    return r["model"] + (f", seeds {THM3_FRESH_SEEDS[0]}-{THM3_FRESH_SEEDS[-1]}"
                         if r.get("panel") == THM3_FRESH_PANEL else "")


# ----------------------------------------------------------------- companion Figure 1
COMPANION_LEARNERS = (("3layer", "hidden"), ("2layer", "hidden"), ("3layer", "last"), ("3layer", "ntk"),
                      ("2layer", "last"), ("2layer", "ntk"))


def _companion_points(scale: str, base: Point) -> list[Point]:
    s = scale_settings(scale)
    ns = {"tiny": [100], "quick": [100, 300, 1000], "cpu": [100, 300, 1000, 3000],
          "paper": [100, 300, 1000, 3000, 10000]}[scale]
    m = s["widths"][-1] if scale in ("tiny", "paper") else 200
    common = base.replace(alpha=None, beta=None)
    pts = [common.replace(learner=Network(arch, mode, m=m, init="companion"), n_train=n)
           for arch, mode in COMPANION_LEARNERS for n in ns]
    # the width panel (the companion ties larger m to lower test error): 3layer and 2layer at the largest N
    widths = {"tiny": [], "quick": [50], "cpu": [50, 100, 500], "paper": [50, 100, 500, 1000]}[scale]
    pts += [common.replace(learner=Network(arch, "hidden", m=w, init="companion"), n_train=ns[-1], panel="width")
            for arch in ("3layer", "2layer") for w in widths]
    return pts + _extensions("companion", scale, pts)


# ----------------------------------------------------------------- the registry
_PARITY_LINES = lambda: [(parity_threshold(), "kα²"), (parity_zero(), "predict 0")]  # noqa: E731

SPECS: dict[str, FigureSpec] = {spec.name: spec for spec in (
    FigureSpec(
        name="fig2a", title="Figure 2(a): N = 500, all layers trained",
        headline="Figure 2(a), N = 500, all layers trained (paper: only 3resnet(all) gets below kα²)",
        source="arXiv v3 §8.1, Figure 2(a)",
        claim="Claim: of the learners compared, only the three-layer ResNet learns the composite signal α·G(F) "
              "(test error below kα²); kernel methods stay far behind even at large width.",
        xkey="m", points=_fig2_points("fig2a", "all", 500), verdict=fig2_verdict("all"), lines=_PARITY_LINES,
        label=fig2_label,
        edge_notes=True),
    FigureSpec(
        name="fig2b", title="Figure 2(b): N = 1000, hidden layers trained",
        headline="Figure 2(b), N = 1000, hidden layers trained (paper: only 3resnet(hidden) gets below kα²)",
        source="arXiv v3 §8.1, Figure 2(b)",
        claim="Claim: as in Figure 2(a), with only the hidden layers trained (Theorem 1's setting) and N = 1000.",
        xkey="m", points=_fig2_points("fig2b", "hidden", 1000), verdict=fig2_verdict("hidden"), label=fig2_label,
        lines=_PARITY_LINES, edge_notes=True),
    FigureSpec(
        name="fig3", title="Figure 3: β·F + α·G(F), α = 0.3",
        headline="Figure 3, α = 0.3 (paper: α·G(F) learned when α ≲ β, not when α ≳ β)",
        source="arXiv v3 §8.1, Experiment 2 and Figure 3",
        claim="Claim: with α = 0.3 fixed, the ResNet learns the composite signal when α ≲ β (the base signal "
              "dominates, so hierarchical learning works) and practically cannot when α ≳ β.",
        xkey="m", points=_fig3_points, verdict=fig3_verdict, label=fig3_label,
        label_keys=("beta",), lines=lambda: [(parity_threshold(), "kα²")], plot="beta_panels", edge_notes=True),
    FigureSpec(
        name="fig4", title="Figure 4(a): SGD does not find the small-norm solution",
        headline="Figure 4 (paper: SGD finds no fit with a ‖W‖_F comparable to a hand-built one)",
        source="arXiv v3 §8.2, Figure 4(a)",
        claim="Claim: on a degree-6 parity, SGD on a two-layer network with fixed output signs finds neither a "
              "test error a near-minimal-norm solution would give (the paper at d = 40, N = 5000: none better "
              "than 0.69, where such a solution would generalise below 0.3) nor a fit of the training data with a "
              "Frobenius norm comparable to one built by hand (‖W‖_F ≈ 9.7√d with error ≤ 0.12, footnote 16).",
        xkey=None, points=_norm_points(FIG4_SETTINGS, wide_settings=FIG4_WIDE),
        verdict=norm_verdict(FIG4_PAPER_SGD_BEST, 100000),
        target="parity6", plot="norm_vs_error", keeps_grid=True),
    FigureSpec(
        name="fig4b", title="Figure 4(b): SGD does not find the small-norm solution (d = 100, N = 50000)",
        headline="Figure 4(b), d = 100, N = 50000 (paper: SGD finds no fit with a ‖W‖_F comparable to a "
                 "hand-built one)",
        source="arXiv v3 §8.2, Figure 4(b)",
        claim="Claim: as in Figure 4(a), at d = 100 and N = 50000 with mini-batch 100: SGD finds no test error "
              "better than 0.98 (paper, m up to 50000) and no training fit with a Frobenius norm comparable to "
              "the hand-built one (footnote 16).",
        xkey=None, points=_norm_points(FIG4B_SETTINGS, batch_size=FIG4B_BATCH),
        verdict=norm_verdict(FIG4B_PAPER_SGD_BEST, 50000), target="parity6",
        plot="norm_vs_error", keeps_grid=True, scales=tuple(FIG4B_SETTINGS)),
    FigureSpec(
        name="thm3", title="Our illustration of the kernel theorem (§7 hard instance; not a paper figure)",
        headline="Our illustration of the kernel theorem, §7 hard instance (not a figure of the paper; "
                 "theorem: kernels err by more than α²/4 for small N)",
        source="our illustration of NeurIPS §7, Theorem 2, and arXiv v3 §7.1; not a figure of the paper",
        claim="Claim (illustrated, not tested): kernel methods cannot reach error α²/4 on this concept class "
              "with few samples, while the ResNet learns it.",
        xkey="n_train", points=_thm3_points, verdict=thm3_verdict, target="hard", label=_thm3_label,
        mode_in_label=False, lines=lambda: [(THM3_ALPHA ** 2 / 4, "α²/4"), (THM3_K * THM3_ALPHA ** 2, "kα²")],
        rule_note="ResNet half: robust rule beside test-best", illustration=True),
    FigureSpec(
        name="companion", title="Companion Figure 1: 3layer vs 2layer, last, NTK",
        headline="Companion Figure 1 (paper: 3layer beats 2layer and their kernels)",
        source="companion paper §4 and Figure 1",
        claim="Claim: the three-layer network has a critical advantage over two-layer networks and over their "
              "NTKs and conjugate kernels (last) on this target.",
        xkey="n_train", points=_companion_points, verdict=companion_verdict, target="companion",
        label=lambda r: learner(r) + (f" m={r['m']}" if r.get("panel") == "width" else "")
        + (f" m={r['m']}, {EDGE_WORDS[r['panel']]}" if r.get("panel") in EDGE_WORDS else ""),
        lines=lambda: [(companion_zero(), "predict 0")], edge_notes=True),
)}


def names() -> tuple[str, ...]:
    """Every figure defined here, read from :data:`SPECS` when called (a figure added later is included).

    Returns
    -------
    tuple of str
    """
    return tuple(SPECS)


def every_scale() -> tuple[str, ...]:
    """The figures defined at every scale: what ``reproduce all`` runs at every scale and ``results/quick`` holds.

    Read from :data:`SPECS` when called.

    Returns
    -------
    tuple of str
    """
    return tuple(name for name, s in SPECS.items() if s.scales == SCALES)


def spec(name: str) -> FigureSpec:
    """The specification of a figure.

    Parameters
    ----------
    name : str
        A key of :data:`SPECS`.

    Returns
    -------
    FigureSpec

    Raises
    ------
    ValueError
        If ``name`` is not a defined figure.
    """
    if name not in SPECS:
        raise ValueError(f"unknown figure {name!r}; allowed: {', '.join(names())}")
    return SPECS[name]


def point_records(name: str, scale: str, *, device=None, select: str = "test") -> list[Point]:
    """Every point of a figure at a scale, in the figure's order, each a :class:`~resnetlearn.reproduce.point.Point`.

    What a run passes on: :func:`resnetlearn.reproduce.running.run_figure`, the work estimate.

    Parameters
    ----------
    name : str
        The figure, a key of :data:`SPECS`.
    scale : {"tiny", "quick", "cpu", "paper"}
        The scale (:data:`SCALES`, described in :data:`SCALE_NOTES`).
    device : str or None, default None
        The device recorded in every point.
    select : {"test", "val"}, default "test"
        Whether the lr/wd cell is selected by test error (as §8.1 does) or on fresh validation samples.

    Returns
    -------
    list of Point

    Raises
    ------
    ValueError
        If the figure or scale is unknown, or the figure is not defined at ``scale``.
    """
    s = scale_settings(scale)
    fig = spec(name)
    if scale not in fig.scales:
        raise ValueError(f"{name} is defined at scale(s) {', '.join(fig.scales)} only, not at scale {scale!r}")
    return fig.points(scale, _base(fig, scale, s=s, select=select, device=device))


def points(name: str, scale: str, *, device=None, select: str = "test") -> list[dict]:
    """Every point of a figure at a scale, each as its complete flat configuration.

    The configuration (:meth:`Point.config <resnetlearn.reproduce.point.Point.config>`) is the point's store key and
    what a stored row or table holds.

    Parameters
    ----------
    name : str
        The figure, a key of :data:`SPECS`.
    scale : {"tiny", "quick", "cpu", "paper"}
        The scale (:data:`SCALES`, described in :data:`SCALE_NOTES`).
    device : str or None, default None
        The device recorded in every point.
    select : {"test", "val"}, default "test"
        As in :func:`point_records`.

    Returns
    -------
    list of dict
    """
    return [p.config() for p in point_records(name, scale, device=device, select=select)]


def optional_points(name: str, scale: str) -> list[dict]:
    """The points of a figure at a scale that its tables may lack (:data:`OPTIONAL_WIDTHS`).

    Parameters
    ----------
    name : str
        The figure.
    scale : {"tiny", "quick", "cpu", "paper"}
        The scale (:data:`SCALES`, described in :data:`SCALE_NOTES`).

    Returns
    -------
    list of dict
        Flat configurations of the grid-searched points at an optional width.
    """
    widths = OPTIONAL_WIDTHS.get(name, {}).get(scale, set())
    return [p for p in points(name, scale) if p["m"] in widths and kind_of(p).grid_searched]


def names_at(scale: str) -> tuple[str, ...]:
    """The figures defined at ``scale``: what ``reproduce all --scale SCALE`` runs.

    Parameters
    ----------
    scale : {"tiny", "quick", "cpu", "paper"}
        The scale (:data:`SCALES`, described in :data:`SCALE_NOTES`).

    Returns
    -------
    tuple of str

    Raises
    ------
    ValueError
        If ``scale`` is not one of :data:`SCALES`.
    """
    scale_settings(scale)  # a clear error for an unknown scale
    return tuple(name for name, s in SPECS.items() if scale in s.scales)


# ----------------------------------------------------------------- a point's name, and a figure's verdict
_SYMBOLS = {"beta": "β"}


def point_label(p: dict) -> str:
    """A short human name for a point, e.g. ``3resnet(last) m=200`` or ``gaussian N=250``.

    The name holds the learner, its figure's x (N when the figure plots against N, else m), the figure's
    :attr:`FigureSpec.label_keys`, where its learner has one the value of its ``variant_key`` (a hand-built solution's
    wd; as in :func:`resnetlearn.reproduce.point.point_id`), and for a grid extension which grid it goes past.

    Parameters
    ----------
    p : dict or Row
        A point's configuration (:meth:`Point.config <resnetlearn.reproduce.point.Point.config>`) or a stored row.

    Returns
    -------
    str
    """
    fig = SPECS.get(p.get("figure"))
    parts = [learner({"model": p.get("model"), "mode": p.get("mode")})]
    parts += [f"{_SYMBOLS.get(k, k)}={p.get(k)}" for k in (fig.label_keys if fig else ())]
    parts.append(f"N={p.get('n_train')}" if fig is not None and fig.xkey == "n_train" else f"m={p.get('m')}")
    variant = kind_of(p).variant_key
    if variant:
        parts.append(f"{variant}={p.get(variant)}")
    if p.get("panel") in EDGE_WORDS:
        parts.append(f"({EDGE_WORDS[p['panel']]})")
    return " ".join(parts)


def judge(figure: str, rows: list[dict]) -> tuple[str, Verdict]:
    """The paper's claim for a figure, its parts judged on these rows and the label derived from them.

    Points whose test error is not finite (every run of their grid diverged) never enter a minimum or maximum: they
    are left out and named before the label (:meth:`FigureSpec.judge`).

    Parameters
    ----------
    figure : str
        The figure, a key of :data:`SPECS`.
    rows : list of Row or dict
        The figure's rows, one per point.

    Returns
    -------
    text : str
        The summary paragraph, ending with ``-> LABEL``.
    verdict : Verdict
    """
    rows = [Row.of(r) for r in rows]
    dropped = [r for r in rows if not has_number(r)]
    note = ""
    if dropped:
        n = len(dropped)
        note = (f" {n} diverged point{'s' if n > 1 else ''} (no finite test error) excluded: "
                + ", ".join(point_label(dict(r, figure=figure)) for r in dropped) + ".")
    return spec(figure).judge(rows, note)


def summarise(figure: str, rows: list[dict]) -> tuple[str, bool | None]:
    """The summary paragraph of :func:`judge`, and whether its label is ``reproduced``.

    Parameters
    ----------
    figure : str
        The figure, a key of :data:`SPECS`.
    rows : list of Row or dict
        The figure's rows, one per point.

    Returns
    -------
    text : str
        The summary paragraph.
    ok : bool or None
        True for ``reproduced``, False for ``not reproduced``, None for any other label.
    """
    text, verdict = judge(figure, rows)
    return text, verdict.ok
