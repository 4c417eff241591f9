"""The draft's build on the tiny export: the shipped ONNX file computes what the PyTorch module does, the same
seed gives the same bytes, the cache key follows the trainer's code, the batched data is what the target computes for
each text alone, and a target without features says so."""

import json
import shutil

import numpy as np
import onnxruntime as ort
import pytest
import torch

from draft import build as draft_build
from draft.data import PAD_ALIGN, aligned_batches
from draft.export import OUTPUTS, OnnxDraft, to_onnx
from draft.heads import Eagle, Readout
from draft.target import Target
from onepass.backends.native import DraftUnavailable
from onepass.seam import target_identity
from model_export.check import run_graph


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ONEPASS_CACHE", str(tmp_path))
    return tmp_path


@pytest.fixture(scope="module")
def tiny_eagle(tiny_export):
    """An untrained draft over the tiny target's own word rows (random layer weights, fixed seed)."""
    torch.manual_seed(0)
    ids = np.arange(0, 151936, 97)
    readout = Readout(torch.from_numpy(draft_build.word_rows(tiny_export, ids)), torch.from_numpy(ids), 151936)
    model = Eagle(readout, mlp=48).eval()
    with torch.no_grad():
        model.unknown.normal_()
    return model


def run_onnx(data: bytes, features, tokens, exact_int8: bool = False):
    """The graph's outputs, by model_export.check's ``run_graph``: from onnxruntime natively; with ``exact_int8``,
    where this processor's onnxruntime does not multiply int8 exactly, from onnx's reference evaluator, which computes
    the graph's integer products as the tab's WASM kernel does."""
    return dict(zip(OUTPUTS, run_graph(data, {"features": features, "tokens": tokens}, list(OUTPUTS), exact_int8)))


@pytest.mark.parametrize("n", [1, 3, 8])
def test_the_float_graph_computes_the_modules_outputs(tiny_eagle, n):
    rng = np.random.default_rng(n)
    features = rng.normal(size=(1, n, 64)).astype(np.float32)
    tokens = rng.integers(0, 151936, (1, n))
    out = run_onnx(to_onnx(tiny_eagle, int8=False), features, tokens)
    with torch.no_grad():
        feature = tiny_eagle(torch.from_numpy(features), torch.from_numpy(tokens))
        logits = tiny_eagle.readout(feature)
    np.testing.assert_allclose(out["feature"], feature.numpy(), atol=1e-4)
    np.testing.assert_allclose(out["probs"], logits.softmax(-1).numpy(), atol=1e-5)
    assert out["argmax"].tolist() == tiny_eagle.readout.token(logits).tolist()
    assert out["vocab"].tolist() == tiny_eagle.readout.ids.tolist()


def test_the_int8_graph_stays_close_to_the_module(tiny_eagle):
    rng = np.random.default_rng(0)
    features = rng.normal(size=(1, 8, 64)).astype(np.float32)
    tokens = rng.integers(0, 151936, (1, 8))
    out = run_onnx(to_onnx(tiny_eagle), features, tokens, exact_int8=True)
    with torch.no_grad():
        feature = tiny_eagle(torch.from_numpy(features), torch.from_numpy(tokens)).numpy()
    assert np.abs(out["feature"] - feature).max() < 0.05 * np.abs(feature).max()
    assert out["probs"].shape == (1, 8, len(tiny_eagle.readout.ids))
    np.testing.assert_allclose(out["probs"].sum(-1), 1, atol=1e-5)
    # The confidence a weighed round reads is the largest of the same probabilities, the argmax's, exactly.
    assert np.array_equal(out["confidence"], out["probs"].max(-1))
    index = {int(token): i for i, token in enumerate(out["vocab"])}
    assert all(out["probs"][0, r, index[int(token)]] == out["confidence"][0, r] for r, token in enumerate(out["argmax"][0]))


def test_the_built_draft_keeps_the_interface_and_a_rebuild_gives_the_same_bytes(tiny_export, cache):
    folder = draft_build.build(tiny_export, seed=0)
    info = json.loads((folder / "draft.json").read_text())
    target = Target(tiny_export)
    assert info["format"] == 1 and info["hidden_size"] == 64 and info["target"]["identity"] == target_identity(
        target.manifest)
    assert [f["name"] for f in info["files"]] == ["draft.onnx", "answers.json"]
    answers = json.loads((folder / "answers.json").read_text())
    assert info["answers"]["rows"] == sum(len(rows) for rows in answers["rows"].values())
    assert answers["orders"] == info["answers"]["orders"] == [4, 3, 2]
    assert set(info["acceptance"]["by_gamma"]) == {str(g) for g in range(1, 7)}
    session = ort.InferenceSession(str(folder / "draft.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["features", "tokens"]
    assert [o.name for o in session.get_outputs()] == list(OUTPUTS)
    draft = OnnxDraft(folder)
    argmax, hidden = target.teacher_forced(list(range(100, 100 + info["window"])))
    out = draft.run(hidden, np.arange(101, 101 + info["window"]))
    assert out["feature"].shape == (1, info["window"], 64) and out["probs"].shape[-1] == info["readout_size"]
    assert set(out["argmax"][0].tolist()) <= set(out["vocab"].tolist())
    # The same seed again, from nothing but the cached data: the same file.
    first = (folder / "draft.onnx").read_bytes()
    again = draft_build.build(tiny_export, seed=0, force=True)
    assert again == folder and (again / "draft.onnx").read_bytes() == first
    assert json.loads((again / "answers.json").read_text()) == answers
    assert draft_build.build(tiny_export, seed=0) == folder  # cached: no rebuild


def test_the_key_follows_the_trainers_code_not_its_comments_and_the_seed(tiny_export, tmp_path, monkeypatch):
    manifest = Target(tiny_export).manifest
    plan = draft_build.TINY
    key = draft_build.draft_key(manifest, 0, plan)
    assert draft_build.draft_key(manifest, 1, plan) != key
    copy = tmp_path / "draft"
    shutil.copytree(draft_build.HERE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(draft_build, "HERE", copy)
    assert draft_build.draft_key(manifest, 0, plan) == key
    train = (copy / "train.py").read_text()
    # Comments and docstrings do not change what the trainer does, so they do not re-key (an 18-minute rebuild)...
    (copy / "train.py").write_text(train.replace('"""Fitting', '"""Now fitting', 1) + "\n# changed\n")
    assert draft_build.draft_key(manifest, 0, plan) == key
    # ... its code does, down to one constant.
    (copy / "train.py").write_text(train.replace("lr: float = 1e-3", "lr: float = 2e-3", 1))
    assert draft_build.draft_key(manifest, 0, plan) != key


def test_the_datas_key_holds_the_chat_template(tiny_export, monkeypatch):
    manifest = json.loads((tiny_export / "manifest.json").read_text())
    key = draft_build.data_key(manifest, draft_build.TINY)
    monkeypatch.setattr(draft_build, "chat", lambda user: f"<|im_start|>system\nBe brief.<|im_end|>\n{user}")
    assert draft_build.data_key(manifest, draft_build.TINY) != key


def test_a_target_without_features_has_no_draft(tiny_export, tmp_path):
    manifest = json.loads((tiny_export / "manifest.json").read_text())
    del manifest["outputs"]["hidden"]
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DraftUnavailable, match="hidden"):
        draft_build.build(tmp_path)
    with pytest.raises(DraftUnavailable, match="not a model export"):
        draft_build.build(tmp_path / "nowhere")


def test_batched_answers_are_each_texts_own_bit_for_bit(tiny_export):
    """Texts decoded together are padded by multiples of PAD_ALIGN (``aligned_batches``), and then every row's
    features, choices and answer are those of the text decoded alone, as the tab decodes it."""
    target = Target(tiny_export)
    rng = np.random.default_rng(0)
    lengths = [9, 9 + PAD_ALIGN, 10, 9 + 2 * PAD_ALIGN, 11, 10 + PAD_ALIGN]
    groups = aligned_batches(lengths, batch=4)
    assert sorted(i for group in groups for i in group) == list(range(len(lengths)))
    assert all(len({lengths[i] % PAD_ALIGN for i in group}) == 1 and 1 <= len(group) <= 6 for group in groups)
    prompts = [rng.integers(100, 1000, n).tolist() for n in lengths]
    for group in groups:
        together = target.greedy([prompts[i] for i in group], 6)
        for i, (ids, argmax, hidden) in zip(group, together):
            alone_ids, alone_argmax, alone_hidden = target.greedy([prompts[i]], 6)[0]
            assert ids == alone_ids
            np.testing.assert_array_equal(argmax, alone_argmax)
            np.testing.assert_array_equal(hidden, alone_hidden)
