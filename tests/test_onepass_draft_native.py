"""The draft model's whole path natively, on the tiny export and its tiny draft (``python -m draft``'s build):
the target's features reach the ONNX draft, drafted text equals greedy text in both cache modes, the command
line drafts with it, and drafted sampling follows plain sampling over whole runs.

The tiny draft is trained on a random-weight model, so it is rarely right: these tests prove the path and
the exactness, never the acceptance (``benchmarks/bench_draft.py`` measures that on the real model).
"""

import asyncio
import json

import pytest

from onepass.backends.native import DraftUnavailable, NativeDraft, NativeModel
from onepass.chisquare import two_samples
from onepass.cli import main
from onepass.exactness import compare, summarize
from tests.conftest import first_tokens, ids_of, sweep, with_own_answers

PROMPTS = ["The capital of France is", "def add(a, b):\n    return", "Once upon a time there was", "1, 2, 3,"]
# Issue 25: at least 10,000 runs of each kind natively on the tiny model, with ONEPASS_SWEEPS=1 (4,000 in CI); a rule
# that accepts every drafted token is caught on 1,000 either way (p about 1e-29 against the plain sample; 5e-9 on 500).
RUNS = sweep(4_000, 10_000)
WRONG_RUNS = 1_000


@pytest.fixture(scope="module")
def tiny_draft(tiny_export):
    from draft.build import build

    return build(tiny_export, log=lambda message: None)


@pytest.fixture(scope="module")
def draft_model(tiny_draft, tiny_model):
    return NativeDraft(tiny_draft, target=tiny_model.manifest)


def test_drafting_with_the_tiny_draft_is_greedy_in_both_cache_modes(tiny_model, tiny_export, draft_model):
    outcomes = []
    for index, text in enumerate(PROMPTS):
        for gamma in (1, 5):
            # Without the cache every pass re-reads the whole text: two prompts of it are enough.
            modes = [("draft", True), ("lookup+draft", True)] + [("draft", False), ("lookup+draft", False)] * (index < 2)
            outcomes += asyncio.run(compare(tiny_model, index, ids_of(tiny_export, text), 16, modes,
                                            draft=draft_model, gamma=gamma))
    rows = summarize(outcomes)
    assert all(row["share"] == 1.0 for row in rows), rows
    assert all(row["draft_passes"] > 0 and row["c"] > 0 for row in rows)
    assert {row["mode"] for row in rows} == {"draft", "lookup+draft"}


def test_a_draft_for_another_model_is_refused(tiny_draft, tmp_path):
    with pytest.raises(DraftUnavailable, match="another model"):
        NativeDraft(tiny_draft, target={"files": [{"sha256": "0" * 64}]})
    with pytest.raises(DraftUnavailable, match="no draft.json"):
        NativeDraft(tmp_path)


def test_the_command_line_drafts_with_it(tiny_export, tiny_draft, capsys, tmp_path):
    assert main(["run", "--model", str(tiny_export), "--text", "The capital of France is", "--mode", "draft",
                 "--draft", str(tiny_draft), "--max-new", "8", "--gamma", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["draft"]["gamma"] == 3 and out["draft"]["passes"] > 0 and len(out["run"]["tokens"]) == 8
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps(PROMPTS[:2]))
    assert main(["exactness", "--model", str(tiny_export), "--prompts", str(prompts), "--max-new", "8",
                 "--proposers", "lookup,draft", "--draft", str(tiny_draft), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    for row in summary["modes"]:
        assert row["share"] == 1.0 and row["seconds"] > 0 and row["greedy_seconds"] > 0
    assert "acceptance" in next(row for row in summary["modes"] if row["mode"] == "draft")
    assert main(["run", "--model", str(tiny_export), "--text", "x", "--mode", "draft"]) == 2  # no --draft
    # Copy first: where the text repeats, prompt lookup's copy is checked instead of the draft's tokens.
    assert main(["run", "--model", str(tiny_export), "--text", "one two three one two three one two", "--mode",
                 "lookup+draft", "--draft", str(tiny_draft), "--max-new", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["draft"]["copies"] >= 1 and out["run"]["passes"][1]["draft"]
    # Each round weighed (step 6's "Only where it pays"): the tiny draft is seldom sure of its token.
    assert main(["run", "--model", str(tiny_export), "--text", "The capital of France is", "--mode", "draft",
                 "--adaptive", "--draft", str(tiny_draft), "--max-new", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["draft"]["adaptive"] and out["draft"]["rounds"]["withheld"] + out["draft"]["rounds"]["skipped"] >= 1


@pytest.mark.slow
def test_drafted_sampling_follows_plain_sampling_over_whole_runs(tiny_export, tiny_draft):
    """The first three tokens of ``RUNS`` runs each: drafted with the tiny draft's real q, and plain; then the
    same test with a rule that accepts every drafted token must fail (2,000 runs are plenty for that). One
    thread each: the tiny passes are too small to share."""
    model = NativeModel(tiny_export, threads=1)
    draft = NativeDraft(tiny_draft, threads=1, target=model.manifest)
    prompt = ids_of(tiny_export, "The capital of France is")
    plain = first_tokens(model, prompt, draft, RUNS, 1, drafted=False)
    drafted = first_tokens(model, prompt, draft, RUNS, 2, drafted=True)
    verdict = two_samples(plain, drafted)
    assert verdict["dof"] > 20 and verdict["p_value"] > 0.01, verdict
    wrong = first_tokens(model, prompt, draft, WRONG_RUNS, 3, drafted=True, rule=lambda p, q, u: True)
    assert two_samples(plain, wrong)["p_value"] < 1e-6


def test_copy_first_copies_from_the_models_own_answers(tiny_model, tiny_export, tiny_draft, tmp_path):
    """A draft folder whose answers.json holds the model's own answers to the prompts (``with_own_answers``): copy
    first must copy from it, be right, and leave the text greedy's."""
    draft = NativeDraft(with_own_answers(tiny_export, tiny_draft, PROMPTS, tmp_path / "draft"), target=tiny_model.manifest)
    assert len(draft.answers) > 0
    outcomes = []
    for index, text in enumerate(PROMPTS):
        outcomes += asyncio.run(compare(tiny_model, index, ids_of(tiny_export, text), 16, [("lookup+draft", True)],
                                        draft=draft, gamma=2))
    row = summarize(outcomes)[0]
    assert row["share"] == 1.0
    # Whole answers copied in a few passes: far fewer passes than tokens.
    assert row["passes"] * 2 < row["tokens"], row


def test_the_tab_benchmark_s_draft_without_answers_copies_from_the_text_only(tiny_model, tiny_export, tiny_draft,
                                                                             tmp_path):
    """bench_draft_browser --without-answers: the same draft, its table empty and its draft.json still true."""
    from benchmarks.bench_draft_browser import without_answers
    from model_export.cache import sha256_file

    full = with_own_answers(tiny_export, tiny_draft, PROMPTS, tmp_path / "full")
    folder = without_answers(full, tmp_path / "text-only")
    manifest = json.loads((folder / "draft.json").read_text())
    assert all(entry["sha256"] == sha256_file(folder / entry["name"]) for entry in manifest["files"])
    assert (folder / "draft.onnx").read_bytes() == (full / "draft.onnx").read_bytes()
    draft = NativeDraft(folder, target=tiny_model.manifest)
    assert len(draft.answers) == 0 and manifest["answers"]["rows"] == 0
    assert draft.answers(ids_of(tiny_export, PROMPTS[0])) == []


def test_the_tab_benchmark_asks_for_each_mode_as_the_contract_reads_it():
    """bench_draft_browser's modes: the page's draft modes, and each with ``adaptive`` (its rounds weighed)."""
    from benchmarks.bench_draft_browser import MODES, request
    from onepass.contract import DRAFTING, Generate

    assert request("draft-adaptive", gamma=1) == {"mode": "draft", "gamma": 1, "adaptive": True}
    assert request("lookup+draft", text="x") == {"mode": "lookup+draft", "text": "x"}
    for mode in MODES:
        asked = Generate.parse(request(mode, text="x", gamma=1, maxNew=4, baseline=True))
        assert asked.mode in DRAFTING and asked.adaptive is mode.endswith("-adaptive")
    assert len(MODES) == 2 * len(DRAFTING)
