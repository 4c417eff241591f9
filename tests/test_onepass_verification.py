"""Verification and draft cutting on hand-built predictions (pure logic, no model)."""

import pytest

from onepass.drafted import cut_draft
from onepass.verification import until_end, verify

EOS = frozenset({0, 99})


def test_accepts_up_to_the_first_disagreement_and_takes_the_models_token():
    verdict = verify([5, 6, 7, 8], [5, 6, 9, 8, 1])
    assert verdict.accepted == [5, 6]
    assert verdict.token == 9
    assert not verdict.bonus


def test_later_agreement_after_a_disagreement_is_not_accepted():
    verdict = verify([5, 6, 7], [4, 6, 7, 1])
    assert verdict.accepted == []
    assert verdict.token == 4


def test_a_fully_right_draft_earns_the_bonus_token():
    verdict = verify([5, 6], [5, 6, 7])
    assert verdict.accepted == [5, 6]
    assert verdict.token == 7
    assert verdict.bonus


def test_an_empty_draft_is_an_ordinary_pass():
    verdict = verify([], [3])
    assert verdict.accepted == [] and verdict.token == 3 and not verdict.bonus and verdict.proposed == 0


def test_needs_one_prediction_per_draft_token_plus_one():
    with pytest.raises(ValueError):
        verify([1, 2], [1, 2])


def test_text_ends_at_the_first_end_of_text_id():
    assert until_end([4, 99, 5, 0], EOS) == [4, 99]
    assert until_end([4, 5], EOS) == [4, 5]


def test_a_draft_is_cut_to_the_room_left_minus_the_models_own_token():
    assert cut_draft([1, 2, 3, 4, 5], room=3, eos_ids=EOS) == [1, 2]
    assert cut_draft([1, 2, 3], room=1, eos_ids=EOS) == []


def test_a_draft_is_cut_after_end_of_text():
    assert cut_draft([1, 0, 2, 3], room=10, eos_ids=EOS) == [1, 0]
