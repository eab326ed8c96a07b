"""The concept class (eq 2.2, 5.1–5.2) and its named instances (§7, arXiv v3 §8.1)."""

import math

import pytest
import torch

from resnetlearn import (
    Concept1,
    Target,
    TwoLayerSmooth,
    companion_figure1,
    concept_complexity,
    hard_instance,
    instance,
    parity_instance,
    random_concept,
    sample_inputs,
    talk_instance,
)


def test_parity_composite_is_a_single_degree_8_parity():
    inst = parity_instance()
    s = inst.sample(4096, seed=3, dtype=torch.float64)
    x = s.x
    assert set(x.unique().tolist()) == {-1.0, 1.0}
    F = s.base  # β = 1
    assert torch.equal(F, torch.stack([x[:, 2 * r] * x[:, 2 * r + 1] for r in range(15)], 1))
    prod8 = x[:, :8].prod(dim=1)
    for i in range(1, 16):  # the paper's 1-based index
        assert torch.equal(s.composite[:, i - 1] / 0.3, (-1) ** i * prod8)


def test_parity_networks_equal_exact_products():
    # F and G are built as genuine eq-5.2 networks (‖w‖ = 1/√2, |a| ≤ 1) by polarisation;
    # they must reproduce the exact products
    for inst in (parity_instance(), talk_instance(), hard_instance(24, 5, seed=1)):
        s = inst.sample(1000, seed=0, dtype=torch.float64)
        base, comp = Concept1.components(inst, s.x)
        assert torch.allclose(base, s.base, atol=1e-12)
        assert torch.allclose(comp, s.composite, atol=1e-12)
        assert torch.allclose(inst.F.weights.norm(dim=2), torch.tensor(2**-0.5, dtype=torch.float64))
        assert inst.F.coeffs.abs().max() <= 1 and inst.G.coeffs.abs().max() <= 1


def test_reference_errors_exact_and_monte_carlo():
    inst = parity_instance()
    r = inst.reference_errors()
    assert r.exact and r.f_only == pytest.approx(1.35, abs=1e-12) and r.zero == pytest.approx(16.35, abs=1e-12)
    assert inst.threshold == pytest.approx(15 * 0.3**2)
    mc = Target.reference_errors(inst, n_mc=100_000, seed=1)
    assert mc.f_only == pytest.approx(1.35, abs=1e-9)  # (α·G_i)² = α² for every x
    assert abs(mc.zero - 16.35) < 4 * mc.zero_se
    assert talk_instance().reference_errors().f_only == pytest.approx(8 * 0.09)
    # β = 0.5: predicting 0 errs by k(β² + α²); kα² is unchanged
    r2 = parity_instance(beta=0.5).reference_errors()
    assert r2.zero == pytest.approx(15 * (0.25 + 0.09)) and r2.f_only == pytest.approx(1.35)


def test_hard_instance_section7():
    inst = hard_instance(d=20, k=4, alpha=0.5, seed=7)
    s = inst.sample(2000, seed=1, dtype=torch.float64)
    assert torch.allclose(s.x.abs(), torch.full_like(s.x, 1 / math.sqrt(20)))
    idx = [S[0] for S in inst.f_sets]
    assert len(set(idx)) == 4
    F = math.sqrt(20) * s.x[:, idx]
    assert torch.allclose(s.base, F)
    for i in range(4):  # every output of G is y1⋯yk
        assert torch.allclose(s.composite[:, i], 0.5 * F.prod(dim=1))
    r = inst.reference_errors()
    assert r.f_only == pytest.approx(4 * 0.25) and r.zero == pytest.approx(4 * 1.25)
    mc = Target.reference_errors(inst, n_mc=50_000)
    assert abs(mc.zero - r.zero) < 4 * mc.zero_se
    # ℭ_s(F) = C*·2·√(2d): the O(√d) of §7
    cc = concept_complexity(inst)
    assert float(cc["F"]["C_s"].value) == pytest.approx(2e4 * math.sqrt(40), rel=1e-12)


def test_companion_target_values():
    t = companion_figure1()
    x = torch.tensor([[0.0, 0, 0, 0], [0, 0, 0, 1]], dtype=torch.float64)
    assert torch.allclose(t(x), torch.tensor([[4.0], [4 * math.cos(7)]], dtype=torch.float64))
    s = t.sample(100, seed=0)
    assert s.base is None and torch.allclose(s.x.norm(dim=1), torch.ones(100))
    r = t.reference_errors(n_mc=1_000_000)  # E F*² ≈ 31.07 ± 0.07
    assert r.f_only is None and not r.exact
    # E F*(x)² by a second Monte Carlo written here: x = g/‖g‖ with g ~ N(0, I_4), F* from the docstring's formula
    g = torch.randn(1_000_000, 4, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    x = g / g.norm(dim=1, keepdim=True)
    y = (torch.sin(3 * x[:, 0]) + torch.sin(3 * x[:, 1]) + torch.sin(3 * x[:, 2]) - 2) ** 2 * torch.cos(7 * x[:, 3])
    assert torch.allclose(t(x)[:, 0], y, rtol=1e-12, atol=1e-12)
    se = float((y**2).std() / math.sqrt(len(y)))
    assert abs(r.zero - float((y**2).mean())) < 4 * math.hypot(r.zero_se, se)


def test_determinism_and_device_dtype():
    inst = parity_instance()
    a, b = inst.sample(500, seed=11), inst.sample(500, seed=11)
    assert torch.equal(a.x, b.x) and torch.equal(a.y, b.y)
    assert not torch.equal(a.x, inst.sample(500, seed=12).x)
    assert a.x.dtype == torch.float32 and a.x.device.type == "cpu"
    c = random_concept(8, 3, seed=5)
    d = random_concept(8, 3, seed=5)
    assert torch.equal(c.F.weights, d.F.weights)
    assert torch.equal(c.sample(50, seed=2).y, d.sample(50, seed=2).y)
    assert torch.allclose(c.sample(50, seed=2, dtype=torch.float64).y.float(), c.sample(50, seed=2).y)


def test_input_distributions():
    n, d = 20_000, 10
    assert torch.allclose(sample_inputs("unit_sphere", n, d).norm(dim=1), torch.ones(n), atol=1e-6)
    assert torch.allclose(sample_inputs("hypercube_unit", n, d).norm(dim=1), torch.ones(n), atol=1e-6)
    assert set(sample_inputs("hypercube", n, d).unique().tolist()) == {-1.0, 1.0}
    g = sample_inputs("gaussian", n, d, dtype=torch.float64)
    assert abs(float((g**2).sum(1).mean()) - 1) < 0.02  # E‖x‖² = 1 for N(0, I/d)


def test_random_concept_is_in_concept_1():
    c = random_concept(12, 4, p_F=3, p_G=5, act_F=["sin", "exp"], act_G="cos", seed=1)
    assert torch.allclose(c.F.weights.norm(dim=2), torch.tensor(2**-0.5, dtype=torch.float64))
    assert c.F.coeffs.abs().max() <= 1
    assert [a.name for a in c.F.activations] == ["sin", "exp"]
    s = c.sample(10, seed=0, dtype=torch.float64)
    f = c.F(s.x)
    # hand evaluation of eq 5.2 for output r = 0
    w, a = c.F.weights[0], c.F.coeffs[0]
    acts = [torch.sin, lambda t: torch.exp(t) - 1, torch.sin]
    want = sum(a[i] * acts[i](s.x @ w[i]) for i in range(3))
    assert torch.allclose(f[:, 0], want)
    cc = concept_complexity(c)
    assert cc["F"]["C_s"].activation == "exp"  # ℭ_s(e^z−1) = C*(2e−1) > ℭ_s(sin) = C*·e


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: parity_instance(alpha=1.0), "alpha must lie in \\[0, 1\\)"),
        (lambda: parity_instance(alpha=-0.1), "alpha"),
        (lambda: parity_instance(beta=-1), "beta must lie in"),
        (lambda: parity_instance(d=0), "d must be"),
        (lambda: parity_instance(d=30, k=16), "k <= d/2"),
        (lambda: parity_instance(d=30, k=3), "k >= 4"),
        (lambda: hard_instance(5, 6), "k <= d"),
        (lambda: random_concept(5, 2, act_F="relu"), "unknown activation"),
        (lambda: random_concept(5, 2, input_dist="cube"), "input distribution must be one of"),
        (lambda: sample_inputs("normal", 3, 2), "input distribution"),
        (lambda: parity_instance().sample(0), "n must be"),
        (lambda: parity_instance().sample(5, seed=-1), "seed"),
        (lambda: parity_instance().sample(5, dtype=torch.int32), "dtype"),
        (lambda: instance("mnist"), "unknown instance"),
        (lambda: TwoLayerSmooth(torch.ones(2, 3, 4), torch.zeros(2, 3), "sin"), "norm 1/√2"),
        (lambda: TwoLayerSmooth(torch.ones(2, 3, 4) / 2 * 2**-0.5, torch.full((2, 3), 2.0), "sin"),
         "coeffs must lie"),
        (lambda: TwoLayerSmooth(torch.ones(2, 3, 4) / 2 * 2**-0.5, torch.zeros(3, 2), "sin"), "coeffs must have shape"),
        (lambda: parity_instance().F(torch.zeros(3, 7)), "input must have shape"),
    ],
)
def test_bad_inputs_raise_clear_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_energy_figure_splits_the_target_exactly():
    from resnetlearn.classroom.plots import energy_figure

    fig, r = energy_figure(alpha=0.5, beta=0.8)
    bars = [p.get_width() for p in fig.axes[0].patches]
    assert bars == pytest.approx([15 * 0.8**2, 15 * 0.5**2])  # kβ² and kα², k = 15 (Parseval)
    assert r.zero == pytest.approx(sum(bars))


def test_data_split_is_shared_and_holds_out_the_tail():
    import numpy as np

    from resnetlearn.targets.concept import data_split

    inst = parity_instance()
    full = data_split(inst, 100, n_test=50, seed=3)
    assert full.val is None and torch.equal(full.train.x, inst.sample(100, seed=3).x)
    assert torch.equal(full.test.x, inst.sample(50, seed=4).x)  # test: seed + 1
    held = data_split(inst, 100, n_test=50, seed=np.int64(3), val_fraction=0.2)
    assert held.train.x.shape[0] == 80 and held.val.x.shape[0] == 20
    assert torch.equal(held.train.x, full.train.x[:80]) and torch.equal(held.val.y, full.train.y[80:])
    assert torch.equal(held.val.composite, full.train.composite[80:])
    # drawn once in float64 and cast: the same numbers as drawn in float32 (the race trains on the cast)
    wide = data_split(inst, 100, n_test=50, seed=3, val_fraction=0.2, dtype=torch.float64)
    cast = wide.to(dtype=torch.float32)
    for a, b in ((cast.train, held.train), (cast.val, held.val), (cast.test, held.test)):
        assert all(torch.equal(getattr(a, t), getattr(b, t)) for t in ("x", "y", "base", "composite"))
        assert a.x.dtype == torch.float32
    for kw, words in [(dict(val_fraction=1.0), "val_fraction"), (dict(val_fraction=0.001), "val_fraction"),
                      (dict(seed=-1), "seed"), (dict(n_test=0), "n_test")]:
        with pytest.raises(ValueError, match=words):
            data_split(inst, 100, **{"n_test": 50, **kw})
