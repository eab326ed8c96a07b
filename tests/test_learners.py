"""The learner records and the figure point record: what they answer is read back by independent routes
(the stored keys on disk, the rows' own fields, the architecture records)."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from resnetlearn.classroom import styles
from resnetlearn.classroom.styles import style_for, style_of, trained_layers
from resnetlearn.kernels.registry import kernel_label
from resnetlearn.learners import networks
from resnetlearn.learners.hand_built import HAND_BUILT
from resnetlearn.learners.training import Learner
from resnetlearn.reproduce import figures
from resnetlearn.reproduce.learner import HandBuilt, Kernel, Network, from_row, kind_of, label_of
from resnetlearn.reproduce.point import Point, point_id
from resnetlearn.reproduce.store import ResultsStore
from resnetlearn.reproduce.table_reading import load_figure, load_runs

RESULTS = Path(__file__).resolve().parent.parent / "results"


def test_a_stored_point_keeps_its_key_through_the_point_record():
    """Every point file shipped under results/ (its key is its file name, computed when it was stored) is
    named again by Point.of_config(config).key(), and the record writes back the very configuration."""
    files = [f for f in sorted(RESULTS.rglob("*.json")) if "store" in f.parts]
    seen = 0
    for f in files:
        payload = json.loads(f.read_text())
        if not isinstance(payload, dict) or "config" not in payload:
            continue
        point = Point.of_config(payload["config"])
        assert point.config() == payload["config"], f
        assert point.key() == payload["key"] == f.stem, f
        seen += 1
    assert seen > 400  # results/quick, quick-val, cpu and cpu-v1 hold 499 points


@pytest.mark.parametrize("name", figures.names())
def test_every_figure_point_round_trips_through_its_record(name):
    for scale in figures.spec(name).scales:
        for select in ("test", "val"):
            for p in figures.points(name, scale, select=select, device="cpu"):
                point = Point.of_config(p)
                assert point.config() == p
                assert point.key() == ResultsStore.key(p)
                assert point.learner == from_row(p)


def test_a_row_names_one_learner_record_of_its_kind():
    net = from_row({"model": "3layer", "mode": "hidden", "m": 50, "init": "companion"})
    assert net == Network("3layer", "hidden", m=50, init="companion") == Learner("3layer", "hidden", m=50,
                                                                                 init="companion")
    assert net != Network("3layer", "hidden", m=50) and hash(net) == hash(Learner("3layer", "hidden", m=50,
                                                                                  init="companion"))
    assert net.label == "3layer(hidden)" and net.row_fields() == {"model": "3layer", "mode": "hidden",
                                                                   "init": "companion"}
    kern = from_row({"model": "ntk_inf:2layer", "mode": "kernel", "m": 500})
    assert kern == Kernel("ntk_inf", "2layer", m=500) and kern.label == "ntk_inf:2layer"
    assert from_row({"model": "gaussian", "mode": "kernel"}).row_fields() == {"model": "gaussian", "mode": "kernel"}
    hand = from_row({"model": "hand_built", "mode": "-", "m": 200, "wd": 0.001})
    assert hand == HandBuilt(0.001, m=200) and hand.wd == 0.001 and hand.label == "hand_built"
    assert [kind_of(r) for r in ({"model": "2layer_signs", "mode": "hidden"}, {"model": "arcsine", "mode": "kernel"},
                                 {"model": "hand_built", "mode": "-"})] == [Network, Kernel, HandBuilt]
    assert [k.trained_by_sgd for k in (Network, Kernel, HandBuilt)] == [True, False, True]
    assert label_of({"model": "3resnet", "mode": "ntk"}) == "3resnet(ntk)"
    assert label_of({"model": "3resnet", "mode": "ntk"}, with_mode=False) == "3resnet"


def test_a_network_is_drawn_by_its_architecture_entry_and_its_mode():
    for arch, rec in networks.ARCHITECTURES.items():
        look = styles.ARCHITECTURE_STYLES[arch]
        for mode, line in (("all", "solid"), ("hidden", "solid"), ("last", "dot"), ("ntk", "dash")):
            s = style_for(Network(arch, mode, m=4))
            assert (s.colour, s.marker, s.line) == (look.colour, look.marker, line)
        assert style_for(Network(arch, "all", m=4)).family == ("ResNet" if rec.res else "fully connected")
    assert style_for(Network("2layer", "last", m=4)).family == "conjugate kernel"
    assert style_of("no such learner").colour == "#7f7f7f"


def test_a_new_architecture_is_drawn_by_its_entry_in_the_classroom_table(monkeypatch):
    rec = networks.Architecture("2layer_teal", "A·σ(Wx + b₁)", networks.ARCHITECTURES["2layer"].layers,
                                out1="out1")
    monkeypatch.setitem(networks.ARCHITECTURES, "2layer_teal", rec)
    assert style_of("2layer_teal", "all") == styles.Style("#7f7f7f", family="fully connected")  # no entry: grey
    monkeypatch.setitem(styles.ARCHITECTURE_STYLES, "2layer_teal", styles.Style("#008080", "star"))
    s = style_of("2layer_teal", "ntk")
    assert (s.colour, s.marker, s.line, s.family) == ("#008080", "star", "dash", "NTK")


def test_a_new_kernel_is_drawn_by_its_entry_in_the_classroom_table(monkeypatch):
    """A kernel's style is an entry of the classroom's table, keyed by the kernel's registry name (one colour per
    architecture): drawn in its own colour, marker, line and family, by its Kernel record and by name."""
    from resnetlearn.kernels import registry

    entry = registry.KernelEntry("poly", lambda X1, X2=None: X1 @ X2.T, label="polynomial")
    monkeypatch.setitem(registry.KERNEL_REGISTRY, "poly", entry)
    assert style_for(Kernel("poly")) == styles.Style("#7f7f7f", "cross")  # no entry: grey, a cross
    monkeypatch.setitem(styles.KERNEL_STYLES, "poly", styles.KernelStyle(
        {"2layer": "#123456", None: "#abcdef"}, marker="star", line="dot", family="polynomial kernel"))
    s = style_for(Kernel("poly", "2layer"))
    assert (s.colour, s.marker, s.line, s.family) == ("#123456", "star", "dot", "polynomial kernel")
    assert style_for(Kernel("poly")).colour == "#abcdef" and style_of("poly").colour == "#abcdef"
    assert style_for(Kernel("no_such_kernel")).colour == "#7f7f7f"  # an unknown kernel: grey
    assert style_for(HandBuilt()) == styles.Style("#dc143c", "star")


@pytest.mark.parametrize("scale", ["quick", "cpu"])
def test_the_records_answer_what_the_tables_ask(scale):
    """What the tables, verdicts and figures ask a row's learner (grid_searched, constructed, kernel_method), read
    back from the shipped tables' own contents: a grid search's runs each have a learning rate, a construction is
    one run with neither a learning rate nor a ridge, a (last)/(ntk) network has the exact kernel solution's error
    beside it."""
    asked = {"grid_searched": 0, "constructed": 0, "kernel_method": 0}
    for name in figures.names():
        if not (RESULTS / scale / f"{name}.csv").exists():
            continue
        groups = {}
        for run in load_runs(name, RESULTS / scale):
            groups.setdefault(point_id(run), []).append(run)
        for runs in groups.values():
            kind = kind_of(runs[0])
            assert kind.grid_searched == all(r["lr"] is not None for r in runs), runs[0]
            assert kind.constructed == (len(runs) == 1 and runs[0]["lr"] is None and runs[0]["ridge_rel"] is None)
            asked["grid_searched"] += kind.grid_searched
            asked["constructed"] += kind.constructed
        for row in load_figure(name, RESULTS / scale).rows:
            assert from_row(row).kernel_method == (row.get("exact_test_error") is not None), row
            asked["kernel_method"] += from_row(row).kernel_method
    assert all(asked.values()), asked  # each question answered yes somewhere
    assert [(k.grid_searched, k.constructed) for k in (Network, Kernel, HandBuilt)] == [(True, False), (False, False),
                                                                                        (False, True)]


def test_what_a_mode_trains_is_said_by_the_classroom_table(monkeypatch):
    assert [trained_layers(m) for m in ("all", "hidden", "last", "ntk", "no such mode")] == [
        "all layers", "hidden layers", "last", "ntk", "no such mode"]  # Figure 3's panel titles as shipped
    monkeypatch.setitem(styles.MODE_STYLES, "last", replace(styles.MODE_STYLES["last"], trained_layers="the readout A"))
    assert trained_layers("last") == "the readout A"


def test_the_hand_built_lr_drops_at_two_thirds_of_any_epochs():
    """The construction's lr drop is its record's fraction: the very epoch the literal ``epochs * 2 // 3`` gave
    before it moved there, for every number of epochs (the stored hand-built points keep their numbers)."""
    assert [HAND_BUILT.lr_drop_epoch(e) for e in range(1, 5001)] == [e * 2 // 3 for e in range(1, 5001)]
    assert HAND_BUILT.lr_drop_epoch(800) == 533 and HAND_BUILT.lr_drop_epoch(3) == 2


def test_a_kernel_is_named_by_its_spec_in_tables_and_by_its_entry_in_words():
    """Tables and legends name a kernel by its record's label, the spec its stored rows hold; the kernel
    experiments print its registry entry's words."""
    row = {"model": "ntk_inf:2layer", "mode": "kernel", "m": 500}
    assert label_of(row) == label_of(row, with_mode=False) == from_row(row).label == "ntk_inf:2layer"
    assert label_of({"model": "hand_built", "mode": "-", "wd": 0.0}) == "hand_built"
    assert kernel_label("ntk_inf:2layer") == "NTK (∞ width) 2layer"
