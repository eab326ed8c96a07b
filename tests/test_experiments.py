"""Invariants of the small experiments of notebooks 03 and 06 (resnetlearn.experiments)."""

import math

import pytest
import torch

import resnetlearn as rl
from resnetlearn import experiments as E
from resnetlearn import networks

TINY = rl.Protocol.quick(2, batch_size=50)


@pytest.fixture(scope="module")
def data():
    inst = rl.parity_instance()
    return inst, inst.sample(100, seed=0), inst.sample(200, seed=1)


def test_gated_equals_relu_at_init():
    """With the value weights equal to the gate weights, 1[h ≥ 0]·h = σ(h): the
    frozen-gate 3resnet is the ReLU 3resnet, exactly (not just to rounding)."""
    x = rl.parity_instance().sample(64, seed=3).x
    p = E.gated_init(30, 15, 40, [0, 1])
    relu = networks.forward_parts("3resnet", {n: p[n] for n in ("W", "b1", "V", "b2", "A")}, x)
    gated = E.gated_forward_parts(p, x)
    assert torch.equal(relu[0], gated[0]) and torch.equal(relu[1], gated[1])


def test_smooth_gate_tends_to_hard_gate():
    x = rl.parity_instance().sample(32, seed=3).x.double()
    p = {n: v.double() for n, v in E.gated_init(30, 15, 40, [0]).items()}
    hard = sum(E.gated_forward_parts(p, x))
    soft = sum(E.gated_forward_parts(p, x, smooth=1e-6))
    assert torch.allclose(hard, soft, atol=1e-6)


def test_gates_stay_frozen_and_values_move(data):
    _, tr, te = data
    r = E.train_gated(tr, te, m=20, lrs=[0.01], wds=[0.001], seeds=[0], gated=True, protocol=TINY)
    for n in E.GATE_FROZEN:
        assert torch.equal(r["params"][n], r["p0"][n]), n
    for n in ("W2", "b12", "V2", "b22", "A"):
        assert not torch.equal(r["params"][n], r["p0"][n]), n


def test_own_loop_matches_train_models_full_batch(data):
    """With one mini-batch per epoch the batch order is irrelevant: the loop of
    train_gated(gated=False) is the library's SGD protocol (mode all)."""
    _, tr, te = data
    p = rl.Protocol.quick(6, batch_size=100)
    ours = E.train_gated(tr, te, m=20, lrs=[0.05, 0.02], wds=[0.001, 0.0], seeds=[0, 1], gated=False, protocol=p)
    lib = rl.train_models(tr, te, "3resnet", "all", 20, [0.05, 0.02], [0.001, 0.0], [0, 1], protocol=p, progress=False)
    assert torch.allclose(ours["test_error"], lib.test_error, rtol=1e-4)
    for n in lib.params:
        assert torch.allclose(ours["params"][n], lib.params[n], atol=1e-5), n


def test_block_measures_zero_at_init():
    inst = rl.parity_instance()
    te = inst.sample(50, seed=1)
    p0 = networks.init_params("3resnet", 30, 15, 30, [0])
    r = E.block_measures(p0, p0, te.x, te.base)
    for key in ("move_block1", "move_block2", "move_A", "flips_block1", "flips_block2",
                "flips_block2_same_input", "gap_block1", "gap_block2", "gap_whole"):
        assert r[key] == 0.0, key
    assert r["out1_vs_base"] == r["out1_vs_base_init"]
    assert r["base_energy"] == pytest.approx(15.0)


def test_block_measures_small_step_is_nearly_linear():
    """A tiny displacement: every block (and the whole network) stays at its
    linearisation to second order, so the gaps are ~ (step)²."""
    inst = rl.parity_instance()
    x = inst.sample(50, seed=1).x
    p0 = networks.init_params("3resnet", 30, 15, 30, [0], dtype=torch.float64)
    gen = torch.Generator().manual_seed(5)
    p1 = {n: v + 1e-4 * torch.randn(v.shape, generator=gen, dtype=v.dtype) for n, v in p0.items()}
    r = E.block_measures(p0, p1, x)
    assert r["gap_block1"] < 1e-6 and r["gap_block2"] < 1e-6 and r["gap_whole"] < 1e-6
    assert 0 < r["move_block1"] < 1e-2


def test_block_laziness_row(data):
    inst, _, _ = data
    rows = E.block_laziness(widths=(20,), n_train=100, n_test=100, protocol=TINY, progress=False)
    assert rows[0]["epochs"] == 2 and rows[0]["threshold"] == pytest.approx(1.35)
    assert 0 <= rows[0]["flips_block1"] <= 1 and rows[0]["move_block1"] > 0


def test_lr_budget_sweep_holds_the_product():
    rows = E.lr_budget_sweep(lrs=(0.02, 0.04), budget=0.08, m=20, n_train=100, n_test=100, progress=False)
    assert [r["epochs"] for r in rows] == [4, 2]
    assert all(r["lr_x_epochs"] == pytest.approx(0.08) for r in rows)


def test_frozen_gate_rows(data):
    rows = E.frozen_gate(m=20, lrs=(0.01,), wds=(0.0, 0.001), n_train=100, n_test=100, protocol=TINY)
    assert [r["network"] for r in rows] == ["relu", "frozen_gate"]
    assert all(len(r["grid"]) == 2 and math.isfinite(r["test_error"]) for r in rows)


def test_theorem1_ranges_for_section81():
    r = E.theorem1_ranges()
    assert (r["k"], r["p_F"], r["p_G"]) == (15, 2, 8)
    assert r["C_s_F"] == pytest.approx(3e4) and r["C_s_G"] == pytest.approx(5e4)
    assert r["alpha_max"] == pytest.approx(1 / 6e6)
    assert r["error_bound"] == pytest.approx(0.3**4 * 6e6**4)
    assert r["samples_min"] == pytest.approx(9e5**2)


def test_theorem2_ranges_for_section7():
    r = E.theorem2_ranges(30, 4, 0.3)
    assert r["n_max_arxiv"] == pytest.approx(27.405)
    assert r["bound_arxiv"] == pytest.approx(0.09 / 16) and r["bound_neurips"] == pytest.approx(0.09 / 4)
    assert r["alpha_min_neurips"] == pytest.approx(1 / 30)
    assert r["n_resnet"] == pytest.approx(16 * 30 / 0.3**8)


def test_beta_sweep_selects_per_beta(data):
    rows, res = E.beta_sweep(betas=(0.0, 1.0), lr=[0.01, 0.02], wd=[0.0], n_train=100, n_test=100, m=20,
                             protocol=TINY, progress=False)
    assert res.test_error.shape == (4,)
    for r in rows:
        mine = [float(res.test_error[g]) for g, c in enumerate(res.configs) if c["beta"] == r["beta"]]
        assert r["test_error"] == min(mine)
