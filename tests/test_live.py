"""The live widgets, driven programmatically as a user would (set a slider, click Train, click Stop,
move a slider mid-run), and the live-run component they share."""

import math
import threading
import time
from dataclasses import replace

import pytest
import torch

from resnetlearn.classroom import race
from resnetlearn.classroom.live import LiveConfig, LiveRace, LiveTrainer
from resnetlearn.classroom.live_run import LiveRun, PngView
from resnetlearn.classroom.race import RACE_KERNEL, RACE_LEARNERS, RaceConfig, Runner, run_race
from resnetlearn.classroom.static_picture import to_matplotlib
from resnetlearn.classroom.styles import style_for
from resnetlearn.reproduce.learner import Kernel, Network

LONG = LiveConfig(m=20, n_train=200, n_test=200, epochs=3000)  # long enough to be stopped mid-run
TINY_RACE = RaceConfig(m=20, n_train=100, n_test=100, epochs=20, chunk=5, kernel=Kernel("ntk_inf", "2layer"))
LONG_RACE = RaceConfig(m=20, n_train=100, n_test=100, epochs=3000, chunk=5, kernel=None)
PNG = b"\x89PNG fake"


def wait_for(cond, timeout=60.0):
    t0 = time.perf_counter()
    while not cond():
        if time.perf_counter() - t0 > timeout:
            raise AssertionError("timed out waiting for the live widget")
        time.sleep(0.02)


# ----------------------------------------------------------------- the component, with a fake run
def ticking_job(min_interval=0.0, **kw):
    """A LiveRun whose run emits a frame every 10 ms until cancelled (or ``n`` frames)."""

    def run_fn(settings, ctx):
        i = 0
        while not ctx.cancelled() and i < settings.get("n", 10**9):
            i += 1
            ctx.frame({"i": i, "name": settings["name"]}, force=i == settings.get("n"))
            time.sleep(0.01)
        return i

    return LiveRun(run_fn, lambda data, settings: PNG, view=PngView(), min_interval=min_interval,
                   done=lambda result, settings, ctx: f"done: {result} ticks of {settings['name']}", **kw)


def test_component_frames_status_and_done():
    job = ticking_job()
    assert job.view.widget.layout.display == "none"  # nothing, not a broken image, before the first frame
    job.start({"name": "a", "n": 5})
    assert job.wait(10)
    assert job.status_text == "done: 5 ticks of a" and job.last_result == 5
    assert job.frames and job.frames[-1].data["i"] == 5  # the last frame is drawn before "done"
    assert job.first_frame_s is not None and job.view.value == PNG and job.view.widget.layout.display is None


def test_second_start_cancels_the_first():
    job = ticking_job()
    job.start({"name": "a"})
    wait_for(lambda: len(job.frames) >= 3)
    first = job._thread
    gen_b = job.start({"name": "b"})
    assert not first.is_alive()  # the first run ended before the second began
    wait_for(lambda: any(f.settings["name"] == "b" for f in job.frames))
    k = next(i for i, f in enumerate(job.frames) if f.settings["name"] == "b")
    assert all(f.settings["name"] == "b" and f.generation == gen_b for f in job.frames[k:])
    job.stop()


def test_stop_within_a_second_and_nothing_draws_after():
    job = ticking_job()
    job.start({"name": "a"})
    wait_for(lambda: len(job.frames) >= 2)
    t0 = time.perf_counter()
    assert job.stop(timeout=1.0)
    assert time.perf_counter() - t0 < 1.0 and not job.running and job.status_text == "stopped"
    n = len(job.frames)
    time.sleep(0.3)
    assert len(job.frames) == n


def test_drawing_is_throttled_and_never_blocks_the_run():
    slow = LiveRun(lambda s, ctx: [ctx.frame({"i": i}) for i in range(50)] and "ok",
                   lambda data, s: (time.sleep(0.05), PNG)[1], view=PngView(), min_interval=0.2)
    t0 = time.perf_counter()
    slow.start({})
    assert slow.wait(10)
    assert len(slow.frames) <= 3 and time.perf_counter() - t0 < 2.0


def test_errors_are_shown_in_the_status():
    def boom(settings, ctx):
        raise ValueError("boom")

    job = LiveRun(boom, lambda d, s: PNG, view=PngView())
    job.start({})
    job.wait(5)
    assert job.status_text == "error: ValueError: boom" and isinstance(job.last_error, ValueError)

    def one_frame_then_wait(settings, ctx):  # the run goes on, so its end does not replace the status
        ctx.frame({}, force=True)
        while not ctx.cancelled():
            time.sleep(0.01)

    bad_frame = LiveRun(one_frame_then_wait, lambda d, s: 1 / 0, view=PngView())
    bad_frame.start({})
    wait_for(lambda: bad_frame.status_text != "", timeout=10)
    assert bad_frame.status_text == "drawing failed: ZeroDivisionError: division by zero"
    assert isinstance(bad_frame.last_error, ZeroDivisionError) and bad_frame.frames == []
    bad_frame.stop()


def test_a_drawing_failure_stays_in_the_final_status():
    # the run ends after its frames: "done" must not hide that they failed to draw
    job = ticking_job()
    job.frame_fn = lambda data, settings: 1 / 0
    job.start({"name": "a", "n": 3})
    assert job.wait(10)
    assert job.status_text == "done: 3 ticks of a (drawing failed: ZeroDivisionError: division by zero)"
    assert job.frames == [] and isinstance(job.last_error, ZeroDivisionError) and job.last_result == 3
    # a run whose frames draw ends with its own words only
    job.frame_fn = lambda data, settings: PNG
    job.start({"name": "b", "n": 3})
    assert job.wait(10)
    assert job.status_text == "done: 3 ticks of b" and job.frames[-1].data["i"] == 3


# ----------------------------------------------------------------- LiveConfig: declared checks
@pytest.mark.parametrize("kw, error, match", [
    (dict(alpha=1.0), ValueError, r"alpha must lie in \[0, 1\)"),
    (dict(alpha=-0.1), ValueError, r"alpha must lie in \[0, 1\)"),
    (dict(alpha="0.3"), TypeError, "alpha must be a real number"),
    (dict(beta=-1), ValueError, "beta must lie in"),
    (dict(m=0), ValueError, r"m must be an integer in \[1, "),
    (dict(m=2.5), TypeError, "m must be an integer"),
    (dict(lr=0), ValueError, r"lr must lie in \(0, "),
    (dict(wd=-0.1), ValueError, r"wd must lie in \[0, "),
    (dict(n_train=10), ValueError, r"n_train must be an integer in \[50, "),
    (dict(epochs=0), ValueError, "epochs must be an integer"),
    (dict(seed=-1), ValueError, "seed must be an integer"),
    (dict(layerwise=1), TypeError, "layerwise must be True or False"),
])
def test_live_config_rejects_bad_values(kw, error, match):
    with pytest.raises(error, match=match):
        LiveConfig(**kw)


def test_live_config_keyword_only_after_alpha_beta_m():
    with pytest.raises(TypeError):
        LiveConfig(0.3, 1.0, 200, 0.1)
    assert LiveConfig(0.2, 0.5, 50).m == 50


def test_widgets_follow_the_config():
    t = LiveTrainer(LiveConfig(alpha=0.99, beta=2.0, m=32, lr=0.03, wd=0.002), device="cpu")
    assert t.alpha.value == 0.99 and t.alpha.max >= 0.99  # not clamped to 0.95
    assert t.beta.value == 2.0 and 32 in t.m.options  # a width outside the presets is offered
    c = t.current_config()
    assert (c.alpha, c.beta, c.m, c.lr, c.wd) == (0.99, 2.0, 32, 0.03, 0.002)  # lr and wd are used
    assert "config" in t.preset.value
    assert t.image.value[:4] == b"\x89PNG"  # a placeholder picture before the first run
    with pytest.raises(TypeError, match="LiveConfig"):
        LiveTrainer({"alpha": 0.3})


@pytest.mark.parametrize("kw, match", [
    (dict(kernel=Kernel("nope")), "unknown kernel"),
    (dict(kernel="ntk_inf:2layer"), r"kernel must be a Kernel record or None, e\.g\. Kernel\.of_spec"),
    (dict(learners=(Runner(Network("3resnet", m=20)), Runner(Network("3resnet", m=50)))), "must differ"),
    (dict(chunk=0), "chunk must be an integer"),
    (dict(n_train=20), "n_train must be an integer"),
])
def test_race_config_rejects_bad_values(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        RaceConfig(**kw)
    with pytest.raises(TypeError, match=r"learner must be a Learner\(arch, mode, m=\.\.\., init=\.\.\.\), got str"):
        Runner("3resnet")


def test_race_runner_is_a_network_record_at_the_race_width():
    """A runner holds a Network record with its lr and wd; the race holds every runner at its own width, and a
    frame names a runner by plain values that give the same runner back."""
    r = Runner(Network("3layer", "hidden", m=7), lr=0.2, wd=0.0)
    assert r.label == "3layer(hidden)" and r.style == style_for(Network("3layer", "hidden", m=1))
    cfg = RaceConfig(m=30, learners=(r,), kernel=Kernel("ntk_inf", "2layer", m=5))
    assert cfg.learners[0].learner == Network("3layer", "hidden", m=30, init="paper")
    assert cfg.kernel == Kernel("ntk_inf", "2layer", m=30)
    assert cfg.key()["learners"] == [{"arch": "3layer", "mode": "hidden", "lr": 0.2, "wd": 0.0}]
    assert cfg.key()["kernel"] == "ntk_inf:2layer"
    assert Runner.of_state(cfg.learners[0].state_entry(), m=30) == cfg.learners[0]
    assert [x.learner.m for x in RaceConfig().learners] == [200] * 3 and RaceConfig().kernel == RACE_KERNEL
    assert [x.label for x in RACE_LEARNERS] == ["3resnet(all)", "3layer(all)", "2layer(all)"]
    with pytest.raises(ValueError, match="unknown mode"):
        Network("3layer", "lazy", m=1)
    with pytest.raises(ValueError, match=r"lr must lie in \(0, 10\], got 0"):
        Runner(Network("3layer", m=1), lr=0.0)


# ----------------------------------------------------------------- the trainer
def test_set_slider_train_then_stop():
    t = LiveTrainer(LONG, device="cpu")
    t.alpha.value = 0.2  # moving a slider alone does not train; the status says so
    assert not t.running and t.frames == [] and "press Train" in t.job.status_text
    t0 = time.perf_counter()
    t.train_btn.click()
    wait_for(lambda: len(t.frames) >= 2)
    waited = time.perf_counter() - t0
    assert 0 < t.first_plot_s <= waited and t.first_plot_s == t.frames[0].seconds  # seconds from the click
    first_png = t.image.value
    wait_for(lambda: t.image.value != first_png)  # the plot keeps updating during the run
    assert {f.settings.alpha for f in t.frames} == {0.2}  # every frame drew the slider's α
    epochs = [f.data["epoch"] for f in t.frames]
    assert epochs == sorted(epochs) and epochs[-1] < LONG.epochs
    t0 = time.perf_counter()
    t.stop_btn.click()
    assert time.perf_counter() - t0 < 1.0  # Stop takes effect within a second
    assert not t.running and "stopped" in t.job.status_text
    n = len(t.frames)
    time.sleep(0.3)
    assert len(t.frames) == n  # nothing draws after Stop



@pytest.mark.parametrize("make", ["trainer", "race-png", "race-plotly"])
def test_stop_before_the_first_evaluation_says_so(make):
    """Stop pressed before a run's first evaluation: the plot and the status say "stopped before the first
    evaluation" (not empty axes, not the previous run's curves) and the widget's picture stays a picture."""
    from resnetlearn.classroom.live_run import WIDGET_REPRS

    if make == "trainer":
        w = LiveTrainer(replace(LONG, m=200, n_train=500, epochs=3000), device="cpu")  # first evaluation: epoch 100
    else:
        w = LiveRace(replace(LONG_RACE, chunk=1000), device="cpu", view=make.split("-")[1])
    before = w.view.value if w.view.kind == "png" else w.view.widget.layout.title.text
    w.train_btn.click()
    w.stop_btn.click()
    assert not w.running and w.stopped_early
    assert w.job.status_text.startswith("stopped before the first evaluation (epoch ")
    assert "press Train to run again" in w.job.status_text
    assert not any(w._has_data(f.data) for f in w.frames)
    if w.view.kind == "png":
        assert w.view.value != before and w.view.value[:4] == b"\x89PNG"
    else:
        assert w.view.widget.layout.title.text.startswith("stopped before the first evaluation")
    assert not w._repr_mimebundle_()["text/plain"].startswith(WIDGET_REPRS)


def test_stop_after_the_first_evaluation_keeps_the_curves():
    t = LiveTrainer(LONG, device="cpu")
    t.train_btn.click()
    wait_for(lambda: len(t.frames) >= 1)
    t.stop_btn.click()
    assert not t.stopped_early and t.job.status_text.startswith("stopped: ")

def test_slider_mid_run_stages_or_restarts():
    t = LiveTrainer(LONG, device="cpu")
    t.train_btn.click()
    wait_for(lambda: len(t.frames) >= 1)
    t.alpha.value = 0.5  # retrain off: the run goes on with its settings; the status says how to apply
    assert t.running and "press Train to restart" in t.job.status_text and t.job.last_settings.alpha == 0.3
    old_thread, old_gen = t.job._thread, t.frames[-1].generation
    t.retrain.value = True
    t.beta.value = 0.9  # retrain on: this cancels the run, waits for it, and starts a new one
    assert not old_thread.is_alive() and t.running
    wait_for(lambda: any(f.generation != old_gen for f in t.frames))
    new = [f for f in t.frames if f.generation != old_gen]
    k = t.frames.index(new[0])
    assert all(f.generation != old_gen for f in t.frames[k:])  # never two runs in one plot
    assert {(f.settings.alpha, f.settings.beta) for f in new} == {(0.5, 0.9)}
    every = max(5, LONG.epochs // 30)
    assert new[0].data["epochs"][0] == every  # a fresh run: its curve starts at the first logged epoch
    assert new[0].data["epochs"] == list(range(every, new[0].data["epoch"] + 1, every))
    assert "restarted" in t.job.status_text
    t.stop()
    assert not t.running


def test_finished_run_reports_the_test_error_of_the_network_it_trained():
    """The widget's reported error, recomputed another way: the trained parameters evaluated by
    ``networks.forward`` on test samples drawn afresh from the instance (not through the widget or
    ``run``), with the error E‖out − y‖² (sum over the k outputs, mean over samples) written out here."""
    from resnetlearn import parity_instance
    from resnetlearn.learners import networks

    cfg = LiveConfig(alpha=0.25, m=50, lr=0.05, wd=0.005, n_train=200, n_test=200, epochs=60)
    t = LiveTrainer(cfg, device="cpu")
    t.train_btn.click()
    t.wait(120)
    status = t.job.status_text
    assert "done" in status and "α=0.25" in status and "first plot after" in status
    res = t.last_result
    err = float(res.test_error[0])
    test = parity_instance(alpha=0.25, beta=1.0).sample(cfg.n_test, seed=cfg.seed + 1)  # test seed: seed + 1
    with torch.no_grad():
        out = networks.forward("3resnet", res.params, test.x)[0]
    by_hand = float(((out - test.y) ** 2).sum(dim=1).mean())
    assert err == pytest.approx(by_hand, rel=1e-5) and f"test error {err:.3f}" in status
    assert err < 20.0  # finite and better than predicting 0 (E y² ≈ 17)
    assert t.frames and t.frames[-1].data["epoch"] == cfg.epochs


def test_alpha_zero_says_there_is_no_threshold():
    t = LiveTrainer(LiveConfig(alpha=0.0, m=20, lr=0.05, n_train=100, n_test=100, epochs=10), device="cpu")
    t.train_btn.click()
    t.wait(60)
    assert "no kα² to compare with" in t.job.status_text and "above kα² = 0.00" not in t.job.status_text


def test_divergence_is_reported_in_the_status():
    cfg = LiveConfig(alpha=0.25, m=20, n_train=200, n_test=200, epochs=60)  # lr 0.1 diverges here (seed 0)
    t = LiveTrainer(cfg, device="cpu")
    t.train_btn.click()
    t.wait(120)
    assert "diverged at lr=0.1" in t.job.status_text


# ----------------------------------------------------------------- the race
def _ntk_inf_2layer_ridge(split, sw, sb, rel):
    """(test error, rel) of ridge regression (unpenalised label mean, λ = rel × mean diagonal of the training
    Gram) with the infinite-width NTK of A·σ(Wx + b) (NTK parameterisation): Σ = σ_w² x·x'/d + σ_b²,
    Θ = σ_w² κ₁ + σ_w² κ₀ Σ with κ₁ = √(qq')(sin θ + (π − θ) cos θ)/2π, κ₀ = (π − θ)/2π, cos θ = Σ/√(qq')."""
    def ntk(a, b):
        d = a.shape[1]
        S = sw * a @ b.T / d + sb
        q = torch.sqrt((sw * (a ** 2).sum(1) / d + sb)[:, None] * (sw * (b ** 2).sum(1) / d + sb)[None, :])
        cos = (S / q).clamp(-1, 1)
        th = torch.arccos(cos)
        return sw * q * (torch.sin(th) + (math.pi - th) * cos) / (2 * math.pi) + sw * (math.pi - th) / (2 * math.pi) * S

    x, y, xt, yt = split.train.x.double(), split.train.y.double(), split.test.x.double(), split.test.y.double()
    K = ntk(x, x)
    a = torch.linalg.solve(K + rel * K.diagonal().mean() * torch.eye(len(x), dtype=K.dtype), y - y.mean(0))
    return float(((y.mean(0) + ntk(xt, x) @ a - yt) ** 2).sum(1).mean()), rel


def test_race_trains_every_learner_on_the_same_samples(monkeypatch):
    seen, kernel_calls = [], []
    real_train, real_kernel = race.train_models, race.kernel_errors

    def spy_train(train, test, learner, **kw):
        seen.append((learner.arch, train.x.clone(), train.y.clone(), test.x.clone()))
        return real_train(train, test, learner, **kw)

    def spy_kernel(target, n_train, **kw):
        kernel_calls.append((target, n_train, kw))
        return real_kernel(target, n_train, **kw)

    monkeypatch.setattr(race, "train_models", spy_train)
    monkeypatch.setattr(race, "kernel_errors", spy_kernel)
    frames = []
    res = run_race(TINY_RACE, device="cpu", on_frame=lambda state, force: frames.append(state))
    assert sorted(a for a, *_ in seen) == ["2layer", "3layer", "3resnet"]
    for _, x, y, xt in seen[1:]:  # identical training (and test) data for every learner
        assert torch.equal(x, seen[0][1]) and torch.equal(y, seen[0][2]) and torch.equal(xt, seen[0][3])
    (target, n, kw), = kernel_calls  # the kernel: same instance, N, seed, and the race's own samples
    assert n == TINY_RACE.n_train and kw["data_seed"] == TINY_RACE.seed and kw["n_test"] == TINY_RACE.n_test
    assert torch.equal(target.sample(n, seed=kw["data_seed"]).x, res.train.x)
    assert torch.equal(kw["split"].train.x.float(), res.train.x)  # one draw, passed on (float64 for the kernel)
    assert torch.equal(kw["split"].test.y.float(), res.test.y)
    # all learners' curves are in the frames, and they advance together (turns of `chunk` epochs)
    labels = {"3resnet(all)", "3layer(all)", "2layer(all)"}
    assert set(frames[-1]["curves"]) == labels
    # the kernel line: ridge regression with the infinite-width 2layer NTK (arc-cosine formulas written here),
    # its (σ_w², σ_b²) and relative ridge chosen by test error, on the race's split
    best = min(_ntk_inf_2layer_ridge(kw["split"], sw, sb, rel) for sw in (1.0, 2.0) for sb in (0.0, 0.1, 1.0)
               for rel in (1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0))
    assert res.kernel["test_error"] == pytest.approx(best[0], rel=1e-6) and res.kernel["ridge_rel"] == best[1]
    assert all(frames[-1]["curves"][k]["epochs"][-1] == TINY_RACE.epochs for k in labels)
    assert any(all(0 < len(f["curves"][k]["epochs"]) < 4 for k in labels) for f in frames)
    assert set(res.final_errors()) == labels | {res.kernel["label"]}
    assert res.first_data_s is not None and not res.interrupted
    st = res.state()  # the last frame again, for a static copy
    assert repr(st["curves"]) == repr(frames[-1]["curves"]) and st["kernel"] == frames[-1]["kernel"]  # NaN-safe
    assert len(race.race_figure(st).data) == 5 and to_matplotlib(race.race_figure(st)).axes


def test_race_widget_train_stop_and_status():
    r = LiveRace(TINY_RACE, device="cpu", view="plotly")
    assert len(r.view.widget.data) == 5  # 3 learners + kernel + kα², drawn before Train (no broken image)
    r.train_btn.click()
    assert r.wait(120)
    status = r.job.status_text
    assert status.startswith("done") and "3resnet(all)" in status and "2layer(all)" in status
    assert "kα² = 1.35" in status and "first curves after" in status
    traces = {t.name.split("  ")[0]: t for t in r.view.widget.data}
    for label in ("3resnet(all)", "3layer(all)", "2layer(all)"):
        assert len(traces[label].y) == TINY_RACE.epochs // TINY_RACE.chunk  # every learner's curve is drawn
    assert r.view.updates >= 2 and r.figure is not None
    # slider semantics: staging while idle, Train restarts
    r.alpha.value = 0.0
    assert not r.running and "settings staged" in r.job.status_text and "α=0.00" in r.job.status_text


def test_race_stop_within_a_second_and_alpha_zero_png():
    r = LiveRace(LONG_RACE, device="cpu", view="png")
    r.train_btn.click()
    wait_for(lambda: any(len(c["epochs"]) >= 2 for f in r.frames for c in f.data["curves"].values()))
    t0 = time.perf_counter()
    r.stop_btn.click()
    assert time.perf_counter() - t0 < 1.0 and not r.running and "stopped" in r.job.status_text
    assert threading.active_count() < 50
    r0 = LiveRace(RaceConfig(alpha=0.0, m=20, n_train=100, n_test=100, epochs=10, chunk=5, kernel=None),
                  device="cpu", view="png")
    r0.train_btn.click()
    assert r0.wait(60)
    assert "α = 0: no composite signal" in r0.job.status_text and r0.view.value[:4] == b"\x89PNG"


def test_figure_rerun_button_runs_then_reuses_the_store(tmp_path):
    from resnetlearn.classroom.rerun import FigureRerun

    r = FigureRerun("companion", "tiny", out=tmp_path, device="cpu", mine=tmp_path / "mine")
    assert r.image.layout.display == "none"  # no broken-image icon before the first result
    assert r.button.layout.width == "auto"  # the label is not cut off
    r.button.click()
    r.wait(300)
    n = len(r.result.rows)
    assert r.result is not None and r.image.value[:4] == b"\x89PNG" and "companion" in r.job.status_text
    assert f"0 of {n} points reused" in r.job.status_text and not r.button.disabled
    r.button.click()
    r.wait(300)
    assert f"{n} of {n} points reused" in r.job.status_text
    with pytest.raises(ValueError, match="figure must be one of"):
        FigureRerun("fig9")


def test_a_stored_race_frame_in_the_older_format_is_not_drawn(tmp_path, monkeypatch):
    """widget_results.json written before the race's runners were records held each learner as a list
    [label, arch, mode, lr, wd]: its picture is not shown (a warning names the refresh command) instead of a
    TypeError when the widget is displayed; the shipped file is read as it is."""
    import json

    from resnetlearn.classroom import live

    shipped = json.loads(live.PICTURES.read_text(encoding="utf-8"))
    assert live.cached_result("race", RaceConfig()) is not None  # the committed frame matches the default race
    old = dict(shipped, race=dict(shipped["race"], state=dict(shipped["race"]["state"])))
    old["race"]["state"]["learners"] = [[x["arch"], x["arch"], x["mode"], x["lr"], x["wd"]]
                                        for x in shipped["race"]["state"]["learners"]]
    stale = tmp_path / "widget_results.json"
    stale.write_text(json.dumps(old), encoding="utf-8")
    monkeypatch.setattr(live, "PICTURES", stale)
    with pytest.warns(UserWarning, match="--refresh-pictures"):
        assert live.cached_result("race", RaceConfig()) is None
