"""The speed-up formula of Leviathan, Kalman & Matias (2023)."""

import pytest

from onepass.speedup import best_gamma, expected_tokens, speedup


def test_known_value():
    assert speedup(0.8, 5, 0.0) == pytest.approx(3.69, abs=0.005)
    assert expected_tokens(0.8, 5) == pytest.approx((1 - 0.8 ** 6) / 0.2)


def test_all_right_drafts_yield_every_token_plus_the_bonus():
    assert expected_tokens(1.0, 5) == 6.0
    assert expected_tokens(1.0 - 1e-12, 5) == pytest.approx(6.0, rel=1e-6)


def test_never_fewer_than_one_token_per_pass():
    for alpha in (0.0, 0.1, 0.5, 0.9, 1.0):
        for gamma in range(0, 12):
            assert expected_tokens(alpha, gamma) >= 1.0
    assert expected_tokens(0.0, 7) == 1.0
    assert expected_tokens(0.5, 0) == 1.0


def test_draft_cost_divides_the_gain():
    assert speedup(0.8, 5, 0.1) == pytest.approx(expected_tokens(0.8, 5) / 1.5)
    assert speedup(0.0, 4, 0.05) < 1.0  # a useless draft that costs something loses


def test_best_draft_length():
    assert best_gamma(0.8, 0.05) == max(range(21), key=lambda g: speedup(0.8, g, 0.05))
    assert 2 <= best_gamma(0.8, 0.05) <= 8  # "a handful of tokens"
    assert best_gamma(0.9, 0.01) > best_gamma(0.6, 0.01)  # better drafts deserve longer ones
    assert best_gamma(0.0, 0.05) == 0  # when nothing is ever right, draft nothing
    assert best_gamma(0.8, 0.0, max_gamma=12) == 12  # free drafts: longer is always better


def test_rejects_impossible_parameters():
    with pytest.raises(ValueError):
        expected_tokens(1.5, 3)
    with pytest.raises(ValueError):
        speedup(0.5, 3, -0.1)
