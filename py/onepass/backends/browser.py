"""The browser backend: onnxruntime-web in the page's worker, reached from Pyodide.

The worker hands in ``bridge``, a JavaScript object with ``open(kv_cache)``,
``run(session, new_ids, start, logits)`` (a Promise) and ``rollback(session,
length)``. The KV cache stays on the JavaScript side; only token ids, argmax,
top-k and timings cross. Nothing here imports ``js`` or ``pyodide``: JavaScript
values arrive as proxies and are converted with their own ``to_py``, so the
module imports natively too (and the purity test holds).
"""

import json
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict

from ..drafted import drafted
from ..greedy import greedy
from ..lookup import prompt_lookup
from ..proposers import fixed_guess, random_draft
from ..seam import Facts, Pass


def plain(value):
    """A JavaScript value as plain Python (lists, dicts, numbers); Python values pass through."""
    return value.to_py() if hasattr(value, "to_py") else value


def numbers(value) -> list:
    """A JavaScript array or typed array (a memoryview once converted) as a Python list."""
    value = plain(value)
    return value.tolist() if hasattr(value, "tolist") else list(value)


def rows(flat, width: int) -> list[list]:
    flat = numbers(flat)
    return [flat[i:i + width] for i in range(0, len(flat), width)]


class BrowserModel:
    """The export in the worker; ``manifest`` is the site's manifest.json text."""

    def __init__(self, bridge, manifest: str):
        self.bridge = bridge
        self.facts = Facts.from_manifest(json.loads(manifest))

    def session(self, kv_cache: bool = True) -> "BrowserSession":
        return BrowserSession(self.bridge, kv_cache)


class BrowserSession:
    """One text's state; its KV cache (or, with the cache off, its ids) lives in JavaScript."""

    def __init__(self, bridge, kv_cache: bool):
        self.bridge = bridge
        self.id = bridge.open(kv_cache)
        self.length = 0

    async def forward(self, new_ids: list[int], *, logits: bool = False) -> Pass:
        raw = plain(await self.bridge.run(self.id, list(new_ids), self.length, logits))
        self.length += len(new_ids)
        k = raw["k"]
        flat_logits = raw.get("logits")
        return Pass(argmax=numbers(raw["argmax"]), topk_ids=rows(raw["topk_ids"], k), topk_probs=rows(raw["topk_probs"], k),
                    seconds=raw["seconds"], logits=rows(flat_logits, raw["vocab"]) if flat_logits is not None else None)

    def rollback(self, length: int) -> None:
        if length < self.length:
            self.bridge.rollback(self.id, length)
            self.length = length


async def generate(model: BrowserModel, prompt, mode: str, kv_cache: bool, max_new: int,
                   on_pass: Callable[[str], None], guess=(), seed: int = 0) -> str:
    """Run one panel request; each pass goes to ``on_pass`` as JSON, and the whole run comes back as JSON.

    ``mode`` is ``greedy``, ``lookup`` (prompt lookup), ``guess`` (the reader's
    guess, as ids) or ``random`` (a random draft drawn with ``seed``).
    """
    prompt = list(plain(prompt))

    def report(record) -> None:
        on_pass(json.dumps(asdict(record)))

    proposers = {
        "lookup": lambda: prompt_lookup,
        "guess": lambda: fixed_guess(len(prompt), list(plain(guess))),
        "random": lambda: random_draft(random.Random(seed)),
    }
    if mode == "greedy":
        run = await greedy(model, prompt, max_new, kv_cache=kv_cache, on_pass=report)
    elif mode in proposers:
        run = await drafted(model, prompt, proposers[mode](), max_new, kv_cache=kv_cache, mode=mode, on_pass=report)
    else:
        raise ValueError(f"unknown mode {mode!r}: expected one of greedy, {', '.join(proposers)}")
    return json.dumps(run.as_dict())


async def bridge_overhead(model: BrowserModel, ids, past: int, runs: int) -> float:
    """Median seconds a decode-1 pass spends outside onnxruntime-web: the bridge, both ways, and the conversions."""
    ids = list(plain(ids))
    session = model.session(kv_cache=True)
    await session.forward(ids[:past])
    gaps = []
    for _ in range(runs):
        began = time.perf_counter()
        result = await session.forward(ids[past:past + 1])
        gaps.append(time.perf_counter() - began - result.seconds)
        session.rollback(past)
    return statistics.median(gaps)
