"""The GPU path, where CUDA exists (the ``gpu`` tier; skipped elsewhere): epochs replayed as recorded CUDA graphs
give the eager engine's test errors exactly, in every mode and layer-wise, with one diverging model among them;
and an epoch of the engine never waits for the host. The same checks as ``gpu/gpu_check.py`` steps 3 and 3b,
without its benchmarks."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import resnetlearn as rl

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "gpu" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_check)


@pytest.fixture(scope="module")
def samples():
    inst = rl.parity_instance()
    return inst.sample(500, seed=0, device="cpu"), inst.sample(2000, seed=1, device="cpu")


def test_captured_epochs_give_the_eager_engine_s_errors(samples):
    res = gpu_check.captured_vs_eager(*samples)
    assert set(res) == {"all", "hidden", "last", "ntk", "all-layerwise"}
    assert all(r["equal"] for r in res.values()), {k: (r["eager"], r["captured"]) for k, r in res.items()}


def test_an_epoch_never_waits_for_the_host(samples):
    res = gpu_check.sync_free(samples[0])
    assert res == dict.fromkeys(("all", "hidden", "last", "ntk"), "no synchronisation"), res
