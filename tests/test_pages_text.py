"""The lesson pages' text, read from their Markdown (no site build, no browser): short enough, and true to the
figures they quote.

A page's prose is what a reader reads as the lesson: its Markdown with the tables, the panels and widgets (lines
of HTML), code blocks and displayed maths left out, and its headings, lists and "Training or answering?" boxes
kept, as the lesson's own text has them. Words are the whitespace-separated pieces that hold a letter or a digit;
a `{{ model.… }}` placeholder counts as one. Each page may run to 1.5 times the lesson's words for its step
(tests/data/lesson_words.json, counted the same way). The figures a page quotes from the formula or from a
recorded run are computed here from the same source, so a page cannot drift from them.
"""

import json
import re
from pathlib import Path

import pytest

from onepass.estimate import alpha_for, fit, measured
from onepass.speedup import best_gamma, expected_tokens, speedup

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DATA = Path(__file__).parent / "data"
LESSON_WORDS = json.loads((DATA / "lesson_words.json").read_text())["steps"]
MARGIN = 1.5
RECORDED = json.loads((DATA / "runs-default.json").read_text())["runs"]

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
DISPLAY_MATHS = re.compile(r"^\\\[.*?^\\\]", re.M | re.S)
WORD = re.compile(r"\S+")
ALNUM = re.compile(r"[0-9A-Za-z]")


def prose(markdown: str) -> str:
    """The page's prose: tables, HTML lines (panels, widgets), code blocks and displayed maths removed."""
    markdown = DISPLAY_MATHS.sub("", FENCE.sub("", markdown))
    return "\n".join(line for line in markdown.splitlines() if not line.lstrip().startswith(("|", "<")))


def words(text: str) -> int:
    text = re.sub(r"\{\{[^}]*\}\}", "placeholder", text)
    return sum(1 for piece in WORD.findall(text) if ALNUM.search(piece))


def page(name: str) -> str:
    return (DOCS / name).read_text()


def test_prose_leaves_out_tables_panels_code_and_maths():
    markdown = ("# Title\n\nTwo words.\n\n| a | b |\n|---|---|\n| c | d |\n\n<div data-onepass-panel=\"x\"></div>\n\n"
                "```text\ncode here\n```\n\n\\[\nx + y\n\\]\n\n!!! question \"Box?\"\n    In {{ model.name }} — yes.\n")
    assert words(prose(markdown)) == len("Title Two words. question Box? In placeholder yes.".split())


@pytest.mark.parametrize("name", sorted(LESSON_WORDS))
def test_each_lesson_page_is_within_one_and_a_half_times_the_lesson_s_words(name):
    count, limit = words(prose(page(name))), MARGIN * LESSON_WORDS[name]
    assert count <= limit, f"{name}: {count} words of prose, more than {MARGIN} × the lesson's {LESSON_WORDS[name]}"


@pytest.mark.parametrize("name", sorted(set(LESSON_WORDS) - {"check-yourself.md"}))
def test_each_lesson_page_links_to_under_the_hood(name):
    assert "](runtime.md)" in page(name)


def test_no_page_states_a_model_size_of_its_own():
    """Sizes and parameter counts come from the manifest, through {{ model.… }}; the export may change."""
    for path in DOCS.glob("*.md"):
        assert not re.search(r"\d\s*(MB|GB|million|billion)\b", path.read_text()), path.name


def test_step_6_quotes_the_formula_s_figures():
    text = page("the-real-thing.md")
    assert best_gamma(0.7, 0.05) == 6 and "six at the chart's starting values" in text
    assert best_gamma(0.5, 0.05) == 3 and "three at \\(\\alpha = 0.5\\)" in text
    assert f"from {speedup(0.7, 6, 0.05):.2f}× (\\(\\alpha = 0.7\\)" in text  # 2.35×, the chart's figure
    assert f"to {speedup(0.8, best_gamma(0.8, 0.05), 0.05):.2f}× (\\(\\alpha = 0.8\\)" in text
    assert "below it whenever drafting is not free" in text


def test_step_7_says_what_alpha_equal_to_one_gives():
    assert expected_tokens(1.0, 4) == 5.0
    text = page("name-it.md")
    assert "one pass yields \\(\\gamma + 1\\) tokens" in text
    assert "the speed-up is then \\((\\gamma + 1) / (\\gamma c + 1)\\)" in text


def test_step_5_quotes_the_recorded_runs():
    text = page("copy-and-check.md")
    for key, title in (("capitals", "Capitals"), ("past-tense", "Past tense"), ("spelling", "Spelling")):
        lookup, greedy = RECORDED[key]["lookup"], RECORDED[key]["greedy"]
        row = f"| {title} | {len(lookup['tokens'])} | {len(lookup['passes'])} | {len(greedy['passes'])} |"
        assert row in text
    # Spelling copies once, the chat markup on the first pass, and it is rejected.
    spelling = RECORDED["spelling"]["lookup"]["passes"]
    copies = [i for i, record in enumerate(spelling) if record["draft"]]
    assert copies == [0] and spelling[0]["accepted"] == 0
    assert "Lookup copies once, and the copy is rejected" in text


def test_under_the_hood_s_worked_alpha_is_the_one_step_6_defines():
    """One alpha: both the worked example and the chart count the rounds after the first pass."""
    runs = RECORDED["capitals"]
    lookup = runs["lookup"]
    m = measured(lookup, runs["greedy"], lookup["proposer_seconds"], lookup["max_draft"])
    rounds = lookup["passes"][1:]
    accepted, drafted = sum(r["accepted"] for r in rounds), sum(len(r["draft"]) for r in rounds)
    naive = accepted / drafted
    assert alpha_for(m.tokens_per_pass, m.gamma) == fit(m).alpha
    quoted = (f"kept\n{accepted} of {drafted} drafted tokens, an \\(\\alpha\\) of\n{naive:.2f}, which the formula turns "
              f"into {expected_tokens(naive, m.gamma):.2f} tokens per pass;\nthe run made {m.tokens_per_pass:.2f} "
              f"({m.tokens} tokens in {m.passes}\npasses), and the fitted \\(\\alpha\\) is {fit(m).alpha:.2f}.")
    assert " ".join(quoted.split()) in " ".join(page("runtime.md").split())
