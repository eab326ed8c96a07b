"""Expression strings are parsed, never evaluated (activations.parse_expression)."""

import math

import pytest
import sympy
import sympy.parsing.sympy_parser as sympy_parser
import torch

import resnetlearn as rl
from resnetlearn import Activation, activation, complexity_s
from resnetlearn.targets.activations import Z, parse_expression

VALID = [
    ("z**3", Z**3),
    ("z^3", Z**3),  # ^ is a synonym of **, as under sympify
    ("-z**2", -(Z**2)),  # unary minus binds looser than **
    ("2**-1*z", Z / 2),
    ("z**2**2", Z**4),  # ** is right-associative
    ("1e-3*z", Z / 1000),  # decimals are read exactly
    (".5*z + 0.25", Z / 2 + sympy.Rational(1, 4)),
    ("sigmoid(2*z)", (1 + sympy.tanh(Z)) / 2),
    ("1/(1+exp(-z))", 1 / (1 + sympy.exp(-Z))),
    ("pi*z - E", sympy.pi * Z - sympy.E),
    ("E**z", sympy.exp(Z)),
    ("sin(2*z) + cos(z)**2", sympy.sin(2 * Z) + sympy.cos(Z) ** 2),
    ("log(1+z) * sqrt(1+z)", sympy.log(1 + Z) * sympy.sqrt(1 + Z)),
    ("  atan(z) - asinh(z)/3 + tan(z) ", sympy.atan(Z) - sympy.asinh(Z) / 3 + sympy.tan(Z)),
    ("asin(z/2) + acos(z/2) + atanh(z/2) + sinh(z)*cosh(z)",
     sympy.asin(Z / 2) + sympy.acos(Z / 2) + sympy.atanh(Z / 2) + sympy.sinh(Z) * sympy.cosh(Z)),
]


@pytest.mark.parametrize("text, want", VALID)
def test_valid_expressions_parse_to_the_expected_sympy_expression(text, want):
    assert sympy.simplify(parse_expression(text) - want) == 0
    assert sympy.simplify(activation(text).expr - want) == 0


def test_parsed_torch_function_matches_the_formula():
    t = torch.linspace(-0.9, 0.9, 13, dtype=torch.float64)
    assert torch.allclose(activation("sigmoid(2*z)")(t), torch.sigmoid(2 * t))
    assert torch.allclose(activation("log(1+z) - z^2/2")(t), torch.log1p(t) - t**2 / 2)
    assert torch.allclose(activation("1/(1-z)")(t), 1 / (1 - t))
    assert torch.allclose(activation("asin(z) + atanh(z/2)")(t), torch.asin(t) + torch.atanh(t / 2))


def hostile(marker):
    m = str(marker)
    return [
        f"__import__('os').system('touch {m}')",
        f"__import__(\"os\").system(\"touch {m}\")",
        f"open('{m}', 'w').write('x')",
        f"exec(\"open('{m}','w')\")",
        f"eval(\"open('{m}','w')\")",
        f"(lambda: open('{m}', 'w'))()",
        f"z; open('{m}', 'w')",
        f"z if open('{m}', 'w') else z",
        f"[open('{m}', 'w') for z in (1,)]",
        f"sin.__globals__['__builtins__']['open']('{m}', 'w')",
        "z.__class__",
        "z.__class__.__bases__[0].__subclasses__()",
        "(1).__class__",
        "sin.func",
        "Symbol('y')",
        "getattr(z, 'x')",
        "'z'",
        "z + y",
        "1j*z",
        "0x10*z",
        "1_000*z",
        "2z",
        "sin(z, z)",
        "sin z",
        "sin",  # bare function name inside an expression
        "z**10**10",
        "9**9**9",
        "(" * 100 + "z" + ")" * 100,
        "z" + "+z" * 300,
        "",
        "   ",
        "z +",
        "(z",
        "z)",
        "1/0 + z",
    ]


def test_hostile_strings_are_rejected_and_nothing_runs(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"

    def boom(*args, **kwargs):
        raise AssertionError("sympy's eval-based parser was called")

    monkeypatch.setattr(sympy_parser, "parse_expr", boom)
    for text in hostile(marker):
        if text == "sin":
            text = "z + sin"
        with pytest.raises(ValueError) as info:
            activation(text)
        msg = str(info.value)
        # over 500 characters: the length rule, before any reading; else what is allowed, after what went wrong
        want = (f"spec is {len(text)} characters long; at most 500 are accepted" if len(text) > 500
                else "allowed: decimal numbers, the symbol z")
        assert want in msg and msg.startswith("spec"), msg
        # the same through the other entry points, each naming its own parameter
        with pytest.raises(ValueError, match="act"):
            complexity_s(text)
        with pytest.raises(ValueError, match="expr"):
            Activation.custom("x", text)
        assert not marker.exists(), text
    # and the valid path does not need sympify's parser either
    assert activation("sigmoid(2*z) + log(1+z)").expr.has(sympy.tanh)
    assert abs(complexity_s("1/(1-z)", R=0.5).value - 4 * 10**4) < 1e-7  # C*·Σ(i+1)/2^i = 4C*


def test_parse_errors_say_where_and_what_is_allowed():
    with pytest.raises(ValueError, match=r"unknown name 'y' at position 4.*allowed: .*sin, cos"):
        parse_expression("z + y", "phi")
    with pytest.raises(ValueError, match="phi 'z.x' cannot be read: unexpected character '.' at position 1"):
        parse_expression("z.x", "phi")
    with pytest.raises(ValueError, match="unexpected character ','"):
        parse_expression("sin(z, z)")
    with pytest.raises(ValueError, match="exactly one argument"):
        parse_expression("sin(z z)")
    with pytest.raises(ValueError, match="must be called as"):
        parse_expression("sin + z")
    with pytest.raises(ValueError, match="exponent .* too large"):
        parse_expression("z**2000")
    with pytest.raises(TypeError, match="expression must be a string"):
        parse_expression(3)


NON_ANALYTIC = [
    ("log(z)", "logarithmic singularity"),
    ("1/z", "vanishes at z = 0"),
    ("sqrt(z)", "vanishes at z = 0"),
    ("z**(1/3)", "vanishes at z = 0"),
    ("Abs(z)", "kink"),
    ("Abs(1+z)", "without Abs"),
    ("log(-1+z)", "not real"),
    ("sqrt(-1+z)", "not real"),
    ("asin(1+z)", "< 1"),
    ("atanh(1+z)", "< 1"),
    ("1/sin(z)", "vanishes at z = 0"),
    ("exp(1/z)", "vanishes at z = 0"),
    ("sin(z)/z", "vanishes at z = 0"),  # removable, but not supported (documented)
    ("z**z", "base"),
    ("1/tan(z)", "vanishes at z = 0"),
]


@pytest.mark.parametrize("text, reason", NON_ANALYTIC)
def test_functions_not_analytic_at_zero_are_rejected_clearly(text, reason):
    for call, name in [(lambda: activation(text), "spec"), (lambda: complexity_s(text), "act"),
                       (lambda: rl.complexity_eps(text, 0.01), "act")]:
        with pytest.raises(ValueError) as info:
            call()
        msg = str(info.value)
        assert msg.startswith(f"{name} "), msg
        assert "not analytic at z = 0" in msg and reason in msg, msg
        assert "Taylor series" in msg and "PolynomialError" not in msg and "sigmoid" not in msg, msg


def test_functions_analytic_at_zero_but_singular_elsewhere_are_accepted():
    for text in ["log(1+z)", "1/(1-z)", "sqrt(1+z)", "asin(z/2)", "(2+z)**z", "tan(z)", "1/(2-exp(z))"]:
        assert activation(text).expr.has(Z)


def test_sympy_expressions_are_checked_too():
    f = sympy.Function("f")
    with pytest.raises(ValueError, match="undefined function"):
        activation(f(Z))
    with pytest.raises(ValueError, match="not analytic"):
        activation(sympy.log(Z))
    with pytest.raises(ValueError, match="not supported"):
        activation(sympy.sign(Z))
    with pytest.raises(TypeError, match="spec must be"):
        activation(3.5)
    with pytest.raises(TypeError, match="expr must be"):
        Activation.custom("x", 3.5)
    assert activation(sympy.sin(sympy.Symbol("z"))).expr == sympy.sin(Z)  # plain Symbol('z') accepted
    assert math.isclose(float(activation("pi").expr), math.pi)  # constants are (analytic) activations
