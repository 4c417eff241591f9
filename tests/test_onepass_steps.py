"""The lesson's single-pass steps on the tiny export: all at once (step 3) and checking a guess (step 4)."""

import asyncio

import pytest

from onepass.all_at_once import all_at_once
from onepass.backends.tokenizer import NativeTokenizer
from onepass.drafted import drafted
from onepass.greedy import greedy
from onepass.lookup import prompt_lookup
from onepass.verification import check

TEXT = "The capital of France is Paris. The capital of Germany is"


@pytest.fixture(scope="module")
def ids(tiny_export):
    return NativeTokenizer(tiny_export).encode(TEXT)


def test_one_pass_predicts_after_every_position_as_if_the_rest_were_absent(tiny_model, ids):
    whole = asyncio.run(all_at_once(tiny_model, ids))
    assert len(whole["argmax"]) == len(ids)
    for end in (1, 4, len(ids) // 2, len(ids)):
        assert asyncio.run(all_at_once(tiny_model, ids[:end]))["argmax"][-1] == whole["argmax"][end - 1]


def test_a_right_guess_is_accepted_whole_with_a_bonus_token(tiny_model, ids):
    reference = asyncio.run(greedy(tiny_model, ids, 6))
    verdict, record = asyncio.run(check(tiny_model.session(), ids, reference.tokens[:5]))
    assert verdict.accepted == reference.tokens[:5] and verdict.bonus
    assert verdict.token == reference.tokens[5]
    assert record.added == reference.tokens and len(record.fed) == len(ids) + 5


def test_a_guess_wrong_from_the_start_still_yields_the_models_token(tiny_model, ids):
    reference = asyncio.run(greedy(tiny_model, ids, 1))
    wrong = [(reference.tokens[0] + 1) % tiny_model.facts.vocab_size, 42, 43]
    verdict, record = asyncio.run(check(tiny_model.session(), ids, wrong))
    assert verdict.accepted == [] and verdict.token == reference.tokens[0] and not verdict.bonus
    assert record.added == reference.tokens


def test_each_pass_is_reported_as_it_happens(tiny_model, ids):
    seen = []
    run = asyncio.run(drafted(tiny_model, ids, prompt_lookup, 5, on_pass=seen.append))
    assert seen == run.passes
    assert run.passes[0].start == 0
    assert sum(len(record.added) for record in run.passes) == len(run.tokens)


def test_empty_requests_are_refused(tiny_model, ids):
    with pytest.raises(ValueError, match="empty"):
        asyncio.run(greedy(tiny_model, [], 4))
    with pytest.raises(ValueError, match="at least 1"):
        asyncio.run(drafted(tiny_model, ids, prompt_lookup, 0))
    with pytest.raises(ValueError, match="empty"):
        asyncio.run(all_at_once(tiny_model, []))
