"""Copying from the model's own earlier answers (``answers.py``), and "lookup+draft" with such a table on the toy:
the table is read longest context first, its copies cost no small pass, and the text stays greedy's whether the
table is right or wrong."""

import asyncio
import json
import random

import pytest

from onepass.answers import Answers
from onepass.backends.toy import ToyDraft, ToyModel
from onepass.contract import Generate
from onepass.draft_model import COPY_NGRAMS, ModelDraft
from onepass.drafted import drafted
from onepass.generation import generate
from onepass.greedy import greedy
from onepass.lookup import lookup_match
from tests.test_onepass_panels_python import Bytes

TABLE = {"orders": [4, 3, 2], "rows": {"4": [[1, 2, 3, 4, 9]], "3": [[2, 3, 4, 8], [7, 8, 9, 5]], "2": [[3, 4, 7], [4, 8, 6]]}}


def test_the_longest_known_tail_decides():
    answers = Answers(TABLE)
    assert len(answers) == 5
    assert answers.following([1, 2, 3, 4]) == 9  # the 4-token context, not the 3- or 2-token ones
    assert answers.following([5, 2, 3, 4]) == 8
    assert answers.following([5, 5, 3, 4]) == 7
    assert answers.following([4]) is None and answers.following([]) is None


def test_a_copy_follows_the_table_with_its_own_tokens_until_it_knows_no_more():
    answers = Answers(TABLE)
    # 1 2 3 4 -> 9; then 7 8 9? no: 3 4 9, 4 9 unknown -> stop.
    assert answers([1, 2, 3, 4]) == [9]
    # 5 3 4 -> 7 (2-token), then 4 7? unknown.
    assert answers([5, 3, 4]) == [7]
    assert answers([0, 2, 3, 4]) == [8, 6]  # 2 3 4 -> 8, then 4 8 -> 6, then 8 6 unknown
    assert answers([0, 2, 3, 4], max_draft=1) == [8]
    assert answers([6, 6]) == []


def test_a_table_given_as_its_json_text_is_read_on_first_use_once():
    """The tab hands the table over as answers.json's text, read on the first drafted request (``ready``), not at
    load: the same table as the dict's."""
    answers = Answers(json.dumps(TABLE))
    assert answers.next is None  # nothing read yet
    assert answers([0, 2, 3, 4]) == Answers(TABLE)([0, 2, 3, 4]) == [8, 6]
    table = answers.next
    assert answers.ready() is answers and answers.next is table and answers.table is None
    assert len(Answers(json.dumps(TABLE)).ready()) == len(Answers(TABLE)) == 5


def test_a_drafted_request_reads_the_table_before_the_page_s_clock_starts():
    """``generation.generate``: the draft's table is read once the request is accepted and before ``on_start`` (the
    page's clock), so neither the load nor a timed run pays for it."""
    model = ToyModel(vocab_size=256, eos_ids=frozenset({0}), seed=3)
    model.draft = ToyDraft(model)
    model.draft.answers = Answers(json.dumps(TABLE))
    read_at_start = []
    request = Generate.parse({"text": "abcabc", "mode": "lookup+draft", "maxNew": 4})
    asyncio.run(generate(model, Bytes(), request, lambda event: None,
                         lambda length: read_at_start.append(model.draft.answers.next is not None)))
    assert read_at_start == [True]


def toy_answers(model: ToyModel, rng: random.Random, right: bool) -> Answers:
    """A table over the toy's own continuations (the default toy's next token depends on the last two ids), or one
    whose every row is wrong."""
    rows = []
    for a in range(model.facts.vocab_size):
        for b in range(model.facts.vocab_size):
            if rng.random() < 0.5:
                token = model.row((a, b))[0]
                rows.append([a, b, token if right else (token + 1) % model.facts.vocab_size])
    return Answers({"orders": [2], "rows": {"2": rows}})


@pytest.mark.parametrize("right", [True, False])
def test_copy_first_asks_the_text_then_the_answers_then_the_draft(right):
    model, rng = ToyModel(), random.Random(5)
    copies_from_answers = 0
    for _ in range(60):
        prompt = [rng.randrange(1, model.facts.vocab_size) for _ in range(rng.randint(2, 10))]
        draft = ToyDraft(model, 1.0, random.Random(rng.random()))
        draft.answers = toy_answers(model, rng, right)
        propose = ModelDraft(draft, rng.randint(1, 3), copy_first=True)
        run = asyncio.run(drafted(model, prompt, propose, 24, kv_cache=rng.random() < 0.5, mode="lookup+draft"))
        assert run.tokens == asyncio.run(greedy(model, prompt, 24)).tokens
        text = list(prompt)
        for record, kind in zip(run.passes, propose.kinds, strict=True):
            if lookup_match(text, COPY_NGRAMS) is not None:
                assert kind == "copy"
            elif draft.answers(text):
                assert kind == "answers" and record.draft == draft.answers(text)[:len(record.draft)]
                # A right table's first token is the model's own; a wrong one's never is.
                assert (record.accepted >= 1) == right or not record.draft
            else:
                assert kind in ("draft", "none")
            text += record.added
        own, copies = propose.split(run.passes)
        assert len(copies) == sum(kind in ("copy", "answers") for kind in propose.kinds)
        # Small passes only where neither the text nor the answers had a copy.
        assert propose.passes == sum(propose.gamma for kind in propose.kinds if kind == "draft")
        copies_from_answers += propose.kinds.count("answers")
    assert copies_from_answers > 100
