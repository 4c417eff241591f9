"""Every request the page can send is bounded before its first pass, and refused in plain words over a limit.

The entry points (``entry.py``) run here natively, over a byte
tokenizer (one id per UTF-8 byte) and a counting model: a pure-Python stand-in behind the seam whose next token is a
fixed function of the text, and which records how many tokens each pass read.
It keeps the maximal requests cheap (a real 1,280-token pass writes 780 MB of
logits) while drafted == greedy still has to hold on it.
"""

import asyncio
import json

import pytest

from onepass.drafted import drafted
from onepass.editable import check_draft, compile_proposer
from onepass.greedy import greedy
from onepass.limits import MAX_CHARACTERS, MAX_NEW_TOKENS, MAX_PASS_TOKENS, MAX_PROMPT_TOKENS, check_max_new
from onepass.entry import generate, measure, predict, verify
from onepass.seam import Facts, Pass

VOCAB = 1000
EOS = VOCAB - 1


class CountingModel:
    """Predicts (7 * last + 3) mod (VOCAB - 1) after every position (never end-of-text); records each pass's width."""

    def __init__(self):
        self.facts = Facts(name="counting", eos_ids=frozenset({EOS}), vocab_size=VOCAB, top_k=1)
        self.widths: list[int] = []
        self.timed: list[tuple] = []  # what step 3's measurement asked to time
        self.threads = 3

    def session(self, kv_cache: bool = True):
        return CountingSession(self, kv_cache)

    async def time_passes(self, ids, sizes, runs, warmup):
        """As the browser's model times them (in the model's worker): here each size's width, in ms."""
        self.timed.append((ids, sizes, runs))
        return {str(size): float(size) for size in sizes}


class CountingSession:
    def __init__(self, model: CountingModel, kv_cache: bool):
        self.model, self.kv_cache, self.ids, self.length = model, kv_cache, [], 0

    async def forward(self, new_ids, *, logits=False, rows_from=0, hidden=0):
        self.ids = self.ids[:self.length] + list(new_ids)
        self.length = len(self.ids)
        # With the cache off a pass re-reads the whole text, as the browser's uncached session does.
        self.model.widths.append(len(new_ids) if self.kv_cache else len(self.ids))
        predicted = [(7 * token + 3) % (VOCAB - 1) for token in new_ids[rows_from:]]
        return Pass(argmax=predicted, topk_ids=[[t] for t in predicted], topk_probs=[[1.0]] * len(predicted), seconds=0.0)

    def rollback(self, length):
        self.length = min(length, self.length)


class ByteTokenizer:
    """One id per UTF-8 byte, so a test writes the ids it needs as text; counts the texts it was given."""

    def __init__(self):
        self.encoded = 0

    def encode(self, text: str) -> list[int]:
        self.encoded += 1
        return list(text.encode())

    def decode(self, ids: list[int]) -> str:
        return b"".join(bytes([i]) if i < 256 else f"<{i}>".encode() for i in ids).decode(errors="replace")


def text(ids: list[int]) -> str:
    return bytes(ids).decode()


def run(coroutine) -> dict:
    return json.loads(asyncio.run(coroutine))


def huge_proposer(text):
    return [5] * 1_000_000


@pytest.mark.parametrize("kv_cache", [True, False])
def test_the_largest_request_stays_within_one_pass_limit_and_drafted_equals_greedy(kv_cache):
    prompt = [1] * MAX_PROMPT_TOKENS
    model = CountingModel()
    reference = asyncio.run(greedy(model, prompt, MAX_NEW_TOKENS, kv_cache=kv_cache))
    # A proposer that drafts a million tokens every pass: each draft is cut to the run's room.
    for propose in [huge_proposer, compile_proposer("def propose(text):\n    return [5] * 1_000_000\n", VOCAB)]:
        model.widths.clear()
        run_ = asyncio.run(drafted(model, prompt, propose, MAX_NEW_TOKENS, kv_cache=kv_cache))
        assert run_.tokens == reference.tokens
        assert max(model.widths) <= MAX_PASS_TOKENS


def test_a_huge_draft_is_cut_before_its_ids_are_checked():
    assert check_draft([3] * 10**6, VOCAB) == [3] * MAX_NEW_TOKENS
    # Past the cut nothing is read, so an id there cannot fail the draft.
    assert check_draft([3] * MAX_NEW_TOKENS + [-1], VOCAB) == [3] * MAX_NEW_TOKENS


@pytest.mark.parametrize("value", [0, -1, MAX_NEW_TOKENS + 1, 10**400, 2.5, float("nan"), float("inf"), "3", None, True, []])
def test_the_number_of_new_tokens_is_a_whole_number_in_range(value):
    with pytest.raises(ValueError, match=f"whole number from 1 to {MAX_NEW_TOKENS}"):
        check_max_new(value)


def test_whole_floats_from_javascript_are_accepted():
    assert check_max_new(16.0) == 16 and isinstance(check_max_new(16.0), int)


@pytest.mark.parametrize("request_, message", [
    ({"prompt": []}, "the text is empty"),
    ({"prompt": [1] * (MAX_PROMPT_TOKENS + 1)}, "the text is 1025 tokens long; this page accepts up to 1024"),
    ({"max_new": 10**6}, "from 1 to 256"),
    ({"max_new": 0}, "from 1 to 256"),
    ({"mode": "nonsense"}, "unknown mode 'nonsense'"),
    ({"mode": "custom", "proposer": "def propose(text)\n"}, "syntax error"),
])
def test_generate_refuses_a_request_over_a_limit_in_plain_words(request_, message):
    args = {"prompt": [1, 2, 3], "mode": "greedy", "max_new": 4, "proposer": "", **request_}
    model, started = CountingModel(), []
    request = {"text": text(args["prompt"]), "mode": args["mode"], "kvCache": True, "maxNew": args["max_new"],
               "proposer": args["proposer"]}
    answer = run(generate(model, ByteTokenizer(), request, lambda row: None, started.append))
    assert message in answer["error"]["message"]
    assert answer["error"]["code"] == ("proposer" if args["mode"] == "custom" else "input")
    assert model.widths == []  # refused before the first pass
    # The page's clock starts only once the request is accepted (a proposer fails when it first drafts).
    assert started == ([3] if args["mode"] == "custom" else [])


def checked(model, prompt: list[int], guess: list[int]) -> dict:
    return run(verify(model, ByteTokenizer(), {"text": text(prompt), "guess": text(guess), "kvCache": True}))


def test_a_guess_is_checked_with_its_text_in_one_pass_up_to_the_limit():
    model = CountingModel()
    fits = checked(model, [1] * MAX_PROMPT_TOKENS, [2] * (MAX_PASS_TOKENS - MAX_PROMPT_TOKENS))
    assert len(fits["pass"]["draft"]) == MAX_PASS_TOKENS - MAX_PROMPT_TOKENS and model.widths == [MAX_PASS_TOKENS]
    model.widths.clear()
    for prompt, guess, message in [([1, 2], [2] * 5000, "the text and the guess are 5002 tokens together; one pass "
                                                        "here reads up to 1280"),
                                   ([1, 2], [], "the guess is empty"),
                                   ([], [3], "the text is empty")]:
        assert message in checked(model, prompt, guess)["error"]["message"]
    assert model.widths == []


def test_predict_refuses_an_empty_or_long_text():
    model = CountingModel()
    assert "empty" in run(predict(model, ByteTokenizer(), {"text": ""}))["error"]["message"]
    assert "1024" in run(predict(model, ByteTokenizer(), {"text": text([1] * 2000)}))["error"]["message"]
    started = []
    assert len(run(predict(model, ByteTokenizer(), {"text": text([1] * MAX_PROMPT_TOKENS)}, started.append))["ids"]) \
        == MAX_PROMPT_TOKENS
    assert started == [MAX_PROMPT_TOKENS]


@pytest.mark.parametrize("field, what", [("text", "text"), ("guess", "guess"), ("proposer", "proposer")])
def test_a_text_over_the_character_limit_is_refused_by_its_length_before_it_is_tokenized(field, what):
    model, tokenizer = CountingModel(), ByteTokenizer()
    request = {"text": "one two", "mode": "custom", "kvCache": True, "maxNew": 4, field: "x" * (MAX_CHARACTERS + 1)}
    answer = run(generate(model, tokenizer, request, lambda row: None))["error"]
    assert answer == {"code": "input", "message": f"the {what} is {MAX_CHARACTERS + 1:,} characters long; this page "
                                                  f"accepts up to {MAX_CHARACTERS:,}, so shorten it"}
    assert tokenizer.encoded == (0 if field == "text" else 1) + (field == "proposer") and model.widths == []


def test_a_text_must_be_text_and_step_3_measures_checked_ids():
    model, tokenizer = CountingModel(), ByteTokenizer()
    request = {"text": "one two", "mode": "custom", "kvCache": True, "maxNew": 4, "proposer": 1}
    assert run(generate(model, tokenizer, request, print))["error"]["message"] == "the proposer must be Python source text"
    assert run(verify(model, tokenizer, {"text": 12, "guess": "x"}))["error"]["message"] == "the text must be text"
    assert run(measure(model, tokenizer, {"text": "x" * (MAX_CHARACTERS + 1), "sizes": [1]}))["error"]["code"] == "input"
    # A short text is repeated until it fills the largest pass; the model times the passes, Python shapes the answer.
    assert run(measure(model, tokenizer, {"text": "ab", "sizes": [1, 5]})) == {"ms": {"1": 1.0, "5": 5.0}, "runs": 5,
                                                                              "threads": 3}
    assert model.timed == [([97, 98, 97, 98, 97], [1, 5], 5)]
    assert "from 1 to 20" in run(measure(model, tokenizer, {"text": "ab", "sizes": [5], "runs": 1e6}))["error"]["message"]
    assert len(model.timed) == 1 and model.widths == []  # a refused measurement times nothing
