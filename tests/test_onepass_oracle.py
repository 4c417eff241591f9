"""The oracle: drafted generation writes exactly greedy's tokens, whatever proposes the draft.

Proposers: prompt lookup, a fixed guess that goes wrong halfway, a deliberately
wrong draft, random drafts, a noisy and a perfect draft (see
onepass/exactness.py). Every one must reproduce greedy decoding token for token,
with the KV cache on and off, on the tiny export over many prompts and on the
real export over a subset of the prompt set: 20 prompts of 64 tokens with ``ONEPASS_SWEEPS=1``, 10 of 32 in CI
(the whole set runs from ``python -m onepass exactness``, see the README).
"""

import asyncio
import json
import math
from pathlib import Path

import pytest

from onepass.backends.native import NativeModel
from onepass.backends.tokenizer import NativeTokenizer
from onepass.exactness import ORACLE_PROPOSERS, compare
from tests.conftest import sweep

PROMPTS = json.loads((Path(__file__).parent / "data" / "prompts.json").read_text())
TINY_PROMPTS = PROMPTS[::10]
TINY_UNCACHED_PROMPTS = PROMPTS[3::60]
REAL_PROMPTS = PROMPTS[::13]
REAL_SWEPT, REAL_MAX_NEW = sweep((REAL_PROMPTS[::2], 32), (REAL_PROMPTS, 64))
REAL_UNCACHED_PROMPTS = [PROMPTS[40], PROMPTS[150]]


def run_modes(model, tokenizer, prompts, max_new, modes):
    outcomes = []
    for index, text in enumerate(prompts):
        outcomes += asyncio.run(compare(model, index, tokenizer.encode(text), max_new, modes))
    return outcomes


def failures(outcomes):
    return [(o.prompt, o.mode, o.kv_cache, o.first_difference) for o in outcomes if not o.identical]


@pytest.fixture(scope="module")
def tiny(tiny_export):
    return NativeModel(tiny_export), NativeTokenizer(tiny_export)


@pytest.fixture(scope="module")
def real(real_export):
    return NativeModel(real_export), NativeTokenizer(real_export)


def test_prompt_set():
    assert len(PROMPTS) >= 200 and len(set(PROMPTS)) == len(PROMPTS)
    assert sum("<|im_start|>" in prompt for prompt in PROMPTS) >= 50
    assert len(REAL_PROMPTS) >= 20


@pytest.mark.slow
def test_tiny_every_proposer_with_the_cache(tiny):
    outcomes = run_modes(*tiny, TINY_PROMPTS, 24, [(name, True) for name in ORACLE_PROPOSERS])
    assert len(outcomes) == len(TINY_PROMPTS) * len(ORACLE_PROPOSERS)
    assert failures(outcomes) == []


@pytest.mark.slow
def test_tiny_every_proposer_without_the_cache_matches_with_it(tiny):
    modes = [("greedy", False)] + [(name, kv) for name in ORACLE_PROPOSERS for kv in (True, False)]
    outcomes = run_modes(*tiny, TINY_UNCACHED_PROMPTS, 16, modes)
    assert failures(outcomes) == []
    passes = {(o.prompt, o.mode, o.kv_cache): o.passes for o in outcomes}
    for (prompt, mode, kv_cache), count in passes.items():
        if not kv_cache and mode != "greedy":
            assert count == passes[(prompt, mode, True)], (prompt, mode)


def test_tiny_pass_counts_follow_the_draft_quality(tiny):
    """A perfect draft yields 7 tokens a pass (6 + the bonus); a wrong one yields exactly 1, like greedy."""
    max_new = 32
    outcomes = run_modes(*tiny, TINY_PROMPTS[:4], max_new, [("perfect", True), ("wrong", True)])
    for outcome in outcomes:
        if outcome.tokens == max_new:  # the run did not stop early at an end-of-text id
            expected = math.ceil(max_new / 7) if outcome.mode == "perfect" else max_new
            assert outcome.passes == expected, outcome


def test_real_every_proposer_with_the_cache(real):
    outcomes = run_modes(*real, REAL_SWEPT, REAL_MAX_NEW, [(name, True) for name in ORACLE_PROPOSERS])
    assert failures(outcomes) == []


def test_real_without_the_cache(real):
    outcomes = run_modes(*real, REAL_UNCACHED_PROMPTS, 24, [("greedy", False), ("lookup", False), ("wrong", False)])
    assert failures(outcomes) == []
