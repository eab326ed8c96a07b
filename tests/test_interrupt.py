"""Ctrl-C during ``reproduce``: prompt exit, nothing half-trained stored, a rerun equal to an uninterrupted run."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from resnetlearn import __main__ as cli
from resnetlearn import figures, reproduce
from resnetlearn.reproduce import FigureInterrupted, ResultsStore, _points, run_figure
from resnetlearn.training import GridResult

EPOCHS = 80
"""Epochs of the slowed-down tiny scale: about a second per point, so Ctrl-C lands inside a point."""

DRIVER = f"""
import signal
import sys
# a terminal's Ctrl-C: Python's KeyboardInterrupt handler even when this test runs where SIGINT is ignored
# (a background job of a non-interactive shell inherits SIG_IGN, and Python then keeps ignoring it)
signal.signal(signal.SIGINT, signal.default_int_handler)
from resnetlearn import __main__ as cli, figures
_settings = figures.scale_settings  # where every figure's points take their epochs from
figures.scale_settings = lambda s: dict(_settings(s), epochs={EPOCHS}) if s == "tiny" else _settings(s)
cli.run(sys.argv[1:])
"""


def _slow(settings):
    return lambda s: dict(settings(s), epochs=EPOCHS) if s == "tiny" else settings(s)


@pytest.fixture
def slow_tiny(monkeypatch):
    monkeypatch.setattr(figures, "scale_settings", _slow(figures.scale_settings))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The tables of an uninterrupted run of the slowed-down fig2a, written in this process."""
    out = tmp_path_factory.mktemp("uninterrupted")
    settings = figures.scale_settings
    figures.scale_settings = _slow(settings)
    try:
        assert cli.main(["reproduce", "fig2a", "--scale", "tiny", "--device", "cpu", "--out", str(out)]) == 0
    finally:
        figures.scale_settings = settings
    return out


def _table(path: Path) -> list[dict]:
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        r.pop("seconds", None)  # wall time is the one column that may differ between runs
    return rows


def _results(store_dir: Path) -> dict[str, dict]:
    out = {}
    for f in sorted(store_dir.glob("fig2a/*")):
        payload = json.loads(f.read_text())
        out[f.name] = {k: v for k, v in payload["result"].items() if k != "seconds"}
    return out


@pytest.mark.parametrize("workers", [0, 2])
def test_ctrl_c_exits_promptly_stores_no_partial_point_and_resumes_exactly(tmp_path, uninterrupted, slow_tiny,
                                                                           workers):
    out = tmp_path / "out"
    args = ["reproduce", "fig2a", "--scale", "tiny", "--device", "cpu", "--out", str(out), "--workers", str(workers)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    store_dir = out / "store"
    deadline = time.monotonic() + 120
    while len(list(store_dir.glob("fig2a/*.json"))) < 2:  # two points done, the next ones in progress
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    time.sleep(0.15)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole process group, workers included
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert took < 5, f"exit took {took:.1f} s"
    assert "interrupted" in err and "resume with the same command" in err and "Traceback" not in err
    stored = _results(store_dir)
    assert 2 <= len(stored) < 9 and f"{len(stored)} of 9 points are stored" in err
    assert not [f for f in store_dir.rglob("*") if f.is_file() and not f.name.endswith(".json")]  # no temp files
    assert not (out / "fig2a.csv").exists()  # tables are written only for a finished figure
    # every stored point is a finished one: the same numbers as in the uninterrupted run
    reference = _results(uninterrupted / "store")
    assert all(stored[k] == reference[k] for k in stored)
    store = ResultsStore(store_dir)
    assert all(store.verify(f) is None for f in store_dir.glob("fig2a/*.json"))
    # the rerun resumes and its tables equal the uninterrupted run's
    assert cli.main(args) == 0
    for table in ("fig2a.csv", "fig2a_runs.csv"):
        assert _table(out / table) == _table(uninterrupted / table)


def test_an_interrupted_grid_is_not_stored(tmp_path, monkeypatch):
    """The engine catches Ctrl-C and returns ``interrupted=True``; run_point must not return its numbers."""
    def interrupted_grid(*args, **kwargs):
        row = dict(lr=0.05, wd=0.0, seed=0, test_error=0.5, train_error=0.4, diverged=False, frobenius_W=1.0,
                   selected=True)
        return GridResult([row], row, "test", True, 0.1)

    monkeypatch.setattr(reproduce, "grid_search", interrupted_grid)
    with pytest.raises(KeyboardInterrupt, match="interrupted during training"):
        reproduce.run_point(_points("fig2a", "tiny", "cpu", "test")[0])
    with pytest.raises(FigureInterrupted) as err:
        run_figure("fig2a", "tiny", "cpu", out=tmp_path, progress=False)
    assert (err.value.saved, err.value.total, err.value.store) == (0, 9, tmp_path)
    assert isinstance(err.value, KeyboardInterrupt) and not list(tmp_path.rglob("*.json"))


def test_finished_points_are_kept_and_the_rest_cancelled(tmp_path, monkeypatch):
    """With an executor, points finished before Ctrl-C are stored, pending ones are cancelled."""
    from concurrent.futures import Future

    pts = _points("fig2a", "tiny", "cpu", "test")
    submitted = []

    class Pool:
        def submit(self, fn, config):
            fut = Future()
            i = pts.index(config)
            if i in (0, 2):  # finished in a worker; 2 is finished but not yet collected
                fut.set_result({"test_error": float(i), "runs": []})
            elif i == 1:  # the parent is waiting on this one when Ctrl-C arrives
                fut.result = lambda timeout=None: (_ for _ in ()).throw(KeyboardInterrupt())
            submitted.append(fut)
            return fut

    with pytest.raises(FigureInterrupted) as err:
        run_figure("fig2a", "tiny", "cpu", out=tmp_path, executor=Pool(), progress=False)
    store = ResultsStore(tmp_path)
    assert err.value.saved == 2 and store.get(pts[0]) and store.get(pts[2]) and not store.get(pts[1])
    assert all(f.cancelled() for f in submitted[3:])


def test_the_hand_built_point_checks_the_engine_flag(monkeypatch):
    from resnetlearn import training

    real = training.train_models

    def stopped(*args, **kwargs):
        res = real(*args, **kwargs)
        res.interrupted = True
        return res

    monkeypatch.setattr(reproduce, "train_models", stopped)
    with pytest.raises(KeyboardInterrupt, match="hand_built"):
        reproduce._hand_built_point(dict(figure="fig4", model="hand_built", mode="-", wd=0.0, epochs=1, d=8, m=200))
