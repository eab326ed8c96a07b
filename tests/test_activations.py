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


@pytest.mark.parametrize(
    "kw, exc, match",
    [
        ({"p": 2.5}, TypeError, "p must be an integer"),  # used to become z**2 silently
        ({"p": True}, TypeError, "p must be an integer"),
        ({"p": -1}, ValueError, r"p must be an integer in \[0, 1000\]"),
        ({"p": 1001}, ValueError, r"p must be an integer in \[0, 1000\]"),
        ({"p": "3"}, TypeError, "p must be an integer"),
        ({"c": float("nan")}, ValueError, "c must be a finite number"),
        ({"c": "2"}, TypeError, "c must be a real number"),
        ({"q": 1}, ValueError, r"activation 'power' takes the parameters \['p', 'c'\]; got unexpected \['q'\]"),
    ],
)
def test_power_parameters_are_validated(kw, exc, match):
    with pytest.raises(exc, match=match):
        activation("power", **kw)


def test_registry_parameters_accept_numpy_scalars_and_reject_bad_values():
    import numpy as np

    assert activation("power", p=np.int64(3)).expr == Z**3
    assert activation("power", p=torch.tensor(3), c=2).expr == 2 * Z**3
    assert activation("sin", c=np.float32(0.5)).expr == sympy.sin(Z / 2)
    assert activation("poly", coeffs=np.array([1.0, 0.0, 2.0])).expr == 1 + 2 * Z**2
    with pytest.raises(TypeError, match="coeffs must be a list of numbers"):
        activation("poly", coeffs="12")
    with pytest.raises(ValueError, match="coeffs must hold at least one value"):
        activation("poly", coeffs=[])
    with pytest.raises(ValueError, match=r"coeffs\[1\] must be a finite number"):
        activation("poly", coeffs=[1, float("inf")])
    with pytest.raises(ValueError, match=r"activation 'tanh' takes the parameters \['c'\]"):
        activation("tanh", p=2)
    with pytest.raises(ValueError, match="spec: parameters .* apply only to the registry names"):
        activation("z**2", c=2)
    with pytest.raises(ValueError, match="cannot be applied to an existing Activation"):
        activation(activation("sin"), c=2)
    with pytest.raises(ValueError, match="unknown activation 'relu' for spec; allowed: registry names"):
        activation("relu")
    with pytest.raises(TypeError, match="spec must be a registry name"):
        activation(None)
