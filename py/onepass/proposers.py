"""Proposers other than prompt lookup, and the one registry of every proposer by name.

A proposer maps the text so far to the tokens it guesses come next (``[]``
for no guess). Verification makes every one of them safe, including a random
or a deliberately wrong one; they differ only in how many passes they save.
``proposer(name, Context(...))`` builds one by name, for the pages (``generation.py``),
the exactness check (``exactness.py``) and the command line (``cli.py``) alike.
"""

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .contract import Generate
from .draft_model import DraftModel, ModelDraft
from .drafted import Proposer
from .editable import compile_proposer
from .lookup import MAX_DRAFT, copied, lookup_match, prompt_lookup, shown
from .policy import Policy

NOISY_ERROR_RATE = 0.25  # high enough that most drafts break somewhere, low enough that some survive whole


def fixed_guess(prompt_length: int, guess: list[int]) -> Proposer:
    """The reader's guess of the continuation, proposed for as long as the text still follows it."""

    def propose(text: list[int]) -> list[int]:
        written = text[prompt_length:]
        # Once the model has corrected the guess, the rest of it continues a text that does not exist.
        if guess[:len(written)] != written:
            return []
        return guess[len(written):]

    return propose


def random_draft(rng: random.Random, max_draft: int = MAX_DRAFT) -> Proposer:
    """Up to ``max_draft`` tokens drawn at random from the text so far (so a few happen to be right)."""

    def propose(text: list[int]) -> list[int]:
        return [rng.choice(text) for _ in range(rng.randint(0, max_draft))]

    return propose


def from_answer(answer: list[int], vocab_size: int, error_rate: float, rng: random.Random,
                max_draft: int = MAX_DRAFT) -> Proposer:
    """Drafts copied from a known continuation of the text (``answer`` is prompt + generated tokens).

    Each token is replaced by a wrong one with probability ``error_rate``: 0
    gives a perfect draft, 1 a deliberately wrong one that is always rejected
    at its first token.
    """

    def propose(text: list[int]) -> list[int]:
        draft = answer[len(text):len(text) + max_draft]
        # Shifting an id by one always gives another id, so the token is certainly wrong.
        return [(token + 1) % vocab_size if rng.random() < error_rate else token for token in draft]

    return propose


class Timed:
    """``propose``, with the seconds spent drafting added up in ``seconds``: the draft's cost, against the
    passes' (step 6's c)."""

    def __init__(self, propose: Proposer):
        self.propose = propose
        self.seconds = 0.0

    def __call__(self, text: list[int]) -> list[int]:
        began = time.perf_counter()
        try:
            return self.propose(text)
        finally:
            self.seconds += time.perf_counter() - began


def showing_matches(on_match: Callable[[dict | None], None]) -> Proposer:
    """Prompt lookup that also tells ``on_match`` where it copied from (``{n, at, ngram}``, or None), for the page."""

    def propose(text: list[int]) -> list[int]:
        found = lookup_match(text)
        on_match(shown(text, found))
        return copied(text, found)

    return propose


@dataclass
class Context:
    """What a proposer may be built from; each uses only its own part."""

    prompt: list[int]
    vocab_size: int
    rng: random.Random = field(default_factory=random.Random)
    guess: list[int] = field(default_factory=list)  # the reader's guess of the continuation
    answer: list[int] = field(default_factory=list)  # prompt + a known continuation (the exactness check's reference)
    source: str = ""  # the reader's proposer, as Python source
    on_match: Callable[[dict | None], None] | None = None  # hears prompt lookup's match, pass by pass
    draft: DraftModel | None = None  # a draft model over the target's features (draft_model.py)
    gamma: int = Generate.gamma  # how many tokens the draft model proposes per round (at most, when ``adaptive``)
    # The draft modes weigh each round (policy.py) or draft gamma tokens every round: the contract's one default,
    # off until the tab has measured it (benchmarks/FINDINGS.md, "Cheap drafts first").
    adaptive: bool = Generate.adaptive


def model_draft(context: Context, copy_first: bool = False, adaptive: bool | None = None) -> ModelDraft:
    """The draft model's proposer; ``adaptive`` (the context's unless given) gives it a fresh policy for the run."""
    if context.draft is None:
        raise ValueError("no draft model was built for this model")
    adaptive = context.adaptive if adaptive is None else adaptive
    return ModelDraft(context.draft, context.gamma, copy_first, Policy() if adaptive else None)


PROPOSERS: dict[str, Callable[[Context], Proposer]] = {
    "lookup": lambda c: prompt_lookup if c.on_match is None else showing_matches(c.on_match),
    "guess": lambda c: fixed_guess(len(c.prompt), c.guess),
    "random": lambda c: random_draft(c.rng),
    "custom": lambda c: compile_proposer(c.source, c.vocab_size),
    "wrong": lambda c: from_answer(c.answer, c.vocab_size, 1.0, c.rng),
    "noisy": lambda c: from_answer(c.answer, c.vocab_size, NOISY_ERROR_RATE, c.rng),
    "perfect": lambda c: from_answer(c.answer, c.vocab_size, 0.0, c.rng),
    "draft": model_draft,
    "lookup+draft": lambda c: model_draft(c, copy_first=True),  # the copy where the text repeats, else the draft
    # The two draft modes with each round weighed by the policy, or every round the same (gamma tokens, the copies as
    # long as prompt lookup's), whatever the context says: what the benchmarks compare.
    "draft-adaptive": lambda c: model_draft(c, adaptive=True),
    "lookup+draft-adaptive": lambda c: model_draft(c, copy_first=True, adaptive=True),
    "draft-fixed": lambda c: model_draft(c, adaptive=False),
    "lookup+draft-fixed": lambda c: model_draft(c, copy_first=True, adaptive=False),
}


def proposer(name: str, context: Context) -> Proposer:
    """The proposer called ``name``, built from ``context``; a ValueError names the known ones."""
    if name not in PROPOSERS:
        raise ValueError(f"unknown proposer {name!r}; choose from {', '.join(PROPOSERS)}")
    return PROPOSERS[name](context)
