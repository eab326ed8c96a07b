"""A figure's result as tables and a picture: the tidy table ``FIG.csv``, every run ``FIG_runs.csv``,
the provenance, the static plot (``FIG.png``: the notebooks' picture,
:func:`resnetlearn.classroom.figures_plotly.result_png`, which the caller passes in), and the text tables the
notebooks print.

Every table and plot reads the figure's specification (:mod:`resnetlearn.reproduce.figures`): its curves
(:attr:`~resnetlearn.reproduce.figures.FigureSpec.label` against ``xkey``), its reference lines and its plot kind,
never the figure's name. Written files go through :func:`resnetlearn.reproduce.store.atomic_write`, and the
tables' sha256 into ``FIG.sha256`` (:func:`resnetlearn.reproduce.store.write_checksums`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..device import describe_device
from ..learners.search import default_val_size
from ..validation import is_finite
from ..version import __version__
from .figures import SCALE_NOTES
from .figures import spec as figure_spec
from .learner import from_row, kind_of
from .point import point_id
from .points import RUN_KEYS
from .rows import Row, Run, below, csv_text, fresh_errors, median_error, plotted_error, seed_errors
from .store import atomic_write, write_checksums
from .verdict_parts import span


@dataclass
class FigureResult:
    """The rows (one per point), the summary line and the verdict of one experiment.

    Parameters
    ----------
    name : str
        The figure (``"fig2a"``, ...).
    rows : list of Row or mapping
        One per point; each is read as a :class:`~resnetlearn.reproduce.rows.Row`.
    summary : str
        The summary line.
    reproduced : bool or None
        The overall verdict; None where not judged.
    wall_time : float
        Seconds the run took.
    skipped : int, default 0
        Points reused from the store rather than run.
    figure : object, default None
        The figure object, where one was drawn.
    provenance : dict or None, default None
        The provenance file's contents, set when a shipped figure is loaded.
    verdict : Verdict or None, default None
        The judged parts and their label (:class:`resnetlearn.reproduce.figures.Verdict`), set by
        :func:`~resnetlearn.reproduce.running.run_figure` and :func:`~resnetlearn.reproduce.table_reading.load_figure`.
    """

    name: str
    rows: list[Row]
    summary: str
    reproduced: bool | None
    wall_time: float
    skipped: int = 0
    figure: object = field(default=None, repr=False)
    provenance: dict | None = field(default=None, repr=False)  # set by load_figure when shipped
    verdict: object = field(default=None, repr=False)
    """The judged parts and their label (:class:`resnetlearn.reproduce.figures.Verdict`), set by
    :func:`resnetlearn.reproduce.running.run_figure` and :func:`resnetlearn.reproduce.table_reading.load_figure`."""

    def __post_init__(self):
        self.rows = [Row.of(r) for r in self.rows]

    @property
    def label(self) -> str:
        """The figure's label derived from its parts (``reproduced``, ``partly reproduced: …``, ``illustrated`` …);
        for a result built without a verdict, the word of ``reproduced``."""
        return self.verdict.label if self.verdict is not None else VERDICT_WORDS[self.reproduced]

    @property
    def parts(self) -> tuple:
        """The judged parts of the figure's claim (:class:`resnetlearn.reproduce.verdict_parts.Part`)."""
        return self.verdict.parts if self.verdict is not None else ()


def _curves(result: FigureResult) -> tuple[str, dict[str, list[tuple]]]:
    """The x key (width m, or N) and one sorted (x, plotted error) curve per learner."""
    spec = figure_spec(result.name)
    groups: dict[str, list[tuple]] = {}
    for r in result.rows:
        groups.setdefault(spec.label(r), []).append((getattr(r, spec.xkey), plotted_error(r)))
    return spec.xkey, {k: sorted(v) for k, v in groups.items()}


def error_table(result: FigureResult, digits: int = 3) -> str:
    """The test errors of a figure as text, rounded so that notebooks can check them.

    One line per learner, one column per width m (or N), each the plotted error
    (:func:`~resnetlearn.reproduce.rows.plotted_error`); a figure plotted as norm against error (Figure 4) gets one
    line per point with its test error and ‖W‖_F.

    Parameters
    ----------
    result : FigureResult
        The figure's rows.
    digits : int, default 3
        Decimal places.

    Returns
    -------
    str
    """
    if figure_spec(result.name).plot == "norm_vs_error":  # no curves: one line per point
        num = lambda v, f: format(v, f) if is_finite(v) else "-"  # noqa: E731  (a diverged point has none)
        lines = [f"{r.model:13s} m={r.m:<5d} wd={num(r.wd, '<7g')} "
                 f"test {num(r.test_error, f'.{digits}f')}  ‖W‖_F {num(r.frobenius_W, '.1f')}"
                 for r in result.rows]
        return "\n".join(lines)
    xkey, groups = _curves(result)
    xs = sorted({x for pts in groups.values() for x, _ in pts})
    head = f"{'':22s}" + "".join(f"{('N=' if xkey == 'n_train' else 'm=') + str(x):>10s}" for x in xs)
    lines = [head]
    for label, pts in groups.items():
        at = dict(pts)
        lines.append(f"{label:22s}" + "".join(f"{at[x]:10.{digits}f}" if x in at else f"{'':10s}" for x in xs))
    return "\n".join(lines)


def _table(result: FigureResult, cell, width: int = 12, rows=None) -> str:
    """One line per curve, one column per width m (or N): ``cell(row)`` formats each point."""
    spec = figure_spec(result.name)
    rows = result.rows if rows is None else rows
    xs = sorted({getattr(r, spec.xkey) for r in rows})
    groups: dict[str, dict] = {}
    for r in rows:
        groups.setdefault(spec.label(r), {})[getattr(r, spec.xkey)] = r
    w = max([22, *(len(label) + 1 for label in groups)])  # the label column fits the longest label
    head = " " * w + "".join(f"{('N=' if spec.xkey == 'n_train' else 'm=') + str(x):>{width}s}" for x in xs)
    return "\n".join([head] + [f"{label:{w}s}" + "".join(f"{cell(at[x]) if x in at else '':>{width}s}" for x in xs)
                                for label, at in groups.items()])


def seed_table(result: FigureResult) -> str:
    """How many fresh initialisation seeds of each SGD-trained point's selected cell are below the first reference line.

    The line is kα² for Figures 2 and 3, α²/4 for the hard instance; a cell reads e.g. ``7/9``, with the fresh seeds
    that diverged counted apart (``(1 div)``).

    Parameters
    ----------
    result : FigureResult
        The figure's rows.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If the figure has no reference line.
    """
    lines = figure_spec(result.name).lines()
    if not lines:
        raise ValueError(f"{result.name} has no threshold to count seeds against")
    thr = lines[0][0]
    nets = [r for r in result.rows if kind_of(r).trained_by_sgd]  # a kernel has no seeds
    def cell(r):  # a diverged seed is counted apart from one that trained and ended above
        n_below, n = below(r, thr)
        div = sum(1 for e in fresh_errors(r) if not is_finite(e))
        return f"{n_below}/{n}" + (f" ({div} div)" if div else "")

    return (f"seeds below {lines[0][1]} = {thr:.4g} (div: fresh seeds that diverged)\n"
            + _table(result, cell, rows=nets))


def _sgd_kernel_method(r: Row) -> bool:
    """Whether a row is a network trained by SGD as a kernel method ((last)/(ntk)), with the exact kernel solution
    beside it: its learner record answers (:attr:`~resnetlearn.learners.training.Learner.kernel_method`)."""
    return from_row(r).kernel_method


def kernel_table(result: FigureResult, digits: int = 3) -> str:
    """For every (last)/(ntk) point: the SGD-trained linear model's median test error next to the exact kernel solution.

    The exact solution is kernel ridge regression with the same initial network; cells read ``SGD / exact``
    (``div`` where diverged).

    Parameters
    ----------
    result : FigureResult
        The figure's rows.
    digits : int, default 3
        Decimal places.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If the figure has no (last)/(ntk) points.
    """
    rows = [r for r in result.rows if _sgd_kernel_method(r)]
    if not rows:
        raise ValueError(f"{result.name} has no (last)/(ntk) points")
    fmt = lambda v: f"{v:.{digits}f}" if is_finite(v) else "div"  # noqa: E731
    return "SGD (median over seeds) / exact kernel ridge regression\n" + _table(
        result, lambda r: f"{fmt(median_error(r))} / {fmt(r.exact_test_error)}", width=18, rows=rows)


def selection_table(by_test: FigureResult, by_val: FigureResult, digits: int = 3) -> str:
    """The paper's protocol next to an honest one, point by point.

    Each cell reads: the median test error over fresh seeds of the cell selected by test error (as §8.1 selects)
    ``/`` that of the cell selected on validation samples (``--select val``: drawn fresh, the network trained on the
    same N samples, :func:`resnetlearn.learners.search.validation_split`), for every grid-searched point found in
    both results.

    Parameters
    ----------
    by_test : FigureResult
        The figure selected by test error.
    by_val : FigureResult
        The same figure at the same scale, selected on validation samples.
    digits : int, default 3
        Decimal places.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If the results are different figures or scales, are not selected by test and validation error
        respectively, or share no network point.
    """
    pair = (by_test, by_val)
    if by_test.name != by_val.name:
        raise ValueError(f"by_test and by_val must be the same figure, got {by_test.name!r} and {by_val.name!r}")
    selects = [{r.select for r in res.rows} for res in pair]
    if selects != [{"test"}, {"val"}]:
        raise ValueError(f"by_test must be selected by test error and by_val on a validation split; "
                         f"got selections {sorted(selects[0])} and {sorted(selects[1])}")
    scales = [{r.scale for r in res.rows} for res in pair]
    if scales[0] != scales[1]:
        raise ValueError(f"by_test and by_val must be the same scale, got {sorted(scales[0])} and {sorted(scales[1])}")
    val_rows = {point_id(r): r for r in by_val.rows}
    nets = [r for r in by_test.rows if kind_of(r).grid_searched and point_id(r) in val_rows]
    if not nets:
        raise ValueError(f"{by_test.name}: no network point appears in both results")
    fmt = lambda v: f"{v:.{digits}f}" if is_finite(v) else "div"  # noqa: E731
    return ("median test error over fresh seeds: cell selected by test error / on validation samples\n"
            + _table(by_test, lambda r: f"{fmt(median_error(r))} / {fmt(median_error(val_rows[point_id(r)]))}",
                     width=18, rows=nets))


def table_text(result: FigureResult) -> str:
    """The tidy table ``FIG.csv`` of a figure, exactly as :func:`write_outputs` writes it.

    Parameters
    ----------
    result : FigureResult
        The figure's rows.

    Returns
    -------
    str
    """
    return csv_text([_table_row(r) for r in result.rows], TABLE_COLS)


def runs_text(result: FigureResult) -> str:
    """The per-run table ``FIG_runs.csv`` of a figure, exactly as :func:`write_outputs` writes it.

    Parameters
    ----------
    result : FigureResult
        The figure's rows.

    Returns
    -------
    str
    """
    return csv_text([run for r in result.rows for run in runs_of(r)], RUN_POINT_COLS + list(RUN_KEYS))


def runs_of(row: Row) -> list[Run]:
    """The runs of a point's search, each with the point's columns (:data:`POINT_COLS`) and how it selected
    (:func:`selection_of`): the lines of ``FIG_runs.csv``."""
    point = {k: getattr(row, k) for k in POINT_COLS} | selection_of(row)
    return [Run.of({**point, **run}) for run in row.runs or []]


def selection_of(row: Row) -> dict:
    """How a point chose its cell beyond ``select``: for one selected on validation samples, their rule
    (``validation``, "fresh": drawn anew, the same N training samples) and their number ``n_val``
    (:func:`resnetlearn.learners.search.default_val_size` unless the point sets one); empty for test selection."""
    row = Row.of(row)
    if row.select != "val":
        return {"validation": None, "n_val": None}
    rule = row.validation or "fresh"
    n_val = row.n_val or (default_val_size(row.n_train) if rule == "fresh" else None)
    return {"validation": rule, "n_val": n_val}


def write_outputs(result: FigureResult, out, *, picture: Callable[[FigureResult], bytes]) -> dict[str, Path]:
    """Write a figure's tables, plot, summary and checksums, each atomically.

    The files are the tidy table ``FIG.csv``, every run of every grid ``FIG_runs.csv``, the plot ``FIG.png``, the
    summary ``FIG.txt`` and the tables' checksums ``FIG.sha256``; each goes through
    :func:`~resnetlearn.reproduce.store.atomic_write`, so a Ctrl-C leaves the previous file or the new one.

    Parameters
    ----------
    result : FigureResult
        The figure.
    out : path-like
        The folder, created if missing.
    picture : callable
        Draws the plot as PNG bytes from ``result`` (keyword-only). The caller passes the classroom's one renderer
        (:func:`resnetlearn.classroom.figures_plotly.result_png`, the notebooks' picture), which sits above this
        module in the import order.

    Returns
    -------
    dict of str to Path
        The paths under the keys ``"table"``, ``"runs"``, ``"plot"``, ``"summary"``, ``"checksums"``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"table": out / f"{result.name}.csv", "runs": out / f"{result.name}_runs.csv",
             "plot": out / f"{result.name}.png", "summary": out / f"{result.name}.txt"}
    tables = {paths["table"].name: table_text(result).encode(), paths["runs"].name: runs_text(result).encode()}
    atomic_write(paths["table"], tables[paths["table"].name])
    atomic_write(paths["runs"], tables[paths["runs"].name])
    paths["checksums"] = write_checksums(result.name, out, tables)
    atomic_write(paths["plot"], picture(result))
    atomic_write(paths["summary"], result.summary + "\n")
    return paths


POINT_COLS = ["figure", "scale", "model", "mode", "m", "n_train", "beta", "alpha", "epochs", "select", "d", "init",
              "panel"]
"""The columns that name a point, first in both tables (``FIG.csv`` and ``FIG_runs.csv``) and read back by
:mod:`resnetlearn.reproduce.table_reading`."""
RUN_POINT_COLS = POINT_COLS + ["validation", "n_val"]
"""The point's columns of ``FIG_runs.csv``: :data:`POINT_COLS` and how it selected (:func:`selection_of`)."""
TABLE_COLS = POINT_COLS + [
    "test_error", "median", "seed_min", "seed_max", "n_seeds", "seed_errors", "exact_test_error", "exact_ridge_rel",
    "exact_ridge_at_grid_edge", "plotted", "train_error", "frobenius_W", "lr", "wd", "lr_at_grid_edge",
    "wd_at_grid_edge", "ridge_rel", "setting", "ridge_at_grid_edge", "param_at_grid_edge", "grid_edges", "diverged",
    "grid_size",
    "seconds", "device", "grid"]
"""Columns of ``FIG.csv``: the point, its selected (seed-0) test error, the spread over seeds, the exact kernel
solution of a (last)/(ntk) point, the number the plot draws, the selection and grid-edge flags."""


def _table_row(r: Row) -> Row:
    """A point's line of ``FIG.csv``: the row with the columns the table derives (median and spread over the
    seeds, how many seeds, the plotted number)."""
    errs = [e for e in seed_errors(r) if is_finite(e)]
    return r.replace(median=median_error(r), seed_min=min(errs) if errs else None,
                     seed_max=max(errs) if errs else None,
                     n_seeds=len(r.seed_errors) if r.seed_errors is not None else 1, plotted=plotted_error(r))
"""The configuration columns repeated on every row of ``FIG_runs.csv``."""


def ran_settings(runs: list[Run]) -> dict:
    """What the networks of a figure ran, read from its runs (the rows of ``FIG_runs.csv``): their widths, N,
    epochs, the lr and wd values of their grids, the seeds every grid cell trained and the seeds its selected cell
    was retrained with; a validation-selected figure adds its ``validation`` rule."""
    runs = [Run.of(r) for r in runs]
    nets = [r for r in runs if r.lr is not None and kind_of(r).grid_searched]
    grid = [r for r in nets if (r.role or "grid") == "grid"]
    rerun = [r for r in nets if r.role == "rerun"]

    def values(rows, key):
        return sorted({getattr(r, key) for r in rows if getattr(r, key) is not None})
    out = dict(widths=values(nets, "m"), n_train=values(nets, "n_train"), epochs=values(nets, "epochs"),
               lrs=values(grid, "lr"), wds=values(grid, "wd"), grid_seeds=values(grid, "seed"),
               rerun_seeds=values(rerun, "seed"))
    if {r.select for r in nets} == {"val"}:
        out["validation"] = "fresh validation samples, the same N training samples"
    return out


def write_provenance(result: FigureResult, out, scale: str, command: str) -> Path:
    """Write where a figure's numbers came from: ``FIG.provenance.json``.

    It records the scale and its note, the settings the networks ran (widths, N, epochs, grids, seeds), the command,
    the versions of resnetlearn, torch and Python, the machine, devices and torch threads, the date, the wall and
    compute time, the points and how many were reused, and the summary.

    Parameters
    ----------
    result : FigureResult
        The figure.
    out : path-like
        The folder.
    scale : str
        The scale the figure ran at, a key of :data:`~resnetlearn.reproduce.figures.SCALE_NOTES`.
    command : str
        The command that produced it.

    Returns
    -------
    Path
        The file written.
    """
    import platform

    import torch as _torch

    devices = sorted({r.get("device", "") for r in result.rows})
    runs = [Run.of({**{k: getattr(r, k) for k in POINT_COLS}, **run}) for r in result.rows for run in r.runs or []]
    info = dict(figure=result.name, scale=scale, scale_note=SCALE_NOTES[scale], settings=ran_settings(runs),
                command=command,
                resnetlearn=__version__, torch=_torch.__version__, python=platform.python_version(),
                machine=platform.machine(), device=devices or [describe_device()],
                torch_threads=_torch.get_num_threads(),  # float32 sums depend on it: rerun with the same setting
                date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                wall_time_s=round(result.wall_time, 1),
                compute_s=round(sum(r.seconds or 0.0 for r in result.rows), 1),  # incl. points reused
                points=len(result.rows),
                reused_from_store=result.skipped, summary=result.summary)
    return atomic_write(Path(out) / f"{result.name}.provenance.json", json.dumps(info, indent=1, default=str))


# ----------------------------------------------------------------- verdicts, generated from the parts
VERDICT_WORDS = {True: "reproduced", False: "not reproduced", None: "not judged"}
"""The label of a result built without judged parts (True / False / None)."""
NOT_RUN = "not run (GPU scale)"
"""The verdict of a figure with no shipped results (Figure 4(b): d = 100, N = 50000 needs a GPU)."""


def verdict_facts(result: FigureResult) -> dict:
    """What a figure's verdict rests on, read from its shipped rows: the label derived from its parts, scale,
    selection rule, N (per training mode where they differ), widths of the trained networks, fresh seeds, device."""
    rows = result.rows
    nets = [r for r in rows if kind_of(r).grid_searched]
    sel = {r.select for r in rows}
    rule = "test-selected" if sel == {"test"} else "validation-selected (fresh samples, same N)" \
        if sel == {"val"} else "/".join(sorted(map(str, sel)))
    if note := figure_spec(result.name).rule_note:  # a second rule the figure reports beside this one
        rule += f"; {note}"
    by_mode: dict[str, set] = {}
    for r in nets or rows:
        by_mode.setdefault(r.mode or "-", set()).add(r.n_train)
    if len({frozenset(v) for v in by_mode.values()}) <= 1:
        n_text = span(next(iter(by_mode.values())))
    else:
        n_text = "; ".join(f"{mode}: {span(ns)}" for mode, ns in by_mode.items())
    seeds = sorted({len(r.seed_errors or []) - 1 for r in nets if r.seed_errors})
    prov = result.provenance or {}
    return dict(figure=result.name, verdict=result.label, scale=prov.get("scale", "?"),
                rule=rule, n=n_text, widths=span(r.m for r in nets),
                seeds=f"{seeds[-1]} fresh" if seeds and seeds[-1] > 0 else "-",
                device=", ".join(prov.get("device") or []) or "-")


def verdict_sentence(facts: dict) -> str:
    """One verdict line, e.g. ``fig2a: reproduced at cpu scale (m = 20-500, N = 500, test-selected, 8 fresh
    seeds)``."""
    if facts["verdict"] == NOT_RUN:
        return f"{facts['figure']}: {NOT_RUN}"
    widths = facts["widths"]
    m = f"m = {widths}" if widths != "-" else "no trained width"
    return (f"{facts['figure']}: {facts['verdict']} at {facts['scale']} scale ({m}, N = {facts['n']}, "
            f"{facts['rule']}, {facts['seeds']} seeds)")


def verdict_table(results: dict[str, FigureResult | None], markdown: bool = True) -> str:
    """The per-figure verdict table (notebook 05's opening table, the README's per-figure table), generated
    from the shipped tables: one row per figure, its label derived from its parts
    (:func:`resnetlearn.reproduce.verdict_parts.derive_label`), ``None`` for a figure with no shipped results
    (:data:`NOT_RUN`)."""
    cols = ("figure", "verdict", "scale", "rule", "n", "widths", "seeds", "device")
    heads = ("figure", "verdict", "scale", "selection rule", "N", "widths m", "seeds", "computed on")
    facts = [verdict_facts(res) if res is not None else dict(dict.fromkeys(cols, "-"), figure=name, verdict=NOT_RUN)
             for name, res in results.items()]
    if markdown:
        lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
        lines += ["| " + " | ".join(f"`{f[c]}`" if c == "figure" else str(f[c]) for c in cols) + " |"
                  for f in facts]
        return "\n".join(lines)
    return "\n".join(verdict_sentence(f) for f in facts)


def parts_table(results: dict[str, FigureResult | None], markdown: bool = True) -> str:
    """Every judged part of every figure (:class:`resnetlearn.reproduce.verdict_parts.Part`): the statement, its
    status, the scale, N, widths and seeds it was measured at, and the threshold; a part reported beside the
    verdict (measured at an N not fixed before the runs) is marked. ``None``: a figure not run."""
    heads = ("figure", "part", "status", "scale", "N", "widths m", "seeds", "threshold")
    rows = []
    for name, res in results.items():
        if res is None:
            rows.append((name, "-", NOT_RUN, "-", "-", "-", "-", "-"))
            continue
        for p in res.parts:
            status = p.status + ("" if p.in_verdict else " (reported beside)")
            rows.append((name, p.name, status, p.scale, p.n, p.widths, p.seeds, p.threshold))
    if markdown:
        lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
        lines += ["| " + " | ".join(f"`{c}`" if i == 0 else str(c) for i, c in enumerate(r)) + " |" for r in rows]
        return "\n".join(lines)
    return "\n".join(f"{r[0]}: {r[1]}: {r[2]} ({r[3]} scale, N = {r[4]}, m = {r[5]})" for r in rows)
