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


def long_ids(export, held_text) -> list[int]:
    """A long text's ids: the held text twice, cut to 560 tokens, past position 512."""
    ids = ids_of(export, held_text * 2)[:560]
    assert len(ids) > 512
    return ids


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
def test_tiny_wasm(tiny_export, held_text, threads):
    """Every text in one Node process a thread count (Node sets onnxruntime-web's threads once); at 2 threads the long
    text past 512 positions too (``long_cases``)."""
    texts = [ids_of(tiny_export, prompt) for prompt in PROMPTS]
    runs = [(ids, None) for ids in texts]
    if threads == 2:
        long = long_ids(tiny_export, held_text)
        runs.append((long, long_cases(len(long), LONG_PREFILL)))
    report = wasm_runs(tiny_export, runs, threads)
    assert report["threads"] == threads
    assert [failures(result) for result in report["runs"]] == [{} for _ in runs]
    session = load(tiny_export, threads)
    for ids, result in zip(texts, report["runs"], strict=False):
        # Node runs the very cases the native check runs: one definition.
        assert list(result["checks"]) == [case["name"] for case in cases(len(ids))]
        assert list(result["checks"]) == list(position_independence(session, ids)["checks"])


@pytest.mark.slow
def test_tiny_long_context(tiny_export, held_text):
    """Past 512 positions natively; in WASM in ``test_tiny_wasm``."""
    ids = long_ids(tiny_export, held_text)
    assert failures(position_independence(load(tiny_export, 2), ids, long_cases(len(ids), LONG_PREFILL))) == {}


@pytest.mark.parametrize("threads", [1, 2])
def test_real_native(real_export, threads):
    for prompt in PROMPTS:
        assert failures(position_independence(load(real_export, threads), ids_of(real_export, prompt))) == {}


def test_real_native_features(real_export):
    for threads in (1, 2):
        for prompt in PROMPTS:
            assert failures(feature_independence(load(real_export, threads), ids_of(real_export, prompt))) == {}


def test_real_wasm(real_export, held_text):
    """The short text at 1 and 2 threads, and the long text past 512 positions (``long_cases``) at 2 threads in the
    same Node process (Node starts the real model once a thread count)."""
    short = ids_of(real_export, PROMPTS[0])
    assert failures(wasm(real_export, short, 1)) == {}
    long = long_ids(real_export, held_text)
    report = wasm_runs(real_export, [(short, None), (long, long_cases(len(long), LONG_PREFILL))], 2)
    assert report["threads"] == 2
    assert [failures(result) for result in report["runs"]] == [{}, {}]


def test_real_long_context(real_export, held_text):
    """Past 512 positions natively (``long_cases``: the KV-cache steps from the 500th token); in WASM in
    ``test_real_wasm``."""
    ids = long_ids(real_export, held_text)
    assert failures(position_independence(load(real_export, 2), ids, long_cases(len(ids), LONG_PREFILL))) == {}
