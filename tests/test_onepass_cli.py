"""``python -m onepass``: traces on the tiny export, and clear errors (exit code 2) for bad input."""

import json
import subprocess
import sys

import pytest

from onepass.cli import main

def onepass(*args):
    return subprocess.run([sys.executable, "-m", "onepass", *args], capture_output=True, text=True)


def test_missing_model_folder_is_a_clear_error(tmp_path):
    result = onepass("run", "--model", str(tmp_path / "nowhere"), "--text", "Hello")
    assert result.returncode == 2
    assert "not a model export" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("args, message", [
    (["run", "--text", "   "], "--text is empty"),
    (["run", "--text", "Hi", "--mode", "guess"], "needs --guess"),
    (["run", "--text", "Hi", "--max-new", "0"], "at least 1"),
    # run is the pages' generation (generation.py): the pages' limits hold here too.
    (["run", "--text", "Hi", "--max-new", "300"], "from 1 to 256"),
    (["exactness", "--prompts", "missing.json"], "cannot read prompts"),
    (["exactness", "--prompts", "{prompts}", "--proposers", "psychic"], "unknown proposers"),
    (["exactness", "--prompts", "{prompts}", "--cache", "maybe"], "--cache takes"),
    (["exactness", "--prompts", "{prompts}", "--every", "0"], "at least 1"),
])
def test_bad_input_exits_2_without_a_traceback(tiny_export, tmp_path, capsys, args, message):
    prompts = tmp_path / "prompts.json"
    prompts.write_text('["Hello"]')
    argv = [arg.replace("{prompts}", str(prompts)) for arg in args] + ["--model", str(tiny_export)]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_empty_prompt_set_is_rejected(tiny_export, tmp_path, capsys):
    prompts = tmp_path / "prompts.json"
    prompts.write_text("[]")
    assert main(["exactness", "--model", str(tiny_export), "--prompts", str(prompts)]) == 2
    assert "non-empty JSON array" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["greedy", "lookup", "guess"])
def test_run_prints_a_json_trace(tiny_export, capsys, mode):
    text = "The capital of France is Paris. The capital of Germany is"
    assert main(["run", "--model", str(tiny_export), "--text", text, "--mode", mode, "--guess", " Berlin.",
                 "--max-new", "8", "--no-kv-cache", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    run = out["run"]
    assert run["mode"] == mode and run["kv_cache"] is False
    assert run["totals"]["passes"] == len(run["passes"]) and run["totals"]["tokens"] == len(run["tokens"]) <= 8
    fields = {"start", "fed", "draft", "predicted", "accepted", "token", "added", "seconds", "bonus"}
    assert fields <= set(run["passes"][0])
    assert isinstance(out["generated"], str)


def test_run_prints_a_readable_trace(tiny_export, capsys):
    assert main(["run", "--model", str(tiny_export), "--text", "one two one two one", "--max-new", "4"]) == 0
    out = capsys.readouterr().out
    assert "tokens per pass" in out and "generated:" in out


def test_chat_sends_each_text_as_one_user_turn(tiny_export, tmp_path, capsys):
    assert main(["run", "--model", str(tiny_export), "--text", "Hi", "--chat", "--max-new", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["text"] == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps(["Hi", "Say hello."]))
    assert main(["exactness", "--model", str(tiny_export), "--prompts", str(prompts), "--chat", "--max-new", "3",
                 "--proposers", "lookup", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["modes"][0]["identical"] == 2


def test_exactness_reports_every_mode(tiny_export, tmp_path, capsys):
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps(["Hello there,", "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"]))
    argv = ["exactness", "--model", str(tiny_export), "--prompts", str(prompts), "--max-new", "6",
            "--proposers", "lookup,wrong", "--cache", "on,off", "--json"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    modes = {(row["mode"], row["kv_cache"]): row for row in summary["modes"]}
    assert set(modes) == {("greedy", False), ("lookup", True), ("lookup", False), ("wrong", True), ("wrong", False)}
    assert all(row["share"] == 1.0 and row["prompts"] == 2 for row in modes.values())


def test_exactness_runs_every_nth_prompt(tiny_export, tmp_path, capsys):
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps(["one", "two", "three", "four", "five"]))
    argv = ["exactness", "--model", str(tiny_export), "--prompts", str(prompts), "--max-new", "3",
            "--proposers", "wrong", "--every", "2", "--json"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["prompts"] == 3 and summary["modes"][0]["identical"] == 3


@pytest.mark.slow
def test_examples_record_every_pass_for_the_estimate(tiny_export, tmp_path, capsys):
    record = tmp_path / "runs.json"
    assert main(["examples", "--model", str(tiny_export), "--record", str(record)]) == 0
    runs = json.loads(record.read_text())["runs"]
    assert sorted(runs) == ["capitals", "past-tense", "spelling"]
    for pair in runs.values():
        assert pair["lookup"]["tokens"] == pair["greedy"]["tokens"]
        assert pair["lookup"]["max_draft"] == 6 and pair["lookup"]["proposer_seconds"] >= 0
        assert all(p["seconds"] > 0 for p in pair["lookup"]["passes"] + pair["greedy"]["passes"])
