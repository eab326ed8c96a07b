"""Notebooks that read well before they run.

Every widget the notebooks display carries, in its display bundle, a static picture of its result
(``image/png``) and a one-line outcome (``text/plain``) beside the live widget's view, so a reader without a
kernel (GitHub, nbviewer, the reading copy, an untrusted notebook in JupyterLab) sees a picture, never the
widget's ``VBox(children=…)`` text.

Two kinds of tests: the widgets' bundles, built here; and the committed outputs of ``notebooks/*.ipynb``.
The second kind checks what ``course/execute_notebook.py`` wrote: it fails on a notebook executed before
the widgets carried pictures (or one still calling ``ipywidgets.interact`` directly) until that notebook is
re-executed with the current package.
"""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path

import pytest

from resnetlearn.classroom.live_run import WIDGET_REPRS, WIDGET_VIEW_MIME

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LIVE_WIDGETS = ("LiveRace(", "LiveTrainer(", "FigureRerun(")
MAX_NOTEBOOK_BYTES = 2_000_000
REEXECUTE = "re-execute it: python course/execute_notebook.py notebooks/NAME.ipynb"


def _png(bundle: dict) -> bytes:
    return base64.b64decode(bundle["image/png"])


def _outputs(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []) if cell["cell_type"] == "code" else []:
            yield i, "".join(cell["source"]), out


def _text(out: dict) -> str:
    t = out.get("data", {}).get("text/plain", "")
    return "".join(t) if isinstance(t, list) else t


# ----------------------------------------------------------------- the committed notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_committed_output_shows_a_widget_as_raw_text(path):
    bad = [f"cell {i}: {_text(out)[:60]!r}" for i, _, out in _outputs(path)
           if _text(out).lstrip().startswith(WIDGET_REPRS) and "image/png" not in out.get("data", {})]
    assert not bad, f"{path.name}: widget outputs without a picture ({REEXECUTE}): {bad}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_display_widgets_with_pictures(path):
    """ipywidgets' own interact shows raw text where no kernel runs: the notebooks use
    resnetlearn.classroom.live.interact (same arguments), which adds the picture of the default setting."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    bad = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
           and any(f"{w}.{f}(" in "".join(c["source"]) for w in ("W", "widgets", "ipywidgets")
                   for f in ("interact", "interact_manual", "interactive"))]
    assert not bad, (f"{path.name}: cells {bad} call ipywidgets' interact; call "
                     "resnetlearn.classroom.live.interact (or interact(..., manual=True)) with the same arguments")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_race_and_trainer_outputs_carry_their_picture(path):
    for i, source, out in _outputs(path):
        data = out.get("data", {})
        if WIDGET_VIEW_MIME in data and any(w in source for w in LIVE_WIDGETS):
            assert "image/png" in data, f"{path.name} cell {i}: the widget's output has no picture ({REEXECUTE})"
            assert base64.b64decode(data["image/png"])[:4] == b"\x89PNG"
            assert not _text(out).startswith(WIDGET_REPRS), f"{path.name} cell {i}: {_text(out)[:60]!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebooks_stay_small(path):
    """No saved widget state (it embeds the widgets' JavaScript, ~10 MB with plotly's FigureWidget) and no
    notebook over 2 MB."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert "widgets" not in nb.get("metadata", {}), f"{path.name}: saved widget state ({REEXECUTE})"
    assert path.stat().st_size < MAX_NOTEBOOK_BYTES, f"{path.name}: {path.stat().st_size} bytes"


# ----------------------------------------------------------------- the widgets' bundles
def _check_bundle(bundle: dict, *, picture: bool = True) -> str:
    assert WIDGET_VIEW_MIME in bundle  # JupyterLab with a kernel still shows the live widget
    text = bundle["text/plain"]
    assert text and not text.startswith(WIDGET_REPRS)
    if picture:
        assert _png(bundle)[:4] == b"\x89PNG"
    return text


def test_race_bundle_shows_the_finished_race():
    from resnetlearn.classroom.live import LiveRace

    text = _check_bundle(LiveRace(view="png")._repr_mimebundle_())
    assert "3resnet(all) ends below kα² = 1.35" in text
    assert "3layer(all), 2layer(all) and NTK ridge (∞-width eq 2.1 ResNet) end above it" in text


def test_race_bundle_takes_a_finished_result_and_otherwise_says_press_train():
    from resnetlearn.classroom.live import LiveRace
    from resnetlearn.classroom.race import RaceConfig, run_race

    cfg = RaceConfig(m=20, n_train=100, n_test=100, epochs=10, chunk=5, kernel=None)
    assert "press Train" in _check_bundle(LiveRace(cfg, view="png")._repr_mimebundle_())
    res = run_race(cfg)
    text = _check_bundle(LiveRace(cfg, view="png", result=res)._repr_mimebundle_())
    assert "m = 20, N = 100, 10 epochs" in text and "press Train" not in text


def test_trainer_bundle_shows_the_finished_run():
    from resnetlearn.classroom.live import LiveConfig, LiveTrainer

    text = _check_bundle(LiveTrainer(LiveConfig())._repr_mimebundle_())
    assert "test error ends below kα² = 1.35" in text and "400 epochs" in text
    other = _check_bundle(LiveTrainer(LiveConfig(m=50))._repr_mimebundle_())
    assert "press Train" in other  # no run committed at these settings: a placeholder and a hint


def test_figure_rerun_bundle_shows_the_shipped_figure(tmp_path):
    from resnetlearn.classroom.rerun import FigureRerun

    text = _check_bundle(FigureRerun("fig2a", "quick", out=ROOT / "results" / "live" / "store")._repr_mimebundle_())
    assert "fig2a at quick scale" in text and "reproduced" in text
    text = _check_bundle(FigureRerun("fig2a", "quick", out=tmp_path / "live" / "store")._repr_mimebundle_(),
                         picture=False)
    assert "press it" in text


@pytest.fixture
def shell():
    """An IPython shell, so displays inside the interact function are captured as in a kernel."""
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    yield sh
    InteractiveShell.clear_instance()


def test_interact_pictures_the_default_setting(shell):
    import ipywidgets as W

    from resnetlearn.classroom.live import Interact
    from resnetlearn.classroom.plots import energy_figure, show

    calls = []

    def draw(alpha, beta):
        calls.append((alpha, beta))
        show(energy_figure(alpha, beta)[0])

    w = Interact(draw, alpha=W.FloatSlider(value=0.3, min=0, max=0.95, step=0.05), beta=(0.0, 1.5, 0.05))
    text = _check_bundle(w._repr_mimebundle_())
    assert calls == [(0.3, 0.75)]  # computed once, by the widget's own first call
    assert "alpha = 0.3, beta = 0.75" in text and "a picture" in text

    printed = Interact(lambda n: print(f"n squared is {n * n}"), n=W.IntSlider(value=7, max=10))
    text = _check_bundle(printed._repr_mimebundle_(), picture=False)
    assert "n = 7" in text and "n squared is 49" in text

    manual = Interact(lambda n: print(f"n cubed is {n ** 3}"), manual=True, n=W.IntSlider(value=2, max=10))
    assert "n cubed is 8" in _check_bundle(manual._repr_mimebundle_(), picture=False)

    def fails(n):
        print("before the error")
        raise ValueError("no")

    broken = Interact(fails, n=W.IntSlider(value=1))  # ipywidgets shows the error; the bundle still reads well
    assert "before the error" in _check_bundle(broken._repr_mimebundle_(), picture=False)


def test_pictured_bundle_refuses_a_widget_repr_as_its_text():
    import ipywidgets as W

    from resnetlearn.classroom.live_run import pictured_bundle

    with pytest.raises(ValueError, match="widget repr"):
        pictured_bundle(W.VBox([]), None, "VBox(children=())")


def test_committed_pictures_are_those_of_a_fresh_run():
    """widget_results.json (the pictures' data) equals the race and the trainer run now at their defaults;
    ``python -m resnetlearn.classroom.live --refresh-pictures`` rewrites it after a change to training."""
    import torch

    from resnetlearn.classroom.live import PICTURES, LiveConfig, _trainer_every, run
    from resnetlearn.classroom.race import RaceConfig, run_race

    if torch.get_num_threads() != 1:
        pytest.skip("the committed pictures were computed with one torch thread (OMP_NUM_THREADS=1)")
    saved = json.loads(PICTURES.read_text(encoding="utf-8"))
    fresh = run_race(RaceConfig(), device="cpu").final_errors()
    assert fresh.keys() == saved["race"]["final_errors"].keys()
    for k, v in fresh.items():
        assert math.isclose(v, saved["race"]["final_errors"][k], rel_tol=1e-6), k
    assert round(fresh["3resnet(all)"], 3) == 0.361 and round(fresh["3layer(all)"], 3) == 1.864
    _, res = run(LiveConfig(), device="cpu", callback_every=_trainer_every(LiveConfig()))
    assert math.isclose(float(res.test_error[0]), saved["trainer"]["data"]["test"][-1][0], rel_tol=1e-6)
    assert [int(e) for e in res.epochs] == saved["trainer"]["data"]["epochs"]
