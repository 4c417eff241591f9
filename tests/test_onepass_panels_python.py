"""The panel contract, natively: defaults, labels, streamed text, each entry point's result and events, and the
editable proposer, the chi-squared verdict and the sampling entry point behind them.

The toy model stands behind the seam, with a byte tokenizer (one id per UTF-8
byte, given in as the plain ``encode``/``decode`` pair the worker gives), so a
character split across tokens is easy to make.
"""

import asyncio
import json
import random

import pytest

from hooks import contract as contract_hook
from onepass.backends.toy import ToyModel
from onepass.chisquare import chi_square, upper_tail
from onepass.editable import DEFAULT_SOURCE, ProposerError, compile_proposer
from onepass.examples import EXAMPLES, chat
from onepass.greedy import greedy
from onepass.lookup import prompt_lookup
from onepass.defaults import DEFAULTS
from onepass.entry import generate, pieces, predict, sample, verify
from onepass.tokens import Stream, labels

VOCAB = 100
EURO = "\u20ac"  # three bytes in UTF-8: a character split across three byte tokens


class Bytes:
    """A tokenizer as the panels take one: ``encode(text) -> ids`` and ``decode(ids) -> str``, one id per byte."""

    def __init__(self):
        self.encode = lambda text: list(text.encode())
        self.decode = lambda ids: bytes(ids).decode(errors="replace")


def answer(coroutine) -> dict:
    return json.loads(asyncio.run(coroutine))


def test_a_split_character_is_held_back_until_its_last_byte_arrives():
    stream = Stream(Bytes())
    euro = list(EURO.encode())
    assert [stream.push(ids) for ids in ([65, euro[0]], [euro[1]], [euro[2], 66])] == ["A", "", EURO + "B"]
    # What the worker's decode request gives: the same pieces, then what is still held back at the end.
    assert json.loads(pieces(Bytes(), [65, euro[0]])) == {"pieces": ["A", "", "\ufffd"], "text": "A\ufffd"}
    # A label is a token's own text: a piece of a character shows as U+FFFD.
    assert labels(Bytes(), [euro[0], 65, 65]) == {"65": "A", str(euro[0]): "\ufffd"}


@pytest.mark.parametrize("mode", ["greedy", "lookup", "guess", "random", "custom"])
def test_generate_returns_the_run_its_text_and_labels_and_streams_each_pass(mode):
    model, tokenizer = ToyModel(vocab_size=256, eos_ids=frozenset({0}), seed=3), Bytes()
    text = "ab" + EURO + "ab" + EURO + "ab"
    request = {"text": text, "mode": mode, "kvCache": True, "maxNew": 24, "guess": "xy", "seed": 5,
               "proposer": DEFAULT_SOURCE}
    events, started = [], []
    result = answer(generate(model, tokenizer, request, lambda event: events.append(json.loads(event)), started.append))
    prompt = tokenizer.encode(text)
    reference = asyncio.run(greedy(model, prompt, 24))
    assert result["tokens"] == reference.tokens and result["prompt"] == prompt and started == [len(prompt)]
    assert result["promptText"] == text and result["text"] == tokenizer.decode(reference.tokens)
    ids = prompt + result["tokens"] + [t for p in result["passes"] for t in p["draft"] + p["predicted"]]
    assert result["labels"] == {str(t): tokenizer.decode([t]) for t in set(ids)}
    # Each event carries its pass as the result does, and in prompt lookup the match it copied from.
    assert [{k: v for k, v in e["pass"].items() if k != "match"} for e in events] == result["passes"]
    # The streamed pieces add up to the text, less a character still split at its end.
    assert "".join(event["text"] for event in events) == result["text"].rstrip("\ufffd")
    for event in events:
        shown = event["pass"]["draft"] + event["pass"]["predicted"] + event["pass"]["added"]
        assert set(event["labels"]) == {str(t) for t in shown + ((event["pass"].get("match") or {}).get("ngram") or [])}
        assert ("match" in event["pass"]) == (mode == "lookup") and "timing" not in event["pass"]


def test_a_chat_request_sends_the_text_as_one_user_turn_and_an_empty_one_is_refused():
    model, tokenizer = ToyModel(vocab_size=256, eos_ids=frozenset({0}), seed=3), Bytes()
    request = {"text": "Say hello.", "mode": "lookup", "maxNew": 8, "chat": True}
    result = answer(generate(model, tokenizer, request, lambda event: None))
    assert result["promptText"] == chat("Say hello.") and result["prompt"] == tokenizer.encode(chat("Say hello."))
    assert result["tokens"] == asyncio.run(greedy(model, result["prompt"], 8)).tokens
    # What the page shows while the run goes on is what Python sends.
    turn = DEFAULTS["draft"]["chatTurn"]
    assert turn["before"] + "Say hello." + turn["after"] == chat("Say hello.")
    refused = answer(generate(model, tokenizer, {**request, "text": ""}, lambda event: None))
    assert refused["error"]["code"] == "input" and "the text is empty" in refused["error"]["message"]


def test_verify_and_predict_return_the_panels_shapes():
    model, tokenizer = ToyModel(vocab_size=256, eos_ids=frozenset({0})), Bytes()
    checked = answer(verify(model, tokenizer, {"text": "abc", "guess": "de", "kvCache": False}))
    assert set(checked) == {"pass", "prompt", "labels", "text"} and checked["prompt"] == [97, 98, 99]
    assert checked["pass"]["draft"] == [100, 101] and checked["text"] == tokenizer.decode(checked["pass"]["added"])
    predicted = answer(predict(model, tokenizer, {"text": "abc"}))
    assert predicted["ids"] == [97, 98, 99]
    assert set(predicted["labels"]) == {str(t) for t in predicted["ids"] + sum(predicted["topkIds"], [])}


def test_the_defaults_are_the_lessons_and_reach_the_pages_as_a_module(tmp_path):
    assert DEFAULTS["greedy"] == {"text": "The capital of France is Paris. The capital of Germany is", "maxNew": 16}
    assert DEFAULTS["all-at-once"]["text"] == DEFAULTS["guess"]["text"] + " Berlin."
    assert DEFAULTS["guess"]["guess"] == " Berlin." and DEFAULTS["guess"]["continuationTokens"] == 6
    assert DEFAULTS["lookup"]["examples"] == [e.as_dict() for e in EXAMPLES]
    assert DEFAULTS["lookup"]["proposer"] == DEFAULT_SOURCE
    contract_hook.on_post_build({"site_dir": str(tmp_path)})
    module = (tmp_path / "assets" / "onepass" / "panels" / "defaults.js").read_text()
    assert json.loads(module.split("export const DEFAULTS = ", 1)[1].rstrip().removesuffix(";")) == DEFAULTS


def test_the_default_proposer_is_prompt_lookup():
    propose = compile_proposer(DEFAULT_SOURCE, VOCAB)
    rng = random.Random(0)
    for _ in range(300):
        text = [rng.randrange(6) for _ in range(rng.randrange(0, 30))]
        assert propose(text) == prompt_lookup(text)


@pytest.mark.parametrize("source, message", [
    ("def propose(text):\n    return 1 / 0\n", "propose raised ZeroDivisionError"),
    ("def propose(text)\n    return []\n", "syntax error on line 1"),
    ("def propose(text):\n    return [-1]\n", "ids run from 0 to 99"),
    ("def propose(text):\n    return [100]\n", "ids run from 0 to 99"),
    ("def propose(text):\n    return 'abc'\n", "must return a list"),
    ("def propose(text):\n    return [1.5]\n", "must be an int"),
    ("def propose(text):\n    return [True]\n", "must be an int"),
    ("x = 1\n", "define a function propose"),
    ("raise ValueError('no')\n", "running your code failed"),
    ("def propose(text):\n    return []\0\n", "cannot be read|syntax error"),
    # A long run of names would overflow the browser's stack in the parser (limits.MAX_LINE_NAMES).
    ("many words " * 1819 + "x", "line 1 of your code has over 500 names"),
    ("def propose(text):\n    return [\n" + "text[0],\n" * 600 + "]\n", "line 2 of your code has over 500 names"),
])
def test_a_broken_proposer_gives_a_clear_message(source, message):
    with pytest.raises(ProposerError, match=message):
        compile_proposer(source, VOCAB)([1, 2, 3])


def test_a_long_list_of_ids_is_still_a_proposer():
    source = "IDS = [" + "1, " * 3000 + "1]\n\ndef propose(text):\n    return IDS[:6]\n"
    assert compile_proposer(source, VOCAB)([1, 2, 3]) == [1] * 6


def test_chi_square_tail_matches_tables():
    # Critical values at 5 %: 3.841 (1 dof), 11.070 (5 dof).
    assert upper_tail(3.841, 1) == pytest.approx(0.05, abs=1e-3)
    assert upper_tail(11.070, 5) == pytest.approx(0.05, abs=1e-3)
    assert upper_tail(0.0, 3) == 1.0


def test_a_draw_of_an_impossible_token_refutes_the_rule():
    assert chi_square([5, 5, 1], [0.5, 0.5, 0.0])["p_value"] == 0.0


def test_sampling_follows_p_and_a_wrong_rule_is_caught():
    p, q = [0.5, 0.3, 0.2], [0.2, 0.2, 0.6]
    result = json.loads(sample({"p": p, "q": q, "draws": 10_000, "seed": 2}))
    assert sum(result["counts"]) == 10_000 and result["verdict"]["consistent"]
    # Keeping every drafted token follows q, not p: the test must notice.
    assert not chi_square([int(10_000 * x) for x in q], p)["consistent"]


@pytest.mark.parametrize("p, q, draws, message", [
    ([0, 0], [1, 1], 10, "at least one probability above 0"),
    ([-1, 2], [1, 1], 10, "at least 0"),
    ([float("nan"), 2], [1, 1], 10, "at least 0"),
    (["1", 2], [1, 1], 10, "at least 0"),
    ([1, 2], [1, 1, 1], 10, "p has 2 words but q has 3"),
    ([1, 2], [1, 1], 10**9, "the number of draws must be a whole number from 1 to 100,000"),
    ([1, 2], [1, 1], 2.5, "whole number"),
])
def test_bad_distributions_are_refused_with_a_message(p, q, draws, message):
    error = json.loads(sample({"p": p, "q": q, "draws": draws, "seed": 1}))["error"]
    assert error["code"] == "input" and message in error["message"]
