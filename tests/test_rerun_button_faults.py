"""Notebook 05's rerun button (:class:`resnetlearn.classroom.rerun.FigureRerun`) when things go wrong: double
clicks, a second button on the same run, Stop and a kernel interrupt mid-run (every finished point kept, the next
press resumes), folders that cannot be written (it falls back and says where its results go), a full disk, a
damaged store; its status line shows progress and the measured time of a run. Tiny scale, slowed down where a
run must still be going, in temporary folders."""

from __future__ import annotations

import errno
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from resnetlearn.classroom import rerun as R
from resnetlearn.classroom.rerun import FigureRerun, expected_time
from resnetlearn.reproduce import DEFAULT_OUT, ResultsStore, figures, running, store
from resnetlearn.reproduce.figures import points as figure_points
from resnetlearn.reproduce.store import PACKAGE_ROOT

EPOCHS = 80
"""Epochs of the slowed-down tiny scale: about a second per point, so that a run is still going when stopped."""


@pytest.fixture
def slow_tiny(monkeypatch):
    settings = figures.scale_settings
    monkeypatch.setattr(figures, "scale_settings",
                        lambda s: dict(settings(s), epochs=EPOCHS) if s == "tiny" else settings(s))


def _button(tmp_path: Path, **kw) -> FigureRerun:
    kw.setdefault("out", tmp_path / "results" / "live" / "store")
    return FigureRerun("fig2a", "tiny", device="cpu", fallback=tmp_path / "home" / "resnetlearn-results", **kw)


def _stored(folder: Path) -> int:
    return len(list(Path(folder).glob("fig2a/*.json")))


def _statuses(r: FigureRerun) -> list[str]:
    seen: list[str] = []
    r.status.observe(lambda change: seen.append(change["new"]), "value")
    return seen


def _until(cond, timeout=120.0):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def test_a_double_click_runs_once_and_a_second_button_is_told_a_run_is_going(tmp_path, slow_tiny, monkeypatch):
    calls = []
    real = R.run_figure
    monkeypatch.setattr(R, "run_figure", lambda *a, **k: calls.append(1) or real(*a, **k))
    r = _button(tmp_path)
    r.button.click()
    r.button.click()  # the second click of a double-click, while the run goes
    assert r.start() is False and r.button.disabled and not r.stop_button.disabled
    other = _button(tmp_path)  # the cell run again: a new button on the same store
    assert other.start() is False
    assert f"a run of fig2a into {r.out} is already going in this kernel" in other.job.status_text
    assert r.wait(300) and r.result is not None and len(calls) == 1
    assert not r.button.disabled and r.stop_button.disabled


def test_stop_keeps_the_finished_points_and_the_next_press_resumes(tmp_path, slow_tiny):
    r = _button(tmp_path)
    seen = _statuses(r)
    r.button.click()
    _until(lambda: _stored(r.out) >= 1)
    t0 = time.monotonic()
    assert r.stop(timeout=30)
    assert time.monotonic() - t0 < 10  # within an SGD step (a point takes about a second here)
    kept = _stored(r.out)
    assert 1 <= kept < 9
    assert r.job.status_text.startswith(f"stopped: {kept} of 9 points of fig2a are stored in {r.out}")
    assert "press the button to resume" in r.job.status_text and not r.button.disabled
    # progress was shown while it ran, with where it writes
    assert any("of 9 points to compute are done" in s and f"store {r.out}, tables {r.mine}" in s for s in seen), seen
    r.button.click()
    assert r.wait(300) and r.result is not None
    assert r.result.skipped == kept and _stored(r.out) == 9
    assert f"{kept} of 9 points reused from the store {r.out}" in r.job.status_text


def test_a_kernel_interrupt_while_a_cell_waits_stops_the_run(tmp_path, slow_tiny):
    r = _button(tmp_path)
    r.button.click()
    _until(lambda: _stored(r.out) >= 1)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a kernel, even where a shell
    try:                                                                  # started the tests with SIGINT ignored
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()  # the kernel's interrupt: SIGINT
        with pytest.raises(KeyboardInterrupt):
            r.wait(120)
    finally:
        signal.signal(signal.SIGINT, previous)
    _until(lambda: not r.job.running, 30)
    assert r.job.status_text.startswith("stopped: ") and _stored(r.out) < 9


def test_folders_that_cannot_be_written_fall_back_to_the_home_folder_and_say_so(tmp_path):
    blocked = tmp_path / "read-only"
    blocked.write_text("a file where a folder would go: nothing can be created under it")
    r = _button(tmp_path, out=blocked / "live" / "store", mine=blocked / "tiny", shipped=tmp_path / "none")
    assert "not writable here: a press falls back to" in r.job.status_text
    r.button.click()
    assert r.wait(300) and r.result is not None, r.job.status_text
    home = tmp_path / "home" / "resnetlearn-results"
    assert r.out == home / "live" / "store" and r.mine == home / "tiny"
    assert _stored(r.out) == 9 and (r.mine / "fig2a.csv").is_file()
    assert f"tables written to {r.mine}" in r.job.status_text
    assert blocked.read_text().startswith("a file where")


def test_nothing_writable_is_refused_before_any_work(tmp_path, monkeypatch):
    blocked = tmp_path / "read-only"
    blocked.write_text("x")
    monkeypatch.setattr(R.tempfile, "gettempdir", lambda: str(blocked))
    monkeypatch.setattr(R, "run_figure", lambda *a, **k: pytest.fail("a run started"))
    r = FigureRerun("fig2a", "tiny", device="cpu", out=blocked / "store", mine=blocked / "tiny",
                    shipped=tmp_path / "none", fallback=blocked / "home")
    r.button.click()
    assert r.wait(30) and r.result is None
    assert f"cannot write {blocked / 'store'}" in r.job.status_text and "nothing was run" in r.job.status_text


def test_a_full_disk_says_which_file_and_that_the_next_press_resumes(tmp_path, monkeypatch):
    monkeypatch.setattr(running, "run_point", lambda config, cancel=None: {"test_error": 0.5, "runs": []})

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store.os, "fsync", full)
    r = _button(tmp_path)
    r.button.click()
    assert r.wait(60) and r.result is None
    first = ResultsStore(r.out).path(figure_points("fig2a", "tiny", device="cpu")[0])
    text = r.job.status_text
    assert f"cannot write {first}: No space left on device. Every point finished before is stored in {r.out}" in text
    assert "free space on that disk and press the button again to resume" in text and not r.button.disabled


def test_a_damaged_or_foreign_store_is_recomputed_to_the_same_tables(tmp_path):
    r = _button(tmp_path)
    r.button.click()
    assert r.wait(300) and r.result is not None
    reference = r.result.rows
    files = sorted(r.out.glob("fig2a/*.json"))
    files[0].write_text(files[0].read_text().replace('"test_error"', '"test_eror"', 1))  # damaged
    payload = json.loads(files[1].read_text())
    payload["config"]["m"] = 12345  # foreign: a file whose key is not its configuration's
    files[1].write_text(json.dumps(payload))
    again = _button(tmp_path)
    again.button.click()
    with pytest.warns(store.StoreWarning):
        assert again.wait(300) and again.result is not None
    assert again.result.skipped == 7
    def same(rows):  # as JSON, where a diverged run's NaN equals itself
        return json.dumps([{k: v for k, v in row.items() if k != "seconds"} for row in rows], sort_keys=True)

    assert same(again.result.rows) == same(reference)


def test_the_store_never_goes_into_the_shipped_tables():
    with pytest.raises(ValueError, match=r"out=.* lies in the shipped results/ .* git-ignored .*live"):
        FigureRerun("fig2a", "quick", out=PACKAGE_ROOT / "results" / "quick" / "store")
    r = FigureRerun("fig2a", "quick", out=PACKAGE_ROOT / "results" / "live" / "store")  # notebook 05's default
    assert r.mine == PACKAGE_ROOT / DEFAULT_OUT / "quick" and r.shipped == PACKAGE_ROOT / "results" / "quick"


def test_the_expected_time_is_read_from_the_measurement(tmp_path):
    m = tmp_path / "rerun_button_cpu.json"
    m.write_text(json.dumps({"figure": "fig2a", "scale": "quick", "wall_s": 512.3, "cpu_count": 2,
                             "torch_threads": 1, "load_average_1_5_15_before": [3.1, 3.0, 2.9],
                             "date": "2026-12-05 08:00 UTC"}))
    said = expected_time("fig2a", "quick", m)
    assert said.startswith("about 9 min from an empty store (measured 512 s on a 2-core CPU with 1 torch thread(s)")
    assert "load 3.1" in said and expected_time("fig2b", "quick", m) is None
    assert expected_time("fig2a", "quick", tmp_path / "absent.json") is None
    shipped = json.loads(R.MEASUREMENT.read_text())  # the committed measurement of the default run
    assert (shipped["figure"], shipped["scale"]) == ("fig2a", "quick") and shipped["reused_from_store"] == 0
    button = FigureRerun("fig2a", "quick", out=tmp_path / "live" / "store", shipped=tmp_path / "quick")
    assert f"measured {shipped['wall_s']:.0f} s" in button.job.status_text
