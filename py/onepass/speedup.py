"""How much drafting can save: the expected tokens per pass and the speed-up.

With a draft of gamma tokens, each right with probability alpha independently,
one verifying pass yields on average

    (1 - alpha^(gamma + 1)) / (1 - alpha)      (gamma + 1 when alpha = 1)

tokens — never fewer than one. If each draft token costs c passes of the
target model, a round costs gamma * c + 1 passes, so the speed-up over greedy
decoding is the expected tokens divided by (gamma * c + 1). A longer draft pays
only if every token in it is right, so for c > 0 there is a best gamma.

Reference: Leviathan, Kalman & Matias (2023), equation 1 and Theorem 3.8.
"""

MAX_GAMMA = 20  # the best-length search and step 6's chart stop here (with c = 0 longer is always better)


def expected_tokens(alpha: float, gamma: int) -> float:
    """Mean tokens one pass yields: accepted draft tokens plus the model's own token."""
    if not 0.0 <= alpha <= 1.0 or gamma < 0:
        raise ValueError(f"need 0 <= alpha <= 1 and gamma >= 0, got alpha={alpha}, gamma={gamma}")
    # At alpha = 1 the formula is 0/0; its limit is every draft token plus the bonus.
    if alpha == 1.0:
        return gamma + 1.0
    return (1.0 - alpha ** (gamma + 1)) / (1.0 - alpha)


def speedup(alpha: float, gamma: int, c: float) -> float:
    """Tokens per unit of target-model time, relative to greedy's one token per pass."""
    if c < 0:
        raise ValueError(f"the draft's cost ratio c cannot be negative, got {c}")
    return expected_tokens(alpha, gamma) / (gamma * c + 1.0)


def best_gamma(alpha: float, c: float, max_gamma: int = MAX_GAMMA) -> int:
    """The draft length in 0..max_gamma with the largest speed-up (the shortest one on ties)."""
    return max(range(max_gamma + 1), key=lambda gamma: (speedup(alpha, gamma, c), -gamma))
