import pytest
import sympy
import torch

from resnetlearn import Activation, activation, activation_names, select_device
from resnetlearn.activations import Z


def test_registry_torch_matches_symbolic():
    t = torch.linspace(-1, 1, 11, dtype=torch.float64)
    assert torch.allclose(activation("sin", c=3)(t), torch.sin(3 * t))
    assert torch.allclose(activation("exp", c=2)(t), torch.exp(2 * t) - 1)
    assert torch.allclose(activation("sigmoid")(t), torch.sigmoid(t))
    assert torch.allclose(activation("poly", coeffs=[1, 0, 2])(t), 1 + 2 * t**2)
    assert activation("cos", c=7).expr == sympy.cos(7 * Z)
    assert len(activation_names()) >= 7


def test_custom_activation_checks_its_callable():
    a = Activation.custom("cube", "z**3", fn=lambda t: t**3)
    assert a.expr == Z**3
    with pytest.raises(ValueError, match="disagree"):
        Activation.custom("bad", "z**3", fn=lambda t: t**2)
    with pytest.raises(ValueError, match="only on z"):
        activation("z*y")


def test_device_selection_errors_are_explicit():
    assert select_device("cpu").type == "cpu"
    assert select_device(None).type in ("cpu", "cuda", "mps")
    with pytest.raises(ValueError, match="device must be one of"):
        select_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU"):
            select_device("cuda")
