"""Each figure's verdict: the paper's claim set against the rows of a figure table, in the paper's terms.

One verdict per experiment of :data:`resnetlearn.reproduce.figures.SPECS`, with the constants and reference
errors its rule reads: Figures 2(a) and 2(b) (arXiv v3 §8.1: only the ResNet gets a strict majority of its fresh
seeds below kα²), Figure 3 (§8.1, Experiment 2: learned when α ≲ β, not when α ≳ β), Figures 4(a) and 4(b)
(§8.2: SGD finds neither the test error nor the ‖W‖_F of a near-minimal-norm fit), the §7 hard instance (NeurIPS
§7 Theorem 2, arXiv v3 §7.1: kernels stay above α²/4 while the ResNet goes below) and the companion paper's
Figure 1. Each takes the rows (read through :mod:`resnetlearn.reproduce.rows`) and returns the paragraph that
states the rule and what the rows show, and True / False, or None where the rows cannot decide it.
"""

from __future__ import annotations

import math
from functools import cache

from ..targets.concept import companion_figure1, parity_instance
from ..validation import is_finite
from .learner import Network, kind_of, label_of
from .rows import (
    SEED_RULE,
    below,
    best_error,
    fresh_errors,
    has_number,
    majority_below,
    median_error,
    median_of,
    robust_errors,
    seed_counts,
    seed_words,
    seeds_below,
)


@cache
def parity_threshold() -> float:
    """kα² = 1.35 of the §8.1 instance (α = 0.3, k = 15): the error of learning F but nothing of G."""
    return parity_instance().reference_errors().f_only


@cache
def parity_zero() -> float:
    """k(1 + α²) = 16.35: the error of predicting 0 on the §8.1 instance."""
    return parity_instance().reference_errors().zero


# ----------------------------------------------------------------- Figure 2
def fig2_verdict(train_mode: str):
    def verdict(rows: list[dict]) -> tuple[str, bool | None]:
        thr = parity_threshold()
        winner = Network("3resnet", train_mode, m=1).label  # the learner §8.1 says wins, named by its record
        rows = [r for r in rows if has_number(r)]
        mine = sorted((r for r in rows if label_of(r) == winner), key=lambda r: r["m"])
        wins = [r for r in mine if majority_below(r, thr)]
        others = [r for r in rows if label_of(r) != winner]
        against = [r for r in others if is_finite(best_error(r)) and best_error(r) < thr]
        best_other = min(others, key=lambda r: best_error(r) if is_finite(best_error(r)) else math.inf,
                         default=None)
        seeds = "; ".join(f"m={r['m']}: {seeds_below(r, thr)}, "
                          f"median {median_error(r):.3f}" for r in mine)
        ok = (bool(wins) and not against) if mine else None
        text = (f"[{SEED_RULE}; threshold kα² = {thr:.2f}, predicting 0 gives {parity_zero():.2f}] Here: "
                f"{winner} {seeds if mine else 'has no finite point'}. ")
        if best_other is not None:
            text += (f"Best competitor {label_of(best_other)} at m={best_other['m']}: {best_error(best_other):.3f}"
                     + (" (exact kernel solution)" if best_other.get("exact_test_error") == best_error(best_other)
                        else "") + ".")
        if against:
            text += " Below kα² against the claim: " + ", ".join(
                f"{label_of(r)} m={r['m']} ({best_error(r):.3f})" for r in against) + "."
        return text, ok
    return verdict


# ----------------------------------------------------------------- Figure 3
FIG3_BETAS = (0.0, 0.2, 0.3, 0.5, 1.0)
FIG3_ALPHA = 0.3
FIG3_MODES = ("all", "hidden")
"""Figure 3's learners: the §6 ResNet (3resnet) trained in these modes, in this order (panels, verdict rows)."""


def _fig3_expected(beta: float) -> bool | None:
    """The paper's statement per row: learned when α ≲ β (β > α), not when α ≳ β (β < α); β = α is the boundary."""
    if math.isclose(beta, FIG3_ALPHA):
        return None
    return beta > FIG3_ALPHA


@cache
def fig3_zero(beta: float) -> float:
    """The error of predicting 0 on Figure 3's target β·F + α·G(F) (α = 0.3): k(β² + α²) on the §8.1 instance,
    1.35 at β = 0 and 1.95 at β = 0.2, so a row with β ≤ α can sit above kα² and still learn nothing."""
    return parity_instance(alpha=FIG3_ALPHA, beta=beta).reference_errors().zero


def _fig3_rows(rows: list[dict]) -> list[tuple[str, int, float, list[dict]]]:
    """(mode, N, β, its finite points by width) for every row of Figure 3, in the order the verdict reads them."""
    groups = sorted({(r["mode"], r.get("n_train")) for r in rows},
                    key=lambda g: (FIG3_MODES.index(g[0]) if g[0] in FIG3_MODES else 2, g[1] or 0))
    return [(mode, n, beta, sorted((r for r in rows if (r["mode"], r.get("n_train")) == (mode, n)
                                    and r["beta"] == beta and has_number(r)), key=lambda r: r["m"]))
            for mode, n in groups for beta in sorted(FIG3_BETAS, reverse=True)]


def fig3_verdict(rows: list[dict]) -> tuple[str, bool | None]:
    thr = parity_threshold()
    parts, failed, unjudged = [], {}, []
    n_of = {}  # the N each mode is judged at: its largest (the talk's N = 1000 where it runs)
    for mode, n, _, _ in _fig3_rows(rows):
        n_of[mode] = max(n_of.get(mode, 0), n or 0)
    several = len({(r["mode"], r.get("n_train")) for r in rows}) > len(n_of)
    for mode, n, beta, sel in _fig3_rows(rows):
        name = f"β={beta:g} ({mode}" + (f", N={n}" if several else "") + ")"
        if not sel:
            parts.append(f"{name}: no finite point, cannot be judged")
            unjudged.append((mode, n, beta))
            continue
        expected = _fig3_expected(beta)
        learned = [r for r in sel if majority_below(r, thr)]
        top = max(sel, key=lambda r: below(r, thr)[0] - median_error(r) * 1e-9)
        got = bool(learned)
        if expected is False:  # a negative statement: any seed below, at any width, counts against it
            touched = [r for r in sel if is_finite(best_error(r)) and best_error(r) < thr]
            got = bool(touched)
            if touched and not learned:
                learned = touched
        status = ("boundary, not judged" if expected is None else
                  "as claimed" if got == expected else "NOT as claimed")
        zero = fig3_zero(beta)
        trivial = (f"; predicting 0 gives {zero:.2f}, so not better than predicting 0"
                   if not learned and is_finite(median_error(top)) and median_error(top) >= zero
                   else f"; predicting 0 gives {zero:.2f}" if beta < FIG3_ALPHA else "")
        where = ("learned at " + ", ".join(f"m={r['m']} ({seeds_below(r, thr, word='seeds')})"
                                           for r in learned) if learned
                 else f"not learned (best m={top['m']}: {seeds_below(top, thr)}, median "
                      f"{median_error(top):.3f}{trivial})")
        parts.append(f"{name}: {where} — {status}")
        if expected is not None and got != expected:
            failed.setdefault((n or 0) == n_of[mode], []).append(name)
    judged_n = any(_fig3_expected(b) is not None and (n or 0) == n_of[m] for m, n, b in unjudged)
    ok = False if failed.get(True) else None if judged_n else True
    by_n = ", ".join(f"({mode}) at N={n}" for mode, n in n_of.items())
    text = (f"[rule: a row counts as learned at a width when a strict majority of its fresh initialisation seeds "
            f"(the selected lr/wd cell retrained; seed 0, which selected the cell, is not counted) are below kα²; "
            f"a row expected not to learn fails when any of its seeds, seed 0 included, is below; "
            f"threshold kα² = {thr:.2f}; β = α = 0.3 is the boundary of both "
            f"statements and is reported, not judged; rows with β < α are also set against predicting 0, "
            f"k(β² + α²); arXiv v3 gives no N for Figure 3: the verdict is taken {by_n} (the talk's version of "
            f"this experiment uses N = 1000)" + ("; rows at any other N are reported beside it" if several else "")
            + "] Here: " + "; ".join(parts) + "."
            + (f" Rows not reproduced: {', '.join(failed[True])}." if failed.get(True) else "")
            + (f" Not as claimed at the other N (reported, not the verdict): {', '.join(failed[False])}."
               if failed.get(False) else ""))
    return text, ok


# ----------------------------------------------------------------- Figure 4 (§8.2)
FIG4_GENERALISES = 0.3
"""§8.2: a near-minimal-norm solution that fits the training set would have test error below 0.3."""


def norm_verdict(paper_best: float, paper_widths: int):
    """§8.2's two statements on these rows: SGD's best test error stays above what a near-minimal-norm fit
    would give, and a hand-built solution fits at least as well as SGD with a smaller ‖W‖_F."""
    def verdict(rows: list[dict]) -> tuple[str, bool | None]:
        hand = [r for r in rows if kind_of(r).constructed]
        sgd = [r for r in rows if not kind_of(r).constructed]
        runs = [g for r in sgd for g in (r.get("grid") or []) if all(is_finite(v) for v in g)]  # (train, test, ‖W‖_F)
        if not runs or not hand:
            return "no finite SGD run or no hand-built solution", None
        reruns = ([e for r in sgd for e in fresh_errors(r) if is_finite(e)]
                  if any(r.get("seed_errors") for r in sgd) else [])
        best_test = min([g[1] for g in runs] + reruns)  # every searched run and every fresh seed of a selected cell
        fit = min(runs, key=lambda g: g[0])  # SGD's best training fit
        cheaper = [h for h in hand if h["test_error"] <= fit[0] and h["frobenius_W"] < fit[2]]
        finite_hand = [h for h in hand if is_finite(h.get("test_error"))] or hand
        h = (min(cheaper, key=lambda h: h["frobenius_W"]) if cheaper
             else min(finite_hand, key=lambda h: h["test_error"]))
        widths = sorted({r["m"] for r in sgd})
        ok = best_test > FIG4_GENERALISES and bool(cheaper)
        return (f"[rule: SGD's best test error over every searched run stays above {FIG4_GENERALISES} (the level a "
                f"near-minimal-norm fit would reach, §8.2), and a hand-built solution at least as accurate as SGD's "
                f"best training fit has a smaller ‖W‖_F] Here (d = {sgd[0].get('d')}, N = {sgd[0].get('n_train')}): "
                f"SGD's test errors {best_test:.3f}–{max(g[1] for g in runs):.3f} over its {len(runs)} finite runs "
                f"(predicting 0: 1.0)"
                + (f", its selected cells retrained with fresh seeds {min(reruns):.3f}–{max(reruns):.3f}"
                   if reruns else "")
                + ", the best over widths "
                f"{', '.join(map(str, widths))} (paper: {paper_best} after searching m up to {paper_widths}; we "
                f"searched far narrower networks and cannot say whether width explains the gap); SGD's best training "
                f"fit {fit[0]:.3f} needs ‖W‖_F {fit[2]:.1f}, a hand-built one with error {h['test_error']:.3f} has "
                f"‖W‖_F {h['frobenius_W']:.1f}." + _fit_note(runs)), ok
    return verdict


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



THM3_BOUND_NEURIPS = THM3_ALPHA ** 2 / 4
"""The kernel bound of NeurIPS §7 Theorem 2 (announced as Theorem 3 in its overview): error above α²/4."""
THM3_BOUND_ARXIV = THM3_ALPHA ** 2 / 16
"""arXiv v3 §7.1's different theorem (any Mercer kernel, any weights, N ≤ C(d₁, k)/1000): error above α²/16."""


def thm3_verdict(rows: list[dict]) -> tuple[str, bool | None]:
    bound = THM3_BOUND_NEURIPS
    kern = [r for r in rows if not kind_of(r).trained_by_sgd and has_number(r)]
    net = [r for r in rows if kind_of(r).trained_by_sgd]  # the 3resnet
    if not kern or not net:
        return "kernels or 3resnet missing", None
    best_k = min(kern, key=lambda r: r["test_error"] if is_finite(r["test_error"]) else math.inf)
    unmeasured = [r for r in net if not has_number(r)]
    net = sorted((r for r in net if has_number(r)), key=lambda r: r["n_train"])
    kernel_ok = best_k["test_error"] > bound
    paper_ok = bool(net) and all(majority_below(r, bound) for r in net)
    robust = {r["n_train"]: robust_errors(r) for r in net}
    have_robust = bool(net) and all(v is not None for v in robust.values())

    def robust_line(r):
        rob = robust[r["n_train"]]
        fresh = [e for s, e in rob["errors"].items() if s != 0]
        lr, wd = rob["cell"]
        flag = "" if rob["all_converged"] else ", no cell converged for every seed"
        return (f"N={r['n_train']}: {seed_words(fresh, bound)}, median {median_of(fresh):.4f} (lr {lr:g}, wd {wd:g}; "
                f"{rob['cells_converged']}/{rob['cells']} cells converged for every seed{flag})")

    robust_ok = have_robust and all(
        seed_counts(f := [e for s, e in robust[r["n_train"]]["errors"].items() if s != 0], bound)[0] * 2 > len(f)
        for r in net)
    net_ok = robust_ok if have_robust else paper_ok
    ok = kernel_ok and net_ok
    if ok and unmeasured:  # the claim is about every N: an unmeasured N leaves it open
        ok = None
    kernel_half = (f"Kernel half ({'holds' if kernel_ok else 'fails'}): best kernel {best_k['model']} at "
                   f"N={best_k['n_train']}: {best_k['test_error']:.3f} against α²/4 = {bound:.4f} (NeurIPS form; "
                   f"arXiv v3 §7.1's form α²/16 = {THM3_BOUND_ARXIV:.4f} is lower still).")
    paper_half = ("test-best rule (arXiv v3 §8.1: seed 0's test error picks lr, wd; its other seeds counted): "
                  + "; ".join(_seed_count(r, bound) for r in net) + _unmeasured(unmeasured))
    if have_robust:
        resnet_half = (f" ResNet half ({'holds' if robust_ok else 'fails'} under the robust rule; "
                       f"{'holds' if paper_ok else 'fails'} under the test-best rule): robust rule (ours: among "
                       f"the lr × wd cells whose 9 seeds all converged, the lowest median test error; seeds 1-8 "
                       f"counted): " + "; ".join(robust_line(r) for r in net) + "; " + paper_half + ".")
    else:
        resnet_half = (f" ResNet half ({'holds' if paper_ok else 'fails'}; the robust rule needs several seeds "
                       f"in every cell, which this scale does not train): " + paper_half + ".")
    return (f"[{thm3_hypotheses()} Rule, two parts: every kernel (each tuned over its own parameters and the "
            f"ridge) stays above α²/4 = {bound:.4f} at every N; the 3resnet is below it for a majority of its "
            f"seeds at every N, judged by the robust rule where the grid has several seeds per cell (else by the "
            f"test-best rule); diverged seeds are counted apart from converged ones above the bound] Here: "
            + kernel_half + resnet_half), ok


def _seed_count(row: dict, bound: float) -> str:
    """``N=250: 4/8 below (4 diverged, lr 0.2 at its grid edge), median 0.0067``: the 3resnet at one N."""
    errs = fresh_errors(row)
    edge = [f"{h} {row[h]:g} at its grid edge" for h in ("lr", "wd")
            if row.get(f"{h}_at_grid_edge") and seed_counts(errs, bound)[2]]
    return (f"N={row['n_train']}: {seed_words(errs, bound, tuple(edge))}, median {median_error(row):.4f}"
            + (f" (lr {row['lr']:g}, wd {row['wd']:g})" if is_finite(row.get("lr")) and is_finite(row.get("wd"))
               else ""))


def _unmeasured(rows: list[dict]) -> str:
    return f"; no finite 3resnet(all) at N={', '.join(str(r['n_train']) for r in rows)}" if rows else ""


# ----------------------------------------------------------------- companion Figure 1
COMPANION_WINNER = Network("3layer", "hidden", m=1)
"""The learner the companion figure says learns best; rows are matched to it by its record's label."""


def companion_verdict(rows: list[dict]) -> tuple[str, bool | None]:
    n_max = max(r["n_train"] for r in rows)
    name = COMPANION_WINNER.label  # 3layer(hidden)
    main = [r for r in rows if r.get("panel") != "width" and r["n_train"] == n_max and has_number(r)]
    three = [r for r in main if label_of(r) == name]
    others = [r for r in main if label_of(r) != name]
    if not three or not others:
        return f"{name} or its competitors missing", None
    mine = median_error(three[0])
    best_other = min(others, key=lambda r: best_error(r) if is_finite(best_error(r)) else math.inf)
    ok = is_finite(mine) and mine < best_error(best_other)
    width = sorted([r for r in rows if r.get("panel") == "width" and label_of(r) == name] + three,
                   key=lambda r: r["m"])
    trend = ", ".join(f"m={r['m']}: {median_error(r):.3f}" for r in width)
    return (f"[rule: at the largest N, {name}'s median over seeds is below every competitor's best "
            f"(lowest seed or exact kernel solution)] Here at N={n_max}: {name} median {mine:.3f}; best "
            f"competitor {label_of(best_other)} {best_error(best_other):.3f} ("
            + ", ".join(f"{label_of(r)} {best_error(r):.3f}" for r in others)
            + f"); predicting 0 gives {companion_zero():.3f}. Width panel, {name}: "
            f"{trend}."), ok


@cache
def companion_zero() -> float:
    """E‖y‖² of the companion's Figure 1 target: the error of predicting 0 (Monte Carlo, seeded)."""
    return companion_figure1().reference_errors().zero
