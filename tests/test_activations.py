import pytest
import sympy
import torch

from resnetlearn import Activation, activation, activation_names, select_device
from resnetlearn.targets.activations import Z


def test_registry_torch_matches_symbolic():
    t = torch.linspace(-1, 1, 11, dtype=torch.float64)
    assert torch.allclose(activation("sin", c=3)(t), torch.sin(3 * t))
    assert torch.allclose(activation("exp", c=2)(t), torch.exp(2 * t) - 1)
    assert torch.allclose(activation("sigmoid")(t), torch.sigmoid(t))
    assert torch.allclose(activation("poly", coeffs=[1, 0, 2])(t), 1 + 2 * t**2)
    assert activation("cos", c=7).expr == sympy.cos(7 * Z)
    # every listed name is one of these, and each evaluates to the function written here (c = 1, p = 2)
    want = {"sin": torch.sin, "cos": torch.cos, "exp": lambda x: torch.exp(x) - 1, "tanh": torch.tanh,
            "sigmoid": lambda x: 1 / (1 + torch.exp(-x)), "power": lambda x: x**2, "poly": lambda x: 1 + 2 * x**2}
    names = [line.split(":")[0] for line in activation_names()]
    assert sorted(names) == sorted(want)
    for name in names:
        kw = {"p": 2} if name == "power" else {"coeffs": [1, 0, 2]} if name == "poly" else {}
        assert torch.allclose(activation(name, **kw)(t), want[name](t), rtol=1e-12, atol=1e-14), name


def test_custom_activation_checks_its_callable():
    a = Activation.custom("cube", "z**3", fn=lambda t: t**3)
    assert a.expr == Z**3
    with pytest.raises(ValueError, match="disagree"):
        Activation.custom("bad", "z**3", fn=lambda t: t**2)
    with pytest.raises(ValueError, match="only on z"):
        activation("z*y")


def test_device_selection_errors_are_explicit(monkeypatch):
    from resnetlearn import device

    assert select_device("cpu").type == "cpu"
    # auto: cuda, then mps, then cpu (the docstring's order), on each machine the three can describe
    for cuda, mps, want in ((True, True, "cuda"), (False, True, "mps"), (False, False, "cpu")):
        with monkeypatch.context() as mp:
            mp.setattr(torch.cuda, "is_available", lambda cuda=cuda: cuda)
            mp.setattr(device, "_mps_available", lambda mps=mps: mps)
            assert select_device(None).type == want and select_device("auto").type == want
    with pytest.raises(ValueError, match="device must be one of"):
        select_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU"):
            select_device("cuda")


@pytest.mark.parametrize(
    "kw, exc, match",
    [
        ({"p": 2.5}, TypeError, "p must be an integer"),  # never rounded silently to z**2
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
