"""What is on disk is checked before it is used: the results store and the tables read back."""

import json
import os
import shutil

import pytest

from resnetlearn import __main__ as cli
from resnetlearn.reproduce import (
    ResultsStore,
    StoreWarning,
    atomic_write,
    every_scale,
    load_figure,
    load_runs,
    run_figure,
    running,
)
from resnetlearn.reproduce.figures import optional_points
from resnetlearn.reproduce.figures import points as figure_points
from resnetlearn.version import __version__

POINTS = figure_points("fig2a", "tiny", device="cpu")


def fake_point(point) -> dict:
    """A deterministic stand-in for run_point (milliseconds instead of training); run_figure hands it the Point."""
    config = point.config()
    return {"test_error": float(config["m"]) + 0.1 * POINTS.index(config), "runs": [], "seconds": 0.0}


# ----------------------------------------------------------------- the store
def test_a_stored_point_carries_its_key_config_completion_and_checksum(tmp_path):
    store = ResultsStore(tmp_path)
    cfg = POINTS[0]
    path = store.put(cfg, {"test_error": 1.5, "runs": [{"lr": 0.05}]})
    payload = json.loads(path.read_text())
    assert payload["key"] == store.key(cfg) == path.stem and payload["config"] == cfg
    assert payload["complete"] is True and payload["schema"] == ResultsStore.SCHEMA
    assert len(payload["sha256"]) == 64 and payload["version"] == __version__
    assert store.get(cfg)["result"] == {"test_error": 1.5, "runs": [{"lr": 0.05}]}
    assert store.verify(path) is None
    assert [f.name for f in path.parent.iterdir()] == [path.name]  # no temporary file left behind
    # NaN survives the round trip and its checksum
    store.put(POINTS[1], {"test_error": float("nan")})
    assert store.get(POINTS[1])["result"]["test_error"] != store.get(POINTS[1])["result"]["test_error"]


def _truncate(path, store, other):
    path.write_text(path.read_text()[: len(path.read_text()) // 2])


def _garbage(path, store, other):
    path.write_bytes(b"\x00\xff garbage \x13" * 10)


def _foreign(path, store, other):
    shutil.copyfile(store.path(other), path)  # another point's (valid) file under this key


def _edited(path, store, other):
    payload = json.loads(path.read_text())
    payload["result"]["test_error"] = 0.001  # a better number typed in by hand
    path.write_text(json.dumps(payload, indent=1))


def _incomplete(path, store, other):
    payload = json.loads(path.read_text())
    del payload["complete"]
    path.write_text(json.dumps(payload))


def _old_schema(path, store, other):
    path.write_text(json.dumps({"config": POINTS[0], "version": __version__,
                                "result": {"test_error": 0.5}}))


def _empty(path, store, other):
    path.write_text("")


@pytest.mark.parametrize("damage, reason", [
    (_truncate, "not valid JSON"),
    (_garbage, "not valid JSON"),
    (_empty, "not valid JSON"),
    (_foreign, "belongs to another point (3resnet(last) m=8"),
    (_edited, "fails its sha256 checksum"),
    (_incomplete, "not marked complete"),
    (_old_schema, "not a stored point of schema 3"),
])
def test_a_damaged_store_file_is_named_moved_aside_and_recomputed(tmp_path, monkeypatch, damage, reason):
    monkeypatch.setattr(running, "run_point", fake_point)
    first = run_figure("fig2a", "tiny", "cpu", out=tmp_path, progress=False)
    store = ResultsStore(tmp_path)
    cfg, other = POINTS[0], POINTS[1]
    path = store.path(cfg)
    original = path.read_text()
    damage(path, store, other)
    calls = []
    monkeypatch.setattr(running, "run_point", lambda c: calls.append(c) or fake_point(c))
    with pytest.warns(StoreWarning, match="results store: ") as caught:
        again = run_figure("fig2a", "tiny", "cpu", out=tmp_path, progress=False)
    message = str(caught[0].message)
    assert str(path) in message and reason in message and "recomputed" in message
    assert [c.config() for c in calls] == [cfg] and again.skipped == len(POINTS) - 1  # only the damaged point ran again
    assert [r["test_error"] for r in again.rows] == [r["test_error"] for r in first.rows]
    aside = [f for f in path.parent.iterdir() if f.name.startswith(path.name + ".corrupt-")]
    assert len(aside) == 1  # kept for inspection, not deleted
    assert json.loads(path.read_text()) == json.loads(original)  # rewritten as a valid file
    assert store.verify(path) is None


def test_a_file_moved_aside_twice_keeps_both_copies(tmp_path):
    store = ResultsStore(tmp_path)
    for _ in range(2):
        store.path(POINTS[0]).parent.mkdir(parents=True, exist_ok=True)
        store.path(POINTS[0]).write_text("{")
        with pytest.warns(StoreWarning):
            assert store.get(POINTS[0]) is None
    assert len(list(store.path(POINTS[0]).parent.glob("*.corrupt-*"))) == 2


def test_atomic_write_fsyncs_and_leaves_the_old_file_on_failure(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    path = atomic_write(tmp_path / "a.json", "old")
    assert path.read_text() == "old" and len(synced) == 2  # the file, then its directory

    def boom(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, "new")
    assert path.read_text() == "old" and [f.name for f in tmp_path.iterdir()] == ["a.json"]


# ----------------------------------------------------------------- tables read back
@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """fig2a at tiny scale written by the command line (tables, per-run table, provenance)."""
    out = tmp_path_factory.mktemp("tables")
    assert cli.main(["reproduce", "fig2a", "--scale", "tiny", "--device", "cpu", "--out", str(out)]) == 0
    return out


@pytest.fixture
def copy(tables, tmp_path):
    for f in tables.iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    return tmp_path


def test_a_complete_table_loads(copy):
    runs = load_runs("fig2a", copy)
    assert len(load_figure("fig2a", copy).rows) == 9 and sum(r["role"] == "grid" for r in runs) == 9
    assert all(r["role"] == "rerun" and r["seed"] == 1 for r in runs if r["role"] != "grid")


def _lines(path):
    return path.read_text().splitlines(keepends=True)


@pytest.mark.parametrize("table", ["fig2a.csv", "fig2a_runs.csv"])
@pytest.mark.parametrize("damage, message", [
    (lambda p: p.write_text(""), r"fig2a(_runs)?\.csv is empty"),
    (lambda p: p.write_text(p.read_text()[: int(len(p.read_text()) * 0.6)]), r"truncated"),
    (lambda p: p.write_text("".join(x for x in _lines(p) if ",2layer," not in x)),
     r"has 6 of 9 points; missing: 2layer\(all\) m=8, 2layer\(last\) m=8, 2layer\(ntk\) m=8"),
    (lambda p: p.write_text("".join(x for x in _lines(p) if ",3layer,all," not in x)),
     r"has 8 of 9 points; missing: 3layer\(all\) m=8$"),
    (lambda p: p.write_text(_lines(p)[0]), r"has 0 of 9 points"),
    (lambda p: p.write_text(p.read_text().replace(",8,500,", ",8,5x0,", 1)), r"line 2: column 'n_train' holds '5x0'"),
    (lambda p: p.write_text(p.read_text().replace(",8,500,", ",9,500,", 1)),
     r"line 2: 3resnet\(all\) m=9 is not a point"),
    (lambda p: p.write_text("".join(_lines(p) + _lines(p)[1:2])), r"(appears twice|has 2 runs, its grid has 1)"),
    (lambda p: p.write_text(p.read_text().replace("fig2a,tiny", "fig2a,quick", 1)), r"line 2: a row of fig2a at "
                                                                                     r"scale 'quick'"),
])
def test_a_damaged_table_raises_an_error_naming_the_file(copy, table, damage, message):
    damage(copy / table)
    load = load_figure if table == "fig2a.csv" else load_runs
    with pytest.raises(ValueError, match=message) as err:
        load("fig2a", copy)
    assert str(copy / table) in str(err.value)


def test_an_unparsable_error_cell_is_named(copy):
    p = copy / "fig2a.csv"
    lines = _lines(p)
    header = lines[0].strip().split(",")
    cells = lines[4].split(",")
    cells[header.index("test_error")] = "oops"
    p.write_text("".join(lines[:4] + [",".join(cells)] + lines[5:]))
    with pytest.raises(ValueError, match=r"fig2a\.csv, line 5: column 'test_error' holds 'oops'"):
        load_figure("fig2a", copy)


def test_provenance_is_required_and_must_match_the_scale(copy):
    prov = copy / "fig2a.provenance.json"
    info = json.loads(prov.read_text())
    prov.write_text(json.dumps(dict(info, points=11)))
    with pytest.raises(ValueError, match="records 11 points, but fig2a at scale 'tiny' has 9"):
        load_figure("fig2a", copy)
    prov.write_text(json.dumps(dict(info, scale="huge")))
    with pytest.raises(ValueError, match="records no valid scale"):
        load_runs("fig2a", copy)
    prov.write_text("{")
    with pytest.raises(ValueError, match=r"fig2a\.provenance\.json cannot be read as JSON"):
        load_figure("fig2a", copy)
    prov.unlink()
    with pytest.raises(ValueError, match=r"fig2a\.provenance\.json is missing"):
        load_figure("fig2a", copy)


@pytest.mark.parametrize("scale", ["quick", "cpu"])
def test_the_shipped_results_are_complete(scale):
    root = os.path.join(os.path.dirname(__file__), os.pardir, "results", scale)
    shipped = [fig for fig in every_scale() if os.path.exists(os.path.join(root, f"{fig}.csv"))]
    if scale == "quick":
        assert shipped == list(every_scale())
    elif not shipped:
        pytest.skip(f"no figure shipped at {scale} scale")
    for fig in shipped:
        res = load_figure(fig, root)
        # Figure 4(a)'s wide widths are optional (shipped once they finish): the table lacks only those that its
        # provenance's widths do not list
        ran = res.provenance["settings"]["widths"]
        lacking = [p for p in optional_points(fig, scale) if p["m"] not in ran]
        assert len(res.rows) == res.provenance["points"] == len(figure_points(fig, scale)) - len(lacking)
        assert len(load_runs(fig, root)) >= len(res.rows)
        assert res.summary == open(os.path.join(root, f"{fig}.txt")).read().strip()
        _check_shipped_by_hand(root, fig)


_POINT = ("figure", "scale", "model", "mode", "m", "n_train", "beta", "alpha", "epochs", "select", "d", "init", "panel")


def _point_key(row: dict) -> tuple:
    """A point's columns as the CSV writes them ('' for None), and a hand-built point's weight decay."""
    cell = lambda v: "" if v is None else str(v)  # noqa: E731
    hand = (cell(row.get("wd")),) if row.get("model") == "hand_built" else ()
    return tuple(cell(row.get(k)) for k in _POINT) + hand


def _check_shipped_by_hand(root: str, fig: str) -> None:
    """A shipped table recomputed without the package: its sha256 against FIG.sha256, each row's seed statistics
    and plotted number from its own seed errors, its selected run, grid size, divergences and fresh-seed reruns
    from the per-run table, and its numbers from the store's JSON files (whose checksums are recomputed)."""
    import csv
    import hashlib
    import math
    import statistics
    from pathlib import Path

    d = Path(root)
    sums = dict(reversed(line.split("  ")) for line in (d / f"{fig}.sha256").read_text().splitlines())
    for name in (f"{fig}.csv", f"{fig}_runs.csv"):
        assert hashlib.sha256((d / name).read_bytes()).hexdigest() == sums[name]
    table = list(csv.DictReader(open(d / f"{fig}.csv", newline="")))
    runs: dict[tuple, list[dict]] = {}
    for r in csv.DictReader(open(d / f"{fig}_runs.csv", newline="")):
        runs.setdefault(_point_key(r), []).append(r)
    stored: dict[tuple, list[dict]] = {}
    for f in (d / "store" / fig).glob("*.json"):
        payload = json.loads(f.read_text())
        body = {k: v for k, v in payload.items() if k != "sha256"}
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
        assert hashlib.sha256(canonical.encode()).hexdigest() == payload["sha256"], f
        stored.setdefault(_point_key(payload["config"]), []).append(payload["result"])
    num = lambda v: float(v) if v not in ("", "None") else math.nan  # noqa: E731
    fin = lambda xs: [x for x in xs if math.isfinite(x)]  # noqa: E731
    for row in table:
        key, test = _point_key(row), num(row["test_error"])
        errs = (json.loads(row["seed_errors"]) if row["seed_errors"] else None) or [test]
        fresh = fin(errs[1:] if len(errs) > 1 else errs)
        median = statistics.median(fresh) if fresh else math.nan
        assert errs[0] == test or (math.isnan(errs[0]) and math.isnan(test)), key
        assert num(row["median"]) == median or (math.isnan(median) and row["median"] in ("", "nan")), key
        if fin(errs):
            assert (num(row["seed_min"]), num(row["seed_max"])) == (min(fin(errs)), max(fin(errs))), key
        exact = num(row["exact_test_error"])
        plotted = exact if math.isfinite(exact) and not median <= exact else median
        assert num(row["plotted"]) == plotted or (math.isnan(plotted) and row["plotted"] in ("", "nan")), key
        mine = runs[key]
        selected = [r for r in mine if r["selected"] == "True"]
        assert len(selected) <= 1 and all(num(r["test_error"]) == test for r in selected), key
        grid = [r for r in mine if r["role"] == "grid"]
        if row["grid_size"]:
            assert len(grid) == int(row["grid_size"]), key
            assert sum(r["diverged"] == "True" for r in grid) == int(row["diverged"]), key
        reruns = [num(r["test_error"]) for r in mine if r["role"] == "rerun"]
        if reruns:
            assert str(reruns) == str(errs[1:]), key  # NaN for a diverged rerun on both sides
        same = [res for res in stored.get(key, []) if str(res.get("test_error")) == str(test)
                and str(res.get("seed_errors")) == str(json.loads(row["seed_errors"]) if row["seed_errors"] else None)]
        assert same, f"{fig} {key}: no stored point holds the table's numbers"


# ----------------------------------------------------------------- tables carry their checksum
def test_the_command_line_records_each_tables_checksum(copy):
    import hashlib

    lines = (copy / "fig2a.sha256").read_text().splitlines()
    assert lines == [f"{hashlib.sha256((copy / f).read_bytes()).hexdigest()}  {f}" for f in ("fig2a.csv",
                                                                                             "fig2a_runs.csv")]


@pytest.mark.parametrize("table", ["fig2a.csv", "fig2a_runs.csv"])
def test_an_edited_number_is_refused_naming_the_table(copy, table):
    path = copy / table
    lines = _lines(path)
    header = lines[0].strip().split(",")
    cells = lines[1].split(",")
    col = header.index("test_error")
    cells[col] = "0.1"  # a well-formed table that passes every structural check
    path.write_text("".join([lines[0], ",".join(cells)] + lines[2:]))
    load = load_figure if table == "fig2a.csv" else load_runs
    with pytest.raises(ValueError, match=r"does not match the sha256 recorded in .*fig2a\.sha256") as err:
        load("fig2a", copy)
    assert str(path) in str(err.value) and "reproduce fig2a --scale tiny --out" in str(err.value)


def test_a_table_without_its_checksum_file_is_refused(copy):
    (copy / "fig2a.sha256").unlink()
    with pytest.raises(ValueError, match=r"fig2a\.sha256 is missing: the tables of 'fig2a' .* cannot be verified"):
        load_figure("fig2a", copy)
    (copy / "fig2a.sha256").write_text("not a checksum\n")
    with pytest.raises(ValueError, match=r"fig2a\.sha256, line 1: not '<sha256>  <file name>'"):
        load_runs("fig2a", copy)


def test_a_known_config_keys_a_shipped_store_file(tmp_path):
    """The key of today's first fig2a point at quick scale names the file the shipped store holds for it (written
    by an earlier version, with this schema): the keys have not moved, so no stored point is recomputed."""
    from pathlib import Path

    cfg = figure_points("fig2a", "quick")[0]
    key = ResultsStore(tmp_path).key(cfg)
    shipped = Path(__file__).parent.parent / "results" / "quick" / "store" / "fig2a" / f"{key}.json"
    payload = json.loads(shipped.read_text())
    assert payload["key"] == shipped.stem and payload["config"] == cfg and payload["schema"] == ResultsStore.SCHEMA


def test_every_shipped_table_has_its_checksum():
    import hashlib
    from pathlib import Path

    root = Path(__file__).parent.parent / "results"
    tables = sorted(root.glob("*/*.csv"))
    every = [f"{f}{end}.csv" for f in every_scale() for end in ("", "_runs")]  # the 6 figures, 2 tables each
    val = [f"{f}{end}.csv" for f in ("fig2a", "fig2b", "fig3") for end in ("", "_runs")]  # validation selection
    shipped = {d: sorted(t.name for t in tables if t.parent.name == d) for d in {t.parent.name for t in tables}}
    assert shipped == {"quick": sorted(every), "cpu": sorted(every), "cpu-v1": sorted(every), "quick-val": sorted(val)}
    assert len(tables) == 42
    for t in tables:
        name = t.name.removesuffix(".csv").removesuffix("_runs")
        sums = dict(line.split("  ")[::-1] for line in (t.parent / f"{name}.sha256").read_text().splitlines())
        assert sums[t.name] == hashlib.sha256(t.read_bytes()).hexdigest(), t
