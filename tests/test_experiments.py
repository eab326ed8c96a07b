"""Invariants of the small experiments of notebooks 03 and 06 (resnetlearn.classroom.experiments)."""

import math

import pytest
import torch

import resnetlearn as rl
from resnetlearn.classroom import experiments as E
from resnetlearn.learners import networks
from resnetlearn.learners.training import RunOptions

TINY = rl.Protocol.quick(2, batch_size=50)
SMALL = E.Setup(n_train=100, n_test=100)


@pytest.fixture(scope="module")
def data():
    inst = rl.parity_instance()
    return inst, inst.sample(100, seed=0), inst.sample(200, seed=1)


def test_gated_equals_relu_at_init():
    """With the value weights equal to the gate weights, 1[h ≥ 0]·h = σ(h): the
    frozen-gate 3resnet is the ReLU 3resnet, exactly (not just to rounding)."""
    x = rl.parity_instance().sample(64, seed=3).x
    p = networks.init_params("3resnet", 30, 15, 40, [0, 1])
    relu = networks.forward_parts("3resnet", p, x)
    gated = networks.gated_forward_parts("3resnet", networks.with_values("3resnet", p), x)
    assert torch.equal(relu[0], gated[0]) and torch.equal(relu[1], gated[1])


def test_smooth_gate_tends_to_hard_gate():
    x = rl.parity_instance().sample(32, seed=3).x.double()
    p = networks.with_values("3resnet", networks.init_params("3resnet", 30, 15, 40, [0], dtype=torch.float64))
    hard = sum(networks.gated_forward_parts("3resnet", p, x))
    soft = sum(networks.gated_forward_parts("3resnet", p, x, smooth=1e-6))
    assert torch.allclose(hard, soft, atol=1e-6)


def test_gates_stay_frozen_and_values_move(data):
    """Trained with a FrozenGate, the gates (W, b1, V, b2) end at init_params' draw and the values' copies
    (W2, b12, V2, b22) and the readout A have moved."""
    _, tr, te = data
    r = rl.train_models(tr, te, rl.Learner("3resnet", "all", m=20), lrs=[0.01], wds=[0.001], seeds=[0], protocol=TINY,
                        progress=False, options=RunOptions(gate=rl.training.FrozenGate()))
    p0 = networks.init_params("3resnet", 30, 15, 20, [0])
    for n in ("W", "b1", "V", "b2"):
        assert torch.equal(r.params[n], p0[n]), n
    for n in ("W2", "b12", "V2", "b22", "A"):
        assert not torch.equal(r.params[n], p0[n[:-1] if n != "A" else n]), n
    with pytest.raises(ValueError, match="frozen-gate network trains in mode 'all' or 'hidden'"):
        rl.train_models(tr, te, rl.Learner("3resnet", "last", m=20), lrs=[0.01], wds=[0.0], seeds=[0], protocol=TINY,
                        progress=False, options=RunOptions(gate=rl.training.FrozenGate()))


# test and train errors (models of seeds 0 and 2; seed 1 at lr 0.1 diverges) and ΣA of model 0, recorded from a
# separate hand-written SGD loop of the frozen-gate experiment, an independent route to train_models' numbers:
# relu (every weight), hard gate, gate sigmoid(·/0.5); float32; and the hard gate in float64
OWN_LOOP = {
    None: ([17.56763458251953, 17.907733917236328], [14.123353004455566, 14.169755935668945], 1.3972876938059926),
    "hard": ([19.725908279418945, 18.31968879699707], [12.638471603393555, 13.65595817565918], 3.6835042447783053),
    0.5: ([19.31458282470703, 17.740516662597656], [12.855730056762695, 13.911450386047363], 0.7179251889465377),
    "f64": ([17.5522310987926], [13.83830947020946], 0.42497885572392313),
}


@pytest.mark.parametrize("case", list(OWN_LOOP), ids=str)
def test_frozen_gate_trains_as_its_hand_written_loop(case):
    """train_models with the experiment's mini-batch order (GATE_ORDER_SEED) gives the numbers the hand-written
    loop gave (5 mini-batches per epoch, lr ÷ 10 at epoch 3, one model diverging): the same batch order
    and the same updates. Bit for bit on the machine that recorded them; the tolerance (a few float32
    roundings) lets other BLAS kernels pass, while another order or update moves them by far more."""
    split = _split()
    a, b = E.GATE_ORDER_SEED
    f64 = case == "f64"
    lrs, wds, seeds = ([0.05], [0.001], [3]) if f64 else ([0.05, 0.1, 0.02], [0.001, 0.005, 0.0], [0, 1, 2])
    gate = None if case is None else rl.training.FrozenGate(None if case in ("hard", "f64") else case)
    r = rl.train_models(split.train, split.test, rl.Learner("3resnet", "all", m=20), lrs=lrs, wds=wds, seeds=seeds,
                        protocol=rl.Protocol.quick(6, batch_size=20), progress=False,
                        options=RunOptions(gate=gate, order_seeds=[a * s + b for s in seeds],
                                           dtype=torch.float64 if f64 else torch.float32))
    test, train, a_sum = OWN_LOOP[case]
    rel = 1e-12 if f64 else 1e-6
    ok = [0] if f64 else [0, 2]
    assert [float(r.test_error[g]) for g in ok] == pytest.approx(test, rel=rel)
    assert [float(r.train_error[g]) for g in ok] == pytest.approx(train, rel=rel)
    assert float(r.params["A"][0].double().sum()) == pytest.approx(a_sum, rel=1e-5 if not f64 else 1e-12)
    assert f64 or (bool(r.diverged[1]) and math.isnan(float(r.test_error[1])))


def test_block_measures_zero_at_init():
    inst = rl.parity_instance()
    te = inst.sample(50, seed=1)
    p0 = networks.init_params("3resnet", 30, 15, 30, [0])
    r = E.block_measures(p0, p0, te.x, base=te.base)
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


def _split(n_train=100, n_test=100):
    return rl.data_split(rl.parity_instance(), n_train, n_test=n_test, seed=0)


def test_block_laziness_row_by_hand():
    """The row's numbers recomputed another way: the same training through train_models, and the
    measures in float64 by hand — block 1's linearisation and the whole network's by forward-mode
    autodiff (torch.func.jvp) of functions written out here, not by the library's tangents."""
    from torch.func import jvp

    row = E.block_laziness(widths=(20,), setup=SMALL, protocol=TINY, progress=False)[0]
    split = _split()
    res = rl.train_models(split.train, split.test, rl.Learner("3resnet", "all", m=20), lrs=[0.1], wds=[0.005],
                          seeds=[0],
                          protocol=TINY, progress=False)
    assert row["test_error"] == float(res.test_error[0]) and row["threshold"] == pytest.approx(15 * 0.3**2)
    d = torch.float64
    p0 = {n: v[0].to(d) for n, v in networks.init_params("3resnet", 30, 15, 20, [0]).items()}
    p1 = {n: v[0].to(d) for n, v in res.params.items()}
    x, base = split.test.x.to(d), split.test.base.to(d)

    def block1(W, b1, A):
        return torch.relu(x @ W.T + b1) @ A.T

    def whole(W, b1, V, b2, A):
        out1 = block1(W, b1, A)
        return out1 + torch.relu(out1 @ V.T + b2) @ A.T

    def gap(f, names):
        f0, df = jvp(f, tuple(p0[n] for n in names), tuple(p1[n] - p0[n] for n in names))
        f1 = f(*(p1[n] for n in names))
        return float(((f1 - f0 - df) ** 2).sum(-1).mean() / (f1**2).sum(-1).mean())

    moved = lambda names: math.sqrt(sum(float(((p1[n] - p0[n]) ** 2).sum()) for n in names)  # noqa: E731
                                    / sum(float((p0[n] ** 2).sum()) for n in names))
    flips = float(((x @ p0["W"].T + p0["b1"] > 0) != (x @ p1["W"].T + p1["b1"] > 0)).double().mean())
    assert row["move_block1"] == pytest.approx(moved(("W", "b1")), rel=1e-9) and row["move_block1"] > 0
    assert row["move_block2"] == pytest.approx(moved(("V", "b2")), rel=1e-9)
    assert row["flips_block1"] == pytest.approx(flips, abs=1 / 2000)  # at most one of 100 × 20 signs on a rounding
    assert row["gap_block1"] == pytest.approx(gap(block1, ("W", "b1", "A")), rel=1e-6)
    assert row["gap_whole"] == pytest.approx(gap(whole, ("W", "b1", "V", "b2", "A")), rel=1e-6)
    out1 = block1(p1["W"], p1["b1"], p1["A"])
    assert row["out1_vs_base"] == pytest.approx(float(((out1 - base) ** 2).sum(-1).mean()), rel=1e-9)


def test_lr_budget_sweep_trains_the_stated_protocol():
    """epochs = round(budget/lr) by hand (0.08/0.02 = 4, 0.08/0.03 = 2.67 → 3), and each row's errors
    and weight change equal those of train_models run with that protocol written out (lr ÷ 10 at
    epoch epochs // 2), in modes all and ntk; the weight change recomputed from the parameters."""
    rows = E.lr_budget_sweep(lrs=(0.02, 0.03), budget=0.08, m=20, n_train=100, n_test=100, progress=False)
    assert [r["epochs"] for r in rows] == [4, 3]
    assert [r["lr_x_epochs"] for r in rows] == [pytest.approx(0.08), pytest.approx(0.09)]
    split = _split()
    for r, lr, epochs in zip(rows, (0.02, 0.03), (4, 3)):
        proto = rl.Protocol(epochs=epochs, lr_drop_epoch=epochs // 2, lr_drop_factor=10.0)
        kw = dict(protocol=proto, progress=False)
        full = rl.train_models(split.train, split.test, rl.Learner("2layer", "all", m=20), lrs=[lr], wds=[0.0],
                               seeds=[0], **kw)
        lin = rl.train_models(split.train, split.test, rl.Learner("2layer", "ntk", m=20), lrs=[lr], wds=[0.0],
                              seeds=[0], **kw)
        assert r["test_error"] == float(full.test_error[0]) and r["test_error_linear"] == float(lin.test_error[0])
        p0 = networks.init_params("2layer", 30, 15, 20, [0])
        change = math.sqrt(sum(float(((full.params[n] - p0[n]).double() ** 2).sum()) for n in ("W", "b1"))
                           / sum(float((p0[n].double() ** 2).sum()) for n in ("W", "b1")))
        assert r["weight_change"] == pytest.approx(change, rel=1e-6)


def test_frozen_gate_rows_another_way():
    """With lr = 1e-12 nothing moves to float32's precision, and the frozen-gate network at its initialisation
    is the ReLU network: both rows report the initial 3resnet's test error, computed here in float64 by hand,
    and kα² = 15·0.3². With full-batch SGD the ReLU row's grid is train_models' (mode all) on the
    same split, and the selected cell is its minimum."""
    zero = E.frozen_gate(m=20, lrs=(1e-12,), wds=(0.0,), n_train=100, n_test=100, protocol=TINY)
    split = _split()
    d = torch.float64
    p = {n: v[0].to(d) for n, v in networks.init_params("3resnet", 30, 15, 20, [0]).items()}
    x, y = split.test.x.to(d), split.test.y.to(d)
    out1 = torch.relu(x @ p["W"].T + p["b1"]) @ p["A"].T
    f0 = out1 + torch.relu(out1 @ p["V"].T + p["b2"]) @ p["A"].T
    err0 = float(((f0 - y) ** 2).sum(-1).mean())
    assert [r["network"] for r in zero] == ["relu", "frozen_gate"]
    assert [r["test_error"] for r in zero] == pytest.approx([err0, err0], rel=1e-5)
    assert zero[0]["threshold"] == pytest.approx(1.35)
    full = rl.Protocol.quick(4, batch_size=100)
    rows = E.frozen_gate(m=20, lrs=(0.05, 0.02), wds=(0.0, 0.001), n_train=100, n_test=100, protocol=full)
    lib = rl.train_models(split.train, split.test, rl.Learner("3resnet", "all", m=20), lrs=[0.05, 0.05, 0.02, 0.02],
                          wds=[0.0, 0.001, 0.0, 0.001], seeds=[0] * 4, protocol=full, progress=False)
    grid = torch.tensor([g["test_error"] for g in rows[0]["grid"]], dtype=d)
    assert torch.allclose(grid, lib.test_error, rtol=1e-4)
    best = int(lib.test_error.argmin())
    assert (rows[0]["lr"], rows[0]["wd"]) == ([0.05, 0.05, 0.02, 0.02][best], [0.0, 0.001, 0.0, 0.001][best])


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
    rows, res = E.beta_sweep(betas=(0.0, 1.0), lr=[0.01, 0.02], wd=[0.0], setup=SMALL, m=20,
                             protocol=TINY, progress=False)
    assert res.test_error.shape == (4,)
    for r in rows:
        mine = [float(res.test_error[g]) for g, c in enumerate(res.configs) if c["beta"] == r["beta"]]
        assert r["test_error"] == min(mine)


# ------------------------------------------------------------ the talk's NTK scaling ----------------
def test_ntk_init_draws_the_talks_scales():
    """init="ntk" (the talk's two-layer slide: a ~ N(0, 1), hidden weights N(0, 2/m)): each parameter's
    sample standard deviation over 8 seeds matches 1 for A and sqrt(2/m) for every hidden weight and bias;
    "paper" (§8.1) draws everything at sqrt(1/m)."""
    m = 400
    p = networks.init_params("3resnet", 30, 15, m, list(range(8)), init="ntk", dtype=torch.float64)
    q = networks.init_params("3resnet", 30, 15, m, list(range(8)), dtype=torch.float64)
    assert set(p) == {"W", "b1", "V", "b2", "A"}
    for name, v in p.items():
        want = 1.0 if name == "A" else math.sqrt(2 / m)
        tol = 0.03 if v.numel() > 10_000 else 0.08  # 8·400 = 3200 bias entries: std error about 1.3 %
        assert float(v.std()) == pytest.approx(want, rel=tol), name
        assert float(q[name].std()) == pytest.approx(math.sqrt(1 / m), rel=tol), name
    assert float(p["W"].mean()) == pytest.approx(0.0, abs=3 * math.sqrt(2 / m) / math.sqrt(p["W"].numel()))


def test_ntk_init_output_variance_is_order_one_at_every_width():
    """By hand (numpy, not networks.forward): for f_c(x) = Σ_i A_ci ReLU(w_i·x + b_i) with A ~ N(0, 1) and
    w_i, b_i ~ N(0, 2/m), E f_c(x)² = m · E ReLU(h)² with h ~ N(0, 2(‖x‖² + 1)/m), i.e. ‖x‖² + 1 at every m.
    On the unit sphere, as the talk states its scaling (x/‖x‖, experiments.unit_inputs), that is 2 per output
    at every m (the talk: "output at init is O(1)"); on the raw cube {±1}^30 it would be 31, and §8.1's
    N(0, 1/m) gives (‖x‖² + 1)/(2m). The unit inputs are normalised here by numpy, not by unit_inputs."""
    import numpy as np

    raw = rl.parity_instance().sample(8, seed=3).x.double().numpy()
    unit = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    assert np.allclose(E.unit_inputs(rl.parity_instance().sample(8, seed=3)).x.double().numpy(), unit)
    for m in (50, 800):
        for init, x, want in (("ntk", unit, 2.0), ("ntk", raw, 31.0), ("paper", raw, 31.0 / (2 * m))):
            p = {n: v.numpy() for n, v in
                 networks.init_params("2layer", 30, 15, m, list(range(200)), init=init, dtype=torch.float64).items()}
            h = np.einsum("gmd,nd->gnm", p["W"], x) + p["b1"][:, None, :]
            f = np.einsum("gkm,gnm->gnk", p["A"], np.maximum(h, 0.0))
            assert float((f**2).mean()) == pytest.approx(want, rel=0.1), (m, init, want)


def test_ntk_diagonal_matches_its_expectation():
    """The mean NTK diagonal (output-averaged, all parameters) against its expectation over the
    initialisation, derived by hand for 2layer on {±1}^30 (‖x‖² + 1 = 31, half the ReLUs active):
    paper (all N(0, 1/m)): A-part 31/2 plus (W, b1)-part 31/2 = 31 at every m;
    ntk (A ~ N(0, 1), hidden N(0, 2/m)): A-part 31 plus (W, b1)-part 31·m/2 — it grows like m."""
    m = 1000
    assert E.ntk_diagonal(m=m, init="paper") == pytest.approx(31.0, rel=0.05)
    assert E.ntk_diagonal(m=m, init="ntk") == pytest.approx(31.0 + 31.0 * m / 2, rel=0.05)
    # on x/‖x‖ (‖x‖² + 1 = 2): A-part m · E ReLU(h)² = 2, (W, b1)-part 2·m/2 = m
    assert E.ntk_diagonal(m=m, init="ntk", unit_norm=True) == pytest.approx(2.0 + m, rel=0.05)


def test_laziness_in_the_ntk_scaling_row_by_hand():
    """init and a width-dependent lr reach the training: the row's errors equal train_models' with
    Learner(init="ntk") at lr(m); its weight change and E‖f₀‖² are recomputed from init_params."""
    rows = E.laziness(widths=(20,), lr=lambda m: 0.001 / m, init="ntk", setup=SMALL, protocol=TINY,
                      progress=False)
    r = rows[0]
    assert (r["init"], r["lr"]) == ("ntk", pytest.approx(0.001 / 20))
    split = _split()
    full = rl.train_models(split.train, split.test, rl.Learner("2layer", "all", m=20, init="ntk"), lrs=[0.001 / 20],
                           wds=[0.0], seeds=[0], protocol=TINY, progress=False)
    assert r["test_error"] == float(full.test_error[0])
    p0 = networks.init_params("2layer", 30, 15, 20, [0], init="ntk", dtype=torch.float64)
    change = math.sqrt(sum(float(((full.params[n].double() - p0[n]) ** 2).sum()) for n in ("W", "b1"))
                       / sum(float((p0[n] ** 2).sum()) for n in ("W", "b1")))
    assert r["weight_change"] == pytest.approx(change, rel=1e-5)
    x = split.test.x.double()
    f0 = torch.relu(x @ p0["W"][0].T + p0["b1"][0]) @ p0["A"][0].T
    assert r["output_init"] == pytest.approx(float((f0**2).sum(-1).mean()), rel=1e-5)


def test_laziness_lr_grid_on_unit_inputs_row_by_hand():
    """With an lr grid and unit_norm=True, the row is the grid run of lowest final training error (ours; no
    test data), recomputed here by separate train_models calls on inputs normalised by hand (x/√30: every
    cube point has norm √30); its weight change, sign flips and E‖f₀‖² are recomputed from init_params."""
    grid = [0.001, 0.01, 0.03]
    r = E.laziness(widths=(20,), lr=lambda m: grid, init="ntk", unit_norm=True, setup=SMALL,
                   protocol=TINY, progress=False)[0]
    split = _split()
    tr, te = (rl.concept.Sample(s.x / math.sqrt(30), s.y, s.base, s.composite) for s in (split.train, split.test))
    assert float(tr.x.norm(dim=-1).min()) == pytest.approx(1.0, rel=1e-6)
    alone = [rl.train_models(tr, te, rl.Learner("2layer", "all", m=20, init="ntk"), lrs=[lr], wds=[0.0], seeds=[0],
                             protocol=TINY, progress=False) for lr in grid]
    train = [float(a.train_error[0]) for a in alone]
    best = min(range(3), key=lambda g: train[g])
    assert r["grid"] == grid and r["lr"] == grid[best] and r["unit_norm"]
    assert r["grid_train_error"] == pytest.approx(train, rel=1e-4)
    assert r["train_error"] == pytest.approx(min(train), rel=1e-4)
    assert r["test_error"] == pytest.approx(float(alone[best].test_error[0]), rel=1e-4)
    p0 = networks.init_params("2layer", 30, 15, 20, [0], init="ntk", dtype=torch.float64)
    p1 = {n: v.double() for n, v in alone[best].params.items()}
    change = math.sqrt(sum(float(((p1[n] - p0[n]) ** 2).sum()) for n in ("W", "b1"))
                       / sum(float((p0[n] ** 2).sum()) for n in ("W", "b1")))
    assert r["weight_change"] == pytest.approx(change, rel=1e-4)
    x = te.x.double()
    flips = ((x @ p0["W"][0].T + p0["b1"][0] > 0) != (x @ p1["W"][0].T + p1["b1"][0] > 0)).double().mean()
    assert r["sign_flips"] == pytest.approx(float(flips), abs=2e-3)
    f0 = torch.relu(x @ p0["W"][0].T + p0["b1"][0]) @ p0["A"][0].T
    assert r["output_init"] == pytest.approx(float((f0**2).sum(-1).mean()), rel=1e-5)
    assert r["output_init"] < 15 * 2.0 * 3  # order 1 per output on unit inputs (E = 30 summed), not ~465
