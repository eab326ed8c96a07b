"""Choosing hyperparameters on a grid: the grid-edge rule every search here reports.

A hyperparameter chosen at an end of its grid may have its optimum beyond the grid,
so every search (the kernels' grids and ridge path, ResNet paper §3.1 and arXiv v3
§8.1; the networks' learning-rate and weight-decay grids, §8.1) flags such a choice
with :func:`grid_edges`; the grids themselves are ours, not the paper's.
"""

from __future__ import annotations

from ..validation import is_finite


def format_value(v) -> str:
    """A grid value as tables and grid-edge notes print it.

    Parameters
    ----------
    v : object
        The value.

    Returns
    -------
    str
        A float by %g, anything else by ``str``.
    """
    return f"{v:g}" if isinstance(v, float) else str(v)


def grid_edges(grid: dict, point: dict, *, hard_bounds: dict | None = None, errors: dict | None = None,
               rtol: float = 0.01, profiled: str | None = None) -> list[str]:
    """The axes whose chosen value is an end of a grid of two or more values.

    An end that cannot be extended (``hard_bounds``, e.g. σ_b² = 0) is not reported. With ``errors``, an end is only
    reported when the next value inwards is worse by more than ``rtol``: the best error there, with the other axes as
    chosen except the ``profiled`` one (e.g. the ridge), which is re-optimised; with ``errors`` but no ``profiled``
    axis every other axis stays as chosen. Along a flat axis (exactly flat like σ_w² of a bias-free 2layer kernel,
    which only scales it while the ridge is relative, or a plateau like the Gaussian's at large bandwidths or the
    ridgeless limit) the choice at the end is one of several equally good ones and is not reported.

    Parameters
    ----------
    grid : dict
        Axis name → the values searched.
    point : dict
        Axis name → the value chosen.
    hard_bounds : dict or None, default None
        Axis name → an end that cannot be extended (keyword-only, as the parameters below).
    errors : dict or None, default None
        Tuple of values in the order of ``grid`` → selection error (None: every end is reported).
    rtol : float, default 0.01
        How much worse (relatively) the inward neighbour must be for an end to be reported (1 %).
    profiled : str or None, default None
        An axis re-optimised when the neighbour's error is read.

    Returns
    -------
    list of str
        One note per end chosen, e.g. ``"lr=0.5 (highest)"``.
    """
    hard_bounds = {} if hard_bounds is None else hard_bounds
    axes = list(grid)
    edges = []
    for a, axis in enumerate(axes):
        values = sorted(set(grid[axis]))
        if len(values) < 2:
            continue
        v = point[axis]
        for end, inner, side in ((values[0], values[1], "lowest"), (values[-1], values[-2], "highest")):
            if v != end or hard_bounds.get(axis) == end:
                continue
            if errors is not None:
                here = errors[tuple(point[x] for x in axes)]
                inward = [e for key, e in errors.items() if key[a] == inner
                          and all(key[b] == point[x] for b, x in enumerate(axes) if b != a and x != profiled)]
                if inward and not min(inward) > here * (1 + rtol) + 1e-12:
                    continue  # flat: the neighbour does as well
            edges.append(f"{axis}={format_value(v)} ({side})")
    return edges


# ----------------------------------------------------------------- two rules for choosing a cell
def grid_cells(runs: list[dict], key: str = "test_error") -> dict[tuple, dict[int, float]]:
    """The lr × wd cells of a point's grid runs, with each seed's error.

    Parameters
    ----------
    runs : list of dict
        A point's runs, each with ``lr``, ``wd``, ``seed``, ``diverged``, the error ``key`` and optionally ``role``
        (only ``"grid"`` runs count; a run without one counts).
    key : str, default "test_error"
        The error read from each run (``"val_error"`` for selection on validation samples).

    Returns
    -------
    dict
        (lr, wd) → {seed: error}, a diverged run's error NaN.
    """
    cells: dict[tuple, dict[int, float]] = {}
    for r in runs:
        if r.get("role", "grid") != "grid":
            continue
        err = r.get(key)
        cells.setdefault((r["lr"], r["wd"]), {})[int(r.get("seed") or 0)] = (
            float("nan") if r.get("diverged") or not is_finite(err) else float(err))
    return cells


def _median(values: list[float]) -> float:
    vals = sorted(values)
    n = len(vals)
    return vals[n // 2] if n % 2 else 0.5 * (vals[n // 2 - 1] + vals[n // 2])


def test_best_cell(runs: list[dict], key: str = "test_error") -> tuple | None:
    """arXiv v3 §8.1's rule: the cell whose seed-0 run has the lowest error.

    Parameters
    ----------
    runs : list of dict
        A point's runs, each with ``lr``, ``wd``, ``seed``, ``diverged``, the error ``key`` and optionally ``role``
        (only ``"grid"`` runs count; a run without one counts).
    key : str, default "test_error"
        The error read from each run (``"val_error"`` for selection on validation samples).

    Returns
    -------
    tuple or None
        The cell (lr, wd); None when every seed-0 run diverged.
    """
    seed0 = {c: s[0] for c, s in grid_cells(runs, key).items() if 0 in s and is_finite(s[0])}
    return min(seed0, key=seed0.get) if seed0 else None


def robust_cell(runs: list[dict], key: str = "test_error") -> dict | None:
    """A rule that does not reward the edge of stability (ours): the cell with the lowest median error over its seeds.

    Among the cells whose seeds all converged, the one with the lowest median error over its seeds (seed 0 included);
    when no cell converged for every seed, the lowest median over the converged seeds among all cells, flagged.

    Parameters
    ----------
    runs : list of dict
        A point's runs, each with ``lr``, ``wd``, ``seed``, ``diverged``, the error ``key`` and optionally ``role``
        (only ``"grid"`` runs count; a run without one counts).
    key : str, default "test_error"
        The error read from each run (``"val_error"`` for selection on validation samples).

    Returns
    -------
    dict or None
        ``cell`` (lr, wd), ``errors`` ({seed: error}, NaN = diverged), ``all_converged`` (whether the choice had
        every seed converge) and ``cells``/``cells_converged`` (how many cells, and how many converged for every
        seed). None when a cell has fewer than two seeds (the rule needs a grid trained with several seeds per
        cell) or no run converged.
    """
    cells = grid_cells(runs, key)
    if not cells or min(len(s) for s in cells.values()) < 2:
        return None
    whole = {c: s for c, s in cells.items() if all(is_finite(e) for e in s.values())}
    pool = whole or {c: s for c, s in cells.items() if any(is_finite(e) for e in s.values())}
    if not pool:
        return None
    med = {c: _median([e for e in s.values() if is_finite(e)]) for c, s in pool.items()}
    best = min(med, key=med.get)
    return dict(cell=best, errors=dict(sorted(cells[best].items())), all_converged=bool(whole), cells=len(cells),
                cells_converged=len(whole))
