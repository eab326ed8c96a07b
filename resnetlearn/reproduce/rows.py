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
"""

from __future__ import annotations

import math

from ..learners.selection import robust_cell
from ..validation import is_finite


def seed_errors(row: dict) -> list[float]:
    """Test errors of the selected cell over every initialisation seed (NaN: diverged)."""
    errs = row.get("seed_errors")
    return list(errs) if errs else [row.get("test_error", math.nan)]


def fresh_errors(row: dict) -> list[float]:
    """The reruns of the selected cell with fresh seeds. Seed 0's run is left out when reruns exist:
    it chose the cell by its test error on the same test set, so it is the optimistic one."""
    errs = seed_errors(row)
    return errs[1:] if len(errs) > 1 else errs


def below(row: dict, threshold: float) -> tuple[int, int]:
    """(fresh seeds below ``threshold``, fresh seeds in all); a diverged seed is not below."""
    errs = fresh_errors(row)
    return sum(1 for e in errs if is_finite(e) and e < threshold), len(errs)


def seeds_below(row: dict, threshold: float, word: str = "seeds below") -> str:
    """``7/8 seeds below`` with, where any fresh seed diverged, the count of those apart from the ones that
    trained and ended above: ``4/8 seeds below (4 diverged)``, ``5/8 seeds below (2 converged above, 1 diverged)``."""
    errs = fresh_errors(row)
    n_below = sum(1 for e in errs if is_finite(e) and e < threshold)
    diverged = sum(1 for e in errs if not is_finite(e))
    above = len(errs) - n_below - diverged
    notes = ([f"{above} converged above"] if above and diverged else []) + (
        [f"{diverged} diverged"] if diverged else [])
    return f"{n_below}/{len(errs)} {word}" + (f" ({', '.join(notes)})" if notes else "")


def majority_below(row: dict, threshold: float) -> bool:
    n_below, n = below(row, threshold)
    return n_below * 2 > n


def plotted_error(row: dict) -> float:
    """The number a figure draws for a point (static and interactive alike, and the tables' ``plotted``
    column): the median over fresh initialisation seeds, and for a (last)/(ntk) point the better of that
    and its exact kernel solution (every competitor at its best)."""
    med = median_error(row)
    exact = row.get("exact_test_error")
    if is_finite(exact) and not (is_finite(med) and med <= exact):
        return exact
    return med


def best_error(row: dict) -> float:
    """A competitor's best shot: the lowest of its seeds and of its exact kernel solution."""
    vals = [e for e in seed_errors(row) + [row.get("exact_test_error")] if is_finite(e)]
    return min(vals) if vals else math.nan


def median_error(row: dict) -> float:
    """The median over the fresh seeds that did not diverge (NaN when all diverged)."""
    return median_of(fresh_errors(row))


def has_number(row: dict) -> bool:
    """Whether a point produced any finite error (its grid did not diverge entirely, or it has an exact solution)."""
    return is_finite(row.get("test_error")) or is_finite(row.get("exact_test_error"))

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


def robust_errors(row: dict) -> dict | None:
    """The robust rule's choice for a point whose grid ran several seeds in every cell
    (:func:`resnetlearn.learners.selection.robust_cell`, on the point's ``runs``): its cell and its seeds' errors in
    seed order (seed 0 first); None where the point has no such grid (then only the paper's rule applies)."""
    key = "val_error" if row.get("select") == "val" else "test_error"
    got = robust_cell(row.get("runs") or [], key) if row.get("runs") else None
    if got is None:
        return None
    if key != "test_error":  # chosen on validation: report the chosen cell's test errors
        tests = {r["seed"]: r["test_error"] for r in row["runs"] if r.get("role", "grid") == "grid"
                 and (r["lr"], r["wd"]) == got["cell"]}
        got = dict(got, errors={s: tests.get(s, math.nan) for s in got["errors"]})
    return got


def rules_side_by_side(row: dict, threshold: float) -> str:
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
    return (f" [rules disagree: test-best lr {row.get('lr'):g}, wd {row.get('wd'):g}: "
            f"{seed_words(fresh_errors(row), threshold)}; robust lr {lr:g}, wd {wd:g}: "
            f"{seed_words(fresh, threshold)}, median {median_of(fresh):.4f}]")


def median_of(values: list[float]) -> float:
    """The median of the finite ``values`` (NaN when none is finite): a diverged seed has no error to rank."""
    vals = sorted(v for v in values if is_finite(v))
    if not vals:
        return math.nan
    n = len(vals)
    return vals[n // 2] if n % 2 else 0.5 * (vals[n // 2 - 1] + vals[n // 2])
