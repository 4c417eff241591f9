"""Prompt lookup's match rules, on hand-written token ids (no model needed)."""

from onepass.lookup import most_recent_match, prompt_lookup


def test_takes_the_most_recent_occurrence():
    #        0  1  2  3  4  5  6  7  8  9
    text = [1, 2, 10, 11, 9, 1, 2, 20, 21, 7, 1, 2]
    assert most_recent_match(text, 2) == 5
    assert prompt_lookup(text) == [20, 21, 7, 1, 2]


def test_proposes_at_most_six_tokens():
    text = [1, 2] + list(range(100, 110)) + [1, 2]
    assert prompt_lookup(text) == list(range(100, 106))


def test_draft_length_and_ngram_sizes_are_configurable():
    text = [1, 2] + list(range(100, 110)) + [5, 2]
    assert prompt_lookup(text, max_draft=3) == [100, 101, 102]
    assert prompt_lookup(text, ngram_sizes=(2,)) == []


def test_falls_back_to_the_last_token_when_the_pair_never_occurred():
    text = [5, 2, 30, 31, 8, 2]  # the pair (8, 2) is new; the token 2 occurred at index 1
    assert prompt_lookup(text) == [30, 31, 8, 2]


def test_the_pair_wins_over_a_more_recent_single_token():
    text = [1, 2, 40, 9, 2, 50, 1, 2]  # (1, 2) at 0; a lone 2 more recently at 4
    assert prompt_lookup(text) == [40, 9, 2, 50, 1, 2]


def test_the_trailing_ngram_does_not_match_itself():
    assert prompt_lookup([7, 8]) == []
    assert most_recent_match([7, 8], 2) is None
    assert most_recent_match([7, 8], 1) is None


def test_overlapping_repeats_propose_what_followed():
    assert prompt_lookup([3, 3, 3]) == [3]  # the pair (3, 3) at 0 was followed by one 3
    assert prompt_lookup([4, 3, 3]) == [3]  # no earlier pair; the lone 3 at 1 was followed by 3


def test_fewer_than_six_tokens_available():
    text = [1, 2, 60, 61, 1, 2]
    assert prompt_lookup(text) == [60, 61, 1, 2]


def test_no_match_proposes_nothing():
    assert prompt_lookup([1, 2, 3, 4, 5]) == []
    assert prompt_lookup([9]) == []
    assert prompt_lookup([]) == []
