"""resnetlearn.classroom.check: unanswered, right and typical wrong answers print fixed lines."""

import math

import pytest

from resnetlearn.classroom import check

CASES = [
    # function, right answer, [(typical wrong answer, words its explanation must contain)]
    (check.k_alpha_squared, 1.35, [(0.09, "α², the error of one output"), (4.5, "k·α"), (16.35, "predicting 0")]),
    (check.zero_predictor_error, 16.35, [(15, "only E‖β·F‖²"), (15 * 1.3**2, "cross term"), (1.35, "k·α²")]),
    (check.composite_degree, 8, [(4, "degree of G"), (2, "degree of F"), (16, "degrees add to 8")]),
    (check.parities_up_to_degree, 466, [(435, "exactly 2"), (465, "constant"), (900, "d^2")]),
    (check.theorem1_alpha_max, 1 / 6e6, [(1 / 4e5, "factor k"), (1 / 7.5e5, "p_G"), (2e-5, "k·p_G")]),
    (check.kernel_n_max_arxiv, 27.405, [(27405, "1/1000"), (900, "NeurIPS")]),
    (check.composition_ratio, 30**5, [(30**10, "not d^10"), (math.sqrt(30), "√d")]),
]


@pytest.mark.parametrize("fn,right,wrongs", CASES, ids=[c[0].__name__ for c in CASES])
def test_unanswered_right_and_wrong(fn, right, wrongs, capsys):
    assert fn(None) is None
    assert "not answered yet — hint:" in capsys.readouterr().out
    assert fn(right) is True
    assert ": correct — " in capsys.readouterr().out
    for wrong, words in wrongs:
        assert fn(wrong) is False
        out = capsys.readouterr().out
        assert "not quite — " in out and words in out, (wrong, out)
    assert fn(123456.789) is False
    assert "hint:" in capsys.readouterr().out
    assert fn("a lot") is False
    assert "give a number" in capsys.readouterr().out


def test_lines_are_fixed(capsys):
    check.k_alpha_squared(None)
    check.k_alpha_squared(1.35)
    assert capsys.readouterr().out == (
        "k·α²: not answered yet — hint: the error is summed over the k outputs; each misses α·G_i(F(x))\n"
        "  with G_i = ±1\n"
        "k·α²: correct — each of the k = 15 outputs misses α·G_i = ±0.3, so the error is k·α² = 1.35\n")


def test_lines_fit_a_classroom_screen(capsys):
    """No printed line is wider than check.WIDTH (96) columns: wider ones wrap mid-word in JupyterLab at 1280 px."""
    for name in ("zero_predictor_error", "k_alpha_squared", "composite_degree", "parities_up_to_degree",
                 "composition_ratio", "theorem1_alpha_max"):
        getattr(check, name)(None)
    out = capsys.readouterr().out
    assert out and max(map(len, out.splitlines())) <= check.WIDTH


def test_rounded_answers_within_half_percent():
    assert check.theorem1_alpha_max(1.67e-7) is True
    assert check.kernel_n_max_arxiv(27.4) is True
    assert check.k_alpha_squared(1.349) is False  # exact quantities: no rounding slack
