"""The chi-square test of the dice, against published values and closed forms."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from web.stats import MIN_DICE, chi2_sf, chi_square, fairness, upper_gamma_q


# Critical values of the chi-square distribution (NIST/SEMATECH e-Handbook, table 1.3.6.7.4):
# the upper-tail probability of each is exactly the column it comes from.
@pytest.mark.parametrize(
    ("x", "df", "p"),
    [
        (11.070, 5, 0.05),
        (15.086, 5, 0.01),
        (20.515, 5, 0.001),
        (9.236, 5, 0.10),
        (1.145, 5, 0.95),
        (0.554, 5, 0.99),
        (3.841, 1, 0.05),
        (6.635, 1, 0.01),
        (5.991, 2, 0.05),
        (18.307, 10, 0.05),
        (43.773, 30, 0.05),
        (124.342, 100, 0.05),
    ],
    ids=lambda v: str(v),
)
def test_published_critical_values(x: float, df: int, p: float) -> None:
    """chi2.sf at the tabulated critical values gives the table's tail probability."""
    assert chi2_sf(x, df) == pytest.approx(p, rel=2e-3)


def closed_form_sf(x: float, df: int) -> float:
    """The chi-square tail by its finite sums: Poisson terms (even df), erfc plus terms (odd)."""
    half = x / 2
    if df % 2 == 0:
        return math.exp(-half) * sum(half**i / math.factorial(i) for i in range(df // 2))
    total = math.erfc(math.sqrt(half))
    term = math.sqrt(x) * math.exp(-half) / math.sqrt(math.pi / 2)  # the k = 3 term
    for k in range(3, df + 1, 2):
        total += term
        term *= x / (k)
    return total


@settings(max_examples=200, deadline=None)
@given(
    x=st.floats(min_value=0.0, max_value=200.0, allow_nan=False),
    df=st.integers(min_value=1, max_value=40),
)
def test_agrees_with_the_closed_forms(x: float, df: int) -> None:
    """Series and continued fraction both match the exact finite sums, on each side of a+1."""
    assert chi2_sf(x, df) == pytest.approx(closed_form_sf(x, df), rel=1e-9, abs=1e-300)


@settings(max_examples=100, deadline=None)
@given(
    a=st.floats(min_value=0.05, max_value=60.0),
    x=st.floats(min_value=0.0, max_value=120.0),
    dx=st.floats(min_value=0.01, max_value=10.0),
)
def test_upper_gamma_is_a_falling_probability(a: float, x: float, dx: float) -> None:
    """Q(a, x) lies in [0, 1] and never rises with x."""
    q, later = upper_gamma_q(a, x), upper_gamma_q(a, x + dx)
    assert 0.0 <= later <= q <= 1.0


def test_edges_of_the_gamma_function() -> None:
    """Q(a, 0) = 1, Q(a, inf) = 0, Q(1, x) = e^-x, and a bad argument says what is wrong."""
    assert upper_gamma_q(2.5, 0.0) == 1.0
    assert upper_gamma_q(2.5, math.inf) == 0.0
    assert upper_gamma_q(1.0, 7.0) == pytest.approx(math.exp(-7.0), rel=1e-12)
    with pytest.raises(ValueError, match=r"Q\(a, x\) needs a > 0, not a = 0"):
        upper_gamma_q(0, 1.0)
    with pytest.raises(ValueError, match=r"Q\(a, x\) needs x >= 0, not x = -1.0"):
        upper_gamma_q(1.0, -1.0)


@pytest.mark.parametrize(
    ("counts", "statistic"),
    [
        ({1: 10, 2: 10, 3: 10, 4: 10, 5: 10, 6: 10}, 0.0),
        ({1: 60}, 300.0),  # one face only: (50^2 + 5 * 10^2) / 10
        ({1: 5, 2: 15, 3: 10, 4: 10, 5: 10, 6: 10}, 5.0),
        ({}, 0.0),
    ],
    ids=["even", "one-face", "two-off", "none"],
)
def test_chi_square_statistic(counts: dict[int, int], statistic: float) -> None:
    """Pearson's sum of (observed - expected)^2 / expected over the six faces."""
    assert chi_square(counts) == pytest.approx(statistic)


def test_verdicts() -> None:
    """Too few dice say so; a die showing mostly sixes is suspicious; an even one is fair."""
    few = fairness(dict.fromkeys(range(1, 7), 4))
    assert (few["dice_read"], few["verdict"]) == (24, "too few dice")
    assert MIN_DICE > 24
    loaded = fairness({1: 8, 2: 8, 3: 8, 4: 8, 5: 8, 6: 40})
    assert loaded["verdict"] == "suspicious"
    assert loaded["faces"] == {"1": 8, "2": 8, "3": 8, "4": 8, "5": 8, "6": 40}
    even = fairness({1: 11, 2: 9, 3: 10, 4: 12, 5: 8, 6: 10})
    assert even["verdict"] == "fair"
    assert even["chi_square"] == 1.0
    assert even["p_value"] == pytest.approx(0.962566, abs=1e-6)
    with pytest.raises(ValueError, match=r"a die shows 1 to 6; the counts have faces \[7\]"):
        fairness({7: 1})
