"""The contract (py/onepass/contract.py) is the one shape of every request: the pages, the client and the worker
use no field it lacks, Python's answers carry what it says, and the build writes it out for JavaScript unchanged."""

import asyncio
import dataclasses
import json
import re
from pathlib import Path

import pytest

from hooks import contract as contract_hook
from onepass import contract, entry
from onepass.backends.toy import ToyDraft, ToyModel
from onepass.contract import ERRORS, REQUESTS, RESULTS, PassEvent, keys, wire
from onepass.editable import DEFAULT_SOURCE

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted([*(ROOT / "docs" / "assets" / "onepass").rglob("*.js"), *(ROOT / "runtime").glob("*.js")])
FIELDS = {wire(kind): {wire(f.name) for f in dataclasses.fields(cls)} for kind, cls in REQUESTS.items()}
# Where a page, the client or the worker writes a request: the kind, then the literal object of its fields.
WRITTEN = re.compile(r"(?:(?<!channel\.)\b(?:execute|request|build|run)\(|\[)\s*'(\w+)',\s*\{")
# A kind, then a variable: the object literal it was given (`const fields = {...}`).
NAMED = re.compile(r"\bexecute\(\s*'(\w+)',\s*(\w+),")
# Calls whose object is always a generate request (runFrame's execute, quietRun's fields).
GENERATES = re.compile(r"(?:frame\.execute\(|quietRun\('[\w-]+',\s*)\{")
# Kinds no page writes: step 6's whole-run test needs thousands of runs, minutes on the real model in a tab, so only
# its Chromium test asks for it (tests/test_browser_draft.py), through the client like any page.
TEST_ONLY = {"sampleRuns"}


class Bytes:
    encode = staticmethod(lambda text: list(text.encode()))
    decode = staticmethod(lambda ids: bytes(ids).decode(errors="replace"))


def top_level_keys(source: str, start: int) -> set[str]:
    """The keys of the object literal opening at ``source[start] == "{"`` (spreads and nested objects skipped)."""
    depth, item, items, quote = 0, "", [], None
    for char in source[start:]:
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"`":
            quote = char
        elif char in "([{":
            depth += 1
            if depth == 1:
                continue
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                break
        elif char == "," and depth == 1:
            items.append(item)
            item = ""
            continue
        if depth == 1 and not quote:
            item += char
    items.append(item)
    names = {re.match(r"\s*(\w+)", part).group(1) for part in items if re.match(r"\s*\w", part)}
    return names


def requests_written() -> list[tuple[str, str, set[str]]]:
    found = []
    for path in SCRIPTS:
        source = path.read_text()
        for match in WRITTEN.finditer(source):
            if match.group(1) in FIELDS:
                found.append((path.name, match.group(1), top_level_keys(source, match.end() - 1)))
        for match in NAMED.finditer(source):
            literal = re.search(rf"\b(?:const|let) {match.group(2)} = \{{", source)
            if literal and match.group(1) in FIELDS:
                found.append((path.name, match.group(1), top_level_keys(source, literal.end() - 1)))
        for match in GENERATES.finditer(source):
            found.append((path.name, "generate", top_level_keys(source, match.end() - 1)))
    return found


def test_every_request_a_page_or_the_runtime_writes_uses_only_the_contract_s_fields():
    written = requests_written()
    # Every kind is written somewhere, and a page writes its generate requests in several places.
    assert {kind for _, kind, _ in written} == set(FIELDS) - TEST_ONLY
    for name, kind, fields in written:
        assert fields <= FIELDS[kind], f"{name} writes a {kind} request with {fields - FIELDS[kind]}, which the contract lacks"


def test_the_field_check_itself_finds_a_field_the_contract_lacks():
    source = "runner.execute('verify', { text: prompt.value, guesss: guess.value, ...more }, {"
    assert top_level_keys(source, source.index("{")) - FIELDS["verify"] == {"guesss"}


def test_a_field_the_contract_lacks_is_refused_in_python_too():
    model = ToyModel(vocab_size=256, eos_ids=frozenset({0}))
    answer = json.loads(asyncio.run(entry.run("generate", json.dumps({"text": "ab", "maxnew": 3}), model, Bytes(), print)))
    assert answer["error"]["code"] == "input" and "'maxnew'" in answer["error"]["message"]
    assert json.loads(asyncio.run(entry.run("nonsense", "{}", model, Bytes(), print)))["error"]["code"] == "input"


def test_python_answers_carry_what_the_contract_says():
    model, tokenizer = ToyModel(vocab_size=256, eos_ids=frozenset({0}), seed=3), Bytes()

    def run(kind, request, on_pass=print):
        return json.loads(asyncio.run(entry.run(kind, json.dumps(request), model, tokenizer, on_pass)))

    events = []
    result = run("generate", {"text": "abab", "mode": "lookup", "maxNew": 8, "proposer": DEFAULT_SOURCE},
                 lambda event: events.append(json.loads(event)))
    assert answers_by_contract(result, RESULTS["generate"]) and events
    assert all(answers_by_contract(event, PassEvent) for event in events)
    result = run("generate", {"text": "abab", "mode": "lookup", "maxNew": 8, "baseline": True},
                 lambda event: events.append(json.loads(event)))
    assert answers_by_contract(result, RESULTS["generate"]) and "baseline" in result
    assert all(answers_by_contract(event, PassEvent) for event in events)
    assert set(run("verify", {"text": "abc", "guess": "de"})) == keys(RESULTS["verify"])
    assert set(run("predict", {"text": "abc"})) == keys(RESULTS["predict"])
    assert set(run("sample", {"p": [1, 2], "q": [2, 1], "draws": 100})) == keys(RESULTS["sample"])
    assert set(run("sample_next", {"text": "abc", "draft": "uniform", "draws": 100})) == keys(RESULTS["sample_next"])


def answers_by_contract(answer: dict, typed: type) -> bool:
    """``answer`` has every key ``typed`` requires, and none it lacks (its NotRequired ones may be left out)."""
    required = {wire(name) for name in typed.__required_keys__}
    return required <= set(answer) <= keys(typed)


def test_every_result_and_event_is_sent_in_the_requests_casing():
    """A result's keys, and those of what it holds, are camelCase on the wire as a request's fields are; Python's
    names are snake_case, converted once (``contract.on_wire``). Only data keeps its keys (labels by id, counts)."""
    model, tokenizer = ToyModel(vocab_size=256, eos_ids=frozenset({0}), seed=3), Bytes()
    model.draft = ToyDraft(model)
    events = []
    request = {"text": "abcabc", "mode": "lookup+draft", "maxNew": 12, "baseline": True, "adaptive": True}
    result = json.loads(asyncio.run(entry.run("generate", json.dumps(request), model, tokenizer,
                                              lambda event: events.append(json.loads(event)))))
    sample = json.loads(asyncio.run(entry.run("sample", json.dumps({"p": [1, 2], "q": [2, 1], "draws": 100}), None, None,
                                              print)))
    snake = [key for answer in (result, sample, *events) for key in all_keys(answer) if "_" in key]
    assert not snake and "wallSeconds" in result and "pValue" in sample["verdict"], snake
    assert "tokensPerDraft" in result["draft"]["policy"] and "topkIds" in keys(RESULTS["predict"])


def all_keys(value) -> list[str]:
    if isinstance(value, dict):
        return [*value, *(key for item in value.values() for key in all_keys(item))]
    return [key for item in value for key in all_keys(item)] if isinstance(value, list) else []


def test_every_error_code_the_runtime_or_python_raises_is_the_contract_s():
    runtime = "\n".join(path.read_text() for path in SCRIPTS)
    raised = set(re.findall(r"new (?:OnepassError|LoadError)\('(\w+)'", runtime)) | set(re.findall(r"\bcode: '(\w+)'", runtime))
    assert raised and raised <= set(ERRORS), raised - set(ERRORS)
    refusals = {cls.code for cls in [contract.Refusal, *contract.Refusal.__subclasses__()]}
    assert refusals == {"input", "proposer", "no_draft"} <= set(ERRORS)


def test_the_breakdown_names_every_timing_part_of_the_contract():
    labels = re.search(r"const LABELS = \{(.*?)\};", (ROOT / "docs/assets/onepass/panels/breakdown.js").read_text(), re.S).group(1)
    assert set(re.findall(r"^\s*(\w+):", labels, re.M)) == set(contract.TIMING)


@pytest.mark.parametrize("kind", sorted(REQUESTS))
def test_a_request_has_its_defaults_and_wire_names(kind):
    cls = REQUESTS[kind]
    assert cls.parse({}).as_wire() == {wire(f.name): f.default for f in dataclasses.fields(cls)}


def test_the_build_writes_the_contract_for_javascript(tmp_path):
    contract_hook.on_post_build({"site_dir": str(tmp_path)})
    module = (tmp_path / "assets" / "onepass" / "runtime" / "contract.js").read_text()
    assert json.loads(module.split("export const CONTRACT = ", 1)[1].rstrip().removesuffix(";")) == contract.described()
    assert " * @typedef {Object} GenerateRequest" in module and " * @property {number} [maxNew]" in module
    assert " * @property {string} text" in module and " * @property {PassRow} pass" in module
    assert " * @property {number} wallSeconds" in module and " * @property {string} promptText" in module
