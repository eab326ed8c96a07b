"""The Figure 4(a) probe's initial scales: W's and the fixed signs' magnitudes, and the identity that ties them.

For the ReLU, c·aᵀσ(Wx) = aᵀσ(cWx), so SGD with signs ±c/√m is SGD with signs ±1/√m started from c·W with lr × c²
and wd ÷ c² (the probe's docstring): the two runs give the same errors, and ‖W‖_F differs by the factor c.
"""

import importlib.util
import json
from pathlib import Path

import pytest
import torch

from resnetlearn.learners import networks

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("probe_fig4_sgd", ROOT / "probes" / "probe_fig4_sgd.py")
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)


def test_scaled_init_multiplies_w_and_signs_only_inside_the_block():
    plain = networks.init_params("2layer_signs", d=6, k=1, m=4, seeds=[3])
    with probe.scaled_init(0.5, 2.0):
        scaled = networks.init_params("2layer_signs", d=6, k=1, m=4, seeds=[3])
    after = networks.init_params("2layer_signs", d=6, k=1, m=4, seeds=[3])
    torch.testing.assert_close(scaled["W"], 0.5 * plain["W"])
    torch.testing.assert_close(scaled["A"], 2.0 * plain["A"])
    assert scaled["A"].abs().unique().tolist() == pytest.approx([2.0 / 4**0.5])
    torch.testing.assert_close(after["W"], plain["W"])


def test_sign_magnitude_equals_w_scale_with_lr_times_c_squared(tmp_path):
    out, js = tmp_path / "p.txt", tmp_path / "p.json"
    c, lr, wd = 3.0, 0.05, 9e-3
    common = ["--d", "8", "--n-train", "200", "--n-test", "100", "--widths", "10", "--epochs", "6", "--checks", "2",
              "--json", str(js), "--out", str(out)]
    probe.main(common + ["--a-scale", str(c), "--lrs", str(lr), "--wds", str(wd)])
    probe.main(common + ["--w-scale", str(c), "--lrs", str(lr * c * c), "--wds", str(wd / (c * c))])
    signs, weights = json.loads(js.read_text())
    assert (signs["a_scale"], signs["w_scale"], weights["a_scale"], weights["w_scale"]) == (c, 1.0, 1.0, c)
    assert weights["train_error"] == pytest.approx(signs["train_error"], rel=1e-3)
    assert weights["test_error"] == pytest.approx(signs["test_error"], rel=1e-3)
    assert weights["frobenius_W"] == pytest.approx(c * signs["frobenius_W"], rel=1e-3)
    assert signs["curve_epochs"] == [3, 6] and len(signs["curve_test"]) == 2
    assert signs["min_test_error"] == pytest.approx(min(signs["curve_test"]))
    assert out.read_text().splitlines()[-1].startswith("command: python probes/probe_fig4_sgd.py --d 8")
