"""The README serves three readers on its first screen: the student (``make lab``), the instructor (``make
lecture``, ``make lab-student``) and the researcher (``python -m resnetlearn reproduce``), each under their own
label, then the developers' test command (``make test``, what CI runs). Details live in docs/, and every relative
link of the README and docs/ leads to a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIRST_SCREEN = 30


def _first_screen() -> str:
    return "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:FIRST_SCREEN])


def _commands_under(screen: str) -> dict[str, list[str]]:
    """Each bold reader label and the commands of the code block that follows it."""
    found = re.findall(r"^\*\*(\w+)\*\*:[^\n]*\n```bash\n(.*?)```", screen, re.MULTILINE | re.DOTALL)
    return {label: [ln.strip() for ln in block.strip().splitlines()] for label, block in found}


def test_the_first_screen_gives_each_reader_their_command():
    commands = _commands_under(_first_screen())
    assert list(commands) == ["Students", "Instructors", "Researchers", "Developers"], commands
    assert commands["Students"] == ["make lab"]
    assert commands["Instructors"] == ["make lecture", "make lab-student"]
    assert any("python -m resnetlearn reproduce" in c for c in commands["Researchers"])
    assert commands["Developers"] == ["make test"]


def test_the_ci_runs_the_developers_command():
    assert re.search(r"^make test$", (ROOT / ".ci" / "run").read_text(), re.MULTILINE)


def test_every_relative_link_leads_to_a_file():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert len(pages) > 1, "no docs/ pages"
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken


def test_every_docs_page_is_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    unlinked = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if f"(docs/{p.name}" not in readme]
    assert not unlinked, unlinked
