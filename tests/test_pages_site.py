"""The station's pages in Chromium (tiny-model site, offline guard): nav, strip, chart, quiz, maths, search.

These cover the widgets that need no model; the panels that run the model have their own tests
(tests/test_pages_panels.py). Every test fails if a page requests anything outside localhost.
"""

import json

import pytest
import yaml

from onepass.estimate import fit, measured
from onepass.speedup import MAX_GAMMA, best_gamma, speedup
from tests.browser import ROOT, offline_page
from tests.test_pages_text import LESSON_WORDS, MARGIN, prose, words

pytest_plugins = ["tests.browser"]

NAV = [(title, page) for entry in yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)["nav"]
       for title, page in entry.items()]
STEP_PATHS = ["" if page == "index.md" else page.removesuffix(".md") + "/" for _, page in NAV[:8]]
NO_MODEL_STEPS = [1, 6, 7, 8]
CHART = "[data-onepass-widget=speedup-chart]"
MEASURED = {"alpha": 0.62, "c": 0.004, "gamma": 6, "passes": 41, "tokens": 79, "greedy_passes": 79,
            "label": "Capitals <b>bold?</b>",
            "fitted": {"passes": 40, "tokens": 78, "ms_per_token": 151.2, "greedy_ms_per_token": 160.4}}
RECORDINGS = sorted((ROOT / "tests" / "data").glob("runs-*.json"))
RUNTIME_PARTS = ["/model/", "/vendor/pyodide/", "/vendor/ort/"]
# The worker a model panel starts imports Pyodide's loader (18 KB) as it starts; Python itself comes only when asked.
LOADER = "/vendor/pyodide/pyodide.mjs"


@pytest.fixture(scope="module")
def site(tiny_server):
    return tiny_server


def visit(page, server, step: int = 1):
    page.goto(server.url + STEP_PATHS[step - 1])
    page.wait_for_selector(".onepass-strip")


def strip_state(page) -> list[dict]:
    return page.eval_on_selector_all(".onepass-strip__step", """links => links.map(a => ({
        title: a.querySelector('.onepass-strip__title').textContent,
        visited: a.classList.contains('onepass-strip__step--visited') && a.textContent.includes('✓'),
        current: a.getAttribute('aria-current') === 'step'}))""")


def set_slider(page, name: str, value: float):
    page.eval_on_selector(f"{CHART} input[name={name}]", """(input, value) => {
        input.value = value; input.dispatchEvent(new Event('input', {bubbles: true})); }""", value)


def bars(page) -> list[float]:
    return page.eval_on_selector(f"{CHART} canvas", "c => Chart.getChart(c).data.datasets[0].data")


def test_nav_lists_the_eight_steps_then_the_runtime():
    assert [title for title, _ in NAV] == ["One token per pass", "One at a time", "All at once", "You guess",
                                           "Copy and check", "The real thing", "Name it", "Check yourself",
                                           "Under the hood"]


def test_every_page_loads_with_its_title_and_the_strip_in_nav_order(page, site):
    for (title, _), path in zip(NAV, STEP_PATHS + ["runtime/"]):
        page.goto(site.url + path)
        page.wait_for_selector(".onepass-strip")
        assert page.inner_text("article h1") == title
        assert page.title().startswith(title)
        assert [step["title"] for step in strip_state(page)] == [t for t, _ in NAV[:8]]
        primary = page.eval_on_selector_all(".md-nav--primary > .md-nav__list > .md-nav__item > a.md-nav__link",
                                            "links => links.map(a => a.textContent.trim())")
        assert primary == [t for t, _ in NAV]


def test_the_strip_marks_visits_after_instant_navigation_and_after_reload(page, site):
    visit(page, site, 1)
    state = strip_state(page)
    assert state[0]["visited"] and state[0]["current"] and not any(s["visited"] for s in state[1:])
    page.evaluate("window.sameDocument = true")  # survives instant navigation, not a full page load
    page.click(".onepass-strip__step >> text=Name it")
    page.wait_for_function("() => document.querySelector('article h1')?.textContent === 'Name it'")
    assert page.evaluate("window.sameDocument === true"), "the strip link should navigate instantly"
    page.wait_for_function("() => document.querySelector('.onepass-strip__step[aria-current]')?.textContent.includes('Name it')")
    state = strip_state(page)
    assert [s["visited"] for s in state] == [True, False, False, False, False, False, True, False]
    assert [s["current"] for s in state].index(True) == 6
    assert json.loads(page.evaluate("localStorage.getItem('onepass.visited')")) == [1, 7]
    page.reload()
    page.wait_for_selector(".onepass-strip")
    assert [s["visited"] for s in strip_state(page)] == [True, False, False, False, False, False, True, False]
    assert "2 of 8 steps visited" in page.inner_text(".onepass-strip")
    page.click(".onepass-strip__reset")
    assert [s["visited"] for s in strip_state(page)] == [False] * 6 + [True, False]  # only the page you are on


def test_a_damaged_progress_value_reads_as_no_progress(page, site):
    visit(page, site, 7)
    page.evaluate("localStorage.setItem('onepass.visited', '{not json'); localStorage.setItem('onepass.quiz', '[1,2]')")
    page.reload()
    page.wait_for_selector(".onepass-strip")
    assert [s["visited"] for s in strip_state(page)] == [False] * 6 + [True, False]
    assert "Quiz: not taken yet" in page.inner_text(".onepass-strip")


def test_the_chart_reacts_to_its_controls(page, site):
    visit(page, site, 6)
    page.wait_for_selector(f"{CHART}[data-ready]")
    # The starting values, the ones step 6's text quotes: the summary is the formula's, to the digit.
    assert page.inner_text(".onepass-chart__summary") == (
        f"Best draft length: γ = {best_gamma(0.7, 0.05)}, {speedup(0.7, best_gamma(0.7, 0.05), 0.05):.2f}× faster than one "
        f"token per pass. At γ = 4: {speedup(0.7, 4, 0.05):.2f}×.")
    assert "γ = 6, 2.35×" in page.inner_text(".onepass-chart__summary")
    set_slider(page, "alpha", 0.8)
    set_slider(page, "c", 0.02)
    # A good, cheap draft: the best length is past a handful, and the γ axis reaches far enough to show it.
    page.wait_for_function(f"() => document.querySelector('{CHART}').dataset.best === '{best_gamma(0.8, 0.02)}'")
    assert f"Best draft length: γ = {best_gamma(0.8, 0.02)}, 3.82×" in page.inner_text(".onepass-chart__summary")
    assert len(bars(page)) == MAX_GAMMA and min(bars(page)) > 1
    set_slider(page, "alpha", 0.95)
    set_slider(page, "c", 0.01)
    assert "That is the chart's end" in page.inner_text(".onepass-chart__summary")
    set_slider(page, "alpha", 0.6)
    set_slider(page, "c", 0.1)
    best = int(page.get_attribute(CHART, "data-best"))
    assert best < 10 and f"γ={best} ★ best" in page.eval_on_selector(f"{CHART} canvas", "c => Chart.getChart(c).data.labels")
    set_slider(page, "alpha", 0.2)
    set_slider(page, "c", 0.5)
    assert max(bars(page)) < 1  # every bar below break-even
    assert "No draft length breaks even" in page.inner_text(".onepass-chart__summary")
    set_slider(page, "gamma", 7)
    widths = page.eval_on_selector(f"{CHART} canvas", "c => Chart.getChart(c).data.datasets[0].borderWidth")
    assert widths.index(max(widths)) == 6  # the highlighted bar is gamma = 7


def test_the_js_formula_equals_py_onepass_speedup(page, site):
    visit(page, site, 6)
    alphas = [i / 20 for i in range(21)]
    costs = [0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0]
    gammas = list(range(11))
    js = page.evaluate("""async ([alphas, costs, gammas]) => {
        const { MAX_GAMMA, speedup, bestGamma } = await import(new URL('assets/onepass/speedup.js', location.origin + '/').href);
        const upTo = Array.from({ length: MAX_GAMMA + 1 }, (_, g) => g);
        return { max: MAX_GAMMA, grid: alphas.map(a => costs.map(c => ({ values: gammas.map(g => speedup(a, g, c)),
            best: bestGamma(a, c, upTo) }))) };
    }""", [alphas, costs, gammas])
    assert js["max"] == MAX_GAMMA
    js = js["grid"]
    for a, by_cost in zip(alphas, js):
        for c, result in zip(costs, by_cost):
            for g, value in zip(gammas, result["values"]):
                assert value == pytest.approx(speedup(a, g, c), rel=1e-12, abs=1e-15), (a, c, g)
            assert result["best"] == best_gamma(a, c), (a, c)


@pytest.mark.parametrize("recording", RECORDINGS, ids=[path.stem for path in RECORDINGS])
def test_the_js_estimate_of_alpha_and_c_equals_py_onepass_estimate(page, site, recording):
    """estimate.js (what step 5 stores for the chart) against estimate.py on runs recorded natively."""
    visit(page, site, 6)
    runs = json.loads(recording.read_text())["runs"]
    js = page.evaluate("""async (runs) => {
        const { fit, measured } = await import(new URL('assets/onepass/estimate.js', location.origin + '/').href);
        return Object.fromEntries(Object.entries(runs).map(([key, r]) => [key,
            fit(measured(r.lookup, r.greedy, r.lookup.proposer_seconds, r.lookup.max_draft))]));
    }""", runs)
    for key, r in runs.items():
        py = fit(measured(r["lookup"], r["greedy"], r["lookup"]["proposer_seconds"], r["lookup"]["max_draft"]))
        assert js[key]["gamma"] == py.gamma, key
        assert js[key]["alpha"] == pytest.approx(py.alpha, rel=1e-12, abs=1e-15), key
        assert js[key]["c"] == pytest.approx(py.c, rel=1e-12, abs=1e-15), key


def test_the_measured_alpha_and_c_from_step_5_show_on_the_chart(page, site):
    visit(page, site, 1)
    page.evaluate("m => localStorage.setItem('onepass.measured', JSON.stringify(m))", MEASURED)
    visit(page, site, 6)
    page.wait_for_selector(f"{CHART}[data-ready]")
    note = page.inner_text(".onepass-chart__measured")
    assert "Capitals <b>bold?</b>" in note and "α = 0.62" in note and "79 tokens in 41 passes" in note
    assert "1.95 tokens per pass and 151 ms per token in this tab, against 160 ms one at a time" in note
    labels = page.eval_on_selector(f"{CHART} canvas", "c => Chart.getChart(c).data.datasets.map(d => d.label)")
    assert "your step-5 α and c" in labels
    page.click("text=Use my α and c")
    assert page.input_value(f"{CHART} input[name=alpha]") == "0.62"
    assert page.input_value(f"{CHART} input[name=c]") == "0.004"
    assert page.input_value(f"{CHART} input[name=gamma]") == "6"


def test_without_a_measurement_the_chart_points_to_step_5(page, site):
    visit(page, site, 6)
    page.wait_for_selector(f"{CHART}[data-ready]")
    assert "A run on step 5 will add its own α and c here." in page.inner_text(".onepass-chart__measured")


def test_the_quiz_explains_keeps_its_score_after_reload_and_the_strip_shows_it(page, site):
    visit(page, site, 8)
    questions = page.locator(".onepass-quiz__question")
    assert questions.count() == 4  # the lesson asks four
    questions.nth(0).locator(".onepass-quiz__option").nth(0).click()  # right
    questions.nth(2).locator(".onepass-quiz__option").nth(0).click()  # wrong: the answer is 3
    assert questions.nth(0).locator(".onepass-quiz__feedback").inner_text().startswith("Right.")
    wrong = questions.nth(2).locator(".onepass-quiz__feedback").inner_text()
    assert wrong.startswith("Not quite.") and "Three" in wrong
    assert questions.nth(2).locator(".onepass-quiz__option").nth(1).inner_text().startswith("✓")
    assert "Quiz: 1 of 4 right" in page.inner_text(".onepass-strip")
    page.reload()
    page.wait_for_selector(".onepass-quiz__feedback")
    assert page.locator(".onepass-quiz__feedback").count() == 2
    assert "Answered 2 of 4; 1 right so far." in page.inner_text(".onepass-quiz__score")
    visit(page, site, 7)
    assert "Quiz: 1 of 4 right" in page.inner_text(".onepass-strip")


def test_the_quiz_answers_are_the_lesson_s(page, site):
    visit(page, site, 8)
    questions = page.evaluate("""async () => (await import(new URL('assets/onepass/widgets/quiz.js', location.origin + '/').href))
        .QUESTIONS.map(q => ({ id: q.id, right: q.options[q.answer], explain: q.explain }))""")
    answers = {q["id"]: q["right"] for q in questions}
    assert answers == {
        "same-text": "identical, token for token — only the number of passes changes.",
        "one-pass": "Each position sees only earlier tokens, so one pass yields every position’s own prediction.",
        "first-wrong": "3",
        "best-length": "Every drafted token costs c, but pays only if all before it were accepted.",
    }
    assert all(len(q["explain"]) > 80 for q in questions)  # every answer says why
    explain = {q["id"]: q["explain"] for q in questions}
    # A mostly wrong draft is slower only where its gain is smaller than its cost (the figures: test_pages_text.py).
    assert "k − 1" in explain["best-length"] and "where that gain is smaller than its cost" in explain["best-length"]
    assert "whenever drafting is not free" not in explain["best-length"]
    # True in this tab too: a wide pass costs more than a narrow one here, but less than a pass per token.
    assert "far less than separate passes" in explain["one-pass"] and "almost free" not in explain["one-pass"]


@pytest.mark.parametrize("a, b, factor, ratio", [(190.0, 300.0, "3.8", "1.58"), (100.0, 600.0, "1.0", "6.00"),
                                                 (50.0, 400.0, "0.8", "8.00")])
def test_step_3_s_measure_readout_on_fixed_timings(page, site, a, b, factor, ratio):
    """Six passes over 5 tokens cost 6a; one pass over 30 costs b: per token, the wide pass is 6a/b times cheaper.

    The first row is the lesson's own server figures, 0.19 s and 0.30 s: 3.8×, not 30 · a / b = 19.0×.
    """
    visit(page, site, 1)  # the module needs no model
    text = page.evaluate("""async (timings) => (await import(new URL('assets/onepass/widgets/pass-cost.js', location.origin + '/').href))
        .widePassReadout({ narrow: 5, wide: 30, runs: 5, threads: 2, ...timings })""", {"a": a, "b": b})
    assert f"over 5 tokens: {a:.1f} ms; over 30 tokens: {b:.1f} ms (median of 5 runs each, 2 threads)" in text
    assert text.endswith(f"6× the tokens cost {ratio}× the time in this tab: {factor}× cheaper per token than 6 passes over 5.")


def test_katex_typesets_the_formula_from_the_site(page, site):
    fetched = []
    page.on("request", lambda request: fetched.append(request.url))
    visit(page, site, 7)
    page.wait_for_selector(".arithmatex .katex-display")
    assert page.locator(".arithmatex .katex").count() >= 6
    assert any("/vendor/katex/katex.min.js" in url for url in fetched)


def test_search_finds_a_word_from_a_page(page, site):
    visit(page, site, 1)
    page.click("input.md-search__input")
    page.keyboard.type("Uszkoreit")  # typed, as a reader would: Material searches on key events
    # The results of the first letters come first: wait for the whole word's.
    page.wait_for_function("() => document.querySelector('.md-search-result__meta')?.textContent.includes('1 matching')")
    result = page.inner_text(".md-search-result")
    assert "1 matching document" in result and "Where it comes from" in result


@pytest.mark.parametrize("step", NO_MODEL_STEPS)
def test_pages_without_a_model_panel_fetch_no_model_file_and_no_runtime(page, site, step):
    """Reading a page downloads neither the model nor Python or onnxruntime-web: only a reader's press does."""
    fetched = []
    page.on("request", lambda request: any(part in request.url for part in RUNTIME_PARTS)
            and not request.url.endswith(LOADER) and fetched.append(request.url))
    page.goto(site.url + STEP_PATHS[step - 1], wait_until="networkidle")
    if step == 6:  # its sampling panel shows the build's draw of the preset
        page.wait_for_selector("[data-onepass-panel=sampling][data-state=done][data-source=recorded]")
        assert "Drawn when this site was built" in page.inner_text("[data-onepass-panel=sampling] .onepass-status")
    page.wait_for_timeout(1000)
    assert fetched == []


# What a panel shows that is not prose: its controls, the model's state and download question, where a shown run
# was recorded, a key to the colours, and a run's output (recorded or not). Everything else in a panel or widget is
# read as the lesson's prose and counted with the page's.
NOT_PROSE = ["button", "label", "input", "select", "textarea", "output", "pre", "code", "table", ".onepass-card",
             ".onepass-status", ".onepass-note", ".onepass-legend", ".onepass-counters", ".onepass-passes",
             ".onepass-pass", ".onepass-grid", ".onepass-verdict", ".onepass-seed", ".onepass-chart__summary",
             ".onepass-quiz__question", ".onepass-quiz__score"]
PANEL_PROSE = """(skip) => {
  const texts = [];
  const walker = document.createTreeWalker(document.querySelector('article'), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent.closest('[data-onepass-panel], [data-onepass-widget]') || parent.closest(skip)) continue;
    if (parent.checkVisibility()) texts.push(node.textContent);
  }
  return texts.join(' ');
}"""
MOUNTED = """() => [...document.querySelectorAll('[data-onepass-panel], [data-onepass-widget]')]
    .every((node) => node.childElementCount > 0)"""


def test_each_lesson_page_with_its_panels_prose_is_within_one_and_a_half_times_the_lesson_s_words(chromium, site):
    """What a first-time reader sees before running anything: the page's prose and the prose its panels show."""
    context, page, outside = offline_page(chromium, consent=False)
    counted = {}
    try:
        for name, limit in LESSON_WORDS.items():
            page.goto(site.url + STEP_PATHS[[source for _, source in NAV].index(name)], wait_until="networkidle")
            page.wait_for_function(MOUNTED)
            shown = page.evaluate(PANEL_PROSE, ", ".join(NOT_PROSE))
            counted[name] = (words(prose((ROOT / "docs" / name).read_text())), words(shown), shown)
    finally:
        context.close()
    assert outside == []
    for name, (page_words, panel_words, shown) in counted.items():
        total, limit = page_words + panel_words, MARGIN * LESSON_WORDS[name]
        assert total <= limit, f"{name}: {page_words} words of prose and {panel_words} in its panels ({shown!r}), over {limit}"
    # The count sees what moved into a panel: step 6's words on its draft, step 5's on its example.
    assert "parameters" in counted["the-real-thing.md"][2] and "Capitals:" in counted["copy-and-check.md"][2]


def test_the_home_page_says_what_a_pass_costs_here(page, site):
    visit(page, site, 1)
    assert "Step 2 measures what one pass costs" in page.inner_text("[data-onepass-widget=pass-cost]")
    page.evaluate("""localStorage.setItem('onepass.lastPass', JSON.stringify({ms: 42.4, threads: 2, model: 'tiny <b>x</b>'}))""")
    page.reload()
    text = page.inner_text("[data-onepass-widget=pass-cost]")
    assert "A pass costs about 42 ms here" in text and "tiny <b>x</b>" in text and "2 threads" in text


def test_the_palette_toggle_switches_to_dark(page, site):
    visit(page, site, 6)
    assert page.get_attribute("body", "data-md-color-scheme") == "default"
    page.click("label[title='Switch to dark mode']")
    page.wait_for_function("() => document.body.dataset.mdColorScheme === 'slate'")
    page.wait_for_selector(f"{CHART}[data-ready]")
    tick = page.eval_on_selector(f"{CHART} canvas", "c => Chart.getChart(c).options.scales.x.ticks.color")
    assert tick == page.evaluate("getComputedStyle(document.body).getPropertyValue('--md-default-fg-color').trim()")


def test_instant_navigation_keeps_one_chart_and_remounts_the_widgets(page, site):
    visit(page, site, 6)
    page.wait_for_selector(f"{CHART}[data-ready]")
    page.evaluate("window.sameDocument = true")
    for title in ("Name it", "The real thing", "Check yourself", "The real thing"):
        page.click(f".onepass-strip__step >> text={title}")
        page.wait_for_function(f"() => document.querySelector('article h1')?.textContent === {title!r}")
    page.wait_for_selector(f"{CHART}[data-ready]")
    assert page.evaluate("window.sameDocument === true")
    # The charts of pages left behind were released: every chart left is on this page, where the sampling panel
    # draws one too once its first draws are in (how soon depends on the machine), beside the one speed-up chart.
    charts = page.evaluate(f"""Object.values(Chart.instances)
        .map((chart) => ({{ here: chart.canvas.isConnected, speedup: Boolean(chart.canvas.closest('{CHART}')) }}))""")
    assert all(chart["here"] for chart in charts) and sum(chart["speedup"] for chart in charts) == 1
    set_slider(page, "alpha", 0.2)
    set_slider(page, "c", 0.5)
    assert max(bars(page)) < 1
