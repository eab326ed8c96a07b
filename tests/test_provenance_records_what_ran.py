"""Each shipped provenance records what ran, as its per-run table shows it: widths, N, epochs, the lr and wd of the
networks' grids, the seeds of every grid cell and of the selected cells' reruns (read here by plain CSV)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parents[1] / "results"
SHIPPED = sorted(p for folder in ("quick", "quick-val", "cpu") for p in (RESULTS / folder).glob("*.provenance.json"))


def _ran(runs_csv: Path) -> dict:
    nets = [r for r in csv.DictReader(open(runs_csv)) if r["lr"] not in ("", "None") and r["mode"] != "kernel"
            and r["model"] != "hand_built"]
    grid = [r for r in nets if r["role"] in ("", "grid")]
    rerun = [r for r in nets if r["role"] == "rerun"]
    ints = lambda rows, k: sorted({int(r[k]) for r in rows})  # noqa: E731
    floats = lambda rows, k: sorted({float(r[k]) for r in rows})  # noqa: E731
    out = dict(widths=ints(nets, "m"), n_train=ints(nets, "n_train"), epochs=ints(nets, "epochs"),
               lrs=floats(grid, "lr"), wds=floats(grid, "wd"), grid_seeds=ints(grid, "seed"),
               rerun_seeds=ints(rerun, "seed"))
    if {r["select"] for r in nets} == {"val"}:
        out["validation"] = "fresh validation samples, the same N training samples"
    return out


@pytest.mark.parametrize("prov", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.name.split('.')[0]}")
def test_each_shipped_provenance_records_what_its_runs_table_holds(prov):
    name = prov.name.split(".")[0]
    settings = json.loads(prov.read_text())["settings"]
    assert settings == _ran(prov.parent / f"{name}_runs.csv")


def test_validation_selected_results_say_so():
    for prov in (RESULTS / "quick-val").glob("*.provenance.json"):
        name = prov.name.split(".")[0]
        assert json.loads(prov.read_text())["settings"]["validation"].startswith("fresh validation samples")
        assert "Validation-selected" in (prov.parent / f"{name}.txt").read_text()
    for prov in (RESULTS / "quick").glob("*.provenance.json"):
        assert "validation" not in json.loads(prov.read_text())["settings"]


def test_runs_tables_say_how_each_point_selected():
    for folder in ("quick", "quick-val", "cpu"):
        for runs_csv in (RESULTS / folder).glob("*_runs.csv"):
            for r in csv.DictReader(open(runs_csv)):
                if r["select"] == "val":  # fresh validation samples, a fifth of N (rounded up)
                    assert r["validation"] == "fresh" and int(r["n_val"]) == -(-int(r["n_train"]) // 5)
                else:
                    assert r["validation"] == "" and r["n_val"] == ""
