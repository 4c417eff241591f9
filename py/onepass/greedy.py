"""Ordinary greedy generation: one pass, one token, repeat.

Each pass scores every possible next token after the text so far; the most
likely one is appended, and only then can the next pass start. Pass and token
counters rise in lockstep. This is the reference that every drafted run must
reproduce token for token (the oracle of the tests, as in nanoGPT's
``generate`` or gpt-fast's ``decode_n_tokens``).
"""

from collections.abc import Callable

from .seam import Model
from .trace import PassRecord, Run


async def greedy(model: Model, prompt: list[int], max_new: int, *, kv_cache: bool = True,
                 on_pass: Callable[[PassRecord], None] | None = None) -> Run:
    """Generate up to ``max_new`` tokens after ``prompt``, stopping after an end-of-text id."""
    check_request(prompt, max_new)
    session = model.session(kv_cache=kv_cache)
    text, passes, stop = list(prompt), [], "max_new"
    while len(text) - len(prompt) < max_new:
        start, fed = session.length, text[session.length:]
        # The row after the last token is the prediction of the next one; the other rows are not computed.
        result = await session.forward(fed, rows_from=len(fed) - 1)
        token = result.argmax[-1]
        record = PassRecord(start=start, fed=fed, draft=[], predicted=[token], accepted=0, token=token, added=[token],
                            seconds=result.seconds)
        passes.append(record)
        if on_pass:
            on_pass(record)
        text.append(token)
        if token in model.facts.eos_ids:
            stop = "eos"
            break
    return Run(mode="greedy", kv_cache=kv_cache, prompt=list(prompt), tokens=text[len(prompt):], stop=stop,
               passes=passes)


def check_request(prompt: list[int], max_new: int) -> None:
    if not prompt:
        raise ValueError("the prompt is empty: a pass needs at least one token to predict from")
    if max_new < 1:
        raise ValueError(f"max_new must be at least 1, got {max_new}")
