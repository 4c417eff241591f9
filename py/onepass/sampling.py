"""Speculative sampling: the acceptance rule that keeps *sampled* output exact.

The draft proposes token x with probability q(x); the target model would give
it p(x). Accept x if p(x) >= q(x), otherwise with probability p(x) / q(x). On
rejection, draw instead from the remainder max(0, p - q), normalised. The two
routes add up to exactly p for every token:

    q(x) * min(1, p(x)/q(x))  +  P(reject) * max(0, p(x) - q(x)) / sum(max(0, p - q))
    = min(q(x), p(x))         +  max(0, p(x) - q(x))                 = p(x),

because P(reject) = 1 - sum(min(p, q)) = sum(max(0, p - q)).

References: Leviathan, Kalman & Matias (2023), Algorithm 1; Chen et al. (2023),
"modified rejection sampling". Randomness is passed in (``rng.random()``), so
the rule can be tested exactly.
"""

from dataclasses import dataclass
from typing import Protocol


class Uniform(Protocol):
    def random(self) -> float:
        """A uniform draw from [0, 1), as ``random.Random.random``."""


def accept(p_x: float, q_x: float, u: float) -> bool:
    """Keep the drafted token when ``u`` (uniform in [0, 1)) falls under min(1, p/q)."""
    # Written as a product so that p >= q always accepts and q = 0 never divides.
    return u * q_x < p_x


def remainder(p: list[float], q: list[float]) -> list[float]:
    """The rejection distribution: max(0, p - q), normalised."""
    rest = [max(0.0, p_i - q_i) for p_i, q_i in zip(p, q)]
    total = sum(rest)
    # p == q leaves nothing over. Rejection then has probability zero in exact arithmetic; if rounding
    # rejects anyway, p itself is the distribution to draw from.
    if total <= 0.0:
        return list(p)
    return [r / total for r in rest]


def draw(distribution: list[float], u: float) -> int:
    """The index where the running sum of ``distribution`` first exceeds ``u`` * its total."""
    target = u * sum(distribution)
    running = 0.0
    for index, weight in enumerate(distribution):
        running += weight
        if target < running:
            return index
    # Rounding can leave target at the very top: take the last index with any weight.
    return max(i for i, weight in enumerate(distribution) if weight > 0)


def tempered(ids: list[int], probs: list[float], temperature: float) -> dict[int, float]:
    """``{id: probability}`` over ``ids``: ``probs`` raised to 1 / temperature, renormalised."""
    if temperature <= 0:
        raise ValueError(f"sampling needs a temperature above 0, got {temperature}")
    weights = {token: prob ** (1.0 / temperature) for token, prob in zip(ids, probs) if prob > 0}
    total = sum(weights.values())
    return {token: weight / total for token, weight in weights.items()}


def pick(distribution: dict[int, float], u: float) -> int:
    """One id drawn from ``distribution`` with the uniform draw ``u``, in a fixed order of ids."""
    ids = sorted(distribution)
    return ids[draw([distribution[i] for i in ids], u)]


@dataclass(frozen=True)
class Step:
    drafted: int  # the token the draft proposed (drawn from q)
    token: int  # the token that is kept
    accepted: bool


def speculative_step(p: list[float], q: list[float], rng: Uniform) -> Step:
    """Draft one token from ``q``, then accept it or resample from the remainder, so the result follows ``p``."""
    drafted = draw(q, rng.random())
    if accept(p[drafted], q[drafted], rng.random()):
        return Step(drafted=drafted, token=drafted, accepted=True)
    return Step(drafted=drafted, token=draw(remainder(p, q), rng.random()), accepted=False)


@dataclass(frozen=True)
class Tally:
    counts: list[int]  # how often each token was kept
    accepted: int  # how many drafted tokens were kept as they were

    @property
    def draws(self) -> int:
        return sum(self.counts)

    def frequencies(self) -> list[float]:
        return [count / self.draws for count in self.counts]


def tally(p: list[float], q: list[float], draws: int, rng: Uniform) -> Tally:
    """Run ``speculative_step`` ``draws`` times and count the kept tokens (to compare with ``p``)."""
    counts, accepted = [0] * len(p), 0
    for _ in range(draws):
        step = speculative_step(p, q, rng)
        counts[step.token] += 1
        accepted += step.accepted
    return Tally(counts=counts, accepted=accepted)
