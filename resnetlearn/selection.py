"""Choosing hyperparameters on a grid: the grid-edge rule every search here reports.

A hyperparameter chosen at an end of its grid may have its optimum beyond the grid,
so every search (the kernels' grids and ridge path, ResNet paper §3.1 and arXiv v3
§8.1; the networks' learning-rate and weight-decay grids, §8.1) flags such a choice
with :func:`grid_edges`; the grids themselves are ours, not the paper's.
"""

from __future__ import annotations


def _fmt(v) -> str:
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
            edges.append(f"{axis}={_fmt(v)} ({side})")
    return edges
