"""Ctrl-C during ``reproduce``: prompt exit, nothing half-trained stored, a rerun equal to an uninterrupted run."""

import csv
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from resnetlearn import __main__ as cli
from resnetlearn.learners.search import GridResult
from resnetlearn.reproduce import FigureInterrupted, ResultsStore, figures, fit, points, run_figure
from resnetlearn.reproduce.figures import points as figure_points

EPOCHS = 80
"""Epochs of the slowed-down tiny scale: about a second per point, so Ctrl-C lands inside a point."""

DRIVER = f"""
import signal
import sys
# a terminal's Ctrl-C: Python's KeyboardInterrupt handler even when this test runs where SIGINT is ignored
# (a background job of a non-interactive shell inherits SIG_IGN, and Python then keeps ignoring it)
signal.signal(signal.SIGINT, signal.default_int_handler)
from resnetlearn import __main__ as cli
from resnetlearn.reproduce import figures
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

    monkeypatch.setattr(fit, "search_split", interrupted_grid)
    with pytest.raises(KeyboardInterrupt, match="interrupted during training"):
        points.run_point(figure_points("fig2a", "tiny", device="cpu")[0])
    with pytest.raises(FigureInterrupted) as err:
        run_figure("fig2a", "tiny", "cpu", out=tmp_path, progress=False)
    assert (err.value.saved, err.value.total, err.value.store) == (0, 9, tmp_path)
    assert isinstance(err.value, KeyboardInterrupt) and not list(tmp_path.rglob("*.json"))


def test_finished_points_are_kept_and_the_rest_cancelled(tmp_path, monkeypatch):
    """With an executor, points finished before Ctrl-C are stored, pending ones are cancelled."""
    from concurrent.futures import Future

    pts = figure_points("fig2a", "tiny", device="cpu")
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
    from resnetlearn.learners import hand_built, training

    real = training.train_models

    def stopped(*args, **kwargs):
        res = real(*args, **kwargs)
        res.interrupted = True
        return res

    monkeypatch.setattr(hand_built, "train_models", stopped)
    with pytest.raises(KeyboardInterrupt, match="hand_built"):
        points.run_point(next(p for p in figure_points("fig4", "tiny", device="cpu") if p["model"] == "hand_built"))


# ----------------------------------------------------------------- workers end with their parent, however it ends
OWNED_DRIVER = DRIVER.replace("from resnetlearn import", """import errno
import os
if os.environ.get("FAIL_FORK_AFTER"):  # a process limit: the fork after the first n ones is refused
    _fork, _forks = os.fork, [0]
    def _limited_fork():
        if _forks[0] >= int(os.environ["FAIL_FORK_AFTER"]):
            raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
        _forks[0] += 1
        return _fork()
    os.fork = _limited_fork
from resnetlearn import""", 1)

needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="counts processes through /proc (Linux)")


def _alive(pgid: int) -> list[int]:
    """Processes of the process group ``pgid`` that still run (zombies awaiting their reaper excluded)."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                fields = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] not in "ZX":
                pids.append(int(d))
    return pids


def _start(out: Path, workers: int, **env) -> subprocess.Popen:
    args = ["reproduce", "fig2a", "--scale", "tiny", "--device", "cpu", "--out", str(out), "--workers", str(workers)]
    return subprocess.Popen([sys.executable, "-c", OWNED_DRIVER, *args], env=dict(os.environ, OMP_NUM_THREADS="1",
                            **env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _seconds_until_none_left(pgid: int, since: float, limit: float = 10.0) -> float:
    while _alive(pgid) and time.monotonic() - since < limit:
        time.sleep(0.005)
    left = _alive(pgid)
    for pid in left:  # never leave strays behind, whatever the assertion says
        os.kill(pid, signal.SIGKILL)
    return math.inf if left else time.monotonic() - since


def _busy(proc: subprocess.Popen, out: Path, workers: int) -> None:
    """Wait until a point is stored and the workers are computing the next ones."""
    deadline = time.monotonic() + 120
    while not list((out / "store").glob("fig2a/*.json")) or len(_alive(proc.pid)) < 1 + workers:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    time.sleep(0.15)


@needs_proc
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_signal_to_the_parent_alone_ends_every_worker_within_a_second(tmp_path, sig):
    """SIGTERM to the parent alone (not its group) reaches no worker by itself: the parent stops them (exit 143,
    like Ctrl-C); a parent killed outright takes them with it (prctl PR_SET_PDEATHSIG in the worker initializer)."""
    out = tmp_path / "out"
    proc = _start(out, 2)
    _busy(proc, out, 2)
    sent = time.monotonic()
    os.kill(proc.pid, sig)
    proc.wait(timeout=60)  # not communicate(): the workers hold the pipes too
    ended = time.monotonic()
    took = _seconds_until_none_left(proc.pid, ended)
    _, err = proc.communicate(timeout=10)
    assert ended - sent < 5, f"the parent took {ended - sent:.1f} s to stop"
    assert took < 1.0, f"a worker outlived its parent by {took:.2f} s"
    if sig == signal.SIGTERM:
        assert proc.returncode == 143 and "terminated (SIGTERM)" in err and "Traceback" not in err, err
        assert "resume with the same command" in err
    store_dir = out / "store"
    assert not [f for f in store_dir.rglob("*") if f.is_file() and not f.name.endswith(".json")]  # no temp files
    assert all(ResultsStore(store_dir).verify(f) is None for f in store_dir.glob("fig2a/*.json"))
    assert not (out / "fig2a.csv").exists()


@needs_proc
def test_a_refused_fork_stops_the_pool_instead_of_waiting_on_it(tmp_path):
    """A process limit refusing the second worker (BlockingIOError from fork) left the parent waiting forever
    on the first, idle one. Now it stops the pool, says why and exits with status 1."""
    out = tmp_path / "out"
    proc = _start(out, 4, FAIL_FORK_AFTER="1")
    proc.wait(timeout=60)  # it waited forever
    ended = time.monotonic()
    took = _seconds_until_none_left(proc.pid, ended)
    _, err = proc.communicate(timeout=10)
    assert took < 1.0, f"a worker outlived its parent by {took:.2f} s"
    assert proc.returncode == 1 and "Traceback" not in err, err
    assert "refused to start a worker process" in err and "BlockingIOError" in err and "fewer --workers" in err
    assert not list((out / "store").rglob("*.json"))


def test_an_error_in_the_parent_terminates_the_workers_and_keeps_finished_points(tmp_path, monkeypatch):
    """Any exception (here the disk filling up while a point is stored) stops the pool at once instead of
    waiting for the points in progress and the queued ones; points that finished are still kept."""
    from concurrent.futures import Future

    pts = figure_points("fig2a", "tiny", device="cpu")
    submitted = []

    class Pool:
        def submit(self, fn, config):
            fut = Future()
            if pts.index(config) in (0, 1):
                fut.set_result({"test_error": 1.0, "runs": []})
            submitted.append(fut)
            return fut

    real_put = ResultsStore.put

    def put(self, config, result):
        if config == pts[0]:
            raise OSError(28, "No space left on device")
        return real_put(self, config, result)

    monkeypatch.setattr(ResultsStore, "put", put)
    with pytest.raises(OSError, match="No space left"):
        run_figure("fig2a", "tiny", "cpu", out=tmp_path, executor=Pool(), progress=False)
    assert all(f.cancelled() for f in submitted[2:]) and ResultsStore(tmp_path).get(pts[1])
    # and the command line terminates its pool on any exception (it waited for every queued point)
    stopped = []
    monkeypatch.setattr(cli, "stop_process_pool", lambda pool: stopped.append(pool) or pool.shutdown(wait=False))
    monkeypatch.setattr(cli, "run_figure", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("boom")))
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["reproduce", "fig2a", "--scale", "tiny", "--device", "cpu", "--out", str(tmp_path / "o"),
                  "--workers", "2"])
    assert len(stopped) == 1


def test_more_workers_than_points_are_not_started(tmp_path, monkeypatch, capsys):
    made = []

    class Pool:
        def __init__(self, n, **kw):
            made.append(n)

        def shutdown(self, *a, **k):
            pass

    monkeypatch.setattr(cli, "ProcessPoolExecutor", Pool)
    monkeypatch.setattr(cli, "run_figure", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    monkeypatch.setattr(cli, "stop_process_pool", lambda pool: None)
    assert cli.main(["reproduce", "fig2a", "--scale", "tiny", "--out", str(tmp_path), "--workers", "1000000"]) == 130
    assert made == [9] and "--workers 1000000: at most 9 points run at once here" in capsys.readouterr().err


def _deaf_to_sigterm():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def test_a_worker_that_does_not_answer_sigterm_is_killed():
    """A worker forked while another thread of the parent held a lock can hang before its initializer ran,
    deaf to SIGTERM; the interpreter's exit then waited on it forever. stop_process_pool kills it."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from resnetlearn.reproduce import stop_process_pool

    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"), initializer=_deaf_to_sigterm)
    pool.submit(time.sleep, 60)
    deadline = time.monotonic() + 30
    while not pool._processes and time.monotonic() < deadline:
        time.sleep(0.01)
    (worker,) = pool._processes.values()
    time.sleep(0.2)  # the worker is inside time.sleep(60)
    t0 = time.monotonic()
    stop_process_pool(pool)
    assert not worker.is_alive() and time.monotonic() - t0 < 2.0 and worker.exitcode == -signal.SIGKILL
