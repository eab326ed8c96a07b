"""One result row of a figure table, read: its seeds' errors, how many are below a threshold, the number a
figure draws, and the rules a verdict counts by.

A *row* is one point of a figure after it ran (:mod:`resnetlearn.reproduce.points`, stored by
:mod:`resnetlearn.reproduce.store`): a learner at one width or N with the selected lr/wd cell's test error, the
errors of that cell retrained with fresh initialisation seeds (``seed_errors``, seed 0 first), and for a
(last)/(ntk) point its exact kernel solution (``exact_test_error``). Every verdict of
:mod:`resnetlearn.reproduce.figures` reads its rows through these functions: Figures 2(a) and 2(b) (arXiv v3
§8.1: a strict majority of fresh seeds below kα²), Figure 3 (§8.1, Experiment 2), Figure 4 (§8.2, the fresh
seeds of SGD's selected cells), the §7 hard instance (NeurIPS §7 Theorem 2; the test-best and the robust rule
side by side) and the companion paper's Figure 1; so do the tables (:mod:`resnetlearn.reproduce.figure_tables`)
and the plots.

The rows are records: :class:`Row` (a point: its configuration, its stored result, the columns ``FIG.csv``
derives) and :class:`Run` (one run of a point's search, a line of ``FIG_runs.csv``). Both tables are written by
one writer (:func:`csv_text`) and read back by one reader (:func:`read_csv`), each column parsed as its
record declares.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import io
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..learners.selection import robust_cell
from ..validation import is_finite


# ----------------------------------------------------------------- the records
@dataclass(eq=False)
class _Record(Mapping):
    """A table row as a record: its columns are attributes (``row.test_error``; None where the row has none).

    A record also reads as the mapping of the columns it was given (``row.get("init")``, ``dict(row)``,
    ``"runs" in row``), so the point helpers of :mod:`resnetlearn.reproduce.learner` and
    :func:`resnetlearn.reproduce.point.point_id`, which read a point's fields by name, take it unchanged; a column
    the record was not given reads as absent there (``row.get("init", "paper")`` is ``"paper"``), exactly as the
    dict it was built from. Columns no field declares are kept in :attr:`extra`."""

    extra: dict = field(default_factory=dict, repr=False, kw_only=True)
    """Columns this record does not declare, kept as given."""

    CSV_INTS: ClassVar[tuple[str, ...]] = ()
    CSV_FLOATS: ClassVar[tuple[str, ...]] = ()
    CSV_BOOLS: ClassVar[tuple[str, ...]] = ()
    CSV_JSON: ClassVar[tuple[str, ...]] = ()
    """How :func:`read_csv` parses a column (and :func:`csv_text` writes a JSON one); the others stay text."""

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name in self.columns():
            self.__dict__.setdefault("_given", set()).add(name)

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        """The declared columns, in order."""
        return _columns(cls)

    @classmethod
    def of(cls, fields: Mapping):
        """The record of a mapping (a stored point's configuration and result, a parsed table line); a record
        of this type is returned as it is."""
        if isinstance(fields, cls):
            return fields
        names = set(cls.columns())
        known = {k: v for k, v in fields.items() if k in names}
        out = cls(**known, extra={k: v for k, v in fields.items() if k not in names})
        out.__dict__["_given"] = set(known)
        return out

    def replace(self, **changes):
        """This record with columns changed (a column it was not given is given by changing it)."""
        out = self.of({**self, **changes})
        return out

    def __getitem__(self, key: str):
        if key in self.__dict__.get("_given", ()):
            return getattr(self, key)
        return self.extra[key]

    def __iter__(self):
        given = self.__dict__.get("_given", set())
        yield from (c for c in self.columns() if c in given)
        yield from self.extra

    def __len__(self) -> int:
        return len(self.__dict__.get("_given", ())) + len(self.extra)

    def __eq__(self, other):
        return isinstance(other, Mapping) and dict(self) == dict(other)

    __hash__ = None

    def __repr__(self) -> str:
        cells = ", ".join(f"{k}={v!r}" for k, v in self.items())
        return f"{type(self).__name__}({cells})"


@dataclass(eq=False)
class _PointColumns(_Record):
    """The columns of a point's configuration that both a figure's rows and its runs carry, in table order."""

    figure: str | None = None
    scale: str | None = None
    model: str | None = None
    mode: str | None = None
    m: int | None = None
    n_train: int | None = None
    beta: float | None = None
    alpha: float | None = None
    epochs: int | None = None
    select: str | None = None
    d: int | None = None
    init: str | None = None
    panel: str | None = None
    validation: str | None = None
    n_val: int | None = None


@dataclass(eq=False)
class Row(_PointColumns):
    """One point of a figure after it ran, as a record.

    It holds the point's configuration (:meth:`resnetlearn.reproduce.point.Point.config`), the result its learner's
    search stored (:func:`resnetlearn.reproduce.points.run_point`) and, read back from ``FIG.csv``, the columns the
    table derives (``median``, ``seed_min``, ``seed_max``, ``n_seeds``, ``plotted``). Columns are attributes (None
    where the row has none); the record also reads as the mapping of the columns it was given (``row.get("init")``,
    ``dict(row)``). Every field defaults to None.

    Parameters
    ----------
    figure, scale : str or None
        The figure (``"fig2a"``, ...) and the scale (``"tiny"``, ``"quick"``, ``"cpu"``, ``"paper"``).
    model, mode : str or None
        The learner (``"3resnet"``, ``"3layer"``, ``"2layer"``, a kernel's name, ...) and its training mode
        (``"all"``, ``"hidden"``, ``"last"``, ``"ntk"``, ...). ``model`` is kept because it is part of the store key.
    m, n_train, d, n_val : int or None
        Width, number of training samples, input dimension, number of samples held out for validation.
    beta, alpha : float or None
        β and α of the target (eq 2.2; arXiv v3 §8.1, Figure 3).
    epochs : int or None
        Passes over the training samples.
    select, validation : str or None
        Which error selects the lr/wd cell (``"test"`` or ``"val"``) and, for ``"val"``, where the validation
        samples come from (``"fresh"``, or ``"holdout"`` when absent).
    init, panel : str or None
        The initialisation (absent: §8.1's ``"paper"``) and the figure panel, where a figure has several.
    k, n_test : int or None
        The target's output dimension and the number of test samples.
    target : str or None
        The target's name.
    lrs, wds : list or None
        The learning rates and weight decays searched.
    rerun_seeds, grid_seeds : list or None
        The initialisation seeds of the reruns of the selected cell and of the grid.
    batch_size : int or None
        The SGD mini-batch size.
    test_error, train_error : float or None
        The selected cell's test and training errors (seed 0).
    median, seed_min, seed_max : float or None
        Median, lowest and highest test error over the fresh seeds (derived by the table).
    n_seeds : int or None
        The number of seeds behind them.
    seed_errors : list or None
        Test errors of the selected cell over every initialisation seed, seed 0 first (NaN: diverged).
    exact_test_error, exact_train_error : float or None
        Errors of the exact kernel solution of a (last)/(ntk) point.
    exact_ridge_rel : float or None
        The relative ridge the exact solution selected.
    exact_ridge_at_grid_edge : bool or None
        Whether that ridge lies on the edge of its grid.
    plotted : float or None
        The number the figure draws (see :func:`plotted_error`).
    frobenius_W : float or None
        ‖W‖_F of the trained network (§8.2, Figure 4).
    lr, wd : float or None
        The selected learning rate and weight decay.
    lr_at_grid_edge, wd_at_grid_edge, ridge_at_grid_edge, param_at_grid_edge : bool or None
        Whether the selected lr, wd, ridge or kernel parameter lies on the edge of its grid.
    ridge_rel : float or None
        The selected relative ridge of a kernel point.
    setting : str or None
        The selected kernel setting.
    grid_edges : object
        The grid-edge details, a JSON column.
    diverged : int or None
        The number of grid runs that diverged.
    grid_size : int or None
        The number of cells searched.
    seconds : float or None
        Wall-clock time of the point.
    device : object
        The device it ran on.
    grid : list or None
        [train error, test error, ‖W‖_F] of every grid run that did not diverge, for a figure that keeps its grid
        (§8.2); a JSON column.
    runs : list or None
        The point's runs (:class:`Run` fields), when stored with it.
    extra : dict, optional
        Columns no field declares, kept as given (keyword-only).
    """

    k: int | None = None
    n_test: int | None = None
    target: str | None = None
    lrs: list | None = None
    wds: list | None = None
    rerun_seeds: list | None = None
    grid_seeds: list | None = None
    batch_size: int | None = None
    test_error: float | None = None
    median: float | None = None
    seed_min: float | None = None
    seed_max: float | None = None
    n_seeds: int | None = None
    seed_errors: list | None = None
    exact_test_error: float | None = None
    exact_train_error: float | None = None
    exact_ridge_rel: float | None = None
    exact_ridge_at_grid_edge: bool | None = None
    plotted: float | None = None
    train_error: float | None = None
    frobenius_W: float | None = None
    lr: float | None = None
    wd: float | None = None
    lr_at_grid_edge: bool | None = None
    wd_at_grid_edge: bool | None = None
    ridge_rel: float | None = None
    setting: str | None = None
    ridge_at_grid_edge: bool | None = None
    param_at_grid_edge: bool | None = None
    grid_edges: Any = None
    diverged: int | None = None
    grid_size: int | None = None
    seconds: float | None = None
    device: Any = None
    grid: list | None = None
    runs: list | None = None

    CSV_INTS = ("m", "n_train", "epochs", "diverged", "grid_size", "d", "n_seeds")
    CSV_FLOATS = ("test_error", "train_error", "frobenius_W", "lr", "wd", "beta", "alpha", "seconds", "median",
                  "seed_min", "seed_max", "exact_test_error", "exact_ridge_rel", "plotted", "ridge_rel")
    CSV_BOOLS = ("lr_at_grid_edge", "wd_at_grid_edge", "exact_ridge_at_grid_edge", "ridge_at_grid_edge",
                 "param_at_grid_edge")
    CSV_JSON = ("grid", "seed_errors", "grid_edges")


@dataclass(eq=False)
class Run(_PointColumns):
    """One trained model or kernel candidate of a point's search: a line of ``FIG_runs.csv``.

    It carries the point's columns beside its own. Every field defaults to None.

    Parameters
    ----------
    figure, scale : str or None
        The figure (``"fig2a"``, ...) and the scale (``"tiny"``, ``"quick"``, ``"cpu"``, ``"paper"``).
    model, mode : str or None
        The learner (``"3resnet"``, ``"3layer"``, ``"2layer"``, a kernel's name, ...) and its training mode
        (``"all"``, ``"hidden"``, ``"last"``, ``"ntk"``, ...). ``model`` is kept because it is part of the store key.
    m, n_train, d, n_val : int or None
        Width, number of training samples, input dimension, number of samples held out for validation.
    beta, alpha : float or None
        β and α of the target (eq 2.2; arXiv v3 §8.1, Figure 3).
    epochs : int or None
        Passes over the training samples.
    select, validation : str or None
        Which error selects the lr/wd cell (``"test"`` or ``"val"``) and, for ``"val"``, where the validation
        samples come from (``"fresh"``, or ``"holdout"`` when absent).
    init, panel : str or None
        The initialisation (absent: §8.1's ``"paper"``) and the figure panel, where a figure has several.
    role : str or None
        ``"grid"`` (a cell of the search) or ``"rerun"`` (the selected cell retrained with a fresh seed).
    lr, wd : float or None
        The learning rate and weight decay.
    seed : int or None
        The initialisation seed.
    setting : str or None
        The kernel setting of a kernel candidate.
    ridge_rel : float or None
        The relative ridge of a kernel candidate.
    train_error, test_error, val_error : float or None
        The errors on the training, test and validation samples.
    diverged : bool or None
        Whether training diverged.
    frobenius_W : float or None
        ‖W‖_F of the trained network.
    selected : bool or None
        Whether this run's cell was selected.
    extra : dict, optional
        Columns no field declares, kept as given (keyword-only).
    """

    role: str | None = None
    lr: float | None = None
    wd: float | None = None
    seed: int | None = None
    setting: str | None = None
    ridge_rel: float | None = None
    train_error: float | None = None
    test_error: float | None = None
    val_error: float | None = None
    diverged: bool | None = None
    frobenius_W: float | None = None
    selected: bool | None = None

    CSV_INTS = ("m", "n_train", "epochs", "seed", "d")
    CSV_FLOATS = ("lr", "wd", "beta", "alpha", "ridge_rel", "train_error", "test_error", "val_error", "frobenius_W")
    CSV_BOOLS = ("selected", "diverged")


@functools.cache
def _columns(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.name != "extra")


def as_row(row: Mapping) -> Row:
    """``row`` as a :class:`Row` (a dict of a point's fields, as tests and scripts write them, is read once)."""
    return Row.of(row)


# ----------------------------------------------------------------- the one writer and the one reader
def csv_text(records: Iterable[_Record], columns: list[str]) -> str:
    """The CSV text of ``records`` under ``columns``: ``FIG.csv`` and ``FIG_runs.csv`` both come from here.

    Parameters
    ----------
    records : iterable of Row or Run
        The lines.
    columns : list of str
        The header, in order. A column a record was not given, or holds None in, is empty; a JSON column of the
        record's type is written as JSON; a record's other columns are left out.

    Returns
    -------
    str
    """
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore")
    w.writeheader()
    for r in records:
        cells = dict(r)
        for k in type(r).CSV_JSON:
            if cells.get(k) is not None:
                cells[k] = json.dumps(cells[k])
        w.writerow(cells)
    return buf.getvalue()


def _parse(row: dict, record: type[_Record], where: str) -> None:
    """CSV strings back to values in place, by the record type's declared columns: empty or "None" cells become
    None (booleans: False), booleans are "True"/"False", JSON columns JSON; any other cell raises a ValueError
    naming ``where`` and the column."""
    def to_bool(v):
        if v not in ("True", "False"):
            raise ValueError(v)
        return v == "True"

    def cell(k, convert, kind):
        v = row.get(k)
        if v in (None, "", "None"):
            return None
        try:
            return convert(v)
        except ValueError:
            raise ValueError(f"{where}: column {k!r} holds {v!r}, not {kind}") from None

    for k in record.CSV_INTS:
        row[k] = cell(k, int, "an integer")
    for k in record.CSV_FLOATS:
        row[k] = cell(k, float, "a number")
    for k in record.CSV_BOOLS:
        row[k] = bool(cell(k, to_bool, "True or False"))
    for k in record.CSV_JSON:
        try:
            row[k] = json.loads(row[k]) if row.get(k) else None
        except ValueError:
            raise ValueError(f"{where}: column {k!r} is not valid JSON") from None


def read_csv(path: Path, record: type[_Record], required: tuple[str, ...]) -> list[tuple[int, _Record]]:
    """Read back a table written by :func:`csv_text`, each cell parsed as the record type declares.

    Parameters
    ----------
    path : path-like
        The CSV file.
    record : type
        :class:`Row` or :class:`Run`: its ``CSV_INTS``, ``CSV_FLOATS``, ``CSV_BOOLS`` and ``CSV_JSON`` say how
        each column is parsed (empty or ``"None"`` cells are None, booleans False); others stay text.
    required : tuple of str
        Columns the header must hold.

    Returns
    -------
    list of (int, record)
        The line number and record of each line.

    Raises
    ------
    ValueError
        Naming the file (and the line) if it cannot be read, is empty, ends without a line break, lacks a required
        column, has a line with too many or too few fields, or has a cell that does not parse.
    """
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path} cannot be read: {e}") from None
    if not text.strip():
        raise ValueError(f"{path} is empty (no header, no rows)")
    if not text.endswith("\n"):
        raise ValueError(f"{path} is truncated: its last line ends without a line break")
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        absent = [c for c in required if c not in header]
        if absent:
            raise ValueError(f"{path} lacks the column(s) {', '.join(absent)} (header: {','.join(header)})")
        rows = []
        for r in reader:
            if None in r:
                raise ValueError(f"{path}, line {reader.line_num}: more fields than the header's {len(header)}")
            if any(v is None for v in r.values()):
                n = sum(v is not None for v in r.values())
                raise ValueError(f"{path}, line {reader.line_num}: {n} of {len(header)} fields (truncated)")
            rows.append((reader.line_num, r))
    except csv.Error as e:
        raise ValueError(f"{path} is not a valid CSV table: {e}") from None
    out = []
    for line, r in rows:
        _parse(r, record, f"{path}, line {line}")
        out.append((line, record.of(r)))
    return out



def seed_errors(row: Row) -> list[float]:
    """Test errors of the selected cell over every initialisation seed (NaN: diverged)."""
    row = as_row(row)
    errs = row.seed_errors
    return list(errs) if errs else [math.nan if row.test_error is None else row.test_error]


def fresh_errors(row: Row) -> list[float]:
    """The reruns of the selected cell with fresh seeds. Seed 0's run is left out when reruns exist:
    it chose the cell by its test error on the same test set, so it is the optimistic one."""
    errs = seed_errors(row)
    return errs[1:] if len(errs) > 1 else errs


def below(row: Row, threshold: float) -> tuple[int, int]:
    """(fresh seeds below ``threshold``, fresh seeds in all); a diverged seed is not below."""
    errs = fresh_errors(row)
    return sum(1 for e in errs if is_finite(e) and e < threshold), len(errs)


def seeds_below(row: Row, threshold: float, word: str = "seeds below") -> str:
    """``7/8 seeds below`` with, where any fresh seed diverged, the count of those apart from the ones that
    trained and ended above: ``4/8 seeds below (4 diverged)``, ``5/8 seeds below (2 converged above, 1 diverged)``."""
    errs = fresh_errors(row)
    n_below = sum(1 for e in errs if is_finite(e) and e < threshold)
    diverged = sum(1 for e in errs if not is_finite(e))
    above = len(errs) - n_below - diverged
    notes = ([f"{above} converged above"] if above and diverged else []) + (
        [f"{diverged} diverged"] if diverged else [])
    return f"{n_below}/{len(errs)} {word}" + (f" ({', '.join(notes)})" if notes else "")


def majority_below(row: Row, threshold: float) -> bool:
    n_below, n = below(row, threshold)
    return n_below * 2 > n


def plotted_error(row: Row) -> float:
    """The number a figure draws for a point (static and interactive alike, and the tables' ``plotted``
    column): the median over fresh initialisation seeds, and for a (last)/(ntk) point the better of that
    and its exact kernel solution (every competitor at its best)."""
    med = median_error(row)
    exact = as_row(row).exact_test_error
    if is_finite(exact) and not (is_finite(med) and med <= exact):
        return exact
    return med


def best_error(row: Row) -> float:
    """A competitor's best shot: the lowest of its seeds and of its exact kernel solution."""
    vals = [e for e in seed_errors(row) + [as_row(row).exact_test_error] if is_finite(e)]
    return min(vals) if vals else math.nan


def median_error(row: Row) -> float:
    """The median over the fresh seeds that did not diverge (NaN when all diverged)."""
    return median_of(fresh_errors(row))


def has_number(row: Row) -> bool:
    """Whether a point produced any finite error (its grid did not diverge entirely, or it has an exact solution)."""
    row = as_row(row)
    return is_finite(row.test_error) or is_finite(row.exact_test_error)

def verdict_word(ok: bool | None) -> str:
    """How a summary ends: the verdict True / False / None in words."""
    return {True: "reproduced", False: "NOT reproduced", None: "not judged"}[ok]


SEED_RULE = ("rule: a learner counts as below the threshold at a point when a strict majority of its fresh "
             "initialisation seeds (the selected lr/wd cell retrained; seed 0, which selected the cell, is not "
             "counted) are below it; a competitor counts against the claim when any of its seeds, seed 0 included, "
             "or its exact kernel solution is below it")



def seed_counts(errors: list[float], threshold: float) -> tuple[int, int, int]:
    """(below ``threshold``, converged but not below, diverged) among ``errors``: a diverged seed (NaN) is
    counted apart from one that trained and ended above."""
    below_ = sum(1 for e in errors if is_finite(e) and e < threshold)
    diverged = sum(1 for e in errors if not is_finite(e))
    return below_, len(errors) - below_ - diverged, diverged


def seed_words(errors: list[float], threshold: float, extra: tuple[str, ...] = ()) -> str:
    """``4/8 below (4 diverged)`` or ``6/8 below (1 converged above, 1 diverged)``, ``extra`` notes appended."""
    b, above, div = seed_counts(errors, threshold)
    notes = ([f"{above} converged above"] if above and div else []) + ([f"{div} diverged"] if div else [])
    notes += list(extra)
    return f"{b}/{len(errors)} below" + (f" ({', '.join(notes)})" if notes else "")


def robust_errors(row: Row) -> dict | None:
    """The robust rule's choice for a point whose grid ran several seeds in every cell
    (:func:`resnetlearn.learners.selection.robust_cell`, on the point's ``runs``): its cell and its seeds' errors in
    seed order (seed 0 first); None where the point has no such grid (then only the paper's rule applies)."""
    row = as_row(row)
    key = "val_error" if row.select == "val" else "test_error"
    got = robust_cell(row.runs or [], key) if row.runs else None
    if got is None:
        return None
    if key != "test_error":  # chosen on validation: report the chosen cell's test errors
        runs = [Run.of(r) for r in row.runs]
        tests = {r.seed: r.test_error for r in runs if (r.role or "grid") == "grid" and (r.lr, r.wd) == got["cell"]}
        got = dict(got, errors={s: tests.get(s, math.nan) for s in got["errors"]})
    return got


def rules_side_by_side(row: Row, threshold: float) -> str:
    """The paper's test-best rule and the robust rule on one point, printed where they disagree on whether a
    majority of the seeds other than seed 0 is below ``threshold`` (empty where they agree or the robust rule
    cannot be applied)."""
    rob = robust_errors(row)
    if rob is None:
        return ""
    fresh = [e for s, e in rob["errors"].items() if s != 0]
    robust_ok = seed_counts(fresh, threshold)[0] * 2 > len(fresh)
    if robust_ok == majority_below(row, threshold):
        return ""
    lr, wd = rob["cell"]
    return (f" [rules disagree: test-best lr {as_row(row).lr:g}, wd {as_row(row).wd:g}: "
            f"{seed_words(fresh_errors(row), threshold)}; robust lr {lr:g}, wd {wd:g}: "
            f"{seed_words(fresh, threshold)}, median {median_of(fresh):.4f}]")


def median_of(values: list[float]) -> float:
    """The median of the finite ``values`` (NaN when none is finite): a diverged seed has no error to rank."""
    vals = sorted(v for v in values if is_finite(v))
    if not vals:
        return math.nan
    n = len(vals)
    return vals[n // 2] if n % 2 else 0.5 * (vals[n // 2 - 1] + vals[n // 2])
