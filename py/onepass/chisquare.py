"""Pearson's chi-squared goodness-of-fit test: do observed counts follow a distribution p?

Step 6's sampling panel draws 10,000 tokens with the speculative sampling rule
and asks whether their frequencies are those of the target p. The statistic is
sum((observed - expected)^2 / expected) over the tokens with p > 0; with k such
tokens it follows a chi-squared law with k - 1 degrees of freedom when the rule
is exact. The p-value is that law's upper tail, the regularised upper incomplete
gamma function Q(dof / 2, statistic / 2), computed as in Press et al.,
"Numerical Recipes" (3rd ed., 2007), section 6.2: a series below a + 1, a
continued fraction above.
"""

import math

from .contract import Verdict

LEVEL = 0.05  # the verdict's significance level
_EPS = 1e-15
_ITERATIONS = 500
_TINY = 1e-300


def chi_square(counts: list[int], p: list[float], level: float = LEVEL) -> Verdict:
    draws = sum(counts)
    cells = [(count, draws * p_i) for count, p_i in zip(counts, p) if p_i > 0]
    # A token p never gives cannot be drawn by an exact rule: any such draw refutes it outright.
    if any(count for count, p_i in zip(counts, p) if p_i <= 0):
        return verdict(math.inf, max(1, len(cells) - 1), 0.0, level)
    statistic = sum((count - expected) ** 2 / expected for count, expected in cells)
    dof = len(cells) - 1
    return verdict(statistic, dof, upper_tail(statistic, dof) if dof > 0 else 1.0, level)


def verdict(statistic: float, dof: int, p_value: float, level: float) -> Verdict:
    """The test's outcome; the counts are consistent with p at ``level`` when p_value is at least it (no evidence
    against exactness)."""
    return Verdict(statistic=statistic, dof=dof, p_value=p_value, level=level, consistent=p_value >= level)


def upper_tail(statistic: float, dof: int) -> float:
    """P(X >= statistic) for X chi-squared with ``dof`` degrees of freedom."""
    return gamma_q(dof / 2, statistic / 2)


def gamma_q(a: float, x: float) -> float:
    """The regularised upper incomplete gamma function Q(a, x)."""
    if x <= 0:
        return 1.0
    if x < a + 1:
        return 1.0 - _gamma_p_series(a, x)
    return _gamma_q_fraction(a, x)


def _prefactor(a: float, x: float) -> float:
    return math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_p_series(a: float, x: float) -> float:
    term = total = 1.0 / a
    for n in range(1, _ITERATIONS):
        term *= x / (a + n)
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * _prefactor(a, x)


def _gamma_q_fraction(a: float, x: float) -> float:
    # Lentz's method for the continued fraction of Q(a, x).
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, _ITERATIONS):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h * _prefactor(a, x)


POOLED = 10  # cells seen fewer times than this in both samples together are pooled into one


def two_samples(first: dict, second: dict, level: float = LEVEL) -> Verdict:
    """Pearson's chi-squared test of homogeneity: do two samples of outcomes (counts by outcome) come from one
    distribution? Rare outcomes are pooled into one cell, as the test needs expected counts of a few at least.

    Drafted sampling against plain sampling, run for run: if the speculative rule is exact, the two are draws
    of the same distribution, and the p-value is uniform; a wrong rule drives it to zero.
    """
    total_1, total_2 = sum(first.values()), sum(second.values())
    if not total_1 or not total_2:
        raise ValueError("two samples with at least one outcome each are needed")
    cells, rare = [], [0, 0]
    for outcome in set(first) | set(second):
        pair = (first.get(outcome, 0), second.get(outcome, 0))
        if sum(pair) < POOLED:
            rare = [rare[0] + pair[0], rare[1] + pair[1]]
        else:
            cells.append(pair)
    if sum(rare):
        cells.append(tuple(rare))
    share_1 = total_1 / (total_1 + total_2)
    statistic = 0.0
    for a, b in cells:
        expected_1, expected_2 = (a + b) * share_1, (a + b) * (1 - share_1)
        statistic += (a - expected_1) ** 2 / expected_1 + (b - expected_2) ** 2 / expected_2
    dof = len(cells) - 1
    return verdict(statistic, dof, upper_tail(statistic, dof) if dof > 0 else 1.0, level)
