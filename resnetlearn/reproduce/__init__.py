"""Reproducing the paper's experiments (arXiv v3 §8; companion paper Figure 1): the public entry point.

Each figure is a list of *points* (one learner at one width, with its own
lr × wd grid search), so a sweep can be cut into independent jobs:

* ``fig2a`` — N = 500, all layers trained: 3resnet / 3layer / 2layer × (all, last, ntk) vs m;
* ``fig2b`` — N = 1000, hidden layers trained: × (hidden, last, ntk) vs m;
* ``fig3`` — β ∈ {0, 0.2, 0.3, 0.5, 1} at α = 0.3, 3resnet (all) and (hidden) vs m;
* ``fig4`` — §8.2: two-layer networks with fixed output signs on a degree-6 parity;
  SGD's best test error and ‖W‖_F against a solution built by hand (footnote 16);
* ``fig4b`` — the same at d = 100, N = 50000, mini-batch 100 (Figure 4(b)), paper scale only (a GPU);
* ``thm3`` — Theorem 2/3 on the §7 hard instance: every kernel vs the 3resnet against N;
* ``companion`` — the companion's sin/cos target: 3layer, 2layer, last, NTK vs N.

Scales: ``tiny``, ``quick``, ``cpu`` and ``paper``, each described once in
:data:`~resnetlearn.reproduce.figures.SCALE_NOTES` (every row and provenance file records which one produced it) with
its settings in :func:`~resnetlearn.reproduce.figures.scale_settings`.

Each figure is defined once, in :mod:`resnetlearn.reproduce.figures`; the work is cut along its seams:
:mod:`~resnetlearn.reproduce.store` (durable files, the store of finished points, the tables' checksums),
:mod:`~resnetlearn.reproduce.points` (running one point), :mod:`~resnetlearn.reproduce.running` (running a figure:
executors,
workers, Ctrl-C and SIGTERM), :mod:`~resnetlearn.reproduce.work_estimate` (the work ahead),
:mod:`~resnetlearn.reproduce.figure_tables` (tables, provenance and plot written) and
:mod:`~resnetlearn.reproduce.table_reading` (tables read back, refused when incomplete or edited). This module
gathers what a user calls; the command line is ``python -m resnetlearn reproduce``.
"""

from __future__ import annotations

from .figure_tables import (
    FigureResult,
    error_table,
    kernel_table,
    runs_text,
    seed_table,
    selection_table,
    table_text,
    write_outputs,
    write_provenance,
)
from .figures import SCALE_NOTES, SCALES, every_scale, names_at, summarise
from .points import run_point
from .rows import Row, Run, csv_text, read_csv
from .running import FigureInterrupted, WorkersUnavailable, run_figure, stop_process_pool, worker_init
from .store import DEFAULT_OUT, ResultsStore, StoreWarning, atomic_write, shipped_results, verify_table
from .table_reading import grid_table, load_figure, load_latest, load_runs
from .work_estimate import WorkEstimate, estimate_work, point_work

__all__ = [
    "DEFAULT_OUT", "SCALES", "SCALE_NOTES", "FigureInterrupted", "FigureResult", "ResultsStore", "Row", "Run",
    "StoreWarning", "WorkEstimate", "WorkersUnavailable", "atomic_write", "error_table", "estimate_work", "every_scale",
    "grid_table", "kernel_table", "load_figure", "load_latest", "load_runs", "names_at", "point_work",
    "run_figure", "run_point", "runs_text", "csv_text", "read_csv",
    "seed_table", "selection_table", "shipped_results", "stop_process_pool",
    "summarise",
    "table_text", "verify_table", "worker_init", "write_outputs", "write_provenance",
]
