"""The contract between the pages and Python: every request a page may make, what it gets back, and how it fails.

Written once, here. The build writes it into the site as a JavaScript module
(``hooks/contract.py``: ``contract.js``, with JSDoc types), which the pages build
their requests with and the runtime passes on untouched; ``entry.py`` answers
them. So a request has one shape, in one place:

- ``REQUESTS``: one dataclass per kind of request, its fields with their
  defaults. A field whose default is ``None`` must be given; what a value may
  be is checked by ``limits.py`` when the request runs. On the wire (JSON, and
  in JavaScript) a field's name is its camelCase (``kv_cache`` is ``kvCache``),
  and a kind's too (``sample_next`` is ``sampleNext``). A field the contract
  lacks is refused, on both sides.
- ``RESULTS``: what each kind answers with (and ``PassEvent``, what a
  generation posts after each pass), as typed dicts, which every result is
  built as (``GenerateResult(...)``). They are sent by ``on_wire``, by the
  requests' rule: a key's wire name is its camelCase (``wall_seconds`` is
  ``wallSeconds``, ``pass_``, a word Python keeps for itself, is ``pass``),
  in the typed dicts a result holds too; a dict of data (labels by id, counts
  by outcome) keeps its keys.
- ``Refusal``: the one exception a request is refused with, with its ``code``;
  ``ERRORS`` lists every code a page may see, from Python or from the runtime.
- ``TIMING``: the parts a generated pass's time is split into (``backends/clock.py``).

Adding a kind of request is one place: its dataclass (and result) here, its
entry point in ``entry.py``, named after it, and a case in its ``run``.
"""

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, NotRequired, TypedDict, get_type_hints

MODES = ("greedy", "lookup", "guess", "random", "custom", "draft", "lookup+draft")  # "greedy", or drafted by one of the proposers
Mode = Literal["greedy", "lookup", "guess", "random", "custom", "draft", "lookup+draft"]
DRAFTING = ("draft", "lookup+draft")  # the modes that draft with the draft model (the second copies where it can)
RULES = ("speculative", "always accept")  # sample_runs' rule: the lesson's, or a wrong one its test must catch
TIMING = ("model", "kv", "bridge", "python")  # what a pass's seconds are split into; "python" is the rest
ERRORS = {
    # A refusal from Python: the request is not run.
    "input": "the request is over a limit or malformed (limits.py)",
    "proposer": "the reader's proposer could not be used (editable.py)",
    "no_draft": "the site was built without a draft model",
    # The runtime's (worker.js, client.js, loader.js).
    "busy": "another run is under way",
    "cancelled": "the reader pressed Cancel",
    "memory": "the tab ran out of memory",
    "stack": "the JavaScript stack overflowed inside Python",
    "model": "onnxruntime-web failed, or the model's worker stopped",
    "python": "Python raised",
    "error": "anything else",
    "worker": "the runtime could not start",
    "worker_restarted": "the worker stopped responding and was replaced",
    "no_model": "the site was built without a model",
    "not_found": "a model file is missing",
    "truncated": "a model file arrived short",
    "hash_mismatch": "a model file's sha256 is not the manifest's",
    "quota": "the browser's storage is full",
    "network": "a model file could not be fetched",
}


class Refusal(Exception):
    """A request this page does not run, with its ``code`` (one of ``ERRORS``) and a message in words for the reader."""

    code = "input"


def wire(name: str) -> str:
    """A Python name as the pages write it: ``kv_cache`` -> ``kvCache``."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@dataclass(frozen=True)
class Request:
    """A request's fields; ``kind`` names it, ``model`` says whether it needs the model loaded (or only Python)."""

    kind: ClassVar[str]
    model: ClassVar[bool] = True

    @classmethod
    def parse(cls, fields: dict) -> "Request":
        """The page's request (wire names), with the defaults of the fields it left out; an unknown field is refused."""
        names = {wire(f.name): f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(fields) - set(names))
        if unknown:
            raise Refusal(f"a {cls.kind} request has no field {', '.join(map(repr, unknown))}: "
                          f"it takes {', '.join(names)}")
        # JavaScript's undefined arrives as None: the default, as for a field left out.
        return cls(**{names[key]: value for key, value in fields.items() if value is not None})

    def as_wire(self) -> dict:
        return {wire(name): value for name, value in dataclasses.asdict(self).items()}


@dataclass(frozen=True)
class Generate(Request):
    """Write after ``text``, greedy or drafted (``mode``), up to ``max_new`` tokens, posting each pass."""

    kind = "generate"
    text: str | None = None
    mode: Mode = "greedy"
    kv_cache: bool = True
    max_new: int = 20
    guess: str = ""  # the "guess" mode's continuation
    seed: float = 0  # the "random" mode's
    proposer: str = ""  # the "custom" mode's Python source
    gamma: int = 1  # the draft modes' draft length (the shipped draft's best, natively and in the tab: benchmarks/FINDINGS.md)
    baseline: bool = False  # then also one at a time on the same text: the result's ``baseline``, c and speed-up
    chat: bool = False  # send ``text`` as one user turn in the model's chat format (``examples.chat``): it answers it
    # The draft modes': each round weighed in the run (``policy.py``): a copy as long as the context it matched, the
    # draft model asked only while it pays (else a plain pass), nothing proposed where it is unsure of its first token,
    # no further after a later one it is unsure of (gamma is then the most it drafts). False: every round gamma tokens.
    # Step 6's panel asks for it at first (its box "Only where it pays", ``defaults.py``).
    adaptive: bool = False


@dataclass(frozen=True)
class Verify(Request):
    """Step 4: one pass checks the reader's whole ``guess`` after ``text``."""

    kind = "verify"
    text: str | None = None
    guess: str | None = None
    kv_cache: bool = True


@dataclass(frozen=True)
class Predict(Request):
    """Step 3: one pass over ``text``, the model's prediction after every position."""

    kind = "predict"
    text: str | None = None


@dataclass(frozen=True)
class Measure(Request):
    """Step 3's measurement: the median time of one pass over the first n tokens of ``text``, for each n in ``sizes``."""

    kind = "measure"
    text: str | None = None
    sizes: list[int] | None = None
    runs: int = 5


@dataclass(frozen=True)
class Sample(Request):
    """Step 6: ``draws`` tokens drafted from q and kept by the speculative rule, tested against p (no model)."""

    kind = "sample"
    model = False
    p: list[float] | None = None
    q: list[float] | None = None
    draws: int | None = None
    seed: float = 0


@dataclass(frozen=True)
class SampleNext(Request):
    """Step 6 on the live model: p is its next-token distribution after ``text``, q the ``draft`` kind."""

    kind = "sample_next"
    text: str | None = None
    draft: str | None = None
    draws: int | None = None
    seed: float = 0


@dataclass(frozen=True)
class SampleRuns(Request):
    """Step 6's whole-run test: ``runs`` plain sampled runs and ``runs`` drafted with the draft model, ``new_tokens``
    each after ``text`` at ``temperature``, drafted ones kept by ``rule`` (one of ``RULES``); the two samples of
    first tokens compared by a two-sample chi-squared test. One request, so the runs go on inside the worker."""

    kind = "sample_runs"
    text: str | None = None
    runs: int | None = None
    new_tokens: int = 3
    # The whole-run test's own, not step 6's (Generate.gamma): two tokens a round, so the rule also judges one drafted
    # after a kept one.
    gamma: int = 2
    temperature: float = 1.0
    rule: str = "speculative"
    seed: float = 0
    # False: the drafted runs alone. A test that already holds a plain sample of the same text (from a request with the
    # lesson's rule) compares a wrong rule's runs with it, instead of drawing the plain runs again.
    plain: bool = True


REQUESTS: dict[str, type[Request]] = {cls.kind: cls for cls in (Generate, Verify, Predict, Measure, Sample, SampleNext,
                                                                 SampleRuns)}


class Match(TypedDict):
    ngram: list[int]  # the last tokens of the text, found earlier
    n: int
    at: int  # where the copy starts


class PassRow(TypedDict):
    """One pass as the pages draw it (``trace.PassRecord``, with ``bonus``)."""

    start: int
    fed: list[int]
    draft: list[int]
    predicted: list[int]
    accepted: int
    token: int
    added: list[int]
    seconds: float
    bonus: bool
    match: NotRequired[Match | None]  # what prompt lookup copied from (None: nothing to copy); "lookup+draft": copies only
    timing: NotRequired[dict[str, float]]  # the browser's: seconds per part of TIMING
    draft_passes: NotRequired[int]  # the draft modes': the draft model's small passes before this pass ...
    draft_seconds: NotRequired[float]  # ... and their seconds (onnxruntime's own)
    copied: NotRequired[bool]  # "lookup+draft": this pass checked a copy, not the draft's tokens ...
    from_answers: NotRequired[bool]  # ... from the model's own earlier answers (answers.py), not from the text (``match``)
    skipped: NotRequired[bool]  # the draft modes': the run's estimate said the draft model would not pay: a plain pass
    withheld: NotRequired[bool]  # ... or it ran, unsure of its token, and proposed nothing: a plain pass


class PassEvent(TypedDict):
    """What a generation posts after each pass: the pass, the text it completed (whole characters), its labels;
    ``baseline`` marks the passes of the one-at-a-time run a ``baseline`` request compares with."""

    pass_: PassRow
    text: str
    labels: dict[str, str]
    baseline: NotRequired[bool]


class Totals(TypedDict):
    passes: int
    tokens: int
    drafted: int
    accepted: int
    tokens_per_pass: float
    seconds: float


class Position(TypedDict):
    """One draft position's acceptance (``acceptance.per_position``)."""

    position: int
    reached: int
    accepted: int
    alpha: float


class PolicyFigures(TypedDict):
    """What an adaptive draft mode decided (``policy.Policy.figures``): the draft model's rounds asked because they
    paid, those skipped, and those asked to measure again while they did not; and the estimates at the run's end."""

    drafted: int
    skipped: int
    probes: int
    withheld: int  # rounds the draft model ran and proposed nothing, unsure of its first token ...
    rested: int  # ... and rounds it was not asked after them
    propose: float  # the draft's probability of its first token under which it proposes nothing
    confidence: float  # the draft's top probability under which it drafts no further
    tokens_per_draft: float  # tokens a round of the draft model was expected to add
    draft_seconds: float | None  # a round of the draft model, recent ones weighing more (None: none measured) ...
    plain_seconds: float | None  # ... and a plain pass
    pays: bool  # whether the draft model would have been asked next


class DraftFigures(TypedDict):
    """What a draft mode measured of its draft model; c, the formula's prediction and its best gamma need the
    baseline's passes (None without it, or when nothing was drafted). The acceptance, alpha and the formula are the
    draft model's rounds alone: "lookup+draft"'s copies are counted apart."""

    gamma: int
    window: int
    passes: int  # small passes
    seconds: float  # their onnxruntime seconds
    acceptance: list[Position]
    alpha: float | None  # accepted over reached, every position together
    c: float | None  # one small pass in one-at-a-time passes (acceptance.cost_ratio)
    predicted: float | None  # the formula's speed-up at alpha, gamma and c (speedup.py)
    best_gamma: int | None  # the formula's best draft length at alpha and c (0: drafting does not pay)
    best_predicted: float | None
    copies: int  # rounds that checked a copy instead ("lookup+draft"; 0 in "draft"): from the text or the answers
    copied_tokens: int  # ... and the copied tokens they kept
    from_answers: int  # of the copies, those from the model's own earlier answers (answers.py; 0 where none are shipped)
    adaptive: bool  # the request's: rounds weighed by a policy
    rounds: dict[str, int]  # rounds by what they checked: "draft", "copy", "answers", "skipped" (a plain pass),
    # "withheld" (a plain pass after a small one whose token the draft was unsure of), "none"
    stopped: int  # rounds the draft model drafted fewer than gamma tokens in, unsure of the last
    policy: PolicyFigures | None  # adaptive runs' decisions and estimates (None: not adaptive)


class Baseline(TypedDict):
    """One at a time on the same text, run after the drafted run in the same request."""

    tokens: list[int]
    totals: Totals
    wall_seconds: float
    identical: bool  # its tokens equal the drafted run's
    speedup: float  # its wall-clock seconds over the drafted run's: the measured speed-up


class RunRecord(TypedDict):
    """A run, greedy or drafted (``trace.Run.as_dict``)."""

    mode: str
    kv_cache: bool
    prompt: list[int]
    tokens: list[int]  # the generated tokens, after the prompt
    stop: str  # "eos" or "max_new"
    passes: list[PassRow]
    totals: Totals


class GenerateResult(RunRecord):
    proposer_seconds: float
    max_draft: int
    text: str
    prompt_text: str  # the text the model was given (in the chat turn, when the request asked for one)
    labels: dict[str, str]  # every id of the run, by its text
    wall_seconds: float  # the run from its first pass to its last, measured in Python where it runs
    draft: NotRequired[DraftFigures]  # the draft modes'
    baseline: NotRequired[Baseline]  # when the request asked for it


class VerifyResult(TypedDict):
    pass_: PassRow
    prompt: list[int]
    labels: dict[str, str]
    text: str


class Predictions(TypedDict):
    """One pass over a text (``all_at_once``): the model's prediction after every position."""

    ids: list[int]
    argmax: list[int]  # argmax[i]: the model's next token after ids[: i + 1]
    topk_ids: list[list[int]]
    topk_probs: list[list[float]]
    seconds: float


class PredictResult(Predictions):
    labels: dict[str, str]


class MeasureResult(TypedDict):
    ms: dict[str, float]  # by size
    runs: int
    threads: int


class Verdict(TypedDict):
    """A chi-squared test's (``chisquare.py``)."""

    statistic: float
    dof: int
    p_value: float
    level: float
    consistent: bool  # p_value >= level: no evidence against exactness


class SampleResult(TypedDict):
    p: list[float]
    q: list[float]
    counts: list[int]
    accepted: int
    draws: int
    frequencies: list[float]
    verdict: Verdict


class SampleNextResult(SampleResult):
    ids: list[int]  # the top k's, before "other"
    draft: str
    labels: dict[str, str]


class SampleRunsResult(TypedDict):
    plain: dict[str, int]  # each run's first tokens (ids joined by commas) -> how many runs wrote them; {} unless asked
    drafted: dict[str, int]
    runs: int
    rule: str
    draft_passes: int
    accepted: int  # drafted tokens kept as drafted, over every drafted run
    drafted_tokens: int
    verdict: Verdict | None  # the two samples, one distribution? (chisquare.two_samples); None without plain runs
    seconds: float


RESULTS: dict[str, type] = {"generate": GenerateResult, "verify": VerifyResult, "predict": PredictResult,
                            "measure": MeasureResult, "sample": SampleResult, "sample_next": SampleNextResult,
                            "sample_runs": SampleRunsResult}


def keys(typed: type) -> set[str]:
    """A typed dict's keys as they are sent (``wall_seconds`` is ``wallSeconds``, ``pass_`` is ``pass``)."""
    return {wire(name) for name in get_type_hints(typed)}


def wire_names(typed: type) -> dict[str, str]:
    """Each key of the typed dict ``typed`` by its name on the wire: a result's or an event's (and those of the typed
    dicts they hold) by the requests' rule (``wire``); any other's as written here, less the ``_`` of ``pass_``."""
    sent = typed in _answered()
    return {name: wire(name) if sent else name.removesuffix("_") for name in get_type_hints(typed)}


@functools.cache
def _answered() -> list[type]:
    """The typed dicts the results and events are, and hold."""
    return typed_dicts([PassEvent, *RESULTS.values()])


def typed_dicts(roots: list) -> list[type]:
    """The typed dicts ``roots`` are and hold (a result's ``totals``, its draft's ``policy``), each once."""
    found: list[type] = []

    def visit(hint):
        if not typing.is_typeddict(hint):
            for arg in typing.get_args(hint):
                visit(arg)
        elif hint not in found:
            found.append(hint)
            for held in _hints(hint).values():
                visit(held)

    for root in roots:
        visit(root)
    return found


@functools.cache
def _hints(typed: type) -> dict[str, Any]:
    return get_type_hints(typed)


def on_wire(typed: type, value: dict) -> dict:
    """``value``, built as the typed dict ``typed``, as it is sent: each key by its wire name, in the typed dicts it
    holds too. A key ``typed`` lacks is an error: a result carries what the contract says, and nothing else."""
    hints = _hints(typed)
    return {wire(key): _sent(hints[key], item) for key, item in value.items()}


def _sent(hint, value):
    """A value of type ``hint`` on the wire: a typed dict's keys renamed, in lists and dicts of them too."""
    if value is None:
        return None
    if typing.is_typeddict(hint):
        return on_wire(hint, value)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is list:
        return [_sent(args[0], item) for item in value]
    if origin is dict:
        return {key: _sent(args[1], item) for key, item in value.items()}
    if origin in (typing.Union, types.UnionType):
        held = [arg for arg in args if typing.is_typeddict(arg) or typing.get_origin(arg) in (list, dict)]
        return _sent(held[0], value) if len(held) == 1 else value
    return value


def described() -> dict[str, Any]:
    """The contract as plain data, for the JavaScript module the build writes."""
    requests = {wire(kind): {"kind": kind, "model": cls.model,
                             "fields": {wire(f.name): f.default for f in dataclasses.fields(cls)}}
                for kind, cls in REQUESTS.items()}
    return {"requests": requests, "modes": list(MODES), "timing": list(TIMING), "errors": ERRORS,
            "results": {wire(kind): sorted(keys(typed)) for kind, typed in RESULTS.items()},
            "event": sorted(keys(PassEvent))}


# ---------------------------------------------------------------------------------------------------------------------
# The runtime's messages. No page asks for these: they are what crosses inside the runtime (runtime/), between the
# page's client (client.js), its worker (worker.js), the model's worker (model-worker.js) and Python, described here
# once so that both sides read them alike: hooks/contract.py writes them into contract.js with the rest (MESSAGES), and
# make lint's type check (hooks/typecheck.py) reads the runtime against them. On the wire as written here, in the
# results' casing (camelCase). The reports a check or a benchmark asks for (harness.js's positionIndependence and
# passTimes, the worker's bench) are not among them: they keep model_export/check.py's names, which the native, Node
# and the peers' reports share key for key.
# ---------------------------------------------------------------------------------------------------------------------

Float32 = Annotated[list[float], "Float32Array"]  # a typed array in JavaScript (moved between workers, not copied)
Bytes = Annotated[list[int], "Uint8Array"]
Session = int | str  # an OnnxBridge's own session ids, or the names a RemoteBridge gives them


class BridgePass(TypedDict):
    """One pass, as the OnnxBridge answers ``run`` (bridge.js) and ``backends/browser.py``'s session reads it: the
    predictions of the rows asked for, row by row, flat."""

    argmax: list[int]
    topkIds: list[int]  # k a row
    topkProbs: list[float]
    k: int
    seconds: float  # onnxruntime-web's run
    kvSeconds: float  # the KV cache's handling: the feeds built, the present tensors kept, the rollbacks since
    vocab: NotRequired[int]  # with the logits: a row's width
    logits: NotRequired[Float32]  # when asked for
    hiddenSize: NotRequired[int]  # with the features: a row's width
    hidden: NotRequired[Float32]  # the model's features at the pass's last rows, when asked for (what a draft reads)


class BridgeDraftStep(TypedDict):
    """One small pass of the draft model, as the DraftBridge answers ``step`` and ``backends/browser.py``'s
    BrowserDraft reads it: the last row's feature and token; when sampling, its q over its most likely tokens."""

    feature: Float32
    token: int
    seconds: float  # onnxruntime-web's run
    confidence: float  # the draft's probability of ``token`` (its graph's ``confidence`` output)
    ids: NotRequired[list[int]]
    probs: NotRequired[list[float]]


class ErrorFields(TypedDict):
    """An error as it crosses a worker (an OnepassError's fields, errors.js). The model's worker sends an error
    without a ``code`` as it is (the worker beside it matches its words); the page's worker always gives one."""

    code: NotRequired[str]  # one of ERRORS
    message: str
    retryable: NotRequired[bool]
    detail: NotRequired[str]  # the raw text behind the message: a traceback, onnxruntime's words


# What the page's worker (worker.js) posts to the page (client.js). A reply carries the id of its request.

class Progress(TypedDict):
    """The model's download: ``loaded`` of ``total`` bytes; ``elsewhere``: another tab downloads what this one needs."""

    id: int
    type: Literal["progress"]
    loaded: int
    total: int
    elsewhere: bool


class Started(TypedDict):
    """Python accepted the request: its text is ``tokens`` tokens, and its first pass begins."""

    id: int
    type: Literal["started"]
    tokens: int


class PassPosted(PassEvent):
    """A generation's pass; ``sent``: when it was posted, in ms (``performance.timeOrigin + performance.now()``), on
    the page's clock by the time the page's listeners hear it (the client converts it from the worker's: ``Pong``)."""

    id: int
    type: Literal["pass"]
    sent: float


class Done(TypedDict):
    id: int
    type: Literal["done"]
    result: Any  # the request's: a contract request's result (RESULTS), or a runtime request's own answer


class Failed(TypedDict):
    id: int
    type: Literal["error"]
    error: ErrorFields


class Pong(TypedDict):
    """The answer to a ping: the worker's event loop is free. ``clock``: the worker's clock as it answered, in ms
    (``performance.timeOrigin + performance.now()``), which Chromium sets apart from the page's (w3c/hr-time#115)."""

    type: Literal["pong"]
    clock: float


class Fatal(TypedDict):
    """Python failed for good: the page replaces the worker."""

    type: Literal["fatal"]
    error: ErrorFields


class ModelTimings(TypedDict):
    """The model's worker's phases of a load, in seconds from its request."""

    ortStart: float  # onnxruntime-web's module started (its first chunks wait for it)
    modelBytes: float  # every file of the model here, from the browser's store or the network
    onnxSession: float  # the session made (this phase alone)
    draftSession: NotRequired[float]  # the draft model's session made (this phase alone), when the site ships one


class LoadTimings(ModelTimings):
    """A load's phases, in seconds: the model's worker's, and the page's worker's own."""

    tokenizer: float  # the tokenizer built (this phase alone)
    pyodide: float  # Python started (this phase alone, beside the model's)
    pyodideWait: float  # what the load still waited for Python once the model's session was made
    total: float  # from the request to the loaded runtime


class LoadInfo(TypedDict):
    """What a loaded model is, as the page's worker answers ``load`` (``Runtime.info``): what the model card shows."""

    model: str
    identity: str
    bytes: int
    quantisation: str
    threads: int
    crossOriginIsolated: bool
    pythonSnapshot: bool  # Python started from the build's snapshot
    modelFromHeap: bool  # the model's bytes went straight into ort's heap (ort-module.js)
    chunksKeptApart: int  # downloaded chunks written on the store worker's thread
    modelKept: bool  # every chunk is in this browser's store, for the next visit
    draft: dict[str, Any] | None  # the draft model the site ships (its draft.json), or None ...
    draftUnavailable: str | None  # ... and why, if the build said
    versions: dict[str, str]
    limits: dict[str, Any]  # limits.py's
    timings: LoadTimings


# What the page's worker asks the model's worker (model-worker.js): a request with an id is answered with Done or
# Failed; one without (open, rollback, closeAll, cancel) is handled in order, unanswered (cancel: at once).

class LoadModel(TypedDict):
    id: int
    type: Literal["load"]
    threads: int | None  # None: the worker's choice


class OpenSession(TypedDict):
    type: Literal["open"]
    session: Session
    kvCache: bool


class RunPass(TypedDict):
    """The bridge's ``run``: answered with a BridgePass."""

    id: int
    type: Literal["run"]
    session: Session
    newIds: list[int]
    start: int
    wantLogits: bool
    rowsFrom: int
    hidden: int


class RollBack(TypedDict):
    type: Literal["rollback"]
    session: Session
    length: int


class CloseAll(TypedDict):
    type: Literal["closeAll"]


class DraftStepRequest(TypedDict):
    """The draft model's ``step``: answered with a BridgeDraftStep."""

    id: int
    type: Literal["draftStep"]
    features: Float32
    tokens: list[int]
    sampling: bool


class MeasurePasses(TypedDict):
    """Step 3's measurement: answered with the median ms of a pass over the first n ids, by n."""

    id: int
    type: Literal["measure"]
    ids: list[int]
    sizes: list[int]
    runs: int
    warmup: int


class PassTimes(TypedDict):
    """The benchmark's pass times (harness.js's ``passTimes``)."""

    id: int
    type: Literal["passTimes"]
    ids: list[int]
    options: dict[str, int]


class CheckPositions(TypedDict):
    """harness.js's ``positionIndependence``, over ``model_export/check.py``'s cases."""

    id: int
    type: Literal["positionIndependence"]
    ids: list[int]
    cases: list[dict[str, Any]]


class CancelPasses(TypedDict):
    type: Literal["cancel"]
    cancelled: bool


class WriteChunk(TypedDict):
    """What loader.js asks its store worker (store-worker.js): keep a chunk's bytes as the file ``name``; answered
    with whether it was written."""

    id: int
    type: Literal["write"]
    name: str
    bytes: Bytes


class ModelFile(TypedDict):
    """A file of the model the page's worker needs itself (the tokenizer's), posted as soon as it is here."""

    id: int
    type: Literal["file"]
    name: str
    bytes: Bytes


class ModelLoaded(TypedDict):
    """The model's worker's answer to ``load``."""

    manifest: dict[str, Any]  # the export's manifest.json
    threads: int
    ort: str  # onnxruntime-web's version
    modelFromHeap: bool
    chunksKeptApart: int
    modelKept: bool
    draft: bool  # the draft model's session was made (the manifest has a draft)
    draftAnswers: str | None  # the text of the draft's table of the model's answers
    timings: ModelTimings


WorkerReply = Progress | Started | PassPosted | Done | Failed | Pong | Fatal
RunEvent = Progress | Started | PassPosted  # what a request's onEvent hears before its answer
ModelRequest = LoadModel | OpenSession | RunPass | RollBack | CloseAll | DraftStepRequest | MeasurePasses | PassTimes \
    | CheckPositions | CancelPasses
ModelReply = Progress | ModelFile | Done | Failed  # the store worker's too: Done or Failed

# Every message type by its name in contract.js (a typed dict's own, or that of a union of them).
MESSAGES: dict[str, Any] = {"BridgePass": BridgePass, "BridgeDraftStep": BridgeDraftStep, "LoadInfo": LoadInfo,
                            "ModelLoaded": ModelLoaded, "WorkerReply": WorkerReply, "RunEvent": RunEvent,
                            "ModelRequest": ModelRequest, "ModelReply": ModelReply, "WriteChunk": WriteChunk}
