"""Choosing hyperparameters on a grid: the grid-edge rule every search here reports.

A hyperparameter chosen at an end of its grid may have its optimum beyond the grid,
so every search (the kernels' grids and ridge path, ResNet paper §3.1 and arXiv v3
§8.1; the networks' learning-rate and weight-decay grids, §8.1) flags such a choice
with :func:`grid_edges`; the grids themselves are ours, not the paper's.
"""

from __future__ import annotations

from ..validation import is_finite


def format_value(v) -> str:
    """A grid value as tables and grid-edge notes print it (a float by %g)."""
    return f"{v:g}" if isinstance(v, float) else str(v)


def grid_edges(grid: dict, point: dict, *, hard_bounds: dict | None = None, errors: dict | None = None,
               rtol: float = 0.01, profiled: str | None = None) -> list[str]:
    """The axes whose chosen value is an end of a grid of two or more values,
    other than an end that cannot be extended (``hard_bounds``, e.g. σ_b² = 0).

    With ``errors`` (tuple of values in the order of ``grid`` → selection
    error), an end is only reported when the next value inwards is worse by
    more than ``rtol`` (1 %): the best error there, with the other axes as
    chosen except the ``profiled`` one (e.g. the ridge), which is re-optimised.
    With ``errors`` but no ``profiled`` axis every other axis stays as chosen.
    Along a flat axis — exactly flat like σ_w² of a bias-free 2layer kernel,
    which only scales it while the ridge is relative, or a plateau like the
    Gaussian's at large bandwidths or the ridgeless limit — the choice at the
    end is one of several equally good ones and is not reported.
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
    """The lr × wd cells of a point's grid runs (``role == "grid"``) as (lr, wd) → {seed: ``key`` error}, a
    diverged run as NaN."""
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
    """arXiv v3 §8.1's rule (``key`` = test error; ``val_error`` for honest selection): the cell whose seed-0 run
    has the lowest error. None when every seed-0 run diverged."""
    seed0 = {c: s[0] for c, s in grid_cells(runs, key).items() if 0 in s and is_finite(s[0])}
    return min(seed0, key=seed0.get) if seed0 else None


def robust_cell(runs: list[dict], key: str = "test_error") -> dict | None:
    """A rule that does not reward the edge of stability (ours): among the cells whose seeds all converged, the
    one with the lowest median error over its seeds (seed 0 included); when no cell converged for every seed,
    the lowest median over the converged seeds among all cells, flagged. Needs two or more seeds in every cell
    (a grid trained with several seeds per cell); None otherwise.

    Returns ``cell`` (lr, wd), ``errors`` ({seed: error}, NaN = diverged), ``all_converged`` (whether the
    choice had every seed converge) and ``cells``/``cells_converged`` (how many cells, and how many converged
    for every seed)."""
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
