"""A verdict as a record of parts: each claim of a figure split into the statements the paper makes, each judged
on its own, and one function that derives the figure's label from them.

A :class:`Part` is one statement in the paper's terms (for example "every competitor stays above kα²", arXiv v3
§8.1) with the rule that judges it, the measured value, the threshold, the scale, N, widths and seeds it was
measured at, and its status: :data:`HOLDS`; :data:`TRIVIAL` (it holds only because the learner does no better
than predicting 0, or because the threshold sits at the zero predictor); :data:`FAILS`; :data:`NOT_JUDGED`, with
the reason. A part measured at an N that was not fixed before the runs is reported beside the verdict
(``in_verdict=False``) and never enters the label.

:func:`derive_label` is the only place a label is made; the summaries, the README's table and notebook 05's
tables read it (:func:`resnetlearn.reproduce.figures.FigureSpec.judge`).
"""

from __future__ import annotations

from dataclasses import dataclass

HOLDS, TRIVIAL, FAILS, NOT_JUDGED = "holds", "holds trivially", "fails", "not judged"
STATUSES = (HOLDS, TRIVIAL, FAILS, NOT_JUDGED)

REPRODUCED, NOT_REPRODUCED, PARTLY = "reproduced", "not reproduced", "partly reproduced"
ILLUSTRATED, NOT_RUN, UNJUDGED = "illustrated", "not run", "not judged"
LABELS = (REPRODUCED, PARTLY, NOT_REPRODUCED, UNJUDGED, ILLUSTRATED, NOT_RUN)
"""Every label :func:`derive_label` can give (a partly reproduced label goes on after a colon: what held, what
held only trivially, what failed, what was not judged)."""


@dataclass(frozen=True)
class Part:
    """One statement of a figure's claim, judged. ``name`` is short (it is repeated in the label); ``claim`` says
    the statement in the paper's terms with its source; ``measured``/``threshold`` are printed numbers."""

    name: str
    claim: str
    rule: str
    measured: str
    threshold: str
    status: str
    scale: str = "-"
    n: str = "-"
    widths: str = "-"
    seeds: str = "-"
    reason: str = ""
    """Why a part is not judged or holds only trivially (required then), or a note on how it holds."""
    in_verdict: bool = True
    """False for a part measured at an N not fixed before the runs: reported beside the verdict, not in the label."""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"part {self.name!r}: status must be one of {STATUSES}, got {self.status!r}")
        if self.status in (TRIVIAL, NOT_JUDGED) and not self.reason:
            raise ValueError(f"part {self.name!r}: status {self.status!r} needs a reason")

    def text(self) -> str:
        """The part as one clause of a summary: statement, where it was measured, rule, value, status."""
        where = f"{self.scale} scale, N = {self.n}, m = {self.widths}, seeds {self.seeds}"
        return (f"{self.name} [{self.claim}; {where}; rule: {self.rule}]: {self.measured}; threshold "
                f"{self.threshold} — {self.status}" + (f" ({self.reason})" if self.reason else "")
                + ("" if self.in_verdict else " [reported beside the verdict: not at the N fixed before the runs]"))


def derive_label(parts: list[Part] | tuple[Part, ...], *, illustration: bool = False, ran: bool = True) -> str:
    """The figure's label from its parts: ``not run`` without rows; ``illustrated`` for an illustration of ours
    (its parts are still printed); ``reproduced`` only when every part in the verdict holds (non-trivially);
    ``not reproduced`` when none holds and one fails; ``not judged`` when none holds and none fails; otherwise
    ``partly reproduced: held: …; held trivially: …; failed: …; not judged: …`` naming the parts."""
    if not ran:
        return NOT_RUN
    if illustration:
        return ILLUSTRATED
    judged = [p for p in parts if p.in_verdict]
    if not judged:
        return UNJUDGED
    by = {s: [p.name for p in judged if p.status == s] for s in STATUSES}
    if len(by[HOLDS]) == len(judged):
        return REPRODUCED
    if not by[HOLDS]:
        return NOT_REPRODUCED if by[FAILS] else UNJUDGED
    words = {HOLDS: "held", TRIVIAL: "held trivially", FAILS: "failed", NOT_JUDGED: "not judged"}
    return PARTLY + ": " + "; ".join(f"{words[s]}: {', '.join(by[s])}" for s in STATUSES if by[s])


def label_ok(label: str) -> bool | None:
    """True for ``reproduced``, False for ``not reproduced``, None for every other label (partly reproduced,
    illustrated, not judged, not run)."""
    return {REPRODUCED: True, NOT_REPRODUCED: False}.get(label)


def span(values) -> str:
    """``500``, ``500, 1000`` or ``20-500``: the distinct values, as the parts and tables print them."""
    vals = sorted({v for v in values if v is not None})
    if not vals:
        return "-"
    return str(vals[0]) if len(vals) == 1 else ", ".join(map(str, vals)) if len(vals) <= 3 else f"{vals[0]}-{vals[-1]}"
