"""A point trained in checkpointed groups of models: the same stored numbers as one batch, resumed part-way after
Ctrl-C with only the missing models trained, a damaged group file moved aside and retrained, bad settings refused."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from resnetlearn import __main__ as cli
from resnetlearn.learners import search as search_module
from resnetlearn.reproduce import FigureInterrupted, ResultsStore, figures, run_figure
from resnetlearn.reproduce.checkpoints import ChunkLog
from resnetlearn.reproduce.store import StoreWarning

LRS, WDS, RERUNS = [0.05, 0.2], [0.0, 1e-3], [1, 2]
"""A 2 × 2 grid and two fresh seeds: 6 models per network point, enough to split into groups."""


@pytest.fixture
def grid_tiny(monkeypatch):
    settings = figures.scale_settings
    monkeypatch.setattr(figures, "scale_settings", lambda s: dict(settings(s), lrs=LRS, wds=WDS, rerun_seeds=RERUNS,
                                                                  epochs=15) if s == "tiny" else settings(s))


def _models(store_root: Path) -> int:
    """How many models the stored network points of fig2a trained: their grid runs and fresh-seed reruns."""
    stored = [json.loads(p.read_text())["result"] for p in (store_root / "fig2a").glob("*.json")]
    return sum(len(r["runs"]) for r in stored if "grid_size" in r)


def _results(store_root: Path, figure: str = "fig2a") -> dict:
    """Every stored point's result without its wall time, by store key, as JSON text (a diverged run's NaN
    compares equal as text, bit for bit as every other number)."""
    out = {}
    for path in sorted((store_root / figure).glob("*.json")):
        result = json.loads(path.read_text())["result"]
        result.pop("seconds")
        out[path.name] = json.dumps(result, sort_keys=True)
    return out


def _count_trained(monkeypatch) -> list[int]:
    """The number of models of each call of the training engine by the searches, recorded as they run."""
    calls, train = [], search_module.train_models

    def counted(*args, **kw):
        calls.append(len(kw["seeds"]))
        return train(*args, **kw)

    monkeypatch.setattr(search_module, "train_models", counted)
    return calls


@pytest.fixture
def in_pairs(tmp_path, grid_tiny):
    """The points of an uninterrupted run that trains two models at a time."""
    run_figure("fig2a", "tiny", "cpu", out=tmp_path / "pairs", progress=False, checkpoint_models=2)
    return _results(tmp_path / "pairs")


def test_groups_train_the_models_a_few_at_a_time_and_leave_no_partial_folder(tmp_path, grid_tiny, monkeypatch):
    calls = _count_trained(monkeypatch)
    run_figure("fig2a", "tiny", "cpu", out=tmp_path / "groups", progress=False, checkpoint_models=1)
    assert set(calls) == {1} and len(calls) == _models(tmp_path / "groups") > 6  # one at a time
    assert not list((tmp_path / "groups").rglob("*.partial"))  # every stored point's groups were removed


def test_groups_of_the_two_layer_network_store_the_numbers_of_one_batch(tmp_path, grid_tiny):
    """The two-layer networks' batched kernels round alike for any number of models: grouping moves nothing."""
    run_figure("fig4", "tiny", "cpu", out=tmp_path / "one", progress=False)
    run_figure("fig4", "tiny", "cpu", out=tmp_path / "groups", progress=False, checkpoint_models=1)
    one, groups = (_results(tmp_path / name, "fig4") for name in ("one", "groups"))
    assert one and groups == one


def _interrupt_after(monkeypatch, groups: int) -> None:
    keep, kept = ChunkLog.keep, []

    def keep_then_stop(self, *args):
        path = keep(self, *args)
        kept.append(path)
        if len(kept) == groups:
            raise KeyboardInterrupt("Ctrl-C between two groups")
        return path

    monkeypatch.setattr(ChunkLog, "keep", keep_then_stop)


def _kept_models(out: Path) -> int:
    return sum(len(json.loads(p.read_text())["combos"]) for p in out.rglob("*.partial/*.json"))


def test_an_interrupted_point_resumes_from_its_kept_groups(tmp_path, grid_tiny, in_pairs, monkeypatch):
    out = tmp_path / "resumed"
    with monkeypatch.context() as m:
        _interrupt_after(m, 3)
        with pytest.raises(FigureInterrupted) as stop:
            run_figure("fig2a", "tiny", "cpu", out=out, progress=False, checkpoint_models=2)
    partial = list(out.rglob("*.partial"))
    assert len(partial) == 1  # the point in progress; a point that finished left none
    assert stop.value.kept_groups == len(list(partial[0].glob("*.json"))) >= 1
    kept = _kept_models(out)
    stored = len(list((out / "fig2a").glob("*.json")))

    calls = _count_trained(monkeypatch)
    run_figure("fig2a", "tiny", "cpu", out=out, progress=False, checkpoint_models=2)
    assert _results(out) == in_pairs  # the same numbers as an uninterrupted run in the same groups
    assert sum(calls) == _models(out) - kept - _models_of_first(out, stored)  # nothing kept was trained again
    assert not list(out.rglob("*.partial"))


def _models_of_first(out: Path, n: int) -> int:
    """The models of the network points among the figure's first ``n`` points (stored before the interruption)."""
    from resnetlearn.reproduce.figures import points as figure_points
    from resnetlearn.reproduce.store import ResultsStore as Store
    first = [Store.key(c) for c in figure_points("fig2a", "tiny", device="cpu")[:n]]
    stored = [json.loads((out / "fig2a" / f"{k}.json").read_text())["result"] for k in first]
    return sum(len(r["runs"]) for r in stored if "grid_size" in r)


def test_a_damaged_group_is_moved_aside_and_its_models_trained_again(tmp_path, grid_tiny, in_pairs, monkeypatch):
    out = tmp_path / "damaged"
    with monkeypatch.context() as m:
        _interrupt_after(m, 2)
        with pytest.raises(FigureInterrupted):
            run_figure("fig2a", "tiny", "cpu", out=out, progress=False, checkpoint_models=2)
    group = sorted(next(out.rglob("*.partial")).glob("*.json"))[0]
    kept, stored = _kept_models(out), len(list((out / "fig2a").glob("*.json")))
    payload = json.loads(group.read_text())
    damaged = len(payload["combos"])
    payload["rows"][0]["test_error"] = 0.0  # an edited number: its checksum no longer agrees
    group.write_text(json.dumps(payload))

    calls = _count_trained(monkeypatch)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        run_figure("fig2a", "tiny", "cpu", out=out, progress=False, checkpoint_models=2)
    assert any(issubclass(w.category, StoreWarning) and "sha256" in str(w.message) for w in seen)
    assert _results(out) == in_pairs  # the edited number was not used
    assert sum(calls) == _models(out) - (kept - damaged) - _models_of_first(out, stored)  # intact groups reused
    assert list(out.rglob("*.json.corrupt-*"))  # kept for inspection, not deleted


def test_a_group_of_another_point_is_not_reused(tmp_path):
    log = ChunkLog(tmp_path, "key-a")
    log.keep("grid", [(0.1, 0.0, 0)], [{"test_error": 0.5}], 1.0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert ChunkLog(tmp_path, "key-b").rows("grid", [(0.1, 0.0, 0)]) is None
    assert any("another point" in str(w.message) for w in seen)
    fresh = ChunkLog(tmp_path, "key-a")
    assert fresh.rows("grid", [(0.1, 0.0, 0)]) is None  # the file was moved aside, not trusted later


def test_kept_rows_are_returned_only_for_the_very_group_that_was_kept(tmp_path):
    log = ChunkLog(tmp_path, "k")
    log.keep("grid", [(0.1, 0.0, 0), (0.2, 0.0, 0)], [{"e": 1.0}, {"e": 2.0}], 3.5)
    again = ChunkLog(tmp_path, "k")
    assert again.rows("grid", [(0.1, 0.0, 0), (0.2, 0.0, 0)]) == [{"e": 1.0}, {"e": 2.0}]
    assert again.reused_seconds == 3.5
    assert again.rows("grid", [(0.2, 0.0, 0), (0.1, 0.0, 0)]) is None  # another order: another batch
    assert again.rows("grid", [(0.1, 0.0, 0)]) is None  # part of a group: trained in another grouping
    assert again.rows("rerun", [(0.1, 0.0, 0), (0.2, 0.0, 0)]) is None  # a role is part of a group's name
    assert again.reused_seconds == 3.5


def test_checkpoint_models_is_checked_before_any_work(tmp_path, capsys):
    with pytest.raises(ValueError, match="checkpoint_models"):
        run_figure("fig2a", "tiny", "cpu", out=tmp_path, progress=False, checkpoint_models=0)
    with pytest.raises(ValueError, match="checkpoint_models needs out"):
        run_figure("fig2a", "tiny", "cpu", progress=False, checkpoint_models=2)
    with pytest.raises(SystemExit) as e:
        cli.main(["reproduce", "fig2a", "--scale", "tiny", "--out", str(tmp_path), "--checkpoint-models", "0"])
    assert e.value.code == 2 and "--checkpoint-models must be an integer >= 1" in capsys.readouterr().err
    assert not list(tmp_path.rglob("*.json"))


def test_a_resumed_points_seconds_add_its_kept_groups(tmp_path, grid_tiny, monkeypatch):
    out = tmp_path / "timed"
    with monkeypatch.context() as m:
        _interrupt_after(m, 2)
        with pytest.raises(FigureInterrupted):
            run_figure("fig2a", "tiny", "cpu", out=out, progress=False, checkpoint_models=2)
    kept = sum(json.loads(p.read_text())["seconds"] for p in next(out.rglob("*.partial")).glob("*.json"))
    key = next(out.rglob("*.partial")).name.removesuffix(".partial")
    run_figure("fig2a", "tiny", "cpu", out=out, progress=False, checkpoint_models=2)
    stored = json.loads((out / "fig2a" / f"{key}.json").read_text())["result"]["seconds"]
    assert stored >= kept > 0
    assert ResultsStore(out).verify(out / "fig2a" / f"{key}.json") is None
