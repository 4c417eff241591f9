"""The draft's trainer: its data stay apart from the benchmark, its designs have the shapes they claim, the
windowed draft is stateless (a window run alone equals the same rows inside a text), training's unrolled steps
are the drafted loop's, and the acceptance it reports is the drafted loop's own arithmetic."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from benchmarks.draft_variants import Medusa, WindowEagle, answer_chunks
from draft.heads import Eagle, Readout
from draft.instructions import instructions, library_instructions
from draft.simulate import Acceptance, acceptance, module_step, window_draft
from onepass.defaults import DEFAULTS

BENCHMARK = Path(__file__).parent.parent / "benchmarks" / "draft_prompts.json"
VOCAB, D = 50, 16


@pytest.mark.slow  # reads every standard-library module's docstrings: about 10 s
def test_training_instructions_and_benchmark_prompts_do_not_meet():
    held_out = json.loads(BENCHMARK.read_text())
    assert len(held_out) >= 20 and len(set(held_out)) == len(held_out)
    # They share forms ("Write a Python function that ..."), never a task: no prompt holds or is held by another.
    library = library_instructions(-1)
    assert len(library) > 500  # the standard library's docstrings give hundreds of requests
    training = instructions() + library
    # Step 6's default request is not a training one either: the reader's first run shows the draft on new text.
    for prompt in [*held_out, DEFAULTS["draft"]["text"]]:
        assert not any(prompt.lower() in text.lower() or text.lower() in prompt.lower() for text in training)


def small_readout():
    table = torch.randn(5, D, generator=torch.Generator().manual_seed(0))
    return Readout(table, torch.tensor([1, 3, 5, 7, 9]), VOCAB)


def small_eagle(window=1):
    """The shipped design (window 1) or the windowed variant that benchmarks/draft_variants.py keeps."""
    torch.manual_seed(0)
    model = (Eagle(small_readout(), mlp=32) if window == 1
             else WindowEagle(small_readout(), heads=4, kv_heads=2, mlp=32, window=window)).eval()
    with torch.no_grad():  # the unknown-token vector starts at zero; make it tell tokens apart in the tests
        model.unknown.normal_()
    return model


def test_readout_maps_its_subset_back_to_vocabulary_ids():
    readout = small_readout()
    assert readout.index[7] == 3 and readout.index[2] == -1
    assert readout(torch.randn(2, D)).shape == (2, 5)
    logits = torch.zeros(2, 5)
    logits[0, 2], logits[1, 4] = 1, 1
    assert readout.token(logits).tolist() == [5, 9]


def test_the_embedding_is_the_readouts_table_and_one_vector_outside_it():
    model = small_eagle()
    rows = model.embed(torch.tensor([3, 2, 9, 4]))
    assert torch.equal(rows[0], model.readout.table[1]) and torch.equal(rows[2], model.readout.table[4])
    assert torch.equal(rows[1], model.unknown) and torch.equal(rows[3], model.unknown)


def test_designs_shapes():
    for window in (1, 4):
        out = small_eagle(window)(torch.randn(2, 6, D), torch.randint(0, VOCAB, (2, 6)))
        assert out.shape == (2, 6, D)
    medusa = Medusa(small_readout(), 3)
    assert [tuple(h.shape) for h in medusa(torch.randn(2, 6, D))] == [(2, 6, 5)] * 3


@torch.no_grad()
def test_a_window_run_alone_equals_the_same_rows_inside_a_longer_text():
    model = small_eagle(window=4)
    feats, tokens = torch.randn(1, 12, D), torch.randint(0, VOCAB, (1, 12))
    whole = model(feats, tokens)
    for t in range(12):
        first = max(0, t - 3)
        alone = model(feats[:, first:t + 1], tokens[:, first:t + 1])
        assert torch.allclose(alone[:, -1], whole[:, t], atol=1e-5), t


@torch.no_grad()
def test_the_shipped_designs_rows_are_each_their_own():
    model = small_eagle()
    feats, tokens = torch.randn(1, 8, D), torch.randint(0, VOCAB, (1, 8))
    whole = model(feats, tokens)
    for t in range(8):
        assert torch.allclose(model(feats[:, t:t + 1], tokens[:, t:t + 1])[:, 0], whole[:, t], atol=1e-6)
    steps = model.unrolled(feats, tokens, 2)
    # Step 2 at row t reads the draft's own step-1 feature at row t - 1.
    for t in range(1, 8):
        own = model(feats[:, t - 1:t], tokens[:, t - 1:t])
        assert torch.allclose(steps[1][:, t], model(own, tokens[:, t:t + 1])[:, 0], atol=1e-5)


@torch.no_grad()
def test_unrolled_training_steps_are_the_drafted_loops_steps():
    """Step s at row t in training equals the draft's s-th step of a round that starts at row t - s + 1."""
    model = small_eagle(window=4)
    feats, tokens = torch.randn(1, 10, D), torch.randint(0, VOCAB, (1, 10))
    steps = model.unrolled(feats, tokens, 3)
    assert torch.allclose(steps[0], model(feats, tokens), atol=1e-5)
    for s in (2, 3):
        for t in range(s - 1, 10):
            p = t - s + 1  # the round's first row, fed the target's feature
            first = max(0, p - 3)
            f, x = feats[:, first:p + 1], tokens[:, first:t + 1]
            for _ in range(s - 1):  # the draft's own features for rows p + 1 .. t
                f = torch.cat([f, model(f[:, -4:], x[:, :f.shape[1]][:, -4:])[:, -1:]], 1)
            expected = model(f[:, -4:], x[:, -4:])[:, -1]
            assert torch.allclose(steps[s - 1][:, t], expected, atol=1e-5), (s, t)


def test_window_draft_feeds_back_its_own_features_and_tokens():
    seen = []

    def step(features, tokens):
        seen.append((features.copy(), tokens.copy()))
        return features + 1, tokens + 10

    hidden, ids = np.arange(8, dtype=np.float32)[:, None], np.arange(100, 108)
    assert window_draft(step, 3, hidden, ids, 5, 3) == [115, 125, 135]
    # Rows 3..5 (features 2..4, tokens 103..105), then the draft's feature 5 and token 115 appended, the oldest dropped.
    assert seen[0][0][:, 0].tolist() == [2, 3, 4] and seen[0][1].tolist() == [103, 104, 105]
    assert seen[1][0][:, 0].tolist() == [3, 4, 5] and seen[1][1].tolist() == [104, 105, 115]


def test_window_draft_matches_the_module_run_over_the_text():
    """The stateless draft's first guess at p is the module's row p over the whole text."""
    model = small_eagle(window=4)
    feats, ids = np.random.default_rng(0).normal(size=(12, D)).astype(np.float32), np.arange(12) % VOCAB
    with torch.no_grad():
        whole = model(torch.from_numpy(feats[:-1])[None], torch.from_numpy(ids[1:])[None])[0]
        expected = model.readout.token(model.readout(whole))
    for p in range(1, 11):
        assert window_draft(module_step(model), 4, feats, ids, p, 1) == [int(expected[p - 1])]


def test_acceptance_counts_the_longest_agreeing_prefix_and_the_targets_own_token():
    a = Acceptance(3)
    assert a.add([1, 2, 3], [1, 2, 4]) == 2
    assert a.add([5, 6, 7], [0, 6, 7]) == 0
    assert a.add([1, 2, 3], [1, 2, 3]) == 3
    assert a.tried == [3, 2, 2] and a.right == [2, 2, 1]
    assert a.tokens == 3 + 1 + 4 and a.rounds == 3


def test_acceptance_walks_rounds_like_the_drafted_loop():
    ids = np.arange(20)
    # A draft that is always right: from the prompt's end (5) rounds accept 3, 3, 3, then the last 2 tokens.
    result = acceptance(lambda hidden, ids_, p, gamma: ids[p + 1:p + 1 + gamma].tolist(), [(ids, None, 5)], gamma=3)
    assert result.alphas() == [1.0, 1.0, 1.0]
    assert result.tried == [4, 4, 3] and result.rounds == 4 and result.tokens == 4 + 4 + 4 + 3


def test_the_answers_table_keeps_confident_answer_rows_only():
    from draft.answers import table
    from draft.data import Sequences

    data = Sequences()
    # An answer (from position 2 on) whose context 5 6 is followed by 7 three times and by 8 once, 7 5 by 6 three
    # times, 6 7 by 9, 3 and 5 (too split to keep), the first pairs once (too few); then a teacher-forced text, which
    # the table never reads.
    ids = [1, 2, 5, 6, 7, 5, 6, 7, 5, 6, 7, 5, 6, 8]
    choices = ids[1:] + [0]
    choices[4], choices[7] = 9, 3  # the target's choices after 5 6 7 (twice): 9 and 3
    data.add(ids, choices, np.zeros((len(ids), 2)), "chat", 2)
    data.add([5, 6, 4, 4], [4, 4, 4, 4], np.zeros((4, 2)), "code", 0)
    built = table(data, orders=(2,), min_count=2, min_share=0.7)
    assert built["rows"]["2"] == [[5, 6, 7], [7, 5, 6]]  # 5 6 -> 7 (3 of 4); 7 5 -> 6 (3 of 3)
    assert built["orders"] == [2] and built["sources"] == ["chat", "library"]
    assert table(data, orders=(2,), min_count=2, min_share=0.8)["rows"]["2"] == [[7, 5, 6]]


def test_training_reads_the_answers_rows_from_the_prompts_last_one():
    from draft.data import Sequences
    from draft.train import chunks

    data = Sequences()
    data.add(list(range(10)), list(range(10)), np.zeros((10, 2)), "chat", 4)  # prompt 0-3, answer from 4
    data.add(list(range(6)), list(range(6)), np.zeros((6, 2)), "code", 0)
    # Row t reads the feature at t - 1: the first row trained is the prompt's last (3), which drafts the answer's
    # second token; nothing before it.
    assert answer_chunks(data, 4) == [(0, 3), (0, 7), (1, 0), (1, 4)]
    assert chunks(data, 4) == [(0, 0), (0, 4), (0, 8), (1, 0), (1, 4)]


def test_the_shipped_loss_and_the_soft_variant_share_one_loop():
    from benchmarks.draft_variants import soft_loss
    from draft.data import Sequences
    from draft.train import Recipe, eagle_loss

    model, data = small_eagle(), Sequences()
    rng = np.random.default_rng(0)
    data.add([1, 3, 5, 7, 9, 1], [3, 5, 7, 9, 1, 3], rng.normal(size=(6, D)), "chat", 2)
    recipe = Recipe(steps=2, length=8)
    hard = eagle_loss(model, data, [(0, 0)], recipe, torch.Generator().manual_seed(0))
    soft = soft_loss(model, data, [(0, 0)], recipe, torch.Generator().manual_seed(0))
    assert all(torch.isfinite(value) for value in (*hard, *soft))
    # The same noise and regression; only the labels' part differs.
    assert not torch.equal(hard[1], soft[1])
