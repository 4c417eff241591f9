"""Drafted generation: propose several tokens, check them all in one pass, keep what agrees.

Any proposer fits — prompt lookup, the reader's guess, a random or a wrong
one — because verification keeps only what greedy decoding would have written:
the text is identical to ``greedy``'s, and a pass never yields fewer tokens
than greedy's one. What the proposer changes is only the number of passes.

References: Leviathan, Kalman & Matias (2023) and Chen et al., "Accelerating
Large Language Model Decoding with Speculative Sampling" (2023); gpt-fast's
``speculative_decode``.
"""

import inspect
import time
from collections.abc import Awaitable, Callable

from .greedy import check_request
from .seam import Model
from .trace import PassRecord, Run
from .verification import check, until_end

# The text so far -> proposed next tokens ([] for no guess); a draft model's proposals are awaited.
Proposer = Callable[[list[int]], list[int] | Awaitable[list[int]]]


async def drafted(model: Model, prompt: list[int], propose: Proposer, max_new: int, *, kv_cache: bool = True,
                  mode: str = "drafted", on_pass: Callable[[PassRecord], None] | None = None,
                  clock: Callable[[], float] = time.perf_counter) -> Run:
    """Generate up to ``max_new`` tokens after ``prompt`` with drafts from ``propose``; ``clock`` times each round
    for a proposer that weighs its own cost."""
    check_request(prompt, max_new)
    eos_ids = model.facts.eos_ids
    session = model.session(kv_cache=kv_cache)
    # A draft model reads the target's features from each pass (draft_model.py); other proposers read the text.
    features = propose if hasattr(propose, "keep") else None
    # One that weighs whether drafting pays (policy.py) hears each round: what it added, and its whole wall-clock time.
    hears = propose if hasattr(propose, "heard") else None
    text, passes, stop = list(prompt), [], "max_new"
    while len(text) - len(prompt) < max_new:
        began = clock()
        room = max_new - (len(text) - len(prompt))
        draft = propose(text)
        if inspect.isawaitable(draft):
            draft = await draft
        draft = cut_draft(draft, room, eos_ids)
        verdict, record = await check(session, text, draft, eos_ids, features)
        # The KV cache now holds the rejected draft tokens too: forget them. The model's own token is not
        # in the cache yet; it is fed with the next pass, together with the next draft.
        session.rollback(len(text) + len(verdict.accepted))
        passes.append(record)
        if on_pass:
            on_pass(record)
        if hears:
            hears.heard(record, clock() - began)
        text += record.added
        if record.added[-1] in eos_ids:
            stop = "eos"
            break
    return Run(mode=mode, kv_cache=kv_cache, prompt=list(prompt), tokens=text[len(prompt):], stop=stop,
               passes=passes)


def cut_draft(draft: list[int], room: int, eos_ids: frozenset[int]) -> list[int]:
    """The part of ``draft`` worth checking when ``room`` more tokens may be written."""
    # A pass always adds the model's own token after the accepted ones, so at most room - 1 draft tokens can be kept.
    draft = draft[:room - 1]
    # The text ends at an end-of-text id: tokens drafted after it could never be kept.
    return until_end(draft, eos_ids)
