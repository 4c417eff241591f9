"""Step 5's worked examples on the real model: prompt lookup's wins and losses, and still greedy's text."""

import asyncio

import pytest

from onepass.backends.native import NativeModel
from onepass.backends.tokenizer import NativeTokenizer
from onepass.drafted import drafted
from onepass.examples import EXAMPLES, example
from onepass.greedy import greedy
from onepass.lookup import lookup_match, prompt_lookup
from tests.test_pages_text import RECORDED


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


def sources(run):
    """Per pass: where prompt lookup copied from ("prompt", "answer") or None when it found no match."""
    text, found = list(run.prompt), []
    for record in run.passes:
        match = lookup_match(text)
        found.append(None if match is None else "prompt" if match[1] < len(run.prompt) else "answer")
        text += record.added
    return found


def test_capitals_copies_the_scaffolding_from_its_own_answer_and_loses_on_the_facts(runs):
    tokenizer, results = runs
    lookup, _ = results["capitals"]
    texts, found = added_texts(tokenizer, lookup), sources(lookup)
    assert "Paris" in tokenizer.decode(lookup.tokens) and "Oslo" in tokenizer.decode(lookup.tokens)
    # The scaffolding: after a full stop, the sentence before is copied; " The capital of" is kept.
    scaffolding = [i for i, text in enumerate(texts) if text.startswith(" The capital of")]
    assert len(scaffolding) == 6 and all(found[i] == "answer" and lookup.passes[i].accepted == 3 for i in scaffolding)
    # The countries are in the prompt's list: after one, lookup copies the list (", Spain, ...") and fails.
    after_country = [i for i, text in enumerate(texts) if text == " is"]
    assert len(after_country) == 8 and all(found[i] == "prompt" and lookup.passes[i].accepted == 0
                                           and tokenizer.decode(lookup.passes[i].draft[:1]) in (",", ".")
                                           for i in after_country)
    # The cities appear nowhere earlier: after one there is nothing to copy, an ordinary pass.
    for city in (" Berlin", " Rome", " Athens", " Oslo"):
        assert found[texts.index(city) + 1] is None
    assert (len(lookup.tokens), len(lookup.passes)) == (57, 36)  # quoted on step 5


def test_past_tense_copies_long_runs_and_changes_the_verbs(runs):
    tokenizer, results = runs
    lookup, _ = results["past-tense"]
    text = tokenizer.decode(lookup.tokens)
    if not text.startswith("Yesterday"):
        # Seen on a processor with AMX and AVX-512 (2026-12-03): its native kernels round a near-tie at the first
        # token the other way and the model echoes the sentence unchanged. The page's run is the tab's, the same on
        # every machine, and tests/test_pages_real.py checks its counts there.
        pytest.skip(f"this processor's native arithmetic gives another answer: {text[:60]!r}")
    assert "sat on the mat and watched the birds" in text and "slept" in text
    assert any(" the mat and" in piece and piece.endswith(" watched") for piece in added_texts(tokenizer, lookup))
    assert max(record.accepted for record in lookup.passes) >= 4
    assert (len(lookup.tokens), len(lookup.passes)) == (28, 13)  # quoted on step 5


def test_spelling_orange_gets_nothing_from_lookup_and_keeps_the_models_mistake(runs):
    tokenizer, results = runs
    lookup, reference = results["spelling"]
    # Whatever this processor's answer: the drafted text is greedy's, no copy is kept, one token a pass.
    assert lookup.tokens == reference.tokens
    assert all(record.accepted == 0 for record in lookup.passes)
    assert lookup.tokens_per_pass == 1.0 and len(lookup.passes) == len(reference.passes)
    if lookup.tokens != RECORDED["spelling"]["lookup"]["tokens"]:
        # As for Past tense: the page quotes the tab's run (tests/test_pages_real.py checks it there).
        pytest.skip(f"this processor's native arithmetic gives another answer: {tokenizer.decode(lookup.tokens)!r}")
    # The 0.5B model misspells the word (step 5's run). Both copies are rejected: the chat markup after the question,
    # and at the second " r", what followed the first.
    assert tokenizer.decode(lookup.tokens) == "O r n o r e<|im_end|>"
    assert [tokenizer.decode(record.draft) for record in lookup.passes if record.draft] == ["<|im_start|>assistant\n",
                                                                                         " n o r"]


def test_examples_are_found_by_key():
    assert example("spelling").title == "Spelling"
    with pytest.raises(KeyError):
        example("nonsense")
