"""Learner networks (eq 2.1, §6) and the SGD protocol (arXiv v3 §8.1), batched."""

import threading

import pytest
import torch
from torch.func import jvp

import resnetlearn as rl
from resnetlearn import networks
from resnetlearn.training import Protocol, grid_search, paper_grid, train_models, trainable_names

F64 = torch.float64


@pytest.fixture(scope="module")
def data():
    inst = rl.talk_instance()
    return inst, inst.sample(100, seed=0, dtype=F64), inst.sample(200, seed=1, dtype=F64)


def run(data, arch="3resnet", mode="all", lrs=(0.05,), wds=(0.0,), seeds=(0,), epochs=2, **kw):
    _, tr, te = data
    return train_models(tr, te, arch, mode, 16, list(lrs), list(wds), list(seeds),
                        Protocol.quick(epochs), dtype=F64, progress=False, **kw)


@pytest.mark.parametrize("arch", networks.ARCHS)
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
    r = train_models(tr, te, "3resnet", "hidden", 16, [0.05], [0.0], [0],
                     Protocol.quick(2, layerwise=True), dtype=F64, progress=False)
    assert r.epochs_done == 4 and r.rows()[0]["layerwise"] is True


def test_grid_search_selection_rules(data):
    inst = data[0]
    g = grid_search(inst, "2layer", "all", 8, 100, [0.01, 0.05], [0.0], n_test=100,
                    protocol=Protocol.quick(2), progress=False, dtype=F64)
    assert len(g.rows) == 2 and sum(r["selected"] for r in g.rows) == 1
    assert g.best["test_error"] == min(r["test_error"] for r in g.rows)
    v = grid_search(inst, "2layer", "all", 8, 100, [0.01, 0.05], [0.0], select="val", n_test=100,
                    protocol=Protocol.quick(2), progress=False, dtype=F64)
    assert v.best["val_error"] == min(r["val_error"] for r in v.rows)
    assert all(r["n_train"] == 80 and r["select"] == "val" for r in v.rows)
    assert paper_grid(1e-3, 0.5) == [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5]


@pytest.mark.parametrize("kw, match", [
    (dict(arch="resnet50"), "unknown model"),
    (dict(mode="lazy"), "unknown training mode"),
    (dict(lrs=[0.0]), "lr must be > 0"),
    (dict(wds=[-1.0]), "wd"),
    (dict(lrs=[0.1, 0.2]), "one value per model"),
])
def test_bad_inputs(data, kw, match):
    with pytest.raises(ValueError, match=match):
        run(data, **kw)


def test_bad_width_batch_and_labels(data):
    _, tr, te = data
    with pytest.raises(ValueError, match="m must be a positive integer"):
        train_models(tr, te, "2layer", "all", 0, [0.1], [0], [0], Protocol.quick(1), progress=False)
    with pytest.raises(ValueError, match="batch_size .* must not exceed"):
        train_models(tr, te, "2layer", "all", 4, [0.1], [0], [0], Protocol(epochs=1, batch_size=500),
                     progress=False)
    bad = rl.Sample(tr.x, tr.y.clone(), None, None)
    bad.y[0, 0] = float("nan")
    with pytest.raises(ValueError, match="finite"):
        train_models(bad, te, "2layer", "all", 4, [0.1], [0], [0], Protocol.quick(1), progress=False)
    with pytest.raises(ValueError, match="select"):
        grid_search(data[0], "2layer", "all", 4, 100, [0.1], [0], select="best")


def test_per_model_targets_match_separate_runs(data):
    # a β sweep as one batch: y of shape (G, N, k), one target per model
    inst = rl.talk_instance()
    betas = [1.0, 0.2]
    trs = [inst.with_alpha_beta(0.3, b).sample(100, seed=0, dtype=F64) for b in betas]
    tes = [inst.with_alpha_beta(0.3, b).sample(200, seed=1, dtype=F64) for b in betas]

    def stack(samples):
        return rl.Sample(samples[0].x, *(torch.stack([getattr(s, a) for s in samples])
                                         for a in ("y", "base", "composite")))

    both = train_models(stack(trs), stack(tes), "3resnet", "all", 16, [0.05, 0.05], [0, 0], [0, 0],
                        Protocol.quick(2), dtype=F64, progress=False)
    for g in range(2):
        one = train_models(trs[g], tes[g], "3resnet", "all", 16, [0.05], [0], [0], Protocol.quick(2),
                           dtype=F64, progress=False)
        assert torch.allclose(both.test_error[g], one.test_error[0], rtol=1e-10)
        assert torch.allclose(both.curves["out1_vs_base"][:, g], one.curves["out1_vs_base"][:, 0], rtol=1e-10)
