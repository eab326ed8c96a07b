"""Smooth activations with a symbolic form (ResNet paper §5, eq 5.2).

Concept 1 builds F and G from two-layer networks whose activations
phi_{r,i} are smooth scalar functions. The complexity measures of §4 are
defined through the Taylor coefficients of phi at 0, so every activation
here carries an exact sympy expression (used for the series) and a torch
function (used to evaluate targets on tensors). Both come from the same
expression, so they cannot drift apart.

Expressions given as strings are read by a small parser of our own
(:func:`parse_expression`), never by ``sympy.sympify`` (which runs Python's
``eval`` on its input). The grammar, in decreasing precedence::

    atom    := NUMBER | z | pi | E | FUNC "(" expr ")" | "(" expr ")"
    power   := atom [("**" | "^") unary]          right-associative
    unary   := ("+" | "-") unary | power           -z**2 is -(z**2)
    term    := unary (("*" | "/") unary)*
    expr    := term (("+" | "-") term)*

NUMBER is a decimal literal (``2``, ``0.5``, ``1e-3``; read exactly, so
``0.1`` is 1/10), ``^`` is a synonym of ``**`` (as it was under sympify),
FUNC is one of :data:`FUNCTIONS`. Nothing else is accepted: no other names,
no underscores, attributes, strings, commas, keywords or lambdas.

Because the measures of §4 need a Taylor series at 0, every expression is
also checked to be analytic at z = 0 (``log(z)``, ``1/z``, ``sqrt(z)`` and
``Abs(z)`` are refused; ``log(1+z)``, ``1/(1-z)``, ``sqrt(1+z)`` are fine).
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import sympy
import torch
from sympy.core.function import AppliedUndef

from ..validation import Interval, Reals, validate_params

Z = sympy.Symbol("z", real=True)


def _either(tfn, mfn):
    """Use the torch function on tensors and the math one on plain numbers
    (sympy leaves constants such as sqrt(60) inside lambdified code)."""
    return lambda v: tfn(v) if torch.is_tensor(v) else mfn(v)


_TORCH_FUNCS = {
    name: _either(getattr(torch, tname), getattr(math, mname))
    for name, tname, mname in [
        ("sin", "sin", "sin"), ("cos", "cos", "cos"), ("tan", "tan", "tan"), ("exp", "exp", "exp"),
        ("tanh", "tanh", "tanh"), ("sinh", "sinh", "sinh"), ("cosh", "cosh", "cosh"),
        ("log", "log", "log"), ("sqrt", "sqrt", "sqrt"), ("atan", "atan", "atan"),
        ("asin", "asin", "asin"), ("acos", "acos", "acos"), ("asinh", "asinh", "asinh"),
        ("atanh", "atanh", "atanh"), ("Abs", "abs", "fabs"),
    ]
}


def _sigmoid(u):
    # 1/(1+exp(-u)) written as (1 + tanh(u/2))/2: the same function, in a form whose
    # Taylor series sympy's ring series computes quickly
    return (1 + sympy.tanh(u / 2)) / 2


FUNCTIONS: dict[str, Callable[[sympy.Expr], sympy.Expr]] = {
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan,
    "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh,
    "exp": sympy.exp, "log": sympy.log, "sqrt": sympy.sqrt,
    "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan,
    "asinh": sympy.asinh, "atanh": sympy.atanh,
    "sigmoid": _sigmoid,
    "Abs": sympy.Abs,  # parsed so that it can be refused as non-analytic with a clear message
}
"""Function names accepted in expression strings (each takes one argument)."""

CONSTANTS = {"pi": sympy.pi, "E": sympy.E}
"""Named constants accepted in expression strings."""

_FUNC_CLASSES = (sympy.sin, sympy.cos, sympy.tan, sympy.sinh, sympy.cosh, sympy.tanh, sympy.exp,
                 sympy.log, sympy.asin, sympy.acos, sympy.atan, sympy.asinh, sympy.atanh, sympy.Abs)

MAX_LENGTH = 500
"""Longest expression string accepted."""
MAX_DEPTH = 40
"""Deepest nesting of parentheses / unary signs / powers accepted."""
MAX_EXPONENT = 1000
"""Largest |exponent| of a power (keeps z**10**10 and 9**9**9 from hanging)."""

_ALLOWED_TEXT = (
    "allowed: decimal numbers, the symbol z, the constants pi and E, the operators + - * / ** "
    "(^ means **), parentheses, and the functions " + ", ".join(FUNCTIONS) + " with one argument each"
)

_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z][A-Za-z0-9]*)"
    r"|(?P<op>\*\*|[-+*/^()]))"
)


class _ParseError(ValueError):
    pass


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None:
            bad = text[pos:].lstrip()[0]
            where = len(text) - len(text[pos:].lstrip())
            raise _ParseError(f"unexpected character {bad!r} at position {where}")
        kind = m.lastgroup
        out.append((kind, m.group(kind), m.start(kind)))
        pos = m.end()
    return out


class _Parser:
    """Recursive descent over the grammar in the module docstring; builds sympy objects directly."""

    def __init__(self, text: str):
        self.tokens = _tokenize(text)
        self.i = 0
        self.depth = 0

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else (None, None, None)

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, value):
        kind, val, pos = self.take()
        if val != value:
            found = "the end of the expression" if kind is None else f"{val!r} at position {pos}"
            raise _ParseError(f"expected {value!r}, found {found}")

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _ParseError(f"expression nested deeper than {MAX_DEPTH} levels")

    def parse(self) -> sympy.Expr:
        if not self.tokens:
            raise _ParseError("empty expression")
        e = self.expr()
        kind, val, pos = self.peek()
        if kind is not None:
            raise _ParseError(f"unexpected {val!r} at position {pos} (expected an operator or the end)")
        return e

    def expr(self):
        e = self.term()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            rhs = self.term()
            e = e + rhs if op == "+" else e - rhs
        return e

    def term(self):
        e = self.unary()
        while self.peek()[1] in ("*", "/"):
            op = self.take()[1]
            rhs = self.unary()
            if op == "/" and rhs == 0:
                raise _ParseError("division by zero")
            e = e * rhs if op == "*" else e / rhs
        return e

    def unary(self):
        if self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            self.enter()
            e = self.unary()
            self.depth -= 1
            return -e if op == "-" else e
        return self.power()

    def power(self):
        base = self.atom()
        if self.peek()[1] in ("**", "^"):
            self.take()
            self.enter()
            exponent = self.unary()
            self.depth -= 1
            return _pow(base, exponent)
        return base

    def atom(self):
        kind, val, pos = self.take()
        if kind is None:
            raise _ParseError("unexpected end of the expression")
        if kind == "num":
            return _number(val)
        if kind == "op":
            if val != "(":
                raise _ParseError(f"unexpected {val!r} at position {pos}")
            self.enter()
            e = self.expr()
            self.expect(")")
            self.depth -= 1
            return e
        if val == "z":
            return Z
        if val in CONSTANTS:
            return CONSTANTS[val]
        if val in FUNCTIONS:
            if self.peek()[1] != "(":
                raise _ParseError(f"function {val!r} at position {pos} must be called as {val}(...)")
            self.take()
            self.enter()
            arg = self.expr()
            if self.peek()[1] != ")":
                k, v, p = self.peek()
                found = "the end" if k is None else f"{v!r} at position {p}"
                raise _ParseError(f"{val}(...) takes exactly one argument; expected ')', found {found}")
            self.take()
            self.depth -= 1
            return FUNCTIONS[val](arg)
        raise _ParseError(f"unknown name {val!r} at position {pos} (expressions depend only on z)")


def _number(text: str) -> sympy.Rational:
    mant, _, exp = text.lower().partition("e")
    if len(mant) > 40 or (exp and abs(int(exp)) > 300):
        raise _ParseError(f"number {text!r} is too long or too large (at most 40 digits, exponent within ±300)")
    return sympy.Rational(text)


def _pow(base, exponent):
    if exponent.is_Number and abs(exponent) > MAX_EXPONENT:
        raise _ParseError(f"exponent {exponent} is too large (|exponent| ≤ {MAX_EXPONENT})")
    if base.is_Number and exponent.is_Number and base not in (0, 1, -1):
        size = abs(float(exponent)) * abs(float(sympy.log(abs(base), 10)))
        if size > MAX_EXPONENT:
            raise _ParseError(f"the number {base}**{exponent} is too large to form exactly")
    if base.is_Number and base == 0 and exponent.is_Number and exponent < 0:
        raise _ParseError("division by zero (0 raised to a negative power)")
    return base**exponent


def parse_expression(text, name: str = "expression") -> sympy.Expr:
    """Read an expression in z without evaluating any code.

    The grammar is the one in the module docstring; nothing outside it is accepted.

    Parameters
    ----------
    text : str
        The expression, at most :data:`MAX_LENGTH` characters, e.g. ``"sin(3*z)"`` or ``"log(1+z)"``.
    name : str, default "expression"
        The argument's name, used in error messages.

    Returns
    -------
    sympy.Expr
        The expression, built from sympy objects directly.

    Raises
    ------
    TypeError
        If ``text`` is not a string.
    ValueError
        If ``text`` is too long or cannot be read; the message names ``name`` and lists what is allowed.
    """
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ValueError(f"{name} is {len(text)} characters long; at most {MAX_LENGTH} are accepted")
    try:
        return _Parser(text).parse()
    except _ParseError as exc:
        raise ValueError(f"{name} {text!r} cannot be read: {exc}; {_ALLOWED_TEXT}") from None
    except RecursionError:  # pragma: no cover - MAX_DEPTH keeps the recursion shallow
        raise ValueError(f"{name} {text!r} is nested too deeply; {_ALLOWED_TEXT}") from None


@dataclass(frozen=True)
class Activation:
    """A scalar activation phi(z) with an exact symbolic form (§5, eq 5.2).

    Build instances with :func:`activation` (registry names, expression strings) or :meth:`Activation.custom`;
    calling an instance applies ``fn``.

    Parameters
    ----------
    name : str
        A label for tables and legends.
    expr : sympy.Expr
        The activation as a sympy expression in :data:`Z`, analytic at 0 (the measures of §4 read its Taylor
        coefficients there).
    fn : callable
        Maps a tensor elementwise; excluded from comparisons and the repr.
    """

    name: str
    expr: sympy.Expr
    fn: Callable[[torch.Tensor], torch.Tensor] = field(compare=False, repr=False)

    def __call__(self, t: torch.Tensor) -> torch.Tensor:
        return self.fn(t)

    @classmethod
    def custom(cls, name: str, expr, fn: Callable | None = None) -> Activation:
        """An activation from a sympy expression (or an expression string) in ``z``.

        Parameters
        ----------
        name : str
            The activation's label.
        expr : str or sympy.Expr
            Its symbolic form; a string is parsed by :func:`parse_expression`, never evaluated. It must depend only on
            z and be analytic at z = 0.
        fn : callable or None, default None
            A tensor function for the same activation. ``None`` derives it from ``expr``; a given one is checked
            against ``expr`` at 7 points of [-0.9, 0.9], so a callable whose symbolic form is wrong is rejected
            instead of silently giving the complexities of a different function.

        Returns
        -------
        Activation

        Raises
        ------
        TypeError
            If ``name`` is not a string, ``fn`` is not callable or ``expr`` is neither a string nor a sympy expression.
        ValueError
            If ``expr`` cannot be read, depends on another symbol, is not analytic at 0, or disagrees with ``fn``.
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a string, got {type(name).__name__}")
        expr = _as_expr(expr, "expr")
        auto = _lambdify(expr)
        if fn is None:
            fn = auto
        else:
            if not callable(fn):
                raise TypeError(f"fn must be callable, got {type(fn).__name__}")
            pts = torch.linspace(-0.9, 0.9, 7, dtype=torch.float64)
            got, want = fn(pts), auto(pts)
            if not torch.allclose(got, want, rtol=1e-8, atol=1e-10):
                raise ValueError(
                    f"activation {name!r}: the callable fn and its symbolic form {expr} "
                    f"disagree on [-0.9, 0.9] (max gap {float((got - want).abs().max()):.3g})"
                )
        return cls(name, expr, fn)


def _as_expr(expr, name: str) -> sympy.Expr:
    """A checked sympy expression in Z from a string (parsed, never evaluated) or a sympy expression."""
    text = expr if isinstance(expr, str) else None
    if isinstance(expr, str):
        expr = parse_expression(expr, name)
    elif not isinstance(expr, sympy.Expr):
        raise TypeError(
            f"{name} must be an expression string in z or a sympy expression, got {type(expr).__name__}"
        )
    free = expr.free_symbols
    if free - {Z}:
        # accept a plain Symbol('z') (without the real assumption) too
        named = {s for s in free if isinstance(s, sympy.Symbol) and s.name == "z"}
        if free - named:
            raise ValueError(
                f"{name} {expr} must depend only on z; found {sorted(map(str, free))}"
            )
        expr = expr.subs({s: Z for s in named})
    _check_nodes(expr, name)
    _check_analytic(expr, name, text if text is not None else str(expr))
    return expr


def _check_nodes(expr: sympy.Expr, name: str) -> None:
    """Only numbers, z, pi, E, + * ** and the whitelisted functions (sympy inputs too)."""
    for node in sympy.preorder_traversal(expr):
        if node.is_Number or node == Z or node in (sympy.pi, sympy.E):
            continue
        if isinstance(node, (sympy.Add, sympy.Mul, sympy.Pow)):
            continue
        if isinstance(node, _FUNC_CLASSES):
            if len(node.args) != 1:
                raise ValueError(f"{name} {expr}: {node.func.__name__} must have one argument")
            continue
        what = "an undefined function" if isinstance(node, AppliedUndef) else type(node).__name__
        raise ValueError(f"{name} {expr} contains {node} ({what}), which is not supported; {_ALLOWED_TEXT}")


def _at0(e: sympy.Expr):
    """e(0) as (exact sympy value, float or complex approximation)."""
    v = e.subs(Z, 0)
    if v.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return v, complex("nan")
    c = complex(sympy.N(v, 30))
    return v, c


def _is_zero(v, c) -> bool:
    if v.is_zero:
        return True
    return abs(c) < 1e-25


_ANALYTIC_HELP = (
    "the complexity measures ℭ_ε and ℭ_s of §4 are defined from the Taylor series of the activation "
    "at 0, so it must be real-analytic at z = 0 (log(1+z), 1/(1-z), sqrt(1+z) are fine; log(z), 1/z, "
    "sqrt(z), Abs(z) are not; removable singularities such as sin(z)/z are not supported either)"
)


def _check_analytic(expr: sympy.Expr, name: str, text: str) -> None:
    """Every sub-expression is evaluated at 0 and each function must be analytic (and real) there."""

    def fail(reason):
        raise ValueError(f"{name} {text!r} is not analytic at z = 0: {reason}; {_ANALYTIC_HELP}")

    for node in sympy.preorder_traversal(expr):
        if not node.has(Z):
            continue
        if isinstance(node, sympy.Pow):
            b, x = node.args
            if x.has(Z):
                bv, bc = _at0(b)
                if not (abs(bc.imag) < 1e-25 and bc.real > 0):
                    fail(f"{node} needs its base {b} > 0 at z = 0 (it is {bv})")
            elif x.is_Integer and x >= 0:
                continue
            else:
                bv, bc = _at0(b)
                if bc != bc or _is_zero(bv, bc):
                    fail(f"{b} vanishes at z = 0 and is raised to the power {x}")
                if not x.is_Integer and not (abs(bc.imag) < 1e-25 and bc.real > 0):
                    fail(f"({b})**({x}) is not real near z = 0 ({b} = {bv} there)")
        elif isinstance(node, sympy.Abs):
            av, ac = _at0(node.args[0])
            if _is_zero(av, ac):
                fail(f"{node} has a kink at z = 0")
            fail(f"{node} is not analytic where {node.args[0]} changes sign, and its Taylor series at 0 "
                 "does not represent it beyond that point; write the expression without Abs")
        elif isinstance(node, sympy.log):
            uv, uc = _at0(node.args[0])
            if uc != uc or _is_zero(uv, uc):
                fail(f"{node} has a logarithmic singularity at z = 0")
            if not (abs(uc.imag) < 1e-25 and uc.real > 0):
                fail(f"{node} is not real near z = 0 ({node.args[0]} = {uv} there)")
        elif isinstance(node, (sympy.asin, sympy.acos, sympy.atanh)):
            uv, uc = _at0(node.args[0])
            if not (abs(uc.imag) < 1e-25 and abs(uc.real) < 1):
                fail(f"{node} needs |{node.args[0]}| < 1 at z = 0 (it is {uv})")
        elif isinstance(node, sympy.tan):
            uv, uc = _at0(node.args[0])
            if abs(math.cos(uc.real)) < 1e-25:
                fail(f"{node} has a pole at z = 0")
    v, c = _at0(expr)
    if c != c or abs(c.imag) > 1e-25:
        fail(f"its value at 0 is {v}")


def _lambdify(expr: sympy.Expr) -> Callable[[torch.Tensor], torch.Tensor]:
    # lambdify generates code from the (checked) expression tree, not from user text
    f = sympy.lambdify(Z, expr, modules=[_TORCH_FUNCS, "math"])
    if expr.free_symbols:
        return f
    value = float(expr)
    return lambda t: torch.full_like(t, value)


@validate_params({"coeffs": Reals()})
def _poly(coeffs) -> sympy.Expr:
    if len(coeffs) > MAX_EXPONENT + 1:
        raise ValueError(f"coeffs must hold at most {MAX_EXPONENT + 1} values, got {len(coeffs)}")
    return sum(sympy.nsimplify(c) * Z**i for i, c in enumerate(coeffs))


@validate_params({"c": Interval(float)})
def _c(c) -> sympy.Expr:
    return sympy.nsimplify(c)


@validate_params({"c": Interval(float), "p": Interval(int, 0, MAX_EXPONENT)})
def _power(p=2, c=1) -> sympy.Expr:
    return _c(c) * Z ** p


# name -> (builder from keyword parameters, description)
_REGISTRY: dict[str, tuple[Callable[..., sympy.Expr], str]] = {
    "sin": (lambda c=1: sympy.sin(_c(c) * Z), "sin(c*z)"),
    "cos": (lambda c=1: sympy.cos(_c(c) * Z), "cos(c*z)"),
    "exp": (lambda c=1: sympy.exp(_c(c) * Z) - 1, "exp(c*z) - 1"),
    "tanh": (lambda c=1: sympy.tanh(_c(c) * Z), "tanh(c*z)"),
    "sigmoid": (lambda c=1: _sigmoid(_c(c) * Z), "1/(1+exp(-c*z)) = (1 + tanh(c*z/2))/2"),
    "power": (_power, "c*z**p (p an integer in [0, 1000])"),
    "poly": (_poly, "c0 + c1*z + c2*z**2 + ... (coeffs=[c0, c1, ...])"),
}


def activation_names() -> list[str]:
    """The names accepted by :func:`activation`, each with its formula.

    Returns
    -------
    list of str
        Entries ``"name: formula"``, e.g. ``"sin: sin(c*z)"``.
    """
    return [f"{k}: {v[1]}" for k, v in _REGISTRY.items()]


def resolve(spec, params: dict, name: str) -> Activation:
    """:func:`activation` for a function's argument called ``name``.

    The same lookup of ``spec`` with ``params``, with error messages naming that argument (``"act"``,
    ``"outer"``, ...). The complexity measures (§4) and the Taylor series read their activation arguments through it.

    Parameters
    ----------
    spec : str, sympy.Expr or Activation
        A registry name (see :func:`activation_names`), an expression string in ``z``, a sympy expression, or an
        existing :class:`Activation` (returned as it is).
    params : dict
        Keyword parameters of a registry name (e.g. ``{"c": 3}``); must be empty for any other ``spec``.
    name : str
        The caller's argument name, for error messages.

    Returns
    -------
    Activation

    Raises
    ------
    TypeError
        If ``spec`` is of none of the accepted types.
    ValueError
        If ``params`` do not fit ``spec``, ``spec`` is an unknown name, or its expression is not accepted.
    """
    if isinstance(spec, Activation):
        if params:
            raise ValueError(f"{name}: parameters {sorted(params)} cannot be applied to an existing Activation")
        return spec
    if isinstance(spec, str) and spec in _REGISTRY:
        builder, _ = _REGISTRY[spec]
        allowed = list(inspect.signature(builder).parameters)
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            raise ValueError(f"activation {spec!r} takes the parameters {allowed}; got unexpected {unknown}")
        expr = builder(**params)
        label = spec + (
            "(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")" if params else ""
        )
        return Activation.custom(label, expr)
    if isinstance(spec, (str, sympy.Expr)):
        if params:
            raise ValueError(f"{name}: parameters {sorted(params)} apply only to the registry names "
                             f"{sorted(_REGISTRY)}")
        if isinstance(spec, str) and re.fullmatch(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*", spec) \
                and spec.strip() not in ("z", *CONSTANTS):
            raise ValueError(
                f"unknown activation {spec!r} for {name}; allowed: registry names {sorted(_REGISTRY)}, "
                "an expression string in z, a sympy expression, or an Activation"
            )
        expr = _as_expr(spec, name)
        return Activation.custom(str(expr), expr)
    raise TypeError(
        f"{name} must be a registry name {sorted(_REGISTRY)}, an expression string in z, a sympy "
        f"expression or an Activation; got {spec!r} ({type(spec).__name__})"
    )


def activation(spec, **params) -> Activation:
    """Look up an activation.

    The function must be analytic at 0, since the measures of §4 are defined from its Taylor series there.

    Parameters
    ----------
    spec : str, sympy.Expr or Activation
        A registry name (see :func:`activation_names`), an expression string in ``z`` (parsed with
        :func:`parse_expression`, never evaluated), a sympy expression, or an existing :class:`Activation`.
    **params
        Parameters of a registry name, e.g. ``c`` for ``"sin"`` (sin(c·z)), ``p`` and ``c`` for ``"power"``,
        ``coeffs`` for ``"poly"``.

    Returns
    -------
    Activation

    Raises
    ------
    TypeError, ValueError
        As :func:`resolve`, naming the argument ``spec``.

    Examples
    --------
    >>> activation("sin", c=3).expr
    sin(3*z)
    """
    return resolve(spec, params, "spec")
