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
"""

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from .answers import Answers
from .lookup import copied, lookup_match, shown
from .sampling import pick, tempered

COPY_NGRAMS = (2,)  # copy_first's match: a pair only (a single token's copy is right too seldom to beat the draft)


@dataclass(frozen=True)
class DraftStep:
    """One small pass of the draft: after the last (feature, token) pair it was given."""

    feature: list[float]  # its prediction of the target's feature at the last token's position
    token: int  # its best guess of the token after that
    seconds: float
    ids: list[int] = field(default_factory=list)  # its most likely next tokens (full-vocabulary ids) ...
    probs: list[float] = field(default_factory=list)  # ... and their probabilities: q, for sampling


class DraftModel(Protocol):
    window: int  # the most (feature, token) pairs one small pass reads
    answers: Answers | None  # the model's own earlier answers, to copy from with ``copy_first`` (None: not shipped)

    async def step(self, features: list[list[float]], tokens: list[int], *, sampling: bool = False) -> DraftStep:
        """One small pass over ``features`` (at positions i .. i+n-1) and ``tokens`` (at i+1 .. i+n); with
        ``sampling``, the step carries the draft's most likely tokens and their probabilities too."""


class ModelDraft:
    """A proposer (``drafted.Proposer``, awaited) that drafts ``gamma`` tokens with ``draft``.

    The drafted loop hands it the target's features after every pass (``keep``); a proposal reads those of the
    text so far, which the target has verified, and only its own predictions after them.
    """

    def __init__(self, draft: DraftModel, gamma: int, copy_first: bool = False):
        if gamma < 1:
            raise ValueError(f"a draft model proposes at least one token, got gamma={gamma}")
        self.draft, self.gamma, self.copy_first = draft, gamma, copy_first
        self.kinds: list[str] = []  # per greedy proposal, in the passes' order: "draft", "copy", "answers" or "none"
        self.match: dict | None = None  # the last copy's match, as prompt lookup shows it (``{n, at, ngram}``)
        self.wanted = draft.window  # features the target returns per pass: what one small pass reads at most
        self.features: dict[int, list[float]] = {}  # position -> the target's feature there
        self.passes = 0  # the draft's small passes
        self.seconds = 0.0  # ... and their time: the draft's cost, step 6's c against the target's passes

    def keep(self, first: int, rows: list[list[float]]) -> None:
        """The target's features at positions ``first``, ``first + 1``, ...; later passes overwrite the rows of
        rejected tokens, and a proposal never reads past the text, so a stale row is never used."""
        for offset, row in enumerate(rows):
            self.features[first + offset] = row

    async def __call__(self, text: list[int]) -> list[int]:
        """The greedy proposal: the copy, with ``copy_first`` where the text repeats; else the draft's most likely
        token at every step."""
        if self.copy_first:
            found = lookup_match(text, COPY_NGRAMS)
            if found is not None:
                self.kinds.append("copy")
                self.match = shown(text, found)
                return copied(text, found)
            remembered = self.draft.answers(text) if self.draft.answers else []
            if remembered:
                self.kinds.append("answers")
                return remembered
        proposal = [token for token, _ in await self.drafts(text, lambda step: (step.token, None), sampling=False)]
        self.kinds.append("draft" if proposal else "none")
        return proposal

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

        return await self.drafts(text, choose, sampling=True)

    async def drafts(self, text: list[int], choose: Callable[[DraftStep], tuple[int, object]],
                     sampling: bool) -> list[tuple]:
        """Up to ``gamma`` small passes after ``text``; ``choose`` picks each drafted token from a step, as
        ``(token, what else the caller keeps of the step)``."""
        # The feature at position i pairs with the token at i + 1: the last known one is at len(text) - 2,
        # since the text's last token (the target's own from the last pass) has not been read yet.
        known = [p for p in range(max(0, len(text) - 1 - self.draft.window), len(text) - 1) if p in self.features]
        if not known or known[-1] != len(text) - 2:
            return []  # nothing to read yet (a one-token prompt): an ordinary pass
        for stale in [p for p in self.features if p < known[0]]:
            del self.features[stale]  # out of every later window
        features = [self.features[p] for p in known]
        tokens = [text[p + 1] for p in known]
        proposal = []
        for _ in range(self.gamma):
            step = await self.draft.step(features[-self.draft.window:], tokens[-self.draft.window:], sampling=sampling)
            self.passes += 1
            self.seconds += step.seconds
            token, kept = choose(step)
            proposal.append((token, kept))
            # Its own prediction of the feature at the last token's position, with the token it drafted after it.
            features.append(step.feature)
            tokens.append(token)
        return proposal
