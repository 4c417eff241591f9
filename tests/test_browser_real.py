"""The lesson's claim on the real model, in Chromium: drafted == greedy and KV cache on == off.

Every mode (prompt lookup, a reader's guess, a random draft; cache on and off)
must give the browser's own greedy text, token for token, on 8 prompts (20 with ``ONEPASS_SWEEPS=1``); the runs
without the cache, whose every pass reads the whole text again, on every fourth of them (every one with the sweeps).
WASM and native kernels may differ in the last bits, so the reference is the
browser's greedy run; the agreement with native onnxruntime is printed as a figure
(``pytest -s``), not asserted. ``ONEPASS_SKIP_REAL=1`` skips this module.
"""

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from model_export.check import cases
from onepass.backends.native import NativeModel
from onepass.backends.tokenizer import NativeTokenizer
from tests.browser import loaded_page
from tests.conftest import sweep

pytest_plugins = ["tests.browser"]

PROMPTS = json.loads((Path(__file__).parent / "data" / "prompts.json").read_text())[:sweep(8, 20)]
MAX_NEW = 8
MODES = [("greedy", False), ("lookup", True), ("lookup", False), ("guess", True), ("random", True), ("random", False)]
WITHOUT_CACHE_EVERY = sweep(4, 1)  # without the cache every pass reads the whole text again: the test's slowest runs


@pytest.fixture(scope="module")
def real_page(real_site, chromium):
    with loaded_page(chromium, real_site) as page:
        yield page


def test_drafted_equals_greedy_in_the_browser_on_the_real_model(real_page, real_export):
    native_model, tokenizer = NativeModel(real_export), NativeTokenizer(real_export)
    agreeing = total = 0
    for number, text in enumerate(PROMPTS):
        request = {"text": text, "maxNew": MAX_NEW, "mode": "greedy", "kvCache": True}
        reference = real_page.evaluate("(r) => window.onepass().run('generate', r)", request)
        # The reader's guess: right for a few tokens, then wrong.
        guess = tokenizer.decode(reference["tokens"][:3]) + " and so on"
        for mode, kv_cache in MODES:
            if not kv_cache and number % WITHOUT_CACHE_EVERY:
                continue
            run = real_page.evaluate("(r) => window.onepass().run('generate', r)",
                                     {**request, "mode": mode, "kvCache": kv_cache, "guess": guess, "seed": number})
            assert run["tokens"] == reference["tokens"], (text, mode, kv_cache)
            assert run["totals"]["passes"] <= reference["totals"]["passes"]
        agreeing += native_agreement(native_model, reference["prompt"], reference["tokens"])
        total += len(reference["tokens"])
    print(f"native argmax == browser token on the browser's text: {agreeing}/{total}")


def native_agreement(model: NativeModel, prompt: list[int], tokens: list[int]) -> int:
    """How many of the browser's greedy tokens native onnxruntime also predicts, given the same text before each."""
    fed = prompt + tokens[:-1]
    # Playwright's sync API keeps an event loop running in this thread, so the native pass runs in another.
    with ThreadPoolExecutor(1) as pool:
        rows = pool.submit(asyncio.run, model.session().forward(fed)).result().argmax[len(prompt) - 1:]
    return sum(a == b for a, b in zip(rows, tokens))


def test_position_independence_holds_in_chromium_on_the_real_model(real_page, real_export, held_text):
    ids = NativeTokenizer(real_export).encode(held_text)[:40]
    result = real_page.evaluate("([ids, cases]) => window.onepass().positionIndependence(ids, cases)", [ids, cases(len(ids))])
    assert result["all_identical"], result["checks"]
