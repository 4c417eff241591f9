"""alpha and c fitted to a step-5 run: the speed-up formula at the run's draft length gives back what it measured.

Recorded runs: step 5's three examples with prompt lookup and one token per
pass, every pass timed, made by

    PYTHONPATH=py .venv/bin/python -m onepass examples --model DIR --record tests/data/runs-SOURCE.json

on the tiny test model and on the default model (DIR as printed by
``python -m model_export --source SOURCE``).
"""

import json
from pathlib import Path

import pytest

from onepass.estimate import Estimate, alpha_for, fit, measured
from onepass.speedup import expected_tokens

DATA = Path(__file__).parent / "data"
RECORDINGS = sorted(DATA.glob("runs-*.json"))
RUNS = [(path.stem, key, runs) for path in RECORDINGS for key, runs in json.loads(path.read_text())["runs"].items()]


def fitted(runs: dict):
    lookup = runs["lookup"]
    m = measured(lookup, runs["greedy"], lookup["proposer_seconds"], lookup["max_draft"])
    return m, fit(m)


def test_both_recordings_are_here():
    assert [path.stem for path in RECORDINGS] == ["runs-default", "runs-tiny"]


@pytest.mark.parametrize("gamma", [1, 2, 3, 6, 10])
def test_alpha_for_inverts_the_formula(gamma):
    for alpha in [i / 20 for i in range(21)]:
        assert alpha_for(expected_tokens(alpha, gamma), gamma) == pytest.approx(alpha, abs=1e-6)  # near 1 the formula itself loses digits


def test_alpha_needs_a_draft():
    with pytest.raises(ValueError):
        alpha_for(1.0, 0)


@pytest.mark.parametrize("recording, key, runs", RUNS, ids=[f"{r}-{k}" for r, k, _ in RUNS])
def test_the_formula_reproduces_the_recorded_run(recording, key, runs):
    m, estimate = fitted(runs)
    assert estimate.gamma == runs["lookup"]["max_draft"] == 6
    assert 0 <= estimate.alpha <= 1 and estimate.c >= 0
    assert estimate.tokens_per_pass() == pytest.approx(m.tokens_per_pass, rel=0.10)
    predicted = estimate.seconds_per_token(m.pass_seconds)
    if estimate.c > 0:
        assert predicted == pytest.approx(m.seconds_per_token, rel=0.10)
    else:  # drafted rounds came out quicker than one-token passes: c stops at 0, the formula errs on the slow side
        assert predicted >= m.seconds_per_token


def test_accepted_over_drafted_would_not_reproduce_capitals():
    runs = json.loads((DATA / "runs-default.json").read_text())["runs"]["capitals"]
    m, estimate = fitted(runs)
    totals = runs["lookup"]["totals"]
    naive = totals["accepted"] / totals["drafted"]
    assert expected_tokens(naive, 6) < 0.8 * m.tokens_per_pass  # the step-6 chart's old "your α"
    assert estimate.alpha > 2 * naive


def one(draft: int, accepted: int, seconds: float) -> dict:
    """A pass record as the runs hold it: only what the fit reads."""
    return {"draft": [0] * draft, "added": [0] * (accepted + 1), "seconds": seconds}


def test_empty_and_cut_drafts_count_as_the_rounds_they_were():
    # After the prompt: a full draft kept whole (7 tokens), no match at all (1), a draft cut to 2 at the end (3).
    run = {"passes": [one(0, 0, 9.0), one(6, 6, 1.6), one(0, 0, 1.0), one(2, 2, 1.2)]}
    greedy = {"passes": [one(0, 0, 9.0)] + [one(0, 0, 1.0)] * 11}
    m = measured(run, greedy, proposer_seconds=0.0, max_draft=6)
    assert (m.gamma, m.passes, m.tokens, m.seconds) == (6, 3, 11, pytest.approx(3.8))
    estimate = fit(m)
    assert estimate.tokens_per_pass() == pytest.approx(11 / 3)
    # Rounds took 3.8 / 3 one-token passes on average: 0.8 / 3 passes more, spread over 6 drafted tokens.
    assert estimate.c == pytest.approx((3.8 / 3 - 1) / 6)
    assert estimate.seconds_per_token(1.0) == pytest.approx(3.8 / 11)


def test_a_run_that_cannot_be_fitted_gives_none():
    single = {"passes": [one(3, 0, 1.0)]}
    greedy = {"passes": [one(0, 0, 1.0)] * 3}
    assert measured(single, greedy, 0.0, 6) is None  # only the pass that read the prompt
    never = {"passes": [one(0, 0, 1.0)] * 3}
    assert measured(never, greedy, 0.0) is None  # a proposer that never drafted: no gamma, no alpha


def test_quicker_rounds_than_passes_give_c_zero():
    run = {"passes": [one(0, 0, 5.0), one(6, 1, 0.5), one(6, 1, 0.5)]}
    greedy = {"passes": [one(0, 0, 5.0)] + [one(0, 0, 1.0)] * 4}
    assert fit(measured(run, greedy, 0.0, 6)) == Estimate(alpha=pytest.approx(alpha_for(2.0, 6)), c=0.0, gamma=6)
