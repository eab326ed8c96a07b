"""Inputs lose nothing: inputs that do not fit the concept, disagreeing solvers, hangs, misleading
errors and memory. Each test feeds one such input, then checks the clear error (naming
the parameter and the allowed values) or the right answer."""

import inspect
import math
import os
import time
import warnings

import pytest
import torch

import resnetlearn as rl
from resnetlearn import kernels, memory
from resnetlearn.classroom import check, live
from resnetlearn.classroom.race import RaceConfig
from resnetlearn.kernels import registry as kernel_registry
from resnetlearn.kernels import ridge
from resnetlearn.learners import networks, training
from resnetlearn.learners.training import Learner, RunOptions
from resnetlearn.targets import complexity, concept
from resnetlearn.targets.activations import activation

F64 = torch.float64


# ----------------------------------------------------------------- 1. inputs of the wrong dimension
TARGETS = [
    ("parity", lambda: concept.parity_instance(d=30)),
    ("talk", lambda: concept.talk_instance()),
    ("hard", lambda: concept.hard_instance(30, 4)),
    ("random", lambda: concept.random_concept(12, 3)),
    ("companion", concept.companion_figure1),
    ("parity6", lambda: concept.parity6_target(40)),
]


@pytest.mark.parametrize("name,make", TARGETS, ids=[t[0] for t in TARGETS])
def test_targets_refuse_inputs_of_another_dimension(name, make):
    target = make()
    s = target.sample(8, seed=0, dtype=F64)
    assert torch.equal(target(s.x), s.y)  # inputs of dimension d: unchanged answer
    d = target.d
    for cols in (d + 10, d - 2):  # parity(d=30) on 40 columns used to answer from the first 30
        with pytest.raises(ValueError, match=fr"d = {d}; got {cols} columns"):
            target(torch.ones(8, cols, dtype=F64))
        with pytest.raises(ValueError, match=fr"d = {d}; got {cols} columns"):
            target.components(torch.ones(8, cols, dtype=F64))
    with pytest.raises(ValueError, match="got 1 dimensions"):
        target(torch.ones(d, dtype=F64))


def test_networks_refuse_inputs_of_another_dimension():
    p = networks.init_params("3resnet", 30, 15, 8, [0, 1])
    x = torch.randn(5, 30)
    assert networks.forward("3resnet", p, x).shape == (2, 5, 15)
    for arch in networks.ARCHITECTURES:
        q = networks.init_params(arch, 30, 15, 8, [0, 1])
        with pytest.raises(ValueError, match=r"x has dimension 20 .* inputs of dimension d = 30"):
            networks.forward(arch, q, torch.randn(5, 20))  # was a raw bmm error
        with pytest.raises(ValueError, match=r"x has dimension 40 .* d = 30"):
            networks.readout_features(arch, q, torch.randn(5, 40))
    with pytest.raises(ValueError, match="3 models on its first axis but there are G = 2"):
        networks.forward("3resnet", p, torch.randn(3, 5, 30))
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        networks.forward("3resnet", p, [[0.0] * 30])


def test_kernels_refuse_inputs_of_another_dimension():
    X = torch.randn(6, 30, dtype=F64)
    p = networks.init_params("2layer", 30, 1, 8, [0], dtype=F64)
    for name in ("gaussian", "arcsine", "ntk_inf", "nngp_inf"):
        with pytest.raises(ValueError, match="X1 and X2 disagree in dimension d: 30 vs 20"):
            kernel_registry.kernel(name, X, X[:, :20])
    with pytest.raises(ValueError, match="inputs have d = 20 but the network .params. expects d = 30"):
        kernels.conjugate(X[:, :20], arch="2layer", params=p)
    with pytest.raises(ValueError, match="inputs have d = 40 but the network .params. expects d = 30"):
        kernels.ntk(torch.randn(6, 40, dtype=F64), arch="2layer", params=p)
    # krr_predict: a shape mismatch used to surface torch's matmul message
    with pytest.raises(ValueError, match=r"K_test has N = 5 columns .* coef has shape \(4, 1\)"):
        ridge.krr_predict(torch.ones(3, 5, dtype=F64), torch.ones(4, 1, dtype=F64))
    coef = torch.tensor([1.0, -2.0], dtype=F64)
    assert ridge.krr_predict(torch.tensor([[1.0, 1.0], [3.0, 1.0]], dtype=F64), coef).tolist() == [-1.0, 1.0]


# ----------------------------------------------------------------- 2. two solvers, one rule
def _near_duplicates(seed, name):
    """Nearly equal inputs: N = 50 parity samples, the second moved to 1e-9 from the first (its label kept)."""
    t = rl.parity_instance()
    s = t.sample(50, seed=seed, dtype=F64)
    X = s.x.clone()
    X[1] = X[0]
    X[1, 0] += 1e-9
    te = t.sample(20, seed=100 + seed, dtype=F64)
    kw = {"h": 5.0} if name == "gaussian" else {}
    return kernel_registry.kernel(name, X, **kw), s.y, kernel_registry.kernel(name, te.x, X, **kw)


@pytest.mark.parametrize("name", ["gaussian", "ntk_inf"])
def test_ridge_zero_on_near_duplicates_both_solvers_agree_and_warn(name):
    # before: ridge_path predicted 5e3-1e6 (or raised) where the Cholesky solve gave O(1) on 7 of 10 seeds
    for seed in range(10):
        G, Y, Gt = _near_duplicates(seed, name)
        with pytest.warns(ridge.IllConditionedWarning, match=r"condition number .* jitter 1e-10"):
            path = ridge.ridge_path(G, Y, [Gt], [0.0])[0][0]
        with pytest.warns(ridge.IllConditionedWarning, match="jitter"):
            fit = Y.mean(0) + ridge.krr_predict(Gt, ridge.krr_fit(G, Y - Y.mean(0), 0.0))
        assert float(path.abs().max()) < 5  # labels are ±1.3 at most: O(1) predictions
        assert torch.allclose(path, fit, rtol=1e-5, atol=1e-6)


def test_well_conditioned_ridge_unchanged_and_silent():
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(40, 5, dtype=F64, generator=gen)
    Y = torch.randn(40, 2, dtype=F64, generator=gen)
    G = kernels.gaussian(X, h=1.0)
    assert torch.linalg.cond(G) < 1e6
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no conditioning warning on a well-conditioned system
        for lam in (0.0, 1e-3, 1.0):
            a = ridge.krr_fit(G, Y, lam)
            assert torch.allclose(a, torch.linalg.solve(G + lam * torch.eye(40, dtype=F64), Y), atol=1e-9)
        path = ridge.ridge_path(G, Y, [G], [1e-3, 1.0], center=False)[0]
        for i, lam in enumerate((1e-3, 1.0)):
            assert torch.allclose(path[i], G @ ridge.krr_fit(G, Y, lam), atol=1e-9)
    # the rule itself, on given eigenvalues: unchanged ridges, a jitter only for a negligible ridge on a
    # numerically singular matrix
    eigs = torch.tensor([0.0, 1e-12, 1.0, 50.0], dtype=F64)
    with pytest.warns(ridge.IllConditionedWarning):
        assert ridge.effective_ridges(eigs, [0.0, 1e-3]) == [50 * ridge.JITTER, 1e-3]
    assert ridge.effective_ridges(torch.tensor([1.0, 2.0], dtype=F64), [0.0]) == [0.0]


def test_ridge_zero_on_a_rank_deficient_kernel_is_regularised_not_refused():
    gen = torch.Generator().manual_seed(0)
    Phi = torch.randn(30, 4, dtype=F64, generator=gen)  # rank 4 < N = 30: ridge 0 raised "singular kernel matrix"
    Y = torch.randn(30, 1, dtype=F64, generator=gen)
    with pytest.warns(ridge.IllConditionedWarning):
        dual = ridge.ridge_path(Phi @ Phi.T, Y, [Phi @ Phi.T], [0.0], center=False)[0][0]
    least_squares = Phi @ torch.linalg.lstsq(Phi, Y).solution  # the ridgeless limit, by another route
    assert torch.allclose(dual, least_squares, atol=1e-6)
    with pytest.raises(ValueError, match="not positive definite.*valid kernel matrix"):
        ridge.krr_fit(-torch.eye(3, dtype=F64), torch.ones(3, 1, dtype=F64), 0.0)


# ----------------------------------------------------------------- 3. complexities: constants, zero, budget
@pytest.mark.parametrize("spec", ["0*z", "z-z", "poly0"])
def test_zero_function_has_complexity_zero(spec):
    act = activation("poly", coeffs=[0]) if spec == "poly0" else spec
    # before: TypeError "can't multiply sequence by non-int of type 'NegativeInfinity'"
    assert complexity.complexity_s(act).value == 0
    assert complexity.complexity_eps(act, 0.01).value == 0


def test_identically_constant_expression_is_measured_as_the_constant():
    t0 = time.perf_counter()
    # cos²+sin² = 1: before, 58 s and "a million terms were not enough"
    cs = complexity.complexity_s("cos(z)**2 + sin(z)**2")
    ce = complexity.complexity_eps("cos(z)**2 + sin(z)**2", 0.01)
    assert time.perf_counter() - t0 < 20
    assert cs.value == complexity.C_STAR  # ℭ_s(1) = C*·(0 + 1)·|c_0| = C*
    assert ce.value == 2  # ℭ_ε(1): both terms of the i = 0 weight are 1
    assert complexity.complexity_s("2 + 0*sin(z)").value == 2 * complexity.C_STAR


def test_complexity_stops_at_its_time_budget():
    t0 = time.perf_counter()
    with pytest.raises(complexity.SeriesBudgetError, match=r"no answer within time_budget = 1 s.*raise time_budget"):
        complexity.complexity_s("exp(exp(exp(z)))", time_budget=1)  # before: no answer in 120 s
    assert time.perf_counter() - t0 < 10
    with pytest.raises(ValueError, match="time_budget must lie in"):
        complexity.complexity_s("sin", time_budget=0)
    # no budget: the whole answer, C*·(cosh 1 + sinh 1) = C*·e
    assert complexity.complexity_s("sin", time_budget=None).value == pytest.approx(1e4 * math.e, rel=1e-12)


# ----------------------------------------------------------------- 4. misleading errors
_CHECKS = [(name, p) for name, fn in inspect.getmembers(check, inspect.isfunction)
           if not name.startswith("_") and fn.__module__ == check.__name__
           for p in inspect.signature(fn).parameters if p != "answer"]


@pytest.mark.parametrize("name,param", _CHECKS, ids=[f"{n}-{p}" for n, p in _CHECKS])
@pytest.mark.parametrize("bad", ["3", -1, None, 2.5])
def test_self_checks_name_the_bad_parameter(name, param, bad):
    fn = getattr(check, name)
    if bad == 2.5 and param in ("alpha", "beta", "C_s_G"):
        pytest.skip("2.5 is a valid real here (alpha's range is tested below)")
    with pytest.raises((TypeError, ValueError), match=fr"^{param} must"):
        fn(None, **{param: bad})


def test_self_checks_alpha_range_and_large_inputs():
    with pytest.raises(ValueError, match=r"alpha must lie in \[0, 1\)"):
        check.k_alpha_squared(None, alpha=2.5)
    with pytest.raises(ValueError, match=r"d must be an integer in \[1, 1000\]"):
        check.parities_up_to_degree(None, d=10**6)  # was an OverflowError
    assert check.parities_up_to_degree(10**9, d=1000, degree=1000) is False  # d^degree overflows a float


def test_training_refuses_an_integer_dtype():
    s = concept.data_split(rl.parity_instance(), 60, n_test=20)
    with pytest.raises(ValueError, match="dtype must be a floating torch dtype.*torch.int64"):
        training.train_models(s.train, s.test, Learner("2layer", "all", m=8), lrs=[0.1], wds=[0.0], seeds=[0],
                              progress=False, options=RunOptions(dtype=torch.int64))


# ----------------------------------------------------------------- 5. memory before allocation
def test_training_bytes_hand_count():
    # 2layer, d = 2, k = 1, m = 3: W 3×2, b1 3, A 1×3 → P = 12; n_eval = 4; float32
    want = 4 * (memory.PARAM_COPIES * 12 + memory.ACTIVATION_COPIES * 4 * 3 + 4 * (2 + 1))
    assert training.training_bytes("2layer", 2, 1, 3, n_eval=4) == want
    assert training.training_bytes("2layer", 2, 1, 3, n_eval=4, dtype=F64) == 2 * want
    assert training.training_bytes("2layer", 2, 1, 3, n_eval=4, n_models=5) == 5 * want
    # 3layer: V is m×m, so the need grows like m²
    assert training.training_bytes("3layer", 30, 15, 100_000, n_eval=1000) > 2e11
    assert memory.gram_bytes(1000, 500) == 3 * 8 * 1000 * 500


@pytest.fixture
def eight_gib(monkeypatch):
    monkeypatch.setattr(memory, "available_bytes", lambda device=None: (8 * 2**30, "available RAM"))
    return 0.8 * 8 * 2**30


def test_race_config_refuses_a_width_that_does_not_fit(eight_gib):
    for m in (100_000, 30_000):  # before: accepted (~80 GB / ~15 GB allocated later)
        with pytest.raises(memory.InsufficientMemoryError,
                           match=fr"race .* with m = {m} needs about .* GiB but the limit is 6.4 GiB .* m = \d+ fits"):
            RaceConfig(m=m)
    live.LiveConfig(m=100_000)  # the §6 ResNet grows linearly in m: 2.4 GiB of activations on 1000 test points
    with pytest.raises(MemoryError, match=r"live run with m = 100000 .* m = \d+ fits"):
        live.LiveConfig(m=100_000, n_test=100_000)
    RaceConfig(m=200)  # the default fits
    # the suggested width is the largest that fits
    with pytest.raises(memory.InsufficientMemoryError) as info:
        RaceConfig(m=30_000)
    fits = int(str(info.value).split("; m = ")[1].split()[0])
    RaceConfig(m=fits)
    with pytest.raises(memory.InsufficientMemoryError):
        RaceConfig(m=fits + 1)


def test_training_and_kernels_check_before_allocating(eight_gib, monkeypatch):
    def no_alloc(*a, **k):
        raise AssertionError("allocated before the memory check")

    s = concept.data_split(rl.parity_instance(), 60, n_test=20)
    monkeypatch.setattr(networks, "init_params", no_alloc)
    with pytest.raises(memory.InsufficientMemoryError, match=r"training 1 3layer\(all\) .* m = 60000 needs"):
        training.train_models(s.train, s.test, Learner("3layer", "all", m=60_000), lrs=[0.1], wds=[0.0], seeds=[0],
                              progress=False)
    # fixed output signs take even widths only: the hint's search over the widths below must not stop at an odd
    # one (it raised "2layer_signs needs an even width m", hiding the refusal; fig4b at paper scale on one GPU)
    with pytest.raises(memory.InsufficientMemoryError,
                       match=r"training 1 2layer_signs\(hidden\) .* m = 50000000 needs .* m = \d+ fits"):
        training.train_models(s.train, s.test, Learner("2layer_signs", "hidden", m=50_000_000), lrs=[0.1],
                              wds=[0.0], seeds=[0], progress=False)
    X = torch.randn(10, 30, dtype=F64)
    with pytest.raises(memory.InsufficientMemoryError, match=r"3layer network kernel .* m = 60000 .* m = \d+ fits"):
        kernels.ntk(X, arch="3layer", m=60_000)
    with pytest.raises(memory.InsufficientMemoryError, match=r"m = 60000 .* m = \d+ fits"):  # before width 8 runs
        kernels.ntk_spread("3layer", [8, 60_000], [0, 1], X)
    with pytest.raises(memory.InsufficientMemoryError, match=r"60000×60000 kernel .* N \(samples\) = \d+ fits"):
        kernels.check_gram_memory(60_000, 60_000)
    with pytest.raises(ValueError, match="GiB"):  # still a ValueError for callers that caught one
        kernels.check_gram_memory(10**6, 10**6)


def test_available_bytes_reads_the_machine(monkeypatch):
    """Each of the three answers, checked against the machine read here by another route: /proc/meminfo's
    MemAvailable (parsed by hand), the total RAM from sysconf where /proc/meminfo cannot be opened, and
    (None, "unknown") where neither can be read."""
    have, kind = memory.available_bytes()
    with open("/proc/meminfo") as f:
        mem_available = dict(line.split(":", 1) for line in f)["MemAvailable"].split()
    assert mem_available[1] == "kB" and kind == "available RAM"
    assert abs(have - int(mem_available[0]) * 1024) <= 2**30  # free memory moves, by less than 1 GiB in between

    def no_meminfo(*a, **k):
        raise OSError("no /proc")

    monkeypatch.setattr(memory, "open", no_meminfo, raising=False)
    assert memory.available_bytes() == (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "total RAM")

    def no_sysconf(name):
        raise ValueError(name)

    monkeypatch.setattr(memory.os, "sysconf", no_sysconf)
    assert memory.available_bytes() == (None, "unknown")
    monkeypatch.undo()
    if torch.cuda.is_available():
        free, kind = memory.available_bytes("cuda")
        assert 0 < free <= torch.cuda.mem_get_info()[1] and "cuda" in kind


def test_time_budget_is_not_swallowed_by_broad_excepts():
    """The budget's alarm fires inside code that catches Exception (sympy's fallbacks, our ring-series
    attempt): it must still stop the computation, and leave no handler or deadline behind."""
    import signal
    import time

    from resnetlearn.targets import taylor

    before = signal.getsignal(signal.SIGALRM)
    t0 = time.monotonic()
    with pytest.raises(taylor.SeriesBudgetError, match="time_budget = 0.2 s"):
        with taylor.budget(0.2, "a slow series"):
            try:
                time.sleep(5)  # a long sympy call
            except Exception:  # noqa: BLE001 - what the fallbacks do
                pass
            time.sleep(5)  # the slower fallback after it
    assert time.monotonic() - t0 < 1.5
    assert signal.getsignal(signal.SIGALRM) is before and signal.getitimer(signal.ITIMER_REAL)[0] == 0
    taylor.check_deadline()  # no deadline left over
