"""Step 6 on the live model: p from a real pass (top k and "other"), the drafts, and the rule keeping p exact."""

import asyncio
import json

import pytest

from onepass.backends.tokenizer import NativeTokenizer
from onepass.entry import sample_next
from onepass.drafts import DRAFTS, draft, target

P = target([0.5, 0.25, 0.1])  # the top three, and "other" = 0.15


def test_the_target_lumps_the_rest_of_the_vocabulary_as_other():
    assert P == pytest.approx([0.5, 0.25, 0.1, 0.15])
    # The top k may round to a hair over one: "other" is then nothing, and p still sums to one.
    assert target([0.7, 0.300001]) == pytest.approx([0.7, 0.3, 0.0], abs=1e-5)


def test_each_draft_is_a_distribution_over_the_same_outcomes():
    flat, one_hot, uniform = (draft(P, kind) for kind in DRAFTS)
    for q in (flat, one_hot, uniform):
        assert len(q) == len(P) and sum(q) == pytest.approx(1)
    assert max(flat) < max(P) and flat.index(max(flat)) == 0  # flatter, same favourite
    assert one_hot == [0, 1, 0, 0]  # all on the second choice
    assert uniform == [0.25] * 4
    with pytest.raises(ValueError, match="unknown draft"):
        draft(P, "perfect")


@pytest.mark.parametrize("kind", DRAFTS)
def test_on_the_tiny_model_the_kept_tokens_follow_its_own_p(tiny_model, tiny_export, kind):
    tokenizer = NativeTokenizer(tiny_export)
    request = {"text": "The capital of France is", "draft": kind, "draws": 10_000, "seed": 7}
    result = json.loads(asyncio.run(sample_next(tiny_model, tokenizer, request)))
    assert len(result["ids"]) == tiny_model.facts.top_k and len(result["p"]) == len(result["ids"]) + 1
    assert result["labels"] == {str(t): tokenizer.decode([t]) for t in result["ids"]}
    assert sum(result["counts"]) == 10_000 and result["draft"] == kind
    # 10,000 draws: each frequency is within 0.02 of p (over four standard deviations at worst).
    assert result["frequencies"] == pytest.approx(result["p"], abs=0.02)


def test_a_bad_request_is_refused_in_words(tiny_model, tiny_export):
    def refusal(text: str, kind: str) -> str:
        request = {"text": text, "draft": kind, "draws": 100, "seed": 0}
        return json.loads(asyncio.run(sample_next(tiny_model, NativeTokenizer(tiny_export), request)))["error"]["message"]

    assert "choose a draft" in refusal("one two", "perfect")
    assert "empty" in refusal("", "uniform")
