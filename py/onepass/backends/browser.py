"""The browser backend: onnxruntime-web in the model's worker, reached from Pyodide in the worker beside it.

The worker hands in ``bridge``, a JavaScript object with ``open(kv_cache)``,
``run(session, new_ids, start, logits, rows_from, hidden)`` (a Promise),
``rollback(session, length)`` (bridge.js's RemoteBridge: a rollback answers at
once, and its seconds arrive with the next pass's ``kvSeconds``),
``draft(features, tokens, sampling)`` (a Promise: one small pass of the draft
model, when the site ships one) and ``measure(ids, sizes, runs, warmup)`` (a
Promise: step 3's passes timed in the model's worker), and a tokenizer object with ``encode(text)`` and ``decode(ids)``
over its JavaScript tokenizer. The KV cache stays on the JavaScript side; only
token ids, argmax, top-k, timings and the features a draft reads cross, as the contract's
``BridgePass`` and ``BridgeDraftStep`` (``checked`` holds them to it). What the pages ask for is decided
in ``entry.py``, over these as over the native backend. Nothing here imports
``js`` or ``pyodide``: JavaScript values arrive as proxies and are converted
with their own ``to_py``, so the module imports natively too (and the purity
test holds).
"""

import json
import statistics
import time

from ..answers import Answers
from ..contract import BridgeDraftStep, BridgePass
from ..draft_model import DraftStep
from ..seam import Facts, Pass, check_rows
from .clock import PassClock


def plain(value):
    """A JavaScript value as plain Python (lists, dicts, numbers); Python values pass through."""
    return value.to_py() if hasattr(value, "to_py") else value


def checked(value, typed: type):
    """The bridge's reply as plain Python, held to its typed dict in the contract (``contract.BridgePass``,
    ``BridgeDraftStep``): a key it lacks, or one the contract does not list, fails here by name, not as a KeyError
    somewhere after."""
    value = plain(value)
    missing = typed.__required_keys__ - value.keys()
    unknown = value.keys() - typed.__required_keys__ - typed.__optional_keys__
    if missing or unknown:
        raise TypeError(f"the bridge's {typed.__name__} lacks {sorted(missing)} and has {sorted(unknown)}, "
                        "which contract.py does not list")
    return value


def numbers(value) -> list:
    """A JavaScript array or typed array (a memoryview once converted) as a Python list."""
    value = plain(value)
    return value.tolist() if hasattr(value, "tolist") else list(value)


def rows(flat, width: int) -> list[list]:
    flat = numbers(flat)
    return [flat[i:i + width] for i in range(0, len(flat), width)]


class BrowserTokenizer:
    """The worker's tokenizer as the panels use one: ``encode(text) -> ids``, ``decode(ids) -> str`` and
    ``pieces(ids)``, each id's own text, in one call. Each call crosses to JavaScript: its time is the bridge's,
    on ``clock`` (the model's, so a pass's labels and text count where its other crossings do)."""

    def __init__(self, tokenizer, clock: PassClock | None = None):
        self.tokenizer = tokenizer
        self.clock = clock or PassClock()

    def encode(self, text: str) -> list[int]:
        return numbers(self.tokenizer.encode(text))

    def decode(self, ids: list[int]) -> str:
        # The list arrives in JavaScript as a proxy, which the worker's decode converts (and Pyodide then frees).
        began = time.perf_counter()
        text = str(self.tokenizer.decode(list(ids)))
        self.clock.add(bridge=time.perf_counter() - began)
        return text

    def pieces(self, ids: list[int]) -> list[str]:
        began = time.perf_counter()
        pieces = [str(piece) for piece in plain(self.tokenizer.pieces(list(ids)))]
        self.clock.add(bridge=time.perf_counter() - began)
        return pieces


class BrowserModel:
    """The export in the worker; ``manifest`` is the site's manifest.json text. ``draft`` is the draft model the
    site ships (its manifest's ``draft``), or None, with ``draft_unavailable`` saying why when the build said;
    ``answers`` the text of the draft's table of the model's answers ("" where it ships none); ``threads``
    onnxruntime-web's, which its passes run on."""

    def __init__(self, bridge, manifest: str, answers: str = "", threads: int = 1):
        self.bridge = bridge
        self.threads = threads
        found = json.loads(manifest)
        self.facts = Facts.from_manifest(found)
        self.clock = PassClock()  # its sessions add what they measure; a run takes a lap per pass
        self.draft = BrowserDraft(bridge, found["draft"], self.clock, answers) if found.get("draft") else None
        self.draft_unavailable = found.get("draft_unavailable")

    def session(self, kv_cache: bool = True) -> "BrowserSession":
        return BrowserSession(self.bridge, kv_cache, self.clock)

    async def time_passes(self, ids: list[int], sizes: list[int], runs: int, warmup: int) -> dict[str, float]:
        """The median ms of one pass (fresh, KV cache on) over the first n ``ids``, by n in ``sizes``, after ``warmup``
        untimed ones: timed in the model's worker, so that no Python, and no crossing, runs between the passes."""
        ms = plain(await self.bridge.measure(list(ids), list(sizes), runs, warmup))
        return {str(size): float(ms[str(size)]) for size in sizes}


class BrowserSession:
    """One text's state; its KV cache (or, with the cache off, its ids) lives in JavaScript."""

    def __init__(self, bridge, kv_cache: bool, clock: PassClock | None = None):
        self.bridge = bridge
        self.id = bridge.open(kv_cache)
        self.length = 0
        self.clock = clock or PassClock()

    async def forward(self, new_ids: list[int], *, logits: bool = False, rows_from: int = 0,
                      hidden: int = 0) -> Pass:
        check_rows(new_ids, rows_from, hidden)
        began = time.perf_counter()
        raw: BridgePass = checked(await self.bridge.run(self.id, list(new_ids), self.length, logits, rows_from, hidden),
                                 BridgePass)
        self.length += len(new_ids)
        k = raw["k"]
        flat_logits = raw.get("logits")
        result = Pass(argmax=numbers(raw["argmax"]), topk_ids=rows(raw["topkIds"], k), topk_probs=rows(raw["topkProbs"], k),
                      seconds=raw["seconds"], logits=rows(flat_logits, raw["vocab"]) if flat_logits is not None else None,
                      hidden=rows(raw["hidden"], raw["hiddenSize"]) if hidden else None)
        # The bridge is what JavaScript's own timings (the model, the cache) leave of this call.
        spent = time.perf_counter() - began
        self.clock.add(model=raw["seconds"], kv=raw["kvSeconds"], bridge=spent - raw["seconds"] - raw["kvSeconds"])
        return result

    def rollback(self, length: int) -> None:
        if length < self.length:
            began = time.perf_counter()
            cut = self.bridge.rollback(self.id, length)
            self.clock.add(kv=cut, bridge=time.perf_counter() - began - cut)
            self.length = length


class BrowserDraft:
    """The site's draft model in the model's worker (bridge.js's DraftBridge), as a ``draft_model.DraftModel``;
    ``manifest`` is its ``draft.json`` (the site's manifest's ``draft``). A step's ``seconds`` are onnxruntime-web's
    own run, so a run's c is the draft's cost; the crossing around it is the bridge's, on ``clock``, and the run's
    time the model's (a draft model's run is onnxruntime's as the target's is: "Under the hood" has no part of its
    own for it)."""

    def __init__(self, bridge, manifest: dict, clock: PassClock | None = None, answers: str = ""):
        self.bridge = bridge
        self.window = int(manifest["window"])
        self.answers = Answers(answers) if answers else None  # read on first use (``Answers.ready``)
        self.clock = clock or PassClock()

    async def step(self, features: list[list[float]], tokens: list[int], *, sampling: bool = False) -> DraftStep:
        began = time.perf_counter()
        flat = [value for row in features for value in row]
        raw: BridgeDraftStep = checked(await self.bridge.draft(flat, list(tokens), sampling), BridgeDraftStep)
        self.clock.add(model=raw["seconds"], bridge=time.perf_counter() - began - raw["seconds"])
        return DraftStep(feature=numbers(raw["feature"]), token=int(raw["token"]), seconds=raw["seconds"],
                         ids=numbers(raw["ids"]) if sampling else [], probs=numbers(raw["probs"]) if sampling else [],
                         confidence=raw["confidence"])


async def bridge_overhead(model: BrowserModel, ids, past: int, runs: int) -> float:
    """Median seconds a decode-1 pass spends outside onnxruntime-web: the bridge, both ways, and the conversions."""
    ids = numbers(ids)
    session = model.session(kv_cache=True)
    await session.forward(ids[:past])
    gaps = []
    for _ in range(runs):
        began = time.perf_counter()
        result = await session.forward(ids[past:past + 1])
        gaps.append(time.perf_counter() - began - result.seconds)
        session.rollback(past)
    return statistics.median(gaps)
