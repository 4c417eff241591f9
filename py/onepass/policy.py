"""Will drafting pay? Cheap drafts first, the draft model only where they have nothing and only while it pays.

A drafted round either checks a copy (from the text, or from the model's own earlier answers: no small pass), or
the draft model's tokens (a small pass each, and a wider verifying pass), or nothing (a plain one-token pass). Within
one run the policy keeps, for each kind of round, what it added (tokens) and what it cost (its seconds on the wall
clock, measured by the drafted loop with the clock it is handed, so a test injects the timings). The draft model is
asked only while its rounds are expected to give at least as many tokens per second as plain passes do:

    (1 + tokens it adds beyond the model's own, per round) / seconds of its round  >=  1 / seconds of a plain pass

Once it stops paying, it is tried again after a few plain rounds (a probe), the wait doubling while it keeps not
paying, since a text changes its character (an answer's prose, then its code). Recent rounds weigh more than old
ones (``DECAY``). Before a kind of round is measured, the priors stand in: the shipped draft's acceptance and the
tab's cost of a drafted round. The same policy sets each proposal's length from its confidence: a copy as long as
the context it matched (SuffixDecoding's ``max_spec_factor`` × match length, with the factor 1), and the draft
model's tokens up to the first whose own top probability falls below ``confidence``: it drafts no further after it
(EAGLE-2's dynamic draft length; at gamma 1 there is nothing further, and nothing changes).

The draft model's own confidence decides the rest, round by round (``withhold``): it proposes its first token only
where its probability of it (``DraftStep.confidence``, its graph's output) is at least ``propose``. Below that a
second verifying row costs more than it is expected to earn: in the tab that row costs 0.185 of a pass, and the
shipped draft's tokens at q 0.1-0.2 are right 14 % of the time, at 0.2-0.3 23 % (benchmarks/FINDINGS.md, "A drafted
round's time in the tab"). A round it withholds is a plain pass that paid for a small one, so after it the draft
rests for a round, then two, four, up to ``most_rest`` while it keeps withholding: a text it cannot draft (step 5's
Spelling: its seven tokens at q 0.01-0.12) costs a small pass or two, not one a token.

Whatever it decides, verification keeps the text exact: the policy only changes what is proposed, never what is
kept. Its decisions come back as data (``figures``).

References: Oliaro et al., "SuffixDecoding" (2024) for copies scored by match length and speculating only where it
pays; Li et al., "EAGLE-2" (2024) for the draft's confidence as its length; Leviathan, Kalman & Matias (2023) for
the cost of a round.
"""

from collections import Counter
from dataclasses import dataclass, field

from .contract import PolicyFigures
from .lookup import MAX_DRAFT

# Before anything is measured: the shipped draft's tokens per drafted round at gamma 1 (alpha 0.44,
# benchmarks/FINDINGS.md, "Prose answers") ...
PRIOR_TOKENS = 1.44
# ... and a drafted round's cost in plain passes: the tab's at gamma 1 (FINDINGS, "A drafted round's time in the tab").
PRIOR_COST = 1.29
PRIOR_WEIGHT = 1.0  # the priors count as one round: a single miss before any hit is enough to stop drafting
DECAY = 0.8  # each earlier round of a kind weighs 0.8 times the one after it: about the last five rounds count
FIRST_WAIT = 6  # plain rounds before the draft model is tried again once it stopped paying, ...
MOST_WAIT = 48  # ... doubling while it keeps not paying
# The draft's top probability below which it drafts no further (FINDINGS, "A drafted round's time in the tab": the
# best of the thresholds simulated there).
CONFIDENCE = 0.25
# Below this probability of its first token the draft proposes nothing: where it is right about as often as its
# verifying row costs (0.185 of a pass in the tab; FINDINGS, "The draft's own confidence decides its rounds") ...
PROPOSE = 0.2
FIRST_REST, MOST_REST = 1, 8  # ... and then rests for this many rounds, doubling while it keeps withholding
COPY_FACTOR = 1  # a copy proposes this many tokens per token of context it matched (SuffixDecoding's default)

KINDS = ("draft", "plain", "copy", "answers")  # what a round checked: the draft model's tokens, nothing, a copy
# (a round whose draft withheld its token is not weighed: its confidence and the rest after it decide those rounds)


@dataclass
class Tally:
    """Rounds of one kind, recent ones weighing more: their weight, and the tokens and seconds they add up to."""

    decay: float = DECAY
    weight: float = 0.0
    tokens: float = 0.0
    seconds: float = 0.0
    rounds: int = 0  # every round, unweighted

    def add(self, tokens: int, seconds: float) -> None:
        self.weight = self.weight * self.decay + 1.0
        self.tokens = self.tokens * self.decay + tokens
        self.seconds = self.seconds * self.decay + seconds
        self.rounds += 1

    def mean_seconds(self) -> float | None:
        return self.seconds / self.weight if self.weight else None


@dataclass
class Policy:
    """One run's running estimate of what drafting gives and costs, and the decisions taken from it."""

    confidence: float = CONFIDENCE  # 0: the draft model drafts gamma tokens whenever it drafts
    propose: float = PROPOSE  # 0: the draft model proposes whatever its confidence
    first_rest: int = FIRST_REST
    most_rest: int = MOST_REST
    copy_factor: int = COPY_FACTOR
    prior_tokens: float = PRIOR_TOKENS
    prior_cost: float = PRIOR_COST
    prior_weight: float = PRIOR_WEIGHT
    first_wait: int = FIRST_WAIT
    most_wait: int = MOST_WAIT
    decay: float = DECAY
    tallies: dict[str, Tally] = field(default_factory=dict)
    decisions: Counter = field(default_factory=Counter)  # "drafted", "skipped", "probed"
    wait: int = 0  # plain rounds to go before the next probe ...
    waited: int = 0  # ... and those gone since the draft model last ran
    rest: int = 0  # rounds the draft rests after its next withheld token ...
    resting: int = 0  # ... and those still to go after the last one

    def __post_init__(self):
        self.tallies = {kind: Tally(self.decay) for kind in KINDS}
        self.wait = self.first_wait
        self.rest = self.first_rest

    def heard(self, kind: str, tokens: int, seconds: float) -> None:
        """A round of ``kind`` (one of ``KINDS``) added ``tokens`` in ``seconds``."""
        self.tallies[kind].add(tokens, seconds)

    def tokens_per_draft(self) -> float:
        """The tokens a round of the draft model is expected to add, the prior counted as ``prior_weight`` rounds."""
        draft = self.tallies["draft"]
        if self.prior_weight + draft.weight == 0:
            return self.prior_tokens
        return (self.prior_tokens * self.prior_weight + draft.tokens) / (self.prior_weight + draft.weight)

    def pays(self) -> bool:
        """Whether a round of the draft model is expected to give at least as many tokens a second as a plain pass."""
        draft, plain = self.tallies["draft"].mean_seconds(), self.tallies["plain"].mean_seconds()
        # A kind not measured yet is priced from the other by the prior ratio; neither measured: the ratio alone.
        if draft is None and plain is None:
            draft, plain = self.prior_cost, 1.0
        elif draft is None:
            draft = plain * self.prior_cost
        elif plain is None:
            plain = draft / self.prior_cost
        # tokens / draft >= 1 / plain, without dividing by a round that took no time (the toy's).
        return self.tokens_per_draft() * plain >= draft

    def draft_now(self) -> bool:
        """Ask the draft model this round? Yes while it pays; else no, but yes again after ``wait`` plain rounds,
        the wait doubling at each probe until the draft pays again; never while it rests after withholding."""
        if self.resting > 0:
            self.resting -= 1
            self.decisions["rested"] += 1
            return False
        if self.pays():
            self.wait, self.waited = self.first_wait, 0
            self.decisions["drafted"] += 1
            return True
        if self.waited >= self.wait:
            self.wait, self.waited = min(2 * self.wait, self.most_wait), 0
            self.decisions["probed"] += 1
            return True
        self.waited += 1
        self.decisions["skipped"] += 1
        return False

    def copy_length(self, matched: int) -> int:
        """A copy's length from the length of the context it matched: a longer match earns a longer copy."""
        return max(1, min(MAX_DRAFT, self.copy_factor * matched))

    def unsure(self, confidence: float) -> bool:
        """The draft drafts no further: its probability of its token here (``DraftStep.confidence``) is below
        ``confidence``."""
        return self.confidence > 0 and confidence < self.confidence

    def withhold(self, confidence: float) -> bool:
        """The draft proposes nothing this round: its probability of its first token is below ``propose``; it then
        rests for ``rest`` rounds, twice as many after each withheld round in a row, up to ``most_rest``."""
        if confidence >= self.propose:
            self.rest = self.first_rest
            return False
        self.resting, self.rest = self.rest, min(2 * self.rest, self.most_rest)
        self.decisions["withheld"] += 1
        return True

    def figures(self) -> PolicyFigures:
        """The decisions and the estimates they came from."""
        draft, plain = self.tallies["draft"], self.tallies["plain"]
        return PolicyFigures(drafted=self.decisions["drafted"], skipped=self.decisions["skipped"],
                             probes=self.decisions["probed"], withheld=self.decisions["withheld"],
                             rested=self.decisions["rested"], propose=self.propose, confidence=self.confidence,
                             tokens_per_draft=self.tokens_per_draft(), draft_seconds=draft.mean_seconds(),
                             plain_seconds=plain.mean_seconds(), pays=self.pays())
