"""The acceptance rate alpha and cost ratio c of one drafted run, as the speed-up formula sees them.

Step 6's chart draws the formula of ``speedup.py`` at the reader's own alpha
and c, measured on step 5. Two obvious estimates do not fit the formula:
accepted / drafted tokens counts every token after a rejection as a failure
(the formula never reaches them), and drafting time over pass time is a cost
per round, not per drafted token. So both are fitted instead, to make the
formula at the run's draft length gamma reproduce what the run measured:

- alpha is the one value at which (1 - alpha^(gamma+1)) / (1 - alpha) equals
  the run's tokens per pass. Passes that drafted nothing (prompt lookup found
  no match) and drafts cut short (at the end of the text, or because the copy
  ran out) are counted as they happened: each is a round that yielded what it
  yielded, so alpha is the rate of a draft of gamma tokens that would yield
  the same on average.
- c is the extra time of a round over an ordinary one-token pass, divided by
  gamma: per drafted token, counted in one-token passes. It holds everything a
  drafted token adds — finding it (almost nothing for a copy) and checking it
  in the pass (not nothing on a CPU, see step 3).

The first pass of each run reads the whole prompt; it is the same work with or
without a draft, and the formula describes the rounds after it, so it is left
out of both runs. Then the formula at (alpha, gamma, c) gives the run's tokens
per pass and, times the one-token pass time, its time per token. The one
exception: c cannot be negative, so if drafted rounds came out quicker than
one-token passes (timing noise on a busy machine), c is 0 and the formula
predicts a little more time than was spent.

docs/assets/onepass/estimate.js is the same computation for the page; the site
tests compare the two on recorded runs.
"""

from dataclasses import dataclass

from .speedup import expected_tokens

BISECTIONS = 60  # halvings of [0, 1]: far below a float's resolution of alpha


@dataclass(frozen=True)
class Measured:
    """What the formula is fitted to: the rounds after the prompt was read, drafted and one at a time."""
    gamma: int  # the run's draft length: the most a round could draft
    passes: int
    tokens: int
    seconds: float  # passes and drafting
    greedy_passes: int
    greedy_seconds: float

    @property
    def tokens_per_pass(self) -> float:
        return self.tokens / self.passes

    @property
    def seconds_per_token(self) -> float:
        return self.seconds / self.tokens

    @property
    def pass_seconds(self) -> float:
        """An ordinary one-token pass, from the one-at-a-time run: the formula's unit of time."""
        return self.greedy_seconds / self.greedy_passes


@dataclass(frozen=True)
class Estimate:
    alpha: float
    c: float
    gamma: int

    def tokens_per_pass(self) -> float:
        return expected_tokens(self.alpha, self.gamma)

    def seconds_per_token(self, pass_seconds: float) -> float:
        """The formula's time per token: a round costs gamma * c + 1 passes and yields tokens_per_pass tokens."""
        return pass_seconds * (self.gamma * self.c + 1.0) / self.tokens_per_pass()


def measured(run: dict, reference: dict, proposer_seconds: float, max_draft: int = 0) -> Measured | None:
    """The fitted quantities of a drafted run and its one-at-a-time reference (``Run.as_dict()`` form).

    ``max_draft`` is the proposer's setting (6 for prompt lookup); a proposer that drafted longer sets gamma
    by its longest draft. None when there is nothing to fit: a run of one pass, or one that never drafted.
    """
    rounds, singles = run["passes"][1:], reference["passes"][1:]
    gamma = max([max_draft] + [len(record["draft"]) for record in rounds])
    if not rounds or not singles or gamma == 0:
        return None
    # Drafting time is only recorded for the whole run; the first pass's share is a single lookup.
    return Measured(gamma=gamma, passes=len(rounds), tokens=sum(len(record["added"]) for record in rounds),
                    seconds=sum(record["seconds"] for record in rounds) + proposer_seconds,
                    greedy_passes=len(singles), greedy_seconds=sum(record["seconds"] for record in singles))


def alpha_for(tokens_per_pass: float, gamma: int) -> float:
    """The alpha at which a draft of ``gamma`` tokens yields ``tokens_per_pass`` per pass on average."""
    if gamma < 1:
        raise ValueError(f"alpha means nothing without a draft: gamma = {gamma}")
    # Tokens per pass rise with alpha from 1 (alpha = 0) to gamma + 1 (alpha = 1): halve the interval.
    low, high = 0.0, 1.0
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        if expected_tokens(middle, gamma) < tokens_per_pass:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def fit(m: Measured) -> Estimate:
    """The alpha and c at which the formula reproduces ``m``'s tokens per pass and time per token."""
    alpha = alpha_for(m.tokens_per_pass, m.gamma)
    round_passes = m.seconds / m.passes / m.pass_seconds  # a round's time, counted in one-token passes
    return Estimate(alpha=alpha, c=max(0.0, (round_passes - 1.0) / m.gamma), gamma=m.gamma)
