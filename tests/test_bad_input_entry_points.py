"""Bad input at the entry points a user calls: each ends in an error naming the parameter or file and what is
allowed, before any long work, or in the right answer. The command lines run as child processes, as a user runs
them."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_interrupt import DRIVER, _alive

from resnetlearn.classroom import check
from resnetlearn.reproduce import ResultsStore
from resnetlearn.reproduce.figures import points as figure_points
from resnetlearn.reproduce.fit import Samples
from resnetlearn.reproduce.learner import HandBuilt, Network
from resnetlearn.reproduce.point import CONFIG_KEYS, Point, Schedule, Search
from resnetlearn.reproduce.points import run_point
from resnetlearn.targets.concept import parity6_target, parity_instance

ROOT = Path(__file__).resolve().parents[1]
needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="finds the workers through /proc (Linux)")


def _child(*args, cwd=None, **popen) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          **popen)


# ----------------------------------------------------------------- the student-copy command
def test_a_notebook_that_is_not_json_is_named_by_the_student_command(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.ipynb").write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (src / "broken.ipynb").write_text("{ this is not JSON")
    done = _child("-m", "resnetlearn.classroom.student", "--src", str(src), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"error: {src / 'broken.ipynb'} is not a readable notebook (NotJSONError" in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()  # nothing written, not even the readable notebook's copy


def test_an_out_that_is_a_file_is_refused_by_the_student_command(tmp_path):
    target = tmp_path / "student"
    target.write_text("my notes")
    done = _child("-m", "resnetlearn.classroom.student", "--out", str(target))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"error: out: {target} exists and is not a folder" in done.stderr
    assert target.read_text() == "my notes"


# ----------------------------------------------------------------- the fit API
def test_a_hand_built_fit_refuses_a_target_it_was_not_built_for():
    """The construction answers §8.2's degree-6 parity only: on the d = 10 parity instance (four outputs) it
    returned the d = 6 parity's error and a one-output predict."""
    other = Samples(parity_instance(d=10, k=4), 40, 20)
    with pytest.raises(ValueError, match=r"solves only the degree-6 parity parity6_target\(d\) with d >= 6 .*"
                                         r"samples\.target is 'parity\(d=10, k=4\)' \(d = 10, k = 4\)"):
        HandBuilt(1e-3, m=200).fit(other, None, schedule=Schedule(5))
    # the right target, in any d >= 6, is still fitted: one output, as the target has
    fit = HandBuilt(0.0, m=200).fit(Samples(parity6_target(8), 40, 20), None, schedule=Schedule(5))
    assert fit.predict(parity6_target(8).sample(10, seed=5, dtype=fit.W.dtype).x).shape == (10, 1)


def test_a_target_given_by_name_is_refused_naming_the_target_and_how_to_build_one():
    with pytest.raises(TypeError, match=r"target must be a target object .* got 'parity' \(str\); .*"
                                        r"instance\(name\), name one of 'parity', 'talk', 'hard'"):
        Samples("parity", 40, 20)


def test_a_network_fit_without_a_schedule_names_schedule_and_what_it_needs():
    net, samples = Network("3resnet", "all", m=8), Samples(parity_instance(), 40, 20)
    search = Search((0.1,), (0.0,), "test", (1,))
    with pytest.raises(TypeError, match=r"schedule must be a resnetlearn\.reproduce\.point\.Schedule\(epochs, "
                                        r"batch_size=None\).* got None"):
        net.fit(samples, search, schedule=None)
    with pytest.raises(ValueError, match=r"schedule\.epochs must be an integer in \[1, inf\], got 0"):
        net.fit(samples, search, schedule=Schedule(0))
    with pytest.raises(TypeError, match=r"schedule must be .* got None"):
        HandBuilt(0.0, m=200).fit(Samples(parity6_target(6), 40, 20), None, schedule=None)


# ----------------------------------------------------------------- point configurations
def test_an_unknown_configuration_key_is_refused_naming_it_and_the_allowed_keys():
    """A misspelt ``batchsize: 10`` ran with §8.1's batch of 50 and returned that point's numbers."""
    config = dict(figure_points("fig2a", "tiny", device="cpu")[0], batchsize=10)
    with pytest.raises(ValueError, match=r"unknown configuration key 'batchsize'; allowed: figure, .*batch_size"):
        run_point(config)
    with pytest.raises(ValueError, match=r"unknown configuration key 'batchsize'"):
        Point.of_config(config)
    del config["batchsize"], config["epochs"]
    with pytest.raises(ValueError, match=r"the configuration lacks 'epochs'"):
        Point.of_config(config)


def test_every_stored_and_every_figure_configuration_still_reads_back_to_its_key():
    """The allowed keys are exactly those the stored points were keyed by: none renamed, none missing."""
    stored = [json.loads(f.read_text()) for f in ROOT.glob("results/*/store/*/*.json")]
    assert len(stored) > 400
    for payload in stored:
        assert set(payload["config"]) <= set(CONFIG_KEYS), payload["config"]
        assert Point.of_config(payload["config"]).key() == payload["key"] == ResultsStore.key(payload["config"])
    from resnetlearn.reproduce.figures import SPECS, names
    for fig in names():
        for scale in SPECS[fig].scales:
            for c in figure_points(fig, scale, select="val") + figure_points(fig, scale):
                assert Point.of_config(c).config() == c


# ----------------------------------------------------------------- the self-checks
@pytest.mark.parametrize("checker", [check.k_alpha_squared, check.parities_up_to_degree, check.composition_ratio,
                                     check.kernel_n_max_arxiv])
def test_a_huge_integer_answer_is_not_quite(checker, capsys):
    assert checker(10**400) is False
    said = capsys.readouterr().out
    assert "not quite — a number of 401 digits is far from the" in " ".join(said.split()), said


# ----------------------------------------------------------------- the reproduce command under faults
FSIZE_DRIVER = """
import resource, sys
from resnetlearn import __main__ as cli
from resnetlearn.reproduce import running
running.run_point = lambda config: {"test_error": 0.5, "runs": []}  # the writing is tested, not the training
resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))  # ulimit -f: a stored point is larger
cli.run(sys.argv[1:])
"""


def test_a_file_size_limit_gives_the_full_disk_message(tmp_path):
    out = tmp_path / "out"
    args = ["reproduce", "companion", "--scale", "tiny", "--device", "cpu", "--out", str(out)]
    done = _child("-c", FSIZE_DRIVER, *args)
    first = ResultsStore(out / "store").path(figure_points("companion", "tiny", device="cpu")[0])
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"cannot write {first}: {os.strerror(errno.EFBIG)}." in done.stderr, done.stderr
    assert "Free space on that disk, or run again with --out on a disk that has room" in done.stderr
    assert "is reused when you run the same command again" in done.stderr
    assert not list(out.rglob("*.tmp"))


@needs_proc
def test_a_killed_worker_says_the_finished_points_are_stored_and_the_command_resumes(tmp_path):
    """SIGKILL to one worker of --workers 2 (what the out-of-memory killer sends): no BrokenProcessPool
    traceback, but what is stored, that the same command resumes, and that memory may be the cause."""
    out = tmp_path / "out"
    args = ["reproduce", "fig2a", "--scale", "tiny", "--device", "cpu", "--out", str(out), "--workers", "2"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not list((out / "store").glob("fig2a/*.json")) or len(_alive(proc.pid)) < 3:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
        worker = next(p for p in _alive(proc.pid) if p != proc.pid)
        os.kill(worker, signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    finally:
        for pid in _alive(proc.pid):
            os.kill(pid, signal.SIGKILL)
    stored = len(list((out / "store").glob("fig2a/*.json")))
    assert proc.returncode == 1 and "Traceback" not in err and "BrokenProcessPool" not in err.split("(")[0], err
    assert "a worker process ended abruptly" in err and "memory may be the cause" in err, err
    assert f"Every point finished before this is stored in {out / 'store'}" in err and "the same command resumes" in err
    assert " ".join(args) in err and 1 <= stored < 9
    # the same command resumes: the stored points are reused, the others computed
    again = subprocess.run([sys.executable, "-c", DRIVER, *args], env=env, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0, again.stderr
    reused = int(again.stdout.split(" reused from the store")[0].rsplit("(", 1)[1])
    assert reused >= stored and len(list((out / "store").glob("fig2a/*.json"))) == 9
