"""The panels' answers: what each model panel of the lesson gets back for its request, decided once.

The pages' panels build a request of the contract (``contract.py``) and the
runtime passes it here untouched, as JSON, through ``run``: with the model
behind the seam and a tokenizer (anything with ``encode(text) -> ids`` and
``decode(ids) -> str``), posting each pass event, and returning the result, as
JSON. The build's traces (``hooks/traces.py``) call the same functions
natively, so a recorded run and a live one are made by the same code. Here, once:

- ``DEFAULTS``: each panel's starting text and settings, and step 5's examples
  and editable proposer (the build writes them into the site as a JavaScript
  module, ``hooks/panels.py``);
- token labels (each id's own text) and streamed text (whole characters only);
- the entry points, one per kind of request, named after it: ``generate``,
  ``verify``, ``predict``, ``measure`` (which tokenizes and checks; the runtime
  times the passes), ``sample``, ``sample_next``. Each reads its request by the
  contract, refuses it over a limit (``limits.py``: a text by its length before
  tokenizing, then by its tokens), runs the algorithm, and returns JSON: the
  result, or ``{"error": {code, message}}`` when the request is refused
  (``contract.Refusal``).
"""

import functools
import inspect
import json
import random
import time
import weakref
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from typing import Protocol

from . import contract

from .acceptance import cost_ratio, mean_alpha, per_position
from .all_at_once import all_at_once
from .chisquare import chi_square, two_samples
from .draft_model import ModelDraft
from .drafted import Proposer, drafted
from .drafts import DRAFTS, draft, target
from .contract import DRAFTING, MODES, RULES, Refusal
from .editable import DEFAULT_SOURCE
from .examples import EXAMPLES, chat
from .greedy import greedy
from .limits import (InputError, as_dict, check_characters, check_draws, check_gamma, check_guess, check_max_new,
                     check_measure, check_prompt, check_runs, check_run_tokens, check_temperature)
from .lookup import MAX_DRAFT
from .proposers import Context, Timed, proposer
from .sampled import whole_runs
from .sampling import accept, tally
from .speedup import best_gamma, speedup
from .trace import PassRecord, Run
from .verification import check

ROUNDS = ("draft", "copy", "answers", "skipped", "none")  # what a draft mode's round checked (``ModelDraft.kinds``)
MODEL_DRAFT = "model"  # sample_next's real pair: q is the site's draft model's, after the same text
CAPITALS = "The capital of France is Paris. The capital of Germany is"
PRESET_P = [0.35, 0.2, 0.15, 0.12, 0.1, 0.08]  # step 6's target over its six words; the presets differ in q
# Before a model's first timed comparison, a few tokens of each run, untimed and not shown (``warm_up``).
WARM_UP_TOKENS = 8
_warmed: "weakref.WeakSet" = weakref.WeakSet()
DEFAULTS = {
    "greedy": {"text": CAPITALS, "maxNew": 16},  # enough to watch the loop; each token costs a pass
    # The measurement: a median of a few runs per size, since a single pass time is noisy in a browser tab.
    "all-at-once": {"text": CAPITALS + " Berlin.", "measureSizes": [5, 30], "measureRuns": 5},
    "guess": {
        "text": CAPITALS,
        "guess": " Berlin.",
        # The "Try" guesses; "Right throughout" is the model's own next tokens, this many, computed.
        "tries": {"early": " Munich, the largest city of Bavaria", "spacing": "Berlin."},  # no space: another token
        "continuationTokens": 6,
    },
    "lookup": {
        # The reader's own text, written long enough to see copies pay off; the examples bring their own.
        "text": "The cat sat on the mat. The dog sat on the rug. The cat sat on the",
        "maxNew": 48,
        "examples": [example.as_dict() for example in EXAMPLES],
        "proposer": DEFAULT_SOURCE,
    },
    # "Under the hood": a run to time pass by pass, and which of step 5's examples its profile runs.
    "generate": {"text": "The capital of France is Paris. The capital of Italy is", "maxNew": 24, "profiled": EXAMPLES[0].key},
    # Step 6's live draft model: a request of the kind it was trained on (a coding question, sent as a chat turn:
    # the draft learned from the model's answers) but not one of its training requests (tests/test_draft.py), long
    # enough a run for its alpha and c to mean something; its draft length the contract's default, which the reader
    # changes. Typed bare, an instruction is continued, not answered, in text the draft never saw
    # (benchmarks/FINDINGS.md, "Step 6 sends the reader's text as a chat turn").
    "draft": {"text": "Write a Python function that reverses the words in a sentence.", "chat": True, "maxNew": 48,
              "gamma": contract.Generate.gamma,
              # What the request's ``chat`` puts around the text, for the page to show while the run goes on.
              "chatTurn": dict(zip(("before", "after"), chat("\0").split("\0"), strict=True))},
    "sampling": {
        # Presets over six made-up words (no model), every p and q editable; and the live model's p after a text.
        "words": ["the", "cat", "sat", "on", "a", "mat"],
        "presets": {name: {"p": PRESET_P, "q": q} for name, q in {
            "A rough draft": [0.1, 0.1, 0.3, 0.1, 0.3, 0.1],
            "A good draft": [0.3, 0.22, 0.15, 0.13, 0.1, 0.1],
            'A draft that never says "cat"': [0.3, 0, 0.3, 0.15, 0.15, 0.1],
        }.items()},
        "drafts": [*DRAFTS, MODEL_DRAFT],  # the last when the site ships a draft model
        "text": "The capital of France is",
        "draws": 10_000,
    },
}


class Tokenizer(Protocol):
    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: list[int]) -> str: ...


def limits() -> str:
    """The request limits as JSON (``limits.py``), for the worker and the pages."""
    return json.dumps(as_dict())


def labels(tokenizer: Tokenizer, ids) -> dict[str, str]:
    """Each id's own text, for drawing tokens one by one (a piece of a split character shows as U+FFFD).

    A tokenizer with ``pieces(ids)`` (the browser's, the native one) decodes them all in one call.
    """
    unique = sorted(set(ids))
    pieces = tokenizer.pieces(unique) if hasattr(tokenizer, "pieces") else [tokenizer.decode([t]) for t in unique]
    return {str(token): piece for token, piece in zip(unique, pieces)}


def pass_labels(tokenizer: Tokenizer, row: dict) -> dict[str, str]:
    return labels(tokenizer, row["draft"] + row["predicted"] + row["added"] + ((row.get("match") or {}).get("ngram") or []))


class Stream:
    """A run's text as it grows: ``push(ids)`` returns the text the new ids complete, whole characters only.

    It decodes only the ids since the text was last whole, so a pass costs its own tokens, not the whole text's.
    """

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer
        self.ids: list[int] = []  # since the text was last whole
        self.shown = ""  # of those ids' text

    def push(self, added: list[int]) -> str:
        self.ids += added
        # A character split across tokens decodes as U+FFFD until its last byte arrives: hold it back. (The one
        # streaming of a run's text: the worker's decode request streams through here too, with `pieces`.)
        text = self.tokenizer.decode(self.ids)
        complete = text.rstrip("\ufffd")
        piece, self.shown = complete[len(self.shown):], complete
        if complete == text:
            # Nothing held back: the bytes so far are whole characters, so what follows decodes on its own.
            self.ids, self.shown = [], ""
        return piece

    def end(self) -> str:
        """What ``push`` still holds back once no more ids will come: a character left unfinished, as U+FFFD."""
        rest = self.tokenizer.decode(self.ids)[len(self.shown):]
        self.ids, self.shown = [], ""
        return rest


def answers(function):
    """``function``'s JSON, or ``{"error": {"code", "message"}}`` when it refuses the request.

    A refusal (``contract.Refusal``: input over a limit, the reader's proposer
    failing) is a message for the reader, passed on as it is; anything else
    raised here is not, and the worker words it.
    """
    def refused(err: Refusal) -> str:
        return json.dumps({"error": {"code": err.code, "message": str(err)}})

    if inspect.iscoroutinefunction(function):
        @functools.wraps(function)
        async def answer(*args, **kwargs) -> str:
            try:
                return await function(*args, **kwargs)
            except Refusal as err:
                return refused(err)
    else:
        @functools.wraps(function)
        def answer(*args, **kwargs) -> str:
            try:
                return function(*args, **kwargs)
            except Refusal as err:
                return refused(err)
    return answer


async def run(kind: str, request: str, model, tokenizer: Tokenizer, on_pass: Callable[[str], None],
              on_start: Callable[[int], None] | None = None) -> str:
    """The worker's one way in: the request of ``kind`` as the page sent it (JSON), answered by its entry point.

    ``model`` and ``tokenizer`` are None for a kind that needs no model (``sample``).
    """
    fields = json.loads(request)
    match kind:
        case "generate":
            return await generate(model, tokenizer, fields, on_pass, on_start)
        case "verify":
            return await verify(model, tokenizer, fields, on_start)
        case "predict":
            return await predict(model, tokenizer, fields, on_start)
        case "measure":
            return measure(tokenizer, fields)
        case "sample":
            return sample(fields)
        case "sample_next":
            return await sample_next(model, tokenizer, fields, on_start)
        case "sample_runs":
            return await sample_runs(model, tokenizer, fields, on_start)
    return json.dumps({"error": {"code": "input", "message": f"unknown request {kind!r}"}})


def encoded(tokenizer: Tokenizer, text, what: str = "text") -> list[int]:
    """``text``'s ids; a text far over the token limit is refused by its length before the tokenizer spends seconds on it."""
    return list(tokenizer.encode(check_characters(text, what)))


def seed_of(value) -> int | float:
    """The random draft's seed: a number, else 0."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value  # NaN is no seed
    return value if number and value else 0


@answers
def measure(tokenizer: Tokenizer, request: dict) -> str:
    """Step 3's measurement, checked: ``{ids, sizes, runs}``, the text's ids repeated until they fill the largest size.

    The runtime times the passes (model-worker.js), so no Python runs between them.
    """
    asked = contract.Measure.parse(request)
    ids = encoded(tokenizer, asked.text)
    sizes, runs = check_measure(ids, asked.sizes, asked.runs)
    while len(ids) < max(sizes):
        ids += ids
    return json.dumps({"ids": ids, "sizes": sizes, "runs": runs})


@answers
def pieces(tokenizer: Tokenizer, ids) -> str:
    """``ids`` streamed one at a time as a run streams them: ``{"pieces": [one per id, then the end], "text"}``."""
    ids = [int(token) for token in ids]
    stream = Stream(tokenizer)
    return json.dumps({"pieces": [stream.push([token]) for token in ids] + [stream.end()], "text": tokenizer.decode(ids)})


@answers
async def generate(model, tokenizer: Tokenizer, request: dict, on_pass: Callable[[str], None],
                   on_start: Callable[[int], None] | None = None) -> str:
    """Run one panel request; each pass's event goes to ``on_pass`` as JSON, and the whole run comes back as JSON.

    ``request`` is a ``contract.Generate`` (in prompt lookup, the events also
    carry the match it copied from). An event is a ``contract.PassEvent``:
    the pass record, the text it completed, its tokens' labels. ``on_start``
    hears the prompt's length once the request is accepted (the page's clock
    starts then).
    """
    asked = contract.Generate.parse(request)
    text, mode = check_characters(asked.text), asked.mode
    if asked.chat and text:  # an empty message stays empty, and is refused as an empty text is
        text = chat(text)
    prompt = encoded(tokenizer, text)
    guess = encoded(tokenizer, asked.guess, "guess")
    source = check_characters(asked.proposer, "proposer", "Python source text")
    check_prompt(prompt)
    max_new = check_max_new(asked.max_new)
    if mode not in MODES:
        raise InputError(f"unknown mode {mode!r}: expected greedy or one of {', '.join(MODES[1:])}")
    gamma = check_gamma(asked.gamma)
    draft_model = draft_of(model) if mode in DRAFTING else None
    if on_start:
        on_start(len(prompt))
    # Only the browser's model has a clock, which its sessions feed (the build's traces carry no timing).
    clock = getattr(model, "clock", None)
    if clock:
        clock.start()
    matches: list = []  # prompt lookup's match for the pass being drafted
    if mode == "greedy":
        propose = None
    elif mode in DRAFTING:
        # Not wrapped in Timed: the drafted loop hands the draft the target's features (it has ``keep``), and its
        # cost is its own small passes' seconds.
        propose = proposer(mode, Context(prompt=prompt, vocab_size=model.facts.vocab_size, draft=draft_model,
                                         gamma=gamma, adaptive=bool(asked.adaptive)))
    else:
        propose = Timed(proposer(mode, Context(
            prompt=prompt, vocab_size=model.facts.vocab_size, rng=random.Random(seed_of(asked.seed)),
            guess=guess, source=source, on_match=matches.append)))
    if asked.baseline:
        await warm_up(model, prompt, mode, gamma, bool(asked.kv_cache), bool(asked.adaptive))
        if clock:
            clock.start()
    report = Reporter(tokenizer, on_pass, matches if mode == "lookup" else None, clock,
                      propose if mode in DRAFTING else None)
    written = await interruptible(model, prompt, propose, max_new, bool(asked.kv_cache), mode, report)
    result = finished(tokenizer, written, text, propose, report.wall())
    compared = None
    if asked.baseline:
        again = Reporter(tokenizer, on_pass, None, clock, baseline=True)
        if clock:
            clock.start()
        compared = await interruptible(model, prompt, None, max_new, bool(asked.kv_cache), "greedy", again)
        result["baseline"] = {"tokens": compared.tokens, "totals": compared.totals(), "wall_seconds": again.wall(),
                              "identical": compared.tokens == written.tokens,
                              "speedup": ratio(again.wall(after_first=True), report.wall(after_first=True))}
    if mode in DRAFTING:
        result["draft"] = draft_figures(propose, written, compared)
    return json.dumps(result)


async def warm_up(model, prompt: list[int], mode: str, gamma: int, kv_cache: bool, adaptive: bool = False) -> None:
    """Once per model, before its first timed comparison: ``WARM_UP_TOKENS`` tokens drafted in ``mode`` and as many
    one at a time, untimed and not shown. A tab's first passes of each shape run several times slower than its later
    ones (measured on step 6's default text, right after loading: the drafted run's first pass 832 ms against 166 ms
    in the next run, its next five 115-286 ms against 81-88), most likely while the browser compiles the runtime's
    WebAssembly in tiers; the drafted run, which goes first, would pay that alone and look slower than it is."""
    if model in _warmed:
        return
    propose = None
    if mode in DRAFTING:
        propose = proposer(mode, Context(prompt=prompt, vocab_size=model.facts.vocab_size, draft=draft_of(model),
                                         gamma=gamma, adaptive=adaptive))
    await interruptible(model, prompt, propose, WARM_UP_TOKENS, kv_cache, mode, lambda record: None)
    await interruptible(model, prompt, None, WARM_UP_TOKENS, kv_cache, "greedy", lambda record: None)
    _warmed.add(model)


class NoDraft(Refusal):
    code = "no_draft"


def draft_of(model):
    """The draft model the site ships, or a refusal that says there is none (and why, when the build said)."""
    found = getattr(model, "draft", None)
    if found is None:
        # The build's reason (hooks/model.py's draft_unavailable) says it in its own words.
        raise NoDraft(getattr(model, "draft_unavailable", None) or "this site was built without a draft model")
    return found


def ratio(top: float | None, bottom: float | None) -> float | None:
    return top / bottom if top and bottom else None


def draft_figures(propose: ModelDraft, run: Run, baseline: Run | None) -> dict:
    """What a run with the draft model measured: its small passes and their seconds, alpha per draft position,
    and against one at a time on the same text c, the formula's speed-up at them and its best draft length.

    c compares a small pass with one of one-at-a-time's passes after its first: the first reads the whole text,
    and costs as much with a draft as without one (the drafted run's first pass drafts nothing either)."""
    own, copies = propose.split(run.passes)  # "lookup+draft"'s copies are not the draft model's
    alpha = mean_alpha(own)
    c = None
    if baseline and len(baseline.passes) > 1:
        after_first = baseline.passes[1:]
        c = cost_ratio(propose.seconds, propose.passes, sum(r.seconds for r in after_first), len(after_first))
    known = alpha is not None and c is not None
    best = best_gamma(alpha, c) if known else None
    return {"gamma": propose.gamma, "window": propose.draft.window, "passes": propose.passes,
            "seconds": propose.seconds, "acceptance": per_position(own), "alpha": alpha, "c": c,
            "predicted": speedup(alpha, propose.gamma, c) if known else None, "best_gamma": best,
            "best_predicted": speedup(alpha, best, c) if known else None,
            "copies": len(copies), "copied_tokens": sum(record.accepted for record in copies),
            "answers": propose.kinds.count("answers"), "adaptive": propose.policy is not None,
            "rounds": {kind: propose.kinds.count(kind) for kind in ROUNDS}, "stopped": propose.stopped,
            "policy": propose.policy.figures() if propose.policy is not None else None}


class Reporter:
    """What hands each pass on as its event: the record (with the match copied from, the draft model's small passes
    before it, and the pass's timing), the text it completed, its labels. It also keeps the run's wall clock: from
    its start, and from the end of its first pass (the one that reads the text); ``baseline`` marks the events of
    the one-at-a-time run a request compares with, which cost the same to hand on."""

    def __init__(self, tokenizer: Tokenizer, on_pass: Callable[[str], None], matches: list | None, clock,
                 draft: ModelDraft | None = None, baseline: bool = False):
        self.tokenizer, self.on_pass, self.matches, self.clock = tokenizer, on_pass, matches, clock
        self.draft, self.baseline = draft, baseline
        self.stream = Stream(tokenizer)
        self.drafted = (0, 0.0)  # the draft's passes and seconds when the last pass was handed on
        self.began = time.perf_counter()
        self.first = self.last = None

    def __call__(self, record: PassRecord) -> None:
        row = {**asdict(record), "bonus": record.bonus}
        if self.matches is not None:
            row["match"] = self.matches[-1]
        if self.draft is not None:
            passes, seconds = self.draft.passes, self.draft.seconds
            row["draft_passes"], row["draft_seconds"] = passes - self.drafted[0], seconds - self.drafted[1]
            self.drafted = (passes, seconds)
            row["skipped"] = self.draft.kinds[-1] == "skipped"
            if self.draft.copy_first:
                kind = self.draft.kinds[-1]
                row["copied"] = kind in ("copy", "answers")
                if kind == "copy":
                    row["match"] = self.draft.match  # where it copied from, drawn as step 5 draws it
                elif kind == "answers":
                    row["answers"] = True
        # The pass's text and labels are part of it: their crossings to the tokenizer are the bridge's (clock.py).
        event = {"pass": row, "text": self.stream.push(record.added), "labels": pass_labels(self.tokenizer, row)}
        if self.baseline:
            event["baseline"] = True
        if self.clock:
            row["timing"] = self.clock.lap()
        self.on_pass(json.dumps(event))
        self.last = time.perf_counter()
        self.first = self.first or self.last
        if self.clock:
            self.clock.start()  # the next pass begins: handing this one on is counted in no pass

    def wall(self, after_first: bool = False) -> float:
        """Seconds from the run's start (or the end of its first pass) to its last pass handed on."""
        if self.last is None:
            return 0.0
        return self.last - (self.first if after_first else self.began)


async def interruptible(model, prompt: list[int], propose: Proposer | None, max_new: int, kv_cache: bool, mode: str,
                        report: Callable[[PassRecord], None]) -> Run:
    """Greedy, or drafted with ``propose``'s drafts; the page's Cancel ends it as an ordinary error."""
    try:
        if propose is None:
            return await greedy(model, prompt, max_new, kv_cache=kv_cache, on_pass=report)
        return await drafted(model, prompt, propose, max_new, kv_cache=kv_cache, mode=mode, on_pass=report)
    except KeyboardInterrupt:
        # The page's Cancel, through Pyodide's interrupt buffer (it reaches even a proposer that never returns).
        # As an ordinary exception it rejects this call instead of escaping the event loop.
        raise RuntimeError("the run was cancelled") from None


def finished(tokenizer: Tokenizer, run: Run, text: str, propose, wall: float = 0.0) -> dict:
    """The run as the page draws it: the record, the drafting's cost, the text written, the prompt shown back, labels,
    and its wall-clock seconds."""
    ids = run.prompt + run.tokens + [t for record in run.passes for t in record.draft + record.predicted]
    return {**run.as_dict(), "proposer_seconds": propose.seconds if propose else 0.0, "max_draft": MAX_DRAFT,
            "text": tokenizer.decode(run.tokens), "promptText": text, "labels": labels(tokenizer, ids),
            "wall_seconds": wall}


@answers
async def verify(model, tokenizer: Tokenizer, request: dict, on_start: Callable[[int], None] | None = None) -> str:
    """Step 4: one pass checks the reader's whole ``guess`` after ``text``: ``{pass, prompt, labels, text}`` as JSON."""
    asked = contract.Verify.parse(request)
    prompt = encoded(tokenizer, asked.text)
    guess = encoded(tokenizer, asked.guess, "guess")
    check_guess(prompt, guess)
    if on_start:
        on_start(len(prompt) + len(guess))
    _, record = await check(model.session(kv_cache=bool(asked.kv_cache)), prompt, guess, model.facts.eos_ids)
    row = {**asdict(record), "bonus": record.bonus}
    return json.dumps({"pass": row, "prompt": prompt, "labels": pass_labels(tokenizer, row),
                       "text": tokenizer.decode(record.added)})


@answers
async def predict(model, tokenizer: Tokenizer, request: dict, on_start: Callable[[int], None] | None = None) -> str:
    """Step 3: one pass over ``text``, the model's next-token prediction after every position, with labels, as JSON."""
    ids = encoded(tokenizer, contract.Predict.parse(request).text)
    check_prompt(ids)
    if on_start:
        on_start(len(ids))
    result = (await all_at_once(model, ids)).as_dict()
    return json.dumps({**result, "labels": labels(tokenizer, ids + [t for row in result["topk_ids"] for t in row])})


@answers
def sample(request: dict) -> str:
    """Step 6: draft ``draws`` tokens from q, keep them by the speculative rule, and test the counts against p."""
    asked = contract.Sample.parse(request)
    return json.dumps(sampled(asked.p, asked.q, asked.draws, seed_of(asked.seed)))


def sampled(p, q, draws, seed) -> dict:
    p, q = normalised(p, "p"), normalised(q, "q")
    if len(p) != len(q):
        raise InputError(f"p has {len(p)} words but q has {len(q)}")
    counts = tally(p, q, check_draws(draws), random.Random(seed))
    return {"p": p, "q": q, "counts": counts.counts, "accepted": counts.accepted, "draws": counts.draws,
            "frequencies": counts.frequencies(), "verdict": chi_square(counts.counts, p).as_dict()}


def normalised(weights, name: str) -> list[float]:
    """``weights`` scaled to sum to one, or an InputError that says what is wrong with them."""
    if not isinstance(weights, (list, tuple)):
        raise InputError(f"{name} must be a list of probabilities")
    if not all(isinstance(w, (int, float)) and not isinstance(w, bool) and 0 <= w < float("inf") for w in weights):
        raise InputError(f"every probability in {name} must be a number of at least 0")
    weights = [float(w) for w in weights]
    total = sum(weights)
    if total <= 0:
        raise InputError(f"{name} needs at least one probability above 0")
    return [w / total for w in weights]


@answers
async def sample_next(model, tokenizer: Tokenizer, request: dict, on_start: Callable[[int], None] | None = None) -> str:
    """Step 6 on the live model: p is its next-token distribution after ``text`` (top k and "other"), q the
    ``draft`` kind; the same draws and verdict as ``sample``, and the top k's ids and labels."""
    asked = contract.SampleNext.parse(request)
    prompt = encoded(tokenizer, asked.text)
    check_prompt(prompt)
    kind = asked.draft
    if kind not in (*DRAFTS, MODEL_DRAFT):
        raise InputError(f"choose a draft: {', '.join((*DRAFTS, MODEL_DRAFT))}")
    found = draft_of(model) if kind == MODEL_DRAFT else None
    if found and len(prompt) < 2:
        raise InputError("the draft model reads the model's features before the last token: type two tokens at least")
    if on_start:
        on_start(len(prompt))
    # The draft model reads the features of the tokens before the last (``draft_model.py``): the pass returns them.
    wanted = min(len(prompt), found.window + 1) if found else 0
    last = await model.session().forward(prompt, rows_from=len(prompt) - 1, hidden=wanted)
    p = target(last.topk_probs[-1])
    ids = last.topk_ids[-1]
    q = (await model_q(found, last.hidden[:-1], prompt[len(prompt) - wanted + 1:], ids)) if found else draft(p, kind)
    result = sampled(p, q, asked.draws, seed_of(asked.seed))
    return json.dumps({**result, "ids": ids, "draft": kind, "labels": labels(tokenizer, ids)})


async def model_q(found, features: list[list[float]], tokens: list[int], ids: list[int]) -> list[float]:
    """The draft model's q for the token after the text, over the target's top k ``ids`` and "other" (whatever
    else the draft gives any probability, the rest of its vocabulary included)."""
    step = await found.step(features, tokens, sampling=True)
    given = dict(zip(step.ids, step.probs))
    q = [given.get(i, 0.0) for i in ids]
    return [*q, max(0.0, 1.0 - sum(q))]


@answers
async def sample_runs(model, tokenizer: Tokenizer, request: dict, on_start: Callable[[int], None] | None = None) -> str:
    """Step 6's whole-run test: plain and drafted sampled runs after ``text``, their first tokens tallied, and the
    two tallies compared (``chisquare.two_samples``): one distribution if the rule is exact. ``rule`` "always
    accept" keeps every drafted token: the wrong rule the test must catch."""
    asked = contract.SampleRuns.parse(request)
    prompt = encoded(tokenizer, asked.text)
    check_prompt(prompt)
    runs, new_tokens = check_runs(asked.runs), check_run_tokens(asked.new_tokens)
    gamma, temperature = check_gamma(asked.gamma), check_temperature(asked.temperature)
    if asked.rule not in RULES:
        raise InputError(f"unknown rule {asked.rule!r}: choose {' or '.join(map(repr, RULES))}")
    found = draft_of(model)
    if on_start:
        on_start(len(prompt))
    rng = random.Random(seed_of(asked.seed))
    rule = accept if asked.rule == "speculative" else lambda p, q, u: True
    began = time.perf_counter()
    totals = Counter()
    try:
        plain = await whole_runs(model, prompt, runs, new_tokens, temperature, rng)
        drafted_runs = await whole_runs(model, prompt, runs, new_tokens, temperature, rng, draft=found, gamma=gamma,
                                        rule=rule, totals=totals)
    except KeyboardInterrupt:
        raise RuntimeError("the run was cancelled") from None
    plain, drafted_runs = ({outcome(tokens): n for tokens, n in tally.items()} for tally in (plain, drafted_runs))
    return json.dumps({"plain": plain, "drafted": drafted_runs, "runs": runs, "rule": asked.rule,
                       "draft_passes": totals["passes"], "accepted": totals["accepted"],
                       "drafted_tokens": totals["drafted"], "verdict": two_samples(plain, drafted_runs).as_dict(),
                       "seconds": time.perf_counter() - began})


def outcome(tokens: list[int]) -> str:
    """A run's tokens as one outcome of the whole-run test (a JSON key)."""
    return ",".join(map(str, tokens))
