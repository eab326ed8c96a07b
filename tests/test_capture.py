"""The recorded-epoch path of the training engine (resnetlearn.learners.capture).

Recording a CUDA graph needs a GPU (gpu/gpu_check.py compares captured and eager runs there, every
mode). Here: its epoch on static buffers, run without recording, is bitwise the eager engine's epoch, for
every mode (and the frozen gate) and through the §8.1 learning-rate drop; the switch refuses a CPU clearly.
"""

import pytest
import torch

import resnetlearn as rl
from resnetlearn.learners import networks
from resnetlearn.learners.capture import CapturedEpochs
from resnetlearn.learners.engine import FrozenGate, State
from resnetlearn.learners.training import Learner, Protocol, RunOptions, train_models


def _state(mode, seeds=(0, 1, 2)):
    gate = FrozenGate() if mode == "gate" else None  # the frozen-gate network, mode all
    inst = rl.parity_instance()
    tr = inst.sample(120, seed=0)
    p0 = networks.init_params("3resnet", 30, 15, 16, list(seeds))
    lr = torch.tensor([0.05, 0.1, 1e4][: len(seeds)])  # the last one diverges: the mask must match too
    st = State("3resnet", "all" if gate else mode, p0, lr=lr, wd=torch.tensor([0.0, 1e-3, 5e-3][: len(seeds)]),
               protocol=Protocol(epochs=4, batch_size=50), seeds=list(seeds), gate=gate)
    st.start_phase(None)
    return st, tr.x.float(), tr.y.float()


@pytest.mark.parametrize("mode", ["all", "hidden", "last", "ntk", "gate"])
def test_static_buffer_epoch_is_the_eager_epoch(mode):
    eager, x, y = _state(mode)
    replay, _, _ = _state(mode)
    runner = CapturedEpochs(replay, x, y, record=False)
    for epoch in range(4):  # Protocol(epochs=4): the lr drops at epoch 2
        eager.epoch(x, y, epoch, cancel=None)
        runner.epoch(x, y, epoch, cancel=None)
    for n in eager.vars:
        assert torch.equal(eager.vars[n], replay.vars[n]), n
    assert torch.equal(eager.alive, replay.alive)
    assert eager.alive[0] and not eager.alive[-1]  # lr 0.05 trains, lr 1e4 diverged: in both


def test_replay_refuses_other_data():
    st, x, y = _state("all")
    runner = CapturedEpochs(st, x, y, record=False)
    with pytest.raises(ValueError, match="same x and y"):
        runner.epoch(x.clone(), y, 0, cancel=None)


def test_recording_needs_cuda():
    st, x, y = _state("all")
    with pytest.raises(ValueError, match="CUDA tensors; x is on cpu"):
        CapturedEpochs(st, x, y)
    inst = rl.parity_instance()
    tr, te = inst.sample(100, seed=0), inst.sample(100, seed=1)
    with pytest.raises(ValueError, match="capture=True .* needs a CUDA device, got 'cpu'"):
        train_models(tr, te, Learner("2layer", "all", m=8), lrs=[0.1], wds=[0.0], seeds=[0], protocol=Protocol.quick(2),
                     progress=False, options=RunOptions(device="cpu", capture=True))
    with pytest.raises(TypeError, match="capture must be True or False"):
        train_models(tr, te, Learner("2layer", "all", m=8), lrs=[0.1], wds=[0.0], seeds=[0], protocol=Protocol.quick(2),
                     progress=False, options=RunOptions(device="cpu", capture="yes"))


def test_default_on_cpu_is_the_eager_engine():
    inst = rl.parity_instance()
    tr, te = inst.sample(100, seed=0), inst.sample(100, seed=1)
    kw = dict(protocol=Protocol.quick(3), progress=False)
    a = train_models(tr, te, Learner("3resnet", "all", m=8), lrs=[0.01, 0.02], wds=[0.0], seeds=[0, 1],
                     options=RunOptions(device="cpu"), **kw)
    b = train_models(tr, te, Learner("3resnet", "all", m=8), lrs=[0.01, 0.02], wds=[0.0], seeds=[0, 1],
                     options=RunOptions(device="cpu", capture=False), **kw)
    torch.testing.assert_close(a.test_error, b.test_error, rtol=0, atol=0, equal_nan=True)
    assert torch.isfinite(a.test_error).any()
