"""Proposers other than prompt lookup: the reader's guess, random drafts, and drafts that know the answer.

A proposer maps the text so far to the tokens it guesses come next (``[]``
for no guess). Verification makes every one of them safe, including a random
or a deliberately wrong one; they differ only in how many passes they save.
"""

import random
import time

from .drafted import Proposer
from .lookup import MAX_DRAFT


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
