"""Sampled generation, plain and drafted: the speculative sampling rule run end to end.

Sampling here is top-k sampling: each token is drawn from the model's k most likely next tokens (the export's
``top_k``), their probabilities raised to 1 / temperature and renormalised. That distribution is the target p
of every position. Plain sampling draws one token per pass from it. Drafted sampling lets the draft model draw
gamma tokens from its own q (its most likely tokens, tempered the same way), then one pass of the target gives
p after the text and after each drafted token, and the rule of ``sampling.py`` keeps or replaces them in
order: accept x if p(x) >= q(x), else with probability p(x) / q(x); at the first rejection draw from the
normalised remainder max(0, p - q) and stop; if every drafted token is kept, draw one more from the last p.
Each kept token then follows p exactly, given the text before it, so whole drafted runs follow the same
distribution as plain ones: ``tests/test_onepass_sampled*.py`` test that over the first tokens of many runs,
and that a wrong rule (always accept) fails the same test.

Randomness is passed in (``rng``), as everywhere in the lesson's code.
"""

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from .contract import SampleRuns
from .draft_model import ModelDraft
from .drafted import cut_draft
from .greedy import check_request
from .policy import Policy
from .sampling import accept, draw, pick, remainder, tempered
from .seam import Model, Pass, Session
from .trace import PassRecord, Run
from .verification import until_end, verifying_pass

Rule = Callable[[float, float, float], bool]  # p(x), q(x), a uniform draw -> keep x


def replacement(p: dict[int, float], q: dict[int, float], u: float) -> int:
    """The rule's draw after a rejection: from max(0, p - q), normalised, over every id either gives."""
    ids = sorted(set(p) | set(q))
    return ids[draw(remainder([p.get(i, 0.0) for i in ids], [q.get(i, 0.0) for i in ids]), u)]


@dataclass
class Opened:
    """The prompt's pass and the session whose cache holds the prompt: what every plain run after it starts from."""
    session: Session
    result: Pass


async def open_prompt(model: Model, prompt: list[int]) -> Opened:
    session = model.session()
    return Opened(session, await session.forward(list(prompt), rows_from=len(prompt) - 1))


async def sample(model: Model, prompt: list[int], max_new: int, temperature: float, rng: random.Random,
                 opened: Opened | None = None) -> Run:
    """Plain sampling: one pass, one token drawn from p, repeat. ``opened``: the prompt's pass, made once for many
    runs (``open_prompt``): this run draws its first token from that pass's p and goes on in its session, rolled back
    to the prompt (exact: a position's prediction does not depend on what else is in the pass)."""
    check_request(prompt, max_new)
    session = model.session() if opened is None else opened.session
    if opened is not None:
        session.rollback(len(prompt))
    text, passes, stop = list(prompt), [], "max_new"
    while len(text) - len(prompt) < max_new:
        if opened is not None and not passes:
            start, fed, result = 0, list(prompt), opened.result
        else:
            start, fed = session.length, text[session.length:]
            result = await session.forward(fed, rows_from=len(fed) - 1)
        token = pick(tempered(result.topk_ids[-1], result.topk_probs[-1], temperature), rng.random())
        passes.append(PassRecord(start=start, fed=fed, draft=[], predicted=result.argmax, accepted=0, token=token,
                                 added=[token], seconds=result.seconds))
        text.append(token)
        if token in model.facts.eos_ids:
            stop = "eos"
            break
    return Run(mode="sample", kv_cache=True, prompt=list(prompt), tokens=text[len(prompt):], stop=stop, passes=passes)


async def sample_drafted(model: Model, prompt: list[int], propose: ModelDraft, max_new: int, temperature: float,
                         rng: random.Random, rule: Rule = accept, clock: Callable[[], float] = time.perf_counter) -> Run:
    """Drafted sampling with a draft model: its drawn tokens kept or replaced by the speculative rule
    (``rule``: the lesson's, unless a test hands in a wrong one). A draft with a policy hears each round, timed by
    ``clock``: how long a round drafts (nothing, or until the draft is unsure) depends only on earlier rounds and
    the draft's own q, never on this round's p, so each kept token still follows p."""
    check_request(prompt, max_new)
    eos_ids = model.facts.eos_ids
    session = model.session()
    text, passes, stop = list(prompt), [], "max_new"
    while len(text) - len(prompt) < max_new:
        began = clock()
        room = max_new - (len(text) - len(prompt))
        drafts = await propose.sample(text, temperature, rng)
        draft = cut_draft([token for token, _ in drafts], room, eos_ids)
        start, fed, result = await verifying_pass(session, text, draft, propose)
        p = [tempered(ids, probs, temperature) for ids, probs in zip(result.topk_ids, result.topk_probs)]
        kept = []
        for j, token in enumerate(draft):
            q = drafts[j][1]
            if rule(p[j].get(token, 0.0), q[token], rng.random()):
                kept.append(token)
                continue
            kept.append(replacement(p[j], q, rng.random()))
            break
        else:
            kept.append(pick(p[len(draft)], rng.random()))  # every drafted token kept: one more from the last p
        accepted = len(kept) - 1
        session.rollback(len(text) + accepted)
        added = until_end(kept, eos_ids)
        record = PassRecord(start=start, fed=fed, draft=draft, predicted=result.argmax, accepted=accepted,
                            token=kept[-1], added=added, seconds=result.seconds)
        passes.append(record)
        propose.heard(record, clock() - began)
        text += added
        if added[-1] in eos_ids:
            stop = "eos"
            break
    return Run(mode="sample-draft", kv_cache=True, prompt=list(prompt), tokens=text[len(prompt):], stop=stop,
               passes=passes)


async def whole_runs(model: Model, prompt: list[int], runs: int, max_new: int, temperature: float, rng: random.Random,
                     draft=None, gamma: int = SampleRuns.gamma, rule: Rule = accept, totals: Counter | None = None,
                     policy: Callable[[], Policy] | None = None) -> Counter:
    """The whole-run test's sample: the tokens of ``runs`` sampled runs after ``prompt``, tallied, plain or (with
    ``draft``, a ``draft_model.DraftModel``) drafted ``gamma`` tokens at a time under ``rule`` (up to ``gamma``, as
    a fresh ``policy()`` decides each run, if given). Two tallies of the same distribution pass
    ``chisquare.two_samples``. ``totals``, if given, counts the drafted runs' small passes, accepted and drafted
    tokens."""
    counts = Counter()
    # Plain runs share the prompt's pass (a third of a three-token run's passes). A drafted run's first pass holds
    # its own draft, so it makes its own.
    check_request(prompt, max_new)
    opened = await open_prompt(model, prompt) if draft is None and runs else None
    for _ in range(runs):
        if draft is None:
            run = await sample(model, prompt, max_new, temperature, rng, opened)
        else:
            propose = ModelDraft(draft, gamma, policy=policy() if policy else None)
            run = await sample_drafted(model, prompt, propose, max_new, temperature, rng, rule)
            if totals is not None:
                totals.update(passes=propose.passes, accepted=sum(r.accepted for r in run.passes),
                              drafted=sum(len(r.draft) for r in run.passes))
        counts[tuple(run.tokens)] += 1
    return counts
