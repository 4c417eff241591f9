"""Position independence: a position's logits are bit-identical however the pass is cut.

This is what makes verified drafting reproduce greedy decoding exactly. Each
check compares a full pass with prefix passes and with KV-cache steps of one
and of six tokens, natively (onnxruntime) and in onnxruntime-web's WASM build.
"""

import pytest

from model_export.check import (cases, feature_independence, load, long_cases, position_independence, wasm,
                                wasm_runs)
from tests.conftest import ids_of

PROMPTS = [
    "The capital of France is Paris. The capital of Germany is Berlin. The capital of Italy is",
    "def add(a, b):\n    return a + b\n\nprint(add(2, 3))",
    "Rewrite in the past tense: the cat sits on the mat and watches the birds.",
]
LONG_PREFILL = 500  # the long texts' KV-cache steps start here, 12 and more before position 512


def failures(result):
    return {name: check for name, check in result["checks"].items() if not check["bit_identical"]}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("prompt", PROMPTS)
def test_tiny_native(tiny_export, prompt, threads):
    result = position_independence(load(tiny_export, threads), ids_of(tiny_export, prompt))
    assert failures(result) == {}


@pytest.mark.parametrize("threads", [1, 2])
def test_tiny_native_features(tiny_export, threads):
    """The hidden states a draft reads are position independent too, so a draft proposes the same whatever
    the pass that made its inputs."""
    for prompt in PROMPTS:
        assert failures(feature_independence(load(tiny_export, threads), ids_of(tiny_export, prompt))) == {}


@pytest.mark.parametrize("threads", [1, 2])
def test_tiny_native_float32_reference(tiny_export, threads):
    result = position_independence(load(tiny_export, threads, reference=True), ids_of(tiny_export, PROMPTS[0]))
    assert failures(result) == {}


@pytest.mark.slow  # starts Node
@pytest.mark.parametrize("threads", [1, 2])
def test_tiny_wasm(tiny_export, threads):
    """Every text in one Node process a thread count (Node sets onnxruntime-web's threads once)."""
    texts = [ids_of(tiny_export, prompt) for prompt in PROMPTS]
    report = wasm_runs(tiny_export, [(ids, None) for ids in texts], threads)
    assert report["threads"] == threads
    assert len(report["runs"]) == len(texts)
    session = load(tiny_export, threads)
    for ids, result in zip(texts, report["runs"], strict=True):
        assert failures(result) == {}
        # Node runs the very cases the native check runs: one definition.
        assert list(result["checks"]) == [case["name"] for case in cases(len(ids))]
        assert list(result["checks"]) == list(position_independence(session, ids)["checks"])


@pytest.mark.slow
def test_tiny_long_context(tiny_export, held_text):
    ids = ids_of(tiny_export, held_text * 2)[:600]
    checks = long_cases(len(ids), LONG_PREFILL)
    assert failures(position_independence(load(tiny_export, 2), ids, checks)) == {}
    assert failures(wasm(tiny_export, ids, 2, checks=checks)) == {}


@pytest.mark.parametrize("threads", [1, 2])
def test_real_native(real_export, threads):
    for prompt in PROMPTS:
        assert failures(position_independence(load(real_export, threads), ids_of(real_export, prompt))) == {}


def test_real_native_features(real_export):
    for threads in (1, 2):
        for prompt in PROMPTS:
            assert failures(feature_independence(load(real_export, threads), ids_of(real_export, prompt))) == {}


def test_real_wasm(real_export):
    for threads in (1, 2):
        result = wasm(real_export, ids_of(real_export, PROMPTS[0]), threads)
        assert failures(result) == {}


def test_real_long_context(real_export, held_text):
    """Past 512 positions (``long_cases``: the KV-cache steps from the 500th token)."""
    ids = ids_of(real_export, held_text * 2)[:560]
    assert len(ids) > 512
    checks = long_cases(len(ids), LONG_PREFILL)
    assert failures(position_independence(load(real_export, 2), ids, checks)) == {}
    assert failures(wasm(real_export, ids, 2, checks=checks)) == {}
