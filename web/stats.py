"""How fair the dice have been: Pearson's chi-square over face counts, in pure Python.

The p-value is the chi-square survival function, ``Q(k/2, x/2)``: the regularised upper
incomplete gamma function, from its series below ``a + 1`` and from its continued fraction
above (Numerical Recipes, 6.2), so the Pi needs no SciPy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

FACES = (1, 2, 3, 4, 5, 6)
MIN_DICE = 30
"""Fewer dice than this (5 expected per face) make the chi-square approximation unreliable."""
SUSPICIOUS_BELOW = 0.01
"""A p-value below this is called suspicious: 1 in 100 fair sets of dice, since the test is
looked at again after every roll and 1 in 20 would cry wolf too often."""

_EPS = 1e-15
_TINY = 1e-300
_MAX_TERMS = 10_000

Verdict = Literal["fair", "suspicious", "too few dice"]


def upper_gamma_q(a: float, x: float) -> float:
    """The regularised upper incomplete gamma function Q(a, x) = Γ(a, x) / Γ(a).

    >>> round(upper_gamma_q(1.0, 2.0), 12) == round(math.exp(-2.0), 12)
    True
    """
    if a <= 0:
        raise ValueError(f"Q(a, x) needs a > 0, not a = {a!r}")
    if x < 0 or math.isnan(x):
        raise ValueError(f"Q(a, x) needs x >= 0, not x = {x!r}")
    if x == 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    log_prefix = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        # Series for P(a, x): x^a e^-x / Γ(a+1) * Σ x^n / ((a+1)...(a+n)).
        term = total = 1.0 / a
        denominator = a
        for _ in range(_MAX_TERMS):
            denominator += 1
            term *= x / denominator
            total += term
            if abs(term) < abs(total) * _EPS:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefix))
    # Continued fraction for Q(a, x) by the modified Lentz method.
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    h = d
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPS:
            break
    return min(1.0, math.exp(log_prefix) * h)


def chi2_sf(x: float, df: int) -> float:
    """The probability that a chi-square variable with ``df`` degrees of freedom exceeds ``x``.

    >>> round(chi2_sf(11.0705, 5), 4)
    0.05
    """
    if df < 1:
        raise ValueError(f"a chi-square distribution has at least 1 degree of freedom, not {df}")
    return upper_gamma_q(df / 2, max(x, 0.0) / 2)


def chi_square(counts: Mapping[int, int]) -> float:
    """Pearson's statistic of face counts against a fair die (every face equally likely).

    >>> chi_square({1: 10, 2: 10, 3: 10, 4: 10, 5: 10, 6: 10})
    0.0
    >>> chi_square({1: 12, 2: 8, 3: 10, 4: 10, 5: 10, 6: 10})
    0.8
    """
    observed = [counts.get(face, 0) for face in FACES]
    n = sum(observed)
    if n == 0:
        return 0.0
    expected = n / len(FACES)
    return sum((o - expected) ** 2 for o in observed) / expected


def fairness(counts: Mapping[int, int]) -> dict[str, object]:
    """The statistics shown on the phones: counts, chi-square, p-value (5 df) and a verdict.

    >>> fairness({1: 3, 2: 1})["verdict"]
    'too few dice'
    """
    unknown = sorted(set(counts) - set(FACES))
    if unknown:
        raise ValueError(f"a die shows 1 to 6; the counts have faces {unknown}")
    n = sum(counts.get(face, 0) for face in FACES)
    x = chi_square(counts)
    p = chi2_sf(x, len(FACES) - 1)
    verdict: Verdict
    if n < MIN_DICE:
        verdict = "too few dice"
    elif p < SUSPICIOUS_BELOW:
        verdict = "suspicious"
    else:
        verdict = "fair"
    return {
        "faces": {str(face): counts.get(face, 0) for face in FACES},
        "dice_read": n,
        "chi_square": round(x, 4),
        "p_value": round(p, 6),
        "verdict": verdict,
    }
