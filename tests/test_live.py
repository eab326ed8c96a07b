"""The live trainer of notebook 03, driven programmatically as a user would:
set a slider, click Train, click Stop, move a slider mid-run."""

import time

import pytest

from resnetlearn.live import LiveConfig, LiveTrainer, run

LONG = LiveConfig(m=20, n_train=200, n_test=200, epochs=3000)  # long enough to be stopped mid-run


def wait_for(cond, timeout=60.0):
    t0 = time.perf_counter()
    while not cond():
        if time.perf_counter() - t0 > timeout:
            raise AssertionError("timed out waiting for the live trainer")
        time.sleep(0.02)


def test_set_slider_train_then_stop():
    t = LiveTrainer(LONG, device="cpu", auto=False)
    t.alpha.value = 0.2  # auto=False: moving a slider alone does not train
    assert not t.running and t.frames == []
    t.train_btn.click()
    wait_for(lambda: len(t.frames) >= 2)
    assert t.first_plot_s is not None and t.first_plot_s > 0
    first_png = t.image.value
    wait_for(lambda: t.image.value != first_png)  # the plot keeps updating during the run
    assert {f[1] for f in t.frames} == {0.2}  # every frame drew the slider's α
    epochs = [f[3] for f in t.frames]
    assert epochs == sorted(epochs) and epochs[-1] < LONG.epochs
    t0 = time.perf_counter()
    t.stop_btn.click()
    assert time.perf_counter() - t0 < 1.0  # Stop takes effect within a second
    assert not t.running and "stopped" in t.status.value
    n = len(t.frames)
    time.sleep(0.3)
    assert len(t.frames) == n  # nothing draws after Stop


def test_slider_mid_run_cancels_then_restarts():
    t = LiveTrainer(LONG, device="cpu", auto=True)
    t.train_btn.click()
    wait_for(lambda: len(t.frames) >= 1)
    old_thread, old_gen = t._thread, t.frames[-1][0]
    t.alpha.value = 0.5  # auto=True: this cancels the run, waits for it, and starts a new one
    assert not old_thread.is_alive() and t.running
    wait_for(lambda: any(f[0] != old_gen for f in t.frames))
    new = [f for f in t.frames if f[0] != old_gen]
    first_new = t.frames.index(new[0])
    assert all(f[0] != old_gen for f in t.frames[first_new:])  # never two runs in one plot
    assert {f[1] for f in new} == {0.5} and {f[1] for f in t.frames[:first_new]} == {0.3}
    assert new[0][3] < t.frames[first_new - 1][3] or new[0][3] == LONG.epochs // 30  # restarted from epoch 0
    t.stop()
    assert not t.running


def test_finished_run_reports_the_same_numbers_as_the_library():
    cfg = LiveConfig(alpha=0.25, m=50, lr=0.05, wd=0.005, n_train=200, n_test=200, epochs=60)
    t = LiveTrainer(cfg, device="cpu", auto=False)
    t.preset.value = "lr 0.05, wd 0.005"
    t.train_btn.click()
    t.wait(120)
    assert "done" in t.status.value and "α=0.25" in t.status.value and "first plot after" in t.status.value
    _, res = run(cfg, "cpu")  # same seed, same device: identical numbers
    err = float(t.last_result.test_error[0])
    assert err == pytest.approx(float(res.test_error[0]), rel=1e-6) and f"test error {err:.3f}" in t.status.value
    assert err < 20.0  # finite and better than predicting 0 (E y² ≈ 17)
    assert t.frames and t.frames[-1][3] == cfg.epochs


def test_divergence_is_reported_in_the_status():
    cfg = LiveConfig(alpha=0.25, m=20, n_train=200, n_test=200, epochs=60)  # lr 0.1 diverges here (seed 0)
    t = LiveTrainer(cfg, device="cpu", auto=False)
    t.train_btn.click()
    t.wait(120)
    assert "diverged at lr=0.1" in t.status.value


def test_figure_rerun_button_runs_then_reuses_the_store(tmp_path):
    from resnetlearn.live import FigureRerun

    r = FigureRerun("companion", "tiny", out=tmp_path, device="cpu")
    r.button.click()
    r.wait(300)
    assert r.result is not None and r.image.value[:4] == b"\x89PNG" and "companion fig1" in r.status.value
    assert "0 of 4 points reused" in r.status.value and not r.button.disabled
    r.button.click()
    r.wait(300)
    assert "4 of 4 points reused" in r.status.value
    with pytest.raises(ValueError, match="figure must be one of"):
        FigureRerun("fig9")
