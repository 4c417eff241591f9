"""Drafting with a model: a small network that reads the target's own features and proposes, one token per
small pass, what the target will write next.

EAGLE's arrangement (Li et al., 2024): the target, in the pass that verifies, also returns its last hidden
state at every position it reads (its *features*). The draft takes the feature at position i and the token at
i + 1 and predicts the feature at i + 1, and from it the token at i + 2. It drafts autoregressively: each
drafted token, with the feature the draft predicted for it, is the input of its next small pass. The draft
here is stateless: each small pass re-reads the last ``window`` (feature, token) pairs, so nothing has to be
rolled back when verification rejects a drafted token. Verification keeps the text exact whatever the draft
proposes; a better draft only saves passes.

With ``copy_first`` (the "lookup+draft" proposer) the text is asked first: where its last two tokens occurred
before, prompt lookup's copy is proposed instead (``lookup.py``; no small pass); failing that, where the draft ships
a table of the model's own earlier answers (``answers.py``), what they continue the text's last tokens with; and the
draft drafts only where neither has a copy. The draft was never taught to copy, and copying is free.

With a ``policy`` (``policy.py``: what the pages and the benchmarks run) the rounds are weighed as they go: a copy
from the text comes from the earlier occurrence whose context agrees furthest back, as long as that agreement; the
draft model is asked only while its rounds pay for themselves in this run (else the round is a plain pass, and the
draft is probed again now and then); and it drafts no further after a token it is unsure of. Without one, every round is
as above with gamma tokens: the fixed rule the tests and the benchmarks compare with.
"""

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from .answers import Answers
from .lookup import best_match, copied, lookup_match, shown
from .policy import Policy
from .sampling import pick, tempered
from .trace import PassRecord

COPY_NGRAMS = (2,)  # copy_first's match: a pair only (a single token's copy is right too seldom to beat the draft)


@dataclass(frozen=True)
class DraftStep:
    """One small pass of the draft: after the last (feature, token) pair it was given."""

    feature: list[float]  # its prediction of the target's feature at the last token's position
    token: int  # its best guess of the token after that
    seconds: float
    ids: list[int] = field(default_factory=list)  # its most likely next tokens (full-vocabulary ids) ...
    probs: list[float] = field(default_factory=list)  # ... and their probabilities: q, for sampling
    confidence: float = 1.0  # its probability of ``token``: where a proposal is decided (``policy.Policy``)


class DraftModel(Protocol):
    window: int  # the most (feature, token) pairs one small pass reads
    answers: Answers | None  # the model's own earlier answers, to copy from with ``copy_first`` (None: not shipped)

    async def step(self, features: list[list[float]], tokens: list[int], *, sampling: bool = False) -> DraftStep:
        """One small pass over ``features`` (at positions i .. i+n-1) and ``tokens`` (at i+1 .. i+n); with
        ``sampling``, the step carries the draft's most likely tokens and their probabilities too."""


class ModelDraft:
    """A proposer (``drafted.Proposer``, awaited) that drafts up to ``gamma`` tokens with ``draft``.

    The drafted loop hands it the target's features after every pass (``keep``), and with a ``policy`` each round's
    outcome and seconds (``heard``); a proposal reads the features of the text so far, which the target has verified,
    and only its own predictions after them.
    """

    def __init__(self, draft: DraftModel, gamma: int, copy_first: bool = False, policy: Policy | None = None):
        if gamma < 1:
            raise ValueError(f"a draft model proposes at least one token, got gamma={gamma}")
        self.draft, self.gamma, self.copy_first, self.policy = draft, gamma, copy_first, policy
        # Per proposal, in the passes' order: "draft", "copy", "answers", "skipped" (the policy said the draft model
        # would not pay: a plain pass), "withheld" (it ran, and proposed nothing: unsure of its first token) or "none"
        # (nothing to read yet: the first pass).
        self.kinds: list[str] = []
        self.match: dict | None = None  # the last copy's match, as prompt lookup shows it (``{n, at, ngram}``)
        self.wanted = draft.window  # features the target returns per pass: what one small pass reads at most
        self.features: dict[int, list[float]] = {}  # position -> the target's feature there
        self.passes = 0  # the draft's small passes
        self.seconds = 0.0  # ... and their time: the draft's cost, step 6's c against the target's passes
        self.stopped = 0  # rounds the draft model stopped short of gamma tokens, unsure of the last (``policy``)

    def keep(self, first: int, rows: list[list[float]]) -> None:
        """The target's features at positions ``first``, ``first + 1``, ...; later passes overwrite the rows of
        rejected tokens, and a proposal never reads past the text, so a stale row is never used."""
        for offset, row in enumerate(rows):
            self.features[first + offset] = row

    def heard(self, record: PassRecord, seconds: float) -> None:
        """The round just checked (the last of ``kinds``) added ``record.added`` in ``seconds`` of wall clock."""
        # The first pass reads the whole prompt: what it costs says nothing of a round.
        # A round whose draft withheld its token is judged by its confidence and rests (``Policy.withhold``), not by
        # the tally: the tally weighs the rounds that checked a proposal, so it stops a draft that is sure and wrong.
        if self.policy is not None and record.start > 0 and self.kinds[-1] != "withheld":
            kind = "plain" if self.kinds[-1] in ("skipped", "none") else self.kinds[-1]
            self.policy.heard(kind, len(record.added), seconds)

    async def __call__(self, text: list[int]) -> list[int]:
        """The greedy proposal: the copy, with ``copy_first`` where the text repeats; else the draft's most likely
        token at every step."""
        if self.copy_first:
            copy = self.copy(text)
            if copy:
                return copy
        return [token for token, _ in await self.drafted(text, lambda step: (step.token, None), sampling=False)]

    def copy(self, text: list[int]) -> list[int]:
        """The text's own copy where its last pair occurred before, else the answers' (recorded in ``kinds``)."""
        if self.policy is None:
            found = lookup_match(text, COPY_NGRAMS)
            proposal = copied(text, found)
        else:
            best = best_match(text, COPY_NGRAMS[0])
            found = best[:2] if best else None
            proposal = copied(text, found, self.policy.copy_length(best[2])) if best else []
        if proposal:
            self.kinds.append("copy")
            self.match = shown(text, found)
            return proposal
        remembered = self.draft.answers(text) if self.draft.answers else []
        if remembered:
            self.kinds.append("answers")
        return remembered

    def split(self, passes: list) -> tuple[list, list]:
        """A run's passes (``PassRecord``, in order) as those that checked the draft model's proposal (or none) and
        those that checked a copy, from the text or the answers: the draft's acceptance is measured on the first
        alone."""
        own, copies = [], []
        for record, kind in zip(passes, self.kinds, strict=True):
            (copies if kind in ("copy", "answers") else own).append(record)
        return own, copies

    async def sample(self, text: list[int], temperature: float, rng: random.Random) -> list[tuple[int, dict]]:
        """Each drafted token drawn from the draft's own distribution q at ``temperature``, with that q (as
        ``{id: probability}``): what the speculative rule needs (``sampled.py``)."""
        def choose(step: DraftStep) -> tuple[int, dict]:
            q = tempered(step.ids, step.probs, temperature)
            return pick(q, rng.random()), q

        return await self.drafted(text, choose, sampling=True)

    async def drafted(self, text: list[int], choose: Callable[[DraftStep], tuple[int, object]],
                      sampling: bool) -> list[tuple]:
        """The draft model's round after ``text``, where there is something to read and the policy says it pays
        (recorded in ``kinds``); ``choose`` picks each drafted token from a step, as ``(token, what else the caller
        keeps of the step)``."""
        read = self.reading(text)
        if read is None:
            self.kinds.append("none")  # nothing to read yet (a one-token prompt): an ordinary pass
            return []
        if self.policy is not None and not self.policy.draft_now():
            self.kinds.append("skipped")
            return []
        self.kinds.append("draft")
        return await self.drafts(*read, choose, sampling)

    def reading(self, text: list[int]) -> tuple[list[list[float]], list[int]] | None:
        """The (feature, token) pairs a small pass after ``text`` reads, or None before the target has read it."""
        # The feature at position i pairs with the token at i + 1: the last known one is at len(text) - 2,
        # since the text's last token (the target's own from the last pass) has not been read yet.
        known = [p for p in range(max(0, len(text) - 1 - self.draft.window), len(text) - 1) if p in self.features]
        if not known or known[-1] != len(text) - 2:
            return None
        for stale in [p for p in self.features if p < known[0]]:
            del self.features[stale]  # out of every later window
        return [self.features[p] for p in known], [text[p + 1] for p in known]

    async def drafts(self, features: list[list[float]], tokens: list[int],
                     choose: Callable[[DraftStep], tuple[int, object]], sampling: bool) -> list[tuple]:
        """Up to ``gamma`` small passes after the pairs ``features`` and ``tokens``; with a policy, none proposed where
        it is unsure of the first (``Policy.withhold``: recorded in ``kinds``), and no further after a later token it
        was unsure of (which is still proposed: its small pass is spent)."""
        unsure = self.policy.unsure if self.policy is not None and self.policy.confidence > 0 else None
        proposal = []
        for j in range(self.gamma):
            last = j == self.gamma - 1
            step = await self.draft.step(features[-self.draft.window:], tokens[-self.draft.window:], sampling=sampling)
            self.passes += 1
            self.seconds += step.seconds
            if j == 0 and self.policy is not None and self.policy.withhold(step.confidence):
                self.kinds[-1] = "withheld"
                return []
            token, kept = choose(step)
            proposal.append((token, kept))
            if unsure is not None and not last and unsure(step.confidence):
                self.stopped += 1
                break
            # Its own prediction of the feature at the last token's position, with the token it drafted after it.
            features = [*features, step.feature]
            tokens = [*tokens, token]
        return proposal
