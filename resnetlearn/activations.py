"""Smooth activations with a symbolic form (ResNet paper §5, eq 5.2).

Concept 1 builds F and G from two-layer networks whose activations
phi_{r,i} are smooth scalar functions. The complexity measures of §4 are
defined through the Taylor coefficients of phi, so every activation here
carries an exact sympy expression (used for the series) and a torch
function (used to evaluate targets on tensors). Both come from the same
expression, so they cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import sympy
import torch

Z = sympy.Symbol("z", real=True)

def _either(tfn, mfn):
    """Use the torch function on tensors and the math one on plain numbers
    (sympy leaves constants such as sqrt(60) inside lambdified code)."""
    return lambda v: tfn(v) if torch.is_tensor(v) else mfn(v)


_TORCH_FUNCS = {
    name: _either(getattr(torch, tname), getattr(math, mname))
    for name, tname, mname in [
        ("sin", "sin", "sin"), ("cos", "cos", "cos"), ("exp", "exp", "exp"),
        ("tanh", "tanh", "tanh"), ("sinh", "sinh", "sinh"), ("cosh", "cosh", "cosh"),
        ("log", "log", "log"), ("sqrt", "sqrt", "sqrt"), ("atan", "atan", "atan"),
        ("Abs", "abs", "fabs"),
    ]
}


@dataclass(frozen=True)
class Activation:
    """A scalar activation phi(z) with an exact symbolic form.

    ``expr`` is a sympy expression in :data:`Z`; ``fn`` maps a tensor
    elementwise. Build instances with :func:`activation` (registry names)
    or :meth:`Activation.custom` (your own expression / callable).
    """

    name: str
    expr: sympy.Expr
    fn: Callable[[torch.Tensor], torch.Tensor] = field(compare=False, repr=False)

    def __call__(self, t: torch.Tensor) -> torch.Tensor:
        return self.fn(t)

    @classmethod
    def custom(cls, name: str, expr, fn: Callable | None = None) -> Activation:
        """An activation from a sympy expression (or string) in ``z``.

        When ``fn`` is given it is checked against ``expr`` at a few points,
        so a callable whose symbolic form is wrong is rejected instead of
        silently giving complexities of a different function.
        """
        expr = _as_expr(expr)
        auto = _lambdify(expr)
        if fn is None:
            fn = auto
        else:
            pts = torch.linspace(-0.9, 0.9, 7, dtype=torch.float64)
            got, want = fn(pts), auto(pts)
            if not torch.allclose(got, want, rtol=1e-8, atol=1e-10):
                raise ValueError(
                    f"activation {name!r}: the callable and its symbolic form {expr} "
                    f"disagree on [-0.9, 0.9] (max gap {float((got - want).abs().max()):.3g})"
                )
        return cls(name, expr, fn)


def _as_expr(expr) -> sympy.Expr:
    if isinstance(expr, str):
        expr = sympy.sympify(expr, locals={"z": Z})
    expr = sympy.sympify(expr)
    free = expr.free_symbols
    if free - {Z}:
        # accept a plain Symbol('z') (without the real assumption) too
        named = {s for s in free if s.name == "z"}
        if free - named:
            raise ValueError(
                f"activation expression {expr} must depend only on z; found {sorted(map(str, free))}"
            )
        expr = expr.subs({s: Z for s in named})
    return expr


def _lambdify(expr: sympy.Expr) -> Callable[[torch.Tensor], torch.Tensor]:
    f = sympy.lambdify(Z, expr, modules=[_TORCH_FUNCS, "math"])
    if expr.free_symbols:
        return f
    value = float(expr)
    return lambda t: torch.full_like(t, value)


def _poly(coeffs) -> sympy.Expr:
    coeffs = [sympy.nsimplify(c) for c in coeffs]
    if not coeffs:
        raise ValueError("poly: coeffs must be a non-empty list [c0, c1, ...]")
    return sum(c * Z**i for i, c in enumerate(coeffs))


# name -> (builder from keyword parameters, description)
_REGISTRY: dict[str, tuple[Callable[..., sympy.Expr], str]] = {
    "sin": (lambda c=1: sympy.sin(sympy.nsimplify(c) * Z), "sin(c*z)"),
    "cos": (lambda c=1: sympy.cos(sympy.nsimplify(c) * Z), "cos(c*z)"),
    "exp": (lambda c=1: sympy.exp(sympy.nsimplify(c) * Z) - 1, "exp(c*z) - 1"),
    "tanh": (lambda c=1: sympy.tanh(sympy.nsimplify(c) * Z), "tanh(c*z)"),
    # 1/(1+exp(-cz)) written as (1 + tanh(cz/2))/2: the same function, in a form
    # whose Taylor series sympy's ring series computes quickly
    "sigmoid": (
        lambda c=1: (1 + sympy.tanh(sympy.nsimplify(c) * Z / 2)) / 2,
        "1/(1+exp(-c*z)) = (1 + tanh(c*z/2))/2",
    ),
    "power": (lambda p=2, c=1: sympy.nsimplify(c) * Z ** int(p), "c*z**p"),
    "poly": (_poly, "c0 + c1*z + c2*z**2 + ... (coeffs=[c0, c1, ...])"),
}


def activation_names() -> list[str]:
    """Names accepted by :func:`activation`, with their formulas."""
    return [f"{k}: {v[1]}" for k, v in _REGISTRY.items()]


def activation(spec, **params) -> Activation:
    """Look up an activation: a registry name with parameters, a sympy
    expression / string in ``z``, or an existing :class:`Activation`.

    >>> activation("sin", c=3).expr
    sin(3*z)
    """
    if isinstance(spec, Activation):
        if params:
            raise ValueError("activation: parameters cannot be applied to an existing Activation")
        return spec
    if isinstance(spec, str) and spec in _REGISTRY:
        builder, _ = _REGISTRY[spec]
        try:
            expr = builder(**params)
        except TypeError as exc:
            raise ValueError(f"activation {spec!r}: bad parameters {params} ({exc})") from None
        label = spec + (
            "(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")" if params else ""
        )
        return Activation.custom(label, expr)
    if isinstance(spec, sympy.Expr) or (isinstance(spec, str) and "z" in spec):
        if params:
            raise ValueError("activation: parameters apply only to registry names")
        expr = _as_expr(spec)
        return Activation.custom(str(expr), expr)
    raise ValueError(
        f"unknown activation {spec!r}; allowed: registry names {sorted(_REGISTRY)}, "
        "a sympy expression or string in z, or an Activation"
    )
