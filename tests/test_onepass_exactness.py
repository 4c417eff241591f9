"""How the exactness check compares and summarises runs (pure logic, no model)."""

import random

from onepass.exactness import Outcome, first_difference, summarize, wrong_halfway
from onepass.proposers import fixed_guess, from_answer, random_draft


def test_first_difference():
    assert first_difference([1, 2, 3], [1, 2, 3]) is None
    assert first_difference([1, 2, 3], [1, 5, 3]) == 1
    assert first_difference([1, 2, 3], [1, 2]) == 2


def test_summary_counts_shares_and_failures():
    outcomes = [
        Outcome(prompt=0, mode="lookup", kv_cache=True, identical=True, first_difference=None, passes=4, tokens=8),
        Outcome(prompt=7, mode="lookup", kv_cache=True, identical=False, first_difference=3, passes=4, tokens=8),
        Outcome(prompt=0, mode="lookup", kv_cache=False, identical=True, first_difference=None, passes=4, tokens=8),
    ]
    on, off = summarize(outcomes)
    assert (on["prompts"], on["identical"], on["share"], on["tokens_per_pass"]) == (2, 1, 0.5, 2.0)
    assert on["failures"] == [{"prompt": 7, "first_difference": 3}]
    assert (off["kv_cache"], off["share"]) == (False, 1.0)


def test_fixed_guess_proposes_the_rest_of_the_guess_while_the_text_follows_it():
    propose = fixed_guess(2, [10, 11, 12])
    assert propose([1, 2]) == [10, 11, 12]
    assert propose([1, 2, 10]) == [11, 12]
    assert propose([1, 2, 10, 99]) == []  # corrected: the rest of the guess no longer applies


def test_answer_based_drafts():
    answer = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    rng = random.Random(0)
    assert from_answer(answer, 100, 0.0, rng, max_draft=3)([1, 2]) == [3, 4, 5]
    assert from_answer(answer, 100, 1.0, rng, max_draft=3)([1, 2]) == [4, 5, 6]
    assert from_answer(answer, 100, 0.0, rng)(answer) == []
    assert wrong_halfway([5, 6, 7, 8], 10) == [5, 6, 8, 8]


def test_random_drafts_are_reproducible_and_drawn_from_the_text():
    text = [3, 1, 4, 1, 5]
    first = [random_draft(random.Random(9))(text) for _ in range(3)]
    assert first == [random_draft(random.Random(9))(text) for _ in range(3)]
    draws = random_draft(random.Random(1))
    assert all(set(draws(text)) <= set(text) and len(draws(text)) <= 6 for _ in range(50))
