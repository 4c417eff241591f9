"""The placeholder page in Chromium: loads offline, runs both modes, and keeps the lesson's claim.

In the browser, drafted (prompt lookup) text equals greedy text and KV cache on
equals off, token for token, on several prompts. References come from the
browser itself: WASM and native kernels may differ in the last bits.
"""

import pytest
from tokenizers import Tokenizer

from model_export.check import cases
from tests.browser import load_runtime, stored_chunks

pytest_plugins = ["tests.browser"]  # the browser fixtures, registered once for the whole session

PROMPTS = [
    "The capital of France is Paris. The capital of Italy is",
    "def add(a, b):\n    return a + b\n\ndef add(",
    "The cat sat on the mat and the cat sat on the",
    "東京は日本の首都です。東京は",
    "one two three one two three one",
]
MAX_NEW = 12


def generate(page, text: str, mode: str, kv_cache: bool, guess: str = "") -> dict:
    return page.evaluate("(r) => window.onepass().run('generate', r)",
                         {"text": text, "mode": mode, "kvCache": kv_cache, "maxNew": MAX_NEW, "guess": guess})


def test_page_loads_offline_and_names_the_model(page, tiny_server, tiny_export):
    info = load_runtime(page, tiny_server.url)
    assert info["model"] == "tiny-random-qwen2 (test model)"
    assert info["crossOriginIsolated"] is True
    assert info["threads"] >= 1
    assert info["versions"]["pyodideRuntime"] == info["versions"]["pyodide"]
    assert info["pythonSnapshot"] is True  # Python started from the build's snapshot (hooks/vendor.py)
    assert info["modelFromHeap"] is True  # the model's bytes went straight into ort's heap (ort-module.js)
    # A first visit: every chunk was downloaded and written on the store worker's thread (store-worker.js).
    assert info["chunksKeptApart"] == len(stored_chunks(page)) > 0
    page.wait_for_selector("[data-onepass-panel][data-state=ready]")
    assert info["model"] in page.inner_text(".onepass-status")
    assert info["modelKept"] is True
    # Under the hood's card also says how the model runs; the lesson pages' cards leave that here.
    card = page.locator("[data-onepass-panel=model-card]")
    page.wait_for_selector("[data-onepass-panel=model-card][data-state=ready]")
    assert f"onnxruntime-web WASM, {info['threads']} thread" in card.inner_text() and "cross-origin isolated" in card.inner_text()


@pytest.mark.parametrize("mode", ["greedy", "lookup"])
def test_the_panel_runs_and_counts_passes(page, tiny_server, mode):
    load_runtime(page, tiny_server.url)
    page.fill(".onepass-text", "<b>bold?</b> The cat sat on the mat and the cat sat on the")
    page.select_option(".onepass-mode", mode)
    page.click(".onepass-run")
    page.wait_for_selector("[data-onepass-panel][data-state=done]", timeout=120_000)
    assert "passes" in page.inner_text(".onepass-counters")
    assert page.locator(".onepass-passes li").count() >= 1
    # Typed HTML is shown as text, never parsed.
    assert page.locator(".onepass-output b").count() == 0
    assert "<b>bold?</b>" in page.inner_text(".onepass-output")


def test_drafted_equals_greedy_and_cache_on_equals_off(page, tiny_server):
    load_runtime(page, tiny_server.url)
    for text in PROMPTS:
        reference = generate(page, text, "greedy", True)
        assert len(reference["tokens"]) == MAX_NEW or reference["stop"] == "eos"
        assert reference["totals"]["passes"] == len(reference["tokens"])
        right_then_wrong = "".join(page.evaluate("(ids) => window.onepass().decode(ids)", reference["tokens"][:4])["pieces"]) + " no"
        for mode, kv_cache in [("greedy", False), ("lookup", True), ("lookup", False), ("guess", True), ("guess", False),
                               ("random", True)]:
            run = generate(page, text, mode, kv_cache, guess=right_then_wrong)
            assert run["tokens"] == reference["tokens"], (text, mode, kv_cache)
            assert run["totals"]["passes"] <= reference["totals"]["passes"]


def test_a_second_run_is_refused_and_a_run_can_be_cancelled(page, tiny_server):
    load_runtime(page, tiny_server.url)
    outcome = page.evaluate("""async () => {
        const rt = window.onepass();
        const first = rt.run('generate', {text: 'one two three', maxNew: 200}).then(() => 'finished', (e) => e.code);
        const second = await rt.run('generate', {text: 'again', maxNew: 2}).then(() => 'ran', (e) => e.code);
        await rt.cancel();
        return {first: await first, second};
    }""")
    assert outcome == {"first": "cancelled", "second": "busy"}
    # The worker is free again afterwards.
    assert len(generate(page, "one two three", "greedy", True)["tokens"]) == MAX_NEW


def test_position_independence_holds_in_chromium(page, tiny_server, tiny_export, held_text):
    ids = Tokenizer.from_file(str(tiny_export / "tokenizer.json")).encode(held_text).ids[:40]
    load_runtime(page, tiny_server.url)
    result = page.evaluate("([ids, cases]) => window.onepass().positionIndependence(ids, cases)", [ids, cases(len(ids))])
    assert result["all_identical"], result["checks"]


def test_a_field_the_contract_lacks_is_refused_by_the_client_and_by_python(page, tiny_server):
    load_runtime(page, tiny_server.url)
    refused = page.evaluate("""async () => {
        const rt = window.onepass();
        const code = (p) => p.then(() => 'ran', (e) => [e.code, e.message]);
        return [
            await code(rt.run('generate', {text: 'one two', maxnew: 3})),  // the client's check
            await code(rt.run('nonsense', {})),
            // Past the client (as a page that bypassed run would post it): Python's check, with the same words.
            await code(rt.request('generate', {request: {text: 'one two', maxnew: 3}})),
        ];
    }""")
    assert refused[0] == ["error", "the generate request has no maxnew"]
    assert refused[1][0] == "error" and "there is no nonsense request" in refused[1][1]
    assert refused[2][0] == "input" and "'maxnew'" in refused[2][1]
