"""The claim under test: drafted text equals greedy text, token for token, whatever the draft.

For each prompt, greedy decoding with the KV cache is the reference; every mode
(a proposer, with the cache on or off) must reproduce it exactly. Proposers that
need the answer — a perfect, a noisy and a deliberately wrong draft, and a
fixed guess that goes wrong halfway — get it from the reference run.
"""

import random
from collections.abc import Iterable
from dataclasses import dataclass

from .drafted import Proposer, drafted
from .greedy import greedy
from .proposers import Context, proposer
from .seam import Model
from .trace import Run

PROPOSERS = ("lookup", "guess", "wrong", "random", "noisy", "perfect")  # the registry's, less the reader's own


@dataclass(frozen=True)
class Outcome:
    prompt: int  # index in the prompt set
    mode: str
    kv_cache: bool
    identical: bool
    first_difference: int | None  # position in the generated tokens, None when identical
    passes: int
    tokens: int


def knowing(name: str, prompt: list[int], reference: Run, model: Model, rng: random.Random) -> Proposer:
    """Proposer ``name``, given the answer: the guess goes wrong halfway, the drafts copy (or spoil) the reference."""
    vocab = model.facts.vocab_size
    return proposer(name, Context(prompt=prompt, vocab_size=vocab, rng=rng, answer=prompt + reference.tokens,
                                  guess=wrong_halfway(reference.tokens, vocab)))


def wrong_halfway(tokens: list[int], vocab_size: int) -> list[int]:
    """The right continuation with its middle token replaced: a guess right up to a point, then wrong."""
    middle = len(tokens) // 2
    return tokens[:middle] + [(tokens[middle] + 1) % vocab_size] + tokens[middle + 1:]


def first_difference(a: list[int], b: list[int]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


async def compare(model: Model, index: int, prompt: list[int], max_new: int, modes: Iterable[tuple[str, bool]],
                  seed: int = 0) -> list[Outcome]:
    """Run every mode on one prompt and compare each with greedy decoding (KV cache on)."""
    reference = await greedy(model, prompt, max_new)
    outcomes = []
    for name, kv_cache in modes:
        if name == "greedy":
            run = await greedy(model, prompt, max_new, kv_cache=kv_cache)
        else:
            # Seeded per prompt and proposer, not per cache mode, so both cache modes see the same drafts.
            rng = random.Random(f"{seed}/{index}/{name}")
            run = await drafted(model, prompt, knowing(name, prompt, reference, model, rng), max_new,
                                kv_cache=kv_cache, mode=name)
        difference = first_difference(reference.tokens, run.tokens)
        outcomes.append(Outcome(prompt=index, mode=name, kv_cache=kv_cache, identical=difference is None,
                                first_difference=difference, passes=len(run.passes), tokens=len(run.tokens)))
    return outcomes


def summarize(outcomes: list[Outcome]) -> list[dict]:
    """Per mode: the share of prompts reproduced exactly, tokens per pass, and the failures."""
    rows = {}
    for outcome in outcomes:
        row = rows.setdefault((outcome.mode, outcome.kv_cache), {
            "mode": outcome.mode, "kv_cache": outcome.kv_cache, "prompts": 0, "identical": 0,
            "passes": 0, "tokens": 0, "failures": []})
        row["prompts"] += 1
        row["identical"] += outcome.identical
        row["passes"] += outcome.passes
        row["tokens"] += outcome.tokens
        if not outcome.identical:
            row["failures"].append({"prompt": outcome.prompt, "first_difference": outcome.first_difference})
    for row in rows.values():
        row["share"] = row["identical"] / row["prompts"]
        row["tokens_per_pass"] = row["tokens"] / row["passes"]
    return list(rows.values())
