"""The entry points: what each kind of request a page makes is answered with, as JSON, decided once.

The pages build a request of the contract (``contract.py``) and the runtime
passes it here untouched, as JSON, through ``run``: with the model behind the
seam and a tokenizer (``tokens.Tokenizer``), posting each pass event, and
returning the result, as JSON. The build calls the same functions natively
(``hooks/traces.py``'s recorded runs, ``hooks/contract.py``'s drawn presets), so
a recorded run and a live one are made by the same code.

One entry point per kind of request, named after it: ``generate`` (run by
``generation.py``), ``verify``, ``predict``, ``measure`` (which the model's
backend times: in the browser, the model's worker), ``sample``, ``sample_next``,
``sample_runs``. Each reads its request by the contract, refuses it over a
limit (``limits.py``: a text by its length before tokenizing, then by its
tokens), runs the algorithm, and returns JSON: the result, built as the
contract's type for it and sent with its keys' wire names (``contract.on_wire``),
or ``{"error": {code, message}}`` when the request is refused
(``contract.Refusal``).
Beside them, for the worker: ``limits`` and ``pieces`` (its decode request).
"""

import functools
import inspect
import json
import random
import time
from collections import Counter
from collections.abc import Callable

from . import contract, generation
from .all_at_once import all_at_once
from .chisquare import chi_square, two_samples
from .contract import (RULES, MeasureResult, PassEvent, PredictResult, Refusal, SampleNextResult, SampleResult,
                       SampleRunsResult, VerifyResult, on_wire)
from .drafts import DRAFTS, MODEL_DRAFT, draft, target
from .generation import draft_of
from .limits import (InputError, as_dict, check_draws, check_gamma, check_guess, check_measure, check_prompt, check_runs,
                     check_run_tokens, check_temperature, seed_of)
from .sampled import whole_runs
from .sampling import accept, tally
from .tokens import Stream, Tokenizer, encoded, labels, pass_labels
from .verification import check

MEASURE_WARMUP = 2  # step 3's untimed passes per size first: they pay for allocations the later ones reuse


def sent_as(typed: type | None):
    """The entry point's result, a ``typed`` dict, as JSON on the wire; or ``{"error": {"code", "message"}}`` when
    it refuses the request. (``None``: a plain dict of its own, sent as it is.)

    A refusal (``contract.Refusal``: input over a limit, the reader's proposer
    failing) is a message for the reader, passed on as it is; anything else
    raised here is not, and the worker words it.
    """
    def sent(result: dict) -> str:
        return json.dumps(on_wire(typed, result) if typed else result)

    def refused(err: Refusal) -> str:
        return json.dumps({"error": {"code": err.code, "message": str(err)}})

    def decorate(function):
        if inspect.iscoroutinefunction(function):
            @functools.wraps(function)
            async def answer(*args, **kwargs) -> str:
                try:
                    return sent(await function(*args, **kwargs))
                except Refusal as err:
                    return refused(err)
        else:
            @functools.wraps(function)
            def answer(*args, **kwargs) -> str:
                try:
                    return sent(function(*args, **kwargs))
                except Refusal as err:
                    return refused(err)
        return answer
    return decorate


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
            return await measure(model, tokenizer, fields)
        case "sample":
            return sample(fields)
        case "sample_next":
            return await sample_next(model, tokenizer, fields, on_start)
        case "sample_runs":
            return await sample_runs(model, tokenizer, fields, on_start)
    return json.dumps({"error": {"code": "input", "message": f"unknown request {kind!r}"}})


def limits() -> str:
    """The request limits as JSON (``limits.py``), for the worker and the pages."""
    return json.dumps(as_dict())


@sent_as(None)
def pieces(tokenizer: Tokenizer, ids) -> dict:
    """``ids`` streamed one at a time as a run streams them: ``{"pieces": [one per id, then the end], "text"}``."""
    ids = [int(token) for token in ids]
    stream = Stream(tokenizer)
    return {"pieces": [stream.push([token]) for token in ids] + [stream.end()], "text": tokenizer.decode(ids)}


@sent_as(contract.GenerateResult)
async def generate(model, tokenizer: Tokenizer, request: dict, on_pass: Callable[[str], None],
                   on_start: Callable[[int], None] | None = None) -> contract.GenerateResult:
    """A ``contract.Generate`` run by ``generation.generate``; each pass's event goes to ``on_pass`` as JSON."""
    def posted(event: PassEvent) -> None:
        on_pass(json.dumps(on_wire(PassEvent, event)))

    return await generation.generate(model, tokenizer, contract.Generate.parse(request), posted, on_start)


@sent_as(MeasureResult)
async def measure(model, tokenizer: Tokenizer, request: dict) -> MeasureResult:
    """Step 3's measurement: the median ms of one pass over the first n tokens of the text, for each n of ``sizes``,
    the text's ids repeated until they fill the largest. The model times the passes (``time_passes``: in the browser,
    the model's worker, so no Python runs between them)."""
    asked = contract.Measure.parse(request)
    ids = encoded(tokenizer, asked.text)
    sizes, runs = check_measure(ids, asked.sizes, asked.runs)
    while len(ids) < max(sizes):
        ids += ids
    ms = await model.time_passes(ids[:max(sizes)], sizes, runs, MEASURE_WARMUP)
    return MeasureResult(ms=ms, runs=runs, threads=model.threads)


@sent_as(VerifyResult)
async def verify(model, tokenizer: Tokenizer, request: dict, on_start: Callable[[int], None] | None = None) -> VerifyResult:
    """Step 4: one pass checks the reader's whole ``guess`` after ``text``: ``{pass, prompt, labels, text}`` as JSON."""
    asked = contract.Verify.parse(request)
    prompt = encoded(tokenizer, asked.text)
    guess = encoded(tokenizer, asked.guess, "guess")
    check_guess(prompt, guess)
    if on_start:
        on_start(len(prompt) + len(guess))
    _, record = await check(model.session(kv_cache=bool(asked.kv_cache)), prompt, guess, model.facts.eos_ids)
    row = record.as_row()
    return VerifyResult(pass_=row, prompt=prompt, labels=pass_labels(tokenizer, row), text=tokenizer.decode(record.added))


@sent_as(PredictResult)
async def predict(model, tokenizer: Tokenizer, request: dict, on_start: Callable[[int], None] | None = None) -> PredictResult:
    """Step 3: one pass over ``text``, the model's next-token prediction after every position, with labels, as JSON."""
    ids = encoded(tokenizer, contract.Predict.parse(request).text)
    check_prompt(ids)
    if on_start:
        on_start(len(ids))
    result = await all_at_once(model, ids)
    return PredictResult(**result, labels=labels(tokenizer, ids + [t for row in result["topk_ids"] for t in row]))


@sent_as(SampleResult)
def sample(request: dict) -> SampleResult:
    """Step 6: draft ``draws`` tokens from q, keep them by the speculative rule, and test the counts against p."""
    asked = contract.Sample.parse(request)
    return sampled(asked.p, asked.q, asked.draws, seed_of(asked.seed))


def sampled(p, q, draws, seed) -> SampleResult:
    p, q = normalised(p, "p"), normalised(q, "q")
    if len(p) != len(q):
        raise InputError(f"p has {len(p)} words but q has {len(q)}")
    counts = tally(p, q, check_draws(draws), random.Random(seed))
    return SampleResult(p=p, q=q, counts=counts.counts, accepted=counts.accepted, draws=counts.draws,
                        frequencies=counts.frequencies(), verdict=chi_square(counts.counts, p))


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


@sent_as(SampleNextResult)
async def sample_next(model, tokenizer: Tokenizer, request: dict,
                      on_start: Callable[[int], None] | None = None) -> SampleNextResult:
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
    return SampleNextResult(**result, ids=ids, draft=kind, labels=labels(tokenizer, ids))


async def model_q(found, features: list[list[float]], tokens: list[int], ids: list[int]) -> list[float]:
    """The draft model's q for the token after the text, over the target's top k ``ids`` and "other" (whatever
    else the draft gives any probability, the rest of its vocabulary included)."""
    step = await found.step(features, tokens, sampling=True)
    given = dict(zip(step.ids, step.probs))
    q = [given.get(i, 0.0) for i in ids]
    return [*q, max(0.0, 1.0 - sum(q))]


@sent_as(SampleRunsResult)
async def sample_runs(model, tokenizer: Tokenizer, request: dict,
                      on_start: Callable[[int], None] | None = None) -> SampleRunsResult:
    """Step 6's whole-run test: plain and drafted sampled runs after ``text``, their first tokens tallied, and the
    two tallies compared (``chisquare.two_samples``): one distribution if the rule is exact. ``rule`` "always
    accept" keeps every drafted token: the wrong rule the test must catch. Without ``plain`` only the drafted runs are
    drawn, and the caller compares them with a plain sample it holds."""
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
        plain = await whole_runs(model, prompt, runs, new_tokens, temperature, rng) if asked.plain else Counter()
        drafted_runs = await whole_runs(model, prompt, runs, new_tokens, temperature, rng, draft=found, gamma=gamma,
                                        rule=rule, totals=totals)
    except KeyboardInterrupt:
        raise RuntimeError("the run was cancelled") from None
    plain, drafted_runs = ({outcome(tokens): n for tokens, n in tally.items()} for tally in (plain, drafted_runs))
    return SampleRunsResult(plain=plain, drafted=drafted_runs, runs=runs, rule=asked.rule, draft_passes=totals["passes"],
                            accepted=totals["accepted"], drafted_tokens=totals["drafted"],
                            verdict=two_samples(plain, drafted_runs) if asked.plain else None,
                            seconds=time.perf_counter() - began)


def outcome(tokens: list[int]) -> str:
    """A run's tokens as one outcome of the whole-run test (a JSON key)."""
    return ",".join(map(str, tokens))
