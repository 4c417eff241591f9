"""The Python behind the panels, natively: the editable proposer, the chi-squared verdict, the sampling entry point."""

import json
import random

import pytest

from onepass.backends.browser import sample
from onepass.chisquare import chi_square, upper_tail
from onepass.editable import DEFAULT_SOURCE, ProposerError, compile_proposer
from onepass.lookup import prompt_lookup

VOCAB = 100


def test_the_default_proposer_is_prompt_lookup():
    propose = compile_proposer(DEFAULT_SOURCE, VOCAB)
    rng = random.Random(0)
    for _ in range(300):
        text = [rng.randrange(6) for _ in range(rng.randrange(0, 30))]
        assert propose(text) == prompt_lookup(text)


@pytest.mark.parametrize("source, message", [
    ("def propose(text):\n    return 1 / 0\n", "propose raised ZeroDivisionError"),
    ("def propose(text)\n    return []\n", "syntax error on line 1"),
    ("def propose(text):\n    return [-1]\n", "ids run from 0 to 99"),
    ("def propose(text):\n    return [100]\n", "ids run from 0 to 99"),
    ("def propose(text):\n    return 'abc'\n", "must return a list"),
    ("def propose(text):\n    return [1.5]\n", "must be an int"),
    ("def propose(text):\n    return [True]\n", "must be an int"),
    ("x = 1\n", "define a function propose"),
    ("raise ValueError('no')\n", "running your code failed"),
    ("def propose(text):\n    return []\0\n", "cannot be read|syntax error"),
])
def test_a_broken_proposer_gives_a_clear_message(source, message):
    with pytest.raises(ProposerError, match=message):
        compile_proposer(source, VOCAB)([1, 2, 3])


def test_chi_square_tail_matches_tables():
    # Critical values at 5 %: 3.841 (1 dof), 11.070 (5 dof).
    assert upper_tail(3.841, 1) == pytest.approx(0.05, abs=1e-3)
    assert upper_tail(11.070, 5) == pytest.approx(0.05, abs=1e-3)
    assert upper_tail(0.0, 3) == 1.0


def test_a_draw_of_an_impossible_token_refutes_the_rule():
    assert chi_square([5, 5, 1], [0.5, 0.5, 0.0]).p_value == 0.0


def test_sampling_follows_p_and_a_wrong_rule_is_caught():
    p, q = [0.5, 0.3, 0.2], [0.2, 0.2, 0.6]
    result = json.loads(sample(p, q, 10_000, 2))
    assert sum(result["counts"]) == 10_000 and result["verdict"]["consistent"]
    # Keeping every drafted token follows q, not p: the test must notice.
    assert not chi_square([int(10_000 * x) for x in q], p).consistent


@pytest.mark.parametrize("p, q, draws, message", [
    ([0, 0], [1, 1], 10, "at least one probability above 0"),
    ([-1, 2], [1, 1], 10, "at least 0"),
    ([float("nan"), 2], [1, 1], 10, "at least 0"),
    (["1", 2], [1, 1], 10, "at least 0"),
    ([1, 2], [1, 1, 1], 10, "p has 2 words but q has 3"),
    ([1, 2], [1, 1], 10**9, "the number of draws must be a whole number from 1 to 100,000"),
    ([1, 2], [1, 1], 2.5, "whole number"),
])
def test_bad_distributions_are_refused_with_a_message(p, q, draws, message):
    error = json.loads(sample(p, q, draws, 1))["error"]
    assert error["code"] == "input" and message in error["message"]
