"""The native backend behind the seam, on the tiny export: rows, top-k, logits, both cache modes, rollback."""

import asyncio
import json

import pytest

from onepass.backends.native import NativeModel
from onepass.backends.tokenizer import NativeTokenizer

TEXT = "The capital of France is Paris. The capital of Germany is Berlin."


@pytest.fixture(scope="module")
def ids(tiny_export):
    return NativeTokenizer(tiny_export).encode(TEXT)


def rows(result):
    return result.argmax, result.topk_ids, result.topk_probs


def test_facts_come_from_the_manifest(tiny_model, tiny_export):
    manifest = json.loads((tiny_export / "manifest.json").read_text())
    assert tiny_model.facts.eos_ids == frozenset(manifest["eos_ids"])
    assert tiny_model.facts.vocab_size == manifest["vocab_size"]
    assert tiny_model.facts.top_k == manifest["outputs"]["top_k"]
    assert tiny_model.facts.name == manifest["model"]["name"]


def test_a_pass_returns_one_row_per_fed_token(tiny_model, ids):
    session = tiny_model.session()
    result = asyncio.run(session.forward(ids))
    assert session.length == len(ids)
    assert len(result.argmax) == len(result.topk_ids) == len(result.topk_probs) == len(ids)
    assert all(len(row) == tiny_model.facts.top_k for row in result.topk_ids)
    assert [row[0] for row in result.topk_ids] == result.argmax
    assert all(row == sorted(row, reverse=True) and 0 < sum(row) <= 1.0001 for row in result.topk_probs)
    assert result.logits is None and result.seconds > 0


def test_logits_only_when_asked_and_consistent(tiny_model, ids):
    result = asyncio.run(tiny_model.session().forward(ids[:4], logits=True))
    assert len(result.logits) == 4 and len(result.logits[0]) == tiny_model.facts.vocab_size
    assert [max(range(len(row)), key=row.__getitem__) for row in result.logits] == result.argmax


def test_cache_on_and_off_give_identical_rows(tiny_model, ids):
    cached, uncached = tiny_model.session(kv_cache=True), tiny_model.session(kv_cache=False)
    for piece in (ids[:5], ids[5:6], ids[6:12]):
        assert rows(asyncio.run(cached.forward(piece))) == rows(asyncio.run(uncached.forward(piece)))
    assert cached.length == uncached.length == 12


@pytest.mark.parametrize("kv_cache", [True, False])
def test_rollback_forgets_rejected_tokens(tiny_model, ids, kv_cache):
    wrong = [(token + 1) % tiny_model.facts.vocab_size for token in ids[8:14]]
    session = tiny_model.session(kv_cache=kv_cache)
    asyncio.run(session.forward(ids[:8] + wrong))
    session.rollback(8)
    assert session.length == 8
    after_rollback = asyncio.run(session.forward(ids[8:14]))
    fresh = asyncio.run(tiny_model.session(kv_cache=kv_cache).forward(ids[:14]))
    assert rows(after_rollback) == tuple(column[8:] for column in rows(fresh))


def test_not_an_export(tmp_path):
    with pytest.raises(FileNotFoundError, match="manifest.json"):
        NativeModel(tmp_path)


def test_plain_runs_that_share_the_prompts_pass_are_the_runs_made_one_by_one(tiny_model, ids):
    """whole_runs' plain runs continue from one pass over the prompt, rolled back after each run: on the export, the
    same tokens as runs that each make their own (the toy's test says so of the logic: test_onepass_sampled.py)."""
    import random
    from collections import Counter

    from onepass.sampled import open_prompt, sample

    async def tally(opened) -> Counter:
        rng = random.Random(1)
        return Counter([tuple((await sample(tiny_model, ids, 3, 1.0, rng, opened)).tokens) for _ in range(200)])

    alone = asyncio.run(tally(None))
    assert len(alone) > 50 and asyncio.run(tally(asyncio.run(open_prompt(tiny_model, ids)))) == alone
