"""Step 5's worked examples on the real model: prompt lookup's wins and losses, and still greedy's text."""

import asyncio

import pytest

from onepass.backends.native import NativeModel
from onepass.backends.tokenizer import NativeTokenizer
from onepass.drafted import drafted
from onepass.examples import EXAMPLES, example
from onepass.greedy import greedy
from onepass.lookup import prompt_lookup


@pytest.fixture(scope="module")
def runs(real_export):
    """For each example: (tokenizer, the lookup run, the greedy run)."""
    model, tokenizer = NativeModel(real_export), NativeTokenizer(real_export)
    results = {}
    for case in EXAMPLES:
        prompt = tokenizer.encode(case.prompt)
        results[case.key] = (asyncio.run(drafted(model, prompt, prompt_lookup, case.max_new, mode="lookup")),
                             asyncio.run(greedy(model, prompt, case.max_new)))
    return tokenizer, results


def added_texts(tokenizer, run):
    return [tokenizer.decode(record.added) for record in run.passes]


@pytest.mark.parametrize("key", [case.key for case in EXAMPLES])
def test_identical_to_greedy_and_ends_by_itself(runs, key):
    _, results = runs
    lookup, reference = results[key]
    assert lookup.tokens == reference.tokens
    assert lookup.stop == reference.stop == "eos"
    assert len(reference.passes) == len(reference.tokens)


def test_capitals_copies_scaffolding_and_loses_on_facts(runs):
    tokenizer, results = runs
    lookup, _ = results["capitals"]
    texts = added_texts(tokenizer, lookup)
    assert "Paris" in tokenizer.decode(lookup.tokens) and "Oslo" in tokenizer.decode(lookup.tokens)
    assert sum(text.startswith(" The capital of") for text in texts) >= 4  # scaffolding copied in one pass
    assert " Berlin" in texts and " Athens" in texts  # facts come one token per pass
    assert 1.4 <= lookup.tokens_per_pass < 2.5


def test_past_tense_copies_long_runs_and_changes_the_verbs(runs):
    tokenizer, results = runs
    lookup, _ = results["past-tense"]
    text = tokenizer.decode(lookup.tokens)
    assert "sat on the mat and watched the birds" in text and "slept" in text
    assert any(" the mat and" in piece and piece.endswith(" watched") for piece in added_texts(tokenizer, lookup))
    assert max(record.accepted for record in lookup.passes) >= 4
    assert lookup.tokens_per_pass >= 1.8


def test_spelling_gets_nothing_from_lookup(runs):
    tokenizer, results = runs
    lookup, reference = results["spelling"]
    assert tokenizer.decode(lookup.tokens).startswith("p y t h o n")
    assert all(record.accepted == 0 for record in lookup.passes)
    assert lookup.tokens_per_pass == 1.0 and len(lookup.passes) == len(reference.passes)


def test_examples_are_found_by_key():
    assert example("spelling").title == "Spelling"
    with pytest.raises(KeyError):
        example("nonsense")
