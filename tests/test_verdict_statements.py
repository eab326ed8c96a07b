"""No sentence of the README, the notebooks or the summaries states a verdict that the shipped results do
not derive, and every number in the verdict prose is one an output, a table or a results file shows.

The reader (tests/verdict_statements.py) is tested first on crafted sentences, false ones it must flag
and true ones it must pass, against a truth written here (so the crafted cases do not move when a shipped
label changes); then it is run on the repository."""

import math
from pathlib import Path

import pytest
from verdict_statements import (
    ILLUSTRATED,
    NOT_JUDGED,
    NOT_REPRODUCED,
    NOT_RUN,
    PARTLY,
    REPRODUCED,
    ROOT,
    Passage,
    Summary,
    Truth,
    contradictions,
    figures_named,
    markdown_passages,
    number_pool,
    read_summaries,
    readme_section,
    repository_passages,
    summary_part_conflicts,
    unbacked_numbers,
)

# A truth with every kind of label, in the wordings the summaries use or may use.
LABELS = {
    ("fig2a", "cpu"): "reproduced at this scale",
    ("fig2a", "quick"): "reproduced at this scale",
    ("fig2a", "quick-val"): "NOT reproduced at this scale",
    ("fig2b", "cpu"): "reproduced at this scale",
    ("fig2b", "quick"): "reproduced at this scale",
    ("fig3", "cpu"): "partly reproduced: α ≲ β learned at N = 1000; β = α learned, against α ≳ β",
    ("fig3", "quick"): "NOT reproduced at this scale",
    ("fig4", "cpu"): "reproduced at this scale",
    ("fig4", "quick"): "NOT reproduced at this scale",
    ("thm3", "cpu"): "illustrated (our illustration, not a figure of the paper)",
    ("thm3", "quick"): "illustrated",
    ("companion", "cpu"): "reproduced at this scale",
    ("companion", "quick"): "reproduced at this scale",
}  # fig4b: no summary anywhere, so "not run"

FALSE = [  # (sentence, the blind spot it probes)
    ("Figure 4(a) is NOT reproduced.", "4(a) is a figure"),
    ("Fig. 4a is not reproduced at cpu scale.", "short figure name"),
    ("Figure 4(a) is reproduced at quick scale.", "scale"),
    ("Figure 2(a) fails.", "a verdict without the word 'reproduce'"),
    ("We could not reproduce Figure 2(b).", "negation before the figure"),
    ("Figure 2(b) does not hold at quick scale.", "'hold' negated"),
    ("The companion's Figure 1 is not reproduced.", "the companion"),
    ("Companion Figure 1 fails at quick scale.", "the companion, scale"),
    ("Figures 2(a) and 2(b) are not reproduced.", "two figures in one sentence"),
    ("Figure 2(a) and Figure 3 are reproduced at quick scale.", "two figures, one of them false"),
    ("Figures 2–4 are reproduced.", "a range of figures"),
    ("Figure 2 is NOT reproduced at cpu scale.", "Figure 2 is both panels"),
    ("Figure 3 is reproduced.", "a partly reproduced figure called reproduced"),
    ("Figure 3 is NOT reproduced at cpu scale.", "a partly reproduced figure called not reproduced"),
    ("Figure 3 is reproduced at quick scale.", "scale"),
    ("Figure 3 is partly reproduced at quick scale.", "partly, at the wrong scale"),
    ("Figure 4(a) is only partly reproduced.", "partly, where it is reproduced"),
    ("Figure 2(a) is reproduced at cpu scale but not at quick scale.", "a second clause that drops the verb"),
    ("Figure 2(a) is reproduced at quick scale; Figure 4(a) is too.", "'is too' keeps the verdict and scale"),
    ("Every figure is reproduced at quick scale except Figure 2(b).", "'except' negates"),
    ("Not reproduced at quick scale: Figure 3 and Figure 2(b).", "'and' keeps the negation"),
    ("Figures 2(a) and 2(b) are reproduced at quick scale, Figure 4(a) is too.", "a comma between clauses"),
    ("Figure 2(a) is confirmed at every scale.", "every scale, validation selection included"),
    ("fig2a holds at quick scale with validation selection.", "quick with validation is quick-val"),
    ("The kernel-theorem curve is reproduced.", "the curve is an illustration"),
    ("The kernel-theorem curve is NOT reproduced at quick scale.", "an illustration is neither"),
    ("thm3 reproduces the theorem at cpu scale.", "the curve by its name"),
    ("Figure 4(b) is reproduced.", "a figure never run"),
    ("Figure 2(a) is reproduced at paper scale.", "a scale never run"),
    ("Figure 2(a) is reproduced at cpu scale, Figure 2(b) at quick scale, and Figure 3 is not.",
     "a verdict carried to later figures"),
    ("cpu    fig2a: yes  fig3: yes  fig4: yes", "a printed verdict row"),
    ("Rerun button for fig4 at quick scale (reproduced at this scale).", "an aside carrying the verdict"),
    ("Figure 3 (all layers trained) is confirmed at quick scale.", "an aside between subject and verb"),
]

TRUE = [
    "Figure 3 is NOT reproduced at quick scale.",
    "Figure 3 is partly reproduced.",
    "Figure 3 is partly reproduced at cpu scale but NOT reproduced at quick scale.",
    "Figure 4(a) is reproduced at cpu scale, but not at quick scale.",
    "Figure 4(a) is reproduced at cpu scale and not at quick scale.",
    "We could not reproduce Figure 4(a) at quick scale.",
    "Figures 2(a) and 2(b) are reproduced.",
    "Fig. 2a and the companion's Figure 1 hold at quick scale.",
    "Figure 2(a) fails at quick scale with validation selection.",
    "fig2a, quick scale — verdict selecting by test error: reproduced; on fresh validation samples: NOT reproduced",
    "The kernel-theorem curve is our illustration, not a figure of the paper.",
    "thm3 (every kernel against the ResNet: an illustration, not a test) and fig2a (reproduced at cpu scale).",
    "Figure 4(b) is not run: it needs a GPU.",
    "Not reproduced at quick scale: Figure 3 and Figure 4(a).",
    "Not reproduced: the paper's 0.69 (our widths stop far below its 100 000) and Figure 4(b), a GPU job with no "
    "shipped results.",
    "Every figure is reproduced at quick scale except Figure 3 and Figure 4(a).",
    "Figures 2(a) and 2(b) are reproduced at quick scale, Figure 3 is not.",
    "The kernel-theorem curve is illustrated: its kernel half holds at every N; its ResNet half fails under the "
    "paper's rule.",
    "Figure 3 is partly reproduced at cpu scale: α ≲ β is learned (holds), β = α is learned too (fails).",
    "Figure 4(a) is reproduced at cpu scale: SGD's norm (holds) and its test error (holds trivially).",
    "quick  fig2a: yes  fig3: NO  fig4: NO",
    "Figure 3's β = 0.5 row fails at N = 500.",  # a part: not set against the figure's label
    "The ResNet half of the kernel-theorem curve fails under the test-best rule.",
    "At m = 200 the ResNet's win in Figure 2(a) holds; with a hold-out of 100 samples it does not.",
    '"Figure 2(a) is not reproduced" is a misreading of the table.',  # quoted
    "Will Figure 3 be reproduced at quick scale?",
    "If Figure 3 were reproduced at quick scale, β = 0.5 would be learned there.",
    "Run `python -m resnetlearn reproduce fig3 --scale quick` to reproduce Figure 3 yourself.",
    "Figure 2(a)'s hyperparameters are ours, and Figure 3 is not judged at N = 500.",
]


@pytest.fixture(scope="module")
def truth():
    return Truth.of_labels(LABELS)


def _flags(sentence, truth, kind="prose"):
    return contradictions([Passage("crafted", sentence, kind=kind)], truth)


@pytest.mark.parametrize("sentence, probe", FALSE, ids=[p for _, p in FALSE])
def test_a_false_verdict_is_flagged(sentence, probe, truth):
    assert _flags(sentence, truth), f"not flagged ({probe}): {sentence}"


@pytest.mark.parametrize("sentence", TRUE)
def test_a_true_verdict_passes(sentence, truth):
    assert [str(c) for c in _flags(sentence, truth)] == []


def test_a_flag_names_the_figure_the_scale_the_label_and_the_sentence(truth):
    (flag,) = _flags("As the table shows, Figure 3 is reproduced at quick scale.", truth)
    assert (flag.statement.figure, flag.statement.scale, flag.statement.says, flag.truth) == \
           ("fig3", "quick", REPRODUCED, NOT_REPRODUCED)
    assert str(flag) == ("crafted: says fig3 is 'reproduced' at quick scale, but results/quick/fig3.txt ends "
                         "'-> NOT reproduced at this scale': As the table shows, Figure 3 is reproduced at quick "
                         "scale.")
    # each figure of a sentence that names several is judged on its own
    flags = _flags("Figures 2(a), 2(b) and 3 are reproduced at quick scale.", truth)
    assert [(f.statement.figure, f.statement.scale) for f in flags] == [("fig3", "quick")]


@pytest.mark.parametrize("text, named", [
    ("Figure 2(a)", ["fig2a"]), ("Fig. 2b", ["fig2b"]), ("fig4b", ["fig4b"]), ("Figure 4(a)", ["fig4"]),
    ("Figures 2(a), 2(b) and 3", ["fig2a", "fig2b", "fig3"]), ("Figures 2–4", ["fig2a", "fig2b", "fig3", "fig4"]),
    ("Figure 2(a) and 2(b)", ["fig2a", "fig2b"]), ("results/cpu/fig4.txt", ["fig4"]),
    ("the kernel-theorem curve", ["thm3"]), ("the companion's Figure 1", ["companion"]),
    ("Figure 1 of the paper", []), ("probe_fig2a_3resnet_all_val_cpu.txt", []), ("Figure 2(a), 200 and 500", ["fig2a"]),
])
def test_every_way_prose_names_a_figure(text, named):
    assert figures_named(text) == named


def test_a_summary_speaks_of_its_own_figure_at_its_own_scale(truth):
    passage = Passage("results/quick/fig3.txt", "fig3: Claim: … [rule: a row fails when any seed is below] "
                      "Here: the sweep is reproduced at this scale.", kind="summary", figure="fig3", scale="quick")
    (flag,) = contradictions([passage], truth)
    assert (flag.statement.figure, flag.statement.scale) == ("fig3", "quick")
    assert contradictions([Passage("x", passage.text.replace("reproduced", "NOT reproduced"), kind="summary",
                                   figure="fig3", scale="quick")], truth) == []


def test_a_summary_judges_its_parts_without_naming_its_figure(truth):
    body = ("fig4: Claim: … (arXiv v3 §8.2, Figure 4(a)) Here: the norm half (holds); SGD's test error holds "
            "trivially (no better than predicting 0); the width part fails.")
    partly = Truth.of_labels({("fig4", "cpu"): "partly reproduced: the norm half holds"})
    assert contradictions([Passage("results/cpu/fig4.txt", body, "summary", "fig4", "cpu")], partly) == []
    claim = "thm3: Claim (reproduced, not tested): kernels cannot …"  # a figure named, an aside with a verdict
    assert contradictions([Passage("results/cpu/thm3.txt", claim, "summary", "thm3", "cpu")], truth)


def _summary(label, body, folder=Path("results/cpu")):
    return Summary("fig3", "cpu", folder / "fig3.txt", body, label, Truth.of_labels({("fig3", "cpu"): label})
                   .verdict("fig3", "cpu")[0])


def test_a_summary_label_agrees_with_its_own_parts():
    body = "fig3: Here: kernel half (holds); ResNet half (holds under the robust rule; fails under the test-best rule)"
    (conflict,) = summary_part_conflicts(_summary("reproduced at this scale", body))
    assert "fails under the test-best rule" in conflict
    assert summary_part_conflicts(_summary("partly reproduced: the kernel half holds", body)) == []
    trivially = "fig3: Here: β=1: learned — as claimed; β=0.2: holds trivially (no better than predicting 0)"
    assert summary_part_conflicts(_summary("reproduced at this scale", trivially))
    every_part_holds = "fig3: Here: β=1 (all): learned — as claimed; β=0 (all): not learned — as claimed"
    assert summary_part_conflicts(_summary("NOT reproduced at this scale", every_part_holds))
    at_other_n = ("fig3: [rule: the verdict is taken (all) at N=1000] Here: β=0.5 (all, N=500): not learned — "
                  "NOT as claimed; β=0.5 (all, N=1000): learned — as claimed. Not as claimed at the other N "
                  "(reported, not the verdict): β=0.5 (all, N=500).")
    assert summary_part_conflicts(_summary("reproduced at this scale", at_other_n)) == []


def test_labels_are_read_from_the_summaries_in_any_wording(tmp_path):
    labels = {"fig2a": ("reproduced at this scale", REPRODUCED), "fig2b": ("NOT reproduced at this scale",
                                                                          NOT_REPRODUCED),
              "fig3": ("partly reproduced: the α ≲ β rows are learned", PARTLY),
              "thm3": ("illustrated (not a figure of the paper)", ILLUSTRATED), "fig4": ("not run", NOT_RUN),
              "fig4b": ("open: no rule decides it", NOT_JUDGED)}
    for scale in ("quick", "cpu", "quick-val"):
        (tmp_path / scale).mkdir()
        for name, (label, _) in labels.items():
            (tmp_path / scale / f"{name}.txt").write_text(f"{name}: Claim: x. Here: y. -> {label}\n")
    summaries = read_summaries(tmp_path)
    assert {k: s.verdict for k, s in summaries.items() if k[1] == "cpu"} == \
           {(name, "cpu"): verdict for name, (_, verdict) in labels.items()}
    truth = Truth(summaries)
    assert truth.default_scale("fig2a") == "cpu"
    assert truth.verdict("fig4b", "paper") == (NOT_RUN, "no results/paper/fig4b.txt")
    (tmp_path / "cpu" / "companion.txt").write_text("companion: Here: z. -> splendid\n")
    with pytest.raises(ValueError, match="companion.txt: the label 'splendid' says none of"):
        read_summaries(tmp_path)
    (tmp_path / "cpu" / "companion.txt").write_text("companion: Here: z.\n")
    with pytest.raises(ValueError, match="no label"):
        read_summaries(tmp_path)


# ----------------------------------------------------------------------------------------- the repository
# What the reader flags in the shipped text today, each with what fixes it. The test fails on any other
# flag, and on an entry here that no longer flags (delete it then).
KNOWN_CONTRADICTIONS: list[tuple[str, str, str]] = []

# Constants of the papers and numbers derived from them in the text itself, not from a run.
ALLOWED_NUMBERS = (
    15 * 0.3**2,  # kα² = 1.35 (§8.1: k = 15, α = 0.3)
    15 * (1 + 0.3**2),  # predicting 0 at β = 1: 16.35
    0.3**2 / 4, 0.3**2 / 16,  # the kernel theorem's bounds α²/4 (NeurIPS) and α²/16 (arXiv v3 §7.1)
    0.69, 0.3, 9.7, 0.12,  # §8.2: the paper's SGD, the near-minimal-norm level, footnote 16's ‖W‖_F/√d and error
    0.98,  # §8.2: the paper's SGD on Figure 4(b)
    100_000, 50_000, 2000, 5000, 500, 1000, 40, 100, 800, 400,  # §8.1-8.2 widths, N, d, batch, epochs, lr drop
    math.comb(30, 4), math.comb(30, 4) // 1000, 0.99, 99,  # the §7 theorem's range at d = 30, k = 4; its 99 %
    4**2 * 30 / 0.3**8,  # arXiv v3 Corollary 7.1's N ≈ k²d/α⁸ at k = 4, d = 30
)

KNOWN_NUMBERS: list[tuple[str, str, str]] = []


def _classify(flags, known):
    """Flags matched by a known entry, unknown flags, and known entries that match no flag."""
    matched, new = [], []
    for flag in flags:
        entry = next((k for k in known if k[0] in flag and k[1] in flag), None)
        (matched if entry else new).append((flag, entry))
    stale = [k for k in known if not any(k[0] in f and k[1] in f for f in flags)]
    return matched, [f for f, _ in new], stale


def _report(matched, new, stale):
    if new:
        pytest.fail("flagged, and not among the known flags:\n" + "\n\n".join(new))
    if stale:
        pytest.fail("known flags that no longer flag (delete them from this test):\n"
                    + "\n".join(f"{where}: {text}" for where, text, _ in stale))
    if matched:
        pytest.xfail("known flags, to fix:\n" + "\n\n".join(f"{flag}\n  FIX: {entry[2]}" for flag, entry in matched))


@pytest.fixture(scope="module")
def shipped():
    return Truth(read_summaries())


def test_the_reader_reads_everything(shipped):
    passages = repository_passages()
    read = {p.where.split(",")[0] for p in passages}
    notebooks = {str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").glob("*.ipynb")}
    summaries = {str(p.relative_to(ROOT)) for p in (ROOT / "results").glob("*/*.txt")}
    assert {"README.md"} | notebooks | summaries <= read
    assert any(p.kind == "output" and "04_kernel_failure.ipynb" in p.where for p in passages)
    assert {s for _, s in shipped.summaries} >= {"quick", "cpu", "quick-val"}


def test_no_sentence_of_the_repository_contradicts_the_shipped_labels(shipped):
    flags = [str(c) for c in contradictions(repository_passages(), shipped)]
    flags += [c for s in shipped.summaries.values() for c in summary_part_conflicts(s)]
    _report(*_classify(flags, KNOWN_CONTRADICTIONS))


VERDICT_PROSE = ("04_kernel_failure", "04_kernel_failure_deep_dive", "05_reproducing_the_paper",
                 "05_reproducing_the_paper_deep_dive")


@pytest.fixture(scope="module")
def pool():
    return number_pool()


def test_every_number_in_the_verdict_prose_is_shown_by_an_output_or_a_table(pool):
    passages = [readme_section("Reproducing the paper", ROOT / "docs" / "reproducing.md"),
                readme_section("What the reproduction found")]
    for name in VERDICT_PROSE:
        passages += markdown_passages(ROOT / "notebooks" / f"{name}.ipynb")
    flags = [str(u) for u in unbacked_numbers(passages, pool, ALLOWED_NUMBERS)]
    _report(*_classify(flags, [(w, f"{n} is in no output", fix) for w, n, fix in KNOWN_NUMBERS]))


@pytest.mark.parametrize("sentence, unbacked", [
    ("Figure 4(a)'s SGD reaches 0.437 at m = 2000.", ["0.437"]),  # no run printed 0.437
    ("Figure 2(a)'s ResNet has median 0.096 at m = 200 (8/8 fresh seeds).", []),  # notebook 05 prints it
    ("Its median is 0.1 at m = 200.", []),  # 0.096 rounded to the digits written
    ("Figures 2(a), 2(b) and 3: 0.335 at m = 50 and 0.512 at m = 500.", ["0.512"]),  # after a list of figures
    ("Figure 3's β = 0.5 (all) row at N = 1000 has median 0.4317.", ["0.4317"]),
    ("kα² = 1.35, predicting 0 costs 16.35, the paper's SGD reached 0.69.", []),  # constants of the paper
    ("The rerun takes 61.7 % of a 2-core CPU for 12 345 s.", ["61.7 %", "12 345"]),
    ("§8.1, Figure 2(a), Theorem 1, eq 2.2, lessons 3 and 4, arXiv v3, (Allen-Zhu and Li, 2019) and 2026-11-26 "
     "state no number.", []),
    ("Theorem 1 needs $N\\gtrsim10^{12}$ and α below $1.7\\cdot10^{-7}$, and $N\\approx3\\cdot10^{9}$.",
     ["3\\cdot10^{9}"]),
])
def test_a_number_no_output_shows_is_reported_with_its_sentence(sentence, unbacked, pool):
    found = unbacked_numbers([Passage("crafted", sentence)], pool, ALLOWED_NUMBERS)
    assert [u.number for u in found] == unbacked
    assert all(str(u) == f"crafted: {u.number} is in no output, table or results file: {sentence}" for u in found)
