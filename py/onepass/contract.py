"""The contract between the pages and Python: every request a page may make, what it gets back, and how it fails.

Written once, here. The build writes it into the site as a JavaScript module
(``hooks/panels.py``: ``contract.js``, with JSDoc types), which the pages build
their requests with and the runtime passes on untouched; ``panels.py`` answers
them. So a request has one shape, in one place:

- ``REQUESTS``: one dataclass per kind of request, its fields with their
  defaults. A field whose default is ``None`` must be given; what a value may
  be is checked by ``limits.py`` when the request runs. On the wire (JSON, and
  in JavaScript) a field's name is its camelCase (``kv_cache`` is ``kvCache``),
  and a kind's too (``sample_next`` is ``sampleNext``). A field the contract
  lacks is refused, on both sides.
- ``RESULTS``: what each kind answers with (and ``PassEvent``, what a
  generation posts after each pass), as typed dicts.
- ``Refusal``: the one exception a request is refused with, with its ``code``;
  ``ERRORS`` lists every code a page may see, from Python or from the runtime.
- ``TIMING``: the parts a generated pass's time is split into (``backends/clock.py``).

Adding a kind of request is one place: its dataclass (and result) here, its
entry point in ``panels.py``, named after it.
"""

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NotRequired, TypedDict, get_type_hints

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
    # draft model asked only while it pays (else a plain pass), no further after a token it is unsure of (gamma is
    # then the most it drafts). False, the default until step 6 asks for it: every round as before, gamma tokens.
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
    answers: NotRequired[bool]  # ... from the model's own earlier answers (answers.py), not from the text (``match``)
    skipped: NotRequired[bool]  # the draft modes': the run's estimate said the draft model would not pay: a plain pass


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
    answers: int  # of the copies, those from the model's own earlier answers (answers.py; 0 where none are shipped)
    adaptive: bool  # the request's: rounds weighed by a policy
    rounds: dict[str, int]  # rounds by what they checked: "draft", "copy", "answers", "skipped" (a plain pass), "none"
    stopped: int  # rounds the draft model drafted fewer than gamma tokens in, unsure of the last
    policy: PolicyFigures | None  # adaptive runs' decisions and estimates (None: not adaptive)


class Baseline(TypedDict):
    """One at a time on the same text, run after the drafted run in the same request."""

    tokens: list[int]
    totals: Totals
    wall_seconds: float
    identical: bool  # its tokens equal the drafted run's
    speedup: float  # its wall-clock seconds over the drafted run's: the measured speed-up


class GenerateResult(TypedDict):
    mode: str
    kv_cache: bool
    prompt: list[int]
    tokens: list[int]
    stop: str  # "eos" or "max_new"
    passes: list[PassRow]
    totals: Totals
    proposer_seconds: float
    max_draft: int
    text: str
    promptText: str
    labels: dict[str, str]  # every id of the run, by its text
    wall_seconds: float  # the run from its first pass to its last, measured in Python where it runs
    draft: NotRequired[DraftFigures]  # the draft modes'
    baseline: NotRequired[Baseline]  # when the request asked for it


class VerifyResult(TypedDict):
    pass_: PassRow
    prompt: list[int]
    labels: dict[str, str]
    text: str


class PredictResult(TypedDict):
    ids: list[int]
    argmax: list[int]
    topk_ids: list[list[int]]
    topk_probs: list[list[float]]
    seconds: float
    labels: dict[str, str]


class MeasureResult(TypedDict):
    ms: dict[str, float]  # by size
    runs: int
    threads: int


class Verdict(TypedDict):
    statistic: float
    dof: int
    p_value: float
    level: float
    consistent: bool


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
    plain: dict[str, int]  # each run's first tokens (ids joined by commas) -> how many runs wrote them
    drafted: dict[str, int]
    runs: int
    rule: str
    draft_passes: int
    accepted: int  # drafted tokens kept as drafted, over every drafted run
    drafted_tokens: int
    verdict: Verdict  # the two samples, one distribution? (chisquare.two_samples)
    seconds: float


RESULTS: dict[str, type] = {"generate": GenerateResult, "verify": VerifyResult, "predict": PredictResult,
                            "measure": MeasureResult, "sample": SampleResult, "sample_next": SampleNextResult,
                            "sample_runs": SampleRunsResult}


def keys(typed: type) -> set[str]:
    """A typed dict's keys as they are sent (``pass_`` is ``pass``, a word Python keeps for itself)."""
    return {name.removesuffix("_") for name in get_type_hints(typed)}


def described() -> dict[str, Any]:
    """The contract as plain data, for the JavaScript module the build writes."""
    requests = {wire(kind): {"kind": kind, "model": cls.model,
                             "fields": {wire(f.name): f.default for f in dataclasses.fields(cls)}}
                for kind, cls in REQUESTS.items()}
    return {"requests": requests, "modes": list(MODES), "timing": list(TIMING), "errors": ERRORS,
            "results": {wire(kind): sorted(keys(typed)) for kind, typed in RESULTS.items()},
            "event": sorted(keys(PassEvent))}
