"""How much one request in a browser tab may ask for, checked before the first pass.

A pass's memory grows with the tokens it reads: the model writes a row of
logits (one float per vocabulary entry, about 600 KB for Qwen2.5) for every
position, and onnxruntime-web lives in a 32-bit WebAssembly heap of at most
4 GB. A pass over about 3,000 tokens fails there with ``std::bad_alloc``
(measured with the tiny model, whose logits are as wide as the real one's),
and a 1,024-token pass takes about 30 s on the real model. So the text, the
new tokens, and therefore every pass, have a ceiling, and a request over it is
refused with a message in plain words instead of failing inside the model.

With the KV cache off a pass re-reads the whole text, so the largest pass of a
run is the prompt plus what was written plus the draft; ``drafted.cut_draft``
keeps that within ``MAX_PROMPT_TOKENS + MAX_NEW_TOKENS`` = ``MAX_PASS_TOKENS``.
"""

from .contract import Refusal
from .speedup import MAX_GAMMA

MAX_PROMPT_TOKENS = 1024  # the lesson's texts are a few dozen tokens
MAX_NEW_TOKENS = 256  # the longest panel run writes 96
MAX_PASS_TOKENS = MAX_PROMPT_TOKENS + MAX_NEW_TOKENS
# A Qwen2.5 token is rarely longer than a few dozen characters: a longer text is over the token limit anyway,
# and is refused before the tokenizer spends seconds on it.
MAX_CHARACTERS = 32 * MAX_PASS_TOKENS
MAX_MEASURE_RUNS = 20  # step 3's measurement: a median of a few runs is enough
MAX_DRAWS = 100_000  # step 6's sampling: 10,000 draws take about a second in Pyodide
# Step 6's whole-run test: a few thousand runs of a few tokens each, on the tiny model in a test or on the real one
# in a reader's tab (where each token costs a pass: a thousand runs of three tokens take minutes there).
MAX_RUNS = 20_000
MAX_RUN_TOKENS = 8
MAX_TEMPERATURE = 10.0  # far flatter than any chat setting; above it top-k sampling is all but uniform
# The reader's proposer, per logical line. CPython's parser, reporting the syntax error in a long run of names
# ("many words many words ..."), recurses once per name; in a Chromium worker that overflowed the JavaScript stack
# (a RangeError, not Python's RecursionError, which leaves Pyodide unusable) at about 1,600 names, not at 1,200;
# 6,000 numbers or a list of 3,000 ids did not. Measured on Pyodide 314.0.7. A proposer's line has a few names.
MAX_LINE_NAMES = 500


class InputError(Refusal, ValueError):
    """A request this page does not run; the message says why, in words for the reader."""

    code = "input"


def check_prompt(prompt: list[int]) -> None:
    if not prompt:
        raise InputError("the text is empty: type a few words first")
    if len(prompt) > MAX_PROMPT_TOKENS:
        raise InputError(f"the text is {len(prompt)} tokens long; this page accepts up to {MAX_PROMPT_TOKENS}, "
                         "so shorten it")


def check_characters(text, what: str = "text", kind: str = "text") -> str:
    """``text`` if it is a string of at most ``MAX_CHARACTERS``: checked by its length, before it is tokenized."""
    if not isinstance(text, str):
        raise InputError(f"the {what} must be {kind}")
    if len(text) > MAX_CHARACTERS:
        raise InputError(f"the {what} is {len(text):,} characters long; this page accepts up to {MAX_CHARACTERS:,}, "
                         "so shorten it")
    return text


def check_max_new(max_new) -> int:
    return whole_number(max_new, 1, MAX_NEW_TOKENS, "the number of new tokens")


def check_guess(prompt: list[int], guess: list[int]) -> None:
    """Step 4 checks the whole guess in one pass over the text and the guess."""
    check_prompt(prompt)
    if not guess:
        raise InputError("the guess is empty: type the words you expect to come next")
    if len(prompt) + len(guess) > MAX_PASS_TOKENS:
        raise InputError(f"the text and the guess are {len(prompt) + len(guess)} tokens together; one pass here "
                         f"reads up to {MAX_PASS_TOKENS}, so shorten the guess")


def check_measure(ids: list[int], sizes, runs) -> tuple[list[int], int]:
    """Step 3's measurement: ``sizes`` (each a pass's tokens) and ``runs`` per size, within the limits."""
    if not ids:
        raise InputError("the text is empty: type a few words to measure a pass over them")
    if not (isinstance(sizes, list) and sizes and all(is_whole(n, 1, MAX_PROMPT_TOKENS) for n in sizes)):
        raise InputError(f"each size must be a whole number of tokens from 1 to {MAX_PROMPT_TOKENS}")
    if not is_whole(runs, 1, MAX_MEASURE_RUNS):
        raise InputError(f"runs must be a whole number from 1 to {MAX_MEASURE_RUNS}")
    return [int(n) for n in sizes], int(runs)


def check_draws(draws) -> int:
    return whole_number(draws, 1, MAX_DRAWS, "the number of draws")


def check_gamma(gamma) -> int:
    """The draft model's draft length: the speed-up chart's lengths (speedup.py)."""
    return whole_number(gamma, 1, MAX_GAMMA, "the draft length")


def check_runs(runs) -> int:
    return whole_number(runs, 1, MAX_RUNS, "the number of runs")


def check_run_tokens(tokens) -> int:
    return whole_number(tokens, 1, MAX_RUN_TOKENS, "the tokens per run")


def check_temperature(temperature) -> float:
    number = isinstance(temperature, (int, float)) and not isinstance(temperature, bool)
    if not (number and 0 < temperature <= MAX_TEMPERATURE):
        raise InputError(f"the temperature must be a number above 0 and at most {MAX_TEMPERATURE:g}, not {temperature!r}")
    return float(temperature)


def seed_of(value) -> int | float:
    """A request's seed (the random draft's, the sampling's): a number, else 0."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value  # NaN is no seed
    return value if number and value else 0


def whole_number(value, low: int, high: int, what: str) -> int:
    """``value`` as an int from ``low`` to ``high``, or an InputError naming ``what`` (a page may send any JSON value)."""
    if not is_whole(value, low, high):
        raise InputError(f"{what} must be a whole number from {low:,} to {high:,}, not {value!r}")
    return int(value)


def is_whole(value, low: int, high: int) -> bool:
    # bool is an int in Python, and a whole float such as 2.0 is an ordinary number from JavaScript.
    whole = not isinstance(value, bool) and (isinstance(value, int) or isinstance(value, float) and value.is_integer())
    return whole and low <= value <= high


def as_dict() -> dict:
    """The limits, for the worker (a pass's size, in step 3's measurement) and the pages."""
    return {"prompt_tokens": MAX_PROMPT_TOKENS, "new_tokens": MAX_NEW_TOKENS, "pass_tokens": MAX_PASS_TOKENS,
            "characters": MAX_CHARACTERS, "draws": MAX_DRAWS, "measure_runs": MAX_MEASURE_RUNS, "gamma": MAX_GAMMA,
            "runs": MAX_RUNS, "run_tokens": MAX_RUN_TOKENS}
