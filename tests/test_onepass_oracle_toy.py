"""The oracles in seconds: drafted == greedy on the toy model, over thousands of random cases.

The toy (onepass/backends/toy.py) keeps the seam's contract, checked here
against itself and against the native backend on the tiny export: one row per
fed position, the same rows with the cache on and off, rollback that forgets.
Then every proposer, with random draft lengths (gamma), prompts, lengths and
both cache modes, must reproduce greedy decoding token for token, pass by pass;
and the oracle must catch a verification or a rollback that is off by one.
The same claims on the real files: test_onepass_oracle.py.
"""

import asyncio
import functools
import math
import random

import pytest

from onepass import verification
from onepass.all_at_once import all_at_once
from onepass.backends.toy import ToyModel
from onepass.drafted import drafted
from onepass.exactness import ORACLE_PROPOSERS, compare
from onepass.greedy import greedy
from onepass.lookup import prompt_lookup
from onepass.proposers import fixed_guess, from_answer, random_draft

CASES = 2000
MODELS = [ToyModel(), ToyModel(vocab_size=8, order=1, seed=1), ToyModel(vocab_size=64, order=3, seed=2,
                                                                         eos_ids=frozenset({5, 7}))]
KINDS = ("lookup", "random", "perfect", "noisy", "wrong", "guess", "junk")


def rows(result):
    return result.argmax, result.topk_ids, result.topk_probs


def check_contract(model, rng: random.Random, steps: int) -> None:
    """Random passes and rollbacks on both cache modes: each pass's rows equal a fresh pass over the whole text."""
    cached, uncached = model.session(kv_cache=True), model.session(kv_cache=False)
    text = []
    for _ in range(steps):
        if text and rng.random() < 0.3:
            length = rng.randint(0, len(text))
            cached.rollback(length)
            uncached.rollback(length)
            del text[length:]
        else:
            new = [rng.randrange(model.facts.vocab_size) for _ in range(rng.randint(1, 8))]
            logits = rng.random() < 0.2
            # Half the passes ask for the rows of their last few tokens only, as generation and verification do.
            rows_from = rng.randrange(len(new)) if rng.random() < 0.5 else 0
            one, other = (asyncio.run(s.forward(new, logits=logits, rows_from=rows_from)) for s in (cached, uncached))
            text += new
            fresh = asyncio.run(model.session().forward(text))
            wanted = len(new) - rows_from
            assert rows(one) == rows(other) == tuple(column[-wanted:] for column in rows(fresh))
            assert len(one.argmax) == wanted and one.seconds >= 0
            assert [row[0] for row in one.topk_ids] == one.argmax
            assert all(len(row) == model.facts.top_k and row == sorted(row, reverse=True) for row in one.topk_probs)
            if logits:
                assert one.logits == other.logits and len(one.logits) == wanted
                assert [max(range(len(row)), key=row.__getitem__) for row in one.logits] == one.argmax
            else:
                assert one.logits is None and other.logits is None
        assert cached.length == uncached.length == len(text)


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.facts.name)
def test_the_toy_keeps_the_seams_contract(model):
    check_contract(model, random.Random(0), steps=300)


def test_the_native_backend_keeps_the_same_contract(tiny_model):
    """The same check on the tiny export, so the toy is held to what the real backend does."""
    check_contract(tiny_model, random.Random(1), steps=12)


def test_a_rejected_token_left_in_the_cache_changes_the_next_rows():
    """The toy's cache matters as a KV cache does: what it holds conditions what it predicts."""
    model = ToyModel()
    expected = tuple(column[-1:] for column in rows(asyncio.run(model.session().forward([1, 2, 3, 4, 5]))))
    rolled_back, stale = model.session(), model.session()
    for session in (rolled_back, stale):
        asyncio.run(session.forward([1, 2, 3, 4, 7]))  # 7: a draft token the model rejects
    rolled_back.rollback(4)
    assert rows(asyncio.run(rolled_back.forward([5]))) == expected
    assert rows(asyncio.run(stale.forward([5]))) != expected


def test_all_at_once_is_one_fresh_pass():
    model = ToyModel()
    ids = [3, 1, 4, 1, 5, 9, 2, 6]
    predictions = asyncio.run(all_at_once(model, ids))
    assert predictions["argmax"] == asyncio.run(greedy_rows(model, ids))


async def greedy_rows(model, ids):
    """The argmax after every prefix of ``ids``, one fresh pass per prefix."""
    return [(await model.session().forward(ids[:i + 1])).argmax[-1] for i in range(len(ids))]


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.facts.name)
def test_every_named_proposer_reproduces_greedy(model):
    """exactness.compare, as `python -m onepass exactness` runs it, with the cache on and off."""
    rng = random.Random(3)
    modes = [("greedy", False)] + [(name, kv) for name in ORACLE_PROPOSERS for kv in (True, False)]
    outcomes = []
    for index in range(60):
        prompt = [rng.randrange(model.facts.vocab_size) for _ in range(rng.randint(1, 30))]
        outcomes += asyncio.run(compare(model, index, prompt, rng.randint(1, 40), modes))
    assert [o for o in outcomes if not o.identical] == []
    passes = {(o.prompt, o.mode, o.kv_cache): o.passes for o in outcomes}
    assert all(count == passes[(prompt, mode, True)] for (prompt, mode, kv), count in passes.items()
               if not kv and mode != "greedy")


def random_case(rng: random.Random) -> dict:
    model = rng.choice(MODELS)
    vocab = model.facts.vocab_size
    prompt = [rng.randrange(vocab) for _ in range(rng.randint(1, 24))]
    if rng.random() < 0.5:  # repeat a piece of the prompt, as real text repeats itself
        start = rng.randrange(len(prompt))
        prompt += prompt[start:start + rng.randint(1, 8)]
    return {"model": model, "prompt": prompt, "max_new": rng.randint(1, 48), "gamma": rng.randint(1, 10),
            "kind": rng.choice(KINDS), "kv_cache": rng.random() < 0.5, "seed": rng.random()}


def proposer(case: dict, answer: list[int]):
    """The case's proposer, drafting up to gamma tokens; ``answer`` is the prompt and greedy's tokens."""
    kind, gamma, vocab = case["kind"], case["gamma"], case["model"].facts.vocab_size
    rng = random.Random(case["seed"])
    if kind == "lookup":
        return functools.partial(prompt_lookup, ngram_sizes=rng.choice([(2, 1), (1,), (3, 2, 1)]), max_draft=gamma)
    if kind == "random":
        return random_draft(rng, gamma)
    if kind in ("perfect", "noisy", "wrong"):
        return from_answer(answer, vocab, {"perfect": 0.0, "noisy": rng.random(), "wrong": 1.0}[kind], rng, gamma)
    if kind == "guess":  # the answer, wrong somewhere, with junk after it
        generated = answer[len(case["prompt"]):]
        guess = list(generated)
        if guess:
            guess[rng.randrange(len(guess))] = rng.randrange(vocab)
        return fixed_guess(len(case["prompt"]), guess + [rng.randrange(vocab) for _ in range(rng.randint(0, 5))])
    # Junk: drafts of any length, end-of-text ids included, longer than gamma and than the room left.
    eos = sorted(case["model"].facts.eos_ids)
    return lambda text: [rng.choice(eos) if rng.random() < 0.2 else rng.randrange(vocab)
                         for _ in range(rng.randint(0, 3 * gamma))]


def failure(case: dict) -> str | None:
    """Why drafted generation differs from greedy on ``case`` (tokens, stop, or a pass record), or None."""
    model, prompt, max_new = case["model"], case["prompt"], case["max_new"]
    reference = asyncio.run(greedy(model, prompt, max_new, kv_cache=case["kv_cache"]))
    seen = []
    run = asyncio.run(drafted(model, prompt, proposer(case, prompt + reference.tokens), max_new,
                              kv_cache=case["kv_cache"], on_pass=seen.append))
    if (run.tokens, run.stop) != (reference.tokens, reference.stop):
        return f"tokens {run.tokens} stop {run.stop}, greedy {reference.tokens} stop {reference.stop}"
    if seen != run.passes or not run.passes:
        return "on_pass did not see every pass"
    text = list(prompt)
    for number, record in enumerate(run.passes):
        start = 0 if number == 0 else len(text) - 1  # the model's own token of the last pass is fed with this one
        problems = [
            record.start != start, record.fed != text[start:] + record.draft,
            len(record.predicted) != len(record.draft) + 1, record.accepted > len(record.draft),
            record.draft[:record.accepted] != record.predicted[:record.accepted],
            record.token != record.predicted[record.accepted],
            record.added != verification.until_end(record.draft[:record.accepted] + [record.token],
                                                   model.facts.eos_ids),
            record.added != reference.tokens[len(text) - len(prompt):len(text) - len(prompt) + len(record.added)],
        ]
        if any(problems):
            return f"pass {number}: {record}"
        text += record.added
    return None


def failures(cases: list[dict]) -> list[tuple[dict, str]]:
    return [(case, why) for case in cases if (why := failure(case))]


def test_drafted_equals_greedy_over_thousands_of_random_cases():
    rng = random.Random(20260130)
    cases = [random_case(rng) for _ in range(CASES)]
    assert failures(cases) == []
    assert {case["kind"] for case in cases} == set(KINDS) and len({case["gamma"] for case in cases}) == 10


def test_a_perfect_draft_of_gamma_takes_one_pass_per_gamma_plus_one_tokens():
    model = ToyModel(eos_ids=frozenset({31}))
    rng = random.Random(5)
    for _ in range(200):
        prompt = [rng.randrange(31) for _ in range(rng.randint(1, 10))]
        gamma, max_new = rng.randint(1, 8), rng.randint(1, 40)
        reference = asyncio.run(greedy(model, prompt, max_new))
        run = asyncio.run(drafted(model, prompt, from_answer(prompt + reference.tokens, 32, 0.0, rng, gamma), max_new))
        if reference.stop == "max_new":
            assert len(run.passes) == math.ceil(max_new / (gamma + 1)), (prompt, gamma, max_new)
        assert len(run.passes) <= len(reference.passes)


def test_the_oracle_catches_a_verification_that_accepts_one_token_too_many(monkeypatch):
    def lenient(draft, predicted):
        verdict = original(draft, predicted)
        if len(verdict.accepted) < len(draft):
            return verification.Verdict(accepted=draft[:len(verdict.accepted) + 1], token=verdict.token,
                                        predicted=predicted)
        return verdict

    original = verification.verify
    monkeypatch.setattr(verification, "verify", lenient)
    rng = random.Random(6)
    assert failures([random_case(rng) for _ in range(200)])


def test_the_oracle_catches_a_rollback_that_keeps_the_wrong_end_of_the_cache(monkeypatch):
    """The length is right, the content stale: the slice ``[:, :, -length:]`` where ``[:, :, :length]`` was meant."""
    def wrong_end(model, past, length):
        return past[len(past) - length:]

    monkeypatch.setattr(ToyModel, "cut", wrong_end)
    rng = random.Random(7)
    assert failures([{**random_case(rng), "kv_cache": True} for _ in range(200)])
