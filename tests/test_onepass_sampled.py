"""Sampling with a draft model, end to end: drafted runs follow the same distribution as plain ones.

Not one token but whole runs: the first three tokens of 3,000 plain runs and of 3,000 drafted ones (the
toy's draft, whose q is flattened so that it differs from p and the rule has work to do) are compared by a
two-sample chi-squared test; the same test must reject a wrong rule (accept every drafted token). The same on
the tiny export with its trained draft: test_draft*.py.
"""

import asyncio
import functools
import random
from collections import Counter

import pytest

from onepass.backends.toy import ToyDraft, ToyModel
from onepass.chisquare import two_samples
from onepass.draft_model import ModelDraft
from onepass.sampled import open_prompt, sample, sample_drafted, whole_runs
from onepass.sampling import pick, tempered

RUNS = 3_000  # the quick loop's; the tiny export's test (test_onepass_draft_native.py) runs 10,000 of each
TOKENS = 3
MODEL = ToyModel(vocab_size=12, order=2, seed=3)
PROMPT = [4, 7]


@functools.cache  # the plain runs serve two tests
def first_tokens(runs: int, seed: int, temperature: float, drafted: bool, rule=None) -> Counter:
    return asyncio.run(whole_runs(MODEL, PROMPT, runs, TOKENS, temperature, random.Random(seed),
                                  draft=ToyDraft(MODEL) if drafted else None, gamma=2, **({"rule": rule} if rule else {})))


@pytest.mark.parametrize("temperature", [1.0, 0.6])
def test_drafted_sampling_follows_plain_sampling_run_for_run(temperature):
    plain = first_tokens(RUNS, 1, temperature, drafted=False)
    drafted = first_tokens(RUNS, 2, temperature, drafted=True)
    verdict = two_samples(plain, drafted)
    assert verdict["dof"] > 20 and verdict["p_value"] > 0.01, verdict


def test_the_same_test_catches_a_rule_that_always_accepts():
    plain = first_tokens(RUNS, 1, 1.0, drafted=False)
    wrong = first_tokens(RUNS, 2, 1.0, drafted=True, rule=lambda p, q, u: True)
    assert two_samples(plain, wrong)["p_value"] < 1e-6


def test_plain_runs_that_share_the_prompts_pass_are_the_runs_made_one_by_one():
    """whole_runs makes the prompt's pass once for all its plain runs: each run is the one a pass of its own gives,
    token for token and pass for pass, the same draws taken in the same order."""

    async def both(runs: int, seed: int):
        alone, shared = random.Random(seed), random.Random(seed)
        opened = await open_prompt(MODEL, PROMPT)
        return [(await sample(MODEL, PROMPT, 8, 1.0, alone), await sample(MODEL, PROMPT, 8, 1.0, shared, opened))
                for _ in range(runs)]

    for one, other in asyncio.run(both(50, 4)):
        assert one.tokens == other.tokens and one.stop == other.stop
        assert [(r.start, r.fed, r.token) for r in one.passes] == [(r.start, r.fed, r.token) for r in other.passes]


def test_the_draft_accepts_some_and_rejects_some():
    propose = ModelDraft(ToyDraft(MODEL), gamma=3)
    run = asyncio.run(sample_drafted(MODEL, PROMPT, propose, 60, 1.0, random.Random(0)))
    accepted = sum(record.accepted for record in run.passes)
    drafted = sum(len(record.draft) for record in run.passes)
    assert 0 < accepted < drafted and len(run.tokens) == 60 or run.stop == "eos"


def test_tempered_top_k_and_pick():
    assert tempered([5, 9], [0.5, 0.25], 1.0) == {5: 2 / 3, 9: 1 / 3}
    low = tempered([5, 9], [0.5, 0.25], 0.5)
    assert low[5] == pytest.approx(0.8) and low[9] == pytest.approx(0.2)
    assert pick({9: 0.5, 5: 0.5}, 0.0) == 5 and pick({9: 0.5, 5: 0.5}, 0.99) == 9
    with pytest.raises(ValueError):
        tempered([1], [1.0], 0.0)


def test_two_samples_of_one_distribution_agree_and_of_two_do_not():
    rng = random.Random(4)
    one = Counter(rng.choices(range(20), k=5000))
    two = Counter(rng.choices(range(20), k=5000))
    skewed = Counter(rng.choices(range(20), weights=[2] + [1] * 19, k=5000))
    assert two_samples(one, two)["p_value"] > 0.01
    assert two_samples(one, skewed)["p_value"] < 1e-3
