"""A generate request, run: greedy or drafted, each pass handed on as it is made, the whole run returned.

The one orchestration of a generation, for the pages (``entry.generate``, in
the worker over ``BrowserModel``), the build's recorded runs (``hooks/traces.py``,
natively) and the command line (``cli.py``'s ``run``): the request is checked
against ``limits.py`` before the first pass, the proposer built by name
(``proposers.py``), the run timed on the wall clock and, when asked, compared
with one at a time on the same text.
"""

import random
import time
import weakref
from collections.abc import Callable

from . import contract
from .contract import DRAFTING, MODES, Baseline, GenerateResult, PassEvent, Refusal
from .draft_figures import draft_figures
from .draft_model import ModelDraft
from .drafted import Proposer, drafted
from .examples import chat
from .greedy import greedy
from .limits import InputError, check_characters, check_gamma, check_max_new, check_prompt, seed_of
from .lookup import MAX_DRAFT
from .proposers import Context, Timed, proposer
from .tokens import Stream, Tokenizer, encoded, labels, pass_labels
from .trace import PassRecord, Run

# Before a model's first timed comparison, a few tokens of each run, untimed and not shown (``warm_up``).
WARM_UP_TOKENS = 8
_warmed: "weakref.WeakSet" = weakref.WeakSet()


async def generate(model, tokenizer: Tokenizer, asked: contract.Generate, on_pass: Callable[[PassEvent], None],
                   on_start: Callable[[int], None] | None = None) -> GenerateResult:
    """Run ``asked``; each pass's event goes to ``on_pass``, and the whole run comes back.

    An event is a ``contract.PassEvent``: the pass record (in prompt lookup with
    the match it copied from), the text it completed, its tokens' labels.
    ``on_start`` hears the prompt's length once the request is accepted (the
    page's clock starts then).
    """
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
    if draft_model is not None and draft_model.answers is not None:
        draft_model.answers.ready()  # read on the first drafted request, before the page's clock starts (on_start)
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
        result["baseline"] = Baseline(tokens=compared.tokens, totals=compared.totals(), wall_seconds=again.wall(),
                                      identical=compared.tokens == written.tokens,
                                      speedup=ratio(again.wall(after_first=True), report.wall(after_first=True)))
    if mode in DRAFTING:
        result["draft"] = draft_figures(propose, written, compared)
    return result


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


class Reporter:
    """What hands each pass on as its event: the record (with the match copied from, the draft model's small passes
    before it, and the pass's timing), the text it completed, its labels. It also keeps the run's wall clock: from
    its start, and from the end of its first pass (the one that reads the text); ``baseline`` marks the events of
    the one-at-a-time run a request compares with, which cost the same to hand on."""

    def __init__(self, tokenizer: Tokenizer, on_pass: Callable[[PassEvent], None], matches: list | None, clock,
                 draft: ModelDraft | None = None, baseline: bool = False):
        self.tokenizer, self.on_pass, self.matches, self.clock = tokenizer, on_pass, matches, clock
        self.draft, self.baseline = draft, baseline
        self.stream = Stream(tokenizer)
        self.drafted = (0, 0.0)  # the draft's passes and seconds when the last pass was handed on
        self.began = time.perf_counter()
        self.first = self.last = None

    def __call__(self, record: PassRecord) -> None:
        row = record.as_row()
        if self.matches is not None:
            row["match"] = self.matches[-1]
        if self.draft is not None:
            passes, seconds = self.draft.passes, self.draft.seconds
            row["draft_passes"], row["draft_seconds"] = passes - self.drafted[0], seconds - self.drafted[1]
            self.drafted = (passes, seconds)
            row["skipped"] = self.draft.kinds[-1] == "skipped"
            row["withheld"] = self.draft.kinds[-1] == "withheld"
            if self.draft.copy_first:
                kind = self.draft.kinds[-1]
                row["copied"] = kind in ("copy", "answers")
                if kind == "copy":
                    row["match"] = self.draft.match  # where it copied from, drawn as step 5 draws it
                elif kind == "answers":
                    row["from_answers"] = True
        # The pass's text and labels are part of it: their crossings to the tokenizer are the bridge's (clock.py).
        event = PassEvent(pass_=row, text=self.stream.push(record.added), labels=pass_labels(self.tokenizer, row))
        if self.baseline:
            event["baseline"] = True
        if self.clock:
            row["timing"] = self.clock.lap()
        self.on_pass(event)
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


def finished(tokenizer: Tokenizer, run: Run, text: str, propose, wall: float = 0.0) -> GenerateResult:
    """The run as the page draws it: the record, the drafting's cost, the text written, the prompt shown back, labels,
    and its wall-clock seconds."""
    ids = run.prompt + run.tokens + [t for record in run.passes for t in record.draft + record.predicted]
    return GenerateResult(**run.as_dict(), proposer_seconds=propose.seconds if propose else 0.0, max_draft=MAX_DRAFT,
                          text=tokenizer.decode(run.tokens), prompt_text=text, labels=labels(tokenizer, ids),
                          wall_seconds=wall)
