"""The claim under test: drafted text equals greedy text, token for token, whatever the draft.

For each prompt, greedy decoding with the KV cache is the reference; every mode
(a proposer, with the cache on or off) must reproduce it exactly. Proposers that
need the answer — a perfect, a noisy and a deliberately wrong draft, and a
fixed guess that goes wrong halfway — get it from the reference run. A draft
model (``draft``, and ``lookup+draft``, which copies where the text repeats or the model's answers did) is
checked like any other proposer, and its acceptance per draft position and its
cost are measured on the way (of its own proposals only, not the copies).

Every run is timed on the wall clock, drafting included, beside the reference
on the same prompt, so one run of the check also gives each mode's speed-up.
"""

import random
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from .acceptance import cost_ratio, per_position
from .contract import Generate
from .draft_model import DraftModel, ModelDraft
from .drafted import Proposer, drafted
from .greedy import greedy
from .proposers import Context, proposer
from .seam import Model
from .trace import Run

# The proposers the check runs by default, by their names in the registry (``proposers.PROPOSERS``): all but the
# reader's own and the draft modes, which need a draft model.
ORACLE_PROPOSERS = ("lookup", "guess", "wrong", "random", "noisy", "perfect")


@dataclass(frozen=True)
class Outcome:
    prompt: int  # index in the prompt set
    mode: str
    kv_cache: bool
    identical: bool
    first_difference: int | None  # position in the generated tokens, None when identical
    passes: int
    tokens: int
    seconds: float = 0.0  # the run's wall-clock time, drafting included
    reference_seconds: float = 0.0  # the reference's (one at a time, KV cache on) on the same prompt
    reference_passes: int = 0
    reference_pass_seconds: float = 0.0  # the time of its passes alone
    positions: list[dict] = field(default_factory=list)  # acceptance per draft position (acceptance.py)
    draft_passes: int = 0  # a draft model's small passes, and their time
    draft_seconds: float = 0.0


def knowing(name: str, prompt: list[int], reference: Run, model: Model, rng: random.Random,
            draft: DraftModel | None = None, gamma: int = Generate.gamma) -> Proposer:
    """Proposer ``name``, given the answer: the guess goes wrong halfway, the drafts copy (or spoil) the reference."""
    vocab = model.facts.vocab_size
    return proposer(name, Context(prompt=prompt, vocab_size=vocab, rng=rng, answer=prompt + reference.tokens,
                                  guess=wrong_halfway(reference.tokens, vocab), draft=draft, gamma=gamma))


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
                  seed: int = 0, draft: DraftModel | None = None, gamma: int = Generate.gamma) -> list[Outcome]:
    """Run every mode on one prompt and compare each with greedy decoding (KV cache on)."""
    # One untimed pass over the prompt first: a runtime's first pass of a new length costs more (onnxruntime
    # plans its memory per shape), and the reference, run first, would pay it for every mode.
    await model.session().forward(prompt, rows_from=len(prompt) - 1)
    began = time.perf_counter()
    reference = await greedy(model, prompt, max_new)
    reference_seconds = time.perf_counter() - began
    outcomes = []
    for name, kv_cache in modes:
        propose = None
        began = time.perf_counter()
        if name == "greedy":
            run = await greedy(model, prompt, max_new, kv_cache=kv_cache)
        else:
            # Seeded per prompt and proposer, not per cache mode, so both cache modes see the same drafts.
            rng = random.Random(f"{seed}/{index}/{name}")
            propose = knowing(name, prompt, reference, model, rng, draft, gamma)
            run = await drafted(model, prompt, propose, max_new, kv_cache=kv_cache, mode=name)
        seconds = time.perf_counter() - began
        difference = first_difference(reference.tokens, run.tokens)
        drafting = isinstance(propose, ModelDraft)
        outcomes.append(Outcome(prompt=index, mode=name, kv_cache=kv_cache, identical=difference is None,
                                first_difference=difference, passes=len(run.passes), tokens=len(run.tokens),
                                seconds=seconds, reference_seconds=reference_seconds,
                                reference_passes=len(reference.passes), reference_pass_seconds=reference.seconds,
                                positions=per_position(propose.split(run.passes)[0] if drafting else run.passes),
                                draft_passes=propose.passes if drafting else 0,
                                draft_seconds=propose.seconds if drafting else 0.0))
    return outcomes


def summarize(outcomes: list[Outcome]) -> list[dict]:
    """Per mode: the share of prompts reproduced exactly, tokens per pass, the failures; the wall-clock seconds
    beside the reference's on the same prompts (so the speed-up), and for drafting modes the acceptance per
    draft position (and for a draft model its passes and its cost ratio c)."""
    rows, positions, costs = {}, {}, {}
    for outcome in outcomes:
        key = (outcome.mode, outcome.kv_cache)
        row = rows.setdefault(key, {
            "mode": outcome.mode, "kv_cache": outcome.kv_cache, "prompts": 0, "identical": 0,
            "passes": 0, "tokens": 0, "failures": [], "seconds": 0.0, "greedy_seconds": 0.0})
        row["prompts"] += 1
        row["identical"] += outcome.identical
        row["passes"] += outcome.passes
        row["tokens"] += outcome.tokens
        row["seconds"] += outcome.seconds
        row["greedy_seconds"] += outcome.reference_seconds
        if not outcome.identical:
            row["failures"].append({"prompt": outcome.prompt, "first_difference": outcome.first_difference})
        tally = positions.setdefault(key, [])
        for found in outcome.positions:
            if found["position"] > len(tally):
                tally.append([0, 0])
            tally[found["position"] - 1][0] += found["reached"]
            tally[found["position"] - 1][1] += found["accepted"]
        cost = costs.setdefault(key, [0.0, 0, 0.0, 0])  # cost_ratio's arguments: the draft's, then the target's
        cost[0] += outcome.draft_seconds
        cost[1] += outcome.draft_passes
        cost[2] += outcome.reference_pass_seconds
        cost[3] += outcome.reference_passes
    for key, row in rows.items():
        row["share"] = row["identical"] / row["prompts"]
        row["tokens_per_pass"] = row["tokens"] / row["passes"]
        row["speedup"] = row["greedy_seconds"] / row["seconds"] if row["seconds"] else None
        if positions[key]:
            row["acceptance"] = [{"position": j + 1, "reached": r, "accepted": a, "alpha": a / r}
                                 for j, (r, a) in enumerate(positions[key])]
            reached = sum(r for r, _ in positions[key])
            row["alpha"] = sum(a for _, a in positions[key]) / reached
        if costs[key][1]:
            row["draft_seconds"], row["draft_passes"] = costs[key][:2]
            row["c"] = cost_ratio(*costs[key])
    return list(rows.values())
