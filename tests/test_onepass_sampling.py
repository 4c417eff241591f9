"""Speculative sampling keeps the target's distribution: exactly on paper, and in 20,000 seeded draws.

For each (p, q) pair, the tokens kept by the rule must follow p: the χ² statistic
of the observed counts is compared with the 0.1 % critical value (Wilson–Hilferty
approximation, so no scipy), and tokens with p = 0 must never appear.
"""

import math
import random
from fractions import Fraction

import pytest

from onepass.sampling import accept, draw, remainder, speculative_step, tally

DRAWS = 20_000
Z_999 = 3.0902  # the standard normal's 99.9th percentile

PAIRS = {
    "close": ([0.5, 0.3, 0.2], [0.4, 0.4, 0.2]),
    "q with zeros": ([0.2, 0.3, 0.1, 0.4], [0.0, 0.6, 0.0, 0.4]),
    "p with zeros": ([0.0, 0.7, 0.3, 0.0], [0.25, 0.25, 0.25, 0.25]),
    "p equals q": ([0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4]),
    "disjoint supports": ([0.6, 0.4, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5]),
    "peaked draft": ([0.05, 0.05, 0.1, 0.2, 0.6], [0.9, 0.025, 0.025, 0.025, 0.025]),
}


def chi_square(counts: list[int], p: list[float]) -> tuple[float, int]:
    total = sum(counts)
    cells = [(count, total * p_i) for count, p_i in zip(counts, p) if p_i > 0]
    return sum((count - expected) ** 2 / expected for count, expected in cells), len(cells) - 1


def critical_value(df: int) -> float:
    """The 99.9 % point of χ² with ``df`` degrees of freedom (Wilson–Hilferty)."""
    h = 2 / (9 * df)
    return df * (1 - h + Z_999 * math.sqrt(h)) ** 3


@pytest.mark.parametrize("name", PAIRS)
def test_kept_tokens_follow_the_target(name):
    p, q = PAIRS[name]
    result = tally(p, q, DRAWS, random.Random(20231130))
    statistic, df = chi_square(result.counts, p)
    assert statistic < critical_value(df), (result.frequencies(), p)
    assert all(count == 0 for count, p_i in zip(result.counts, p) if p_i == 0)


@pytest.mark.parametrize("name", PAIRS)
def test_the_two_routes_add_up_to_p_exactly(name):
    """q(x)·min(1, p/q) + P(reject)·remainder(x) = p(x), in exact fractions."""
    p, q = ([Fraction(str(x)) for x in dist] for dist in PAIRS[name])
    kept = [min(p_x, q_x) for p_x, q_x in zip(p, q)]
    reject = 1 - sum(kept)
    rest = [max(Fraction(0), p_x - q_x) for p_x, q_x in zip(p, q)]
    through_rejection = [reject * r / sum(rest) for r in rest] if sum(rest) else [Fraction(0)] * len(p)
    assert [k + r for k, r in zip(kept, through_rejection)] == p


def test_acceptance_rate_is_the_overlap_of_p_and_q():
    p, q = PAIRS["close"]
    result = tally(p, q, DRAWS, random.Random(7))
    overlap = sum(min(a, b) for a, b in zip(p, q))
    assert result.accepted / DRAWS == pytest.approx(overlap, abs=0.015)


def test_accept_rule():
    assert accept(0.5, 0.4, 0.999)  # p >= q: always
    assert accept(0.2, 0.4, 0.49) and not accept(0.2, 0.4, 0.5)  # else with probability p/q
    assert not accept(0.0, 0.4, 0.0)


def test_remainder_is_normalised_and_guards_a_zero_sum():
    assert remainder([0.5, 0.3, 0.2], [0.4, 0.4, 0.2]) == pytest.approx([1.0, 0.0, 0.0])
    assert remainder([0.1, 0.9], [0.1, 0.9]) == [0.1, 0.9]  # nothing left over: fall back to p


def test_draw_inverts_the_running_sum():
    assert [draw([0.25, 0.0, 0.75], u) for u in (0.0, 0.2499, 0.25, 0.99)] == [0, 0, 2, 2]
    assert draw([0.5, 0.5, 0.0], 1.0) == 1  # rounding at the very top never lands on a zero weight


def test_randomness_is_injected():
    p, q = PAIRS["peaked draft"]
    first = [speculative_step(p, q, random.Random(3)) for _ in range(5)]
    second = [speculative_step(p, q, random.Random(3)) for _ in range(5)]
    assert first == second


def test_the_chi_square_check_catches_a_wrong_rule():
    """Keeping every drafted token (sampling from q) must fail the same check."""
    p, q = PAIRS["close"]
    rng = random.Random(20231130)
    counts = [0] * len(p)
    for _ in range(DRAWS):
        counts[draw(q, rng.random())] += 1
    statistic, df = chi_square(counts, p)
    assert statistic > critical_value(df)
