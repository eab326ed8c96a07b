"""Kernel methods (ResNet paper §3.1–3.2, §7; arXiv v3 §8.1): Gram matrices, closed forms, KRR,
the exact (last)/(ntk) solutions and the kernel experiments' grids."""

import itertools
import math

import pytest
import torch
from torch.func import jacrev

import resnetlearn as rl
from resnetlearn import kernels as K
from resnetlearn.kernels.experiments import (
    KernelSearch,
    kernel_errors,
    kernel_errors_and_predictors,
    network_kernel_errors,
    network_krr,
)
from resnetlearn.kernels.initial_network import multipliers
from resnetlearn.kernels.registry import DEFAULT_KERNELS, KERNEL_REGISTRY, KernelContext, kernel, parse_spec
from resnetlearn.kernels.ridge import effective_ridges, feature_path, krr_fit, krr_predict, ridge_path
from resnetlearn.learners import networks
from resnetlearn.learners.selection import grid_edges
from resnetlearn.learners.training import Learner, Protocol, RunOptions, train_models
from resnetlearn.targets.concept import Sample

F64 = torch.float64


@pytest.fixture(scope="module")
def cube():
    return rl.parity_instance().sample(60, seed=0, dtype=F64).x


def _gram_fn(spec, X, k=15, m=64):
    entry, arch = parse_spec(spec)
    point = {a: v[len(v) // 2] for a, v in entry.grid.items()}
    return entry.gram_at(KernelContext(X, k=k, m=m, seed=0), arch, point)


@pytest.mark.parametrize("spec", DEFAULT_KERNELS)
def test_gram_symmetric_psd(cube, spec):
    G = _gram_fn(spec, cube)(cube, cube)
    assert torch.allclose(G, G.T, atol=1e-10 * float(G.abs().max()))
    assert float(torch.linalg.eigvalsh(G).min()) > -1e-9 * float(G.diagonal().mean())


def test_registry_covers_every_kernel_and_kernel_checks_keywords(cube):
    assert set(KERNEL_REGISTRY) == {"gaussian", "arcsine", "arcsine_bias", "conjugate", "ntk", "nngp_inf", "ntk_inf"}
    assert KERNEL_REGISTRY["ntk_inf"].grid == {"sigma_w2": (1.0, 2.0), "sigma_b2": (0.0, 0.1, 1.0)}
    x = cube[:5]
    assert torch.equal(kernel("arcsine_bias", x), K.arcsine(x, bias=True))
    assert torch.equal(kernel("gaussian", x, h=2.0), K.gaussian(x, h=2.0))
    assert torch.equal(kernel("ntk_inf", x, arch="3layer", sigma_w2=2.0, sigma_b2=0.1),
                       K.infinite_width(x, arch="3layer", sigma_w2=2.0, sigma_b2=0.1)[1])
    with pytest.raises(TypeError, match="'bias'.*arcsine_bias"):
        kernel("arcsine", x, bias=True)
    with pytest.raises(TypeError, match="'bandwidth'"):
        kernel("gaussian", x, bandwidth=2.0)
    with pytest.raises(ValueError, match="unknown kernel 'laplace'"):
        kernel("laplace", x)


def test_arcsine_closed_forms():
    e1, e2 = torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0]])
    diag = torch.tensor([[1.0, 1.0]]) / math.sqrt(2)
    assert float(K.arcsine(e1, e2)) == pytest.approx(0.0)
    assert float(K.arcsine(e1, e1)) == pytest.approx(math.pi / 2)
    assert float(K.arcsine(diag, e1)) == pytest.approx(math.pi / 4)
    assert float(K.arcsine(e1, -e1)) == pytest.approx(-math.pi / 2)
    assert float(K.arcsine(e1, e2, bias=True)) == pytest.approx(math.pi / 6)  # arcsin(1/2)
    assert float(K.arcsine(e1, -e1, bias=True)) == pytest.approx(0.0)


def test_gaussian_value():
    x, y = torch.tensor([[0.0, 0.0]]), torch.tensor([[3.0, 4.0]])  # ‖x − y‖² = 25
    assert float(K.gaussian(x, y, h=5.0)) == pytest.approx(math.exp(-0.5))  # exp(−25/(2·25))


@pytest.mark.parametrize("sw,sb", [(1.0, 1.0), (2.0, 0.1)])
def test_infinite_two_layer_ntk_by_hand(sw, sb):
    # d = 2, x = e1, x' = e2: Σ1 = σ_w²·x·x'/d + σ_b² = σ_b², q = σ_w²/2 + σ_b²
    x, y = torch.tensor([[1.0, 0.0]], dtype=F64), torch.tensor([[0.0, 1.0]], dtype=F64)
    q, S = sw / 2 + sb, sb
    th = math.acos(S / q)
    k1 = q / (2 * math.pi) * (math.sin(th) + (math.pi - th) * S / q)
    k0 = (math.pi - th) / (2 * math.pi)
    nngp, ntk = K.infinite_width(x, y, "2layer", sigma_w2=sw, sigma_b2=sb)
    assert float(nngp) == pytest.approx(sw * k1, rel=1e-12)
    assert float(ntk) == pytest.approx(sw * k1 + sw * k0 * S, rel=1e-12)


@pytest.mark.parametrize("sw,sb", [(1.0, 1.0), (2.0, 0.1), (0.5, 0.0)])
def test_infinite_width_on_the_diagonal(sw, sb):
    # x = x': θ = 0, κ₁ = q/2, κ₀ = 1/2, μ = √(q/2π). ‖x‖² = 3, d = 3.
    x = torch.ones(1, 3, dtype=F64)
    q1 = sw * 1 + sb
    q2 = sw * q1 / 2 + sb
    T2 = q2 + sw * q1 / 2
    want = {
        "2layer": (sw * q1 / 2, sw * q1),
        "3layer": (sw * q2 / 2, sw * q2 / 2 + sw * T2 / 2),
    }
    nngp21 = sw * (q1 / 2 + q2 / 2 + 2 * math.sqrt(q1 * q2) / (2 * math.pi))
    want["3resnet_eq21"] = (nngp21, nngp21 + sw * q1 / 2 + sw * T2 / 2)
    for arch, (n_want, t_want) in want.items():
        nngp, ntk = K.infinite_width(x, arch=arch, sigma_w2=sw, sigma_b2=sb)
        assert float(nngp) == pytest.approx(n_want, rel=1e-12), arch
        assert float(ntk) == pytest.approx(t_want, rel=1e-12), arch


@pytest.mark.parametrize("arch", K.infinite_archs())
def test_wide_network_matches_infinite_width_with_sigmas(arch):
    # Monte Carlo: a wide network in the NTK parameterisation with σ_w² = 2, σ_b² = 0.1:
    # its empirical NTK and its conjugate kernel (σ_w²/m)φφᵀ approach the recursion's NTK and NNGP
    x = rl.parity_instance().sample(40, seed=0, dtype=F64).x
    sw, sb = 2.0, 0.1
    nngp, inf = K.infinite_width(x, arch=arch, sigma_w2=sw, sigma_b2=sb)
    err_ntk, err_nngp = {}, {}
    for m in (256, 4096):
        emp, conj = 0, 0
        for seed in range(3):  # the seed-average: its distance to the limit shrinks like 1/√m unless biased
            gen = torch.Generator().manual_seed(seed)
            p = {n: torch.randn(s, generator=gen, dtype=F64) for n, s in networks.param_shapes(arch, 30, 1, m).items()}
            scaling = K.Parameterization("ntk", sigma_w2=sw, sigma_b2=sb)
            emp = emp + K.ntk(x, arch=arch, params=p, parameterization=scaling) / 3
            phi = K.features(arch, p, x, parameterization=scaling)
            conj = conj + sw / m * phi @ phi.T / 3
        err_ntk[m] = float((emp - inf).norm() / inf.norm())
        err_nngp[m] = float((conj - nngp).norm() / nngp.norm())
    assert err_ntk[4096] < 0.04 and err_ntk[4096] < err_ntk[256] / 2
    assert err_nngp[4096] < 0.04 and err_nngp[4096] < err_nngp[256] / 2


@pytest.mark.parametrize("arch", K.network_archs())
@pytest.mark.parametrize("par", ["standard", "ntk"])
def test_empirical_ntk_matches_jacobian_contraction(arch, par):
    torch.manual_seed(0)
    X1, X2 = torch.randn(6, 5, dtype=F64), torch.randn(4, 5, dtype=F64)
    p = networks.init_params(arch, 5, 3, 7, [1], dtype=F64)
    q = K.single_model(p, arch)
    par = K.Parameterization(par, **(dict(sigma_w2=2.0, sigma_b2=0.3) if par == "ntk" else {}))
    mult = multipliers(arch, q, par)

    def f(q, x):
        return networks.forward(arch, {n: mult[n] * v[None] for n, v in q.items()}, x)[0]

    J1, J2 = jacrev(f)(q, X1), jacrev(f)(q, X2)
    full = sum(torch.einsum("acp,bdp->cadb", J1[n].reshape(6, 3, -1), J2[n].reshape(4, 3, -1)) for n in q)
    diag = torch.stack([full[c, :, c] for c in range(3)])
    got = K.ntk(X1, X2, arch, params=p, parameterization=par, outputs="per_output")
    assert torch.allclose(got, diag, atol=1e-12)
    assert torch.allclose(K.ntk(X1, X2, arch, params=p, parameterization=par), diag.mean(0), atol=1e-12)
    assert torch.allclose(K.ntk(X1, X2, arch, params=p, parameterization=par, outputs="full"), full,
                          atol=1e-12)
    J = K.jacobian(arch, p, X1, parameterization=par)
    ref = torch.cat([J1[n].reshape(6, 3, -1) for n in q], dim=2).transpose(0, 1)
    assert torch.allclose(J, ref, atol=1e-12)


@pytest.mark.parametrize("arch", ["2layer", "3layer", "3resnet_eq21", "3resnet"])
def test_features_give_the_network_output(arch):
    torch.manual_seed(0)
    x = torch.randn(7, 5, dtype=F64)
    p = networks.init_params(arch, 5, 3, 9, [2, 3], dtype=F64)
    phi = networks.features(arch, p, x)
    out = networks.forward(arch, p, x)
    assert torch.allclose(torch.bmm(phi, p["A"].transpose(1, 2)), out, atol=1e-12)  # out = A₀·φ₀ at init
    one = {n: v[:1] for n, v in p.items()}
    assert torch.allclose(K.features(arch, one, x), phi[0], atol=1e-14)
    if arch == "3resnet":  # φ₀ keeps the inner A at A₀ when the readout moves
        A1 = torch.randn_like(p["A"])
        assert torch.allclose(networks.features(arch, {**p, "A": A1}, x, A0=p["A"]), phi, atol=1e-14)


def test_ntk_spread_fan_in_resnet_does_not_concentrate():
    x = rl.parity_instance().sample(20, seed=0, dtype=F64).x
    seeds = range(6)

    def ratio(arch, init):
        small, large = K.ntk_spread(arch, [256, 4096], seeds, x, k=15, init=init)
        assert small["n_seeds"] == 6 and 0 < large["spread"] <= large["spread_max"]
        return large["spread"] / small["spread"]

    assert ratio("2layer", "fan_in") < 0.5  # ~ 1/√16 = 0.25
    assert ratio("3resnet", "fan_in") > 0.6  # the §6 bottleneck: out₁ stays random
    assert ratio("3resnet", "paper") < 0.5  # with the paper's N(0, 1/m) entries it does concentrate


def test_krr_limits_and_ridge_path(cube):
    Y = rl.parity_instance().sample(60, seed=0, dtype=F64).y
    G = K.gaussian(cube, cube, h=4.0)
    y_mean = Y.mean(0)

    def centred(ridge, K_test):  # the Cholesky route with an unpenalised mean: ȳ + K_test (K + λI)⁻¹(Y − ȳ)
        return y_mean + krr_predict(K_test, krr_fit(G, Y - y_mean, ridge))

    assert torch.allclose(centred(1e-10, G), Y, atol=1e-5)  # interpolation as λ → 0
    near, far = ridge_path(G, Y, [G], [1e-10, 1e12])[0]
    assert torch.allclose(near, Y, atol=1e-5)
    assert torch.allclose(far, Y.mean(0).expand_as(far), atol=1e-8)  # the mean as λ → ∞
    path = ridge_path(G, Y, [G], [1e-3, 1.0])[0]
    for i, lam in enumerate([1e-3, 1.0]):  # eigendecomposition and Cholesky solve agree
        assert torch.allclose(path[i], centred(lam, G), atol=1e-8)
    # explicit features (eq 3.3) give the same predictor as their kernel, in the primal (20 < 60 features)
    # and in the dual (90 > 60)
    for width in (20, 90):
        Phi = torch.randn(60, width, dtype=F64, generator=torch.Generator().manual_seed(width))
        K_phi = Phi @ Phi.T
        dual = Y.mean(0) + krr_predict(K_phi, krr_fit(K_phi, Y - Y.mean(0), 0.5))
        primal, on_train = feature_path(Phi, Y, [Phi[:7], Phi], [0.5])
        assert torch.allclose(on_train[0], dual, atol=1e-8)
        assert torch.allclose(primal[0], dual[:7], atol=1e-8)


@pytest.mark.parametrize("arch,m,n", [("2layer", 40, 25), ("3resnet", 40, 25), ("3layer", 12, 50)])
def test_last_exact_equals_least_squares_on_features(arch, m, n):
    inst = rl.talk_instance()
    tr, te = inst.sample(n, seed=0, dtype=F64), inst.sample(30, seed=1, dtype=F64)
    p = networks.init_params(arch, 30, 8, m, [0], dtype=F64)
    Phi, Phi_te = K.features(arch, p, tr.x), K.features(arch, p, te.x)
    # minimum-norm least squares (N < features: interpolation) or ordinary least squares (N > features)
    want = Phi_te @ torch.linalg.pinv(Phi) @ tr.y
    got = network_krr(tr.x, tr.y, te.x, arch=arch, params=p, mode="last", ridges=[1e-13], relative=True)[0]
    assert torch.allclose(got, want, atol=1e-6 * float(want.abs().max()))


@pytest.mark.parametrize("arch", ["2layer", "3layer", "3resnet"])
def test_training_last_equals_conjugate_kernel_regression(arch):
    inst = rl.talk_instance()
    tr, te = inst.sample(50, seed=0, dtype=F64), inst.sample(40, seed=1, dtype=F64)
    wd = 0.05
    res = train_models(tr, te, Learner(arch, "last", m=16), lrs=[0.2], wds=[wd], seeds=[3],
                       protocol=Protocol(epochs=3000, batch_size=50, lr_drop_epoch=3000, eval_every=3000),
                       progress=False, options=RunOptions(dtype=F64))
    p = networks.init_params(arch, 30, 8, 16, [3], dtype=F64)
    # minimiser of ½ mean‖Aφ₀ − y‖² + (wd/2)‖A‖²: ridge λ = N·wd, no intercept
    pred = network_krr(tr.x, tr.y, te.x, arch=arch, params=p, mode="last", ridges=[50 * wd])[0]
    assert float(((pred - te.y) ** 2).sum(-1).mean()) == pytest.approx(float(res.test_error[0]), rel=1e-6)


@pytest.mark.parametrize("arch,n", [("2layer", 40), ("3resnet", 40), ("3resnet", 8), ("3layer", 8)])
def test_ntk_exact_equals_trained_linearised_network(arch, n):
    # n = 40: N·k = 320 > P (primal); n = 8: N·k = 64 < P (dual with the full multi-output NTK)
    inst = rl.talk_instance()
    tr, te = inst.sample(n, seed=0, dtype=F64), inst.sample(30, seed=1, dtype=F64)
    wd, m = 0.05, 6
    res = train_models(tr, te, Learner(arch, "ntk", m=m), lrs=[0.03], wds=[wd], seeds=[5],
                       protocol=Protocol(epochs=2500, batch_size=n, lr_drop_epoch=2500, eval_every=2500),
                       progress=False, options=RunOptions(dtype=F64))
    p = networks.init_params(arch, 30, 8, m, [5], dtype=F64)
    pred = network_krr(tr.x, tr.y, te.x, arch=arch, params=p, mode="ntk", ridges=[n * wd])[0]
    assert float(((pred - te.y) ** 2).sum(-1).mean()) == pytest.approx(float(res.test_error[0]), rel=1e-5)
    # dropping the cross-output blocks is a different (approximate) solution
    approx = network_krr(tr.x, tr.y, te.x, arch=arch, params=p, mode="ntk", ridges=[n * wd], coupling="per_output")[0]
    assert not torch.allclose(approx, pred, atol=1e-6)


def test_ntk_primal_and_dual_agree():
    inst = rl.talk_instance()
    tr, te = inst.sample(12, seed=0, dtype=F64), inst.sample(10, seed=1, dtype=F64)
    p = K.single_model(networks.init_params("3resnet", 30, 8, 5, [1], dtype=F64), "3resnet")
    f0 = networks.forward("3resnet", {n: v[None] for n, v in p.items()}, tr.x)[0]
    f0t = networks.forward("3resnet", {n: v[None] for n, v in p.items()}, te.x)[0]
    Kf = K.ntk(tr.x, arch="3resnet", params=p, outputs="full").reshape(96, 96)
    Kt = K.ntk(te.x, tr.x, arch="3resnet", params=p, outputs="full").reshape(80, 96)
    a = krr_fit(Kf, (tr.y - f0).T.reshape(-1, 1), 0.3)
    dual = f0t + (Kt @ a).reshape(8, 10).T
    # P = 375 > N·k = 96: dual here
    primal = network_krr(tr.x, tr.y, te.x, arch="3resnet", params=p, mode="ntk", ridges=[0.3])[0]
    assert torch.allclose(primal, dual, atol=1e-9)
    J, Jt = K.jacobian("3resnet", p, tr.x).reshape(96, -1), K.jacobian("3resnet", p, te.x).reshape(80, -1)
    w = torch.linalg.solve(J.T @ J + 0.3 * torch.eye(J.shape[1], dtype=F64), J.T @ (tr.y - f0).T.reshape(-1, 1))
    assert torch.allclose(f0t + (Jt @ w).reshape(8, 10).T, dual, atol=1e-9)


def test_network_kernel_errors_rows():
    inst = rl.talk_instance()
    tr, te = inst.sample(60, seed=0, dtype=F64), inst.sample(50, seed=1, dtype=F64)
    ridges = [1e-8, 1e-4, 1e-2, 1.0, 100.0]
    for mode in ("last", "ntk"):
        r = network_kernel_errors(tr, te, Learner("2layer", mode, m=10), ridges=ridges)
        assert r["test_error"] == min(e for _, _, e in r["path"])  # selected on the test set, as the paper
        if r["ridge_at_grid_edge"]:
            assert r["ridge_rel"] in (1e-8, 100.0)
        assert r["wd_equivalent"] == pytest.approx(r["ridge"] / 60)
        assert r["n_fit"] == 60 and len(r["path"]) == 5
        v = network_kernel_errors(tr, te, Learner("2layer", mode, m=10), ridges=ridges, select="val")
        assert v["n_fit"] == 48 and v["sel_error"] == min(s for _, s, _ in v["path"])
        assert v["test_error"] == dict((rel, e) for rel, _, e in v["path"])[v["ridge_rel"]]
    # more ridge, more training error (the path is monotone)
    trains = [network_kernel_errors(tr, te, Learner("2layer", "ntk", m=10), ridges=[lam])["train_error"]
              for lam in (1e-6, 1e-2, 1.0)]
    assert trains == sorted(trains) and trains[0] < r["f0_test_error"]


def test_grid_edges():
    grid = {"sigma_w2": (1.0, 2.0, 4.0), "sigma_b2": (0.0, 0.1, 1.0)}
    hard = {"sigma_b2": 0.0}
    assert grid_edges(grid, {"sigma_w2": 2.0, "sigma_b2": 0.1}, hard_bounds=hard) == []
    assert grid_edges(grid, {"sigma_w2": 4.0, "sigma_b2": 0.0}, hard_bounds=hard) == ["sigma_w2=4 (highest)"]
    assert grid_edges(grid, {"sigma_w2": 1.0, "sigma_b2": 1.0}, hard_bounds=hard) == ["sigma_w2=1 (lowest)",
                                                                                     "sigma_b2=1 (highest)"]
    assert grid_edges({"h_rel": (1.0,)}, {"h_rel": 1.0}) == []  # a single value is no search
    # the networks' weight decay: 0 cannot be extended downwards, a positive lowest value can
    wds = {"wd": (0.0, 1e-3, 5e-3)}
    assert [grid_edges(wds, {"wd": v}, hard_bounds={"wd": 0.0}) for v in (0.0, 1e-3, 5e-3, None)] == \
        [[], [], ["wd=0.005 (highest)"], []]
    assert grid_edges({"wd": (1e-3, 5e-3)}, {"wd": 1e-3}, hard_bounds={"wd": 0.0}) == ["wd=0.001 (lowest)"]
    # with the errors: an end counts only when the inward neighbour (ridge re-optimised) is > 1 % worse
    grid = {"sigma_w2": (1.0, 2.0), "ridge_rel": (1e-6, 1e-3, 1.0)}
    errs = {(1.0, 1e-6): 5.0, (1.0, 1e-3): 4.0, (1.0, 1.0): 6.0, (2.0, 1e-6): 4.5, (2.0, 1e-3): 4.02, (2.0, 1.0): 6.0}
    kw = dict(errors=errs, profiled="ridge_rel")
    assert grid_edges(grid, {"sigma_w2": 1.0, "ridge_rel": 1e-3}, **kw) == []  # 4.02 is within 1 %
    errs[(2.0, 1e-3)] = 4.5
    assert grid_edges(grid, {"sigma_w2": 1.0, "ridge_rel": 1e-3}, **kw) == ["sigma_w2=1 (lowest)"]
    errs[(1.0, 1e-6)] = 3.0
    assert grid_edges(grid, {"sigma_w2": 1.0, "ridge_rel": 1e-6}, **kw) == ["sigma_w2=1 (lowest)",
                                                                            "ridge_rel=1e-06 (lowest)"]


def test_kernel_errors_searches_each_kernels_grid():
    inst = rl.talk_instance()
    ridges = [1e-6, 1e-2, 1.0]
    search = KernelSearch(ridges=ridges, grids={"gaussian": {"h_rel": [0.5, 1.0, 2.0]}})
    rows = kernel_errors(inst, 80, ["gaussian", "ntk_inf:2layer", "arcsine"], search, n_test=60, progress=False)
    gauss, inf, arc = rows
    assert len(gauss["path"]) == 3 * 3 and len(inf["path"]) == 6 * 3 and len(arc["path"]) == 3
    assert {lab for lab, _, _ in inf["path"]} == {f"sigma_w2={w:g} sigma_b2={b:g}"
                                                  for w in (1.0, 2.0) for b in (0.0, 0.1, 1.0)}
    for r in rows:
        assert r["test_error"] == pytest.approx(min(e for _, _, e in r["path"]))  # select="test"
        assert ("ridge_rel" in r["grid_edges"]) == r["ridge_at_grid_edge"]
        if r["ridge_at_grid_edge"]:
            assert r["ridge_rel"] in (1e-6, 1.0)
    if gauss["param_at_grid_edge"]:
        assert gauss["params"]["h_rel"] in (0.5, 2.0)
    assert not arc["param_at_grid_edge"]
    # the selected setting reproduces its number through the public Gram function
    w, b = inf["params"]["sigma_w2"], inf["params"]["sigma_b2"]
    tr, te = inst.sample(80, seed=0, dtype=F64), inst.sample(60, seed=1, dtype=F64)
    Kxx = kernel("ntk_inf", tr.x, sigma_w2=w, sigma_b2=b)
    Ktx = kernel("ntk_inf", te.x, tr.x, sigma_w2=w, sigma_b2=b)
    pred = ridge_path(Kxx, tr.y, [Ktx], [inf["ridge_rel"] * float(Kxx.diagonal().mean())])[0][0]
    assert float(((pred - te.y) ** 2).sum(-1).mean()) == pytest.approx(inf["test_error"], rel=1e-9)
    search = KernelSearch(select="val", ridges=ridges, grids={"ntk_inf": {"sigma_w2": [2.0], "sigma_b2": [0.1]}})
    val = kernel_errors(inst, 80, ["ntk_inf:2layer"], search, n_test=60, progress=False)[0]
    # validation samples drawn fresh: the kernel fits all 80, 16 = ⌈0.2 · 80⌉ new ones choose
    assert val["n_fit"] == 80 and val["n_val"] == 16 and len(val["path"]) == 3 and not val["param_at_grid_edge"]


def test_the_predictors_give_the_rows_test_errors():
    """kernel_errors_and_predictors returns kernel_errors' rows, and each selected predictor's error on the test
    samples, drawn here again, is its row's test error, for selection by test and by validation error."""
    inst = rl.talk_instance()
    te = inst.sample(60, seed=1, dtype=F64)
    for search in (KernelSearch(ridges=[1e-6, 1e-2, 1.0]), KernelSearch("val", validation="holdout")):
        rows, predictors = kernel_errors_and_predictors(inst, 80, ["gaussian", "ntk_inf:2layer"], search, n_test=60,
                                                        m=16, progress=False)
        again = kernel_errors(inst, 80, ["gaussian", "ntk_inf:2layer"], search, n_test=60, m=16, progress=False)
        assert [{k: v for k, v in r.items() if k != "seconds"} for r in rows] == \
            [{k: v for k, v in r.items() if k != "seconds"} for r in again]
        for row, predict in zip(rows, predictors):
            error = float(((predict(te.x) - te.y) ** 2).sum(-1).mean())
            assert error == pytest.approx(row["test_error"], rel=1e-9)


def test_a_new_kernel_is_one_entry(monkeypatch):
    """Adding a kernel is one KernelEntry in the registry (here the polynomial kernel (1 + ⟨x, x'⟩)^p,
    which no code was written for, its degree p searched): kernel() computes it, kernel_errors tunes
    it over its grid and the ridge and reports it with its label, and the selected point's test error
    is that of a kernel ridge regression solved here directly (torch.linalg.solve, not the eigenpath)."""
    from resnetlearn.kernels import registry as kernel_registry

    def poly(X1, X2=None, *, degree=1):
        return (1 + X1 @ (X1 if X2 is None else X2).T) ** degree

    entry = kernel_registry.KernelEntry("poly", poly, label="polynomial", keywords=("degree",),
                                        grid={"degree": (1.0, 2.0)}, setting=lambda pt: f"p={pt['degree']:g}")
    monkeypatch.setitem(kernel_registry.KERNEL_REGISTRY, "poly", entry)
    inst = rl.talk_instance()
    tr, te = inst.sample(80, seed=0, dtype=F64), inst.sample(60, seed=1, dtype=F64)
    assert torch.equal(kernel("poly", tr.x, te.x, degree=2.0), (1 + tr.x @ te.x.T) ** 2)
    ridges = [1e-6, 1e-2, 1.0]
    (row,) = kernel_errors(inst, 80, ["poly"], KernelSearch(ridges=ridges), n_test=60, progress=False)
    assert row["kernel"] == "poly" and row["label"] == "polynomial"
    assert [(lab, r) for lab, r, _ in row["path"]] == [(f"p={p}", r) for p in (1, 2) for r in ridges]
    p, rel = row["params"]["degree"], row["ridge_rel"]
    G = poly(tr.x, degree=p)
    lam = rel * float(G.diagonal().mean())
    a = torch.linalg.solve(G + lam * torch.eye(80, dtype=F64), tr.y - tr.y.mean(0))
    pred = tr.y.mean(0) + poly(te.x, tr.x, degree=p) @ a
    assert row["test_error"] == pytest.approx(float(((pred - te.y) ** 2).sum(-1).mean()), rel=1e-8)
    assert row["test_error"] == min(e for _, _, e in row["path"])


def test_kernel_errors_takes_the_split_already_drawn():
    """split= gives the same numbers as the split kernel_errors would draw (the race passes its own)."""
    from resnetlearn.targets.concept import data_split

    inst = rl.talk_instance()
    options = dict(ridges=[1e-6, 1e-2, 1.0], grids={"gaussian": {"h_rel": [1.0, 2.0]}})
    kw = dict(n_test=60, progress=False)
    for select, frac in (("test", 0.0), ("val", 0.2)):
        split = data_split(inst, 80, n_test=60, seed=0, val_fraction=frac, dtype=F64)
        rule = {"validation": "holdout"} if select == "val" else {}  # the split above holds out its last fifth
        drawn = kernel_errors(inst, 80, ["gaussian", "arcsine"], KernelSearch(select, **rule, **options), **kw)
        given = kernel_errors(inst, 80, ["gaussian", "arcsine"], KernelSearch(select, **options), split=split, **kw)
        for a, b in zip(drawn, given):
            assert a["test_error"] == b["test_error"] and a["path"] == b["path"] and a["n_fit"] == b["n_fit"]
    split = data_split(inst, 80, n_test=60, dtype=F64)
    with pytest.raises(ValueError, match="float64"):
        kernel_errors(inst, 80, ["arcsine"], split=split.to(dtype=torch.float32), **kw)
    with pytest.raises(ValueError, match="holds 80 training and 60 test samples; n_train = 90"):
        kernel_errors(inst, 90, ["arcsine"], split=split, **kw)
    with pytest.raises(ValueError, match="validation part"):
        kernel_errors(inst, 80, ["arcsine"], KernelSearch("val"), split=split, **kw)
    with pytest.raises(TypeError, match="Split"):
        kernel_errors(inst, 80, ["arcsine"], split=(split.train, split.test), **kw)


def _krr_fit_by_eigenvalues(K, Y, ridge):
    """krr_fit without the shortcut: always from eigvalsh(K) (the reference)."""
    (lam_eff,) = effective_ridges(torch.linalg.eigvalsh(K), [ridge])
    if lam_eff == ridge:
        L, info = torch.linalg.cholesky_ex(K + ridge * torch.eye(K.shape[0], dtype=F64))
        if int(info) == 0:
            return torch.cholesky_solve(Y, L)
    lam, Q = torch.linalg.eigh(K)
    return Q @ ((Q.T @ Y) / (lam.clamp_min(0) + lam_eff)[:, None])


def _outcome(fn, *args):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args)
        except ValueError as e:
            out = f"ValueError: {e}"
    return out, [str(w.message) for w in caught]


def test_krr_fit_skips_the_eigenvalues_only_when_the_rule_keeps_the_ridge(monkeypatch):
    """The Cholesky shortcut of krr_fit takes the rule's decision: same coefficients (bitwise), same
    warnings and errors as deciding from eigvalsh(K), over well-conditioned, singular, rank-deficient,
    indefinite and constant-dominated Gram matrices and ridges from 0 to large."""
    import resnetlearn.kernels.ridge as R

    gen = torch.Generator().manual_seed(0)
    x = rl.parity_instance().sample(300, seed=0, dtype=F64).x
    g = torch.randn(120, 5, generator=gen, dtype=F64)
    Q, _ = torch.linalg.qr(torch.randn(60, 60, generator=gen, dtype=F64))
    spectrum = torch.logspace(0, -4, 60, dtype=F64)
    spectrum[-1] = -1e-6  # an eigenvalue below −PSD_TOL·λ_max: not a kernel matrix
    grams = {"gaussian": K.gaussian(x, h=8.0), "ntk_inf": K.infinite_width(x, arch="2layer")[1],
             "near-duplicates": K.gaussian(torch.cat([x[:50], x[:50] + 1e-9]), h=8.0),
             "rank 5": g @ g.T, "indefinite": Q @ torch.diag(spectrum) @ Q.T}
    calls = []
    real = torch.linalg.eigvalsh
    monkeypatch.setattr(torch.linalg, "eigvalsh", lambda A: calls.append(1) or real(A))
    skipped = set()
    for name, G in grams.items():
        Y = torch.randn(G.shape[0], 2, generator=gen, dtype=F64)
        top = float(real(G).max())
        for rel in (0.0, 1e-14, 1e-10, 1e-6, 1e-2, 10.0):
            calls.clear()  # eigvalsh calls made by krr_fit
            got, warned = _outcome(krr_fit, G, Y, rel * top)
            if not calls:
                skipped.add((name, rel))
                assert R._keeps_ridge(G, rel * top)
                assert effective_ridges(real(G), [rel * top]) == [rel * top]
            want, want_warned = _outcome(_krr_fit_by_eigenvalues, G, Y, rel * top)
            assert warned == want_warned, (name, rel)
            assert (got == want) if isinstance(want, str) else torch.equal(got, want), (name, rel)
    # the shortcut is taken where it should be: positive ridges on kernel matrices that are not singular
    assert {("gaussian", r) for r in (1e-6, 1e-2, 10.0)} | {("ntk_inf", r) for r in (1e-6, 1e-2, 10.0)} <= skipped
    # and not where the eigenvalues decide otherwise: a jitter (ridge 0 on a singular K), an error
    assert not {("near-duplicates", 0.0), ("rank 5", 0.0)} & skipped
    assert not {n for n, _ in skipped} & {"indefinite"}


def test_network_kernel_errors_holds_out_as_data_split():
    """select='val' without a holdout fits on the prefix data_split keeps and selects on its tail."""
    from resnetlearn.targets.concept import data_split

    inst = rl.talk_instance()
    full, held = (data_split(inst, 60, n_test=50, val_fraction=f, dtype=F64) for f in (0.0, 0.25))
    ridges = [1e-4, 1e-2, 1.0]
    own = network_kernel_errors(full.train, full.test, Learner("2layer", "last", m=10), ridges=ridges, select="val",
                                  val_fraction=0.25)
    given = network_kernel_errors(held.train, held.test, Learner("2layer", "last", m=10), ridges=ridges, select="val",
                                    holdout=held.val)
    assert own["n_fit"] == given["n_fit"] == 45 and own["path"] == given["path"]
    with pytest.raises(ValueError, match="leaves 0 of n_train = 60"):
        network_kernel_errors(full.train, full.test, Learner("2layer", "last", m=10), select="val", val_fraction=0.001)


def test_parity_counts():
    rows = K.parity_counts(30, 8)
    assert rows[2]["up_to_degree"] == 1 + 30 + 435
    assert rows[8]["monomials"] == 5852925  # C(30, 8): the degree-8 composite signal of §8.1


def test_bad_inputs(cube):
    nan_x = cube.clone()
    nan_x[0, 0] = math.nan
    G = K.gaussian(cube)
    with pytest.raises(ValueError, match="X1 and X2 disagree in dimension d"):
        K.gaussian(cube, cube[:, :5])
    with pytest.raises(ValueError, match="h must lie in"):
        K.gaussian(cube, h=-1.0)
    with pytest.raises(ValueError, match="X1 contains NaN"):
        K.infinite_width(nan_x)
    with pytest.raises(ValueError, match="X2 contains NaN"):
        K.gaussian(cube, nan_x)
    with pytest.raises(ValueError, match="ridge must lie in"):
        krr_fit(G, cube[:, :2], -1.0)
    with pytest.raises(ValueError, match="Y contains NaN"):
        ridge_path(G, nan_x[:, :2], [G], [0.1])
    with pytest.raises(ValueError, match="K contains NaN"):  # not "not positive definite ... larger ridge"
        krr_fit(torch.full((3, 3), math.nan, dtype=F64), torch.ones(3, 1, dtype=F64), 0.1)
    with pytest.raises(ValueError, match="ridges must hold at least one value"):
        ridge_path(G, cube[:, :2], [G], [])
    with pytest.raises(TypeError, match="K_tests must be a list"):
        ridge_path(G, cube[:, :2], G, [0.1])
    with pytest.raises(ValueError, match="GiB"):
        K.check_gram_memory(10**6, 10**6)
    with pytest.raises(ValueError, match="network .params. expects d"):
        K.ntk(cube[:, :5], arch="2layer", params=networks.init_params("2layer", 30, 1, 8, [0], dtype=F64))
    with pytest.raises(ValueError, match="either params or"):
        K.ntk(cube, arch="2layer", params=networks.init_params("2layer", 30, 1, 8, [0], dtype=F64), m=8)
    with pytest.raises(ValueError, match="Y must have"):
        krr_fit(G, cube[:5], 0.1)
    with pytest.raises(ValueError, match="no infinite-width kernel for arch '3resnet'.*eq 2.1"):
        K.infinite_width(cube, arch="3resnet")
    with pytest.raises(ValueError, match="sigma_w2"):
        K.infinite_width(cube, sigma_w2=0.0)
    with pytest.raises(ValueError, match="parameterization='ntk' only"):
        K.ntk(cube, m=4, parameterization=K.Parameterization("standard", sigma_w2=2.0))
    with pytest.raises(ValueError, match="unknown outputs"):
        K.ntk(cube, m=4, outputs="sum")
    with pytest.raises(ValueError, match="parameterization"):
        K.ntk(cube, m=4, parameterization="mean_field")
    with pytest.raises(TypeError, match="bias must be True or False"):
        K.arcsine(cube, bias=1)
    with pytest.raises(ValueError, match="not positive definite"):
        krr_fit(-torch.eye(3, dtype=F64), torch.ones(3, 1, dtype=F64), 0.0)
    inst = rl.talk_instance()
    with pytest.raises(ValueError, match="ntk_inf.*'3resnet'.*eq 2.1"):  # checked before any work
        kernel_errors(inst, 50, ["gaussian", "ntk_inf:3resnet"], progress=False)
    with pytest.raises(ValueError, match="no hyperparameter 'h'"):
        kernel_errors(inst, 50, ["ntk_inf"], KernelSearch(grids={"ntk_inf": {"h": [1.0]}}), progress=False)
    with pytest.raises(ValueError, match="unknown select"):
        KernelSearch(select="train")
    with pytest.raises(TypeError, match="KernelSearch"):
        kernel_errors(inst, 50, ["gaussian"], {"select": "val"}, progress=False)
    tr = inst.sample(20, seed=0, dtype=F64)
    with pytest.raises(ValueError, match="unknown mode 'all'"):
        network_kernel_errors(tr, tr, Learner("2layer", "all", m=4))
    with pytest.raises(ValueError, match="holdout is used with select='val' only"):
        network_kernel_errors(tr, tr, Learner("2layer", "last", m=4), holdout=tr)
    with pytest.raises(ValueError, match="train.y contains NaN"):
        network_kernel_errors(Sample(tr.x, tr.y * math.nan, None, None), tr, Learner("2layer", "last", m=4))


def test_parity_reach_rank_counting():
    d, k = 8, 3
    signs = torch.tensor(list(itertools.product((-1.0, 1.0), repeat=d)), dtype=F64)
    X = signs[torch.randperm(2**d, generator=torch.Generator().manual_seed(0))[:20]] / math.sqrt(d)
    frac, rank = K.parity_reach(lambda a, b: K.gaussian(a, b, h=1.0), X, k)
    assert frac.shape == (math.comb(d, k),) and rank == 20
    assert float(frac.min()) >= 0 and float(frac.max()) <= 1 + 1e-12
    assert float(frac.sum()) <= rank + 1e-9  # orthonormal parities share the span's N dimensions
    assert 0 < float(frac.mean()) < 20 / math.comb(d, k)
    # every point of the cube as a sample: the Gaussian's Gram matrix is invertible, so the span is everything
    full, rank_full = K.parity_reach(lambda a, b: K.gaussian(a, b, h=1.0), signs / math.sqrt(d), k)
    assert rank_full == 2**d and torch.allclose(full, torch.ones_like(full), atol=1e-8)
    # the linear kernel's sections are degree-1 functions: no degree-3 parity is reached
    lin, rank_lin = K.parity_reach(lambda a, b: a @ b.T, X, k)
    assert rank_lin == d and float(lin.max()) < 1e-20
    # a kernel whose one feature is χ_{0,1,2} reaches that parity fully and no other
    chi = lambda a: (a[:, :3] * math.sqrt(d)).prod(1)  # noqa: E731
    one, rank_one = K.parity_reach(lambda a, b: chi(a)[:, None] * chi(b)[None, :], X, k)
    assert rank_one == 1 and abs(float(one[0]) - 1) < 1e-12 and float(one[1:].max()) < 1e-20
    with pytest.raises(ValueError, match="at most 16"):
        K.parity_reach(lambda a, b: a @ b.T, torch.ones(3, 17), 2)
