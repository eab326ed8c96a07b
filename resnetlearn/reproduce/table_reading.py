"""Reading a figure's written tables back: :func:`load_figure` (``FIG.csv``), :func:`load_runs`
(``FIG_runs.csv``), :func:`load_latest` (the largest scale shipped) and :func:`grid_table`.

A table is refused, with a ValueError naming the file and the problem, unless it holds exactly one row
(one grid) for every point its figure defines at the scale its provenance records, every cell parses,
and its bytes are those recorded in ``FIG.sha256`` when it was written
(:func:`resnetlearn.reproduce.store.verify_table`): shipped numbers are the computed ones or none.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from .figure_tables import POINT_COLS, FigureResult
from .figures import SCALES, judge, optional_points, point_label
from .figures import points as figure_points
from .learner import kind_of
from .point import point_id
from .rows import Row, Run, read_csv
from .store import rerun_out, verify_table


def rerun_command(name: str, directory, scale: str | None = None) -> str:
    """The command that (re)writes a figure's tables into ``directory``: its scale (given, else the folder's
    name when that is a scale, as in ``results/quick``), ``--out directory``, and ``--into-shipped`` when
    the folder lies in the shipped, git-tracked ``results/`` (the command line refuses it otherwise)."""
    directory = Path(directory)
    scale = scale or (directory.name if directory.name in SCALES else None)
    return (f"python -m resnetlearn reproduce {name}" + (f" --scale {scale}" if scale else "")
            + f" {rerun_out(directory)}")


def _provenance(name: str, directory: Path) -> dict:
    """The provenance written next to a figure's tables; the loaders need its scale to know the point list."""
    path = directory / f"{name}.provenance.json"
    if not path.exists():
        raise ValueError(f"{path} is missing: without it the tables of {name!r} in {directory} cannot be checked "
                         f"for completeness (rerun: {rerun_command(name, directory)})")
    try:
        prov = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{path} cannot be read as JSON: {e}") from None
    if not isinstance(prov, dict) or prov.get("scale") not in SCALES:
        got = prov.get("scale") if isinstance(prov, dict) else None
        raise ValueError(f"{path} records no valid scale (got {got!r}; allowed: {', '.join(SCALES)})")
    return prov


def _expected_points(name: str, directory: Path, prov: dict) -> list[dict]:
    """The figure's own point list at the scale its provenance records; without those of its optional points
    (:func:`resnetlearn.reproduce.figures.optional_points`) that did not run: all of them where the provenance
    records that many fewer points, else those at a width its settings do not list."""
    expected = figure_points(name, prov["scale"])
    optional = {point_id(p) for p in optional_points(name, prov["scale"])}
    widths = (prov.get("settings") or {}).get("widths")
    if optional and prov.get("points") == len(expected) - len(optional):
        expected = [p for p in expected if point_id(p) not in optional]
    elif optional and widths is not None:
        expected = [p for p in expected if point_id(p) not in optional or p["m"] in widths]
    if prov.get("points") is not None and prov["points"] != len(expected):
        raise ValueError(f"{directory / (name + '.provenance.json')} records {prov['points']} points, but {name} "
                         f"at scale {prov['scale']!r} has {len(expected)} (written by another version of the scales?)")
    return expected


def _match_points(path: Path, rows: list[tuple[int, Row | Run]], *, name: str, scale: str, expected: list[dict],
                  one_row_each: bool) -> dict[tuple, list[Row | Run]]:
    """Rows grouped by the point they belong to; rows of another figure, scale or point, duplicated
    points (``one_row_each``) and missing points raise a ValueError naming the file and the points."""
    by_id = {point_id(p): p for p in expected}
    groups: dict[tuple, list[dict]] = {}
    for line, r in rows:
        if r.figure != name or r.scale != scale:
            raise ValueError(f"{path}, line {line}: a row of {r.figure} at scale {r.scale!r}, "
                             f"expected {name} at scale {scale!r}")
        pid = point_id(r)
        if pid not in by_id:
            raise ValueError(f"{path}, line {line}: {point_label(r)} is not a point of {name} at scale {scale!r}")
        if one_row_each and pid in groups:
            raise ValueError(f"{path}, line {line}: {point_label(r)} appears twice")
        groups.setdefault(pid, []).append(r)
    missing = [p for pid, p in by_id.items() if pid not in groups]
    if missing:
        raise ValueError(f"{path} has {len(expected) - len(missing)} of {len(expected)} points; missing: "
                         + ", ".join(point_label(p) for p in missing))
    return groups


def _open_table(name: str, directory, file: str, what: str):
    """(directory, table path, provenance, expected points) of a figure's table; a ValueError naming the
    command that writes it when the table is missing."""
    directory = Path(directory)
    path = directory / file
    if not path.exists():
        raise ValueError(f"no {what} for {name!r} in {directory} (run: {rerun_command(name, directory)})")
    prov = _provenance(name, directory)
    return directory, path, prov, _expected_points(name, directory, prov)


def load_figure(name: str, directory) -> FigureResult:
    """A figure's shipped (or previously written) results, read from its table ``FIG.csv``.

    The table must hold exactly one row for every point of the figure at the scale its provenance file records, and
    its bytes must be those recorded in ``FIG.sha256`` when it was written
    (:func:`~resnetlearn.reproduce.store.verify_table`). Where the figure's points train a grid over several seeds, the
    runs of ``FIG_runs.csv`` are attached to the rows.

    Parameters
    ----------
    name : str
        The figure.
    directory : path-like
        The folder holding the figure's tables and its provenance file.

    Returns
    -------
    FigureResult
        With the summary and verdict judged on the rows, and the provenance.

    Raises
    ------
    ValueError
        Naming the file and the problem: no table or provenance, an empty or truncated file, a missing or extra row,
        a cell that is not a number, a seed count that differs from the configuration, an edited number, no checksum.
    """
    directory, path, prov, expected = _open_table(name, directory, f"{name}.csv", "results")
    rows = read_csv(path, Row, ("figure", "scale", "model", "mode", "m", "n_train", "beta", "alpha", "d", "wd",
                                  "test_error"))
    for line, r in rows:
        where = f"{path}, line {line}"
        if r.test_error is None:
            raise ValueError(f"{where}: no test_error")
        if r.seed_errors is not None and len(r.seed_errors) != r.n_seeds:
            raise ValueError(f"{where}: {len(r.seed_errors)} seed errors but n_seeds = {r.n_seeds}")
        r.panel = r.panel or None
    groups = _match_points(path, rows, name=name, scale=prov["scale"], expected=expected, one_row_each=True)
    for p in expected:
        r = groups[point_id(p)][0]
        want = (len(p["grid_seeds"]) if p.get("grid_seeds") else 1 + len(p.get("rerun_seeds") or [])) \
            if kind_of(p).grid_searched else None
        if want is not None and r.n_seeds is not None and r.n_seeds not in (0, want):
            raise ValueError(f"{path}: {point_label(p)} has {r.n_seeds} seeds, its configuration has {want}")
    verify_table(path, prov["scale"])  # last, so that a damaged table is named for what is wrong with it
    table = [r for _, r in rows]
    if any(p.get("grid_seeds") for p in expected):  # the robust rule reads every seed of every cell: attach the runs
        runs: dict[tuple, list[Run]] = {}
        for run in load_runs(name, directory):
            runs.setdefault(point_id(run), []).append(run)
        for r in table:
            r.runs = runs.get(point_id(r), [])
    summary, verdict = judge(name, table)
    return FigureResult(name, table, summary=summary, reproduced=verdict.ok,
                        wall_time=prov.get("wall_time_s", math.nan), provenance=prov, verdict=verdict)


def load_latest(name: str, root, scales=("paper", "cpu", "quick")) -> FigureResult:
    """The figure from the largest scale under ``root`` whose tables are complete for this version of the figures.

    Parameters
    ----------
    name : str
        The figure.
    root : path-like
        A folder with one subfolder per scale (``root/<scale>/``).
    scales : sequence of str, default ("paper", "cpu", "quick")
        The scales tried, in order.

    Returns
    -------
    FigureResult
        Its ``provenance`` gains ``directory`` and ``skipped``, the reasons the larger scales did not load.

    Raises
    ------
    ValueError
        Naming every folder tried, when none loads.
    """
    root, why = Path(root), []
    for scale in scales:
        if not (root / scale / f"{name}.csv").exists():
            continue
        try:
            res = load_figure(name, root / scale)
        except ValueError as e:
            why.append(f"{scale}: {e}")
            continue
        res.provenance = dict(res.provenance or {}, directory=str(root / scale), skipped=why)
        return res
    raise ValueError(f"no loadable results for {name!r} under {root} (tried {', '.join(scales)})"
                     + ("; " + "; ".join(why) if why else ""))


def load_runs(name: str, directory) -> list[Run]:
    """Every run of a figure's grids, read from ``FIG_runs.csv``, numbers parsed.

    Checked like :func:`load_figure`: every point of the figure is present, a network point with its whole lr × wd
    grid, a construction with one run, a kernel point with at least one candidate, reruns as many as the point's
    seeds, no point with more than one selected run, and the file's checksum the one recorded when it was written.

    Parameters
    ----------
    name : str
        The figure.
    directory : path-like
        The folder holding the figure's tables and its provenance file.

    Returns
    -------
    list of Run

    Raises
    ------
    ValueError
        Naming the file and the problem.
    """
    directory, path, prov, expected = _open_table(name, directory, f"{name}_runs.csv", "per-run table")
    rows = read_csv(path, Run, tuple(c for c in POINT_COLS if c not in ("init", "panel")) + ("wd", "selected"))
    for _, r in rows:
        r.role = r.role or "grid"
        r.panel = r.panel or None
    groups = _match_points(path, rows, name=name, scale=prov["scale"], expected=expected, one_row_each=False)
    for p in expected:
        runs = groups[point_id(p)]
        kind = kind_of(p)  # a grid search has its whole grid, a construction one run, a kernel at least one
        want = len(p["lrs"]) * len(p["wds"]) * len(p.get("grid_seeds") or [0]) if kind.grid_searched \
            else 1 if kind.constructed else None
        n_grid = sum(r.role != "rerun" for r in runs)
        if want is not None and n_grid != want:
            raise ValueError(f"{path}: {point_label(p)} has {n_grid} runs, its grid has {want}")
        n_rerun, seeds = len(runs) - n_grid, len(p.get("rerun_seeds") or [])
        if n_rerun not in (0, seeds) or (n_rerun == 0 and seeds and any(r.selected for r in runs)):
            raise ValueError(f"{path}: {point_label(p)} has {n_rerun} seed reruns of its selected cell, "
                             f"expected {seeds}")
        if sum(r.selected for r in runs) > 1:
            raise ValueError(f"{path}: {point_label(p)} has {sum(r.selected for r in runs)} selected runs")
    verify_table(path, prov["scale"])
    return [r for _, r in rows]


def grid_table(runs: list[Run], **point) -> str:
    """The lr × wd grid of one point as text.

    Each cell is the test error (``*`` marks the selected run, ``div`` a diverged one); a last line gives the errors
    of the selected cell's reruns with fresh seeds, if any.

    Parameters
    ----------
    runs : list of Run or dict
        Runs of one or more points, e.g. from :func:`load_runs`.
    **point
        Column values that pick the point's runs, e.g. ``model="3resnet", mode="all", m=200``.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If no run matches ``point``.
    """
    runs = [Run.of(r) for r in runs]
    matching = [r for r in runs if all(r.get(k) == v for k, v in point.items())]
    if not matching:
        raise ValueError(f"no runs match {point}")
    sel = [r for r in matching if r.role != "rerun"]
    reruns = [r for r in matching if r.role == "rerun"]
    lrs, wds = sorted({r.lr for r in sel}), sorted({r.wd for r in sel})
    cell = {(r.lr, r.wd): r for r in sel}
    lines = ["lr \\ wd".rjust(8) + "".join(f"{wd:>10g}" for wd in wds)]
    for lr in lrs:
        row = f"{lr:>8g}"
        for wd in wds:
            r = cell.get((lr, wd))
            mark = "*" if r is not None and r.selected else ""
            txt = "" if r is None else "div" if r.diverged else f"{r.test_error:.3f}{mark}"
            row += f"{txt:>10}"
        lines.append(row)
    if reruns:
        errs = ", ".join("div" if r.diverged else f"{r.test_error:.3f}" for r in reruns)
        lines.append(f"selected cell (*) retrained with seeds {', '.join(str(r.seed) for r in reruns)}: {errs}")
    return "\n".join(lines)
