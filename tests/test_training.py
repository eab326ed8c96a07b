"""Learner networks (eq 2.1, §6) and the SGD protocol (arXiv v3 §8.1), batched."""

import dataclasses
import re
import threading

import numpy as np
import pytest
import torch
from torch.func import jvp

import resnetlearn as rl
from resnetlearn.learners import networks
from resnetlearn.learners.engine import FrozenGate, State, trainable_names
from resnetlearn.learners.modes import MODES
from resnetlearn.learners.search import Selection, default_val_size, grid_search, paper_grid, validation_split
from resnetlearn.learners.training import Learner, Protocol, RunOptions, train_models

F64 = torch.float64


@pytest.fixture(scope="module")
def data():
    inst = rl.talk_instance()
    return inst, inst.sample(100, seed=0, dtype=F64), inst.sample(200, seed=1, dtype=F64)


def run(data, arch="3resnet", mode="all", lrs=(0.05,), wds=(0.0,), seeds=(0,), epochs=2, m=16, protocol=None,
        init="paper", **kw):
    _, tr, te = data
    options = RunOptions(dtype=F64, **{k: kw.pop(k) for k in list(kw) if k in RunOptions.__dataclass_fields__})
    return train_models(tr, te, Learner(arch, mode, m=m, init=init), lrs=lrs, wds=wds, seeds=seeds,
                        protocol=protocol or Protocol.quick(epochs), progress=False, options=options, **kw)


@pytest.mark.parametrize("arch", tuple(networks.ARCHITECTURES))
def test_shapes_and_linearisation_match_autodiff(arch):
    k = 1 if arch == "2layer_signs" else 3
    p = networks.init_params(arch, 7, k, 12, [1, 2], dtype=F64)
    x = torch.randn(5, 7, dtype=F64)
    assert networks.forward(arch, p, x).shape == (2, 5, k)
    t = {n: torch.randn_like(v) for n, v in p.items()}
    f0, df = jvp(lambda q: networks.forward(arch, q, x), (p,), (t,))
    out, _, _ = networks.forward_linearized(arch, p, t, x)
    assert torch.allclose(out, f0 + df, atol=1e-12)
    # NTK model is affine in the displacement: f(2Δ) − f0 = 2(f(Δ) − f0)
    out2, _, _ = networks.forward_linearized(arch, p, {n: 2 * v for n, v in t.items()}, x)
    assert torch.allclose(out2 - f0, 2 * (out - f0), atol=1e-12)


def test_resnet_section6_form_is_eq21_with_bottleneck():
    # out = out1 + A σ(V out1 + b2) equals eq 2.1 with U = V·A
    p = networks.init_params("3resnet", 6, 4, 9, [3], dtype=F64)
    x = torch.randn(8, 6, dtype=F64)
    q = dict(p, V=torch.bmm(p["V"], p["A"]))  # U = V·A (m×m)
    assert torch.allclose(networks.forward("3resnet", p, x), networks.forward("3resnet_eq21", q, x), atol=1e-12)


def test_paper_initialisation_variance():
    p = networks.init_params("3layer", 30, 15, 400, [0], dtype=F64)
    for name in ("W", "V", "A", "b1"):
        assert abs(float(p[name].var()) * 400 - 1) < 0.1  # N(0, 1/m)
    q = networks.init_params("3layer", 30, 15, 400, [0], init="fan_in", dtype=F64)
    assert abs(float(q["W"].var()) * 30 - 1) < 0.1  # std 1/√fan_in


@pytest.mark.parametrize("mode, moved", [("all", {"W", "b1", "V", "b2", "A"}),
                                          ("hidden", {"W", "b1", "V", "b2"}),
                                          ("last", {"A"})])
def test_which_parameters_move(data, mode, moved):
    r = run(data, mode=mode)
    p0 = networks.init_params("3resnet", 30, 8, 16, [0], dtype=F64)
    changed = {n for n in p0 if not torch.equal(p0[n], r.params[n])}
    assert changed == moved


def test_batched_equals_sequential_and_is_deterministic(data):
    lrs, wds, seeds = [0.05, 0.02, 0.1], [0.0, 1e-3, 5e-3], [0, 1, 2]
    batch = run(data, lrs=lrs, wds=wds, seeds=seeds, epochs=3)
    for g in range(3):
        alone = run(data, lrs=[lrs[g]], wds=[wds[g]], seeds=[seeds[g]], epochs=3)
        assert torch.allclose(batch.test_error[g], alone.test_error[0], rtol=1e-10)
        for n in alone.params:
            assert torch.allclose(batch.params[n][g], alone.params[n][0], atol=1e-10)
    again = run(data, lrs=lrs, wds=wds, seeds=seeds, epochs=3)
    assert torch.equal(batch.test_error, again.test_error)


def test_ntk_mode_trains_the_linearisation(data):
    _, tr, _ = data
    p0 = networks.init_params("3resnet", 30, 8, 16, [0], dtype=F64)
    err0 = float(((networks.forward("3resnet", p0, tr.x) - tr.y) ** 2).sum(-1).mean())
    r = run(data, mode="ntk", epochs=3)
    assert float(r.train_error[0]) < 0.9 * err0


def test_divergence_is_reported_not_a_number(data):
    r = run(data, lrs=[0.05, 1e4], wds=[0, 0], seeds=[0, 0])
    assert r.diverged.tolist() == [False, True]
    assert torch.isfinite(r.test_error[0]) and torch.isnan(r.test_error[1])
    assert r.rows()[1]["diverged"] is True


def test_cancel_and_callback(data):
    seen = []
    ev = threading.Event()

    def cb(info):
        seen.append(info["epoch"])
        ev.set()  # cancel right after the first report

    r = run(data, epochs=10, callback=cb, callback_every=2, cancel=ev)
    assert r.interrupted and r.epochs_done == 2 and seen == [2]
    assert torch.isfinite(r.test_error).all()
    r2 = run(data, epochs=4, cancel=lambda: True)
    assert r2.interrupted and r2.epochs_done == 0


def test_resnet_decomposition_curves(data):
    r = run(data, epochs=4)
    assert r.epochs == [4]
    assert set(r.curves) == {"train", "test", "out1_vs_base", "residual_vs_composite"}
    assert torch.isfinite(r.curves["out1_vs_base"]).all()
    assert torch.isnan(run(data, arch="2layer", epochs=1).curves["out1_vs_base"]).all()


def test_layerwise_phases(data):
    assert trainable_names("3resnet", "hidden", phase=1) == ["W", "b1"]
    assert trainable_names("3resnet", "all", phase=2) == ["V", "b2"]
    _, tr, te = data
    r = train_models(tr, te, Learner("3resnet", "hidden", m=16), lrs=[0.05], wds=[0.0], seeds=[0],
                     protocol=Protocol.quick(2, layerwise=True), progress=False, options=RunOptions(dtype=F64))
    assert r.epochs_done == 4 and r.rows()[0]["layerwise"] is True


def test_grid_search_selection_rules(data):
    inst = data[0]
    g = grid_search(inst, Learner("2layer", "all", m=8), n_train=100, lrs=[0.01, 0.05], wds=[0.0], n_test=100,
                    protocol=Protocol.quick(2), progress=False, options=RunOptions(dtype=F64))
    assert len(g.rows) == 2 and sum(r["selected"] for r in g.rows) == 1
    assert g.best["test_error"] == min(r["test_error"] for r in g.rows)
    v = grid_search(inst, Learner("2layer", "all", m=8), n_train=100, lrs=[0.01, 0.05], wds=[0.0], n_test=100,
                    protocol=Protocol.quick(2), progress=False, selection=Selection(select="val"),
                    options=RunOptions(dtype=F64))
    assert v.best["val_error"] == min(r["val_error"] for r in v.rows)
    # the default validation set is drawn fresh: SGD trains on all 100 samples, 20 new ones choose lr/wd
    assert all(r["n_train"] == 100 and r["select"] == "val" and r["validation"] == "fresh" and r["n_val"] == 20
               for r in v.rows)
    h = grid_search(inst, Learner("2layer", "all", m=8), n_train=100, lrs=[0.01, 0.05], wds=[0.0], n_test=100,
                    protocol=Protocol.quick(2), progress=False, selection=Selection(select="val", validation="holdout"),
                    options=RunOptions(dtype=F64))
    assert all(r["n_train"] == 80 and r["n_val"] == 20 and r["validation"] == "holdout" for r in h.rows)
    assert paper_grid(1e-3, 0.5) == [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5]


BAD_TRAIN_INPUTS = [  # (keyword arguments, exception type, words the message must contain)
    (dict(arch="resnet50"), ValueError, "arch"),
    (dict(arch=3), ValueError, "arch"),
    (dict(mode="lazy"), ValueError, "mode"),
    (dict(mode=None), ValueError, "mode"),
    (dict(lrs=[0.0]), ValueError, "lrs"),
    (dict(lrs=[-0.1]), ValueError, "lrs"),
    (dict(lrs=[float("nan")]), ValueError, "lrs"),
    (dict(lrs=[float("inf")]), ValueError, "lrs"),
    (dict(lrs="0.1"), TypeError, "lrs"),
    (dict(lrs=[]), ValueError, "lrs"),
    (dict(lrs=[0.1, 0.2]), ValueError, "one value per model"),
    (dict(lrs=[True]), TypeError, "lrs"),
    (dict(wds=[-1.0]), ValueError, "wds"),
    (dict(wds=[float("nan")]), ValueError, "wds"),
    (dict(wds="0"), TypeError, "wds"),
    (dict(seeds="12"), TypeError, "seeds"),
    (dict(seeds=[0.7]), TypeError, "seeds"),
    (dict(seeds=[]), ValueError, "seeds"),
    (dict(seeds=[-1]), ValueError, "seeds"),
    (dict(seeds=[2**70]), ValueError, "seeds"),
    (dict(seeds=[None]), TypeError, "seeds"),
    (dict(m=0), ValueError, "m (width)"),
    (dict(m=-3), ValueError, "m (width)"),
    (dict(m=2.5), TypeError, "m (width)"),
    (dict(m="16"), TypeError, "m (width)"),
    (dict(m=True), TypeError, "m (width)"),
    (dict(init="xavier"), ValueError, "init"),
    (dict(init_scale=0.0), ValueError, "init_scale"),
    (dict(init_scale=float("inf")), ValueError, "init_scale"),
    (dict(callback_every=0), ValueError, "callback_every"),
    (dict(protocol="quick"), TypeError, "protocol"),
    (dict(device="tpu"), ValueError, "device"),
]


@pytest.mark.parametrize("kw, exc, words", BAD_TRAIN_INPUTS, ids=[str(r[0]) for r in BAD_TRAIN_INPUTS])
def test_bad_inputs_name_the_parameter(data, kw, exc, words):
    with pytest.raises(exc, match=re.escape(words)):
        run(data, **kw)


def test_learner_is_one_checked_record(data):
    """Training and the grid search take one Learner (arch, mode, width, init), checked when it is built,
    never the loose (arch, mode, m) of before; a grid-search row trained from it records those four fields."""
    net = Learner("2layer", "hidden", m=np.int64(8), init="fan_in")
    assert (net.arch, net.mode, net.m, net.init, net.label) == ("2layer", "hidden", 8, "fan_in", "2layer(hidden)")
    assert type(net.m) is int and Learner("3resnet", m=4).mode == "all" and Learner("3resnet", m=4).init == "paper"
    with pytest.raises(dataclasses.FrozenInstanceError):
        net.m = 16
    with pytest.raises(TypeError):
        Learner("2layer", "all", 8)  # the width is keyword-only
    _, tr, te = data
    with pytest.raises(TypeError, match="learner must be a Learner"):
        train_models(tr, te, ("2layer", "all", 8), lrs=[0.1], wds=[0.0], seeds=[0])
    with pytest.raises(TypeError, match="learner must be a Learner"):
        grid_search(data[0], "2layer", n_train=100, lrs=[0.1], wds=[0.0])
    g = grid_search(data[0], net, n_train=100, lrs=[0.05], wds=[0.0], n_test=100, protocol=Protocol.quick(1),
                    progress=False, options=RunOptions(dtype=F64))
    assert {(r["model"], r["mode"], r["m"], r["init"]) for r in g.rows} == {("2layer", "hidden", 8, "fan_in")}


BAD_PROTOCOLS = [
    (dict(epochs=0), ValueError, "epochs"),
    (dict(epochs=2.0), TypeError, "epochs"),
    (dict(batch_size=0), ValueError, "batch_size"),
    (dict(momentum=1.0), ValueError, "momentum"),
    (dict(momentum=-0.1), ValueError, "momentum"),
    (dict(lr_drop_factor=-10), ValueError, "lr_drop_factor"),
    (dict(lr_drop_factor=0.5), ValueError, "lr_drop_factor"),
    (dict(lr_drop_epoch=-5), ValueError, "lr_drop_epoch"),
    (dict(lr_drop_epoch=801), ValueError, "lr_drop_epoch"),
    (dict(lr_drop_epoch=1.5), TypeError, "lr_drop_epoch"),
    (dict(eval_every=0), ValueError, "eval_every"),
    (dict(layerwise="yes"), TypeError, "layerwise"),
]


@pytest.mark.parametrize("kw, exc, words", BAD_PROTOCOLS, ids=[str(r[0]) for r in BAD_PROTOCOLS])
def test_bad_protocols_name_the_field(kw, exc, words):
    with pytest.raises(exc, match=re.escape(words)):
        Protocol(**kw)


def test_numpy_and_torch_scalars_are_accepted(data):
    import numpy as np

    _, tr, te = data
    a = train_models(tr, te, Learner("2layer", "all", m=np.int64(8)), lrs=np.array([0.05]), wds=[np.float32(0.0)],
                     seeds=np.array([3]), protocol=Protocol(epochs=np.int64(1), lr_drop_epoch=None), progress=False,
                     options=RunOptions(dtype=F64))
    b = train_models(tr, te, Learner("2layer", "all", m=8), lrs=[0.05], wds=[0.0], seeds=[3],
                     protocol=Protocol(epochs=1, lr_drop_epoch=None), progress=False, options=RunOptions(dtype=F64))
    assert torch.equal(a.test_error, b.test_error) and a.configs[0]["m"] == 8


def test_bad_data_is_refused_before_training(data):
    _, tr, te = data
    slow = Protocol(epochs=10_000)  # would take minutes: every error below must come first
    cases = [
        (rl.Sample(tr.x, tr.y, None, None), rl.Sample(te.x, te.y[:, :3], None, None), "test.y has k = 3"),
        (tr, rl.Sample(te.x[:, :10], te.y, None, None), "test.x has d = 10"),
        (rl.Sample(tr.x, tr.y[:50], None, None), te, "train: x has 100 samples but y has 50"),
        (rl.Sample(tr.x[0], tr.y, None, None), te, "train.x must have 2 dimensions"),
        (rl.Sample(tr.x, tr.y.expand(3, *tr.y.shape), None, None), te, "model axis of 3"),
    ]
    nan_x = tr.x.clone()
    nan_x[3, 2] = float("nan")
    cases.append((rl.Sample(nan_x, tr.y, None, None), te, "train.x contains NaN"))
    inf_y = te.y.clone()
    inf_y[0, 0] = float("inf")
    cases.append((tr, rl.Sample(te.x, inf_y, None, None), "test.y contains NaN or inf"))
    for train, test, words in cases:
        with pytest.raises(ValueError, match=re.escape(words)):
            train_models(train, test, Learner("2layer", "all", m=4), lrs=[0.1], wds=[0], seeds=[0], protocol=slow,
                         progress=False)
    with pytest.raises(ValueError, match="holdout.x has d = 5"):
        train_models(tr, te, Learner("2layer", "all", m=4), lrs=[0.1], wds=[0], seeds=[0], protocol=slow,
                     progress=False,
                     holdout=rl.Sample(te.x[:, :5], te.y, None, None))
    with pytest.raises(ValueError, match="batch_size .* must not exceed"):
        train_models(tr, te, Learner("2layer", "all", m=4), lrs=[0.1], wds=[0], seeds=[0],
                     protocol=Protocol(epochs=1, lr_drop_epoch=None, batch_size=500), progress=False)
    with pytest.raises(ValueError, match="select"):
        grid_search(data[0], Learner("2layer", "all", m=4), n_train=100, lrs=[0.1], wds=[0],
                    selection=Selection(select="best"))


@pytest.mark.parametrize("arch", ["2layer", "3layer", "3resnet", "3resnet_eq21"])
def test_last_is_conjugate_kernel_regression(arch):
    """Mode ``last`` trains a readout on the initial network's features (the conjugate
    kernel, §3.1): at convergence it equals ridge regression on those features with
    λ = N·wd (the minimiser of (1/2N)Σ‖A φ − y‖² + (wd/2)‖A‖²), for every learner."""
    from resnetlearn.kernels.ridge import feature_path

    inst = rl.talk_instance()
    tr, te = inst.sample(40, seed=0, dtype=F64), inst.sample(30, seed=1, dtype=F64)
    m, wd = 12, 1e-2
    p0 = networks.init_params(arch, 30, 8, m, [4], dtype=F64)
    phi_tr, phi_te = (sum(networks.readout_features(arch, p0, x))[0] for x in (tr.x, te.x))
    lr = 1 / float(torch.linalg.eigvalsh(phi_tr.T @ phi_tr / 40).max())  # stable full-batch step
    r = train_models(tr, te, Learner(arch, "last", m=m), lrs=[lr], wds=[wd], seeds=[4],
                     protocol=Protocol(epochs=3000, batch_size=40, lr_drop_epoch=None, eval_every=3000), progress=False,
                     options=RunOptions(dtype=F64))
    exact = feature_path(phi_tr, tr.y, [phi_te], [40 * wd], center=False)[0][0]
    assert float(((exact - te.y) ** 2).sum(-1).mean()) == pytest.approx(float(r.test_error[0]), rel=1e-6)
    # the trained model is φ₀·A: features of the initial network, whatever A became
    assert torch.allclose(phi_te @ r.params["A"][0].T, exact, atol=1e-6)
    moved = dict(p0, A=r.params["A"])
    if arch == "3resnet":  # the §6 network with the trained A inside would be a different function
        assert not torch.allclose(networks.forward(arch, moved, te.x)[0], exact, atol=1e-3)


def test_no_host_synchronisation_inside_the_step_loop(data, monkeypatch):
    """An epoch of training converts no tensor to a Python value (each would be a
    device→host synchronisation on a GPU)."""
    _, tr, te = data
    for mode in ("all", "hidden", "last", "ntk"):
        p0 = networks.init_params("3resnet", 30, 8, 16, [0, 1], dtype=F64)
        lr = torch.tensor([0.05, 1e4], dtype=F64)  # one model diverges during the epoch
        state = State("3resnet", mode, p0, lr=lr, wd=torch.zeros(2, dtype=F64), protocol=Protocol.quick(2),
                      seeds=[0, 1])
        state.start_phase(None)
        calls = []

        def counting(orig, name, calls=calls):
            def wrapper(self, *a, **k):
                calls.append(name)
                return orig(self, *a, **k)
            return wrapper

        for name in ("__bool__", "item", "tolist", "cpu", "__float__", "__int__", "__index__", "numpy"):
            orig = getattr(torch.Tensor, name)
            monkeypatch.setattr(torch.Tensor, name, counting(orig, name))
        state.epoch(tr.x, tr.y, 0, cancel=None)
        monkeypatch.undo()
        assert calls == [], f"mode {mode}: {calls}"
        assert state.diverged.tolist() == [False, True]  # still detected, on the device


def test_per_model_targets_match_separate_runs(data):
    # a β sweep as one batch: y of shape (G, N, k), one target per model
    inst = rl.talk_instance()
    betas = [1.0, 0.2]
    trs = [inst.with_alpha_beta(0.3, b).sample(100, seed=0, dtype=F64) for b in betas]
    tes = [inst.with_alpha_beta(0.3, b).sample(200, seed=1, dtype=F64) for b in betas]

    def stack(samples):
        return rl.Sample(samples[0].x, *(torch.stack([getattr(s, a) for s in samples])
                                         for a in ("y", "base", "composite")))

    both = train_models(stack(trs), stack(tes), Learner("3resnet", "all", m=16), lrs=[0.05, 0.05], wds=[0, 0],
                        seeds=[0, 0], protocol=Protocol.quick(2), progress=False, options=RunOptions(dtype=F64))
    for g in range(2):
        one = train_models(trs[g], tes[g], Learner("3resnet", "all", m=16), lrs=[0.05], wds=[0], seeds=[0],
                           protocol=Protocol.quick(2), progress=False, options=RunOptions(dtype=F64))
        assert torch.allclose(both.test_error[g], one.test_error[0], rtol=1e-10)
        assert torch.allclose(both.curves["out1_vs_base"][:, g], one.curves["out1_vs_base"][:, 0], rtol=1e-10)


def test_grid_search_reruns_the_selected_cell_with_fresh_seeds(data):
    inst = data[0]
    g = grid_search(inst, Learner("2layer", "all", m=8), n_train=100, lrs=[0.01, 0.05], wds=[0.0, 1e-3], n_test=100,
                    protocol=Protocol.quick(2), progress=False, selection=Selection(rerun_seeds=[1, 2, 3]),
                    options=RunOptions(dtype=F64))
    grid = [r for r in g.rows if r["role"] == "grid"]
    assert len(grid) == 4 and len(g.reruns) == 3 and len(g.rows) == 7
    assert all((r["lr"], r["wd"]) == (g.best["lr"], g.best["wd"]) and not r["selected"] for r in g.reruns)
    assert [r["seed"] for r in g.reruns] == [1, 2, 3]
    # a rerun is exactly the model trained alone with that seed on the same data
    _, tr, te = data
    tr, te = inst.sample(100, seed=0, dtype=F64), inst.sample(100, seed=1, dtype=F64)
    alone = train_models(tr, te, Learner("2layer", "all", m=8), lrs=[g.best["lr"]], wds=[g.best["wd"]], seeds=[2],
                         protocol=Protocol.quick(2), progress=False, options=RunOptions(dtype=F64))
    assert g.reruns[1]["test_error"] == pytest.approx(float(alone.test_error[0]), rel=1e-12)
    with pytest.raises(ValueError, match="rerun_seeds must be fresh"):
        grid_search(inst, Learner("2layer", "all", m=8), n_train=100, lrs=[0.01], wds=[0.0], n_test=100,
                    protocol=Protocol.quick(2), progress=False, selection=Selection(rerun_seeds=[0]))


def _by_hand(arch, p, x, *, inner_A=None):
    """The three networks written out from their parameter tensors (G models, x (n, d) → (G, n, k)), apart from
    networks.py's layer graph: 2layer A·σ(Wx + b₁); eq 2.1 out₁ + A·σ(V·σ(h₁) + b₂); the §6 ResNet
    out₁ + A·σ(V·A'·σ(h₁) + b₂) with out₁ = A·σ(h₁) and A' = ``inner_A`` (default A)."""
    a1 = torch.relu(torch.einsum("gmd,nd->gnm", p["W"], x) + p["b1"][:, None])
    out1 = torch.einsum("gnm,gkm->gnk", a1, p["A"])
    if arch == "2layer":
        return out1
    inner = a1 if arch == "3resnet_eq21" else torch.einsum("gnm,gkm->gnk", a1, p["A"] if inner_A is None else inner_A)
    a2 = torch.relu(torch.einsum("gnj,gmj->gnm", inner, p["V"]) + p["b2"][:, None])
    return out1 + torch.einsum("gnm,gkm->gnk", a2, p["A"])


def _errors_by_hand(r, arch, mode, sample):
    """E‖out(x) − y‖² of each trained model, its output computed here in float64 from the returned tensors:
    modes all/hidden the network at ``params``; last the trained readout on the initial features (the §6 ResNet's
    inner A kept at A₀); ntk f(θ₀) + ∂f(θ₀)·Δ by torch.func.jvp."""
    x, y = sample.x.double(), sample.y.double()
    p = {k: v.double() for k, v in r.params.items()}
    if mode in ("all", "hidden"):
        out = _by_hand(arch, p, x)
    elif mode == "last":
        out = _by_hand(arch, p, x, inner_A=r.p0["A"].double())
    else:
        p0 = {k: v.double() for k, v in r.p0.items()}
        f0, df = jvp(lambda q: _by_hand(arch, q, x), (p0,), ({k: r.displacement[k].double() for k in p0},))
        out = f0 + df
    return ((out - y) ** 2).sum(-1).mean(-1)


@pytest.mark.parametrize("arch", ["3resnet", "3resnet_eq21", "2layer"])
@pytest.mark.parametrize("mode", MODES)
def test_public_evaluation_gives_exactly_the_reported_errors(data, arch, mode):
    """The reported errors are those of the trained models, computed here by another route (the networks written
    out by hand, mode last on the initial features, ntk by jvp at θ₀): equal up to float32 rounding.
    TrainResult.error/predict evaluate the same models: on the test and training sets they give the reported
    errors bit for bit, in float32 as trained, a diverged model NaN."""
    tr, te = data[0].sample(100, seed=0), data[0].sample(200, seed=1)  # float32, as trained by default
    r = train_models(tr, te, Learner(arch, mode, m=16), lrs=[0.05, 0.02, 1e4], wds=[0.0, 1e-3, 0.0], seeds=[0, 1, 0],
                     protocol=Protocol.quick(2), progress=False)
    assert r.diverged.tolist() == [False, False, True]
    for sample, reported in ((te, r.test_error), (tr, r.train_error)):
        torch.testing.assert_close(_errors_by_hand(r, arch, mode, sample)[:2], reported[:2].double(),
                                   rtol=1e-5, atol=0)
        assert torch.equal(r.error(sample)[:2], reported[:2])
    assert torch.isnan(r.error(te)[2])
    out, out1, res = r.predict(te.x, parts=True)
    assert out.shape == (3, te.x.shape[0], te.y.shape[1]) and torch.allclose(out[:2], (out1 + res)[:2], atol=1e-5)


def test_public_evaluation_after_layerwise_training(data):
    tr, te = data[0].sample(100, seed=0), data[0].sample(200, seed=1)  # float32, as trained by default
    r = train_models(tr, te, Learner("3resnet", "hidden", m=16), lrs=[0.05], wds=[0.0], seeds=[0],
                     protocol=Protocol.quick(2, layerwise=True), progress=False)
    torch.testing.assert_close(_errors_by_hand(r, "3resnet", "hidden", te), r.test_error.double(), rtol=1e-5, atol=0)
    assert torch.equal(r.error(te), r.test_error)


def test_networks_forward_is_the_all_and_hidden_model(data):
    """networks.forward of the returned params is the trained model in modes all/hidden only: after
    mode last the §6 ResNet's trained A would also replace A₀ inside the residual's input."""
    tr, te = data[0].sample(100, seed=0), data[0].sample(200, seed=1)
    x = te.x
    for mode in ("all", "last"):
        r = train_models(tr, te, Learner("3resnet", mode, m=16), lrs=[0.05], wds=[0.0], seeds=[0],
                         protocol=Protocol.quick(2),
                         progress=False)
        same = torch.equal(networks.forward("3resnet", r.params, x), r.predict(x))
        assert same == (mode == "all"), mode


def test_a_new_architecture_is_one_entry(data, monkeypatch):
    """Adding a network is one Architecture entry (here a four-layer ReLU network, which no code
    was written for): its parameters, batched forward, training in every mode (with the public
    evaluation reproducing the reported error) and its empirical NTK follow from the layer graph.
    The NTK (back-propagated signals derived from the graph) equals J Jᵀ with J from autograd of
    the network written out by hand here."""
    from torch.func import jacrev

    from resnetlearn import kernels as K

    n = networks
    rec = n.Architecture("4layer", "A·σ(U σ(V σ(W x + b₁) + b₂) + b₃)",
                         (n.dense("h1", "x", "W", "b1"), n.relu("a1", "h1"), n.dense("h2", "a1", "V", "b2"),
                          n.relu("a2", "h2"), n.dense("h3", "a2", "U", "b3"), n.relu("a3", "h3"),
                          n.readout("out1", "a3")), out1="out1")
    monkeypatch.setitem(n.ARCHITECTURES, "4layer", rec)
    assert n.param_shapes("4layer", 5, 3, 7) == dict(W=(7, 5), b1=(7,), V=(7, 7), b2=(7,), U=(7, 7), b3=(7,),
                                                     A=(3, 7))
    p = n.init_params("4layer", 5, 3, 7, [1], dtype=F64)
    x = torch.randn(6, 5, dtype=F64, generator=torch.Generator().manual_seed(0))

    def by_hand(W, b1, V, b2, U, b3, A):
        return torch.relu(torch.relu(torch.relu(x @ W.T + b1) @ V.T + b2) @ U.T + b3) @ A.T

    q = {k: v[0] for k, v in p.items()}
    assert torch.allclose(n.forward("4layer", p, x)[0], by_hand(**q), atol=1e-12)
    J = torch.cat([j.reshape(6, 3, -1) for j in jacrev(by_hand, argnums=tuple(range(7)))(*q.values())], dim=2)
    J = J.permute(1, 0, 2)  # (k, N, P)
    ntk = K.ntk(x, arch="4layer", params=p, outputs="full")
    assert torch.allclose(ntk, torch.einsum("anp,bmp->anbm", J, J), atol=1e-10)
    inst, _, _ = data
    tr, te = inst.sample(100, seed=0), inst.sample(200, seed=1)
    for mode in MODES:
        r = train_models(tr, te, Learner("4layer", mode, m=12), lrs=[0.05], wds=[0.0], seeds=[0],
                         protocol=Protocol.quick(1),
                         progress=False)
        assert torch.isfinite(r.test_error).all() and torch.equal(r.error(te), r.test_error), mode
    # what each mode trains is read from the graph, and the frozen gate is this graph under its own ops
    assert trainable_names("4layer", "hidden") == ["W", "b1", "V", "b2", "U", "b3"]
    assert trainable_names("4layer", "last") == ["A"]
    g = train_models(tr, te, Learner("4layer", "all", m=12), lrs=[0.05], wds=[0.0], seeds=[0],
                     protocol=Protocol.quick(1), progress=False, options=RunOptions(gate=FrozenGate()))
    p0 = n.init_params("4layer", 30, 15, 12, [0])
    assert all(torch.equal(g.params[k], p0[k]) for k in ("W", "b1", "V", "b2", "U", "b3"))  # the gates stay
    assert not torch.equal(g.params["U2"], p0["U"]) and torch.equal(g.error(te), g.test_error)


# ----------------------------------------------------------------- validation at the same N ---------
def test_fresh_validation_trains_on_the_same_n_samples_as_test_selection():
    from resnetlearn.targets.concept import data_split, parity_instance

    inst = parity_instance()
    by_test = data_split(inst, 500, n_test=200, seed=0, dtype=F64)
    fresh = validation_split(inst, 500, n_test=200, data_seed=0, dtype=F64)
    assert fresh.train.x.shape == (500, inst.d) and torch.equal(fresh.train.x, by_test.train.x)
    assert torch.equal(fresh.train.y, by_test.train.y) and torch.equal(fresh.test.x, by_test.test.x)
    # 100 = ⌈0.2 · 500⌉ new samples of the same distribution, none of them a training or test sample
    assert fresh.val.x.shape == (default_val_size(500), inst.d) == (100, inst.d)
    seen = {tuple(r) for r in torch.cat([by_test.train.x, by_test.test.x]).tolist()}
    assert not seen & {tuple(r) for r in fresh.val.x.tolist()}
    assert torch.allclose(fresh.val.y, inst.sample(100, seed=2, dtype=F64).y)  # seed data_seed + 2
    sized = validation_split(inst, 500, n_test=200, data_seed=0, val_size=250, val_seed=7, dtype=F64)
    assert sized.val.x.shape[0] == 250 and torch.equal(sized.train.x, by_test.train.x)
    # the old rule, kept by name: the last fifth carved out, SGD sees 400
    held = validation_split(inst, 500, n_test=200, data_seed=0, validation="holdout", dtype=F64)
    assert torch.equal(held.train.x, by_test.train.x[:400]) and torch.equal(held.val.x, by_test.train.x[400:])
    with pytest.raises(ValueError, match="seed of its own"):
        validation_split(inst, 500, n_test=200, data_seed=0, val_seed=1)
    with pytest.raises(ValueError, match="validation"):
        validation_split(inst, 500, n_test=200, validation="carve")


def test_a_val_point_of_a_figure_names_its_rule_and_a_test_point_keeps_its_key():
    from resnetlearn.reproduce import figures as F
    from resnetlearn.reproduce.points import validation_of

    test_pts, val_pts = F.points("fig2a", "quick"), F.points("fig2a", "quick", select="val")
    assert all("validation" not in p for p in test_pts)  # unchanged configurations: unchanged store keys
    assert all(p["validation"] == "fresh" for p in val_pts)
    assert validation_of(val_pts[0]) == {"validation": "fresh", "val_size": None}
    assert validation_of(dict(test_pts[0], select="val")) == {"validation": "holdout"}  # a stored key
    assert validation_of(test_pts[0]) == {}

