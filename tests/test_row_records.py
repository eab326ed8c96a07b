"""Figure rows as records: one writer and one reader for FIG.csv and FIG_runs.csv, attributes and names alike."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from resnetlearn.reproduce.rows import Row, Run, csv_text, read_csv


def _row(**changes) -> Row:
    fields = dict(figure="fig2a", scale="tiny", model="3resnet", mode="all", m=8, n_train=100, beta=1.0, alpha=0.3,
                  epochs=2, select="test", test_error=0.25, seed_errors=[0.25, math.nan, 0.5], lr=0.1, wd=0.001,
                  lr_at_grid_edge=True, wd_at_grid_edge=False, diverged=1, grid_size=4, device="cpu",
                  grid=[[0.1, 0.2, 3.0]], runs=[{"role": "grid", "lr": 0.1, "wd": 0.001, "seed": 0}])
    return Row.of({**fields, **changes})


def test_a_row_reads_by_attribute_and_as_the_mapping_it_was_given():
    r = _row(some_column="kept")
    assert (r.m, r.test_error, r.init, r.exact_test_error) == (8, 0.25, None, None)
    assert r["m"] == 8 and r.get("init", "paper") == "paper" and "init" not in r and "m" in r
    assert r.extra == {"some_column": "kept"} and r["some_column"] == "kept"
    with pytest.raises(KeyError):
        r["init"]
    r.init = "ntk"  # a column set later is given from then on
    assert r["init"] == "ntk" and dict(r)["init"] == "ntk"
    assert r.replace(m=16).m == 16 and r.m == 8
    assert Row.of(r) is r


def test_the_writer_writes_the_bytes_a_dict_writer_writes():
    """An independent route: csv.DictWriter over plain dicts with the JSON columns encoded by hand."""
    rows = [_row(), _row(m=16, test_error=math.nan, seed_errors=None, panel="edge")]
    cols = ["figure", "m", "test_error", "seed_errors", "init", "panel", "grid", "lr_at_grid_edge", "diverged"]
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore")
    w.writeheader()
    for r in rows:
        d = dict(r)
        for k in ("seed_errors", "grid"):
            if d.get(k) is not None:
                d[k] = json.dumps(d[k])
        w.writerow(d)
    assert csv_text(rows, cols) == buf.getvalue()
    assert csv_text(rows, cols).splitlines()[1] == "fig2a,8,0.25,\"[0.25, NaN, 0.5]\",,,\"[[0.1, 0.2, 3.0]]\",True,1"


def test_the_reader_gives_back_what_the_writer_wrote(tmp_path):
    rows = [_row(), _row(m=16, test_error=0.75, seed_errors=None, lr_at_grid_edge=False)]
    cols = ["figure", "scale", "model", "mode", "m", "test_error", "seed_errors", "lr", "lr_at_grid_edge",
            "diverged", "grid", "init"]
    path = tmp_path / "t.csv"
    path.write_bytes(csv_text(rows, cols).encode())
    back = [r for _, r in read_csv(path, Row, ("figure", "m"))]
    assert [type(r) for r in back] == [Row, Row]
    assert back[0].m == 8 and back[0].lr == 0.1 and back[0].lr_at_grid_edge is True and back[0].diverged == 1
    assert back[0].seed_errors[0] == 0.25 and math.isnan(back[0].seed_errors[1]) and back[0].grid == [[0.1, 0.2, 3.0]]
    assert back[1].seed_errors is None and back[1].lr_at_grid_edge is False and back[0].init == ""
    assert csv_text(back, cols) == csv_text(rows, cols)  # read and written again: the same bytes


def test_the_reader_names_the_file_line_and_column_of_a_bad_cell(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("figure,seed,selected\nfig2a,1,True\nfig2a,x,False\n")
    with pytest.raises(ValueError, match=r"runs.csv, line 3: column 'seed' holds 'x', not an integer"):
        read_csv(path, Run, ("figure",))
    path.write_text("figure,seed\nfig2a,1\n")
    with pytest.raises(ValueError, match=r"lacks the column\(s\) selected"):
        read_csv(path, Run, ("figure", "selected"))
    path.write_text("figure,seed\nfig2a,1")
    with pytest.raises(ValueError, match="truncated"):
        read_csv(path, Run, ("figure",))
