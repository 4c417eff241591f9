"""The draft's trainer: its data stays apart from the benchmark, its designs have the shapes they claim, and the
acceptance it reports is the drafted loop's own arithmetic."""

import json
from pathlib import Path

import torch

from draft.heads import Eagle, Medusa, Readout
from draft.instructions import instructions
from draft.simulate import Acceptance, acceptance

BENCHMARK = Path(__file__).parent.parent / "benchmarks" / "draft_prompts.json"


def test_training_instructions_and_benchmark_prompts_do_not_meet():
    held_out = json.loads(BENCHMARK.read_text())
    assert len(held_out) >= 20 and len(set(held_out)) == len(held_out)
    # They share forms ("Write a Python function that ..."), never a task: no prompt holds or is held by another.
    for prompt in held_out:
        assert not any(prompt.lower() in text.lower() or text.lower() in prompt.lower() for text in instructions())


def small(vocab=50, d=16):
    generator = torch.Generator().manual_seed(0)
    table = torch.randn(vocab, d, generator=generator)
    readout = Readout(table, torch.tensor([1, 3, 5, 7, 9]))
    return table, readout


def test_readout_maps_its_subset_back_to_vocabulary_ids():
    table, readout = small()
    assert readout.index[7] == 3 and readout.index[2] == -1
    logits = readout(table[[3, 9]])
    assert logits.shape == (2, 5)
    logits = torch.zeros(2, 5)
    logits[0, 2], logits[1, 4] = 1, 1
    assert readout.token(logits).tolist() == [5, 9]


def test_designs_shapes():
    table, readout = small()
    eagle = Eagle(table, readout, heads=4, kv_heads=2, mlp=32, theta=10_000.0)
    out = eagle(torch.randn(2, 6, 16), torch.randint(0, 50, (2, 6)), torch.arange(1, 7))
    assert out.shape == (2, 6, 16)
    medusa = Medusa(16, 3, readout)
    assert [tuple(h.shape) for h in medusa(torch.randn(2, 6, 16))] == [(2, 6, 5)] * 3


def test_eagle_is_causal():
    table, readout = small()
    eagle = Eagle(table, readout, heads=4, kv_heads=2, mlp=32, theta=10_000.0)
    feats, tokens = torch.randn(1, 6, 16), torch.randint(0, 50, (1, 6))
    whole = eagle(feats, tokens, torch.arange(1, 7))
    prefix = eagle(feats[:, :4], tokens[:, :4], torch.arange(1, 5))
    assert torch.allclose(whole[:, :4], prefix, atol=1e-5)


def test_acceptance_counts_the_longest_agreeing_prefix_and_the_targets_own_token():
    a = Acceptance(3)
    assert a.add([1, 2, 3], [1, 2, 4]) == 2
    assert a.add([5, 6, 7], [0, 6, 7]) == 0
    assert a.add([1, 2, 3], [1, 2, 3]) == 3
    assert a.tried == [3, 2, 2] and a.right == [2, 2, 1]
    assert a.tokens == 3 + 1 + 4 and a.rounds == 3


def test_acceptance_walks_rounds_like_the_drafted_loop(monkeypatch):
    import draft.simulate as simulate

    ids = torch.arange(20)
    # A draft that is always right: from the prompt's end (5) rounds accept 3, 3, 3, then the last 2 tokens.
    monkeypatch.setattr(simulate, "medusa_draft", lambda model, hidden, p, gamma: ids[p + 1:p + 1 + gamma].tolist())
    result = acceptance(object(), [(ids, torch.zeros(20, 4), 5)], gamma=3)
    assert result.alphas() == [1.0, 1.0, 1.0]
    assert result.tried == [4, 4, 3] and result.rounds == 4 and result.tokens == 4 + 4 + 4 + 3
