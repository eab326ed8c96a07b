"""Every verdict the project states in words, set against the verdicts its results derive.

The truth is the label that closes each shipped summary ``results/SCALE/FIG.txt`` (its last clause
``-> LABEL``). A label is read with the same reader as prose, so a new wording of a label needs no change
here as long as it says one of: reproduced, NOT reproduced, partly reproduced, illustrated, not run, not
judged. A figure with no summary at a scale is "not run" there.

The statements are read from the README (the generated verdict block included), every notebook's
markdown and printed outputs, and every summary. A statement is a clause that names one or more figures
(``Figure 2(a)``, ``Fig. 2a``, ``fig2a``, ``Figures 2(a) and 2(b)``, ``Figures 2–4``, ``the
kernel-theorem curve``, ``the companion's Figure 1`` …) and says a verdict in any wording (reproduced,
NOT reproduced, partly reproduced, illustrated, fails, holds, is confirmed, we could not reproduce, …,
negations included), at the scales it names (quick, quick-val or quick with validation selection, cpu,
cpu-v1, paper, "at this scale" in a summary, "every scale"; none named: the largest shipped, as
``load_latest`` reads it). A clause about a part of a figure (a row, a half, a panel, a β, one width) is
not set against the figure's label; a summary's parts are set against its own label instead. Quoted text
("…"), questions, conditionals and code blocks state no verdict.

Numbers: :func:`unbacked_numbers` lists each number of a prose passage that no printed output, table or
results file shows (within the rounding of its printed digits) and that is not on an allow-list of the
paper's constants.

Plain text and JSON only: no torch, no package import, a second or two for the whole repository.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FIGURES = ("fig2a", "fig2b", "fig3", "fig4", "fig4b", "thm3", "companion")
SHIPPED_ORDER = ("paper", "cpu", "quick")  # a figure's shipped verdict is its largest scale (load_latest)

REPRODUCED, NOT_REPRODUCED, PARTLY = "reproduced", "not reproduced", "partly reproduced"
ILLUSTRATED, NOT_RUN, NOT_JUDGED = "illustrated", "not run", "not judged"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, PARTLY, ILLUSTRATED, NOT_RUN, NOT_JUDGED)


# ------------------------------------------------------------------------------------------ figure names
_PANEL = r"(\d)(?!\d|\.\d)\s*(?:\(([ab])\)|([ab])\b)?"
_FIG_LIST = re.compile(  # "Figure 2(a)", "Fig. 2a", "Figures 2(a), 2(b) and 3", "Figures 2–4", "Figure 2(a) and 2(b)"
    r"\b(?:Figures?|Figs?\.?)\s*" + _PANEL
    + r"((?:\s*(?:,|,?\s+and|&|or|–|-|to)\s*(?:Figure\s*|Fig\.\s*)?\d(?!\d|\.\d)\s*(?:\([ab]\)|[ab]\b)?)*)")
_FIG_MORE = re.compile(r"(,|and|&|or|–|-|to)\s*(?:Figure\s*|Fig\.\s*)?" + _PANEL)
_WORD_NAMES = (
    (re.compile(r"\bfig(2a|2b|3|4b|4)\b"), None),  # the figures' own names: fig2a, results/cpu/fig4.txt
    (re.compile(r"kernel[- ]theorem(?:'s)?\s+(?:curve|illustration|run|experiment)|\bthm3\b|\bkernel curve\b",
                re.I), "thm3"),
    (re.compile(r"\bcompanion\b", re.I), "companion"),
)


def _panel_names(number: str, letter: str | None) -> tuple[str, ...]:
    """The figures meant by one panel reference: ``2`` alone is both 2(a) and 2(b); ``4`` alone is 4(a),
    the figure this repository calls ``fig4`` (its prose says "Figure 4" for it)."""
    key = number + (letter or "")
    return {"2": ("fig2a", "fig2b"), "2a": ("fig2a",), "2b": ("fig2b",), "3": ("fig3",), "4": ("fig4",),
            "4a": ("fig4",), "4b": ("fig4b",)}.get(key, ())


def mentions(text: str) -> list[tuple[int, str]]:
    """Every figure a piece of text names, with the position where it is named, in reading order."""
    found: list[tuple[int, str]] = []
    for m in _FIG_LIST.finditer(text):
        panels = [(m.group(1), m.group(2) or m.group(3))]
        for more in _FIG_MORE.finditer(m.group(4) or ""):
            number, letter = more.group(2), more.group(3) or more.group(4)
            if more.group(1) in ("–", "-", "to") and not letter and panels[-1][0] < number:
                panels += [(str(n), None) for n in range(int(panels[-1][0]) + 1, int(number))]  # "Figures 2–4"
            panels.append((number, letter))
        found += [(m.start(), name) for number, letter in panels for name in _panel_names(number, letter)]
    for pattern, name in _WORD_NAMES:
        found += [(m.start(), name or "fig" + m.group(1)) for m in pattern.finditer(text)]
    return sorted(found)


def figures_named(text: str) -> list[str]:
    """Every figure a piece of text names, in the order of :data:`FIGURES`."""
    named = {name for _, name in mentions(text)}
    return [f for f in FIGURES if f in named]


# ------------------------------------------------------------------------------------------ verdict words
_NEGATOR = re.compile(r"(?:\bnot|\bnever|\bno longer|n't|\bnor|\bcannot|\bfail(?:s|ed)? to)"
                      r"(?:\s+[\w,]+){0,2}\s+$", re.I)
_VERDICT_WORDS = [  # (pattern, base verdict, the pattern itself says "not")
    (r"(?:partly|partially|only in part|in part)\s+(?:reproduced|holds?|confirmed)|reproduced\s+in\s+part"
     r"|holds?\s+(?:only\s+)?in\s+part", PARTLY, False),
    (r"not\s+(?:yet\s+)?(?:been\s+)?run\b|never\s+run\b|not\s+shipped|no\s+shipped\s+results?", NOT_RUN, False),
    (r"not\s+judged", NOT_JUDGED, False),
    (r"(?:could|can|did|does|do|were|was)\s*(?:not|n't)\s+(?:\w+\s+)?reproduce\b|cannot\s+reproduce\b"
     r"|unable\s+to\s+reproduce\b|fail(?:s|ed)?\s+to\s+reproduce\b|\bunreproduced\b", REPRODUCED, True),
    (r"\bfail(?:s|ed)?\b(?!-)|\brefuted\b|\bcontradicted\b|\bNOT\s+as\s+claimed\b", REPRODUCED, True),
    (r"\billustrat(?:ed|es|ion)\b", ILLUSTRATED, False),
    (r"\breproduced\b|\breproduces\b|\bwe\s+reproduce\b|\bhold(?:s)?\b(?!-)|\bheld\b(?!-)|\bconfirm(?:s|ed)?\b"
     r"|\bsucceed(?:s|ed)\b|\bas\s+claimed\b|\bverified\b|\bborne\s+out\b", REPRODUCED, False),
]
_VERDICT_RE = re.compile("|".join(f"(?P<v{i}>{p})" for i, (p, _, _) in enumerate(_VERDICT_WORDS)), re.I)
_SHORT = re.compile(r"\b(fig2a|fig2b|fig3|fig4b|fig4|thm3|companion)\s*:\s*(yes|no|open)\b", re.I)


def verdict_words(clause: str) -> list[tuple[str, bool]]:
    """The verdicts a clause says, in order: (base verdict, negated). "NOT reproduced", "fails" and "we
    could not reproduce" are (reproduced, negated); "partly reproduced" is (partly reproduced, False)."""
    out = []
    for m in _VERDICT_RE.finditer(clause):
        i = int(next(k for k, v in m.groupdict().items() if v is not None)[1:])
        _, base, negated = _VERDICT_WORDS[i]
        if not negated and base in (REPRODUCED, ILLUSTRATED) and _NEGATOR.search(clause[:m.start()][-40:]):
            negated = True  # "is NOT reproduced", "does not hold", "was never reproduced"
        elif negated and _NEGATOR.search(clause[:m.start()][-40:]) and m.group(0).lower().startswith("fail"):
            negated = False  # "does not fail"
        out.append((base, negated))
    return out


def truth_of(statement: tuple[str, bool]) -> str:
    """The label a (base, negated) statement asserts: (reproduced, True) asserts "not reproduced"."""
    base, negated = statement
    return NOT_REPRODUCED if (base, negated) == (REPRODUCED, True) else base


def label_verdict(label: str, where: str = "a label") -> str:
    """One of :data:`VERDICTS` for a summary's label, read as prose is read."""
    words = verdict_words(label)
    if not words and re.match(r"\s*(?:open|undecided)\b", label, re.I):
        return NOT_JUDGED
    if not words:
        raise ValueError(f"{where}: the label {label!r} says none of {', '.join(VERDICTS)}; "
                         "teach tests/verdict_statements.py its wording")
    return truth_of(words[0])


# ------------------------------------------------------------------------------------------ the truth
@dataclass(frozen=True)
class Summary:
    figure: str
    scale: str
    path: Path
    body: str
    label: str
    verdict: str


def read_summaries(results: Path = ROOT / "results") -> dict[tuple[str, str], Summary]:
    """Every shipped summary ``results/SCALE/FIG.txt``, keyed by (figure, scale), its label read."""
    out = {}
    for path in sorted(Path(results).glob("*/*.txt")):
        name = path.stem
        if name not in FIGURES:
            continue
        text = path.read_text().strip()
        if "->" not in text:
            raise ValueError(f"{path}: a summary ends with '-> LABEL'; this one has no label")
        body, label = text.rsplit("->", 1)
        out[name, path.parent.name] = Summary(name, path.parent.name, path, body.strip(), label.strip(),
                                              label_verdict(label.strip(), str(path)))
    return out


class Truth:
    """The derived verdict of each figure at each scale shipped."""

    def __init__(self, summaries: dict[tuple[str, str], Summary]):
        self.summaries = summaries

    @classmethod
    def of_labels(cls, labels: dict[tuple[str, str], str]) -> Truth:
        """A truth from label texts, e.g. ``{("fig3", "quick"): "NOT reproduced at this scale"}``."""
        return cls({k: Summary(k[0], k[1], Path(f"{k[1]}/{k[0]}.txt"), "", v, label_verdict(v))
                    for k, v in labels.items()})

    def default_scale(self, figure: str) -> str:
        return next((s for s in SHIPPED_ORDER if (figure, s) in self.summaries), SHIPPED_ORDER[-1])

    def scales(self, figure: str) -> list[str]:
        return [s for (f, s) in self.summaries if f == figure]

    def verdict(self, figure: str, scale: str) -> tuple[str, str]:
        """(verdict, label as written) of a figure at a scale; "not run" where nothing is shipped."""
        s = self.summaries.get((figure, scale))
        return (s.verdict, s.label) if s else (NOT_RUN, f"no results/{scale}/{figure}.txt")


# ------------------------------------------------------------------------------------------ passages
@dataclass(frozen=True)
class Passage:
    """A piece of text to read: where it is, whether it is prose, a printed output or a summary, and
    (for a summary) the figure and scale it speaks of."""
    where: str
    text: str
    kind: str = "prose"
    figure: str | None = None
    scale: str | None = None


def _notebook_passages(path: Path) -> list[Passage]:
    nb = json.loads(path.read_text())
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    out = []
    for i, cell in enumerate(nb["cells"]):
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown":
            out.append(Passage(f"{rel}, cell {i} (markdown)", src))
        for o in cell.get("outputs", []):
            texts = [o.get("text")] + [o.get("data", {}).get(k) for k in ("text/plain", "text/markdown")]
            for t in texts:
                if t:
                    out.append(Passage(f"{rel}, cell {i} (output)", "".join(t) if isinstance(t, list) else t,
                                       kind="output"))
    return out


def readme_passages(readme: Path = ROOT / "README.md") -> list[Passage]:
    return [Passage(readme.name, readme.read_text())]


def repository_passages(root: Path = ROOT) -> list[Passage]:
    """The README and the docs/ pages, every notebook's markdown and outputs, every shipped summary."""
    out = readme_passages(root / "README.md")
    for path in sorted((root / "docs").glob("*.md")):
        out.append(Passage(str(path.relative_to(root)), path.read_text()))
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        out += _notebook_passages(path)
    for s in read_summaries(root / "results").values():
        out.append(Passage(str(s.path.relative_to(root)), s.body, kind="summary", figure=s.figure, scale=s.scale))
    return out


# ------------------------------------------------------------------------------------------ sentences
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_FENCE = re.compile(r"```.*?```", re.S)
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”]*”")
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_SENTENCE_END = re.compile(r"(?<!\bFig)(?<!\bFigs)(?<!e\.g)(?<!i\.e)(?<!\bvs)(?<!\beq)(?<!\bcf)(?<!\bal)"
                           r"(?<=[.!?])\s+(?=[A-Z*\[(`$])")


def sentences(text: str) -> list[str]:
    """The sentences of markdown or printed text: comments, code blocks and quotations removed, one
    line of a list or table at a time, a paragraph cut at its full stops."""
    text = _FENCE.sub("\n", _COMMENT.sub(" ", text))
    text = _TAG.sub("\n", _QUOTED.sub(" «quoted» ", text)).replace("**", "").replace("`", "")
    out = []
    for para in re.split(r"\n\s*\n|\n(?=\s*(?:[*+-]\s|\d+\.\s|\||#|>))", text):
        para = " ".join(para.split())
        out += [s for s in _SENTENCE_END.split(para) if s.strip()]
    return out


_FIGURE_AHEAD = r"(?:the\s+)?(?:Fig|fig|kernel|comp|thm3)"


def _top_level_split(sentence: str) -> list[str]:
    """Clauses: cut outside brackets at ';', 'but', 'while', 'whereas', at 'and' before a figure's name or
    'not', and at a comma before a figure's name and its verb. "except" is read as "but not"."""
    sentence = re.sub(r",?\s+(?:except(?:\s+for)?|other\s+than|apart\s+from)\s+", " but not ", sentence)
    parts, depth, start, i = [], 0, 0, 0
    cut = re.compile(r";|\s+but\s+|,?\s+while\s+|,?\s+whereas\s+")
    joint = re.compile(rf",?\s+and\s+(?=not\b|{_FIGURE_AHEAD})"  # only after a clause with its verb
                       rf"|,\s+(?={_FIGURE_AHEAD}[^,;]*?\b(?:is|are|was|were|holds?|fails?)\b)")
    while i < len(sentence):
        c = sentence[i]
        depth += c in "([{"
        depth -= c in ")]}" and depth > 0
        m = cut.match(sentence, i) or joint.match(sentence, i)
        if depth == 0 and m and (m.re is cut or _VERB.search(sentence[start:i]) or verdict_words(sentence[start:i])):
            parts.append(sentence[start:i])
            start = i = m.end()
            if m.re is joint and "and" in m.group(0):
                start = m.start() + m.group(0).index("and")  # "… and Figure 4(b)" keeps its "and"
            continue
        i += 1
    return [p for p in parts + [sentence[start:]] if p.strip()]


_HYPOTHETICAL = re.compile(r"\bif\b|\bwhether\b|\bwould\b|\bmight\b|\bshould\b|\bunless\b|\bwill\b|\bPredict\b",
                           re.I)
_PART = re.compile(r"\brows?\b|\bhal(?:f|ves)\b|\bparts?\b|β\s*=|\\beta\s*=|\bpanel\b|\bat\s+\$?m\s*=|\bcells?\b"
                   r"|\bseeds?\b|\bpoints?\b|\bwin\b|\bsuccess\b", re.I)
_SCALE_WORDS = (  # (pattern, scale); quick-val is quick with validation selection
    (re.compile(r"quick-val|(?=.*\bquick\b)(?=.*validation)", re.I | re.S), "quick-val"),
    (re.compile(r"\bcpu-v1\b|earlier single-seed"), "cpu-v1"),
    (re.compile(r"\bquick(?:\s+|-)scale|--scale\s+quick|results/quick\b(?!-)|^quick\b|\bquick\b(?=\s*[,:)—])"),
     "quick"),
    (re.compile(r"\bcpu(?:\s+|-)scale|--scale\s+cpu|results/cpu\b(?!-)|^cpu\b"), "cpu"),
    (re.compile(r"\bpaper(?:\s+|-)scale|--scale\s+paper|results/paper\b|^paper\b"), "paper"),
)
_AT_ONE_SIZE = re.compile(r"\b(?:at|for|with)\s+\$?[Nm]\s*=\s*\d", re.I)  # "at N = 500": one size, a part
_NOT_THE_VERDICT = re.compile(r"not the verdict|reported beside|reported, not|at the other N\b", re.I)
_EVERY_SCALE = re.compile(r"\b(?:every|all|each)\s+(?:shipped\s+)?scales?\b", re.I)
_THIS_SCALE = re.compile(r"\bat\s+this\s+scale\b", re.I)


def _scales(clause: str) -> list[str]:
    found = []
    for pattern, scale in _SCALE_WORDS:
        if pattern.search(clause.strip()):
            found.append(scale)
    if "quick-val" in found:
        found.remove("quick") if "quick" in found else None
    return found


@dataclass(frozen=True)
class Statement:
    where: str
    sentence: str
    figure: str
    scale: str
    says: str  # one of VERDICTS
    negated_other: bool = False  # "not illustrated": any verdict but `says`


@dataclass(frozen=True)
class Contradiction:
    statement: Statement
    truth: str
    label: str

    def __str__(self):
        s = self.statement
        says = f"not {s.says}" if s.negated_other else s.says
        return (f"{s.where}: says {s.figure} is {says!r} at {s.scale} scale, but results/{s.scale}/{s.figure}.txt "
                f"ends '-> {self.label}': {s.sentence.strip()}")


def _groups(text: str) -> tuple[str, list[str]]:
    """The text with each parenthesised aside cut out (a marker ``⟨k⟩`` left in its place) and the asides.
    Short tags stay in place: the panel of "Figure 2(a)", the mode of "3resnet(all)"."""
    top, groups, depth, start, last = [], [], 0, 0, 0
    for i, c in enumerate(text):
        if c == "(":
            if depth == 0:
                start = i
            depth += 1
        elif c == ")" and depth:
            depth -= 1
            if depth == 0 and (" " in text[start:i] or len(text[start:i]) > 8):
                top.append(text[last:start] + f" ⟨{len(groups)}⟩ ")
                groups.append(text[start + 1:i])
                last = i + 1
    return "".join(top) + text[last:], groups


_VERB = re.compile(r"\b(?:is|are|was|were|has|have|had|does|do|did|stays?|goes|go)\b", re.I)


def _clauses(top: str) -> list[tuple[str, list[str]]]:
    """Clauses of a sentence without asides, each with the figures it speaks of. "Figure 2(a) and Figure 3
    are reproduced" speaks of both; "Figure 3 is judged at N = 1000, and the curve is our illustration"
    gives each clause its own figure."""
    clauses = _top_level_split(top)
    out, carried = [], []
    for i, clause in enumerate(clauses):
        named = carried + [f for f in figures_named(clause) if f not in carried]
        carried = []
        if named and i + 1 < len(clauses) and not re.match(r"\s*not\b", clause) and not verdict_words(clause) \
                and not _VERB.search(clause):
            carried, named = named, []  # a subject without its verb: it belongs to the next clause
        out.append((clause, named))
    return out


_FIGURE_KEY = r"(?:fig2a|fig2b|fig3|fig4b|fig4|thm3|companion)\b"
_PARTLY_LABEL = re.compile(r"partly reproduced:\s*(?:held|failed|not judged)[^|]*?"
                           rf"(?=\s*\||\n\s*\n|\Z|\n\s*{_FIGURE_KEY}|\s+{_FIGURE_KEY}|\n\S+\.txt:)", re.I | re.S)
"""A derived label "partly reproduced: held: …; failed: …" written out: one verdict, whose group words
("held", "failed") judge its parts, not the figure."""
_PART_ROW = re.compile(r"^\s*\|[^|\n]*\|[^|\n]*\|\s*(?:holds trivially|holds|fails|not judged)\b.*$", re.I | re.M)
"""A row of a parts table (figure | part | status | …): it judges one part, not the figure."""


_SCALE_HEADER = re.compile(r"^\s*(quick-val|quick|cpu|paper):\s*$")
_LISTED = re.compile(r"^\s*(fig2a|fig2b|fig3|fig4b|fig4|thm3|companion)\s+((?:partly |not )?(?:reproduced|illustrated|"
                     r"judged|run)\b.*?|-)\s*$")


def statements(passage: Passage, truth: Truth) -> list[Statement]:
    """Every whole-figure verdict a passage states, one per (figure, scale)."""
    text = _PART_ROW.sub("", _PARTLY_LABEL.sub("partly reproduced", passage.text))
    if passage.kind == "summary":
        text = _remove_brackets(text)  # a summary's [rule: …] describes the rule, it states no verdict
    out = []
    kept = []
    header = None  # a printed list "cpu:" then one "  fig2a     reproduced" line per figure
    for line in text.splitlines():  # printed verdict rows: "quick  fig2a: yes  fig3: NO"
        if m := _SCALE_HEADER.match(line):
            header = m.group(1)
            kept.append("")
            continue
        if (header or passage.kind == "output") and (m := _LISTED.match(line)):
            if m.group(2) != "-":  # a printed list of labels, under a scale's header or of the shipped results
                sc = header or truth.default_scale(m.group(1))
                out.append(Statement(passage.where, line.strip(), m.group(1), sc, label_verdict(m.group(2))))
            kept.append("")
            continue
        header = None if line.strip() else header
        short = list(_SHORT.finditer(line))
        for m in short:
            says = {"yes": REPRODUCED, "no": NOT_REPRODUCED, "open": NOT_JUDGED}[m.group(2).lower()]
            for sc in _scales(line) or [truth.default_scale(m.group(1))]:
                out.append(Statement(passage.where, line.strip(), m.group(1), sc, says))
        kept.append("" if short else line)
    for sentence in sentences("\n".join(kept)):
        if not sentence.rstrip().endswith("?"):
            default = passage.figure if passage.kind == "summary" else None
            out += _statements_of(sentence, sentence, passage, truth, default, [])
    return list(dict.fromkeys(out))


def _statements_of(text: str, sentence: str, passage: Passage, truth: Truth, default_figure: str | None,
                   outer_scales: list[str], part: bool = False, default_named: bool = False) -> list[Statement]:
    """The statements of a sentence (or of an aside in it). ``default_figure`` is whom a clause that names
    no figure speaks of: the figure named just before an aside, or a summary's own figure; ``default_named``
    whether that figure is named in the text. ``part``: the enclosing clause speaks of a part."""
    top, groups = _groups(text)
    out = []
    prev = dict(named=[], scales=[], words=None, part=False, explicit=False)  # for "… but not at quick scale"
    for clause, named in _clauses(top):
        explicit = bool(named)
        scales = _scales(clause) or outer_scales
        if passage.kind == "summary" and _THIS_SCALE.search(clause):
            scales = scales or [passage.scale]
        whole = re.sub(r"⟨(\d+)⟩", lambda m: f"({groups[int(m.group(1))]})", clause)
        first = _VERDICT_RE.search(clause)  # a part is named as the subject: before the verdict word
        is_part = part or bool(_PART.search(clause[:first.start()] if first else clause)
                               or _AT_ONE_SIZE.search(clause))
        hypothetical = bool(_HYPOTHETICAL.search(clause))
        words = [] if hypothetical else verdict_words(clause)
        if not words and prev["words"] and (named or _scales(clause)):
            base, negated = prev["words"]  # "… but not at quick scale", "…; Figure 3 is not", "… and Figure 3"
            if not re.match(r"\s*and\b", clause) or _VERB.search(clause) or re.search(r"\bnot\b", clause):
                negated = bool(re.search(r"\bnot\b|n't\b|\bnever\b", clause, re.I))
            words = [(base, negated)]
            scales = _scales(clause) or prev["scales"]
        if not named and prev["named"]:  # "…; on validation samples: reproduced" speaks of the same figure
            named, scales, is_part = prev["named"], _scales(clause) or prev["scales"], is_part or prev["part"]
            explicit = prev["explicit"]
        if re.search(r"validation", clause, re.I):
            scales = [s + "-val" if s == "quick" else s for s in scales]
        if not named and default_figure:
            named, explicit = [default_figure], default_named
        for k in map(int, re.findall(r"⟨(\d+)⟩", clause)):  # an aside speaks of the figure just before it
            before = [name for pos, name in mentions(top) if pos < top.index(f"⟨{k}⟩")]
            ahead = clause[:clause.index(f"⟨{k}⟩")]  # after the clause's verdict, an aside judges a part of it
            aside_part = part or bool(_PART.search(ahead) or _VERDICT_RE.search(ahead))
            out += _statements_of(groups[k], sentence, passage, truth, before[-1] if before else (named or [None])[-1],
                                  scales, aside_part, bool(before) or explicit)
        prev = dict(named=named, scales=scales, words=words[0] if words else None, part=is_part, explicit=explicit)
        if hypothetical:
            prev = dict(named=[], scales=[], words=None, part=False, explicit=False)
        if passage.kind == "summary" and not explicit and words and words[0][0] != ILLUSTRATED \
                and not _THIS_SCALE.search(clause):
            continue  # a summary's unnamed "holds", "fails", "as claimed" judge its parts
        if not words or not named or is_part or _NOT_THE_VERDICT.search(whole):
            continue  # no verdict, nobody's, or a part's (a row, a half, a width, a seed): not the figure's
        every = bool(_EVERY_SCALE.search(clause))
        base, negated = words[0]
        for fig in named:
            fallback = [passage.scale] if passage.kind == "summary" else [truth.default_scale(fig)]
            for sc in (truth.scales(fig) if every else scales) or fallback:
                if negated and base != REPRODUCED:
                    out.append(Statement(passage.where, sentence, fig, sc, base, negated_other=True))
                else:
                    out.append(Statement(passage.where, sentence, fig, sc, truth_of((base, negated))))
    return out


def _remove_brackets(text: str) -> str:
    """Text without its [square-bracketed] rule statements (an interval such as [Ω(d), 1) inside one does
    not close it: the rule ends at the first ']')."""
    return re.sub(r"\[[^\]]*\]", " ", text)


def contradictions(passages: list[Passage], truth: Truth) -> list[Contradiction]:
    """Every statement whose verdict is not the label its summary derives."""
    bad = []
    for p in passages:
        for s in statements(p, truth):
            verdict, label = truth.verdict(s.figure, s.scale)
            if (verdict == s.says) == s.negated_other:
                bad.append(Contradiction(s, verdict, label))
    return bad


# ------------------------------------------------------------------------------------------ summaries' parts
_N_OF_VERDICT = re.compile(r"verdict is taken([^\]]*?)(?:;|\]|$)")


def summary_part_conflicts(summary: Summary) -> list[str]:
    """A summary whose own parts say otherwise than its label: a plain "reproduced" beside a part that
    fails or holds only trivially, or "NOT reproduced" where every part it judges holds. A part reported
    at another N than the one the verdict is taken at, or marked "not the verdict", is left out."""
    verdict_ns = {n for m in _N_OF_VERDICT.finditer(summary.body) for n in re.findall(r"N\s*=\s*(\d+)", m.group(1))}
    parts = []
    for sentence in sentences(_remove_brackets(summary.body)):
        for clause in sentence.split(";"):  # a row ends at ';', as "half (holds under …; fails under …)" does
            ns = set(re.findall(r"N\s*=\s*(\d+)", clause))
            if _NOT_THE_VERDICT.search(clause) or (verdict_ns and ns and not ns & verdict_ns):
                continue
            words = [w for w in verdict_words(clause) if w[0] in (REPRODUCED, PARTLY)]
            if words:
                trivially = words[0] == (REPRODUCED, False) and re.search(r"\btrivial", clause, re.I)
                parts.append(("holds trivially" if trivially else truth_of(words[0]), " ".join(clause.split())))
    where = summary.path.relative_to(ROOT) if summary.path.is_relative_to(ROOT) else summary.path
    if summary.verdict == REPRODUCED:
        return [f"{where}: its label says {summary.label!r}, but a part says {v!r}: {c}"
                for v, c in parts if v != REPRODUCED]
    if summary.verdict == NOT_REPRODUCED and parts and all(v == REPRODUCED for v, _ in parts):
        return [f"{where}: its label says {summary.label!r}, but every part it judges holds"]
    return []


# ------------------------------------------------------------------------------------------ numbers in prose
_GENERATED = re.compile(r"<!--\s*([\w:-]+):begin\s*-->.*?<!--\s*\1:end\s*-->", re.S)  # tables a program writes
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
_SCIENTIFIC = re.compile(  # 1.7\cdot10^{-7}, 7·10⁶, 10^{12} (an order of magnitude), 1e-08
    r"(?:(\d+(?:\.\d+)?)\s*(?:\\cdot|·|×|\\times)\s*)?(?<![\d.])10(?:\^\{?\s*([−-]?\d{1,2})\s*\}?(?!\d)"
    r"|([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,2}))|(?<![\w.])(\d+(?:\.\d+)?)[eE]([+-]?\d{1,2})\b")
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_NUMBER = re.compile(r"(?<![\w.^_{\\])(\d{1,3}(?:[ \u202f\u2009,]\d{3})+(?![\d.,]\d)|\d+(?:\.\d+)?)(?![\w.]\w|[\w])"
                     r"(\s?%)?")
_REF_ITEM = r"§?(?:\d{1,2}(?:\.\d{1,2})*(?:\([a-z]\)|[a-z](?![a-z]))?|[A-D](?:\.\d{1,2})?)(?![\d.]*\d)"
_REFERENCE = re.compile(  # "§8.1", "Figure 2(a)", "Theorem 1", "eq 2.2", "lessons 3 and 4", "arXiv v3", …
    r"(?:§|\b(?:Figures?|Figs?\.|Theorems?|Corollary|Lemmas?|Appendix|eqs?\.?|equations?|footnotes?|lessons?|"
    r"[Nn]otebooks?|Experiments?|Concepts?|Claims?|Definitions?|Sections?|Questions?|Steps?|slides?|Remarks?|"
    r"Examples?|Tables?|v|Python|torch|JupyterLab|ipywidgets|plotly|status)\s*)"
    + _REF_ITEM + r"(?:\s*(?:,|and|or|–|-|&|/)\s*" + _REF_ITEM + r")*|\bNeurIPS\s+\d{4}")
_SKIPPED = re.compile(  # dates, versions, clock times, the year of a citation "(Allen-Zhu and Li, 2019)"
    r"\d{4}-\d{2}-\d{2}|\b\d+\.\d+\.\d+\b|\b\d+:\d\d\b|(?<=, )(?:19|20)\d\d(?=[);])")


def numbers_in(text: str, references: bool = False) -> list[tuple[float, float, str, bool]]:
    """The numbers a text states: (value, half the step of its last printed digit, as written, a
    percentage); "10^{12}" alone is an order of magnitude (10^12 up to 10^13). References (section,
    figure, theorem, lesson numbers), dates and versions are left out unless ``references``."""
    out = []

    def take(m: re.Match) -> str:
        if m.group(4):  # 1e-08
            mantissa, exponent = m.group(4), int(m.group(5))
        else:
            mantissa, exponent = m.group(1), int((m.group(2) or (m.group(3) or "").translate(_SUPERSCRIPT))
                                                 .replace("−", "-"))
        if mantissa is None:  # an order of magnitude
            out.append((5.5 * 10.0 ** exponent, 4.5 * 10.0 ** exponent, m.group(0), False))
        else:
            places = len(mantissa.split(".")[1]) if "." in mantissa else 0
            out.append((float(mantissa) * 10.0 ** exponent, 0.5 * 10.0 ** (exponent - places), m.group(0), False))
        return " "

    text = _SKIPPED.sub(" ", text)
    if not references:
        text = _REFERENCE.sub(" ", text)
    text = _SCIENTIFIC.sub(take, text)
    for m in _NUMBER.finditer(text):
        token = m.group(1)
        digits = re.sub(r"[ \u202f\u2009,]", "", token) if re.fullmatch(r"\d{1,3}(?:[ \u202f\u2009,]\d{3})+", token) \
            else token
        places = len(digits.split(".")[1]) if "." in digits else 0
        out.append((float(digits), 0.5 * 10.0 ** -places, m.group(0).strip(), bool(m.group(2))))
    return out


def _numbers_shown(text: str) -> set[float]:
    found = {v for v, *_ in numbers_in(text, references=True)}
    return found | {float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?", text)}


MEASURED = ("benchmarks", "probes", "course")
"""The folders whose ``results/`` hold measured outputs that a notebook may quote."""


@dataclass
class NumberPool:
    """The numbers shown: ``printed`` by every notebook's outputs, the summaries, provenance and the measured
    outputs under :data:`MEASURED`; ``tables[FIG]`` by a figure's tables ``results/*/FIG.csv`` and
    ``FIG_runs.csv`` (full precision, so they back a number only where its sentence or cell names the figure)."""
    printed: list[float]
    tables: dict[str, list[float]]

    def for_figures(self, figures: list[str]) -> list[list[float]]:
        return [self.printed] + [self.tables.get(f, []) for f in figures]


def number_pool(root: Path = ROOT) -> NumberPool:
    texts = [p.text for nb in sorted((root / "notebooks").glob("*.ipynb")) for p in _notebook_passages(nb)
             if p.kind == "output"]
    files = [f for f in (root / "results").glob("*/*") if f.suffix in (".txt", ".json", ".md")]
    files += [f for folder in MEASURED for f in (root / folder / "results").glob("*")
              if f.suffix in (".txt", ".csv", ".json", ".md")
              and not f.stem.endswith("_runs")]  # every run of a probe: raw data, as a figure's runs table
    printed: set[float] = set()
    for t in texts + [f.read_text(errors="replace") for f in sorted(files)]:
        printed |= _numbers_shown(t)
    tables: dict[str, set[float]] = {}
    for f in sorted((root / "results").glob("*/*.csv")):
        name = f.stem.removesuffix("_runs")
        tables.setdefault(name, set()).update(_numbers_shown(f.read_text()))
    return NumberPool(sorted(printed), {k: sorted(v) for k, v in tables.items()})


@dataclass(frozen=True)
class Unbacked:
    where: str
    number: str
    sentence: str

    def __str__(self):
        return f"{self.where}: {self.number} is in no output, table or results file: {self.sentence.strip()}"


def is_backed(value: float, tol: float, percent: bool, pools: list[list[float]],
              allowed: tuple[float, ...] = ()) -> bool:
    """Whether a number shown in one of ``pools`` (each sorted) rounds to ``value`` at the digits written,
    i.e. lies within ``tol`` of it (a percentage also as a fraction), or an allowed value does."""
    import bisect

    tol *= 1 + 1e-9
    targets = [(value, tol)] + ([(value / 100, tol / 100)] if percent else [])
    for pool in pools:
        for x, t in targets:
            i = bisect.bisect_left(pool, x - t)
            if i < len(pool) and pool[i] <= x + t:
                return True
    return any(abs(value - a) <= max(tol, 1e-12 * abs(a)) for a in allowed)


def prose_for_numbers(text: str) -> str:
    """What of a markdown text states numbers of its own: generated blocks, comments, code and link
    targets removed."""
    text = _GENERATED.sub(" ", text)
    return _LINK_TARGET.sub("]", _CODE_SPAN.sub(" ", _FENCE.sub(" ", _COMMENT.sub(" ", text))))


def unbacked_numbers(passages: list[Passage], pool: NumberPool, allowed: tuple[float, ...] = ()) -> list[Unbacked]:
    """Every number of these prose passages that no output, table or results file shows (a figure's
    tables count where the sentence, or else its cell, names the figure)."""
    out = []
    for p in passages:
        for sentence in sentences(prose_for_numbers(p.text)):
            pools = pool.for_figures(figures_named(sentence) or figures_named(p.text))
            for value, tol, token, percent in numbers_in(sentence):
                if not is_backed(value, tol, percent, pools, allowed):
                    out.append(Unbacked(p.where, token, sentence))
    return out


def readme_section(title: str, readme: Path = ROOT / "README.md") -> Passage:
    """One section of a Markdown page (the README or a docs/ page), from its heading to the next heading of the
    same or a higher level."""
    text = readme.read_text()
    m = re.search(rf"^(#+) {re.escape(title)}\s*$", text, re.M)
    if not m:
        raise ValueError(f"{readme}: no section {title!r}")
    end = re.search(rf"^#{{1,{len(m.group(1))}}} ", text[m.end():], re.M)
    name = readme.relative_to(ROOT) if readme.is_relative_to(ROOT) else readme.name
    return Passage(f"{name}, section {title!r}", text[m.end():m.end() + end.start() if end else None])


def markdown_passages(notebook: Path) -> list[Passage]:
    return [p for p in _notebook_passages(notebook) if p.kind == "prose"]
