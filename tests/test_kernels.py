"""Kernel methods (ResNet paper §3.1–3.2, §7): Gram matrices, closed forms, KRR."""

import math

import pytest
import torch
from torch.func import jacrev

import resnetlearn as rl
from resnetlearn import kernels as K
from resnetlearn import networks
from resnetlearn.training import Protocol, train_models

F64 = torch.float64


@pytest.fixture(scope="module")
def cube():
    return rl.parity_instance().sample(60, seed=0, dtype=F64).x


@pytest.mark.parametrize("spec", K.DEFAULT_KERNELS)
def test_gram_symmetric_psd(cube, spec):
    fn = (lambda A, B: K.gaussian(A, B, h=3.0)) if spec == "gaussian" else K._gram_fn(spec, 30, 15, 64, 0)
    G = fn(cube, cube)
    assert torch.allclose(G, G.T, atol=1e-10 * float(G.abs().max()))
    assert float(torch.linalg.eigvalsh(G).min()) > -1e-9 * float(G.diagonal().mean())


def test_arcsine_closed_forms():
    e1, e2 = torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0]])
    diag = torch.tensor([[1.0, 1.0]]) / math.sqrt(2)
    assert float(K.arcsine(e1, e2)) == pytest.approx(0.0)
    assert float(K.arcsine(e1, e1)) == pytest.approx(math.pi / 2)
    assert float(K.arcsine(diag, e1)) == pytest.approx(math.pi / 4)
    assert float(K.arcsine(e1, -e1)) == pytest.approx(-math.pi / 2)
    assert float(K.arcsine(e1, e2, bias=True)) == pytest.approx(math.pi / 6)  # arcsin(1/2)
    assert float(K.arcsine(e1, -e1, bias=True)) == pytest.approx(0.0)


def test_infinite_two_layer_ntk_by_hand():
    # d = 2, x = e1, x' = e2: Σ1 = x·x'/d + 1 = 1, q = ‖x‖²/d + 1 = 3/2, cos θ = 2/3
    x, y = torch.tensor([[1.0, 0.0]], dtype=F64), torch.tensor([[0.0, 1.0]], dtype=F64)
    q, th = 1.5, math.acos(2 / 3)
    k1 = q / (2 * math.pi) * (math.sin(th) + (math.pi - th) * 2 / 3)
    k0 = (math.pi - th) / (2 * math.pi)
    nngp, ntk = K.infinite_width(x, y, "2layer")
    assert float(nngp) == pytest.approx(k1, rel=1e-12)
    assert float(ntk) == pytest.approx(k1 + k0 * 1.0, rel=1e-12)
    # on the diagonal θ = 0: NNGP = q/2, NTK = q/2 + q/2 = q
    nngp, ntk = K.infinite_width(x, x, "2layer")
    assert float(nngp) == pytest.approx(0.75) and float(ntk) == pytest.approx(1.5)


@pytest.mark.parametrize("arch", K.NETWORK_ARCHS)
@pytest.mark.parametrize("par", ["standard", "ntk"])
def test_empirical_ntk_matches_jacobian_contraction(arch, par):
    torch.manual_seed(0)
    X1, X2 = torch.randn(6, 5, dtype=F64), torch.randn(4, 5, dtype=F64)
    p = networks.init_params(arch, 5, 3, 7, [1], dtype=F64)
    q = K._single(p)
    mult = K._mults(arch, q, par)

    def f(q, x):
        return networks.forward(arch, {n: mult[n] * v[None] for n, v in q.items()}, x)[0]

    J1, J2 = jacrev(f)(q, X1), jacrev(f)(q, X2)
    ref = sum(torch.einsum("acp,bcp->cab", J1[n].reshape(6, 3, -1), J2[n].reshape(4, 3, -1)) for n in q)
    got = K.ntk(X1, X2, arch, params=p, parameterization=par, per_output=True)
    assert torch.allclose(got, ref, atol=1e-12)
    assert torch.allclose(K.ntk(X1, X2, arch, params=p, parameterization=par), ref.mean(0), atol=1e-12)


@pytest.mark.parametrize("arch", K.INF_ARCHS)
def test_empirical_ntk_converges_to_infinite_width(arch):
    x = rl.parity_instance().sample(100, seed=0, dtype=F64).x
    _, inf = K.infinite_width(x, arch=arch)
    err = {}
    for m in (256, 4096):
        e = []
        for seed in range(3):
            gen = torch.Generator().manual_seed(seed)
            shapes = networks.param_shapes(arch, 30, 1, m)
            p = {n: torch.randn(s, generator=gen, dtype=F64) for n, s in shapes.items()}  # N(0, 1): NTK param
            emp = K.ntk(x, arch=arch, params=p, parameterization="ntk")
            e.append(float((emp - inf).norm() / inf.norm()))
        err[m] = sum(e) / 3
    assert err[4096] < 0.05 and err[4096] < err[256] / 2


def test_krr_limits_and_ridge_path(cube):
    Y = rl.parity_instance().sample(60, seed=0, dtype=F64).y
    G = K.gaussian(cube, cube, h=4.0)
    fit = K.KernelRidge(1e-10).fit(G, Y)
    assert torch.allclose(fit.predict(G), Y, atol=1e-5)  # interpolation as λ → 0
    far = K.KernelRidge(1e12).fit(G, Y).predict(G)
    assert torch.allclose(far, Y.mean(0).expand_as(far), atol=1e-8)  # the mean as λ → ∞
    path = K.ridge_path(G, Y, G, [1e-3, 1.0])
    for i, lam in enumerate([1e-3, 1.0]):
        assert torch.allclose(path[i], K.KernelRidge(lam).fit(G, Y).predict(G), atol=1e-8)
    # explicit features (eq 3.3) give the same predictor as their kernel
    Phi = torch.randn(60, 20, dtype=F64)
    dual = K.KernelRidge(0.5).fit(Phi @ Phi.T, Y).predict(Phi @ Phi.T)
    assert torch.allclose(K.feature_ridge(Phi, Y, Phi, 0.5), dual, atol=1e-8)
    assert torch.allclose(K.FeatureRidge(0.5).fit(Phi, Y).predict(Phi), dual, atol=1e-8)


def test_conjugate_kernel_krr_equals_training_last_layer():
    inst = rl.talk_instance()
    tr, te = inst.sample(50, seed=0, dtype=F64), inst.sample(40, seed=1, dtype=F64)
    wd = 0.05
    res = train_models(tr, te, "2layer", "last", 16, [0.5], [wd], [3],
                       Protocol(epochs=3000, batch_size=50, lr_drop_epoch=3000, eval_every=3000),
                       dtype=F64, progress=False)
    p = networks.init_params("2layer", 30, 8, 16, [3], dtype=F64)
    Phi, Phi_te = K.features("2layer", p, tr.x), K.features("2layer", p, te.x)
    # minimiser of ½ mean‖Aφ − y‖² + (wd/2)‖A‖²: ridge λ = N·wd, no intercept
    pred = K.KernelRidge(50 * wd, center=False).fit(Phi @ Phi.T, tr.y).predict(Phi_te @ Phi.T)
    assert float(((pred - te.y) ** 2).sum(-1).mean()) == pytest.approx(float(res.test_error[0]), rel=1e-6)


def test_parity_counts():
    rows = K.parity_counts(30, 8)
    assert rows[2]["up_to_degree"] == 1 + 30 + 435
    assert rows[8]["monomials"] == 5852925  # C(30, 8): the degree-8 composite signal of §8.1


def test_bad_inputs(cube):
    with pytest.raises(ValueError, match="same dimension d"):
        K.gaussian(cube, cube[:, :5])
    with pytest.raises(ValueError, match="bandwidth h"):
        K.gaussian(cube, h=-1.0)
    with pytest.raises(ValueError, match="ridge must be"):
        K.KernelRidge(-1.0).fit(K.gaussian(cube), cube[:, :2])
    with pytest.raises(ValueError, match="unknown kernel"):
        K.kernel("laplace", cube)
    with pytest.raises(ValueError, match="GiB"):
        K.check_memory(10**6, 10**6)
    with pytest.raises(ValueError, match="network expects d"):
        K.ntk(cube[:, :5], arch="2layer", params=networks.init_params("2layer", 30, 1, 8, [0], dtype=F64))
    with pytest.raises(ValueError, match="Y must have"):
        K.KernelRidge(0.1).fit(K.gaussian(cube), cube[:5])
    with pytest.raises(ValueError, match="infinite-width"):
        K.infinite_width(cube, arch="3resnet")
    with pytest.raises(ValueError, match="not positive definite"):
        K.krr_fit(-torch.eye(3, dtype=F64), torch.ones(3, 1, dtype=F64), 0.0)
