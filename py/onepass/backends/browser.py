"""The browser backend: onnxruntime-web in the page's worker, reached from Pyodide.

The worker hands in ``bridge``, a JavaScript object with ``open(kv_cache)``,
``run(session, new_ids, start, logits)`` (a Promise) and ``rollback(session,
length)``. The KV cache stays on the JavaScript side; only token ids, argmax,
top-k and timings cross. Nothing here imports ``js`` or ``pyodide``: JavaScript
values arrive as proxies and are converted with their own ``to_py``, so the
module imports natively too (and the purity test holds).
"""

import functools
import inspect
import json
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict

from ..all_at_once import all_at_once
from ..chisquare import chi_square
from ..drafted import drafted
from ..drafts import DRAFTS, draft, target
from ..examples import EXAMPLES
from ..editable import DEFAULT_SOURCE, ProposerError, compile_proposer
from ..greedy import greedy
from ..limits import InputError, as_dict, check_draws, check_guess, check_max_new, check_prompt
from ..lookup import MAX_DRAFT, copied, lookup_match
from ..proposers import Timed, fixed_guess, random_draft
from ..sampling import tally
from ..verification import check
from ..seam import Facts, Pass, check_rows
from .clock import PassClock


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


REFUSALS = {InputError: "input", ProposerError: "proposer"}


def answers(function):
    """``function``'s JSON, or ``{"error": {"code", "message"}}`` when it refuses the request.

    A refusal (input over a limit, the reader's proposer failing) is a message
    for the reader, passed on as it is; anything else raised here is not, and
    the worker words it.
    """
    def refused(err: Exception) -> str:
        return json.dumps({"error": {"code": REFUSALS[type(err)], "message": str(err)}})

    if inspect.iscoroutinefunction(function):
        @functools.wraps(function)
        async def answer(*args, **kwargs) -> str:
            try:
                return await function(*args, **kwargs)
            except tuple(REFUSALS) as err:
                return refused(err)
    else:
        @functools.wraps(function)
        def answer(*args, **kwargs) -> str:
            try:
                return function(*args, **kwargs)
            except tuple(REFUSALS) as err:
                return refused(err)
    return answer


class BrowserModel:
    """The export in the worker; ``manifest`` is the site's manifest.json text."""

    def __init__(self, bridge, manifest: str):
        self.bridge = bridge
        self.facts = Facts.from_manifest(json.loads(manifest))
        self.clock = PassClock()  # its sessions add what they measure; a run takes a lap per pass

    def session(self, kv_cache: bool = True) -> "BrowserSession":
        return BrowserSession(self.bridge, kv_cache, self.clock)


class BrowserSession:
    """One text's state; its KV cache (or, with the cache off, its ids) lives in JavaScript."""

    def __init__(self, bridge, kv_cache: bool, clock: PassClock | None = None):
        self.bridge = bridge
        self.id = bridge.open(kv_cache)
        self.length = 0
        self.clock = clock or PassClock()

    async def forward(self, new_ids: list[int], *, logits: bool = False, rows_from: int = 0) -> Pass:
        check_rows(new_ids, rows_from)
        began = time.perf_counter()
        raw = plain(await self.bridge.run(self.id, list(new_ids), self.length, logits, rows_from))
        self.length += len(new_ids)
        k = raw["k"]
        flat_logits = raw.get("logits")
        result = Pass(argmax=numbers(raw["argmax"]), topk_ids=rows(raw["topk_ids"], k), topk_probs=rows(raw["topk_probs"], k),
                      seconds=raw["seconds"], logits=rows(flat_logits, raw["vocab"]) if flat_logits is not None else None)
        # The bridge is what JavaScript's own timings (the model, the cache) leave of this call.
        spent = time.perf_counter() - began
        self.clock.add(model=raw["seconds"], kv=raw["kv_seconds"], bridge=spent - raw["seconds"] - raw["kv_seconds"])
        return result

    def rollback(self, length: int) -> None:
        if length < self.length:
            began = time.perf_counter()
            cut = self.bridge.rollback(self.id, length)
            self.clock.add(kv=cut, bridge=time.perf_counter() - began - cut)
            self.length = length


@answers
async def generate(model: BrowserModel, prompt, mode: str, kv_cache: bool, max_new: int,
                   on_pass: Callable[[str], None], guess=(), seed: int = 0, proposer: str = "",
                   on_start: Callable[[int], None] | None = None) -> str:
    """Run one panel request; each pass goes to ``on_pass`` as JSON, and the whole run comes back as JSON.

    ``mode`` is ``greedy``, ``lookup`` (prompt lookup; each pass also reports
    the match it copied from), ``guess`` (the reader's guess, as ids),
    ``random`` (a random draft drawn with ``seed``) or ``custom`` (the
    reader's ``proposer`` source). A prompt or ``max_new`` over the limits, an
    unknown mode, or a custom proposer that fails, gives ``{"error": {code,
    message}}`` instead of a run. ``on_start`` hears the prompt's length once
    the request is accepted (the page's clock starts then).
    """
    prompt = list(plain(prompt))
    check_prompt(prompt)
    max_new = check_max_new(max_new)
    matches: list = []  # prompt lookup's match for the pass being drafted

    def report(record) -> None:
        row = asdict(record)
        row["bonus"] = record.bonus
        if mode == "lookup":
            row["match"] = matches[-1]
        if clock:
            row["timing"] = clock.lap()
        on_pass(json.dumps(row))
        if clock:
            clock.start()  # the next pass begins; the worker times its own handing on of this one

    def lookup(text: list[int]) -> list[int]:
        # Prompt lookup, keeping the match it copied from for the page to show.
        found = lookup_match(text)
        if found is None:
            matches.append(None)
        else:
            n, start = found
            matches.append({"n": n, "at": start, "ngram": text[start:start + n]})
        return copied(text, found)

    proposers = {
        "lookup": lambda: lookup,
        "guess": lambda: fixed_guess(len(prompt), list(plain(guess))),
        "random": lambda: random_draft(random.Random(seed)),
        "custom": lambda: compile_proposer(str(proposer), model.facts.vocab_size),
    }

    if mode != "greedy" and mode not in proposers:
        raise InputError(f"unknown mode {mode!r}: expected greedy or one of {', '.join(proposers)}")
    if on_start:
        on_start(len(prompt))
    # Only the browser's sessions time their parts (the build's traces run this natively).
    clock = model.clock if isinstance(model, BrowserModel) else None
    if clock:
        clock.start()
    timed = Timed(proposers[mode]()) if mode != "greedy" else None
    try:
        if timed is None:
            run = await greedy(model, prompt, max_new, kv_cache=kv_cache, on_pass=report)
        else:
            run = await drafted(model, prompt, timed, max_new, kv_cache=kv_cache, mode=mode, on_pass=report)
    except KeyboardInterrupt:
        # The page's Cancel, through Pyodide's interrupt buffer (it reaches even a proposer that never returns).
        # As an ordinary exception it rejects this call instead of escaping the event loop.
        raise RuntimeError("the run was cancelled") from None
    return json.dumps({**run.as_dict(), "proposer_seconds": timed.seconds if timed else 0.0, "max_draft": MAX_DRAFT})


@answers
async def verify_guess(model: BrowserModel, prompt, guess, kv_cache: bool,
                       on_start: Callable[[int], None] | None = None) -> str:
    """Step 4: one pass checks the reader's whole guess after ``prompt``; the pass record as JSON."""
    prompt, guess = list(plain(prompt)), list(plain(guess))
    check_guess(prompt, guess)
    if on_start:
        on_start(len(prompt) + len(guess))
    _, record = await check(model.session(kv_cache=kv_cache), prompt, guess, model.facts.eos_ids)
    return json.dumps({**asdict(record), "bonus": record.bonus})


@answers
async def predict(model: BrowserModel, ids, on_start: Callable[[int], None] | None = None) -> str:
    """One pass over ``ids`` (step 3): the model's next-token prediction after every position, as JSON."""
    ids = list(plain(ids))
    check_prompt(ids)
    if on_start:
        on_start(len(ids))
    return json.dumps((await all_at_once(model, ids)).as_dict())


def limits() -> str:
    """The request limits as JSON (``limits.py``), for the worker and the pages."""
    return json.dumps(as_dict())


def lookup_setup() -> str:
    """Step 5's panel setup as JSON: the three examples and the editable proposer's starting source."""
    return json.dumps({"examples": [e.as_dict() for e in EXAMPLES], "default_proposer": DEFAULT_SOURCE})


@answers
def sample(p, q, draws: int, seed: int) -> str:
    """Step 6: draft ``draws`` tokens from q, keep them by the speculative rule, and test the counts against p."""
    p, q = normalised(plain(p), "p"), normalised(plain(q), "q")
    if len(p) != len(q):
        raise InputError(f"p has {len(p)} words but q has {len(q)}")
    counts = tally(p, q, check_draws(draws), random.Random(seed))
    return json.dumps({"p": p, "q": q, "counts": counts.counts, "accepted": counts.accepted, "draws": counts.draws,
                       "frequencies": counts.frequencies(), "verdict": chi_square(counts.counts, p).as_dict()})


@answers
async def sample_next(model: BrowserModel, prompt, kind: str, draws: int, seed: int,
                      on_start: Callable[[int], None] | None = None) -> str:
    """Step 6 on the live model: p is its next-token distribution after ``prompt`` (top k and "other"), q the
    draft ``kind``; the same draws and verdict as ``sample``, and the top k's ids to label them."""
    prompt = list(plain(prompt))
    check_prompt(prompt)
    if kind not in DRAFTS:
        raise InputError(f"choose a draft: {', '.join(DRAFTS)}")
    if on_start:
        on_start(len(prompt))
    last = await model.session().forward(prompt, rows_from=len(prompt) - 1)
    p = target(last.topk_probs[-1])
    result = json.loads(sample(p, draft(p, kind), draws, seed))
    if "error" in result:
        return json.dumps(result)
    return json.dumps({**result, "ids": last.topk_ids[-1], "draft": kind})


def normalised(weights, name: str) -> list[float]:
    """``weights`` scaled to sum to one, or an InputError that says what is wrong with them."""
    if not all(isinstance(w, (int, float)) and not isinstance(w, bool) and 0 <= w < float("inf") for w in weights):
        raise InputError(f"every probability in {name} must be a number of at least 0")
    weights = [float(w) for w in weights]
    total = sum(weights)
    if total <= 0:
        raise InputError(f"{name} needs at least one probability above 0")
    return [w / total for w in weights]


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
