"""Each figure's verdict: the paper's claim split into the parts it states, each judged on the rows of a figure
table (:class:`~resnetlearn.reproduce.verdict_parts.Part`).

One verdict per experiment of :data:`resnetlearn.reproduce.figures.SPECS`, with the constants and reference
errors its rule reads: Figures 2(a) and 2(b) (arXiv v3 §8.1: the ResNet below kα² for a majority of fresh seeds;
every competitor above), Figure 3 (§8.1, Experiment 2: learned when α ≲ β, not when α ≳ β), Figures 4(a) and 4(b)
(§8.2: SGD's test error; a smaller-norm fit that SGD does not find), the §7 hard instance (our illustration of
NeurIPS §7 Theorem 2 / arXiv v3 §7.1: the kernel half and the ResNet half) and the companion paper's Figure 1 (the
margin). Each takes the rows (read through :mod:`resnetlearn.reproduce.rows`) and returns a paragraph of notes
(hypotheses, grid edges, details) and its parts; the label is derived from the parts alone
(:func:`~resnetlearn.reproduce.verdict_parts.derive_label`).

Every seed count that judges a part is out of sample: seed 0 chose the lr/wd cell and the fresh seeds 1-8, which
took no part in choosing, are counted (a diverged seed counts as not below); seed 0's own error is the paper's
test-best number and is printed beside.
"""

from __future__ import annotations

import math
from functools import cache

from ..targets.concept import companion_figure1, parity_instance
from ..validation import is_finite
from .learner import Network, kind_of, label_of
from .rows import (
    Row,
    as_row,
    below,
    best_error,
    fresh_errors,
    has_number,
    majority_below,
    median_error,
    median_of,
    robust_errors,
    seed_counts,
    seed_errors,
    seed_words,
    seeds_below,
)
from .verdict_parts import FAILS, HOLDS, NOT_JUDGED, TRIVIAL, Part, span


@cache
def parity_threshold() -> float:
    """kα² = 1.35 of the §8.1 instance (α = 0.3, k = 15): the error of learning F but nothing of G."""
    return parity_instance().reference_errors().f_only


@cache
def parity_zero() -> float:
    """k(1 + α²) = 16.35: the error of predicting 0 on the §8.1 instance."""
    return parity_instance().reference_errors().zero


# ----------------------------------------------------------------- what every part records
def _scale(rows: list[Row]) -> str:
    return span(r.scale for r in rows)


def _seeds(rows: list[Row]) -> str:
    """``0 chose, 1-8 judged``: the seeds of the selected cells (seed 0 chose the cell, the fresh ones judge it)."""
    n = max((len(seed_errors(r)) for r in rows if r.seed_errors), default=1)
    return (f"0 chose the cell, {'1' if n == 2 else f'1-{n - 1}'} judged" if n > 1
            else "0 only (no fresh seeds)")


def _where(rows: list[Row]) -> dict:
    """The scale, N, widths and seeds a part was measured at, read from its rows."""
    return dict(scale=_scale(rows), n=span(r.n_train for r in rows), widths=span(r.m for r in rows),
                seeds=_seeds(rows))


def _top(values) -> tuple:
    vals = sorted(set(values)) or [math.nan]
    return vals[0], vals[-1]


def grid_edge_notes(rows: list[Row], lrs: list[float]) -> str:
    """Every network trained in mode all or hidden whose selected lr or wd sits on an end of its grid (the flags
    the search stored), named with the reason it stays there or with what its grid extension found
    (:data:`EDGE_PANELS`): wd = 0 is the natural bound of weight decay; the other ends were either extended or not
    extended at this scale. ``lrs``: the points' lr grid."""
    rows = [as_row(r) for r in rows]
    nets = [r for r in rows if kind_of(r).grid_searched and r.mode in ("all", "hidden") and has_number(r)]
    if not nets:
        return ""
    lo_lr, hi_lr = _top(lrs)
    extended: dict[tuple, list[Row]] = {}
    for r in nets:
        if is_edge(r):
            extended.setdefault(_same_point(r), []).append(r)
    out: dict[tuple, list[str]] = {}
    for r in (r for r in nets if not is_edge(r)):
        where = f"m={r.m}" + (f" N={r.n_train}" if r.n_train is not None else "") + (
            f" β={r.beta:g}" if is_finite(r.beta) and r.figure == "fig3" else "")
        exts = extended.get(_same_point(r), [])
        lr_past = EDGE_LRS_BOTTOM if r.lr_at_grid_edge and r.lr == lo_lr else EDGE_LRS_TOP
        axes = []  # (the edge, the extension rows past it)
        if r.lr_at_grid_edge:
            side = "bottom" if r.lr == lo_lr else "top" if r.lr == hi_lr else "edge"
            axes.append((f"lr {r.lr:g} ({side})", [e for e in exts if e.panel in LR_EDGE_PANELS]))
        if r.wd_at_grid_edge:
            axes.append((f"wd {r.wd:g} (top)", [e for e in exts if e.panel in WD_EDGE_PANELS]))
        if len(axes) == 2 and all(past for _, past in axes):  # a corner extended past both of its edges
            axes = [(" and ".join(edge for edge, _ in axes),
                     [e for e in exts if e.panel in LR_EDGE_PANELS | WD_EDGE_PANELS])]
        for edge, past in axes:
            why = _extension_words(r, past, (lo_lr, hi_lr, lr_past)) if past else "not extended at this scale"
            out.setdefault((label_of(r), edge, why), []).append(where)
        if not r.wd_at_grid_edge and r.wd == 0.0:
            out.setdefault((label_of(r), "wd 0 (bottom)", "the natural bound of weight decay"), []).append(where)
    if not out:
        return " Grid edges: no selected cell of a network trained in mode all or hidden sits on an edge."
    return (" Grid edges (selected cells of networks trained in mode all or hidden on an end of their lr × wd grid, "
            "ours): " + "; ".join(f"{who} at {', '.join(pts)}: {edge}, {why}" for (who, edge, why), pts in out.items())
            + ".")


EDGE_PANEL = "edge"
"""The ``panel`` of a point that extends another point's wd grid past its top (same learner, width, N)."""
EDGE_PANELS = {(False, True): EDGE_PANEL, (True, False): "edge-lr", (True, True): "edge-lr-wd"}
"""The ``panel`` of a grid extension point by the axes it replaces (lr, wd): past the wd grid (:data:`EDGE_PANEL`),
past the lr grid, or past both (its lrs and wds chosen so that, beside the point it extends, the corner is covered)."""
EDGE_WORDS = {EDGE_PANEL: "wd past the grid", "edge-lr": "lr past the grid", "edge-lr-wd": "lr and wd past the grid"}
"""How tables, plots and verdicts name a grid extension point, by its panel."""


def is_edge(r: Row) -> bool:
    """Whether a row is a grid extension point's (:data:`EDGE_PANELS`)."""
    return r.panel in EDGE_WORDS


def _same_point(r: dict) -> tuple:
    return label_of(r), r.m, r.n_train, r.beta


def _extension_words(r: Row, exts: list[Row], lr_grid: tuple) -> str:
    """What the extensions of a point's grid past its edges found: whether seed 0 chose a cell there, and where.
    ``lr_grid``: the scale's lowest and highest lr and the lr values the extensions go past them with."""
    lo_lr, hi_lr, lr_past = lr_grid
    here = seed_errors(r)[0]
    ext = min(exts, key=lambda e: seed_errors(e)[0] if is_finite(seed_errors(e)[0]) else math.inf)
    there = seed_errors(ext)[0]
    panels = {e.panel for e in exts}
    grid = " and ".join(([f"lr {', '.join(f'{v:g}' for v in lr_past)}"] if panels & LR_EDGE_PANELS else [])
                        + ([f"wd {', '.join(f'{w:g}' for w in EDGE_WDS)}"] if panels & WD_EDGE_PANELS else []))
    if not is_finite(there) or there >= here:
        return (f"extended to {grid}: seed 0's best there {there:.3f}, not better than "
                f"{here:.3f} at the edge, so the selection stays (interior for seed 0)")
    ends = []
    if panels & WD_EDGE_PANELS:
        ends.append("wd still on the top of the extended grid" if ext.wd == max(EDGE_WDS) else
                    "wd now interior")
    if panels & LR_EDGE_PANELS:
        outer = {min((lo_lr, *lr_past)), max((hi_lr, *lr_past))}
        ends.append("lr still on an end of the extended grid" if ext.lr in outer else "lr now interior")
    top = ", ".join(ends) + (", not extended further" if any("still" in e for e in ends) else "")
    if ext.lr_at_grid_edge and not panels & LR_EDGE_PANELS:
        top += f", lr {ext.lr:g} on an end of its grid"
    fresh = (f"fresh seeds there: {seeds_below(ext, parity_threshold())}, lowest {best_error(ext):.3f}"
             if r.figure != "companion" else
             f"fresh seeds there: median {median_error(ext):.3f}, lowest {best_error(ext):.3f}")
    return (f"extended to {grid}: seed 0's best there {there:.3f} (lr {ext.lr:g}, wd "
            f"{ext.wd:g}) beats {here:.3f} at the edge; {top}; {fresh}")


EDGE_WDS = (0.02, 0.05)
"""The wd values an extension point trains past the top (0.01) of the cpu scale's wd grid: the next two of the
paper's {1, 2, 5}·10^k steps."""
EDGE_LRS_TOP = (1.0, 2.0)
"""The lr values an extension point trains past the top (0.5) of the cpu scale's lr grid (the same steps)."""
EDGE_LRS_BOTTOM = (0.0005, 0.001, 0.002, 0.005)
"""The lr values an extension point trains past the bottom (0.01) of the cpu scale's lr grid (the same steps, four
of them: the companion's two-layer network at m = 500 still chose the lowest of two, 0.002)."""
LR_EDGE_PANELS = {"edge-lr", "edge-lr-wd"}
WD_EDGE_PANELS = {EDGE_PANEL, "edge-lr-wd"}


# ----------------------------------------------------------------- Figure 2
FIG2_PANEL = {"all": "Figure 2(a)", "hidden": "Figure 2(b)"}


def _resnet_part(mine: list[Row], thr: float, name: str, claim: str) -> Part:
    """A ResNet below ``thr`` robustly: at some width a strict majority of its fresh seeds."""
    if not mine:
        return Part(name, claim, "—", "no finite point", f"kα² = {thr:.2f}", NOT_JUDGED,
                    reason="the ResNet has no finite point")
    wins = [r for r in mine if majority_below(r, thr)]
    measured = "; ".join(f"m={r.m}: {seeds_below(r, thr)} (median {median_error(r):.3f}; seed 0, test-best "
                         f"rule: {seed_errors(r)[0]:.3f})" for r in mine)
    return Part(name, claim, "at some width, a strict majority of the fresh seeds of the cell seed 0 chose are below "
                "(out of sample; a diverged seed is not below)", measured, f"kα² = {thr:.2f}",
                HOLDS if wins else FAILS, **_where(mine),
                reason=f"at m = {', '.join(str(r.m) for r in wins)}" if wins else "")


def fig2_verdict(train_mode: str):
    def verdict(rows: list[Row]) -> tuple[str, list[Part]]:
        rows = [as_row(r) for r in rows]
        thr = parity_threshold()
        winner = Network("3resnet", train_mode, m=1).label  # the learner §8.1 says wins, named by its record
        finite = [r for r in rows if has_number(r)]
        mine = sorted((r for r in finite if label_of(r) == winner), key=lambda r: r.m)
        others = [r for r in finite if label_of(r) != winner]
        source = f"arXiv v3 §8.1, {FIG2_PANEL[train_mode]}"
        parts = [_resnet_part(mine, thr, f"{winner} below kα² robustly",
                              f"the three-layer ResNet learns α·G(F), test error below kα² ({source})")]
        claim = f"every other learner stays above kα², kernel methods included ({source})"
        if not others:
            parts.append(Part("every competitor above kα²", claim, "—", "no finite competitor", f"kα² = {thr:.2f}",
                              NOT_JUDGED, reason="no competitor has a finite point"))
        else:
            against = [r for r in others if is_finite(best_error(r)) and best_error(r) < thr]
            best = min(others, key=lambda r: best_error(r) if is_finite(best_error(r)) else math.inf)
            exact = " (exact kernel solution)" if best.exact_test_error == best_error(best) else ""
            measured = f"best competitor {label_of(best)} at m={best.m}: {best_error(best):.3f}{exact}"
            if against:
                measured += "; below kα²: " + ", ".join(f"{label_of(r)} m={r.m} ({best_error(r):.3f})"
                                                         for r in against)
            parts.append(Part("every competitor above kα²", claim,
                              "any seed of a competitor (seed 0 included) or its exact kernel solution below kα² "
                              "counts against", measured, f"kα² = {thr:.2f}", FAILS if against else HOLDS,
                              **_where(others)))
        return f"(predicting 0 gives {parity_zero():.2f}.)", parts
    return verdict


# ----------------------------------------------------------------- Figure 3
FIG3_BETAS = (0.0, 0.2, 0.3, 0.5, 1.0)
FIG3_ALPHA = 0.3
FIG3_MODES = ("all", "hidden")
"""Figure 3's learners: the §6 ResNet (3resnet) trained in these modes, in this order (panels, verdict rows)."""
FIG3_FIXED_N = {"all": 500, "hidden": 1000}
"""The N at which Figure 3 is judged, per training mode, fixed before its runs: arXiv v3 gives no N for Figure 3
(its caption says only "the same F and G as §8.1"), so these are ours, those of Figures 2(a) and 2(b) with the same
training modes. Rows at any other N (the talk's N = 1000 for (all), run at scales cpu and paper after N = 500) are
reported as parts of their own, beside the verdict."""


@cache
def fig3_zero(beta: float) -> float:
    """The error of predicting 0 on Figure 3's target β·F + α·G(F) (α = 0.3): k(β² + α²) on the §8.1 instance,
    1.35 at β = 0 and 1.95 at β = 0.2, so a row with β ≤ α can sit above kα² and still learn nothing."""
    return parity_instance(alpha=FIG3_ALPHA, beta=beta).reference_errors().zero


def _at(r: Row) -> str:
    """``m=200``, or ``m=200 (wd past the grid)`` for a grid extension's row."""
    return f"m={r.m}" + (f" ({EDGE_WORDS[r.panel]})" if is_edge(r) else "")


def _fig3_row_words(beta: float, sel: list[dict], thr: float, learned: list[dict]) -> str:
    if learned:
        return f"β={beta:g}: learned at " + ", ".join(f"{_at(r)} ({seeds_below(r, thr, word='fresh seeds')})"
                                                      for r in learned)
    top = max(sel, key=lambda r: below(r, thr)[0] - median_error(r) * 1e-9)
    zero = fig3_zero(beta)
    note = (f"; predicting 0: {zero:.2f}, no better" if is_finite(median_error(top)) and median_error(top) >= zero
            else f"; predicting 0: {zero:.2f}")
    return f"β={beta:g}: not learned (best {_at(top)}: {seeds_below(top, thr)}, median {median_error(top):.3f}{note})"


def _fig3_parts(mode: str, n: int | None, rows: list[Row], thr: float, in_verdict: bool) -> list[Part]:
    """The two statements of one panel of Figure 3 at one N: α ≲ β learned, α ≳ β (β = α included) not learned."""
    where_n = f", N={n}" if not in_verdict else ""
    by_beta = {b: sorted((r for r in rows if r.beta == b and has_number(r)), key=lambda r: r.m)
               for b in FIG3_BETAS}
    src = "arXiv v3 §8.1, Experiment 2 and Figure 3"
    parts = []
    # α ≲ β: β > α, learned (a strict majority of fresh seeds below kα² at some width)
    up = [b for b in FIG3_BETAS if b > FIG3_ALPHA and not math.isclose(b, FIG3_ALPHA)]
    learned = {b: [r for r in by_beta[b] if majority_below(r, thr)] for b in up}
    missing = [b for b in up if not by_beta[b]]
    parts.append(Part(
        f"α ≲ β learned ({mode}{where_n})", f"with β = {', '.join(f'{b:g}' for b in up)} > α = 0.3 the ResNet "
        f"trained in mode {mode} learns the composite signal ({src})",
        "every such β has a width where a strict majority of the fresh seeds of seed 0's cell are below kα²",
        "; ".join(_fig3_row_words(b, by_beta[b], thr, learned[b]) for b in up if by_beta[b]) or "no finite point",
        f"kα² = {thr:.2f}",
        NOT_JUDGED if missing else HOLDS if all(learned.values()) else FAILS,
        **_where([r for b in up for r in by_beta[b]] or rows), in_verdict=in_verdict,
        reason=f"no finite point at β = {', '.join(f'{b:g}' for b in missing)}" if missing else ""))
    # α ≳ β, β = α included: not learned (any seed, seed 0 included, below kα² at any width counts against)
    down = [b for b in FIG3_BETAS if b <= FIG3_ALPHA or math.isclose(b, FIG3_ALPHA)]
    touched = {b: [r for r in by_beta[b] if is_finite(best_error(r)) and best_error(r) < thr] for b in down}
    missing = [b for b in down if not by_beta[b]]
    trivial = [b for b in down if by_beta[b] and all(median_error(r) >= fig3_zero(b) for r in by_beta[b]
                                                     if is_finite(median_error(r)))]
    status = (NOT_JUDGED if missing else FAILS if any(touched.values())
              else TRIVIAL if len(trivial) == len(down) else HOLDS)
    words = []
    for b in down:
        if not by_beta[b]:
            continue
        if touched[b]:
            words.append(f"β={b:g}: below kα² at " + ", ".join(
                f"{_at(r)} ({seeds_below(r, thr, word='fresh seeds')}, lowest {best_error(r):.3f})"
                for r in touched[b]))
        else:
            words.append(_fig3_row_words(b, by_beta[b], thr, []))
    reason = (f"no finite point at β = {', '.join(f'{b:g}' for b in missing)}" if missing else
              "no row does better than predicting 0" if status == TRIVIAL else
              f"β = {', '.join(f'{b:g}' for b in trivial)} only trivially: no better than predicting 0"
              if trivial and status == HOLDS else "")
    parts.append(Part(
        f"α ≳ β not learned ({mode}{where_n})", f"with β = {', '.join(f'{b:g}' for b in down)} ≤ α = 0.3, the "
        f"boundary β = α included, learning the composite signal is practically impossible ({src})",
        "no seed (seed 0 included) of any such β is below kα² at any width; it holds only trivially where every "
        "row's median is no better than predicting 0, k(β² + α²)",
        "; ".join(words) or "no finite point", f"kα² = {thr:.2f}", status,
        **_where([r for b in down for r in by_beta[b]] or rows), in_verdict=in_verdict, reason=reason))
    return parts


def fig3_verdict(rows: list[Row]) -> tuple[str, list[Part]]:
    rows = [as_row(r) for r in rows]
    thr = parity_threshold()
    parts = []
    groups = sorted({(r.mode, r.n_train) for r in rows},
                    key=lambda g: (FIG3_MODES.index(g[0]) if g[0] in FIG3_MODES else 2,
                                   g[1] != FIG3_FIXED_N.get(g[0]), g[1] or 0))
    for mode in FIG3_MODES:
        if (mode, FIG3_FIXED_N[mode]) not in groups:
            parts.append(Part(f"Figure 3 ({mode})", f"the panel trained in mode {mode}", "—", "no rows",
                              f"kα² = {thr:.2f}", NOT_JUDGED, n=str(FIG3_FIXED_N[mode]),
                              reason=f"no rows at the fixed N = {FIG3_FIXED_N[mode]}"))
    for mode, n in groups:
        sel = [r for r in rows if (r.mode, r.n_train) == (mode, n)]
        parts += _fig3_parts(mode, n, sel, thr, in_verdict=n == FIG3_FIXED_N.get(mode))
    fixed = ", ".join(f"({m}) N = {n}" for m, n in FIG3_FIXED_N.items())
    return (f"(The N fixed before the runs: {fixed}, ours, as Figures 2(a) and 2(b); arXiv v3 gives no N for "
            f"Figure 3, the talk's version of panel (a) uses N = 1000 on its own k = 8 instance.)"), parts


# ----------------------------------------------------------------- Figure 4 (§8.2)
FIG4_GENERALISES = 0.3
"""§8.2: a near-minimal-norm solution that fits the training set would have test error below 0.3."""
FIG4_ZERO = 1.0
"""The test error of predicting 0 on §8.2's ±1 parity (the error is normalised by E[y²] = 1)."""


def norm_verdict(paper_best: float, paper_widths: int):
    """§8.2's two statements on these rows: SGD's best test error stays above what a near-minimal-norm fit would
    give (against the paper's best and against predicting 0), and a hand-built solution fits at least as well as
    SGD with a smaller ‖W‖_F."""
    def verdict(rows: list[Row]) -> tuple[str, list[Part]]:
        rows = [as_row(r) for r in rows]
        hand = [r for r in rows if kind_of(r).constructed]
        sgd = [r for r in rows if not kind_of(r).constructed]
        runs = [g for r in sgd for g in (r.grid or []) if all(is_finite(v) for v in g)]  # (train, test, ‖W‖_F)
        where = _where(sgd or rows)
        src = "arXiv v3 §8.2"
        claim1 = (f"SGD finds no test error that a near-minimal-norm fit would give, below {FIG4_GENERALISES}; "
                  f"the paper's best over m up to {paper_widths} is {paper_best} ({src})")
        claim2 = f"a fit of the training set with a much smaller ‖W‖_F exists, and SGD does not find it ({src})"
        if not runs or not hand:
            why = "no finite SGD run or no hand-built solution"
            return "", [Part("SGD's test error above 0.3", claim1, "—", why, str(FIG4_GENERALISES), NOT_JUDGED,
                             reason=why, **where),
                        Part("a smaller-norm fit SGD does not find", claim2, "—", why, "-", NOT_JUDGED, reason=why,
                             **where)]
        reruns = [e for r in sgd for e in fresh_errors(r) if is_finite(e)] if any(r.seed_errors
                                                                                   for r in sgd) else []
        best_test = min([g[1] for g in runs] + reruns)  # every searched run and every fresh seed of a selected cell
        status = (FAILS if best_test <= FIG4_GENERALISES else TRIVIAL if best_test >= FIG4_ZERO else HOLDS)
        p1 = Part("SGD's test error above 0.3", claim1,
                  "SGD's best test error over every searched run and every fresh seed of a selected cell stays "
                  f"above {FIG4_GENERALISES}; only trivially when that best is no better than predicting 0",
                  f"SGD's best {best_test:.3f} over {len(runs)} finite runs"
                  + (f" and {len(reruns)} fresh seeds ({min(reruns):.3f}–{max(reruns):.3f})" if reruns else ""),
                  f"{FIG4_GENERALISES} (paper's SGD: {paper_best}; predicting 0: {FIG4_ZERO:g})", status, **where,
                  reason=(f"SGD does no better than predicting 0, where the paper's SGD reached {paper_best}"
                          if status == TRIVIAL else ""))
        fit = min(runs, key=lambda g: g[0])  # SGD's best training fit
        cheaper = [h for h in hand if h.test_error <= fit[0] and h.frobenius_W < fit[2]]
        finite_hand = [h for h in hand if is_finite(h.test_error)] or hand
        h = (min(cheaper, key=lambda h: h.frobenius_W) if cheaper
             else min(finite_hand, key=lambda h: h.test_error))
        p2 = Part("a smaller-norm fit SGD does not find", claim2,
                  "a hand-built solution (footnote 16) at least as accurate as SGD's best training fit has a smaller "
                  "‖W‖_F", f"SGD's best training fit {fit[0]:.3f} at ‖W‖_F {fit[2]:.1f}; hand-built error "
                  f"{h.test_error:.3f} at ‖W‖_F {h.frobenius_W:.1f}", f"‖W‖_F {fit[2]:.1f}",
                  HOLDS if cheaper else FAILS, **where)
        d, n, epochs = sgd[0].d, sgd[0].n_train, span(r.epochs for r in sgd)
        notes = (f"(d = {d}, N = {n}; SGD's widths that ran: {span(r.m for r in sgd)}, the paper's up to "
                 f"{paper_widths}; §8.2 leaves the initialisation, epochs and mini-batch unstated: ours are §8.1's "
                 f"initialisation, {epochs} epochs and §8.1's mini-batch, or §8.2's where it states one.)"
                 + _fit_note(runs) + _selected_cells(sgd))
        return notes, [p1, p2]
    return verdict


def _selected_cells(sgd: list[Row]) -> str:
    """The lr/wd cell seed 0 chose at each SGD width, with its grid-edge flags."""
    def edge(r):  # wd = 0 is no edge (the natural bound), so a flagged wd is the top of its grid
        flags = (["lr on an end of its grid"] if r.lr_at_grid_edge else []) + (
            ["wd on the top of its grid"] if r.wd_at_grid_edge else [])
        near_zero = r.wd_at_grid_edge and is_finite(r.train_error) and r.train_error > 0.9
        why = (f": its training error {r.train_error:.3f} says the cell nearly predicts 0, and a larger wd "
               "only shrinks W further toward predicting 0" if near_zero else "")
        return f" ({', '.join(flags)}, not extended{why})" if flags else ""
    cells = "; ".join(f"m={r.m}: lr {r.lr:g}, wd {r.wd:g}{edge(r)}" for r in sorted(sgd, key=lambda r: r.m)
                      if is_finite(r.lr) and is_finite(r.wd))
    return f" Selected cells: {cells}." if cells else ""


def _fit_note(runs: list) -> str:
    """What SGD's runs (train, test, ‖W‖_F) say about fitting: the test-best run's training error, and the test
    errors of the runs that fit the training set (training error below 0.1)."""
    best = min(runs, key=lambda g: g[1])
    fits = [g for g in runs if g[0] < 0.1]
    text = f" The test-best run ends at training error {best[0]:.3f} (‖W‖_F {best[2]:.1f})"
    if fits:
        text += (f"; the {len(fits)} runs that fit the training set (training error < 0.1) have test errors "
                 f"{min(g[1] for g in fits):.3f}–{max(g[1] for g in fits):.3f} and ‖W‖_F "
                 f"{min(g[2] for g in fits):.1f}–{max(g[2] for g in fits):.1f}")
    return text + "."


# ----------------------------------------------------------------- the §7 hard instance
THM3_D, THM3_K, THM3_ALPHA = 30, 4, 0.3


def thm3_hypotheses() -> str:
    """Theorem 2's hypotheses next to this experiment's settings (NeurIPS §7); arXiv v3 §7.1 states a different
    theorem (any Mercer kernel, any weights, N ≤ C(d₁, k)/1000, error above α²/16; proof in its Appendix D)."""
    d, k = THM3_D, THM3_K
    n_range = d ** (k / 2) / math.log(d) ** k
    return (f"Theorem 2 (NeurIPS §7, announced as Theorem 3 in its §3 overview): for k ≥ 4, large d, "
            f"N ≤ O(d^(k/2)/log^k d) and α ∈ [Ω(d^(-k/4)), 1), with probability ≥ 0.99 over a random target W* "
            f"and the samples, every correlation kernel's regression errs by more than α²/4 (arXiv v3 §7.1 states a "
            f"different theorem: any Mercer kernel with any weights, N ≤ C(d₁, k)/1000, error above α²/16). Here "
            f"d = {d}, k = {k}: d^(k/2)/log^k d = {n_range:.1f} (constants unknown), while N runs far beyond that, "
            f"on one target (seed 0): our illustration of the separation, not a test of either theorem.")


THM3_FRESH_SEEDS = tuple(range(9, 17))
"""The seeds that judge the robust rule's cell on the §7 instance: none of them trained in the grid that chose it
(seeds 0-8 did)."""
THM3_FRESH_PANEL = "fresh"
"""The ``panel`` of a §7 point that retrains the robust rule's cell with :data:`THM3_FRESH_SEEDS`."""

THM3_BOUND_NEURIPS = THM3_ALPHA ** 2 / 4
"""The kernel bound of NeurIPS §7 Theorem 2 (announced as Theorem 3 in its overview): error above α²/4."""
THM3_BOUND_ARXIV = THM3_ALPHA ** 2 / 16
"""arXiv v3 §7.1's different theorem (any Mercer kernel, any weights, N ≤ C(d₁, k)/1000): error above α²/16."""


def thm3_verdict(rows: list[Row]) -> tuple[str, list[Part]]:
    rows = [as_row(r) for r in rows]
    bound = THM3_BOUND_NEURIPS
    kern = [r for r in rows if not kind_of(r).trained_by_sgd and has_number(r)]
    net_all = [r for r in rows if kind_of(r).trained_by_sgd and r.panel != THM3_FRESH_PANEL]  # the 3resnet
    judging = {r.n_train: r for r in rows if kind_of(r).trained_by_sgd and r.panel == THM3_FRESH_PANEL
               and has_number(r)}
    net = sorted((r for r in net_all if has_number(r)), key=lambda r: r.n_train)
    unmeasured = [r for r in net_all if not has_number(r)]
    src = "our illustration of NeurIPS §7 Theorem 2 and arXiv v3 §7.1"
    thr = f"α²/4 = {bound:.4f}"
    if kern:
        best_k = min(kern, key=lambda r: r.test_error if is_finite(r.test_error) else math.inf)
        kernel = Part("kernel half", f"every kernel method errs by more than α²/4 with few samples ({src})",
                      "every kernel, each tuned over its own parameters and the ridge, stays above α²/4 at every N",
                      f"best kernel {best_k.model} at N={best_k.n_train}: {best_k.test_error:.3f} "
                      f"(arXiv v3 §7.1's α²/16 = {THM3_BOUND_ARXIV:.4f} is lower still)", thr,
                      HOLDS if best_k.test_error > bound else FAILS, **_where(kern),
                      reason=f"far outside the theorem's N range ({thm3_n_range():.1f})")
    else:
        kernel = Part("kernel half", f"every kernel method errs by more than α²/4 ({src})", "—", "no kernel rows",
                      thr, NOT_JUDGED, reason="no kernel rows")
    claim = f"the ResNet learns the class below α²/4 ({src})"
    if not net:
        resnet = Part("ResNet half", claim, "—", "no finite 3resnet point", thr, NOT_JUDGED,
                      reason="no finite 3resnet point")
        return "", [kernel, resnet]
    test_best = "; ".join(_seed_count(r, bound) for r in net) + _unmeasured(unmeasured)
    robust = {r.n_train: robust_errors(r) for r in net}
    status, where = NOT_JUDGED, _where(net)
    if all(v is not None for v in robust.values()):
        in_sample = "; ".join(_robust_line(r, robust[r.n_train], bound) for r in net)
        measured = (f"test-best rule (arXiv v3 §8.1: seed 0 chooses the cell, seeds 1-8 counted): {test_best}; "
                    f"robust rule in sample (ours: among the cells whose seeds 0-8 all converged, the lowest median; "
                    f"the same seeds 1-8 counted): {in_sample}")
        reason = ("fresh seeds not run: the robust rule chose its cell on seeds 0-8, and no seed outside them was "
                  "trained at the chosen cell, so its counts are in sample; the test-best rule's fresh seeds 1-8 "
                  f"{'are' if all(majority_below(r, bound) for r in net) else 'are not'} below for a majority at "
                  "every N")
        ns = [r.n_train for r in net]
        other = [n for n in ns if n in judging and (judging[n].lr, judging[n].wd) != robust[n]["cell"]]
        if other:
            reason = ("the fresh seeds ran at another cell than the one the robust rule chooses at N = "
                      + ", ".join(map(str, other)))
        elif all(n in judging for n in ns):
            seeds = f"{THM3_FRESH_SEEDS[0]}-{THM3_FRESH_SEEDS[-1]}"
            out = "; ".join(f"N={n}: {seed_words(fresh_errors(judging[n]), bound)}, median "
                            f"{median_error(judging[n]):.4f}" for n in ns)
            measured = (f"out of sample (the robust rule's cell, chosen on seeds 0-8, retrained with seeds {seeds}): "
                        f"{out}; " + measured)
            status = HOLDS if all(majority_below(judging[n], bound) for n in ns) else FAILS
            reason = ""
            where = dict(_where(net), seeds=f"0-8 chose the cell, {seeds} judged")
    else:
        measured = f"test-best rule (arXiv v3 §8.1: seed 0 chooses the cell, seeds 1-8 counted): {test_best}"
        reason = "the robust rule needs several seeds in every cell, which this scale does not train"
    resnet = Part("ResNet half", claim, "the robust rule's cell, chosen on one set of seeds, has a majority of fresh "
                  "seeds that took no part in choosing below α²/4 at every N (diverged seeds counted)", measured,
                  thr, status, **where, reason=reason)
    return f"({thm3_hypotheses()})", [kernel, resnet]


def thm3_n_range() -> float:
    """d^(k/2)/log^k d at the instance's d and k: Theorem 2's N range up to its unknown constant."""
    return THM3_D ** (THM3_K / 2) / math.log(THM3_D) ** THM3_K


def _robust_line(r: dict, rob: dict, bound: float) -> str:
    fresh = [e for s, e in rob["errors"].items() if s != 0]
    lr, wd = rob["cell"]
    flag = "" if rob["all_converged"] else ", no cell converged for every seed"
    return (f"N={r.n_train}: {seed_words(fresh, bound)}, median {median_of(fresh):.4f} (lr {lr:g}, wd {wd:g}; "
            f"{rob['cells_converged']}/{rob['cells']} cells converged for every seed{flag})")


def _seed_count(row: Row, bound: float) -> str:
    """``N=250: 4/8 below (4 diverged, lr 0.2 at its grid edge), median 0.0067``: the 3resnet at one N."""
    errs = fresh_errors(row)
    edge = [f"{h} {getattr(row, h):g} at its grid edge" for h in ("lr", "wd")
            if getattr(row, f"{h}_at_grid_edge") and seed_counts(errs, bound)[2]]
    return (f"N={row.n_train}: {seed_words(errs, bound, tuple(edge))}, median {median_error(row):.4f}"
            + (f" (lr {row.lr:g}, wd {row.wd:g})" if is_finite(row.lr) and is_finite(row.wd)
               else ""))


def _unmeasured(rows: list[Row]) -> str:
    return f"; no finite 3resnet(all) at N={', '.join(str(r.n_train) for r in rows)}" if rows else ""


# ----------------------------------------------------------------- companion Figure 1
COMPANION_WINNER = Network("3layer", "hidden", m=1)
"""The learner the companion figure says learns best; rows are matched to it by its record's label."""


def companion_verdict(rows: list[Row]) -> tuple[str, list[Part]]:
    rows = [as_row(r) for r in rows]
    n_max = max(r.n_train for r in rows)
    name = COMPANION_WINNER.label  # 3layer(hidden)
    at_n = [r for r in rows if r.n_train == n_max and has_number(r)]
    main = [r for r in at_n if r.panel != "width"]
    three = [r for r in main if label_of(r) == name]
    others = [r for r in at_n if label_of(r) != name]  # every competitor at the largest N, width panel included
    src = "companion paper §4 and Figure 1"
    claim = f"the three-layer network learns this target better than two-layer networks and their kernels ({src})"
    if not three or not others:
        return "", [Part("3layer(hidden) below every competitor", claim, "—", f"{name} or its competitors missing",
                         "-", NOT_JUDGED, reason=f"{name} or its competitors missing")]
    mine = median_error(three[0])
    best_other = min(others, key=lambda r: best_error(r) if is_finite(best_error(r)) else math.inf)
    best = best_error(best_other)
    ok = is_finite(mine) and mine < best

    def who(r):
        return label_of(r) + (f" {_at(r)}" if r.panel == "width" or is_edge(r) else "")
    part = Part(f"{name} below every competitor", claim,
                f"at the largest N, {name}'s median over its fresh seeds (m = {three[0].m}) is below every "
                "competitor's best (its lowest seed, seed 0 included, or its exact kernel solution), at every width "
                "run", f"{name} median {mine:.3f}; best competitor {who(best_other)} {best:.3f}; margin "
                f"{best - mine:.3f} ({best / mine:.0f}×)" if ok else f"{name} median {mine:.3f}; best competitor "
                f"{who(best_other)} {best:.3f}", f"{best:.3f}", HOLDS if ok else FAILS, **_where(at_n))
    seeds = "; ".join(f"{who(r)} " + ", ".join(f"{e:.3f}" for e in sorted(e for e in seed_errors(r) if is_finite(e)))
                      + (f", exact {r.exact_test_error:.3f}" if is_finite(r.exact_test_error) else "")
                      for r in sorted(others, key=best_error))
    width = sorted([r for r in rows if r.panel == "width" and label_of(r) == name] + three,
                   key=lambda r: r.m)
    trend = ", ".join(f"m={r.m}: {median_error(r):.3f}" for r in width)
    return (f"(Every competitor's seeds at N={n_max}, lowest first: {seeds}; predicting 0 gives "
            f"{companion_zero():.3f}. Width panel, {name}: {trend}.)"), [part]


@cache
def companion_zero() -> float:
    """E‖y‖² of the companion's Figure 1 target: the error of predicting 0 (Monte Carlo, seeded)."""
    return companion_figure1().reference_errors().zero
