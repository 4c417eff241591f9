"""The lesson pages' text, read from their Markdown (no site build, no browser): short enough, true to the
figures they quote, and in the order the reader needs.

A page's prose is what a reader reads as the lesson: its Markdown with the tables, the panels and widgets (lines
of HTML), code blocks and displayed maths left out, and its headings, lists and "Training or answering?" boxes
kept, as the lesson's own text has them. Words are the whitespace-separated pieces that hold a letter or a digit;
a `{{ model.… }}` placeholder counts as one. Each page may run to 1.5 times the lesson's words for its step
(tests/data/lesson_words.json, counted the same way); tests/test_pages_site.py holds the same cap in Chromium
with the prose its panels show before a run added, so no words can move out of the Markdown into a panel unseen.
The figures a page or the quiz quotes from the formula or from a recorded run are computed here from the same
source, so they cannot drift from them.
"""

import json
import re
from pathlib import Path

import pytest

from onepass.defaults import DEFAULTS
from onepass.estimate import alpha_for, fit, measured
from onepass.policy import PROPOSE
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
    text = " ".join(page("the-real-thing.md").split())
    # Five and six tie at the chart's starting values, to the two decimals the chart shows.
    assert best_gamma(0.7, 0.05) == 6 and f"{speedup(0.7, 5, 0.05):.2f}" == f"{speedup(0.7, 6, 0.05):.2f}" == "2.35"
    assert f"{speedup(0.7, 4, 0.05):.2f}" != "2.35"
    assert "five or six at the starting values (\\(\\alpha = 0.7\\), \\(c = 0.05\\): both 2.35×)" in text
    assert best_gamma(0.5, 0.05) == 3 and "three at \\(\\alpha = 0.5\\)" in text
    assert f"from {speedup(0.7, 6, 0.05):.2f}× to {speedup(0.8, best_gamma(0.8, 0.05), 0.05):.2f}× (\\(\\alpha = 0.8\\))" in text
    # Below the line whenever drafting is not free, once alpha is low enough: at alpha = 0 a round yields one token.
    assert all(speedup(0.0, gamma, c) < 1 for gamma in (1, 4) for c in (0.01, 0.05))
    assert "below it whenever drafting is not free" in text


QUIZ = (DOCS / "assets" / "onepass" / "widgets" / "quiz.js").read_text()
NUMBER = r"(\d+(?:\.\d+)?)"
SPEEDUP_AT = re.compile(rf"{NUMBER}× at α = {NUMBER}, γ = (\d+), c = {NUMBER}")


def test_the_quiz_feedback_s_speed_ups_are_the_formula_s():
    quoted = SPEEDUP_AT.findall(QUIZ)
    assert len(quoted) == 2
    for figure, alpha, gamma, c in quoted:
        assert figure == f"{speedup(float(alpha), int(gamma), float(c)):.2f}", (figure, alpha, gamma, c)
    # One is above break-even and one below: a mostly wrong draft is not slower merely because drafting costs.
    assert sorted(float(figure) > 1 for figure, *_ in quoted) == [False, True]
    assert "whenever drafting is not free (c > 0) it is slower" not in QUIZ


def test_the_quiz_keeps_the_lesson_s_four_questions():
    assert QUIZ.count("    id: '") == 4


def test_step_6_defines_its_terms_and_files_its_draft_before_the_live_panel():
    text = page("the-real-thing.md")
    panel = text.index('data-onepass-panel="draft-model"')
    # The deployed norm first, then the terms the panel uses, then what kind of draft the live one is.
    assert text.index("a smaller language model of the\nsame family") < text.index("## Reading the chart")
    for term in ("(the **draft length**)", "(the **acceptance rate**)", "(the **cost\nratio**)"):
        assert text.index(term) < text.index('data-onepass-widget="speedup-chart"') < panel, term
    assert text.index("[third kind](#other-kinds-of-draft)") < panel
    assert text.index("last hidden state") < panel and "as EAGLE does" in text[:panel]
    assert "It was\ntrained by this project's code on the model's own answers, with the model frozen." in text
    # Whether it pays, from the reader's own run, after the panel and with no figure of a machine.
    pays = text[text.index("**Does it pay here?**"):text.index("## When the model samples at random")]
    assert panel < text.index("**Does it pay here?**") and "Your run says" in pays
    assert not re.search(r"\d(\.\d+)?×", pays)
    # The list of kinds files the live draft with the extra heads, and the box says its training left the model alone.
    heads = text[text.index("- **Extra prediction heads**"):text.index('!!! question "Training or answering?"')]
    assert "this page's live\n  draft" in heads
    box = text[text.index('!!! question "Training or answering?"'):]
    assert "touches the heads\n    alone: ours was trained with the model frozen" in box
    # The panel writes its figures on the chart, which is now above it.
    draft_js = (DOCS / "assets" / "onepass" / "panels" / "draftmodel.js").read_text()
    assert "chart above" in draft_js and "chart below" not in draft_js


def test_the_home_page_promises_offline_only_as_the_model_card_reports_it():
    text = " ".join(page("index.md").split())
    assert "After one visit" not in text and "MB, once" not in text
    assert ("Once the model has loaded and your browser has kept it and its runtimes, the whole station works offline: "
            "the model card at the top of steps 2 to 5 says whether this browser has.") in text
    assert "{{ model.download_mb }} MB on the wire" in text and "Python and onnxruntime-web, which run the model, come on top" in text
    assert "Where your browser allows, it keeps all of them (the model files {{ model.kept_mb }} MB unpacked)" in text
    for name in ("one-at-a-time.md", "all-at-once.md", "you-guess.md", "copy-and-check.md"):
        assert page(name).startswith(f"# {page(name).splitlines()[0][2:]}\n\n<div data-onepass-panel=\"model-card\"></div>")


def test_the_pages_explain_their_words():
    """Words a reader meets on a lesson page without a definition are gone or explained where they appear."""
    lesson = {name: " ".join(page(name).split()) for name in LESSON_WORDS}
    for name, text in lesson.items():
        for jargon in ("export", "chat markup", "features", "p-value"):
            assert jargon not in text, (name, jargon)
    assert "last hidden state (what its last layer hands to the final scoring)" in lesson["the-real-thing.md"]
    hood = " ".join(page("runtime.md").split())
    assert "as many as its **window** (the table above gives it)" in hood


def test_step_2_says_what_the_kv_cache_it_starts_with_changes():
    text = " ".join(page("one-at-a-time.md").split())
    assert "reads the whole text so far" not in text
    assert "Its **KV cache** switch, on at first, keeps the model's work on the text already read" in text


def test_step_7_says_what_alpha_equal_to_one_gives():
    assert expected_tokens(1.0, 4) == 5.0
    text = page("name-it.md")
    assert "one pass yields \\(\\gamma + 1\\) tokens" in text
    assert "the speed-up is then \\((\\gamma + 1) / (\\gamma c + 1)\\)" in text


def test_step_5_quotes_the_recorded_runs():
    text = page("copy-and-check.md")
    # Recorded natively, where and when Under the hood says; in the tab the counts are every machine's.
    assert "depend only on the model and the text" not in text
    assert "recorded natively ([where](runtime.md)); in your tab, for that build, the\nsame on every machine" in text
    for key, title in (("capitals", "Capitals"), ("past-tense", "Past tense"), ("spelling", "Spelling")):
        lookup, greedy = RECORDED[key]["lookup"], RECORDED[key]["greedy"]
        row = f"| {title} | {len(lookup['tokens'])} | {len(lookup['passes'])} | {len(greedy['passes'])} |"
        assert row in text
    # Spelling copies twice, the chat markup on the first pass and after the second " r", and both are rejected.
    spelling = RECORDED["spelling"]["lookup"]["passes"]
    copies = [i for i, record in enumerate(spelling) if record["draft"]]
    assert copies == [0, 5] and all(spelling[i]["accepted"] == 0 for i in copies)
    assert "Lookup copies twice, both rejected" in text


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


def test_step_5_says_spelling_s_recorded_answer_is_misspelt():
    """The real model's answer, which tests/test_onepass_examples.py decodes from the recorded run: wrong, and kept."""
    assert 'tokenizer.decode(lookup.tokens) == "O r n o r e<|im_end|>"' in (ROOT / "tests" / "test_onepass_examples.py").read_text()
    assert len(RECORDED["spelling"]["lookup"]["tokens"]) == len("O r n o r e".split()) + 1  # and the end of the answer
    text = " ".join(page("copy-and-check.md").split())
    assert "In the recorded run the model misspells the word, `O r n o r e`, and the drafted run makes the same mistake" in text


def test_under_the_hood_says_where_the_runs_were_recorded_and_what_chromium_checks():
    recording = json.loads((DATA / "runs-default.json").read_text())
    hood = " ".join(page("runtime.md").split())
    assert f"on {recording['threads']} threads of the project's development machine" in hood
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", recording["recorded"])
    assert f"development machine) on {recording['recorded']}, by" in hood
    assert "not the exact counts" not in hood and "in Chromium on the real model" in hood
    # The test that holds it: step 5's exact counts, checked in the tab.
    real = (ROOT / "tests" / "test_pages_real.py").read_text()
    assert 'assert (int(passes), int(greedy_passes)) == (len(recorded["lookup"]["passes"]), len(recorded["greedy"]["passes"]))' in real


def test_step_7_says_how_each_step_gets_alpha_and_c():
    text = page("name-it.md")
    alpha = next(line for line in text.splitlines() if line.startswith("| Acceptance rate |"))
    assert "Step 6's draft model counts it at each draft position (accepted over reached)" in alpha
    assert "for your run on step 5 it is fitted" in alpha
    c = next(line for line in text.splitlines() if line.startswith("| Cost ratio |"))
    assert "Step 6 times its draft model's small pass" in c and "fitted to your run on step 5" in c


def test_step_5_says_the_passes_saved_are_mostly_time_saved():
    assert "the passes saved are mostly time saved" in " ".join(page("copy-and-check.md").split())


def test_under_the_hood_states_the_draft_s_own_threshold():
    """The box "Only where it pays" in words: the confidence under which the draft proposes nothing is the policy's."""
    text = " ".join(page("runtime.md").split())
    assert PROPOSE == 0.2 and "its own probability of its token is under a fifth" in text
    assert "Both boxes are ticked at first" in text and DEFAULTS["draft"]["copyFirst"] and DEFAULTS["draft"]["adaptive"]

