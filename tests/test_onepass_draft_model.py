"""Drafting with a model, in seconds on the toy: the target's features reach the draft, lined up, and the text
stays greedy's whatever the draft proposes.

The toy's draft (``backends/toy.py``'s ``ToyDraft``) knows the toy exactly from its features, so with no errors
every drafted token must be accepted: any off-by-one between features, tokens and positions would show as a
rejection. With errors the text must still be greedy's; with every token spoilt none is accepted. The same
path on the tiny export's real ONNX draft: tests/test_draft*.py and test_onepass_oracle.py.
"""

import asyncio
import random

import pytest

from onepass.acceptance import cost_ratio, mean_alpha, per_position
from onepass.backends.toy import ToyDraft, ToyModel
from onepass.draft_model import COPY_NGRAMS, ModelDraft
from onepass.drafted import drafted
from onepass.exactness import Outcome, compare, summarize
from onepass.greedy import greedy
from onepass.lookup import copied, lookup_match
from onepass.trace import PassRecord

MODELS = [ToyModel(), ToyModel(vocab_size=64, order=3, seed=2, eos_ids=frozenset({5, 7}))]


def prompt_of(rng: random.Random, model: ToyModel) -> list[int]:
    return [rng.randrange(1, model.facts.vocab_size) for _ in range(rng.randint(1, 12))]


@pytest.mark.parametrize("kv_cache", [True, False])
@pytest.mark.parametrize("model", MODELS, ids=["bigram", "trigram"])
def test_a_draft_that_knows_the_model_is_always_accepted(model, kv_cache):
    rng = random.Random(1)
    for _ in range(200):
        prompt, gamma, window = prompt_of(rng, model), rng.randint(1, 6), rng.randint(1, 5)
        propose = ModelDraft(ToyDraft(model, window=window), gamma)
        run = asyncio.run(drafted(model, prompt, propose, 40, kv_cache=kv_cache, mode="draft"))
        assert run.tokens == asyncio.run(greedy(model, prompt, 40)).tokens
        # Every round but the first (nothing to read before the prompt's pass) drafts gamma tokens, all right,
        # unless the text's end cuts the draft.
        for record in run.passes[1:]:
            assert record.accepted == len(record.draft)
        assert propose.passes >= sum(len(record.draft) for record in run.passes)


@pytest.mark.parametrize("error_rate", [0.3, 1.0])
def test_a_wrong_draft_model_changes_no_token(error_rate):
    rng = random.Random(2)
    for model in MODELS:
        for _ in range(200):
            prompt, gamma = prompt_of(rng, model), rng.randint(1, 6)
            propose = ModelDraft(ToyDraft(model, error_rate, random.Random(rng.random())), gamma)
            run = asyncio.run(drafted(model, prompt, propose, 30, kv_cache=rng.random() < 0.5, mode="draft"))
            assert run.tokens == asyncio.run(greedy(model, prompt, 30)).tokens
            if error_rate == 1.0:
                assert all(record.accepted == 0 for record in run.passes)


def test_the_first_round_of_a_one_token_prompt_is_an_ordinary_pass():
    model = MODELS[0]
    run = asyncio.run(drafted(model, [3], ModelDraft(ToyDraft(model), 4), 10))
    assert run.passes[0].draft == [] and all(len(record.draft) > 0 for record in run.passes[1:-1])


def test_acceptance_per_position_counts_reached_and_accepted():
    def record(draft, accepted):
        return PassRecord(start=0, fed=[1], draft=draft, predicted=[0] * (len(draft) + 1), accepted=accepted,
                          token=0, added=[0], seconds=0.0)

    passes = [record([1, 2, 3], 3), record([1, 2, 3], 1), record([1, 2], 0), record([], 0)]
    assert per_position(passes) == [
        {"position": 1, "reached": 3, "accepted": 2, "alpha": 2 / 3},
        {"position": 2, "reached": 2, "accepted": 1, "alpha": 0.5},
        {"position": 3, "reached": 1, "accepted": 1, "alpha": 1.0},
    ]
    assert mean_alpha(passes) == 4 / 6
    assert mean_alpha([record([], 0)]) is None
    assert cost_ratio(0.5, 10, 2.0, 20) == 0.5 and cost_ratio(0.0, 0, 1.0, 1) is None


def test_the_exactness_check_reports_a_draft_models_acceptance_cost_and_time():
    model = MODELS[1]
    outcomes = []
    for index in range(5):
        # Every round the same (gamma tokens): the toy's draft is always right, but never sure enough for the
        # policy's confidence stop (its q is flattened).
        outcomes += asyncio.run(compare(model, index, prompt_of(random.Random(index), model), 24,
                                        [("lookup", True), ("draft-fixed", True)], draft=ToyDraft(model), gamma=3))
    rows = {row["mode"]: row for row in summarize(outcomes)}
    assert rows["draft-fixed"]["share"] == 1.0 and rows["draft-fixed"]["alpha"] == 1.0
    assert [found["position"] for found in rows["draft-fixed"]["acceptance"]] == [1, 2, 3]
    # The toy's draft takes no time, and its passes hardly any: c is 0, or unknown where a pass took 0 s.
    assert rows["draft-fixed"]["draft_passes"] > 0 and rows["draft-fixed"]["c"] in (0.0, None)
    for row in rows.values():
        assert row["seconds"] > 0 and row["greedy_seconds"] > 0 and row["speedup"] > 0
    assert "c" not in rows["lookup"]


def test_the_summary_gives_c_as_a_small_pass_against_a_pass_of_one_at_a_time():
    # 10 small passes in 1 s against 20 passes in 4 s: 0.1 s against 0.2 s, c = 0.5.
    outcome = Outcome(prompt=0, mode="draft", kv_cache=True, identical=True, first_difference=None, passes=5,
                      tokens=10, seconds=2.0, reference_seconds=4.5, reference_passes=20, reference_pass_seconds=4.0,
                      draft_passes=10, draft_seconds=1.0)
    row = summarize([outcome])[0]
    assert row["c"] == 0.5 and row["draft_passes"] == 10 and row["draft_seconds"] == 1.0
    assert row["speedup"] == 2.25


def test_no_draft_model_is_a_clear_error():
    model = MODELS[0]
    with pytest.raises(ValueError, match="no draft model"):
        asyncio.run(compare(model, 0, [1, 2], 4, [("draft", True)]))


@pytest.mark.parametrize("model", MODELS, ids=["bigram", "trigram"])
def test_copy_first_copies_where_the_text_repeats_and_drafts_elsewhere(model):
    rng = random.Random(3)
    for _ in range(100):
        # A prompt that repeats itself, so that prompt lookup finds pairs; a draft that is always wrong, so that
        # every token it keeps came from a copy.
        half = prompt_of(rng, model)
        prompt = half + half
        wrong = ModelDraft(ToyDraft(model, 1.0, random.Random(rng.random())), rng.randint(1, 4), copy_first=True)
        run = asyncio.run(drafted(model, prompt, wrong, 30, kv_cache=rng.random() < 0.5, mode="lookup+draft"))
        assert run.tokens == asyncio.run(greedy(model, prompt, 30)).tokens
        own, copies = wrong.split(run.passes)
        assert len(own) + len(copies) == len(run.passes) == len(wrong.kinds)
        assert all(record.accepted == 0 for record in own)
        text = list(prompt)
        for record, kind in zip(run.passes, wrong.kinds):
            found = lookup_match(text, COPY_NGRAMS)
            # (A proposal the end of the run cut to nothing still drafted: "draft" with an empty record.draft.)
            assert kind == "copy" if found is not None else kind == "draft" or not record.draft
            if kind == "copy":
                assert record.draft == copied(text, found)[:len(record.draft)]
            text += record.added
        # The draft's small passes are spent only where nothing was copied.
        assert wrong.passes == sum(wrong.gamma for kind in wrong.kinds if kind == "draft")


def test_without_copy_first_every_round_is_the_draft_models():
    model = MODELS[0]
    propose = ModelDraft(ToyDraft(model), 2)
    run = asyncio.run(drafted(model, [3, 4, 3, 4, 3, 4], propose, 12))
    own, copies = propose.split(run.passes)
    assert copies == [] and own == run.passes and "copy" not in propose.kinds
