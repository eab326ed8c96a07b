"""What a newcomer meets first: the command line writes to a folder of theirs, never into the shipped
results by default; files get the user's umask; a full disk ends in a message naming the file and what to do;
the work estimate counts a damaged stored point as work ahead; the complexity budget suits a notebook; every
notebook's kernelspec is the one pip's ipykernel registers; the Makefile starts JupyterLab as root."""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from resnetlearn import __main__ as cli
from resnetlearn.reproduce import DEFAULT_OUT, ResultsStore, atomic_write, estimate_work, running, store
from resnetlearn.reproduce.figures import points as figure_points

ROOT = Path(__file__).resolve().parents[1]
CHEAPEST = "thm3"  # the cheapest figure at --scale tiny: 4.6 s of wall time with one thread (fig3 5.0 s, fig4 7.8 s)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ----------------------------------------------------------------- where results go
def test_help_names_the_default_folder_and_the_flag(capsys):
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"default: ./{DEFAULT_OUT}/SCALE" in text and "--into-shipped" in text
    assert "about 1.5 h" not in text and "5.5 h in one process" in text


@pytest.mark.parametrize("inside", ["quick", "tiny", "cpu/store"])
def test_shipped_results_are_refused_without_the_flag(tmp_path, monkeypatch, capsys, inside):
    monkeypatch.setattr(cli, "run_figure", lambda *a, **k: pytest.fail("a point started"))
    target = ROOT / "results" / inside
    existed = target.exists()
    with pytest.raises(SystemExit) as exit_:
        cli.main(["reproduce", CHEAPEST, "--scale", "tiny", "--device", "cpu", "--out", str(target)])
    err = " ".join(capsys.readouterr().err.split())
    assert exit_.value.code == 2
    assert f"inside the results shipped with the package ({ROOT / 'results'}" in err and "--into-shipped" in err
    assert target.exists() == existed  # nothing created


def test_the_flag_allows_the_shipped_folder(monkeypatch):
    """--into-shipped passes the check (the folder is then used as given); checked without running a point."""
    args = cli._parser()[0].parse_args(["reproduce", CHEAPEST, "--scale", "quick", "--device", "cpu",
                                        "--out", str(ROOT / "results" / "quick"), "--into-shipped"])
    out, _ = cli._check(args)
    assert out == ROOT / "results" / "quick"
    assert store.shipped_results(out) == ROOT / "results"
    assert store.shipped_results(ROOT / DEFAULT_OUT / "quick") is None


def _tracked_copy(dest: Path) -> Path:
    """The repository's tracked files as they are in the working tree, committed in a fresh repository."""
    from repo_copy import tracked_copy

    tracked_copy(dest)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.org"]
    subprocess.run([*git, "init", "-q"], cwd=dest, check=True)
    subprocess.run([*git, "add", "-A"], cwd=dest, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "copy"], cwd=dest, check=True)
    return dest


def test_reproduce_without_out_leaves_git_status_clean(tmp_path):
    """From a clone, the README's first command (here at --scale tiny, the cheapest figure) writes
    ./my-results/tiny/, which git ignores: `git status` stays clean and the shipped results are untouched.
    The files have the user's umask (022 here: 0644), not mkstemp's 0600."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    clone = _tracked_copy(tmp_path / "clone")
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(clone))
    proc = subprocess.run([sys.executable, "-m", "resnetlearn", "reproduce", CHEAPEST, "--scale", "tiny",
                           "--device", "cpu"], cwd=clone, env=env, capture_output=True, text=True, timeout=300,
                          preexec_fn=lambda: os.umask(0o022))
    assert proc.returncode == 0, proc.stderr[-2000:]
    written = clone / DEFAULT_OUT / "tiny"
    assert (written / f"{CHEAPEST}.csv").is_file() and any((written / "store" / CHEAPEST).glob("*.json"))
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone,
                            capture_output=True, text=True, check=True).stdout
    assert status == "", status
    for path in [*written.glob(f"{CHEAPEST}*"), *(written / "store" / CHEAPEST).glob("*.json")]:
        assert _mode(path) == 0o644, (path, oct(_mode(path)))


# ----------------------------------------------------------------- durable files
@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_atomic_write_uses_the_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        path = atomic_write(tmp_path / "a" / "t.txt", "x")
    finally:
        os.umask(old)
    assert _mode(path) == 0o666 & ~mask and path.read_text() == "x"
    assert store._umask() == old


def _fake_points(monkeypatch):
    """run_point replaced by an instant stand-in: what is tested is the writing, not the training."""
    monkeypatch.setattr(running, "run_point", lambda config: {"test_error": 0.5, "runs": []})


def test_a_full_disk_ends_in_a_message_naming_the_file(tmp_path, monkeypatch, capsys):
    """ENOSPC while storing the first point: exit status 1, the file named, what to do said, no traceback,
    no temporary file left."""
    _fake_points(monkeypatch)

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store.os, "fsync", full)
    out = tmp_path / "out"
    status = cli.main(["reproduce", CHEAPEST, "--scale", "tiny", "--device", "cpu", "--out", str(out)])
    err = capsys.readouterr().err
    first = ResultsStore(out / "store").path(figure_points(CHEAPEST, "tiny", device="cpu")[0])
    assert status == 1
    assert f"cannot write {first}: No space left on device." in err, err
    assert "Free space on that disk, or run again with --out on a disk that has room" in err
    assert f"reproduce {CHEAPEST} --scale tiny" in err and "Traceback" not in err
    assert not list(out.rglob("*.tmp"))


def test_other_os_errors_still_raise(tmp_path, monkeypatch):
    """Only write errors are turned into a message; anything else keeps its traceback."""
    _fake_points(monkeypatch)

    def broken(fd):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(store.os, "fsync", broken)
    with pytest.raises(OSError) as err:
        cli.main(["reproduce", CHEAPEST, "--scale", "tiny", "--device", "cpu", "--out", str(tmp_path / "o")])
    assert err.value.errno == errno.EIO and err.value.filename.endswith(".json")


def test_the_work_estimate_counts_a_damaged_stored_point(tmp_path):
    """Every point stored, one file damaged: the estimate says one point is ahead, and that it is damaged
    (the run moves it aside and recomputes it), not '0 point(s) to compute'."""
    st = ResultsStore(tmp_path / "store")
    pts = figure_points(CHEAPEST, "tiny", device="cpu")
    for p in pts:
        st.put(p, {"test_error": 0.5})
    kernel = next(p for p in pts if p["mode"] == "kernel")  # no SGD steps to time: the estimate is instant
    path = st.path(kernel)
    path.write_text(path.read_text().replace('"test_error": 0.5', '"test_error": 0.25'))
    est = estimate_work([CHEAPEST], "tiny", device="cpu", store=tmp_path / "store")
    assert (est.points, est.kernel_points, est.damaged, est.networks) == (1, 1, 1, 0)
    text = est.text("tiny")
    assert "1 point(s) to compute" in text and "1 of them stored but damaged" in text and "recomputed" in text
    # an intact store: nothing ahead
    path.write_text(path.read_text().replace('"test_error": 0.25', '"test_error": 0.5'))
    assert estimate_work([CHEAPEST], "tiny", device="cpu", store=tmp_path / "store").points == 0


# ----------------------------------------------------------------- first start
def test_every_notebook_kernelspec_is_what_ipykernel_registers():
    """JupyterLab rewrites a kernelspec whose display name differs from the installed kernel's, and the
    notebook opens modified; ours must equal `jupyter kernelspec list --json`'s python3."""
    listed = subprocess.run([sys.executable, "-m", "jupyter", "kernelspec", "list", "--json"],
                            capture_output=True, text=True, check=True).stdout
    spec = json.loads(listed)["kernelspecs"]["python3"]["spec"]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        ks = nbformat.read(path, as_version=4).metadata["kernelspec"]
        assert (ks["name"], ks["display_name"], ks.get("language")) == ("python3", spec["display_name"],
                                                                      spec["language"]), path.name


def test_make_lab_passes_allow_root_as_root_and_keeps_lab_args():
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # -n: print the commands; the install stamp is made to look fresh so that nothing would be installed
    args = ["make", "-n", "-W", "pyproject.toml", "lab", 'LAB_ARGS=--no-browser --port 8889', "VENV=/nonexistent"]
    text = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    lab = [ln for ln in text.splitlines() if "jupyter lab" in ln]
    assert len(lab) == 1 and lab[0].rstrip().endswith("--no-browser --port 8889")
    assert ("--allow-root" in lab[0]) == (os.getuid() == 0)
    assert "--notebook-dir=work" in lab[0] and "--LabApp.default_url=/lab/tree/00_welcome.ipynb" in lab[0]
    installs = [ln for ln in text.splitlines() if "pip install" in ln]
    assert installs[-1].endswith("pip install -e .")  # the lab installs the package alone, no developer extras


# ----------------------------------------------------------------- complexity budget
@pytest.mark.slow
def test_complexity_budget_answers_within_20_s_and_says_how_to_allow_more():
    from resnetlearn.targets.complexity import complexity_s
    from resnetlearn.targets.taylor import SeriesBudgetError

    t0 = time.perf_counter()
    with pytest.raises(SeriesBudgetError, match=r"no answer within time_budget = 20(\.0)? s") as err:
        complexity_s("exp(exp(exp(z)))")  # the default budget: the 20 s promised, not whatever the constant says
    took = time.perf_counter() - t0
    assert 20 <= took < 25, took  # it waited the whole budget, and stopped soon after
    assert "time_budget=" in str(err.value) and "None" in str(err.value)
