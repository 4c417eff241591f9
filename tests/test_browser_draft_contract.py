"""The Python half of step 6's live draft model, in seconds on the toy (no Chromium): the generate mode "draft"
with its baseline, its figures (alpha per position, c, the formula's prediction and best draft length), the
refusals, and the whole-run sampling test (sample_runs) with the lesson's rule and with a wrong one.
tests/test_browser_draft.py runs the same entry points in the worker over the tiny export and its tiny draft."""

import asyncio
import json

from onepass import entry
from onepass.backends.toy import ToyDraft, ToyModel
from onepass.greedy import greedy
from onepass.speedup import MAX_GAMMA, speedup


class Bytes:
    encode = staticmethod(lambda text: list(text.encode()))
    decode = staticmethod(lambda ids: bytes(ids).decode(errors="replace"))


def toy(error_rate: float = 0.0) -> ToyModel:
    model = ToyModel(vocab_size=256, eos_ids=frozenset({0}), seed=3)
    model.draft = ToyDraft(model, error_rate=error_rate)
    return model


def run(kind: str, request: dict, model, events: list | None = None) -> dict:
    on_pass = (lambda event: events.append(json.loads(event))) if events is not None else (lambda event: None)
    return json.loads(asyncio.run(entry.run(kind, json.dumps(request), model, Bytes(), on_pass)))


def test_a_draft_run_with_its_baseline_reports_its_rounds_alpha_c_and_the_prediction():
    model, events = toy(), []
    result = run("generate", {"text": "abcabc", "mode": "draft", "gamma": 3, "baseline": True, "maxNew": 20}, model, events)
    reference = asyncio.run(greedy(model, list(b"abcabc"), 20))
    assert result["tokens"] == reference.tokens == result["baseline"]["tokens"] and result["baseline"]["identical"]
    drafted = [event for event in events if not event.get("baseline")]
    assert len(drafted) == result["totals"]["passes"] and len(events) - len(drafted) == 20
    assert drafted[0]["pass"]["draftPasses"] == 0  # the first pass reads the text: nothing to draft from yet
    figures = result["draft"]
    assert sum(event["pass"]["draftPasses"] for event in drafted) == figures["passes"] > 0
    # The toy's draft knows the toy: every reached position is accepted, and its small passes take no time.
    assert figures["alpha"] == 1.0 and all(row["alpha"] == 1.0 for row in figures["acceptance"])
    assert figures["c"] == 0.0 and figures["predicted"] == speedup(1.0, 3, 0.0) == 4.0
    assert figures["bestGamma"] == MAX_GAMMA and result["wallSeconds"] > 0 and result["baseline"]["speedup"] > 0


def test_a_model_s_first_timed_comparison_is_warmed_up_once_unshown_and_uncounted():
    """Before a model's first run with a baseline, a few tokens of each run go through it untimed (generation.warm_up:
    a tab's first passes of each shape are slower); nothing of them reaches the events, the figures or the wall
    clock, and the next request does not warm up again."""
    model, events = toy(), []
    model.run = counted(model.run)
    request = {"text": "abcabc", "mode": "draft", "gamma": 2, "baseline": True, "maxNew": 20}
    first = run("generate", request, model, events)
    shown = first["totals"]["passes"] + first["baseline"]["totals"]["passes"]
    assert len(events) == shown and model.run.calls > shown  # the warm-up's passes were run, and not shown
    warmed = model.run.calls
    second = run("generate", request, model, [])
    assert model.run.calls - warmed == shown  # once per model
    def rounds(result):
        return [(p["fed"], p["draft"], p["predicted"]) for p in result["passes"]]

    assert first["tokens"] == second["tokens"] and rounds(first) == rounds(second)
    assert first["draft"]["passes"] == second["draft"]["passes"] and first["draft"]["acceptance"] == second["draft"]["acceptance"]
    unwarmed = toy()  # a request without a baseline times nothing and warms nothing
    unwarmed.run = counted(unwarmed.run)
    plain = run("generate", {**request, "baseline": False}, unwarmed)
    assert unwarmed.run.calls == plain["totals"]["passes"]


def counted(function):
    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        return function(*args, **kwargs)

    wrapper.calls = 0
    return wrapper


def test_a_draft_run_without_its_baseline_has_no_c():
    result = run("generate", {"text": "abcabc", "mode": "draft", "maxNew": 8}, toy(error_rate=1.0))
    assert "baseline" not in result and result["draft"]["alpha"] == 0.0
    assert result["draft"]["c"] is result["draft"]["predicted"] is result["draft"]["bestGamma"] is None


def test_no_draft_and_bad_draft_lengths_are_refused_in_plain_words():
    model = ToyModel(vocab_size=256, eos_ids=frozenset({0}))
    assert run("generate", {"text": "ab", "mode": "draft"}, model)["error"] == {
        "code": "no_draft", "message": "this site was built without a draft model"}
    model.draft_unavailable = "the build could not train one"
    assert run("sample_runs", {"text": "ab", "runs": 5}, model)["error"] == {
        "code": "no_draft", "message": "the build could not train one"}
    for gamma in [0, MAX_GAMMA + 1, 1.5, "2", None, True]:
        error = run("generate", {"text": "ab", "mode": "draft", "gamma": gamma}, toy()).get("error")
        if gamma is None:  # JavaScript's undefined: the default
            assert error is None
        else:
            assert error["code"] == "input" and "the draft length must be a whole number" in error["message"], gamma
    for fields, words in [({"runs": 0}, "the number of runs"), ({"runs": 5, "newTokens": 9}, "the tokens per run"),
                          ({"runs": 5, "temperature": 0}, "the temperature"), ({"runs": 5, "rule": "x"}, "unknown rule")]:
        error = run("sample_runs", {"text": "ab", **fields}, toy())["error"]
        assert error["code"] == "input" and words in error["message"], fields


def test_whole_runs_follow_plain_sampling_with_the_rule():
    """The wrong rule's failure needs a draft whose q is far from p: the tiny export's (tests/test_browser_draft.py);
    the toy's flattened q is too close to its p for a few thousand runs to tell. Here: that the rule is the one asked."""
    right = run("sample_runs", {"text": "abcab", "runs": 3000, "seed": 1}, toy(error_rate=0.3))
    assert sum(right["plain"].values()) == sum(right["drafted"].values()) == 3000 and right["draftedTokens"] > 0
    assert right["verdict"]["dof"] > 10 and right["verdict"]["pValue"] > 0.01, right["verdict"]
    assert right["accepted"] < right["draftedTokens"]
    wrong = run("sample_runs", {"text": "abcab", "runs": 200, "seed": 2, "rule": "always accept"}, toy(error_rate=0.3))
    assert wrong["accepted"] == wrong["draftedTokens"] > 0 and wrong["rule"] == "always accept"
    assert sum(wrong["plain"].values()) == 200 and wrong["verdict"] is not None
    # Without plain runs: the drafted ones alone, and no verdict.
    alone = run("sample_runs", {"text": "abcab", "runs": 200, "seed": 2, "plain": False}, toy(error_rate=0.3))
    assert alone["plain"] == {} and alone["verdict"] is None and sum(alone["drafted"].values()) == 200


def test_the_real_pair_is_the_draft_model_s_q_after_the_same_text():
    model = toy(error_rate=0.0)
    result = run("sample_next", {"text": "abcab", "draft": "model", "draws": 2000, "seed": 4}, model)
    assert len(result["q"]) == len(result["p"]) == model.facts.top_k + 1 and result["draft"] == "model"
    assert abs(sum(result["q"]) - 1) < 1e-9 and result["verdict"]["consistent"]
    # The toy's draft knows the toy, only flattened: its q favours the target's first choice too.
    assert max(range(len(result["q"])), key=result["q"].__getitem__) == 0
    assert run("sample_next", {"text": "a", "draft": "model", "draws": 10}, model)["error"]["code"] == "input"
    assert run("sample_next", {"text": "ab", "draft": "model", "draws": 10}, ToyModel())["error"]["code"] == "no_draft"
