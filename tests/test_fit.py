"""A learner record's fit: ``learner.fit(samples, search, ...)`` returns a result whose ``predict(x)`` is
the selected model. Its errors are recomputed here from ``predict`` by a few lines of our own and compared with
the numbers the search reported (computed by the training engine, the batched ridge path, the d = 6 problem)."""

import itertools

import pytest
import torch

from resnetlearn.kernels.experiments import KernelSearch, kernel_errors
from resnetlearn.reproduce.fit import Samples
from resnetlearn.reproduce.learner import HandBuilt, Kernel, Network
from resnetlearn.reproduce.point import Schedule, Search
from resnetlearn.targets.concept import parity6_target, parity_instance

F64 = torch.float64


def _error(pred, sample) -> float:
    """E‖pred − y‖² over the sample, summed over the k outputs: our own few lines."""
    y = sample.y.to(pred.dtype)
    return float(((pred - y) ** 2).sum(dim=1).mean())


@pytest.fixture(scope="module")
def target():
    return parity_instance(alpha=0.3, beta=1.0)


@pytest.mark.parametrize("mode", ["all", "last", "ntk"])
def test_a_network_predicts_its_selected_run(target, mode):
    """§8.1's search on a 2 × 2 grid: the selected run is the lowest test error, and its predictions on the test
    inputs give that test error bit for bit (the engine computed it on the device, predict on the CPU)."""
    samples = Samples(target, 60, 40, data_seed=3)
    fit = Network("2layer", mode, m=8).fit(samples, Search((0.05, 0.2), (0.0, 1e-3), "test", (1,)),
                                           schedule=Schedule(3), device="cpu")
    grid = [r for r in fit.grid.rows if r["role"] == "grid"]
    assert len(grid) == 4 and fit.best["test_error"] == min(r["test_error"] for r in grid)
    test = samples.split(dtype=torch.float32, device="cpu").test
    pred = fit.predict(test.x)
    assert pred.shape == (40, target.k)
    assert _error(pred, test) == fit.best["test_error"] == fit.stored()["test_error"]
    assert fit.stored()["seed_errors"][1] == fit.reruns[0]["test_error"]
    if mode != "all":  # (last)/(ntk): the exact kernel solution stands beside the SGD-trained one
        assert set(fit.stored()) >= {"exact_test_error", "exact_ridge_rel"}


def test_a_network_selected_on_fresh_validation_samples(target):
    """select="val": the run with the lowest validation error is selected (not the lowest test error), and predict
    reproduces both its validation and its test error."""
    samples = Samples(target, 60, 40, validation="fresh", val_size=30)
    search = Search((0.02, 0.1, 0.5), (0.0,), "val", (), validation="fresh", n_val=30)
    fit = Network("3resnet", "all", m=8).fit(samples, search, schedule=Schedule(3), device="cpu")
    assert fit.best["val_error"] == min(r["val_error"] for r in fit.grid.rows)
    assert [r["selected"] for r in fit.grid.rows].count(True) == 1 and fit.best["selected"]
    split = samples.split(dtype=torch.float32, device="cpu")
    assert split.val.x.shape[0] == 30 and fit.best["n_val"] == 30
    assert _error(fit.predict(split.val.x), split.val) == fit.best["val_error"]
    assert _error(fit.predict(split.test.x), split.test) == fit.best["test_error"]


@pytest.mark.parametrize("spec,select", [("gaussian", "test"), ("ntk_inf:2layer", "test"), ("ntk:2layer", "val")])
def test_a_kernel_predicts_its_selected_ridge_solution(target, spec, select):
    """The selected kernel ridge solution's predictions give the test error the search reported (by test error:
    from the batched ridge path over every ridge), and agree with a direct solve of (K + λI)a = y − ȳ."""
    rule = dict(validation="fresh") if select == "val" else {}
    samples = Samples(target, 80, 50, data_seed=1, **rule)
    fit = Kernel.of_spec(spec, m=16).fit(samples, Search((), (), select, ()))
    split = samples.split(dtype=F64)
    pred = fit.predict(split.test.x)
    assert pred.dtype == F64 and pred.shape == (50, target.k)
    assert _error(pred, split.test) == pytest.approx(fit.row["test_error"], rel=1e-12)
    p = fit.predictor
    ybar = p.train.y.mean(0)
    a = torch.linalg.solve(p.K + p.lam * torch.eye(p.K.shape[0], dtype=F64), p.train.y - ybar)
    assert torch.allclose(pred, ybar + p.fn(split.test.x, p.train.x) @ a, rtol=1e-7, atol=1e-9)


def test_kernel_errors_on_the_split_it_would_draw_gives_the_same_numbers(target):
    """A figure point's kernel draws its own float64 split (kernel_errors); handing it the same split gives the
    same rows bit for bit (on the CPU), for test and for fresh-validation selection."""
    for select, rule in (("test", {}), ("val", dict(validation="fresh"))):
        samples = Samples(target, 80, 50, data_seed=2, **rule)
        kw = dict(kernels=["gaussian", "ntk:3resnet"], search=KernelSearch(select, **samples.rule()), n_test=50,
                  data_seed=2, m=16, progress=False)
        drawn = kernel_errors(target, 80, **kw)
        given = kernel_errors(target, 80, split=samples.split(dtype=F64), **kw)
        strip = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]  # noqa: E731
        assert strip(drawn) == strip(given)


def test_the_hand_built_solution_predicts_the_network_it_describes():
    """§8.2 footnote 16: on all 2^d inputs of the d-dimensional problem the padded, widened network's error is the
    d = 6 network's exact test error (each of its 64 values repeated 2^(d−6) times: equal up to rounding); at
    d = 6 and m = 200 it is the trained network itself, bit for bit."""
    d = 8
    fit = HandBuilt(0.0, m=400).fit(Samples(parity6_target(d), 100, 50), None, schedule=Schedule(5))
    x = torch.tensor(list(itertools.product((1.0, -1.0), repeat=d)), dtype=F64) / d**0.5
    cube = type("Cube", (), {"x": x, "y": parity6_target(d)(x)})
    stored = fit.stored()
    assert fit.predict(x).shape == (2**d, 1) and fit.W.shape == (400, d)
    assert _error(fit.predict(x), cube) == pytest.approx(stored["test_error"], rel=1e-12)
    assert stored["frobenius_W"] == pytest.approx(float(fit.trained.params["W"][0].norm()) * (d / 6) ** 0.5,
                                                  rel=1e-12)
    six = HandBuilt(0.0, m=200).fit(Samples(parity6_target(6), 100, 50), None, schedule=Schedule(5))
    x6 = x[::4, 2:] * (d / 6) ** 0.5  # the 64 inputs of d = 6
    assert torch.equal(six.predict(x6), six.trained.predict(x6)[0])


def test_bad_input_is_refused_with_its_name(target):
    samples, schedule = Samples(target, 40, 20), Schedule(1, batch_size=20)
    net = Network("2layer", "all", m=4)
    with pytest.raises(ValueError, match="lrs"):
        net.fit(samples, Search((), (0.0,), "test", ()), schedule=schedule, device="cpu")
    with pytest.raises(TypeError, match="search must be"):
        net.fit(samples, {"lrs": [0.1]}, schedule=schedule)
    with pytest.raises(TypeError, match="samples must be"):
        Kernel("gaussian", m=4).fit(samples.split(dtype=F64), Search((), (), "test", ()))
    with pytest.raises(ValueError, match="samples.validation"):
        Kernel("gaussian", m=4).fit(samples, Search((), (), "val", ()))
    with pytest.raises(ValueError, match="needs m"):
        Kernel("gaussian").fit(samples, Search((), (), "test", ()))
    with pytest.raises(ValueError, match="validation"):
        Samples(target, 40, 20, validation="carve")
    with pytest.raises(ValueError, match="val_size"):
        Samples(target, 40, 20, validation="holdout", val_size=5)
    with pytest.raises(ValueError, match="float64"):  # a kernel computes in float64: a float32 split is refused
        kernel_errors(target, 40, kernels=["gaussian"], n_test=20, split=samples.split(dtype=torch.float32),
                      progress=False)
    fit = net.fit(samples, Search((0.1,), (0.0,), "test", ()), schedule=schedule, device="cpu")
    with pytest.raises(ValueError, match="row must be one of"):
        fit.grid.predict(dict(fit.best), samples.split(dtype=torch.float32).test.x)


def test_what_a_fit_refuses_before_or_after_the_work(target, monkeypatch):
    """The review's cases: a hand-built width that duplication cannot reach (m = 300 built 200 rows, m = 100 none,
    both storing the d = 6 error as if exact), a search mixing grid_seeds with reruns, a search of the wrong type or
    selection rule for a kernel, and the results of an interrupted fit, which would look finished."""
    six = Samples(parity6_target(8), 100, 50)
    for m in (100, 300):
        with pytest.raises(ValueError, match=f"m = {m}|m must be an integer in \\[200"):
            HandBuilt(0.0, m=m).fit(six, None, schedule=Schedule(2))
    schedule, net = Schedule(1, batch_size=20), Network("2layer", "all", m=4)
    with pytest.raises(ValueError, match="grid_seeds and search.rerun_seeds"):
        net.fit(Samples(target, 40, 20), Search((0.1,), (0.0,), "test", (5,), grid_seeds=(0, 1)), schedule=schedule)
    with pytest.raises(TypeError, match="search must be"):
        Kernel("gaussian", m=4).fit(Samples(target, 40, 20), None)
    with pytest.raises(ValueError, match="search.select"):
        Kernel("gaussian", m=4).fit(Samples(target, 40, 20), Search((), (), "Test", ()))
    kfit = Kernel("gaussian", m=4).fit(Samples(target, 40, 20), Search((), (), "test", ()))
    assert kfit.device == "cpu" and kfit.predict(target.sample(3, seed=9).x).device.type == "cpu"
    fit = net.fit(Samples(target, 40, 20), Search((0.1,), (0.0,), "test", ()), schedule=schedule, device="cpu")
    fit.interrupted = True  # as the engine marks a Ctrl-C
    with pytest.raises(RuntimeError, match="interrupted"):
        fit.stored()
    hb = HandBuilt(0.0, m=200).fit(Samples(parity6_target(6), 100, 50), None, schedule=Schedule(2))
    hb.interrupted = True
    with pytest.raises(RuntimeError, match="interrupted"):
        hb.predict(torch.ones(2, 6))


@pytest.mark.parametrize("mode", ["all", "last", "ntk"])
def test_one_model_is_evaluated_alone_with_the_same_bits(target, mode):
    """predict(x, model=g) evaluates model g alone (what a fit's predict needs: not all G models of its chunk), with
    the bits of the batched evaluation; a bad index is refused."""
    from resnetlearn.learners.training import Protocol, train_models

    s = target.sample(40, seed=0)
    res = train_models(s, target.sample(20, seed=1), Network("2layer", mode, m=6), lrs=[0.05, 0.1, 0.2],
                       wds=[0.0] * 3, seeds=[0, 1, 2], protocol=Protocol(epochs=2, batch_size=20), progress=False)
    x = target.sample(15, seed=2).x
    every = res.predict(x)
    for g in range(3):
        assert torch.equal(res.predict(x, model=g), every[g:g + 1])
    with pytest.raises(ValueError, match="model must be an index"):
        res.predict(x, model=3)
