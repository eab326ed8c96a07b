"""Runs lose nothing: protocol defaults, the validation hold-out named, shipped tables verified,
worker processes that die with their parent, and the work of a run estimated before it starts."""

import os

import pytest

from resnetlearn.learners.search import Selection, grid_search
from resnetlearn.learners.training import Learner, Protocol
from resnetlearn.targets.concept import parity_instance


# ----------------------------------------------------------------- Protocol: the lr drop follows epochs
def test_protocol_epochs_alone_drops_the_lr_half_way():
    # was: ValueError about lr_drop_epoch = 400 (the 800-epoch default) although only epochs was given
    assert Protocol(epochs=100).lr_drop_epoch == 50
    assert Protocol(epochs=7).lr_drop_epoch == 3 and Protocol(epochs=1, lr_drop_epoch=None).lr_drop_epoch == 0
    # §8.1: 800 epochs, ÷10 at 400; quick(e) keeps its e // 2
    assert Protocol() == Protocol(epochs=800, batch_size=50, momentum=0.9, lr_drop_epoch=400, lr_drop_factor=10.0,
                                  eval_every=50, layerwise=False)
    for e in (1, 2, 3, 100, 400, 801):
        assert Protocol.quick(e).lr_drop_epoch == e // 2 and Protocol.quick(e) == Protocol(epochs=e)
    # a drop the user did ask for, outside the epochs, is still refused, naming the default it replaces
    with pytest.raises(ValueError, match=r"lr_drop_epoch \(left out: epochs // 2 = 50.*\[0, 100\], got 400"):
        Protocol(epochs=100, lr_drop_epoch=400)


# ----------------------------------------------------------------- select='val': the hold-out is named
def test_a_batch_larger_than_the_samples_left_after_the_hold_out_says_so():
    # n_train = 60, select="val" holds out round(0.2 * 60) = 12: SGD sees 48 < batch_size 50
    with pytest.raises(ValueError, match=r"N = 48: of n_train = 60, 12 are held out for validation "
                                         r"\(select='val' with val_fraction = 0.2\)"):
        grid_search(parity_instance(), Learner("3resnet", "all", m=8), n_train=60, lrs=[0.1], wds=[0.0],
                    protocol=Protocol.quick(2), progress=False, selection=Selection(select="val", validation="holdout"))
    # without a hold-out the message stays the plain one
    with pytest.raises(ValueError, match=r"must not exceed the number of training samples N = 40$"):
        grid_search(parity_instance(), Learner("3resnet", "all", m=8), n_train=40, lrs=[0.1], wds=[0.0],
                    protocol=Protocol.quick(2),
                    progress=False)


# ----------------------------------------------------------------- shipped tables are verified
def test_an_edited_shipped_table_is_refused_instead_of_judged(tmp_path):
    """A tampered table: results/quick/fig2a.csv edited so that 3resnet(all) m = 50 reads 0.1 was loaded
    and summarised as "4/4 seeds below, median 0.100" (the computed numbers: 0/4 and 2.239)."""
    import re
    import shutil
    from pathlib import Path

    from resnetlearn.reproduce import load_figure

    shipped = Path(__file__).parent.parent / "results" / "quick"
    for f in ("fig2a.csv", "fig2a_runs.csv", "fig2a.provenance.json", "fig2a.sha256"):
        shutil.copy(shipped / f, tmp_path / f)
    assert "m=50: 0/4 seeds below (median 2.239" in load_figure("fig2a", tmp_path).summary
    table = tmp_path / "fig2a.csv"
    text = table.read_text()
    row = re.search(r"(?m)^fig2a,quick,3resnet,all,50,.*$", text).group(0)
    cells = re.sub(r'"\[[^]]*\]"', '"[0.1, 0.1, 0.1, 0.1, 0.1]"', row)
    for v in ("0.5738728046417236", "2.239285469055176", "2.820204973220825"):  # test error, median, max
        cells = cells.replace(v, "0.1")
    table.write_text(text.replace(row, cells))
    with pytest.raises(ValueError, match=r"fig2a\.csv does not match the sha256 recorded in .*fig2a\.sha256"):
        load_figure("fig2a", tmp_path)


# ----------------------------------------------------------------- the work is announced before it starts
def test_the_paper_scale_on_a_cpu_says_what_it_costs_before_the_first_point(tmp_path, monkeypatch, capsys):
    """--scale paper on a CPU started without a word (its bar then promised 24 min for many hours)."""
    from resnetlearn import __main__ as cli
    from resnetlearn.reproduce import work_estimate

    monkeypatch.setattr(work_estimate, "_seconds_per_step", lambda *a, **k: 1e-3)  # every step 1 ms: a = 1 ms, b = 0

    def first_point(*a, **k):  # the announcement must already be out when the first point would start
        said.append(capsys.readouterr().err)
        raise KeyboardInterrupt

    said = []
    monkeypatch.setattr(cli, "run_figure", first_point)
    assert cli.main(["reproduce", "fig2a", "--scale", "paper", "--device", "cpu", "--out", str(tmp_path)]) == 130
    # 63 points (3 learners x 3 modes x 7 widths), each its 11 x 14 grid + 8 fresh seeds = 162 networks,
    # 800 epochs x 500/50 batches = 8000 steps each; 63 x 2 batched trainings x 8000 steps x 1 ms = 1008 s
    assert "meant for a GPU; this run uses cpu" in said[0]
    assert ("63 point(s) to compute; 10,206 networks trained for 81,648,000 SGD steps in all" in said[0]
            and "roughly 17 min in one process" in said[0])
    assert "the largest network, 3layer(ntk) m = 2000, needs about" in said[0]  # the memory, said before it starts


def test_point_work_by_hand_and_a_real_step_is_timed():
    from resnetlearn.reproduce.figures import point_records
    from resnetlearn.reproduce.learner import Kernel
    from resnetlearn.reproduce.work_estimate import _seconds_per_step, point_work

    pts = point_records("fig2a", "quick")
    p = [q for q in pts if q.learner == Learner("3resnet", "all", m=50)]
    # 3resnet, d = 30, k = 15, m = 50: W 1500 + b1 50 + V 750 + b2 50 + A 750 = 3100 parameters; 400 epochs x 10
    # batches = 4000 steps for the 4 x 3 grid (12 networks) and again for the 4 fresh seeds
    assert point_work(p[0]) == 4000 * (12 * 3100 + 50_000) + 4000 * (4 * 3100 + 50_000)
    assert point_work(next(q for q in point_records("thm3", "quick") if isinstance(q.learner, Kernel))) == 0
    assert 0 <= _seconds_per_step(Learner("2layer", "all", m=10), models=4, device="cpu") < 0.5


def test_the_work_of_figure_4b_counts_its_own_mini_batches(monkeypatch):
    """arXiv v3 §8.2, Figure 4(b): N = 50000 in mini-batches of 100 is 500 steps an epoch, 800 epochs; the
    hand-built solution trains on the 64 inputs of d = 6 in mini-batches of 16 (4 steps an epoch, 3000 epochs)."""
    from resnetlearn.reproduce import work_estimate

    monkeypatch.setattr(work_estimate, "_seconds_per_step", lambda *a, **k: 1e-3)
    est = work_estimate.estimate_work(["fig4b"], "paper", device="cpu")
    grid = 11 * 14  # the paper scale's lr x wd grid, then 8 fresh seeds of the selected cell
    widths = 8  # §8.2: m in {200, 500, 1000, 2000, ..., 50000}
    assert (est.points, est.networks) == (widths + 4, widths * (grid + 8) + 4)
    assert est.steps == widths * (grid + 8) * 800 * 500 + 4 * 3000 * 4
    assert "(mini-batches of 16 and 100)" in est.text("paper")


def test_worker_pool_names_its_start_method(tmp_path, monkeypatch):
    """worker_init ends a worker whose parent is not the reproduce process; under "forkserver" (Python 3.14's
    default on Linux) the parent would be the fork server and every worker would quit. The CLI therefore
    always names "fork" or "spawn"."""
    from concurrent.futures import ProcessPoolExecutor

    from resnetlearn import __main__ as cli

    seen = []

    def pool(*args, **kw):
        seen.append(kw.get("mp_context"))
        return ProcessPoolExecutor(*args, **kw)

    monkeypatch.setattr(cli, "ProcessPoolExecutor", pool)
    assert cli.main(["reproduce", "fig4", "--scale", "tiny", "--device", "cpu", "--workers", "1",
                     "--out", str(tmp_path)]) == 0
    # on the CPU, fork where the system has it (spawn only for CUDA, or where there is no fork)
    assert len(seen) == 1 and seen[0].get_start_method() == ("fork" if hasattr(os, "fork") else "spawn")
