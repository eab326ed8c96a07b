"""A network point whose lr × wd grid does not fit in memory as one batched program trains in chunks instead of
being refused (fig4b at m = 1000 needs ~102 GiB as one program), with the same numbers bit for bit (the
models of a batch are independent); a point whose single model does not fit is still refused, by name, before
anything is trained; and workers sharing a GPU each plan with their share of it. The available memory is faked
(``memory.available_bytes``) at a size computed here from the hand-checked :func:`training_bytes`."""

import importlib.util
import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
import torch

from resnetlearn import memory
from resnetlearn.learners import networks, search, training
from resnetlearn.learners.search import chunk_size
from resnetlearn.learners.training import Learner, models_that_fit, training_bytes
from resnetlearn.reproduce import fit as fit_module
from resnetlearn.reproduce.fit import Samples
from resnetlearn.reproduce.learner import Network
from resnetlearn.reproduce.point import Schedule, Search
from resnetlearn.reproduce.running import worker_init
from resnetlearn.targets.concept import parity_instance

ROOT = Path(__file__).resolve().parent.parent
N, N_TEST, M = 60, 40, 8
SEARCH = Search((0.05, 0.2, 1.0), (0.0, 1e-3), "test", (1, 2))  # 6 grid models, 2 reruns


def _fake_memory(monkeypatch, have: int, *, kernels_too: bool = True) -> None:
    """``have`` bytes available; with ``kernels_too=False`` only for the SGD search (a (last)/(ntk) point's exact
    kernel solution, a Gram of N + n_test inputs, reads the real memory)."""
    real = memory.available_bytes
    monkeypatch.setattr(memory, "available_bytes", lambda device=None: (have, "available RAM"))
    if not kernels_too:
        exact = fit_module._exact_kernel

        def exact_with_real_memory(*a, **k):
            with monkeypatch.context() as mp:
                mp.setattr(memory, "available_bytes", real)
                return exact(*a, **k)

        monkeypatch.setattr(fit_module, "_exact_kernel", exact_with_real_memory)


def _room_for(g: int, mode: str) -> int:
    """Bytes available such that exactly g of the point's models fit under the 80 % limit (d and k read from the
    samples, as the training reads them)."""
    split = Samples(parity_instance(alpha=0.3, beta=1.0), N, N_TEST).split(dtype=torch.float32, device="cpu")
    one = training_bytes("2layer", split.train.x.shape[1], split.train.y.shape[1], M, n_eval=N, mode=mode)
    return math.ceil((g + 0.5) * one / memory.MEMORY_FRACTION)


def _fit(mode: str):
    samples = Samples(parity_instance(alpha=0.3, beta=1.0), N, N_TEST, data_seed=3)
    return samples, Network("2layer", mode, m=M).fit(samples, SEARCH, schedule=Schedule(4), device="cpu")


def test_chunk_size_takes_the_fewest_equal_chunks():
    assert chunk_size(90, 90) is None and chunk_size(90, 200) is None  # all fit: one batched program
    assert chunk_size(90, 60) == 45 and chunk_size(90, 45) == 45 and chunk_size(90, 44) == 30
    assert chunk_size(90, 1) == 1 and chunk_size(90, 0) == 1  # 0: the training's own check refuses the one model


def test_models_that_fit_counts_by_the_training_bytes(monkeypatch):
    """training_bytes is n_models × one model's bytes (hand-counted in test_input_guards), so the count that
    fits is ⌊0.8·have / one⌋, capped at the grid; the memory read on the device unless given."""
    one = training_bytes("3layer", 30, 15, 500, n_eval=1000, mode="ntk")
    for have, want in ((10 * one, 8), (200 * one, 90), (100 * one, 80), (one, 0), (int(1.25 * one) + 1, 1)):
        got = models_that_fit(Learner("3layer", "ntk", m=500), 90, d=30, k=15, n_eval=1000, have=have)
        assert got == want == min(90, math.floor(memory.MEMORY_FRACTION * have / one))
        _fake_memory(monkeypatch, have)
        assert models_that_fit(Learner("3layer", "ntk", m=500), 90, d=30, k=15, n_eval=1000) == want


@pytest.mark.parametrize("mode", ["all", "ntk"])
def test_a_grid_that_does_not_fit_trains_in_chunks_with_the_same_numbers(monkeypatch, capsys, mode):
    samples, whole = _fit(mode)
    sizes = []
    real = search.train_models

    def counting(train, test, learner, **kw):
        sizes.append(len(kw["seeds"]))
        return real(train, test, learner, **kw)

    monkeypatch.setattr(search, "train_models", counting)
    _, alone = _fit(mode)
    assert sizes == [6, 2]  # memory plentiful: the grid as one program, the reruns as another
    sizes.clear()
    _fake_memory(monkeypatch, _room_for(4, mode), kernels_too=False)  # 4 of 6 fit: 2 chunks of 3
    _, chunked = _fit(mode)
    assert sizes == [3, 3, 2]
    assert "2layer(" + mode + ") m = 8: training 6 models in 2 chunks of ≤ 3 (memory)" in capsys.readouterr().err
    for other in (alone, chunked):  # every row (errors, ‖W‖, selected, reruns) and what the store keeps, bitwise
        assert repr(other.grid.rows) == repr(whole.grid.rows) and repr(other.best) == repr(whole.best)
        assert repr(other.reruns) == repr(whole.reruns) and repr(other.stored()) == repr(whole.stored())
    test = samples.split(dtype=torch.float32, device="cpu").test
    assert torch.equal(chunked.predict(test.x), whole.predict(test.x))
    for row in chunked.grid.rows:  # every row's model, wherever its chunk put it, gives its own test error
        err = float(((chunked.grid.predict(row, test.x) - test.y) ** 2).sum(-1).mean())
        if row["diverged"]:  # a diverged row holds NaN (its model, stopped where it diverged, predicts anything)
            assert math.isnan(row["test_error"])
        else:
            assert err == row["test_error"]


def test_a_point_whose_one_model_does_not_fit_is_refused_before_training(monkeypatch):
    def no_alloc(*a, **k):
        raise AssertionError("allocated before the memory check")

    _fake_memory(monkeypatch, _room_for(0, "all"))  # half a model
    monkeypatch.setattr(networks, "init_params", no_alloc)
    with pytest.raises(memory.InsufficientMemoryError,
                       match=r"training 1 2layer\(all\) model\(s\) on 60 samples with m = 8 needs .* m = \d fits"):
        _fit("all")


def _sharers() -> int:
    return memory._SHARERS


def _fake_gpu(monkeypatch, *, free: int, total: int, cached: int) -> None:
    monkeypatch.setattr(memory.torch.cuda, "mem_get_info", lambda dev: (free, total))
    monkeypatch.setattr(memory.torch.cuda, "memory_reserved", lambda dev: cached + 5)
    monkeypatch.setattr(memory.torch.cuda, "memory_allocated", lambda dev: 5)


def test_workers_sharing_a_gpu_plan_with_their_share(monkeypatch):
    """Each of W workers plans with min(free, total / W) of a CUDA device (all of it alone, with everything free);
    the CPU's available RAM is read whatever the share. worker_init declares the pool's size."""
    monkeypatch.setattr(memory, "_SHARERS", 1)
    gib = 2**30
    _fake_gpu(monkeypatch, free=70 * gib, total=80 * gib, cached=2 * gib)
    assert memory.available_bytes("cuda")[0] == 72 * gib
    ram = memory.available_bytes("cpu")
    memory.share_device(6)
    have, kind = memory.available_bytes("cuda")
    assert have == 80 * gib // 6 and "1/6" in kind
    assert abs(memory.available_bytes("cpu")[0] - ram[0]) <= gib and memory.available_bytes("cpu")[1] == ram[1]
    _fake_gpu(monkeypatch, free=4 * gib, total=80 * gib, cached=0)  # the others took the rest: what is free
    assert memory.available_bytes("cuda")[0] == 4 * gib
    assert memory.device_share(50, 80, 1) == 50 and memory.device_share(50, 80, 2) == 40
    with pytest.raises(ValueError, match="workers"):
        memory.share_device(0)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"), initializer=worker_init,
                             initargs=(os.getpid(), 3)) as pool:
        assert pool.submit(_sharers).result(timeout=60) == 3


def test_train_models_checks_each_chunk_by_the_same_rule(monkeypatch):
    """models_that_fit and train_models' refusal are one rule: the most that fit train, one more is refused."""
    split = Samples(parity_instance(alpha=0.3, beta=1.0), N, N_TEST).split(dtype=torch.float32, device="cpu")
    _fake_memory(monkeypatch, _room_for(3, "all"))
    learner = Learner("2layer", "all", m=M)
    fits = models_that_fit(learner, 6, **training.sample_sizes(split.train, split.test))
    assert fits == 3
    training.train_models(split.train, split.test, learner, lrs=[0.1], wds=[0.0], seeds=range(fits),
                          protocol=training.Protocol(epochs=1, eval_every=1), progress=False)
    with pytest.raises(memory.InsufficientMemoryError, match="training 4 "):
        training.train_models(split.train, split.test, learner, lrs=[0.1], wds=[0.0], seeds=range(fits + 1),
                              protocol=training.Protocol(epochs=1, eval_every=1), progress=False)


def test_the_paper_scale_plan_of_fig4b():
    """gpu/memory_chunks.py at --scale paper: fig4b's m = 1000 point (its 11 × 14 lr × wd grid, 154 models,
    N = 50000, d = 100) needs ~175 GiB as one program; on an 80 GiB GPU one worker plans with 64 GiB, so
    ⌊64 / (175.4 / 154)⌋ = 56 models fit and the grid trains in 3 chunks of at most 52 (52, 52, 50); six workers plan
    with 80/6 GiB each: 9 fit, 18 chunks of at most 9."""
    spec = importlib.util.spec_from_file_location("memory_chunks", ROOT / "gpu" / "memory_chunks.py")
    mc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mc)
    point = next(p for p in mc.points("fig4b", "paper") if p.get("m") == 1000 and p["model"] != "hand_built")
    alone = mc.plan(point, total=80 * 2**30, workers=1)
    n = len(point["lrs"]) * len(point["wds"])
    assert n == 154 and alone["n"] == n
    assert 175 < alone["gib"] < 176 and alone["limit"] == 64.0
    assert alone["fits"] == math.floor(64 / (alone["gib"] / n)) == 56 and (alone["chunks"], alone["size"]) == (3, 52)
    six = mc.plan(point, total=80 * 2**30, workers=6)
    assert six["fits"] == math.floor(0.8 * (80 * 2**30 // 6) / 2**30 / (alone["gib"] / n)) == 9
    assert (six["chunks"], six["size"]) == (18, 9)
