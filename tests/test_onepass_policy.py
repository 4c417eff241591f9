"""Cheap drafts first, the draft model only while it pays (``policy.py``): its decisions from injected round
costs, the copies' length from their match, and the oracle for every kind of decision.

The policy decides only what is proposed; verification decides what is kept. So the oracle tests hand it
adversaries (a draft always wrong, always right, a cost that flips from round to round, decisions drawn at random)
and check drafted == greedy every time, greedy and sampled. The timings are injected: a clock that the toy's
passes and the draft's small passes advance by fixed costs, so a run's "seconds" and the policy's decisions are the
same on every machine.
"""

import asyncio
import dataclasses
import random
from collections import Counter

import pytest

from onepass.backends.toy import ToyDraft, ToyModel
from onepass.chisquare import two_samples
from onepass.draft_model import ModelDraft
from onepass.drafted import drafted
from onepass.greedy import greedy
from onepass.lookup import MAX_DRAFT, best_match
from onepass.policy import FIRST_WAIT, MOST_WAIT, Policy
from onepass.sampled import sample_drafted, whole_runs
from tests.test_onepass_answers import toy_answers

MODELS = [ToyModel(), ToyModel(vocab_size=64, order=3, seed=2, eos_ids=frozenset({5, 7}))]
PLAIN, ROW, STEP = 1.0, 0.2, 0.1  # a one-row pass, each further row of a pass, a small pass of the draft


class Costs:
    """A clock the passes advance: a pass of n rows costs PLAIN + ROW * (n - 1), a small pass STEP times
    ``step_scale`` (which a test may change between rounds: a cost that flips)."""

    def __init__(self, model: ToyModel, draft: ToyDraft | None = None):
        self.now, self.step_scale = 0.0, 1.0
        run, step = model.run, draft.step if draft else None

        def timed_run(ids, past, logits, first_row=0, hidden=0):
            self.now += PLAIN + ROW * (len(ids) - first_row - 1)
            return run(ids, past, logits, first_row, hidden)

        async def timed_step(features, tokens, *, sampling=False):
            self.now += self.step_scale * STEP
            return await step(features, tokens, sampling=sampling)

        model.run = timed_run
        if draft:
            draft.step = timed_step

    def __call__(self) -> float:
        return self.now


def endless(seed: int = 0) -> ToyModel:
    """The toy without an end-of-text id: a run writes every token it may."""
    return ToyModel(seed=seed, eos_ids=frozenset())


def timed(seed: int = 0, error_rate: float = 0.0, model_seed: int = 0):
    model = endless(model_seed)
    draft = ToyDraft(model, error_rate, random.Random(seed))
    return model, draft, Costs(model, draft)


def prompt_of(rng: random.Random, model: ToyModel) -> list[int]:
    return [rng.randrange(1, model.facts.vocab_size) for _ in range(rng.randint(1, 12))]


# The decisions, from rounds told to the policy directly.

def test_a_fresh_policy_drafts_on_its_priors_and_stops_after_one_miss():
    policy = Policy()
    assert policy.pays() and policy.draft_now()
    policy.heard("draft", 1, 1.3)  # a miss: the model's own token only
    assert not policy.pays()


def test_it_drafts_while_tokens_per_second_beat_a_plain_pass_and_not_after():
    policy = Policy(prior_weight=0.0)
    for _ in range(5):
        policy.heard("plain", 1, 1.0)
        policy.heard("draft", 2, 1.3)  # 2 tokens in 1.3 s against 1 in 1 s
    assert policy.pays()
    for _ in range(20):
        policy.heard("draft", 1, 1.3)  # then misses only: the old hits weigh less and less
    assert not policy.pays()
    policy.heard("plain", 1, 2.0)  # plain passes got slower: a round of the draft's 1.2 s for 1 token... still no
    assert not policy.pays()
    for _ in range(20):
        policy.heard("plain", 1, 1.5)
    assert policy.tallies["plain"].mean_seconds() == pytest.approx(1.5, abs=0.02) and policy.pays()


def test_once_it_stops_paying_it_probes_after_a_wait_that_doubles_until_it_pays_again():
    policy = Policy()
    policy.heard("draft", 1, 1.3)
    decisions = [policy.draft_now() for _ in range(FIRST_WAIT + 1)]
    assert decisions == [False] * FIRST_WAIT + [True] and policy.decisions["probed"] == 1
    policy.heard("draft", 1, 1.3)  # the probe missed too: twice the wait
    assert [policy.draft_now() for _ in range(2 * FIRST_WAIT + 1)] == [False] * 2 * FIRST_WAIT + [True]
    for _ in range(10):
        policy.heard("draft", 1, 1.3)
        while not policy.draft_now():
            pass
    assert policy.wait == MOST_WAIT  # it stops doubling
    for _ in range(3):
        policy.heard("draft", 3, 1.3)  # hits: it pays again, and the wait starts over
    assert policy.draft_now() and policy.wait == FIRST_WAIT and policy.waited == 0
    assert sum(policy.decisions.values()) == policy.decisions["drafted"] + policy.decisions["skipped"] + \
        policy.decisions["probed"]


def test_a_round_that_took_no_time_never_divides_by_zero():
    policy = Policy()
    policy.heard("draft", 1, 0.0)
    policy.heard("plain", 1, 0.0)
    assert policy.pays()  # 0 >= 0: the toy's rounds draft


def test_a_longer_match_earns_a_longer_copy_and_the_draft_stops_where_it_is_unsure():
    policy = Policy()
    assert [policy.copy_length(n) for n in (1, 2, 3, 6, 40)] == [1, 2, 3, MAX_DRAFT, MAX_DRAFT]
    assert Policy(copy_factor=2).copy_length(2) == 4
    assert policy.unsure(0.1) and not policy.unsure(0.3) and not Policy(confidence=0).unsure(0.0)
    figures = policy.figures()
    assert figures["pays"] and figures["drafted"] == figures["skipped"] == figures["probes"] == figures["withheld"] == 0
    assert figures["draft_seconds"] is None and figures["tokens_per_draft"] == policy.prior_tokens


def test_an_unsure_draft_withholds_its_token_and_rests_longer_each_time_in_a_row():
    policy = Policy()
    assert not policy.withhold(policy.propose) and policy.draft_now()
    rested = []
    for _ in range(5):
        assert policy.withhold(0.05)
        rested.append(0)
        while not policy.draft_now():
            rested[-1] += 1
    assert rested == [1, 2, 4, 8, 8] and policy.decisions["withheld"] == 5 and policy.decisions["rested"] == 23
    assert not policy.withhold(0.9) and policy.rest == policy.first_rest  # sure again: the rest starts over
    assert policy.withhold(0.1) and policy.resting == 1
    assert not Policy(propose=0.0).withhold(0.0)


def test_best_match_prefers_the_occurrence_whose_context_agrees_furthest_back():
    #        0  1  2  3  4  5  6  7  8  9 10 11 12
    text = [9, 1, 2, 5, 8, 1, 2, 6, 3, 9, 1, 2]
    # The pair (1, 2) occurs at 1 and 5; the one at 1 is preceded by 9, as the text's last pair is.
    assert best_match(text, 2) == (2, 1, 3)
    assert best_match(text, 2, longest=2) == (2, 5, 2)  # agreement capped at the pair: the most recent wins
    assert best_match([1, 2, 3], 2) is None and best_match([1], 2) is None
    assert best_match([4, 4, 4, 4], 2) == (2, 1, 3)  # overlapping: the match at 1 agrees back to the text's start


# The oracle: whatever the policy decides, the text is greedy's.

@pytest.mark.parametrize("error_rate", [0.0, 0.4, 1.0])
@pytest.mark.parametrize("copy_first", [False, True])
def test_the_adaptive_draft_is_greedy_whatever_the_draft(error_rate, copy_first):
    rng = random.Random(11)
    for model in MODELS:
        for _ in range(60):
            prompt = prompt_of(rng, model)
            if copy_first:
                prompt += prompt[rng.randrange(len(prompt)):]
            draft = ToyDraft(model, error_rate, random.Random(rng.random()))
            if copy_first and rng.random() < 0.5:
                draft.answers = toy_answers(ToyModel(), rng, rng.random() < 0.5) if model is MODELS[0] else None
            propose = ModelDraft(draft, rng.randint(1, 5), copy_first,
                                 Policy(confidence=rng.choice([0.0, 0.25, 0.9])))
            kv_cache = rng.random() < 0.5
            run = asyncio.run(drafted(model, prompt, propose, 30, kv_cache=kv_cache, mode="adaptive"))
            assert run.tokens == asyncio.run(greedy(model, prompt, 30)).tokens
            assert len(propose.kinds) == len(run.passes)
            if error_rate == 1.0:
                assert all(record.accepted == 0 for record, kind in zip(run.passes, propose.kinds) if kind == "draft")


class Coin(Policy):
    """An adversary: draft or not at random, and stop the draft at random."""

    def __init__(self, rng: random.Random):
        super().__init__()
        self.rng = rng

    def draft_now(self) -> bool:
        return self.rng.random() < 0.5

    def unsure(self, confidence: float) -> bool:
        return self.rng.random() < 0.5

    def withhold(self, confidence: float) -> bool:
        return self.rng.random() < 0.3

    def copy_length(self, matched: int) -> int:
        return self.rng.randint(0, 2 * MAX_DRAFT)


def test_decisions_drawn_at_random_change_no_token():
    rng = random.Random(12)
    kinds = Counter()
    for _ in range(300):
        model = rng.choice(MODELS)
        prompt = prompt_of(rng, model) * 2
        propose = ModelDraft(ToyDraft(model, rng.random(), random.Random(rng.random())), rng.randint(1, 6),
                             rng.random() < 0.5, Coin(random.Random(rng.random())))
        run = asyncio.run(drafted(model, prompt, propose, 24, kv_cache=rng.random() < 0.5))
        assert run.tokens == asyncio.run(greedy(model, prompt, 24)).tokens
        kinds.update(propose.kinds)
    assert kinds["draft"] > 100 and kinds["skipped"] > 100 and kinds["copy"] > 100 and kinds["withheld"] > 50


def test_a_cost_that_flips_flips_the_decisions_and_changes_no_token():
    """The same always-right draft, its small passes made cheap and a hundred times dearer in turns, five rounds
    each: the policy drafts and skips by turns, and the text stays greedy's."""
    model, draft, clock = timed(error_rate=0.0)
    # Only the last round of each kind counts, so the estimate follows the flips; a dear prior, so that it starts
    # by measuring a plain pass; and a probe after every skipped round.
    policy = Policy(prior_weight=0.0, decay=0.0, prior_cost=2.5, first_wait=1, most_wait=1, propose=0.0)
    propose = ModelDraft(draft, 1, policy=policy)
    rounds = []

    def flip(record):
        rounds.append(record)
        clock.step_scale = 100.0 if len(rounds) // 5 % 2 else 1.0

    prompt = [3, 1, 4, 1, 5]
    run = asyncio.run(drafted(model, prompt, propose, 200, on_pass=flip, clock=clock))
    assert run.tokens == asyncio.run(greedy(model, prompt, 200)).tokens
    assert policy.decisions["skipped"] > 10 and policy.decisions["drafted"] > 10 and policy.decisions["probed"] > 10


def test_a_wrong_draft_is_stopped_and_the_run_costs_about_one_at_a_time():
    """An always-wrong draft at the injected costs: drafting every round costs 1.3 plain passes a token; the policy
    pays one miss, then probes now and then, and stays within 3 % of one at a time."""
    prompt, new = [3, 1, 4], 200
    model, _, clock = timed()
    asyncio.run(greedy(model, prompt, new))
    one_at_a_time = clock()
    costs = {}
    # Sure of every token it gets wrong (its withholding off): the tally is what stops it.
    for name, policy in [("fixed", None), ("adaptive", Policy(propose=0.0))]:
        model, draft, clock = timed(error_rate=1.0)
        propose = ModelDraft(draft, 1, policy=policy)
        run = asyncio.run(drafted(model, prompt, propose, new, clock=clock))
        assert run.tokens == asyncio.run(greedy(endless(), prompt, new)).tokens
        costs[name] = clock()
    assert costs["fixed"] > 1.25 * one_at_a_time
    assert costs["adaptive"] < 1.03 * one_at_a_time
    assert propose.kinds.count("skipped") > 150 and 1 <= policy.decisions["probed"] <= 10
    assert policy.figures()["plain_seconds"] == pytest.approx(PLAIN)


def test_a_draft_never_sure_of_its_token_costs_a_small_pass_now_and_then():
    """Withheld every round (step 5's Spelling, whose tokens the shipped draft gives q 0.01-0.12): no verifying row
    is spent, and resting after each withheld round keeps the small passes to one in about nine rounds."""
    prompt, new = [3, 1, 4], 200
    model, _, clock = timed()
    asyncio.run(greedy(model, prompt, new))
    one_at_a_time = clock()
    model, draft, clock = timed(error_rate=0.0)
    step = draft.step

    async def unsure(features, tokens, *, sampling=False):
        return dataclasses.replace(await step(features, tokens, sampling=sampling), confidence=0.01)

    draft.step = unsure
    policy = Policy()
    propose = ModelDraft(draft, 1, policy=policy)
    run = asyncio.run(drafted(model, prompt, propose, new, clock=clock))
    assert run.tokens == asyncio.run(greedy(endless(), prompt, new)).tokens
    assert propose.kinds.count("draft") == 0 and 5 <= propose.kinds.count("withheld") <= 30
    assert all(len(record.draft) == 0 for record in run.passes)
    assert clock() < 1.02 * one_at_a_time


def test_a_right_draft_is_never_skipped_and_keeps_its_gain():
    prompt, new = [3, 1, 4], 200
    model, draft, clock = timed(error_rate=0.0)
    policy = Policy(propose=0.0)  # the toy's q is flat (DRAFT_FLATTENING): sure of nothing, it would withhold
    propose = ModelDraft(draft, 1, policy=policy)
    run = asyncio.run(drafted(model, prompt, propose, new, clock=clock))
    assert run.tokens == asyncio.run(greedy(endless(), prompt, new)).tokens
    assert policy.decisions["skipped"] == 0 and propose.kinds.count("draft") == len(run.passes) - 1
    # Two tokens a round at 1.3 passes' cost, and the prompt's pass.
    assert clock() < 0.7 * new * PLAIN


def test_the_draft_drafts_no_further_after_a_token_it_is_unsure_of():
    model = MODELS[0]
    sure = ModelDraft(ToyDraft(model), 4, policy=Policy(confidence=0.0, propose=0.0))
    unsure = ModelDraft(ToyDraft(model), 4, policy=Policy(confidence=1.0, propose=0.0))
    runs = [asyncio.run(drafted(model, [3, 1, 4], propose, 40)) for propose in (sure, unsure)]
    assert all(run.tokens == asyncio.run(greedy(model, [3, 1, 4], 40)).tokens for run in runs)
    # Never sure: one token a round (its small pass spent, no further one); always sure: gamma every round.
    assert all(len(record.draft) <= 1 for record in runs[1].passes)
    assert unsure.passes == unsure.stopped == unsure.kinds.count("draft") > 0
    assert sure.stopped == 0 and sure.passes == 4 * sure.kinds.count("draft")


# Sampled drafting with a policy: whole runs still follow plain sampling.

SAMPLED = ToyModel(vocab_size=12, order=2, seed=3)
RUNS = 3_000


def test_sampled_drafting_with_random_decisions_follows_plain_sampling():
    prompt = [4, 7]
    plain = asyncio.run(whole_runs(SAMPLED, prompt, RUNS, 3, 1.0, random.Random(1)))
    decisions = random.Random(5)
    drafted_runs = asyncio.run(whole_runs(SAMPLED, prompt, RUNS, 3, 1.0, random.Random(2), draft=ToyDraft(SAMPLED),
                                          gamma=3, policy=lambda: Coin(decisions)))
    verdict = two_samples(plain, drafted_runs)
    assert verdict["dof"] > 20 and verdict["p_value"] > 0.01, verdict


def test_sampled_drafting_hears_its_rounds_and_stops_where_unsure():
    model, draft, clock = timed(error_rate=0.0, model_seed=3)
    policy = Policy(confidence=0.9, propose=0.15)
    propose = ModelDraft(draft, 3, policy=policy)
    run = asyncio.run(sample_drafted(model, [4, 7], propose, 60, 1.0, random.Random(0), clock=clock))
    assert len(propose.kinds) == len(run.passes) and propose.kinds.count("withheld") == policy.decisions["withheld"] > 0
    assert propose.stopped > 0 and sum(policy.decisions[d] for d in ("drafted", "skipped", "probed", "rested")) == \
        len(run.passes) - 1
    assert policy.tallies["draft"].rounds + policy.tallies["plain"].rounds + policy.decisions["withheld"] == \
        len(run.passes) - 1


def test_the_benchmark_counts_each_draft_modes_decisions():
    """bench_draft's tally of the proposers ``exactness.compare`` builds by name, on the toy (no timing asserted)."""
    from benchmarks.bench_draft import MODES, _decisions, _tallied
    from onepass.exactness import compare
    from onepass.proposers import PROPOSERS

    model, before = MODELS[0], dict(PROPOSERS)
    draft = ToyDraft(model, 1.0)
    with _decisions() as made:
        outcomes = asyncio.run(compare(model, 0, [3, 1, 4, 3, 1], 30, MODES, draft=draft, gamma=2))
    assert PROPOSERS == before and all(outcome.identical for outcome in outcomes)
    tallies = _tallied(made, draft)
    assert set(tallies) == {"draft", "lookup+draft", "draft-adaptive", "lookup+draft-adaptive"}
    weighed = tallies["draft-adaptive"]
    assert weighed["rounds"]["skipped"] == weighed["skipped"] + weighed["rested"] > 0
    # The pages' default (the contract's) drafts every round, until the tab has measured the policy.
    assert tallies["draft"]["skipped"] == 0 and tallies["lookup+draft"]["rounds"]["copy"] > 0


def test_step_6_asks_for_the_weighed_rounds_and_gets_their_decisions_back(monkeypatch):
    """The panels' generate (as the worker runs it): ``adaptive`` gives the draft its policy; each pass says whether
    the draft model was skipped, and the figures count the rounds and the policy's choices. Without it, as before.
    The rounds are timed by the injected costs (the toy's own microseconds would make the decisions noise)."""
    import json

    from onepass import entry
    from onepass.drafted import drafted

    model = ToyModel(vocab_size=256, eos_ids=frozenset(), seed=3)
    model.draft = ToyDraft(model, error_rate=1.0)
    monkeypatch.setitem(drafted.__kwdefaults__, "clock", Costs(model, model.draft))
    tokenizer = type("Bytes", (), {"encode": staticmethod(lambda text: list(text.encode())),
                                   "decode": staticmethod(lambda ids: bytes(ids).decode(errors="replace"))})
    results = {}
    for adaptive in (True, False):
        heard = []
        request = {"text": "abcdefgh", "mode": "draft", "gamma": 2, "maxNew": 40, "adaptive": adaptive}
        result = json.loads(asyncio.run(entry.run("generate", json.dumps(request), model, tokenizer, heard.append)))
        events = [json.loads(event)["pass"] for event in heard]
        figures = result["draft"]
        assert figures["adaptive"] is adaptive and sum(figures["rounds"].values()) == len(events)
        assert figures["rounds"]["skipped"] == sum(row["skipped"] for row in events)
        assert figures["rounds"]["withheld"] == sum(row["withheld"] for row in events)
        results[adaptive] = result
    weighed, fixed = results[True]["draft"], results[False]["draft"]
    assert weighed["rounds"]["skipped"] > 20
    assert weighed["policy"]["skipped"] + weighed["policy"]["rested"] == weighed["rounds"]["skipped"]
    assert weighed["rounds"]["withheld"] == weighed["policy"]["withheld"] > 0
    assert weighed["policy"]["probes"] + weighed["policy"]["withheld"] >= 1
    assert fixed["rounds"]["skipped"] == 0 and fixed["policy"] is None and fixed["stopped"] == 0
    assert results[True]["tokens"] == results[False]["tokens"]
