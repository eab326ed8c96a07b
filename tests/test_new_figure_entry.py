"""A new figure is one entry: one :class:`~resnetlearn.reproduce.figures.FigureSpec` added to
:data:`~resnetlearn.reproduce.figures.SPECS` — and nothing else patched — is run by the command line like the
paper's figures, its table, per-run table, summary with its verdict, plot and checksums written, and it is listed
by ``names_at`` and ``--help``. (A new architecture and a new kernel are one entry too:
tests/test_training.py::test_a_new_architecture_is_one_entry, tests/test_kernels.py::test_a_new_kernel_is_one_entry.)
"""

import csv

import pytest

from resnetlearn import __main__ as cli
from resnetlearn.reproduce import figures
from resnetlearn.reproduce.figures import FigureSpec, names_at
from resnetlearn.reproduce.learner import Network
from resnetlearn.reproduce.verdict_parts import FAILS, HOLDS, Part

CLAIM = "Claim (a test's): the wider two-layer network fits the parity better."


def _points(scale, base):
    return [base.replace(learner=Network("2layer", "all", m=m), n_train=60) for m in (8, 16)]


def _verdict(rows):
    """The figure's own rule, written once: one part, which holds when the wider network's test error is the
    lower."""
    by_m = {r["m"]: r["test_error"] for r in rows}
    return "", [Part("wider fits better", "the wider network fits the parity better", "m=16's error below m=8's",
                     f"m=16 {by_m[16]:.4f}", f"m=8 {by_m[8]:.4f}", HOLDS if by_m[16] < by_m[8] else FAILS)]


NEWFIG = FigureSpec(name="newfig", title="A new figure", headline="A new figure (test: wider fits better)",
                    source="tests/test_new_figure_entry.py", claim=CLAIM, xkey="m", points=_points, verdict=_verdict,
                    scales=("tiny",))


@pytest.fixture
def newfig(monkeypatch):
    monkeypatch.setitem(figures.SPECS, "newfig", NEWFIG)  # the one entry; nothing else is patched


def test_a_new_figure_is_one_entry(newfig, tmp_path, capsys):
    assert "newfig" in names_at("tiny") and "newfig" not in names_at("quick")
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "--help"])
    assert "newfig (tiny only)" in " ".join(capsys.readouterr().out.split())
    out = tmp_path / "tmp"
    assert cli.main(["reproduce", "newfig", "--scale", "tiny", "--device", "cpu", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out / "newfig.csv")))
    assert [(r["figure"], r["model"], r["mode"], r["m"], r["n_train"]) for r in rows] == [
        ("newfig", "2layer", "all", "8", "60"), ("newfig", "2layer", "all", "16", "60")]
    assert {r["figure"] for r in csv.DictReader(open(out / "newfig_runs.csv"))} == {"newfig"}
    # the summary is the entry's claim, source and verdict, judged on the table's own numbers
    _, (part,) = _verdict([{"m": int(r["m"]), "test_error": float(r["test_error"])} for r in rows])
    word = "reproduced" if part.status == HOLDS else "not reproduced"
    summary = f"newfig: {CLAIM} (tests/test_new_figure_entry.py) Part 1: {part.text()}. -> {word}"
    assert (out / "newfig.txt").read_text() == summary + "\n"
    assert summary in capsys.readouterr().out
    assert (out / "newfig.png").read_bytes()[:4] == b"\x89PNG" and (out / "newfig.sha256").exists()
    assert len(list((out / "store" / "newfig").glob("*.json"))) == 2  # each point stored under its figure


def test_a_new_figure_is_listed_wherever_the_figures_are_listed(monkeypatch):
    """The lists of figures are read from SPECS when asked for, not snapshotted at import: an entry added later
    (at every scale here) is in ``names()``, ``every_scale()`` and ``resnetlearn.reproduce.every_scale()``
    (what notebook 05 reads)."""
    from dataclasses import replace

    import resnetlearn.reproduce as R

    before = figures.every_scale()
    monkeypatch.setitem(figures.SPECS, "newfig_all", replace(NEWFIG, name="newfig_all", scales=figures.SCALES))
    assert figures.names()[-1] == "newfig_all" and figures.every_scale() == (*before, "newfig_all")
    assert R.every_scale() == figures.every_scale()
    assert "newfig_all" in names_at("quick") and "fig4b" not in figures.every_scale()
