"""Every shipped table re-derived from its own store, compared byte for byte.

For each shipped scale folder (``results/quick``, ``results/quick-val``, ``results/cpu``) the store is copied into
a temporary folder and each figure's own shipped command (read from its provenance: scale, device, selection
rule) is run again there. Nothing may be recomputed (every point must be found under its key), and every table,
per-run table, summary, checksum and plot written must equal the shipped file byte for byte. The provenance
file is compared apart from the fields that describe the run itself (command, date, wall time, threads, versions).

    python tools/rederive_tables.py [--keep DIR]

Exit status 0 when every file matches; the report lists each file as ``same`` or ``DIFF``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("quick", "quick-val", "cpu")
# fields describing the run itself, not its results (at any depth: cpu provenance keeps one block per run);
# "summary" repeats FIG.txt, which is compared byte for byte (some shipped summaries predate a wording change)
RUN_FIELDS = {"command", "date", "wall_time_s", "torch_threads", "compute_s", "git_commit", "package_version",
              "python", "torch", "platform", "hostname", "cpu_count", "reused_from_store", "summary"}
REUSED = re.compile(r"^\s*(\d+) points \((\d+) reused from the store\)", re.M)


def _results_part(obj):
    if isinstance(obj, dict):
        return {k: _results_part(v) for k, v in obj.items() if k not in RUN_FIELDS}
    if isinstance(obj, list):
        return [_results_part(v) for v in obj]
    return obj


def _provenance_same(a: Path, b: Path) -> bool:
    return _results_part(json.loads(a.read_text())) == _results_part(json.loads(b.read_text()))


def _rerun_args(prov: Path, work: Path) -> list[str]:
    """The shipped run's own command (figure, scale, device, selection), writing into ``work`` instead."""
    args = json.loads(prov.read_text())["command"].split()[3:]  # after "python -m resnetlearn"
    out, i = [], 0
    while i < len(args):
        if args[i] in ("--out", "--workers"):
            i += 2
            continue
        if args[i] != "--into-shipped":
            out.append(args[i])
        i += 1
    out[1] = prov.name.split(".")[0]  # "all" or the figure: re-derive just this figure
    return [sys.executable, "-m", "resnetlearn", *out, "--out", str(work)]


def check_folder(folder: str, work: Path) -> list[str]:
    """Re-derive one shipped folder into ``work``; return the lines of its report (problems start with DIFF/ERR)."""
    shipped = ROOT / "results" / folder
    shutil.copytree(shipped / "store", work / "store")
    lines = []
    for prov in sorted(shipped.glob("*.provenance.json")):
        run = subprocess.run(_rerun_args(prov, work), cwd=ROOT, capture_output=True, text=True)
        if run.returncode != 0:
            lines.append(f"ERR {folder}/{prov.name}: reproduce exited {run.returncode}\n{run.stderr[-2000:]}")
        for total, reused in REUSED.findall(run.stdout):
            if total != reused:
                lines.append(f"ERR {folder}/{prov.name}: {int(total) - int(reused)} point(s) recomputed "
                             "(a store key changed)")
    for f in sorted(shipped.iterdir()):
        if f.is_dir():
            continue
        new = work / f.name
        if not new.exists():
            lines.append(f"DIFF {folder}/{f.name}: not written")
        elif f.name.endswith(".provenance.json"):
            lines.append(("same " if _provenance_same(f, new) else "DIFF ") + f"{folder}/{f.name} (run fields aside)")
        else:
            lines.append(("same " if f.read_bytes() == new.read_bytes() else "DIFF ") + f"{folder}/{f.name}")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=Path, help="write the re-derived folders here instead of a temporary folder")
    ap.add_argument("--folders", nargs="*", default=list(FOLDERS), choices=list(FOLDERS))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)
        report = []
        for folder in args.folders:
            work = base / folder
            if work.exists():
                shutil.rmtree(work)
            work.mkdir(parents=True)
            report += check_folder(folder, work)
    print("\n".join(report))
    bad = [line for line in report if not line.startswith("same")]
    print(f"{len(report) - len(bad)} same, {len(bad)} different or failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
